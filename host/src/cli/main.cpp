// SPDX-License-Identifier: Apache-2.0
// The tpuemu command line (docs/cli.md): one subcommand per file (cmd_*.cpp), shared options and
// validators in cli_common.h. main() parses, dispatches and turns every failure into one line on
// stderr (and, under --json, a JSON error object on stdout) with the documented exit code.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.h"
#include "progress.h"
#include "tpuemu/base/atomic_file.h"
#include "tpuemu/run/runner.h"
#include "tpuemu/base/error.h"
#include "tpuemu/base/text.h"

#ifndef TPUEMU_VERSION
#error "TPUEMU_VERSION comes from the project version (host/src/cli/CMakeLists.txt)"
#endif

namespace {

using namespace tpuemu;
using namespace tpuemu::cli;

// The error line on stderr, and under --json the same as {"error": {...}} on stdout, so that a
// script reading stdout always gets JSON.
int fail(const std::string& message, int code, bool json) {
  // Under mpirun every rank meets the same bad input: rank 0 alone says so.
  if (const char* rank = std::getenv("OMPI_COMM_WORLD_RANK"); rank != nullptr && std::string_view(rank) != "0") return code;
  // CLI11's messages may span lines (joined here); any other control character, such as an escape
  // sequence in a name, is shown escaped (an Error's message already is).
  std::string joined = message;
  std::replace_if(joined.begin(), joined.end(), [](char ch) { return ch == '\n' || ch == '\r'; }, ' ');
  const std::string line = printable(joined);
  if (json) {
    try {
      write_file_atomically("-", json_text({{"error", {{"message", line}, {"exit_code", code}}}}));
    } catch (const Error&) {
      // stdout is gone as well; the line on stderr below still says what failed
    }
  }
  InterruptGuard::outcome_reported();
  std::fprintf(stderr, "tpuemu: error: %s\n", line.c_str());
  return code;
}

// Everything printed must have reached stdout: a full disk or a closed pipe is an error (no JSON
// error object then: stdout is what failed).
int check_stdout(int code) {
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    const int err = errno;
    return fail(fmt::format("standard output: write failed: {}", std::strerror(err)), kExitError, false);
  }
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  // Ctrl-C from the first instruction on is noted, not fatal: a command checks it before it
  // publishes anything (outputs.h), so a signal during start-up still ends in one line, exit 130.
  const InterruptGuard interrupt(/*restore=*/false);
  CLI::App app{"tpuemu: a cycle-accurate emulator of a TPU-like accelerator's memory system"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tpuemu " TPUEMU_VERSION);
  app.option_defaults()->always_capture_default();  // --help shows every default
  app.formatter(std::make_shared<CLI::Formatter>());
  app.get_formatter()->column_width(34);

  std::vector<Subcommand> commands;
  commands.push_back(add_run_command(app));
  commands.push_back(add_analyze_command(app));
  commands.push_back(add_exec_command(app));
  commands.push_back(add_info_command(app));
  commands.push_back(add_hbm_command(app));
  commands.push_back(add_plan_command(app));
  commands.push_back(add_replay_command(app));
  commands.push_back(add_trace_command(app));
  commands.push_back(add_report_command(app));
  commands.push_back(add_serve_command(app));
  commands.push_back(add_sweep_command(app));
  commands.push_back(add_core_command(app));
  for (const Subcommand& c : commands) refuse_empty_values(*c.command);

  // Whether the chosen subcommand asked for JSON, known even when parsing fails part-way.
  auto json_requested = [&] {
    for (const Subcommand& c : commands) {
      if (c.command->parsed() && c.common != nullptr && c.common->json) return true;
    }
    for (int i = 1; i < argc; ++i) {
      if (std::string_view(argv[i]) == "--json") return true;
    }
    return false;
  };

  // The first word that is not an option names the subcommand; CLI11 would call an unknown one
  // "arguments not expected".
  if (argc > 1 && argv[1][0] != '-') {
    const std::string_view word = argv[1];
    std::string known;
    bool found = false;
    for (const Subcommand& c : commands) {
      found = found || c.command->get_name() == word;
      known += (known.empty() ? "" : ", ") + c.command->get_name();
    }
    if (!found) return fail(fmt::format("unknown subcommand '{}' (the subcommands: {})", word, known), kExitUsage, json_requested());
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return check_stdout(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return check_stdout(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return check_stdout(app.exit(e));
  } catch (const CLI::ParseError& e) {
    return fail(e.what(), kExitUsage, json_requested());
  }

  const bool json = json_requested();
  int code = kExitUsage;
  try {
    for (const Subcommand& c : commands) {
      if (c.command->parsed()) {
        code = c.run();
        break;
      }
    }
  } catch (const UsageError& e) {
    return fail(e.what(), kExitUsage, json);
  } catch (const Interrupted& e) {
    return fail(e.what(), kExitInterrupted, json);
  } catch (const SilentExit& e) {
    return e.code();
  } catch (const std::exception& e) {
    return fail(e.what(), kExitError, json);
  }
  InterruptGuard::outcome_reported();
  return check_stdout(code);
}
