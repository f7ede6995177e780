// HBM timing sets: load, validate, find, derive, print (docs/hbm.md, docs/hbm-timing.md).
#include "tpuemu/config/hbm_config.h"

#include <algorithm>
#include <bit>
#include <system_error>

#include <fmt/format.h>

namespace tpuemu {
namespace {

constexpr std::uint64_t kAddressSpace = std::uint64_t{1} << 32;  // the core's addresses: 32 bit
constexpr std::uint64_t kMaxTiming = 1'000'000;                  // tCK; sanity bound
constexpr std::uint32_t kBurstBytes = 64;                        // 512-bit wdata/rdata

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
  auto get = [&](std::string_view key) { return to_u32(r.get_uint(key, 1, kMaxTiming)); };
  t.CL = get("CL");
  t.CWL = get("CWL");
  t.tRCD = get("tRCD");
  t.tRP = get("tRP");
  t.tRAS = get("tRAS");
  t.tRC = get("tRC");
  t.tRRD_S = get("tRRD_S");
  t.tRRD_L = get("tRRD_L");
  t.tFAW = get("tFAW");
  t.tCCD_S = get("tCCD_S");
  t.tCCD_L = get("tCCD_L");
  t.tWTR_S = get("tWTR_S");
  t.tWTR_L = get("tWTR_L");
  t.tWR = get("tWR");
  t.tRTP = get("tRTP");
  t.tRFC = get("tRFC");
  t.tREFI = get("tREFI");

  // Consistency (docs/hbm.md). tFAW >= 4 * tRRD_S is deliberately not required: HBM allows less.
  if (t.tRAS < t.tRCD) throw r.error("tRAS", fmt::format("{} < tRCD = {}", t.tRAS, t.tRCD));
  if (t.tRC < t.tRAS + t.tRP) {
    throw r.error("tRC", fmt::format("{} < tRAS + tRP = {}", t.tRC, t.tRAS + t.tRP));
  }
  if (t.tCCD_L < t.tCCD_S) {
    throw r.error("tCCD_L", fmt::format("{} < tCCD_S = {}", t.tCCD_L, t.tCCD_S));
  }
  if (t.tRRD_L < t.tRRD_S) {
    throw r.error("tRRD_L", fmt::format("{} < tRRD_S = {}", t.tRRD_L, t.tRRD_S));
  }
  if (t.tWTR_L < t.tWTR_S) {
    throw r.error("tWTR_L", fmt::format("{} < tWTR_S = {}", t.tWTR_L, t.tWTR_S));
  }
  if (t.tFAW < t.tRRD_S) throw r.error("tFAW", fmt::format("{} < tRRD_S = {}", t.tFAW, t.tRRD_S));
  if (t.tREFI <= t.tRFC) {
    throw r.error("tREFI", fmt::format("{} <= tRFC = {} (a refresh must fit in its interval)",
                                       t.tREFI, t.tRFC));
  }
  r.finish();
  return t;
}

std::string_view field_token(HbmAddressMap::Field f) {
  switch (f) {
    case HbmAddressMap::Field::Row: return "ro";
    case HbmAddressMap::Field::Bank: return "ba";
    case HbmAddressMap::Field::BankGroup: return "bg";
    case HbmAddressMap::Field::Channel: return "ch";
    case HbmAddressMap::Field::Column: return "co";
  }
  return "?";
}

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

}  // namespace

// ---------------------------------------------------------------------------------------------
// Address map
// ---------------------------------------------------------------------------------------------

HbmAddressMap HbmAddressMap::parse(std::string_view text) {
  HbmAddressMap m;
  std::size_t n = 0;
  std::uint32_t seen = 0;
  std::size_t pos = 0;
  const auto bad = [&](std::string_view why) {
    return Error(fmt::format("address map \"{}\": {} (expected the five fields ro, ba, bg, ch, co "
                             "once each, most significant first, separated by '-', e.g. \"{}\")",
                             text, why, kDefault));
  };
  while (true) {
    const auto dash = text.find('-', pos);
    const auto token = text.substr(pos, dash == std::string_view::npos ? std::string_view::npos
                                                                        : dash - pos);
    Field f{};
    if (token == "ro") {
      f = Field::Row;
    } else if (token == "ba") {
      f = Field::Bank;
    } else if (token == "bg") {
      f = Field::BankGroup;
    } else if (token == "ch") {
      f = Field::Channel;
    } else if (token == "co") {
      f = Field::Column;
    } else {
      throw bad(fmt::format("unknown field \"{}\"", token));
    }
    const auto bit = 1u << static_cast<unsigned>(f);
    if (seen & bit) throw bad(fmt::format("field \"{}\" twice", token));
    seen |= bit;
    if (n == 5) throw bad("more than five fields");
    m.msb_first[n++] = f;
    if (dash == std::string_view::npos) break;
    pos = dash + 1;
  }
  if (n != 5) throw bad("fewer than five fields");
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
  const std::uint32_t offset_bits = log2u(burst_bytes());
  a.offset = static_cast<std::uint32_t>(byte_address & (burst_bytes() - 1));
  std::uint64_t rest = byte_address >> offset_bits;
  for (auto it = address_map.msb_first.rbegin(); it != address_map.msb_first.rend(); ++it) {
    const FieldInfo info = field_info(*this, *it);
    a.*info.member = static_cast<std::uint32_t>(rest & (info.count - 1));
    rest >>= log2u(info.count);
  }
  return a;
}

std::uint64_t HbmTimingSet::encode(const HbmAddress& a) const {
  if (a.offset >= burst_bytes()) {
    throw Error(fmt::format("HBM timing set {}", name),
                fmt::format("burst offset {} out of range ({} bytes per burst)", a.offset,
                            burst_bytes()));
  }
  std::uint64_t out = 0;
  for (const auto f : address_map.msb_first) {
    const FieldInfo info = field_info(*this, f);
    const std::uint32_t v = a.*info.member;
    if (v >= info.count) {
      throw Error(fmt::format("HBM timing set {}", name),
                  fmt::format("{} {} out of range ({})", field_token(f), v, info.count));
    }
    out = (out << log2u(info.count)) | v;
  }
  return (out << log2u(burst_bytes())) | a.offset;
}

// ---------------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------------

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

nlohmann::json to_json(const HbmTimingSet& s) {
  const auto& g = s.geometry;
  const auto& t = s.timings;
  nlohmann::json timing = nlohmann::json::object();
  timing["CL"] = t.CL;
  timing["CWL"] = t.CWL;
  timing["tRCD"] = t.tRCD;
  timing["tRP"] = t.tRP;
  timing["tRAS"] = t.tRAS;
  timing["tRC"] = t.tRC;
  timing["tRRD_S"] = t.tRRD_S;
  timing["tRRD_L"] = t.tRRD_L;
  timing["tFAW"] = t.tFAW;
  timing["tCCD_S"] = t.tCCD_S;
  timing["tCCD_L"] = t.tCCD_L;
  timing["tWTR_S"] = t.tWTR_S;
  timing["tWTR_L"] = t.tWTR_L;
  timing["tWR"] = t.tWR;
  timing["tRTP"] = t.tRTP;
  timing["tRFC"] = t.tRFC;
  timing["tREFI"] = t.tREFI;
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
  };
}

std::string describe(const HbmTimingSet& s) {
  const auto& g = s.geometry;
  const auto& t = s.timings;
  const double ns = s.tck_ns();
  auto gib = [](std::uint64_t b) { return static_cast<double>(b) / (1ull << 30); };
  return fmt::format(
      "HBM timing set {}: {}\n"
      "  clock      tCK {} ps ({:.3f} GHz), data bus DDR, burst {} B in {} tCK (BL {} x {} B)\n"
      "  geometry   {} channels x {} bank groups x {} banks, {} rows x {} columns ({} B page)\n"
      "  capacity   {:.2f} GiB per channel, {:.2f} GiB total, {:.2f} GiB addressable (32-bit)\n"
      "  peak       {} B/tCK per channel = {:.1f} GB/s; {} B/tCK total = {:.1f} GB/s\n"
      "  timings    CL {} ({:.2f} ns)  CWL {}  tRCD {} ({:.2f} ns)  tRP {} ({:.2f} ns)  "
      "tRAS {}  tRC {} ({:.2f} ns)\n"
      "             tRRD_S/L {}/{}  tFAW {}  tCCD_S/L {}/{}  tWTR_S/L {}/{}  tWR {}  tRTP {}\n"
      "             tRFC {} ({:.0f} ns)  tREFI {} ({:.2f} us)  address map {}\n",
      s.name, s.source, s.tck_ps, s.clock_ghz(), s.burst_bytes(), s.tBURST(), g.burst_length,
      g.bus_bytes, g.channels, g.bank_groups, g.banks_per_group, g.rows, g.columns,
      s.page_bytes(), gib(s.channel_capacity_bytes()), gib(s.capacity_bytes()),
      gib(s.addressable_bytes()), s.peak_bytes_per_tck_per_channel(), s.peak_gbps_per_channel(),
      s.peak_bytes_per_tck(), s.peak_gbps(), t.CL, t.CL * ns, t.CWL, t.tRCD, t.tRCD * ns, t.tRP,
      t.tRP * ns, t.tRAS, t.tRC, t.tRC * ns, t.tRRD_S, t.tRRD_L, t.tFAW, t.tCCD_S, t.tCCD_L,
      t.tWTR_S, t.tWTR_L, t.tWR, t.tRTP, t.tRFC, t.tRFC * ns, t.tREFI, t.tREFI * ns / 1000.0,
      s.address_map.to_string());
}

}  // namespace tpuemu
