// SPDX-License-Identifier: Apache-2.0
// Layer hlo: the buffers of a program on one schedule, as the placement policies see them. The
// liveness analysis (liveness.h) makes them from a Module; the policies (placement.h) place them.
// Keeping this the only meeting point lets every policy run on buffers from any source.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tpuemu::hlo {

enum class BufferKind : std::uint8_t { Temp, Parameter, Output, Constant };
std::string_view buffer_kind_name(BufferKind kind);  // "HLO temp", "parameter", "output", "constant"

// Where a buffer's source defined it, for its description: the value that names it (its
// earliest), as indices into the source's own tables (for live_buffers(): Module::computations,
// Computation::instructions, the depth-first array leaf or kIndexTableLeaf, and how many copies
// of that value it is). Plain numbers: a buffer stays small, and copies of it carry them along.
struct BufferOrigin {
  static constexpr std::uint32_t kNone = 0xffffffffu;
  static constexpr std::int32_t kIndexTableLeaf = -1;
  std::uint32_t computation = kNone;  // kNone: a buffer made without a source
  std::uint32_t instruction = 0;
  std::int32_t leaf = 0;
  std::uint32_t copies = 0;
};

// One logical buffer: live over schedule positions [start, end] (both inclusive; a position is
// one instruction of the flattened schedule). What a user recognises it by beyond its name is made
// on demand by its set (BufferSet::describe): a module of millions of instructions has millions
// of buffers, and their descriptions, kept, would outweigh the module.
struct LiveBuffer {
  std::string name;            // the defining instruction, with the tuple index for elements: "p.1{1}"
  std::uint64_t bytes = 0;     // as stored: padded to the layout's tiles
  std::uint64_t unpadded = 0;  // the shape's bytes without padding
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::int64_t memory_space = 0;  // the layout's S(n): 0 is HBM, 1 the TPU's VMEM
  BufferOrigin origin;
  BufferKind kind = BufferKind::Temp;
  bool whole_program = false;  // live from the first to the last position (ENTRY parameters, ...)
  bool shares_argument = false;  // an output that is a donated argument's buffer (input_output_alias)
};

// For reports: what a user recognises a buffer by.
struct BufferDescription {
  std::string shape;        // with its tiled layout: "bf16[512,1024]{1,0:T(8,128)(2,1)}"
  std::string op_name;      // metadata op_name
  std::string source;       // "file.py:12", or empty
  std::string instruction;  // the HLO instruction, shortened
  std::string computation;  // the computation that defines it
};

// Makes descriptions from a buffer's origin. live_buffers() gives its sets one that reads the
// Module: the module must outlive every describe() call on the set (the set's numbers do not
// need it).
class BufferDescriber {
 public:
  virtual ~BufferDescriber() = default;
  virtual BufferDescription describe(const LiveBuffer& buffer) const = 0;
};

// The buffers of one schedule and its length (positions 0 .. positions-1).
struct BufferSet {
  std::vector<LiveBuffer> buffers;
  std::int64_t positions = 0;
  std::shared_ptr<const BufferDescriber> describer;  // null: every description empty

  // `buffer`'s description (one of `buffers`, or a copy of one).
  BufferDescription describe(const LiveBuffer& buffer) const {
    return describer ? describer->describe(buffer) : BufferDescription{};
  }
};

// The most bytes live at once, from one sweep over the positions (the only one: every report and
// policy takes its peak from here). Sums run in 128 bits; a figure beyond 64 bits is reported as
// 2^64-1. A buffer's range is clamped into the schedule (a start before 0 counts from 0).
struct PeakLive {
  std::uint64_t bytes = 0;             // padded
  std::int64_t position = 0;           // the first position where the padded live bytes are `bytes`
  std::uint64_t unpadded_at_peak = 0;  // the unpadded bytes of the buffers live at `position`
  std::uint64_t unpadded = 0;          // the most unpadded bytes live at once (at any position)
};
// `counted`: only the buffers it accepts are summed (empty: all of them).
using BufferFilter = std::function<bool(const LiveBuffer&)>;
PeakLive peak_live(const BufferSet& set, const BufferFilter& counted = {});
// One figure of peak_live, for callers that need no other (one sweep instead of two).
std::uint64_t peak_live_bytes(const BufferSet& set);
std::uint64_t peak_live_unpadded_bytes(const BufferSet& set);

}  // namespace tpuemu::hlo
