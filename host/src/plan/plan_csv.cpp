// SPDX-License-Identifier: Apache-2.0
// MiniMalloc CSV for the planner (docs/allocation.md): header `id,lower,upper,size[,alignment]`
// (any order; an `offset` column is ignored on input), one buffer per row. MiniMalloc's newer
// spelling `buffer,start,end,size` (its published benchmarks) is read too.
#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tpuemu/alloc/csv_reader.h"
#include "tpuemu/base/atomic_file.h"
#include "tpuemu/base/error.h"
#include "tpuemu/plan/plan_input.h"
#include "tpuemu/plan/planner.h"

namespace tpuemu::plan {

namespace {

using alloc::CsvReader;

std::vector<PlanBuffer> read_buffers(CsvReader csv) {
  // The header's spelling: `id,lower,upper` or MiniMalloc's newer `buffer,start,end`.
  const bool newer = csv.has_column("buffer") || csv.has_column("start") || csv.has_column("end");
  const std::string_view id_col = newer ? "buffer" : "id", lower_col = newer ? "start" : "lower",
                         upper_col = newer ? "end" : "upper";
  if (newer) {
    csv.require_columns({"buffer", "start", "end", "size"});
    csv.allow_only_columns({"buffer", "start", "end", "size", "alignment", "offset"});
  } else {
    csv.require_columns({"id", "lower", "upper", "size"});
    csv.allow_only_columns({"id", "lower", "upper", "size", "alignment", "offset"});
  }
  std::vector<PlanBuffer> buffers;
  PlanInputCheck check({id_col, lower_col, upper_col});
  const auto column = [&](PlanField field) -> std::string_view {
    switch (field) {
      case PlanField::Id: return id_col;
      case PlanField::Lower: return lower_col;
      case PlanField::Upper: return upper_col;
      case PlanField::Size: return "size";
      case PlanField::Alignment: return "alignment";
    }
    return id_col;
  };
  const auto time = [&](std::string_view column) {
    const std::uint64_t v = csv.unsigned_field(column);
    if (v > static_cast<std::uint64_t>(INT64_MAX)) throw csv.error_at(column, fmt::format("{} {} is out of range", column, v));
    return static_cast<std::int64_t>(v);
  };
  while (csv.next_row()) {
    PlanBuffer b;
    b.id = csv.field(id_col);
    b.lower = time(lower_col);
    b.upper = time(upper_col);
    b.size = csv.unsigned_field("size");
    if (csv.has_value("alignment")) b.alignment = csv.unsigned_field("alignment");
    if (auto problem = check.add(b, fmt::format("on line {}", csv.line())))
      throw csv.error_at(column(problem->field), problem->message);
    buffers.push_back(std::move(b));
  }
  return buffers;
}

}  // namespace

std::vector<PlanBuffer> read_plan_csv(const std::filesystem::path& path) { return read_buffers(CsvReader::from_file(path)); }

std::vector<PlanBuffer> parse_plan_csv(std::string text, std::string source) {
  return read_buffers(CsvReader(std::move(text), std::move(source)));
}

std::string plan_csv_text(std::span<const PlanBuffer> buffers, std::span<const std::uint64_t> offsets) {
  if (offsets.size() != buffers.size()) {
    throw Error("plan CSV", fmt::format("{} offsets for {} buffers", offsets.size(), buffers.size()));
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
  return out;
}

void write_plan_csv(const std::filesystem::path& path, std::span<const PlanBuffer> buffers,
                    std::span<const std::uint64_t> offsets) {
  write_file_atomically(path, plan_csv_text(buffers, offsets));
}

}  // namespace tpuemu::plan
