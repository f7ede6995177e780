// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/base/input_file.h"
#include "tpuemu/alloc/csv_reader.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace tpuemu::alloc {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Splits `line` at commas; `columns` gets the 1-based character column where each field starts.
void split(std::string_view line, std::vector<std::string>& fields, std::vector<std::size_t>& columns) {
  fields.clear();
  columns.clear();
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = line.find(',', start);
    const std::string_view raw = line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    std::size_t lead = 0;
    while (lead < raw.size() && (raw[lead] == ' ' || raw[lead] == '\t')) ++lead;
    fields.emplace_back(trim(raw));
    columns.push_back(start + lead + 1);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
}

bool skippable(std::string_view line) {
  const std::string_view t = trim(line);
  return t.empty() || t.front() == '#';
}

}  // namespace

CsvReader::CsvReader(std::string text, std::string source) : text_(std::move(text)), source_(std::move(source)) {
  std::string_view header;
  while (pos_ < text_.size()) {
    const std::size_t end = std::min(text_.find('\n', pos_), text_.size());
    ++line_;
    const std::string_view l(text_.data() + pos_, end - pos_);
    pos_ = end + 1;
    if (!skippable(l)) {
      header = l;
      break;
    }
  }
  if (header.empty()) throw Error::at(source_, line_ ? line_ : 1, "empty file (expected a header row naming the columns)");
  header_line_ = line_;
  split(header, fields_, field_columns_);
  header_columns_ = field_columns_;
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    if (!columns_.emplace(fields_[i], i).second) {
      throw Error::at(source_, line_, field_columns_[i], fmt::format("column '{}' appears twice", fields_[i]));
    }
  }
}

void CsvReader::require_columns(std::initializer_list<std::string_view> names) const {
  for (std::string_view name : names) {
    if (!has_column(name)) {
      throw Error::at(source_, header_line_, fmt::format("missing column '{}' in the header", name));
    }
  }
}

CsvReader CsvReader::from_file(const std::filesystem::path& path) {
  return CsvReader(read_input_file(path, kTableInput), path == "-" ? "standard input" : path.string());
}

void CsvReader::allow_only_columns(std::initializer_list<std::string_view> names) const {
  for (const auto& [name, index] : columns_) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      throw Error::at(source_, header_line_, header_columns_[index], fmt::format("unknown column '{}'", name));
    }
  }
}

bool CsvReader::has_column(std::string_view name) const { return columns_.count(std::string(name)) > 0; }

bool CsvReader::next_row() {
  while (pos_ < text_.size()) {
    const std::size_t end = std::min(text_.find('\n', pos_), text_.size());
    ++line_;
    const std::string_view l(text_.data() + pos_, end - pos_);
    pos_ = end + 1;
    if (skippable(l)) continue;
    split(l, fields_, field_columns_);
    if (fields_.size() != columns_.size()) {
      throw Error::at(source_, line_, fields_.size() > columns_.size() ? field_columns_[columns_.size()] : l.size() + 1,
                      fmt::format("row has {} fields, the header has {}", fields_.size(), columns_.size()));
    }
    return true;
  }
  return false;
}

std::size_t CsvReader::index_of(std::string_view column) const { return columns_.at(std::string(column)); }

std::string CsvReader::field(std::string_view column) const { return fields_[index_of(column)]; }

std::string CsvReader::field_or(std::string_view column, std::string_view fallback) const {
  if (!has_value(column)) return std::string(fallback);
  return field(column);
}

bool CsvReader::has_value(std::string_view column) const {
  return has_column(column) && !fields_[index_of(column)].empty();
}

Error CsvReader::error_at(std::string_view column, std::string_view cause) const {
  const std::size_t col = has_column(column) ? field_columns_[index_of(column)] : 0;
  return Error::at(source_, line_, col, cause);
}

std::uint64_t CsvReader::unsigned_field(std::string_view column) const {
  const std::string text = field(column);
  if (!text.empty() && text.front() == '-') {
    throw error_at(column, fmt::format("negative {} {}", column, text));
  }
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    throw error_at(column, fmt::format("{} '{}' is not a non-negative integer", column, text));
  }
  return value;
}

}  // namespace tpuemu::alloc
