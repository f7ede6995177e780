// SPDX-License-Identifier: Apache-2.0
// tpuemu exec: a hand-written program (.s, docs/assembly.md) assembled, checked and run on a
// backend; prints the run's status and counters.
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "outputs.h"
#include "tpuemu/config/config.h"
#include "tpuemu/device/device.h"
#include "tpuemu/program/program.h"

namespace tpuemu::cli {

namespace {

struct ExecArgs {
  CommonOptions common;
  std::string program_file;
  std::string preset = "default";
  std::string backend = "rtl";
  bool no_build = false;  // rtl backend: refuse a preset whose core is not built yet
  std::uint64_t max_cycles = 100'000'000;
};

int run_exec(const ExecArgs& a) {
  CommandOutputs out(a.common);
  out.input(a.program_file, "the program");
  if (std::filesystem::is_regular_file(a.preset)) out.input(a.preset, "the --preset file");
  out.check(a.common.out, "-o");
  const Preset preset = load_preset(a.preset);
  const SourceProgram source = assemble_source_file(a.program_file);
  const Program& program = source.program;
  // "prog.s:7: instruction 3 (dma): ...": the check names the line of the .s file.
  if (const auto problems = check_program(source, preset); !problems.empty()) throw Error(problems.front());
  DeviceOptions device_options;
  device_options.build_missing_core = !a.no_build;
  device_options.preset_argument = a.preset;
  device_options.stop = out.stop_token();  // a core built on first use stops on Ctrl-C too
  auto device = open_device(a.backend, preset, device_options);
  constexpr std::uint64_t kProgramAddr = 0;
  device->load_program(kProgramAddr, program.to_bytes());
  RunOptions options;
  options.max_cycles = a.max_cycles;
  options.stop = out.stop_token();
  const RunResult result = device->run(options);  // throws RunError on deadlock, error, timeout
  const Counters c = device->counters();
  const auto values = c.to_array();
  nlohmann::json j = {{"program", a.program_file}, {"status", std::string(to_string(result.status))},
                      {"cycles", result.cycles}};
  for (std::size_t i = 0; i < Counters::kCount; ++i) j["counters"][std::string(Counters::name(i))] = values[i];
  if (!a.common.out.empty()) out.file(a.common.out, json_text(j));
  if (a.common.json) {
    out.print(json_text(j));
  } else {
    std::string text = fmt::format("{}: {} after {} cycles\n", a.program_file, to_string(result.status), result.cycles);
    for (std::size_t i = 0; i < Counters::kCount; ++i) text += fmt::format("  {:<28} {}\n", Counters::name(i), values[i]);
    out.print(text);
  }
  out.commit();
  return 0;
}

}  // namespace

Subcommand add_exec_command(CLI::App& app) {
  auto a = std::make_shared<ExecArgs>();
  auto* cmd = app.add_subcommand("exec", "Assemble a program (.s, docs/assembly.md) and run it on a backend");
  cmd->add_option("program", a->program_file, "Assembly file (examples/programs/*.s)")->required()->check(input_file());
  cmd->add_option("--preset", a->preset, "Hardware preset");
  cmd->add_option("--backend", a->backend, "Device backend (tpuemu info lists them): rtl, tlm, tlm-at, tlm-cycle, fake, remote://HOST:PORT");
  cmd->add_flag("--no-build", a->no_build,
                "rtl backend: a preset whose core is neither compiled in nor in the core cache is refused, naming the "
                "`tpuemu core build` command, instead of built first (docs/core-cache.md)");
  cmd->add_option("--max-cycles", a->max_cycles, "Watchdog: give up after this many cycles")->check(unsigned_in(1, UINT64_MAX));
  add_common_options(cmd, a->common, "Print the result as JSON", "Also write the JSON result here (- for stdout)");
  return {cmd, [a] { return run_exec(*a); }, &a->common};
}

}  // namespace tpuemu::cli
