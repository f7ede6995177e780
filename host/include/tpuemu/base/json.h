// SPDX-License-Identifier: Apache-2.0
// The JSON input helpers every loader of user files shares: exact file:line:column errors and
// JSON pointers, so that a mistake in a preset, timing set or workload file names its place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tpuemu/base/error.h"

namespace tpuemu {

// A parsed JSON text that remembers where each object key (and each container) was written, so
// an error about a value can say "file:line:column: /hbm/latency_cycles: must be ...".
// Parsing is strict JSON (no comments); a duplicate key in one object is an error, because
// nlohmann silently keeps the last one and a preset with "dim" twice is certainly a mistake.
class JsonDocument {
 public:
  // Deeper nesting is an error (no configuration needs more; unbounded nesting costs memory).
  static constexpr std::size_t kMaxJsonDepth = 64;
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
  // A finite JSON number within [min, max].
  double get_number(std::string_view key, double min, double max);
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

}  // namespace tpuemu
