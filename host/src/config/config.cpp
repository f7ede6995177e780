// SPDX-License-Identifier: Apache-2.0
// Presets: load, validate, find, print.
#include <algorithm>
#include <array>
#include <bit>
#include <span>
#include <cstdlib>
#include <system_error>

#include <fmt/format.h>

#include "tpuemu/config/config.h"
#include "tpuemu/spec/contract.h"

namespace tpuemu {
namespace {

constexpr std::uint64_t kMaxHbmBytes = std::uint64_t{1} << 32;  // DMA and fetch addresses: 32 bit

// The memory models the simulator harness implements; a typo must not fall back to a default.
constexpr std::string_view kHbmModels[] = {"simple", "hbm"};

std::uint32_t log2u(std::uint64_t x) { return static_cast<std::uint32_t>(std::bit_width(x) - 1); }

std::uint32_t to_u32(std::uint64_t x) { return static_cast<std::uint32_t>(x); }

void check_name(const JsonObjectReader& r, const std::string& name) {
  const bool ok = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == '.';
  });
  if (!ok) throw r.error("name", fmt::format("must be a non-empty [A-Za-z0-9._-] name, got \"{}\"", name));
}

HbmConfig hbm_from_json(JsonObjectReader r, std::uint32_t dim) {
  HbmConfig h;
  h.model = r.get_string("model");
  if (std::find(std::begin(kHbmModels), std::end(kHbmModels), h.model) == std::end(kHbmModels)) {
    throw r.error("model", fmt::format("unknown HBM model \"{}\" (known: {})", h.model,
                                       fmt::join(kHbmModels, ", ")));
  }
  h.capacity_bytes = r.get_uint("capacity_bytes", dim, kMaxHbmBytes);
  if (h.capacity_bytes % dim != 0) {
    throw r.error("capacity_bytes",
                  fmt::format("must be a multiple of dim ({}), got {}", dim, h.capacity_bytes));
  }
  // Every field is simulated by the chosen model or refused, never read and ignored:
  // "simple": fixed latency and a bandwidth cap, both from here. "hbm": the RTL HBM controller
  // and the DRAM device model with a timing set from configs/hbm/; latency and bandwidth come
  // from the timings and the core's port (memory_port_peak()), so the simple model's fields
  // would change nothing and are refused, as are the hbm fields on "simple".
  const auto refuse = [&](std::string_view key, const std::string& why) {
    if (r.has(key)) throw r.error(key, fmt::format("is not simulated with hbm.model \"{}\": {}; remove it", h.model, why));
  };
  if (h.model == "hbm") {
    for (const std::string_view key : {"latency_cycles", "bytes_per_cycle"}) {
      refuse(key, "the latency and the bandwidth come from the timing set and the core's port");
    }
  } else {
    for (const std::string_view key : {"timing_set", "page_policy"}) refuse(key, "only the \"hbm\" model has them");
  }
  if (h.model == "simple") {
    h.latency_cycles = to_u32(r.get_uint("latency_cycles", 1, 1'000'000));
    h.bytes_per_cycle = to_u32(r.get_uint("bytes_per_cycle", 1, dim));
  } else {
    h.timing_set = r.get_string("timing_set");
    if (r.has("page_policy")) {
      h.page_policy = r.get_string("page_policy");
      if (h.page_policy != "open" && h.page_policy != "closed") {
        throw r.error("page_policy", fmt::format("expected \"open\" or \"closed\", got \"{}\"", h.page_policy));
      }
    }
  }
  r.finish();
  return h;
}

// The preset's members that tpu_top's parameters are, by the contract's name for them.
constexpr std::array<std::pair<std::string_view, std::uint32_t Preset::*>, 7> kCoreMembers{{
    {"dim", &Preset::dim},
    {"vmem_rows", &Preset::vmem_rows},
    {"vmem_banks", &Preset::vmem_banks},
    {"acc_rows", &Preset::acc_rows},
    {"smem_words", &Preset::smem_words},
    {"queue_depth", &Preset::queue_depth},
    {"mem_outstanding", &Preset::mem_outstanding},
}};

constexpr bool core_members_are_the_contracts() {
  namespace cp = spec::core_params;
  if (kCoreMembers.size() != cp::kParams.size()) return false;
  for (std::size_t i = 0; i < kCoreMembers.size(); ++i) {
    if (kCoreMembers[i].first != cp::kParams[i].name) return false;
  }
  return true;
}
static_assert(core_members_are_the_contracts(),
              "the preset's core fields are spec/tpuemu.json's core_params, in their order");

// "a power of two in [8, 256]", "a multiple of dim/4 (2) in [dim/4 (2), 16777216]": the values
// a core parameter may take, its bounds shown with their values.
std::string allowed_values(const spec::core_params::Param& c,
                           std::span<const std::uint64_t> values) {
  const auto bound = [&](const spec::core_params::Bound& b) {
    return b.of < 0 ? std::string(b.text) : fmt::format("{} ({})", b.text, b.value(values));
  };
  std::string text = c.power_of_two ? "a power of two " : "";
  if (c.multiple_of.of >= 0 || c.multiple_of.constant > 1)
    text += fmt::format("a multiple of {} ", bound(c.multiple_of));
  return text + fmt::format("in [{}, {}]", bound(c.min), bound(c.max));
}

// The fields that are tpu_top's parameters, each refused at its place unless it is a value the
// RTL is built for: the contract's core_params, the table tpu_top checks its parameters against.
void core_fields_from_json(JsonObjectReader& r, Preset& p) {
  namespace cp = spec::core_params;
  std::array<std::uint64_t, cp::kParams.size()> values{};
  for (std::size_t i = 0; i < cp::kParams.size(); ++i) {
    const cp::Param& c = cp::kParams[i];
    const std::span<const std::uint64_t> before(values.data(), i);
    const auto refuse = [&](auto v) {
      return r.error(c.name,
                     fmt::format("must be {}, got {}: {}", allowed_values(c, before), v, c.why));
    };
    if (const nlohmann::json* raw = r.find(c.name);
        raw != nullptr && raw->is_number_integer() && !raw->is_number_unsigned())
      throw refuse(raw->get<std::int64_t>());
    const std::uint64_t v = r.get_uint(c.name);  // absent or no integer: the reader's message
    if (!c.holds(v, before)) throw refuse(v);
    values[i] = v;
    p.*kCoreMembers[i].second = to_u32(v);
  }
}

InterconnectConfig interconnect_from_json(JsonObjectReader r) {
  InterconnectConfig c;
  c.topology = r.get_string("topology");
  if (c.topology != "ring" && c.topology != "torus2d") {
    throw r.error("topology", fmt::format("expected \"ring\" or \"torus2d\", got \"{}\"", c.topology));
  }
  c.links_per_device = to_u32(r.get_uint("links_per_device", 1, 4));
  if (c.topology == "ring" && c.links_per_device > 2) {
    throw r.error("links_per_device", fmt::format("a ring has 1 (one direction) or 2 links per device, got {}", c.links_per_device));
  }
  if (c.topology == "torus2d" && c.links_per_device != 4) {
    throw r.error("links_per_device", fmt::format("a 2-D torus has 4 links per device, got {}", c.links_per_device));
  }
  c.link_bytes_per_cycle = to_u32(r.get_uint("link_bytes_per_cycle", 1, 1u << 16));
  c.latency_cycles = to_u32(r.get_uint("latency_cycles", 0, 100'000'000));
  r.finish();
  return c;
}

}  // namespace

std::uint32_t Preset::config_csr() const {
  namespace config = spec::csr::config;
  return config::dim.put(dim) | config::log2_vmem_rows.put(log2u(vmem_rows)) | config::log2_acc_rows.put(log2u(acc_rows));
}

Preset preset_from_json(const JsonDocument& doc) {
  JsonObjectReader r(doc, "");
  Preset p;
  p.name = r.get_string("name");
  check_name(r, p.name);
  p.description = r.get_string("description");

  // The upper bounds of the contract's table are sanity limits (far beyond any real core) that
  // keep every derived byte count well inside 64 bits and row indices inside 32.
  core_fields_from_json(r, p);
  // 1 MHz to 100 GHz: every time and bandwidth figure divides or multiplies by the clock, and a
  // clock near zero (1e-300) would make them infinite instead of refusing the preset.
  p.clock_ghz = r.get_number("clock_ghz", kMinClockGhz, kMaxClockGhz);
  p.hbm = hbm_from_json(r.get_object("hbm"), p.dim);
  if (r.has("interconnect")) p.interconnect = interconnect_from_json(r.get_object("interconnect"));
  r.finish();
  return p;
}

Preset load_preset_file(const std::filesystem::path& path) {
  return preset_from_json(JsonDocument::load(path));
}

std::vector<std::filesystem::path> default_preset_dirs() {
  std::vector<std::filesystem::path> dirs;
  if (const char* env = std::getenv("TPUEMU_CONFIG_DIR"); env != nullptr && *env != '\0') {
    dirs.emplace_back(env);
  }
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto exe_dir = exe.parent_path();
    dirs.push_back((exe_dir / ".." / "configs" / "presets").lexically_normal());
    dirs.push_back(exe_dir / "configs" / "presets");
  }
#ifdef TPUEMU_DEV_PRESET_DIR
  dirs.emplace_back(TPUEMU_DEV_PRESET_DIR);
#endif
  return dirs;
}

std::vector<std::string> list_presets(std::span<const std::filesystem::path> search_dirs) {
  std::vector<std::string> names;
  for (const auto& dir : search_dirs) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".json" && entry.is_regular_file(ec)) {
        names.push_back(entry.path().stem().string());
      }
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::vector<std::string> list_presets() {
  const auto dirs = default_preset_dirs();
  return list_presets(dirs);
}

Preset load_preset(std::string_view name_or_path,
                   std::span<const std::filesystem::path> search_dirs) {
  const bool is_path = name_or_path.find('/') != std::string_view::npos ||
                       name_or_path.ends_with(".json");
  if (is_path) return load_preset_file(std::filesystem::path(name_or_path));

  for (const auto& dir : search_dirs) {
    const auto file = dir / (std::string(name_or_path) + ".json");
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) continue;
    const auto doc = JsonDocument::load(file);
    Preset p = preset_from_json(doc);
    // A copied file that kept its old name would make `--preset x` silently run preset y.
    if (p.name != name_or_path) {
      throw doc.error_at("/name", fmt::format("preset file {}.json is named \"{}\"; the name must "
                                              "match the file name",
                                              name_or_path, p.name));
    }
    return p;
  }
  const auto available = list_presets(search_dirs);
  std::vector<std::string> dirs;
  for (const auto& d : search_dirs) dirs.push_back(d.string());
  throw Error(fmt::format("unknown preset \"{}\" (available: {}; searched: {})", name_or_path,
                          available.empty() ? "none" : fmt::format("{}", fmt::join(available, ", ")),
                          dirs.empty() ? "no directories" : fmt::format("{}", fmt::join(dirs, ", "))));
}

Preset load_preset(std::string_view name_or_path) {
  const auto dirs = default_preset_dirs();
  return load_preset(name_or_path, dirs);
}

nlohmann::json to_json(const Preset& p) {
  nlohmann::json hbm = {{"model", p.hbm.model}, {"capacity_bytes", p.hbm.capacity_bytes}};
  if (p.hbm.model == "simple") {
    hbm["latency_cycles"] = p.hbm.latency_cycles;
    hbm["bytes_per_cycle"] = p.hbm.bytes_per_cycle;
  } else {
    hbm["timing_set"] = p.hbm.timing_set;
    hbm["page_policy"] = p.hbm.page_policy;
  }
  nlohmann::json j{
      {"name", p.name},
      {"description", p.description},
      {"dim", p.dim},
      {"vmem_rows", p.vmem_rows},
      {"vmem_banks", p.vmem_banks},
      {"acc_rows", p.acc_rows},
      {"smem_words", p.smem_words},
      {"queue_depth", p.queue_depth},
      {"mem_outstanding", p.mem_outstanding},
      {"clock_ghz", p.clock_ghz},
      {"hbm", hbm},
  };
  if (p.interconnect) {
    j["interconnect"] = {{"topology", p.interconnect->topology},
                         {"links_per_device", p.interconnect->links_per_device},
                         {"link_bytes_per_cycle", p.interconnect->link_bytes_per_cycle},
                         {"latency_cycles", p.interconnect->latency_cycles}};
  }
  return j;
}

std::string describe(const Preset& p) {
  return fmt::format(
      "preset {}: {}\n"
      "  MXU        {}x{} int8 ({} MAC/cycle, {:.1f} TOPS at {} GHz)\n"
      "  VMEM       {} rows x {} B = {} KiB in {} banks\n"
      "  ACC        {} rows x {} int32 = {} KiB\n"
      "  SMEM       {} words ({} rows)\n"
      "  queues     {} entries; {} reads in flight\n"
      "  HBM        {} model, {} MiB, {}\n",
      p.name, p.description, p.dim, p.dim, p.peak_macs_per_cycle(),
      2.0 * static_cast<double>(p.peak_macs_per_cycle()) * p.clock_ghz / 1000.0, p.clock_ghz,
      p.vmem_rows, p.dim, p.vmem_bytes() / 1024, p.vmem_banks, p.acc_rows, p.dim,
      p.acc_bytes() / 1024, p.smem_words, p.smem_rows(), p.queue_depth, p.mem_outstanding,
      p.hbm.model, p.hbm.capacity_bytes >> 20,
      p.hbm.model == "simple"
          ? fmt::format("{} cycles latency, {} B/cycle ({:.1f} GB/s)", p.hbm.latency_cycles, p.hbm.bytes_per_cycle,
                        p.hbm_peak_gbps())
          : fmt::format("timing set {}, {} page (latency and bandwidth from the timing set)", p.hbm.timing_set,
                        p.hbm.page_policy)) +
         (p.interconnect ? fmt::format("  links      {}, {} links x {} B/cycle, {} cycles per hop\n", p.interconnect->topology,
                                       p.interconnect->links_per_device, p.interconnect->link_bytes_per_cycle,
                                       p.interconnect->latency_cycles)
                         : std::string("  links      none (one device only)\n"));
}

}  // namespace tpuemu
