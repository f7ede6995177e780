// The one reader of every text file a user hands in (presets, timing sets, workloads, programs,
// CSVs, traces): bounded in size and line length, so that /dev/zero, a runaway generator or a
// file without newlines is a one-line error naming the file and the limit, never an exhausted
// memory. Anything readable works, including pipes and /dev/stdin ("-" means standard input).
#pragma once

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
// Programs (.s): 64 MiB (two million instructions of text), lines of 64 KiB.
inline constexpr InputLimits kProgramInput{std::size_t{64} << 20, std::size_t{64} << 10, "program"};
// CSVs and traces: 1 GiB, lines of 64 KiB.
inline constexpr InputLimits kTableInput{std::size_t{1} << 30, std::size_t{64} << 10, "CSV or trace file"};

// Throws Error "<path>: cannot open: <errno text>", "<path>: larger than the 16 MiB limit of a JSON
// file" or "<path>:<line>: line longer than the 64 KiB limit of a program".
std::string read_input_file(const std::filesystem::path& path, const InputLimits& limits);

// "16 MiB", "64 KiB", "1 GiB", "100 B".
std::string limit_text(std::size_t bytes);

}  // namespace tpuemu
