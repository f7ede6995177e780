// MiniMalloc CSV for the planner (docs/planner.md): header `id,lower,upper,size[,alignment]`
// (any order; an `offset` column is ignored on input), one buffer per row.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <iterator>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "tpuemu/alloc/planner.h"
#include "tpuemu/atomic_file.h"
#include "tpuemu/error.h"

namespace tpuemu::alloc {
namespace {

struct Field {
  std::string_view text;
  std::size_t column = 0;  // 1-based character column of the field's first character
};

std::vector<Field> split_row(std::string_view line) {
  std::vector<Field> fields;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = line.find(',', start);
    std::string_view f = line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    std::size_t col = start + 1;
    while (!f.empty() && (f.front() == ' ' || f.front() == '\t')) {
      f.remove_prefix(1);
      ++col;
    }
    while (!f.empty() && (f.back() == ' ' || f.back() == '\t')) f.remove_suffix(1);
    fields.push_back({f, col});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

enum Column { kId, kLower, kUpper, kSize, kAlignment, kOffset, kColumns };
constexpr std::string_view kColumnNames[kColumns] = {"id", "lower", "upper", "size", "alignment", "offset"};

}  // namespace

std::vector<PlanBuffer> read_plan_csv(const std::filesystem::path& path) {
  const std::string file = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(file, "cannot open");
  std::vector<PlanBuffer> buffers;
  std::map<std::string, std::size_t, std::less<>> first_line_of_id;
  int index[kColumns];
  std::fill(std::begin(index), std::end(index), -1);
  std::size_t header_fields = 0;
  bool have_header = false;
  std::string raw;
  std::size_t line_no = 0;
  while (std::getline(in, raw)) {
    ++line_no;
    std::string_view line = raw;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;  // blank line
    const auto fields = split_row(line);
    if (!have_header) {
      have_header = true;
      header_fields = fields.size();
      for (std::size_t i = 0; i < fields.size(); ++i) {
        const auto& f = fields[i];
        int c = 0;
        while (c < kColumns && kColumnNames[c] != f.text) ++c;
        if (c == kColumns) throw Error::at(file, line_no, f.column, fmt::format("unknown column '{}'", f.text));
        if (index[c] >= 0) throw Error::at(file, line_no, f.column, fmt::format("duplicate column '{}'", f.text));
        index[c] = static_cast<int>(i);
      }
      for (int c = kId; c <= kSize; ++c) {
        if (index[c] < 0) throw Error::at(file, line_no, 0, fmt::format("missing column '{}'", kColumnNames[c]));
      }
      continue;
    }
    if (fields.size() != header_fields) {
      throw Error::at(file, line_no, 0,
                      fmt::format("row has {} fields, header has {}", fields.size(), header_fields));
    }
    // The non-negative integer in column c.
    const auto number = [&](int c) -> std::uint64_t {
      const Field& f = fields[static_cast<std::size_t>(index[c])];
      std::string_view t = f.text;
      const bool negative = !t.empty() && t.front() == '-';
      if (negative) t.remove_prefix(1);
      std::uint64_t v = 0;
      const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (t.empty() || end != t.data() + t.size() || ec == std::errc::invalid_argument) {
        throw Error::at(file, line_no, f.column, fmt::format("'{}' is not a non-negative integer", f.text));
      }
      if (ec == std::errc::result_out_of_range || ((c == kLower || c == kUpper) && v > static_cast<std::uint64_t>(INT64_MAX))) {
        throw Error::at(file, line_no, f.column, fmt::format("'{}' is out of range", f.text));
      }
      if (negative && v != 0) throw Error::at(file, line_no, f.column, fmt::format("negative {} {}", kColumnNames[c], f.text));
      return v;
    };
    PlanBuffer b;
    const Field& id = fields[static_cast<std::size_t>(index[kId])];
    if (id.text.empty()) throw Error::at(file, line_no, id.column, "empty id");
    b.id = std::string(id.text);
    b.lower = static_cast<std::int64_t>(number(kLower));
    b.upper = static_cast<std::int64_t>(number(kUpper));
    b.size = number(kSize);
    if (index[kAlignment] >= 0) b.alignment = number(kAlignment);
    const auto column_of = [&](int c) { return fields[static_cast<std::size_t>(index[c])].column; };
    if (b.upper <= b.lower) {
      throw Error::at(file, line_no, column_of(kUpper), fmt::format("upper {} <= lower {}", b.upper, b.lower));
    }
    if (b.size == 0) throw Error::at(file, line_no, column_of(kSize), "size is zero");
    if (b.alignment == 0 || (b.alignment & (b.alignment - 1)) != 0) {
      throw Error::at(file, line_no, column_of(kAlignment),
                      fmt::format("alignment {} is not a power of two", b.alignment));
    }
    if (const auto [it, fresh] = first_line_of_id.emplace(b.id, line_no); !fresh) {
      throw Error::at(file, line_no, id.column, fmt::format("duplicate id '{}' (first on line {})", b.id, it->second));
    }
    buffers.push_back(std::move(b));
  }
  if (!have_header) throw Error::at(file, 1, 0, "empty file: expected the header id,lower,upper,size");
  return buffers;
}

void write_plan_csv(const std::filesystem::path& path, std::span<const PlanBuffer> buffers,
                    std::span<const std::uint64_t> offsets) {
  if (offsets.size() != buffers.size()) {
    throw Error(path.string(), fmt::format("{} offsets for {} buffers", offsets.size(), buffers.size()));
  }
  bool aligned = false;
  for (const auto& b : buffers) aligned = aligned || b.alignment != 1;
  std::string out = aligned ? "id,lower,upper,size,alignment,offset\n" : "id,lower,upper,size,offset\n";
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const auto& b = buffers[i];
    if (aligned) {
      out += fmt::format("{},{},{},{},{},{}\n", b.id, b.lower, b.upper, b.size, b.alignment, offsets[i]);
    } else {
      out += fmt::format("{},{},{},{},{}\n", b.id, b.lower, b.upper, b.size, offsets[i]);
    }
  }
  write_file_atomically(path, out);
}

}  // namespace tpuemu::alloc
