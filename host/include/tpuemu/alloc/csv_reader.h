// SPDX-License-Identifier: Apache-2.0
// Reads the small CSV files of allocation traces and plans: a header row naming the columns (in
// any order), then one row per record. Blank lines and lines starting with '#' are skipped; fields
// are plain (no quoting). Every error names file:line:column of the offending field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tpuemu/base/error.h"

namespace tpuemu::alloc {

class CsvReader {
 public:
  // Throws Error "file:1: empty file (expected a header ...)" when there is no header.
  CsvReader(std::string text, std::string source);
  // Throws Error "path: cannot open" when the file can't be read.
  static CsvReader from_file(const std::filesystem::path& path);

  // Throws Error "file:line: missing column 'x' in the header" for the first one absent.
  void require_columns(std::initializer_list<std::string_view> names) const;
  bool has_column(std::string_view name) const;
  // Throws Error "file:line:column: unknown column 'x'" for a header column not in `names`.
  void allow_only_columns(std::initializer_list<std::string_view> names) const;

  // Advances to the next record; false at the end. Throws Error when its field count differs
  // from the header's.
  bool next_row();
  std::size_t line() const { return line_; }
  const std::string& source() const { return source_; }

  // The field of `column` in the current row (the column must exist).
  std::string field(std::string_view column) const;
  // "" -> fallback; an absent column -> fallback.
  std::string field_or(std::string_view column, std::string_view fallback) const;
  bool has_value(std::string_view column) const;
  // A non-negative integer; errors "file:line:col: negative size -4" / "'x1' is not a non-negative integer".
  std::uint64_t unsigned_field(std::string_view column) const;

  Error error_at(std::string_view column, std::string_view cause) const;

 private:
  std::size_t index_of(std::string_view column) const;

  std::string text_, source_;
  std::size_t pos_ = 0, line_ = 0;
  std::unordered_map<std::string, std::size_t> columns_;
  std::size_t header_line_ = 0;
  std::vector<std::string> fields_;
  std::vector<std::size_t> field_columns_;  // 1-based character column of each field
  std::vector<std::size_t> header_columns_;
};

}  // namespace tpuemu::alloc
