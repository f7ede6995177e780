// Layer 1 of the host runtime: hardware presets (configs/presets/*.json) and the JSON input
// helpers every loader of user files shares (exact file:line:column errors, JSON pointers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpuemu/base/error.h"

namespace tpuemu {

// ---------------------------------------------------------------------------------------------
// JSON input with positions
// ---------------------------------------------------------------------------------------------

// A parsed JSON text that remembers where each object key (and each container) was written, so
// an error about a value can say "file:line:column: /hbm/latency_cycles: must be ...".
// Parsing is strict JSON (no comments); a duplicate key in one object is an error, because
// nlohmann silently keeps the last one and a preset with "dim" twice is certainly a mistake.
class JsonDocument {
 public:
  // Throws Error "source:line:column: <parser message>" on malformed input.
  static JsonDocument parse(std::string text, std::string source_name);
  // Reads the file; the source name in errors is the path as given.
  static JsonDocument load(const std::filesystem::path& path);

  const nlohmann::json& root() const noexcept { return root_; }
  const std::string& source() const noexcept { return source_; }

  struct Position {
    std::size_t line = 0;    // 1-based; 0 = unknown
    std::size_t column = 0;  // 1-based, in bytes
  };
  // Where the value at json_pointer was written (the key's opening quote for object members).
  // Falls back to the nearest enclosing value whose position is known.
  Position position_of(std::string_view json_pointer) const;

  // Error "source:line:column: <json_pointer>: <cause>" (pointer "" is shown as "/").
  Error error_at(std::string_view json_pointer, std::string_view cause) const;

 private:
  JsonDocument() = default;
  nlohmann::json root_;
  std::string source_;
  std::map<std::string, Position, std::less<>> positions_;
};

// Parses a JSON file with file:line:column errors. For loaders that also want positions for
// their own type/range errors, use JsonDocument::load and JsonObjectReader instead.
nlohmann::json parse_json_file(const std::filesystem::path& path);

// Error "file: <json_pointer>: <cause>" for callers that hold a plain nlohmann::json.
Error json_value_error(std::string_view file, std::string_view json_pointer,
                       std::string_view cause);

// Escapes one key for use in a JSON pointer (RFC 6901: "~" -> "~0", "/" -> "~1").
std::string json_pointer_escape(std::string_view key);

// Typed, range-checked access to the members of one JSON object, with errors positioned at the
// offending key. Every key read (or asked for with find) counts as known; finish() then rejects
// any other key, listing the known ones, so a typo like "vmem_row" is never silently ignored.
class JsonObjectReader {
 public:
  // Throws unless the value at json_pointer is an object.
  JsonObjectReader(const JsonDocument& doc, std::string json_pointer);

  bool has(std::string_view key) const;
  // The member, or nullptr; either way the key becomes known.
  const nlohmann::json* find(std::string_view key);

  // Required members. Integers must be JSON integers (not 16.0) within [min, max].
  std::string get_string(std::string_view key);
  bool get_bool(std::string_view key);
  std::uint64_t get_uint(std::string_view key, std::uint64_t min = 0,
                         std::uint64_t max = UINT64_MAX);
  std::int64_t get_int(std::string_view key, std::int64_t min = INT64_MIN,
                       std::int64_t max = INT64_MAX);
  // Any JSON number within (min_exclusive, max].
  double get_number(std::string_view key, double min_exclusive, double max);
  JsonObjectReader get_object(std::string_view key);

  // Throws on any member not read via the functions above.
  void finish() const;

  // Error positioned at the member `key` of this object ("" = the object itself).
  Error error(std::string_view key, std::string_view cause) const;
  const std::string& pointer() const noexcept { return pointer_; }
  const JsonDocument& document() const noexcept { return *doc_; }

 private:
  const nlohmann::json& require(std::string_view key);
  std::string member_pointer(std::string_view key) const;

  const JsonDocument* doc_;
  std::string pointer_;
  const nlohmann::json* object_;
  std::set<std::string, std::less<>> known_;
};

// ---------------------------------------------------------------------------------------------
// Presets
// ---------------------------------------------------------------------------------------------

struct HbmConfig {
  std::string model;                 // memory model: "simple" (fixed latency + bandwidth cap)
  std::uint64_t capacity_bytes = 0;  // multiple of dim, <= 4 GiB (addresses are 32-bit)
  std::uint32_t latency_cycles = 0;
  std::uint32_t bytes_per_cycle = 0;  // 1..dim (at most one beat per cycle)
  // model "hbm" only: a timing set of configs/hbm/ and the controller's page policy
  std::string timing_set;
  std::string page_policy = "open";

  bool operator==(const HbmConfig&) const = default;
};

// One accelerator core as configs/presets/<name>.json describes it. The same file parameterises
// the RTL (Verilator -G), so every field is validated here on load; see docs/isa.md for units.
struct Preset {
  std::string name;
  std::string description;
  std::uint32_t dim = 0;           // MXU lanes and VMEM row width in bytes; power of two 4..256
  std::uint32_t vmem_rows = 0;     // power of two, >= dim (a LOADW reads dim rows)
  std::uint32_t vmem_banks = 0;    // power of two dividing vmem_rows
  std::uint32_t acc_rows = 0;      // power of two; rows of dim int32
  std::uint32_t smem_words = 0;    // 32-bit words; multiple of dim/4 (whole SMEM rows)
  std::uint32_t queue_depth = 0;   // entries per instruction queue, 1..255
  std::uint32_t mem_outstanding = 0;  // reads in flight on the memory port
  double clock_ghz = 0;
  HbmConfig hbm;

  std::uint64_t vmem_bytes() const { return std::uint64_t{vmem_rows} * dim; }
  std::uint32_t beat_bytes() const { return dim; }
  std::uint64_t peak_macs_per_cycle() const { return std::uint64_t{dim} * dim; }
  std::uint32_t hbm_bytes_per_cycle() const { return hbm.bytes_per_cycle; }
  std::uint64_t acc_bytes() const { return std::uint64_t{acc_rows} * 4 * dim; }
  std::uint32_t smem_rows() const { return smem_words / (dim / 4); }
  std::uint64_t smem_bytes() const { return std::uint64_t{smem_words} * 4; }
  std::uint32_t vmem_rows_per_bank() const { return vmem_rows / vmem_banks; }
  // Peak HBM bandwidth in GB/s (bytes per cycle x GHz).
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
