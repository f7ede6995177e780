// SPDX-License-Identifier: Apache-2.0
// Text for a terminal: user-given names made printable, and aligned columns that no value, however
// wide, runs together.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tpuemu {

// text with every control character (bytes 0x00-0x1f and 0x7f) written as an escape: \n, \r, \t,
// otherwise \xNN. Every printer of a user-given name (a layer, a workload, an id, a file name) and
// the error line use it, so a name cannot move the cursor, recolour the terminal or forge a line.
// Other bytes, UTF-8 included, pass unchanged.
std::string printable(std::string_view text);
// The same for a whole text of lines: its newlines stay; every other control character is escaped.
std::string printable_lines(std::string_view text);

// One column of text_table: cells padded to the widest cell of the column (at least min_width),
// right- or left-aligned, after `gap` spaces (none before the first column).
struct TextColumn {
  std::size_t min_width = 0;
  bool right = true;
  std::size_t gap = 1;
};

// Rows of cells as aligned text, each row ending in '\n' and starting with indent, trailing spaces
// removed. A column is as wide as its widest cell, so a wide value moves the columns after it
// instead of running into them. Widths count UTF-8 code points. A row may have fewer cells than
// there are columns; cells beyond the columns get the last column's format.
std::string text_table(std::span<const TextColumn> columns, const std::vector<std::vector<std::string>>& rows,
                       std::string_view indent = "");

}  // namespace tpuemu
