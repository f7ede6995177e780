// Subcommands of the tpuemu CLI that live in their own files (cmd_*.cpp). Each registers its
// options on the app and returns the action main() runs when it was chosen.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace tpuemu::cli {

inline constexpr int kExitError = 1;     // one-line error on stderr
inline constexpr int kExitUsage = 2;     // bad command line
inline constexpr int kExitMismatch = 3;  // ran, but the result is wrong
inline constexpr int kExitTimeout = 4;   // gave up in time (plan --timeout), best effort written

struct Subcommand {
  CLI::App* command = nullptr;
  std::function<int()> run;  // throws Error (printed as one line, exit 1)
};

Subcommand add_replay_command(CLI::App& app);  // cmd_replay.cpp
Subcommand add_trace_command(CLI::App& app);   // cmd_trace.cpp
Subcommand add_plan_command(CLI::App& app);    // cmd_plan.cpp

}  // namespace tpuemu::cli
