// SPDX-License-Identifier: Apache-2.0
// Every output of one command published together or not at all (docs/cli.md, "Outputs").
//
// A command's outputs - its -o file or folder, side files such as --report, the text for stdout -
// are added to one transaction as they are made. Nothing the user can see changes before commit():
// - a regular file (or a new name) is written whole under a temporary name beside its target
//   (by the rules of write_file_atomically: links followed, mode and owner kept, read-only refused);
// - a file in a folder that does not exist yet goes into a staging folder beside it, which commit
//   renames into place, so the folder appears whole;
// - standard output ("-", /dev/stdout), devices and FIFOs cannot be staged: their contents wait in
//   memory and are written by commit, in the order they were added, before any rename.
// commit() renames every staged file into place; a transaction destroyed without commit - any
// error, an interruption - removes every temporary file and every folder it created, so nothing
// new remains. Refused before anything is written: an output that is the same file as an input of
// the command (same device and inode, whatever the path: links, "..", hard links) or as another
// output, and a directory where a file is to go.
//
// Signals: every temporary name is also kept in a table a signal handler can read, so that a
// handler about to end the process (a second Ctrl-C) removes them with discard_staged_outputs().
// While commit() renames (microseconds; nothing there blocks) a handler must not discard: it
// asks publishing_outputs() and leaves the end to the command.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tpuemu/base/error.h"

namespace tpuemu {

// An output that would replace an input, or an output named twice: the command line is at fault.
class OutputConflict : public Error {
 public:
  using Error::Error;
};

class OutputTransaction {
 public:
  // check: called before each file is staged and once more before commit() writes anything; it
  // throws to abandon the transaction (the CLI's Ctrl-C check).
  explicit OutputTransaction(std::function<void()> check = {});
  ~OutputTransaction();
  OutputTransaction(const OutputTransaction&) = delete;
  OutputTransaction& operator=(const OutputTransaction&) = delete;

  // A file the command reads ("-" is ignored): no output may be the same file. what names it in
  // the error ("the workload", "--preset").
  void add_input(const std::filesystem::path& path, std::string what = "an input");

  // Checks an output before the work that makes it, so that a long run does not end in a refusal:
  // OutputConflict for an input or an output named twice, Error for a directory in the way. The
  // same checks run again when the file is added. what: the option, for the message.
  void check_output(const std::filesystem::path& path, std::string_view what);
  // The same for a folder output and the names the command will write into it.
  void check_output_folder(const std::filesystem::path& dir, const std::vector<std::string>& names,
                           std::string_view what);

  // Stages path ("-" is standard output) with these contents.
  void add_file(const std::filesystem::path& path, std::string contents);
  // Stages dir/name; dir is created at commit when it does not exist (empty dir: the current one).
  void add_file_in(const std::filesystem::path& dir, const std::string& name, std::string contents);
  // A file another writer makes while the command runs (the simulator's FST waveform): returns
  // the name to give that writer - a temporary beside path, renamed over it at commit - or path
  // itself for a device or FIFO, which are written through.
  std::filesystem::path add_produced_file(const std::filesystem::path& path);
  // Text for standard output, written at commit before any file is renamed into place.
  void add_stdout(std::string text);

  // Runs check, writes the outputs that cannot be staged (in order), then renames every staged
  // file and folder into place. A failure before the renames leaves nothing new; after commit the
  // transaction is empty and may be destroyed.
  void commit();
  bool committed() const;

  // Async-signal-safe. Removes the temporary files and staging folders of every live transaction
  // (for a handler that then ends the process) and returns how many it removed.
  static int discard_staged_outputs() noexcept;
  // Async-signal-safe. True while some commit() renames files into place.
  static bool publishing_outputs() noexcept;

 private:
  void publish();
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tpuemu
