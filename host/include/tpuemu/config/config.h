// SPDX-License-Identifier: Apache-2.0
// The host layer `config`: hardware presets (configs/presets/*.json). The JSON input helpers
// they are read with (exact file:line:column errors, JSON pointers) are in tpuemu/base/json.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpuemu/base/error.h"
#include "tpuemu/base/json.h"

namespace tpuemu {

// The range of a preset's clock_ghz: 1 MHz to 100 GHz.
inline constexpr double kMinClockGhz = 0.001;
inline constexpr double kMaxClockGhz = 100.0;

struct HbmConfig {
  std::string model;                 // memory model: "simple" (fixed latency + bandwidth cap)
  std::uint64_t capacity_bytes = 0;  // multiple of dim, <= 4 GiB (addresses are 32-bit)
  // model "simple" only (0 with "hbm", whose file may not carry them: the timing set decides;
  // memory_port_peak() in tpuemu/config/hbm_config.h is the port's bandwidth for either model)
  std::uint32_t latency_cycles = 0;
  std::uint32_t bytes_per_cycle = 0;  // 1..dim (at most one beat per cycle)
  // model "hbm" only: a timing set of configs/hbm/ and the controller's page policy
  std::string timing_set;
  std::string page_policy = "open";

  bool operator==(const HbmConfig&) const = default;
};

// How the devices of a multi-device run are connected (docs/sharding.md): a ring (1-D, "--mesh N"
// or none) or a 2-D torus ("--mesh AxB"). Each link moves link_bytes_per_cycle per direction
// (core cycles), and every hop of a collective step costs latency_cycles.
struct InterconnectConfig {
  std::string topology;                  // "ring" or "torus2d": the topologies a preset offers
  std::uint32_t links_per_device = 0;    // ring: 1 (one direction) or 2 (bidirectional); torus2d: 4
  std::uint32_t link_bytes_per_cycle = 0;
  std::uint32_t latency_cycles = 0;

  bool operator==(const InterconnectConfig&) const = default;
};

// One accelerator core as configs/presets/<name>.json describes it. The same file parameterises
// the RTL (Verilator -G), so every field is validated here on load; see docs/isa.md for units.
struct Preset {
  std::string name;
  std::string description;
  // The core fields: tpu_top's parameters, their values those of spec/tpuemu.json's core_params
  // (docs/core-cache.md), checked on load.
  std::uint32_t dim = 0;           // MXU lanes and VMEM row width in bytes
  std::uint32_t vmem_rows = 0;     // >= dim (a LOADW reads dim rows)
  std::uint32_t vmem_banks = 0;    // row r in bank r mod vmem_banks
  std::uint32_t acc_rows = 0;      // rows of dim int32
  std::uint32_t smem_words = 0;    // 32-bit words; whole SMEM rows of dim/4 words
  std::uint32_t queue_depth = 0;   // entries per instruction queue
  std::uint32_t mem_outstanding = 0;  // reads in flight on the memory port
  double clock_ghz = 0;
  HbmConfig hbm;
  // Optional: without it the preset runs on one device only.
  std::optional<InterconnectConfig> interconnect;

  std::uint64_t vmem_bytes() const { return std::uint64_t{vmem_rows} * dim; }
  std::uint32_t beat_bytes() const { return dim; }
  std::uint64_t peak_macs_per_cycle() const { return std::uint64_t{dim} * dim; }
  std::uint32_t hbm_bytes_per_cycle() const { return hbm.bytes_per_cycle; }  // "simple" only
  std::uint64_t acc_bytes() const { return std::uint64_t{acc_rows} * 4 * dim; }
  std::uint32_t smem_rows() const { return smem_words / (dim / 4); }
  std::uint64_t smem_bytes() const { return std::uint64_t{smem_words} * 4; }
  std::uint32_t vmem_rows_per_bank() const { return vmem_rows / vmem_banks; }
  // Peak bandwidth of the simple model in GB/s (bytes per cycle x GHz).
  double hbm_peak_gbps() const { return hbm.bytes_per_cycle * clock_ghz; }
  // The value the core's CONFIG CSR (0x004) must read for this preset: a device backend
  // compares it to catch a model verilated for a different preset.
  std::uint32_t config_csr() const;

  bool operator==(const Preset&) const = default;
};

// Parses and validates a preset from an already parsed document. Throws Error positioned at the
// offending key for a missing, unknown, mistyped or out-of-range field.
Preset preset_from_json(const JsonDocument& doc);
Preset load_preset_file(const std::filesystem::path& path);

// Directories searched for `--preset NAME`, in order: $TPUEMU_CONFIG_DIR (if set),
// <exe dir>/../configs/presets, <exe dir>/configs/presets, and the source tree's configs/presets
// (a dev-checkout fallback). Directories that do not exist are kept: errors list what was tried.
std::vector<std::filesystem::path> default_preset_dirs();

// name_or_path containing '/' or ending in ".json" is a file path; anything else is a preset name
// looked up as <dir>/<name>.json in search_dirs (first match wins). A preset loaded by name must
// carry that name. Unknown names throw an Error listing the available presets.
Preset load_preset(std::string_view name_or_path,
                   std::span<const std::filesystem::path> search_dirs);
Preset load_preset(std::string_view name_or_path);  // default_preset_dirs()

// Names of the presets (*.json stems) in search_dirs, sorted, without duplicates.
std::vector<std::string> list_presets(std::span<const std::filesystem::path> search_dirs);
std::vector<std::string> list_presets();  // default_preset_dirs()

// The preset as JSON, in the file format (load(to_json(p)) == p).
nlohmann::json to_json(const Preset& preset);
// A few human-readable lines for `tpuemu info`: sizes, derived bandwidths.
std::string describe(const Preset& preset);

}  // namespace tpuemu
