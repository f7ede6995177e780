// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/base/text.h"

#include <algorithm>

#include <fmt/format.h>

namespace tpuemu {

namespace {

std::string escape_controls(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    if ((byte >= 0x20 && byte != 0x7f) || (keep_newlines && ch == '\n')) {
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\r') {
      out += "\\r";
    } else if (ch == '\t') {
      out += "\\t";
    } else {
      out += fmt::format("\\x{:02x}", byte);
    }
  }
  return out;
}

// Code points, not bytes: a name in UTF-8 takes one column per character on a terminal.
std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char ch) { return (static_cast<unsigned char>(ch) & 0xc0) != 0x80; }));
}

}  // namespace

std::string printable(std::string_view text) { return escape_controls(text, false); }

std::string printable_lines(std::string_view text) { return escape_controls(text, true); }

std::string text_table(std::span<const TextColumn> columns, const std::vector<std::vector<std::string>>& rows,
                       std::string_view indent) {
  std::size_t count = columns.size();
  for (const auto& row : rows) count = std::max(count, row.size());
  const auto column = [&](std::size_t c) { return columns.empty() ? TextColumn{} : columns[std::min(c, columns.size() - 1)]; };
  std::vector<std::size_t> widths(count, 0);
  for (std::size_t c = 0; c < count; ++c) widths[c] = column(c).min_width;
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], display_width(row[c]));
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line(indent);
    for (std::size_t c = 0; c < row.size(); ++c) {
      const TextColumn format = column(c);
      if (c > 0) line.append(format.gap, ' ');
      const std::size_t pad = widths[c] - display_width(row[c]);
      if (format.right) line.append(pad, ' ');
      line += row[c];
      if (!format.right) line.append(pad, ' ');
    }
    while (line.size() > indent.size() && line.back() == ' ') line.pop_back();
    out += line + '\n';
  }
  return out;
}

}  // namespace tpuemu
