// SPDX-License-Identifier: Apache-2.0
// What every tpuemu subcommand shares (docs/cli.md): the options --json, --quiet and -o/--out,
// validators that reject what CLI11 would otherwise wrap or round (negative or too large unsigned
// numbers, non-finite numbers, byte counts), usage errors (exit 2) and checked output on stdout.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "tpuemu/base/error.h"

namespace tpuemu::cli {

inline constexpr int kExitError = 1;     // one-line error on stderr (data, files, the device)
inline constexpr int kExitUsage = 2;     // bad command line
inline constexpr int kExitMismatch = 3;  // ran, but the result is wrong
inline constexpr int kExitTimeout = 4;   // gave up in time (plan --timeout), best effort written
inline constexpr int kExitInterrupted = 130;  // Ctrl-C / SIGTERM: stopped cleanly, nothing written (128 + SIGINT)

// A command line that cannot be acted on as given: main prints it like any Error, exits 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

// This process's failure is reported by another (rank 0 of an MPI run): main exits with `code`
// and prints nothing.
class SilentExit : public std::exception {
 public:
  explicit SilentExit(int code) : code_(code) {}
  int code() const { return code_; }
  const char* what() const noexcept override { return "reported by MPI rank 0"; }

 private:
  int code_;
};

// The options of every subcommand. out: the command's file product (docs/cli.md), "-" = stdout.
struct CommonOptions {
  bool json = false;
  bool quiet = false;
  std::string out;
};
// Adds --json, --quiet and, when out_help is not empty, -o/--out (out_names) to cmd.
void add_common_options(CLI::App* cmd, CommonOptions& options, std::string_view json_help,
                        std::string_view out_help, std::string out_names = "-o,--out");

// A decimal integer in [min, max], digits only (no sign, no exponent, no wrap-around).
CLI::Validator unsigned_in(std::uint64_t min, std::uint64_t max, std::string name = "");
inline CLI::Validator any_unsigned() { return unsigned_in(0, std::numeric_limits<std::uint64_t>::max()); }
// A finite number in [min, max] (no nan, no inf); the message shows the bounds readably.
CLI::Validator finite_in(double min, double max);
// A byte count: 65536, 64KiB, 16MiB, 1GiB (alloc::parse_bytes), larger than zero and a multiple
// of `multiple`.
CLI::Validator byte_count(std::uint64_t multiple = 1);

// An input file that exists, or "-" for standard input.
CLI::Validator input_file();

// The validators below make every malformed option value a usage error (exit 2) when the command
// line is parsed, before anything is read or run (docs/cli.md, "Inputs").
// One of `names` (the message lists them).
CLI::Validator one_of(std::vector<std::string> names, std::string type_name = "NAME");
// A comma-separated list: no empty item ("1,,2"), each passing `item`; with `distinct`, no item
// twice ("bfc,bfc": a set, where a repeated item would be ignored).
enum class ListItems { Distinct, MayRepeat };
CLI::Validator list_of(CLI::Validator item, ListItems items, std::string type_name = "LIST");
// The items of a list list_of has checked.
std::vector<std::string> split_list(std::string_view text);
// Text that `parse` accepts; the cause of the Error it throws is the message.
CLI::Validator parsed_by(std::function<void(const std::string&)> parse, std::string type_name);
// Every option of cmd that takes a value refuses an empty one ("--space ''", "--report ''"), which
// would otherwise read as the option not given. main applies it to every subcommand.
void refuse_empty_values(CLI::App& cmd);

// The JSON text of every JSON the CLI prints or writes: indented, and bytes that are not UTF-8
// (file names, owners) replaced by U+FFFD instead of an exception.
enum class JsonStyle { Indented, Compact };
std::string json_text(const nlohmann::json& j, JsonStyle style = JsonStyle::Indented);

// Writes text to stdout and checks it (Error "standard output: write failed: ..."), unless quiet;
// control characters other than newlines are written escaped (printable_lines).
void print(const CommonOptions& options, std::string_view text);

}  // namespace tpuemu::cli
