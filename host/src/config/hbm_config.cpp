// SPDX-License-Identifier: Apache-2.0
// HBM timing sets: load, validate, find, derive, print (docs/hbm.md).
#include "tpuemu/config/hbm_config.h"

#include <algorithm>
#include <bit>
#include <system_error>

#include <fmt/format.h>

namespace tpuemu {
namespace {

constexpr std::uint64_t kAddressSpace = std::uint64_t{1} << 32;  // the core's addresses: 32 bit
constexpr std::uint64_t kMaxTiming = spec::hbm::kMaxTiming;     // tCK; sanity bound
constexpr std::uint32_t kBurstBytes = spec::hbm::kBurstBytes;    // 512-bit wdata/rdata

// The members of HbmTimings in the contract's order (spec::hbm::kTimingNames).
constexpr std::array<std::uint32_t HbmTimings::*, spec::hbm::kNumTimings> kTimingMembers{
#define TPUEMU_HBM_TIMING_POINTER(name, doc) &HbmTimings::name,
    TPUEMU_SPEC_HBM_TIMINGS(TPUEMU_HBM_TIMING_POINTER)
#undef TPUEMU_HBM_TIMING_POINTER
};

std::uint32_t to_u32(std::uint64_t x) { return static_cast<std::uint32_t>(x); }
std::uint32_t log2u(std::uint64_t x) { return static_cast<std::uint32_t>(std::bit_width(x) - 1); }

void check_name(const JsonObjectReader& r, const std::string& name) {
  const bool ok = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == '.';
  });
  if (!ok) {
    throw r.error("name", fmt::format("must be a non-empty [A-Za-z0-9._-] name, got \"{}\"", name));
  }
}

std::uint32_t get_pow2(JsonObjectReader& r, std::string_view key, std::uint64_t min,
                       std::uint64_t max) {
  const auto v = r.get_uint(key, min, max);
  if (!std::has_single_bit(v)) {
    throw r.error(key, fmt::format("must be a power of two, got {}", v));
  }
  return to_u32(v);
}

HbmGeometry geometry_from_json(JsonObjectReader r) {
  HbmGeometry g;
  // Upper bounds: the command bus fields (bg 2 bits, bank 2 bits, row 16 bits, col 8 bits).
  g.channels = get_pow2(r, "channels", 1, 128);
  g.bank_groups = get_pow2(r, "bank_groups", 1, 4);
  g.banks_per_group = get_pow2(r, "banks_per_group", 1, 4);
  g.rows = get_pow2(r, "rows", 1, 65536);
  g.columns = get_pow2(r, "columns", 1, 256);
  g.bus_bytes = get_pow2(r, "bus_bytes", 1, 64);
  g.burst_length = get_pow2(r, "burst_length", 2, 64);
  if (g.bus_bytes * g.burst_length != kBurstBytes) {
    throw r.error("burst_length",
                  fmt::format("bus_bytes * burst_length = {} * {} = {}, must be {} (one 512-bit "
                              "burst of the command bus)",
                              g.bus_bytes, g.burst_length, g.bus_bytes * g.burst_length,
                              kBurstBytes));
  }
  r.finish();
  return g;
}

HbmTimings timings_from_json(JsonObjectReader r) {
  HbmTimings t;
  for (std::size_t k = 0; k < kTimingMembers.size(); ++k) {
    t.*kTimingMembers[k] = to_u32(r.get_uint(spec::hbm::kTimingNames[k], 1, kMaxTiming));
  }

  // Consistency (docs/hbm.md), the contract's constraints in its order: "<field>: <value> <
  // <terms> = <sum>" (<= for a strict one), with the constraint's reason in parentheses. tFAW >=
  // 4 * tRRD_S is deliberately not among them: HBM allows less.
  for (const auto& c : spec::hbm::kTimingConstraints) {
    const std::uint64_t value = t.*kTimingMembers[c.field];
    std::uint64_t sum = 0;
    std::string terms;
    for (const std::int32_t term : c.sum) {
      if (term < 0) continue;
      sum += t.*kTimingMembers[static_cast<std::size_t>(term)];
      if (!terms.empty()) terms += " + ";
      terms += spec::hbm::kTimingNames[static_cast<std::size_t>(term)];
    }
    if (c.strict ? value > sum : value >= sum) continue;
    const std::string_view name = spec::hbm::kTimingNames[c.field];
    throw r.error(name, fmt::format("{} {} {} = {}{}", value, c.strict ? "<=" : "<", terms, sum,
                                    c.doc.empty() ? "" : fmt::format(" ({})", c.doc)));
  }
  r.finish();
  return t;
}

std::string_view field_token(HbmAddressMap::Field f) {
  return spec::hbm::address_field_name(static_cast<std::uint32_t>(f));
}

std::uint8_t field_code(HbmAddressMap::Field f) { return static_cast<std::uint8_t>(f); }

// Width in bits and the HbmAddress member of each field.
struct FieldInfo {
  std::uint32_t count;
  std::uint32_t HbmAddress::*member;
};

FieldInfo field_info(const HbmTimingSet& s, HbmAddressMap::Field f) {
  switch (f) {
    case HbmAddressMap::Field::Row: return {s.geometry.rows, &HbmAddress::row};
    case HbmAddressMap::Field::Bank: return {s.geometry.banks_per_group, &HbmAddress::bank};
    case HbmAddressMap::Field::BankGroup: return {s.geometry.bank_groups, &HbmAddress::bank_group};
    case HbmAddressMap::Field::Channel: return {s.geometry.channels, &HbmAddress::channel};
    case HbmAddressMap::Field::Column: return {s.geometry.columns, &HbmAddress::column};
  }
  return {1, &HbmAddress::row};
}

// The set's address map for the contract's decoder (spec/include/tpuemu/spec/hbm_address.h).
spec::hbm::AddressLayout address_layout(const HbmTimingSet& s) {
  spec::hbm::AddressLayout l;
  l.lsb_first = s.address_map.lsb_first_codes();
  for (const HbmAddressMap::Field f : s.address_map.msb_first) {
    l.bits[field_code(f)] = log2u(field_info(s, f).count);
  }
  l.offset_bits = log2u(s.burst_bytes());
  return l;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Address map
// ---------------------------------------------------------------------------------------------

HbmAddressMap HbmAddressMap::parse(std::string_view text) {
  const spec::hbm::ParsedAddressOrder p = spec::hbm::parse_address_order(text);
  if (!p.error.empty()) {
    throw Error(fmt::format("address map \"{}\": {} (expected the five fields ro, ba, bg, ch, co "
                            "once each, most significant first, separated by '-', e.g. \"{}\")",
                            text, p.error, kDefault));
  }
  HbmAddressMap m;
  m.msb_first = msb_first_of(p.lsb_first);
  return m;
}

std::string HbmAddressMap::to_string() const {
  std::string s;
  for (const auto f : msb_first) {
    if (!s.empty()) s += '-';
    s += field_token(f);
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Derived values
// ---------------------------------------------------------------------------------------------

std::uint64_t HbmTimingSet::addressable_bytes() const {
  return std::min(capacity_bytes(), kAddressSpace);
}

double HbmTimingSet::peak_gbps_per_channel() const {
  return static_cast<double>(peak_bytes_per_tck_per_channel()) * 1000.0 / tck_ps;
}

double HbmTimingSet::peak_gbps() const {
  return static_cast<double>(peak_bytes_per_tck()) * 1000.0 / tck_ps;
}

HbmAddress HbmTimingSet::decode(std::uint64_t byte_address) const {
  if (byte_address >= capacity_bytes()) {
    throw Error(fmt::format("HBM timing set {}", name),
                fmt::format("address {:#x} beyond the capacity of {:#x} bytes", byte_address,
                            capacity_bytes()));
  }
  HbmAddress a;
  a.offset = static_cast<std::uint32_t>(byte_address & (burst_bytes() - 1));
  const spec::hbm::FieldValues v = address_layout(*this).decode(byte_address);
  for (const auto f : address_map.msb_first) a.*field_info(*this, f).member = v[field_code(f)];
  return a;
}

std::uint64_t HbmTimingSet::encode(const HbmAddress& a) const {
  if (a.offset >= burst_bytes()) {
    throw Error(fmt::format("HBM timing set {}", name),
                fmt::format("burst offset {} out of range ({} bytes per burst)", a.offset,
                            burst_bytes()));
  }
  spec::hbm::FieldValues values{};
  for (const auto f : address_map.msb_first) {
    const FieldInfo info = field_info(*this, f);
    const std::uint32_t v = a.*info.member;
    if (v >= info.count) {
      throw Error(fmt::format("HBM timing set {}", name),
                  fmt::format("{} {} out of range ({})", field_token(f), v, info.count));
    }
    values[field_code(f)] = v;
  }
  return address_layout(*this).encode(values) | a.offset;
}

// ---------------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------------

// "controller": the queue sizes (spec::hbm::QueueSizes); a missing field keeps the contract's
// default, a present one is checked against the RTL's slots.
spec::hbm::QueueSizes queues_from_json(JsonObjectReader r) {
  spec::hbm::QueueSizes q;
#define TPUEMU_HBM_QUEUE_FIELD(name, def, doc) \
  if (r.find(#name) != nullptr) q.name = to_u32(r.get_uint(#name, 0, spec::hbm::kQueueSlots));
  TPUEMU_SPEC_HBM_QUEUE_PARAMS(TPUEMU_HBM_QUEUE_FIELD)
#undef TPUEMU_HBM_QUEUE_FIELD
  if (const std::string why = q.problem(); !why.empty()) {
    const auto colon = why.find(':');
    throw r.error(why.substr(0, colon), why.substr(colon + 2));
  }
  r.finish();
  return q;
}

HbmTimingSet hbm_timing_set_from_json(const JsonDocument& doc) {
  JsonObjectReader r(doc, "");
  HbmTimingSet s;
  s.name = r.get_string("name");
  check_name(r, s.name);
  s.source = r.get_string("source");
  if (s.source.empty()) throw r.error("source", "must name where the numbers come from");
  s.tck_ps = to_u32(r.get_uint("tck_ps", 1, 1'000'000));
  s.geometry = geometry_from_json(r.get_object("geometry"));
  s.timings = timings_from_json(r.get_object("timing"));
  if (r.find("address_map") != nullptr) {
    const std::string text = r.get_string("address_map");
    try {
      s.address_map = HbmAddressMap::parse(text);
    } catch (const Error& e) {
      throw r.error("address_map", e.cause());
    }
  }
  if (r.find("controller") != nullptr) s.queues = queues_from_json(r.get_object("controller"));
  r.finish();
  return s;
}

HbmTimingSet load_hbm_timing_set_file(const std::filesystem::path& path) {
  return hbm_timing_set_from_json(JsonDocument::load(path));
}

std::vector<std::filesystem::path> default_hbm_dirs() {
  std::vector<std::filesystem::path> dirs;
  for (const auto& presets : default_preset_dirs()) {
    dirs.push_back((presets / ".." / "hbm").lexically_normal());
  }
  return dirs;
}

std::vector<std::string> list_hbm_timing_sets(std::span<const std::filesystem::path> search_dirs) {
  return list_presets(search_dirs);  // the same rule: *.json stems, sorted, unique
}

std::vector<std::string> list_hbm_timing_sets() {
  const auto dirs = default_hbm_dirs();
  return list_hbm_timing_sets(dirs);
}

HbmTimingSet load_hbm_timing_set(std::string_view name_or_path,
                                 std::span<const std::filesystem::path> search_dirs) {
  const bool is_path = name_or_path.find('/') != std::string_view::npos ||
                       name_or_path.ends_with(".json");
  if (is_path) return load_hbm_timing_set_file(std::filesystem::path(name_or_path));

  for (const auto& dir : search_dirs) {
    const auto file = dir / (std::string(name_or_path) + ".json");
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) continue;
    const auto doc = JsonDocument::load(file);
    HbmTimingSet s = hbm_timing_set_from_json(doc);
    if (s.name != name_or_path) {
      throw doc.error_at("/name", fmt::format("timing set file {}.json is named \"{}\"; the name "
                                              "must match the file name",
                                              name_or_path, s.name));
    }
    return s;
  }
  const auto available = list_hbm_timing_sets(search_dirs);
  std::vector<std::string> dirs;
  for (const auto& d : search_dirs) dirs.push_back(d.string());
  throw Error(fmt::format(
      "unknown HBM timing set \"{}\" (available: {}; searched: {})", name_or_path,
      available.empty() ? "none" : fmt::format("{}", fmt::join(available, ", ")),
      dirs.empty() ? "no directories" : fmt::format("{}", fmt::join(dirs, ", "))));
}

HbmTimingSet load_hbm_timing_set(std::string_view name_or_path) {
  const auto dirs = default_hbm_dirs();
  return load_hbm_timing_set(name_or_path, dirs);
}

// ---------------------------------------------------------------------------------------------
// Printing
// ---------------------------------------------------------------------------------------------

namespace {
nlohmann::json queues_to_json(const spec::hbm::QueueSizes& q) {
  nlohmann::json j = nlohmann::json::object();
#define TPUEMU_HBM_QUEUE_JSON(name, def, doc) j[#name] = q.name;
  TPUEMU_SPEC_HBM_QUEUE_PARAMS(TPUEMU_HBM_QUEUE_JSON)
#undef TPUEMU_HBM_QUEUE_JSON
  return j;
}
}  // namespace

nlohmann::json to_json(const HbmTimingSet& s) {
  const auto& g = s.geometry;
  const auto& t = s.timings;
  nlohmann::json timing = nlohmann::json::object();
  for (std::size_t k = 0; k < kTimingMembers.size(); ++k) {
    timing[std::string(spec::hbm::kTimingNames[k])] = t.*kTimingMembers[k];
  }
  return nlohmann::json{
      {"name", s.name},
      {"source", s.source},
      {"tck_ps", s.tck_ps},
      {"geometry",
       {{"channels", g.channels},
        {"bank_groups", g.bank_groups},
        {"banks_per_group", g.banks_per_group},
        {"rows", g.rows},
        {"columns", g.columns},
        {"bus_bytes", g.bus_bytes},
        {"burst_length", g.burst_length}}},
      {"timing", timing},
      {"address_map", s.address_map.to_string()},
      {"controller", queues_to_json(s.queues)},
  };
}

std::string describe(const HbmTimingSet& s) {
  const auto& g = s.geometry;
  const double ns = s.tck_ns();
  auto gib = [](std::uint64_t b) { return static_cast<double>(b) / (1ull << 30); };
  std::string out = fmt::format(
      "HBM timing set {}: {}\n"
      "  clock      tCK {} ps ({:.3f} GHz), data bus DDR, burst {} B in {} tCK (BL {} x {} B)\n"
      "  geometry   {} channels x {} bank groups x {} banks, {} rows x {} columns ({} B page)\n"
      "  capacity   {:.2f} GiB per channel, {:.2f} GiB total, {:.2f} GiB addressable (32-bit)\n"
      "  peak       {} B/tCK per channel = {:.1f} GB/s; {} B/tCK total = {:.1f} GB/s\n"
      "  address    map {}\n"
      "  queues     {} reads + {} writes per channel; a write drain starts at {} writes, ends at {}\n",
      s.name, s.source, s.tck_ps, s.clock_ghz(), s.burst_bytes(), s.tBURST(), g.burst_length,
      g.bus_bytes, g.channels, g.bank_groups, g.banks_per_group, g.rows, g.columns,
      s.page_bytes(), gib(s.channel_capacity_bytes()), gib(s.capacity_bytes()),
      gib(s.addressable_bytes()), s.peak_bytes_per_tck_per_channel(), s.peak_gbps_per_channel(),
      s.peak_bytes_per_tck(), s.peak_gbps(), s.address_map.to_string(), s.queues.read_queue,
      s.queues.write_queue, s.queues.write_high, s.queues.write_low);
  // Every timing of the contract's list, in its order, in tCK and ns, six to a line.
  std::size_t column = 0;
  auto add = [&](std::string_view name, std::uint32_t tck) {
    out += column % 6 == 0 ? (column == 0 ? "  timings   " : "\n             ") : "";
    out += fmt::format(" {} {} ({:.2f} ns)", name, tck, tck * ns);
    ++column;
  };
#define TPUEMU_DESCRIBE_TIMING(name, doc) add(#name, s.timings.name);
  TPUEMU_SPEC_HBM_TIMINGS(TPUEMU_DESCRIBE_TIMING)
#undef TPUEMU_DESCRIBE_TIMING
  out += "\n";
  return out;
}

MemoryPortPeak memory_port_peak(const Preset& preset, const HbmTimingSet& set) {
  const double tck_per_cycle = 1000.0 / (preset.clock_ghz * set.tck_ps);  // core period / tCK
  const double dram = static_cast<double>(set.peak_bytes_per_tck()) * tck_per_cycle;
  const double beat = preset.dim;
  const std::string product =
      fmt::format("{}: {} B/tCK x {:.3f} tCK/cycle = {:.1f} B/cycle", set.name, set.peak_bytes_per_tck(), tck_per_cycle, dram);
  if (dram < beat) return {dram, fmt::format("{}, below the port's one {} B beat per cycle", product, preset.dim)};
  return {beat, fmt::format("one {} B beat per cycle (the DRAM's {})", preset.dim, product)};
}

MemoryPortPeak memory_port_peak(const Preset& preset) {
  if (preset.hbm.model == "hbm") return memory_port_peak(preset, load_hbm_timing_set(preset.hbm.timing_set));
  return {static_cast<double>(preset.hbm.bytes_per_cycle),
          fmt::format("the {} model's {} B/cycle", preset.hbm.model, preset.hbm.bytes_per_cycle)};
}

}  // namespace tpuemu
