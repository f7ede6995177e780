// SPDX-License-Identifier: Apache-2.0
// Subcommands of the tpuemu CLI that live in their own files (cmd_*.cpp). Each registers its
// options on the app and returns the action main() runs when it was chosen.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "cli_common.h"

namespace tpuemu::cli {

struct Subcommand {
  CLI::App* command = nullptr;
  std::function<int()> run;  // throws Error (one line, exit 1) or UsageError (exit 2)
  const CommonOptions* common = nullptr;  // its --json/--quiet/-o (errors under --json are JSON too)
};

Subcommand add_run_command(CLI::App& app);      // cmd_run.cpp
Subcommand add_analyze_command(CLI::App& app);  // cmd_analyze.cpp
Subcommand add_exec_command(CLI::App& app);     // cmd_exec.cpp
Subcommand add_info_command(CLI::App& app);     // cmd_info.cpp
Subcommand add_hbm_command(CLI::App& app);      // cmd_hbm.cpp
Subcommand add_replay_command(CLI::App& app);   // cmd_replay.cpp
Subcommand add_trace_command(CLI::App& app);    // cmd_trace.cpp
Subcommand add_plan_command(CLI::App& app);     // cmd_plan.cpp
Subcommand add_report_command(CLI::App& app);   // cmd_report.cpp
Subcommand add_serve_command(CLI::App& app);    // cmd_serve.cpp
Subcommand add_sweep_command(CLI::App& app);    // cmd_sweep.cpp
Subcommand add_core_command(CLI::App& app);     // cmd_core.cpp

}  // namespace tpuemu::cli
