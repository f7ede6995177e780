// SPDX-License-Identifier: Apache-2.0
// The one reader of every text file a user hands in (presets, timing sets, workloads, programs,
// CSVs, traces): bounded in size and line length, so that /dev/zero, a runaway generator or a
// file without newlines is a one-line error naming the file and the limit, never an exhausted
// memory. Anything readable works, including pipes and /dev/stdin ("-" means standard input); a
// named pipe (FIFO) no process opens for writing within kFifoWriterWait is an error, not a hang.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace tpuemu {

struct InputLimits {
  std::size_t max_bytes;       // the whole file
  std::size_t max_line_bytes;  // one line, without its newline
  std::string_view what;       // "workload file", "allocation trace": named in the error
};

// Configuration-sized JSON (presets, timing sets, workloads, models): 16 MiB, lines of 1 MiB.
inline constexpr InputLimits kJsonInput{std::size_t{16} << 20, std::size_t{1} << 20, "JSON file"};
// A Chrome/Perfetto trace (trace.json of run -o DIR): one compact line that grows with the run,
// so bounded as a whole only: 256 MiB.
inline constexpr InputLimits kTraceJsonInput{std::size_t{256} << 20, std::size_t{256} << 20, "trace JSON file"};
// Programs (.s): 64 MiB (two million instructions of text), lines of 64 KiB.
inline constexpr InputLimits kProgramInput{std::size_t{64} << 20, std::size_t{64} << 10, "program"};
// CSVs and traces: 1 GiB, lines of 64 KiB.
inline constexpr InputLimits kTableInput{std::size_t{1} << 30, std::size_t{64} << 10, "CSV or trace file"};

// How long a FIFO given as an input waits for its first writer: long enough for a writer started
// beside tpuemu (`cat m.json > fifo & tpuemu run fifo`), short enough that a forgotten one fails.
inline constexpr std::chrono::seconds kFifoWriterWait{5};

// Throws Error "<path>: cannot open: <errno text>", "<path>: no process opened the FIFO for writing
// within 5 s", "<path>: larger than the 16 MiB limit of a JSON
// file" or "<path>:<line>: line longer than the 64 KiB limit of a program".
std::string read_input_file(const std::filesystem::path& path, const InputLimits& limits);

// Throws the error read_input_file would for `text` over `limits`: for text read once under wider
// limits (standard input holding a workload of a kind known only once read) then held to its
// kind's.
void check_input_limits(std::string_view text, const std::string& name, const InputLimits& limits);

// "16 MiB", "64 KiB", "1 GiB", "100 B".
std::string limit_text(std::size_t bytes);

}  // namespace tpuemu
