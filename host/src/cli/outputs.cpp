// SPDX-License-Identifier: Apache-2.0
#include "outputs.h"

#include <fmt/format.h>

#include "tpuemu/base/text.h"
#include "tpuemu/run/runner.h"

namespace tpuemu::cli {

namespace {

// An output that names an input (or another output) is a command line that cannot be acted on.
template <typename F>
void usage_on_conflict(F&& f) {
  try {
    f();
  } catch (const OutputConflict& e) {
    throw UsageError(e.what());
  }
}

}  // namespace

CommandOutputs::CommandOutputs(const CommonOptions& common)
    : common_(common), tx_([this] {
        if (guard_.interrupted()) throw Interrupted("interrupted; nothing was written");
      }) {}

void CommandOutputs::input(const std::string& path, std::string what) { tx_.add_input(path, std::move(what)); }

void CommandOutputs::check(const std::string& path, std::string_view option) {
  if (path.empty()) return;
  if (path == "-" && common_.json) {
    throw UsageError(fmt::format("{} -", option),
                     "- is standard output, where --json prints the result: name a file (two documents on stdout "
                     "would not parse)");
  }
  usage_on_conflict([&] { tx_.check_output(path, option); });
}

void CommandOutputs::check_folder(const std::string& dir, const std::vector<std::string>& names, std::string_view option) {
  if (dir.empty()) return;
  usage_on_conflict([&] { tx_.check_output_folder(dir, names, option); });
}

void CommandOutputs::file(const std::string& path, std::string contents) {
  usage_on_conflict([&] { tx_.add_file(path, std::move(contents)); });
}

void CommandOutputs::file_in(const std::filesystem::path& dir, const std::string& name, std::string contents) {
  usage_on_conflict([&] { tx_.add_file_in(dir, name, std::move(contents)); });
}

std::string CommandOutputs::produced(const std::string& path) {
  if (path.empty()) return path;
  std::string name;
  usage_on_conflict([&] { name = tx_.add_produced_file(path).string(); });
  return name;
}

void CommandOutputs::stage(const std::function<void(OutputTransaction&)>& f) {
  usage_on_conflict([&] { f(tx_); });
}

void CommandOutputs::print(std::string text) {
  // Names in a report (a layer, a workload, an owner) may hold control characters: shown escaped,
  // never sent to the terminal (cli::print's rule; JSON escapes them itself, its newlines stay).
  if (!common_.quiet) tx_.add_stdout(printable_lines(text));
}

void CommandOutputs::commit() {
  tx_.commit();
  guard_.outputs_published();
  if (guard_.interrupted()) throw Interrupted("interrupted while the outputs were published; every output was written");
}

}  // namespace tpuemu::cli
