// SPDX-License-Identifier: Apache-2.0
#include "hlo_artefacts.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/alloc/memory_space.h"
#include "tpuemu/profile/memory_map.h"
#include "tpuemu/profile/memory_profile.h"
#include "tpuemu/profile/report_html.h"

namespace tpuemu::cli {
namespace {

bool placed(const hlo::Placement& p, const hlo::BufferSet& set) {
  return !p.failure && p.offsets.size() == set.buffers.size();
}

// The model part a buffer belongs to, for the map's colours: its op_name path without the leading
// jit(...) wrappers and without the operation itself ("jit(f)/jit(main)/attn/softmax/exp" ->
// "attn/softmax"). Arguments are one group; an op at the top level is "(top level)".
std::string model_part(const hlo::LiveBuffer& b, const hlo::BufferDescription& d) {
  if (b.kind == hlo::BufferKind::Parameter) return "arguments";
  std::vector<std::string> parts = op_name_frames(d.op_name);  // leaf first
  if (!parts.empty()) parts.erase(parts.begin());
  std::reverse(parts.begin(), parts.end());
  std::size_t first = 0;
  while (first < parts.size() && (parts[first].starts_with("jit(") || parts[first].starts_with("pjit("))) ++first;
  std::string out;
  for (std::size_t i = first; i < parts.size(); ++i) out += (out.empty() ? "" : "/") + parts[i];
  return out.empty() ? "(top level)" : out;
}

std::string expansion(const hlo::LiveBuffer& b) {
  return b.unpadded == 0 ? "-" : fmt::format("{:.1f}x", static_cast<double>(b.bytes) / static_cast<double>(b.unpadded));
}

std::string detail(const hlo::LiveBuffer& b, const hlo::BufferDescription& description) {
  std::string d;
  if (!description.op_name.empty()) d += fmt::format("op_name {}\n", description.op_name);
  if (!description.source.empty()) d += fmt::format("source {}\n", description.source);
  d += fmt::format("shape {}\n", description.shape);
  d += fmt::format("{} padded, {} unpadded: padding {} ({} expansion)\n", alloc::format_bytes(b.bytes),
                   alloc::format_bytes(b.unpadded), alloc::format_bytes(b.bytes - std::min(b.bytes, b.unpadded)),
                   expansion(b));
  d += fmt::format("{}, live at positions {} - {}\n{}", hlo::buffer_kind_name(b.kind), b.start, b.end,
                   description.instruction);
  return d;
}

profile::MemoryMap memory_map(const hlo::Analysis& a) {
  const hlo::BufferSet& set = a.schedule.buffers;
  std::uint64_t capacity = std::max<std::uint64_t>(1, a.hbm_capacity.value_or(0));
  for (const hlo::Placement& p : a.placements) capacity = std::max(capacity, p.heap_bytes);
  profile::MemoryMap map;
  for (const hlo::Placement& p : a.placements) {
    profile::SpaceMap s;
    s.space = "hbm";
    s.policy = p.policy;
    s.capacity = capacity;
    s.end = static_cast<std::uint64_t>(set.positions);
    if (placed(p, set)) {
      for (std::size_t i = 0; i < set.buffers.size(); ++i) {
        const hlo::LiveBuffer& b = set.buffers[i];
        const hlo::BufferDescription d = set.describe(b);
        profile::MapBuffer m;
        m.id = fmt::format("b{}", i);
        m.name = b.name;
        m.layer = model_part(b, d);
        m.kind = std::string(hlo::buffer_kind_name(b.kind));
        m.offset = p.offsets[i];
        m.size = b.bytes;
        // A position is one instruction: the rectangle covers its last one too.
        m.start = static_cast<std::uint64_t>(b.start);
        m.end = static_cast<std::uint64_t>(b.end) + 1;
        m.detail = detail(b, d);
        s.buffers.push_back(std::move(m));
      }
    } else {
      s.failure = p.failure.value_or("no placement");
    }
    map.spaces.push_back(std::move(s));
  }
  return map;
}

// The heap of one placement at every schedule position, in the run's fragmentation.csv columns.
// The heap is the block the placement needs (its heap_bytes), reserved for the whole program as
// XLA reserves the program's temporary block: free bytes and holes are counted inside it.
std::vector<alloc::SpaceSnapshot> heap_samples(const hlo::BufferSet& set, const hlo::Placement& p) {
  std::vector<std::size_t> by_start(set.buffers.size());
  for (std::size_t i = 0; i < by_start.size(); ++i) by_start[i] = i;
  std::stable_sort(by_start.begin(), by_start.end(),
                   [&](std::size_t x, std::size_t y) { return set.buffers[x].start < set.buffers[y].start; });
  std::multimap<std::uint64_t, std::size_t> live;  // offset -> buffer
  std::vector<alloc::SpaceSnapshot> samples;
  samples.reserve(static_cast<std::size_t>(set.positions));
  std::size_t next = 0;
  std::uint64_t footprint = 0, live_bytes = 0, in_use = 0;
  for (std::int64_t pos = 0; pos < set.positions; ++pos) {
    for (auto it = live.begin(); it != live.end();) {
      const hlo::LiveBuffer& b = set.buffers[it->second];
      if (b.end >= pos) {
        ++it;
        continue;
      }
      live_bytes -= b.unpadded;
      in_use -= b.bytes;
      it = live.erase(it);
    }
    for (; next < by_start.size() && set.buffers[by_start[next]].start <= pos; ++next) {
      const std::size_t i = by_start[next];
      const hlo::LiveBuffer& b = set.buffers[i];
      if (b.end < pos) continue;
      live.emplace(p.offsets[i], i);
      live_bytes += b.unpadded;
      in_use += b.bytes;
      footprint = std::max(footprint, p.offsets[i] + b.bytes);
    }
    alloc::SpaceSnapshot s;
    s.time = static_cast<std::uint64_t>(pos);
    s.live_bytes = live_bytes;
    s.in_use_bytes = in_use;
    s.footprint_bytes = footprint;
    s.internal_waste_bytes = in_use - std::min(in_use, live_bytes);  // tile padding
    // The holes of [0, heap) between the live buffers (sorted by offset; overlaps merged).
    std::uint64_t cursor = 0, free = 0;
    double squares = 0;
    auto hole = [&](std::uint64_t gap) {
      if (gap == 0) return;
      free += gap;
      ++s.free_blocks;
      s.largest_free_block = std::max(s.largest_free_block, gap);
      squares += static_cast<double>(gap) * static_cast<double>(gap);
    };
    for (const auto& [offset, i] : live) {
      if (offset > cursor) hole(offset - cursor);
      cursor = std::max(cursor, offset + set.buffers[i].bytes);
    }
    if (p.heap_bytes > cursor) hole(p.heap_bytes - cursor);
    s.free_bytes = free;
    if (free > 0) {
      s.external_fragmentation = 1.0 - static_cast<double>(s.largest_free_block) / static_cast<double>(free);
      s.gap_square_ratio = squares / (static_cast<double>(free) * static_cast<double>(free));
    }
    samples.push_back(s);
  }
  return samples;
}

std::vector<std::int64_t> live_at(const hlo::BufferSet& set, std::int64_t pos) {
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < set.buffers.size(); ++i) {
    if (set.buffers[i].start <= pos && pos <= set.buffers[i].end) out.push_back(static_cast<std::int64_t>(i));
  }
  // Largest first, as XProf's table opens.
  std::stable_sort(out.begin(), out.end(), [&](std::int64_t x, std::int64_t y) {
    return set.buffers[static_cast<std::size_t>(x)].bytes > set.buffers[static_cast<std::size_t>(y)].bytes;
  });
  return out;
}

profile::SortableTable peak_table(const hlo::BufferSet& set, std::int64_t peak, const std::vector<std::int64_t>& at_peak) {
  profile::SortableTable t;
  t.id = "buffers-at-peak";
  t.title = "Buffers at peak";
  t.note = fmt::format("The {} buffers live at schedule position {}, where the most bytes are live. Click a heading to sort "
                       "(by size, by padding, ...).",
                       at_peak.size(), peak);
  t.columns = {"#", "buffer", "size", "unpadded", "padding", "expansion", "shape", "op_name", "source", "allocation type", "live"};
  std::size_t rank = 0;
  for (const std::int64_t index : at_peak) {
    const hlo::LiveBuffer& b = set.buffers[static_cast<std::size_t>(index)];
    const hlo::BufferDescription d = set.describe(b);
    const std::uint64_t padding = b.bytes - std::min(b.bytes, b.unpadded);
    const double factor = b.unpadded == 0 ? 0 : static_cast<double>(b.bytes) / static_cast<double>(b.unpadded);
    auto bytes = [](std::uint64_t n) {
      return profile::TableCell{fmt::format("{} ({} B)", alloc::format_bytes(n), n), static_cast<double>(n)};
    };
    t.rows.push_back({{fmt::format("{}", ++rank), static_cast<double>(rank)},
                      {b.name, std::nullopt},
                      bytes(b.bytes),
                      bytes(b.unpadded),
                      bytes(padding),
                      {expansion(b), factor},
                      {d.shape, std::nullopt},
                      {d.op_name, std::nullopt},
                      {d.source, std::nullopt},
                      {std::string(hlo::buffer_kind_name(b.kind)), std::nullopt},
                      {fmt::format("{} - {}", b.start, b.end), static_cast<double>(b.end - b.start + 1)}});
  }
  return t;
}

std::string peak_profile(const hlo::Analysis& a, std::int64_t peak, const std::vector<std::int64_t>& at_peak) {
  const hlo::BufferSet& set = a.schedule.buffers;
  std::vector<profile::StackSample> samples;
  std::uint64_t total = 0;
  for (const std::int64_t index : at_peak) {
    const hlo::LiveBuffer& b = set.buffers[static_cast<std::size_t>(index)];
    const hlo::BufferDescription d = set.describe(b);
    profile::StackSample s;
    // The buffer's instruction is the leaf, under its op_name path; no op_name: the computation.
    s.frames = op_name_frames(d.op_name);
    if (s.frames.empty()) s.frames = {d.computation.empty() ? a.module : d.computation};
    s.frames.insert(s.frames.begin(), b.name);
    s.bytes = b.bytes;
    s.labels = {{"space", "hbm"}, {"buffer", b.name}, {"kind", std::string(hlo::buffer_kind_name(b.kind))},
                {"shape", d.shape}, {"op_name", d.op_name}};
    if (!d.source.empty()) s.labels.emplace_back("source", d.source);
    s.numbers = {{"unpadded", static_cast<std::int64_t>(b.unpadded), "bytes"},
                 {"padding", static_cast<std::int64_t>(b.bytes - std::min(b.bytes, b.unpadded)), "bytes"},
                 {"start", b.start, "positions"},
                 {"end", b.end, "positions"}};
    total += b.bytes;
    samples.push_back(std::move(s));
  }
  return profile::stack_profile(samples, fmt::format("tpuemu HLO module {} at schedule position {} of {} ({} schedule): {} "
                                                     "live bytes, padded",
                                                     a.module, peak, set.positions, a.schedule.name, total));
}

}  // namespace

std::vector<std::string> op_name_frames(const std::string& op_name) {
  std::vector<std::string> frames;
  std::size_t from = 0;
  while (from <= op_name.size()) {
    std::size_t slash = op_name.find('/', from);
    if (slash == std::string::npos) slash = op_name.size();
    if (slash > from) frames.push_back(op_name.substr(from, slash - from));
    from = slash + 1;
  }
  std::reverse(frames.begin(), frames.end());
  return frames;
}

void write_hlo_artefacts(CommandOutputs& out, const std::filesystem::path& dir, const hlo::Analysis& a,
                         const std::string& summary_text) {
  const hlo::BufferSet& set = a.schedule.buffers;
  const hlo::PeakLive peak_live = hlo::peak_live(set);
  const std::int64_t peak = peak_live.position;
  const std::vector<std::int64_t> at_peak = live_at(set, peak);

  std::string fragmentation = alloc::samples_csv_header();
  for (const hlo::Placement& p : a.placements) {
    if (placed(p, set)) fragmentation += alloc::samples_csv_rows("hbm", p.policy, heap_samples(set, p));
  }

  profile::MapPage page;
  page.title = fmt::format("tpuemu run: HLO module {}", a.module);
  page.time_unit = "schedule position";
  page.summary = {{"program", a.source},
                  {"instructions", fmt::format("{} ({} in ENTRY)", a.instructions, a.entry_instructions)},
                  {"schedule", a.schedule.name},
                  {"layout", a.sizes.tiled ? fmt::format("TPU tiles, {} lanes", a.sizes.lanes) : "untiled (dense)"},
                  {"peak live", fmt::format("{} padded, {} unpadded, at position {} of {}",
                                            alloc::format_bytes(peak_live.bytes),
                                            alloc::format_bytes(peak_live.unpadded), peak, set.positions)}};
  for (const hlo::Placement& p : a.placements) {
    page.summary.emplace_back(
        fmt::format("heap, {}", p.policy),
        p.failure ? fmt::format("failed: {}", *p.failure)
                  : fmt::format("{} ({} B), fragmentation {:.1f}%, padding {}", alloc::format_bytes(p.heap_bytes),
                                p.heap_bytes, 100 * p.fragmentation, alloc::format_bytes(p.padding_bytes)));
  }
  page.map_note =
      "Each rectangle is a buffer, named by its instruction: x is its live range in schedule positions (one position "
      "an instruction), y its offset in the heap each policy placed it at. The hatched background is free memory. "
      "Hover a buffer for its op_name, source line, shape and padding; every policy's map shares both axes.";
  page.map = memory_map(a);
  page.tables.push_back(peak_table(set, peak, at_peak));
  page.fragmentation = {(dir / "fragmentation.csv").string(), fragmentation};
  const std::string report = profile::memory_map_page(page);
  const std::string memory = peak_profile(a, peak, at_peak);

  out.file_in(dir, "summary.json", summary_text);
  out.file_in(dir, "fragmentation.csv", std::move(fragmentation));
  out.file_in(dir, "memory.pb.gz", memory);
  out.file_in(dir, "report.html", report);
}

}  // namespace tpuemu::cli
