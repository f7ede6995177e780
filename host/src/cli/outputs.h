// SPDX-License-Identifier: Apache-2.0
// The outputs of one tpuemu command as one transaction (docs/cli.md, "Outputs"): every file,
// folder and the text for stdout are staged while the command works and published together by
// commit(), or not at all - on an error, on Ctrl-C or SIGTERM (exit 130), on an output that names
// an input. The command's stdout rules live here too: -q prints nothing, and with --json stdout
// is the result's JSON, so no output may be "-" beside it.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cli_common.h"
#include "progress.h"
#include "tpuemu/base/output_transaction.h"
#include "tpuemu/base/stop.h"

namespace tpuemu::cli {

class CommandOutputs {
 public:
  // Installs the Ctrl-C handling (InterruptGuard) for the whole command.
  explicit CommandOutputs(const CommonOptions& common);
  CommandOutputs(const CommandOutputs&) = delete;
  CommandOutputs& operator=(const CommandOutputs&) = delete;

  // A file the command reads: no output may be the same file (exit 2). "-" and "" are ignored.
  void input(const std::string& path, std::string what = "an input");

  // Before the work: an output file (option: its option, for messages) that is an input, named
  // twice, a directory, or "-" beside --json is refused now rather than after a long run.
  void check(const std::string& path, std::string_view option);
  void check_folder(const std::string& dir, const std::vector<std::string>& names, std::string_view option);

  void file(const std::string& path, std::string contents);
  void file_in(const std::filesystem::path& dir, const std::string& name, std::string contents);
  // A file the simulator writes itself while running (--wave): the name to give it.
  std::string produced(const std::string& path);
  // Outputs a lower layer stages itself (sweep's folder).
  void stage(const std::function<void(OutputTransaction&)>& f);
  // The command's printout on stdout (nothing with -q).
  void print(std::string text);

  // Publishes everything. A signal that came while publishing still ends the command with exit
  // 130, saying that every output was written.
  void commit();

  bool interrupted() const { return guard_.interrupted(); }
  // The stop request every long loop of the command's work polls (a lock-free load of the flag).
  StopToken stop_token() const {
    return StopToken([this] { return interrupted(); });
  }

 private:
  const CommonOptions& common_;
  InterruptGuard guard_;
  OutputTransaction tx_;
};

}  // namespace tpuemu::cli
