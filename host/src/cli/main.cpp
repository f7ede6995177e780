// The tpuemu command line: run workloads on a backend, run hand-written programs, list presets.
#include <cstdio>
#include <unistd.h>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.h"
#include "tpuemu/base/atomic_file.h"
#include "tpuemu/base/error.h"
#include "tpuemu/compile/workload.h"
#include "tpuemu/config/config.h"
#include "tpuemu/device/backend_registry.h"
#include "tpuemu/device/device.h"
#include "tpuemu/hbm_replay/hbm_trace.h"
#include "tpuemu/program/program.h"
#include "tpuemu/run/runner.h"

namespace {

using namespace tpuemu;

using cli::kExitError;
using cli::kExitMismatch;
using cli::kExitUsage;

struct RunArgs {
  std::string workload_file;
  std::string preset;
  std::string matmul;
  bool requantize = false;
  std::optional<unsigned> buffers, buffers_a, buffers_b, buffers_out;
  bool no_resident = false;
  bool untiled = false;
  std::string backend = "rtl";
  bool json = false;
  std::string report_file;
  std::uint64_t max_cycles = 4'000'000'000;
  std::optional<std::uint64_t> seed;
  unsigned backpressure = 0;
  std::string trace_file;
  std::string allocator = "bfc";
  std::optional<std::string> vmem_allocator;
  std::string alloc_trace_file;
};

int cmd_run(const RunArgs& a) {
  if (a.workload_file.empty() == a.matmul.empty()) {
    throw Error("run: give either a workload file or --matmul MxKxN");
  }
  Workload w = a.workload_file.empty() ? parse_matmul_shape(a.matmul, a.requantize, a.seed.value_or(1))
                                       : load_workload(a.workload_file);
  if (a.seed) w.seed = *a.seed;
  const std::string preset_name = !a.preset.empty() ? a.preset : w.preset.value_or("default");
  const Preset preset = load_preset(preset_name);
  RunSettings s;
  s.backend = a.backend;
  const unsigned all = a.buffers.value_or(w.buffers.value_or(2));
  s.compile.buffers = {a.buffers_a.value_or(all), a.buffers_b.value_or(all), a.buffers_out.value_or(all)};
  s.compile.reuse_resident = !a.no_resident;
  s.tiled = !a.untiled;
  s.max_cycles = a.max_cycles;
  s.device.backpressure_permille = a.backpressure;
  s.device.trace_fst = a.trace_file;
  s.allocator = a.allocator;
  s.vmem_allocator = a.vmem_allocator;
  if (!a.json && isatty(STDERR_FILENO)) std::fprintf(stderr, "tpuemu: running %s on %s (%s)...\n", w.name.c_str(), preset.name.c_str(), s.backend.c_str());
  const WorkloadReport r = run_workload(preset, w, s);
  const nlohmann::json j = report_to_json(r);
  if (!a.report_file.empty()) write_file_atomically(a.report_file, j.dump(2) + "\n");
  if (!a.alloc_trace_file.empty()) alloc::write_alloc_trace(a.alloc_trace_file, r.allocation_trace);
  if (a.json) std::cout << j.dump(2) << '\n';
  else std::cout << format_report(r);
  return r.bit_exact ? 0 : kExitMismatch;
}

struct ExecArgs {
  std::string program_file;
  std::string preset = "default";
  std::string backend = "rtl";
  std::uint64_t max_cycles = 100'000'000;
  bool json = false;
};

int cmd_exec(const ExecArgs& a) {
  const Preset preset = load_preset(a.preset);
  const Program program = assemble_file(a.program_file);
  if (const auto problems = check_program(program, preset); !problems.empty()) {
    throw Error(fmt::format("{}: {}", a.program_file, problems.front()));
  }
  auto device = open_device(a.backend, preset);
  constexpr std::uint64_t kProgramAddr = 0;
  device->load_program(kProgramAddr, program.to_bytes());
  RunOptions options;
  options.max_cycles = a.max_cycles;
  const RunResult result = device->run(options);  // throws RunError on deadlock, error, timeout
  const Counters c = device->counters();
  if (a.json) {
    nlohmann::json j = {{"status", std::string(to_string(result.status))}, {"cycles", result.cycles}};
    const auto values = c.to_array();
    for (std::size_t i = 0; i < Counters::kCount; ++i) j["counters"][std::string(Counters::name(i))] = values[i];
    std::cout << j.dump(2) << '\n';
  } else {
    std::cout << fmt::format("{}: {} after {} cycles\n", a.program_file, to_string(result.status), result.cycles);
    const auto values = c.to_array();
    for (std::size_t i = 0; i < Counters::kCount; ++i) {
      std::cout << fmt::format("  {:<28} {}\n", Counters::name(i), values[i]);
    }
  }
  return 0;
}

int cmd_info(const std::string& preset_name) {
  if (!preset_name.empty()) {
    std::cout << describe(load_preset(preset_name)) << '\n';
    return 0;
  }
  for (const auto& name : list_presets()) {
    const Preset p = load_preset(name);
    std::cout << fmt::format("{:<14} DIM {:<4} VMEM {:>5} KiB  ACC {:>4} KiB  HBM {} B/cycle  {}\n", p.name, p.dim,
                             p.vmem_bytes() / 1024, p.acc_bytes() / 1024, p.hbm.bytes_per_cycle, p.description);
  }
  std::cout << "backends:\n";
  const DeviceBackendRegistry registry = built_in_device_backends();
  for (const DeviceBackend& b : registry.backends()) {
    std::cout << fmt::format("  {:<8} {}\n", b.name, b.description);
  }
  return 0;
}

int cmd_hbm(const HbmCommandOptions& a, bool json) {
  if (!json && isatty(STDERR_FILENO)) std::fprintf(stderr, "tpuemu: replaying through the HBM controller on %s...\n", a.config.c_str());
  const HbmReplayReport r = run_hbm_command(a);
  if (json) std::cout << hbm_report_to_json(r).dump(2) << '\n';
  else std::cout << format_hbm_report(r);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tpuemu: a cycle-accurate emulator of a TPU-like accelerator's memory system"};
  app.require_subcommand(1);

  RunArgs run;
  auto* run_cmd = app.add_subcommand("run", "Run a workload (JSON file or --matmul) and print its report");
  run_cmd->add_option("workload", run.workload_file, "Workload JSON file (examples/mlp.json)")->check(CLI::ExistingFile);
  run_cmd->add_option("--preset", run.preset, "Hardware preset: small, default, tpu-v4-like, or a JSON file");
  run_cmd->add_option("--matmul", run.matmul, "Run C = A.B of shape MxKxN, e.g. 512x512x512");
  run_cmd->add_flag("--requantize", run.requantize, "With --matmul: requantise C to int8 in the vector unit");
  run_cmd->add_option("--buffers", run.buffers, "Buffers per operand (1, 2 or 3)")->check(CLI::Range(1, 3));
  run_cmd->add_option("--buffers-a", run.buffers_a, "Buffers for A")->check(CLI::Range(1, 3));
  run_cmd->add_option("--buffers-b", run.buffers_b, "Buffers for B (weights)")->check(CLI::Range(1, 3));
  run_cmd->add_option("--buffers-out", run.buffers_out, "Accumulator regions / output slots")->check(CLI::Range(1, 3));
  run_cmd->add_flag("--no-resident", run.no_resident, "Never keep A panels resident in VMEM (reload them)");
  run_cmd->add_flag("--untiled", run.untiled, "Row-major layouts instead of TPU tiles");
  run_cmd->add_option("--backend", run.backend, "Device backend (tpuemu info lists them): rtl, fake");
  run_cmd->add_flag("--json", run.json, "Print the report as JSON");
  run_cmd->add_option("--report", run.report_file, "Also write the JSON report to this file");
  run_cmd->add_option("--max-cycles", run.max_cycles, "Watchdog: give up after this many cycles");
  run_cmd->add_option("--seed", run.seed, "Seed of the generated inputs");
  run_cmd->add_option("--backpressure", run.backpressure, "Memory model: refuse requests this often (per mille)")
      ->check(CLI::Range(0, 999));
  run_cmd->add_option("--allocator", run.allocator, "HBM allocation policy: bfc, first-fit, best-fit, buddy, tlsf");
  run_cmd->add_option("--vmem-allocator", run.vmem_allocator,
                      "Place VMEM buffers with this policy at run time instead of the offline planner");
  run_cmd->add_option("--alloc-trace", run.alloc_trace_file, "Write the run's HBM allocations as a trace (tpuemu replay)");
  run_cmd->add_option("--trace", run.trace_file, "FST waveform of the run (needs -DTPUEMU_RTL_TRACE=ON)");

  ExecArgs exec;
  auto* exec_cmd = app.add_subcommand("exec", "Assemble a program (.s) and run it on a backend");
  exec_cmd->add_option("program", exec.program_file, "Assembly file")->required()->check(CLI::ExistingFile);
  exec_cmd->add_option("--preset", exec.preset, "Hardware preset");
  exec_cmd->add_option("--backend", exec.backend, "Device backend (tpuemu info lists them): rtl, fake");
  exec_cmd->add_option("--max-cycles", exec.max_cycles, "Watchdog: give up after this many cycles");
  exec_cmd->add_flag("--json", exec.json, "Print the result as JSON");

  std::string info_preset;
  auto* info_cmd = app.add_subcommand("info", "List the presets, or describe one");
  info_cmd->add_option("--preset", info_preset, "Preset to describe");

  HbmCommandOptions hbm;
  bool hbm_json = false;
  auto* hbm_cmd = app.add_subcommand("hbm", "Replay an HBM request trace or pattern through the RTL controller and DRAM model");
  hbm_cmd->add_option("--trace", hbm.trace_file, "Trace file, one '<hex address> <READ|WRITE> <cycle>' per line");
  hbm_cmd->add_option("--pattern", hbm.pattern, "Synthetic requests instead: stream or random")->check(CLI::IsMember({"stream", "random"}));
  hbm_cmd->add_option("--requests", hbm.requests, "Number of pattern requests")->check(CLI::PositiveNumber);
  hbm_cmd->add_option("--config", hbm.config, "HBM timing set (hbm2-2000, hbm2e-3200, hbm3-6400) or a JSON file");
  hbm_cmd->add_option("--read-ratio", hbm.read_ratio, "Pattern: fraction of reads")->check(CLI::Range(0.0, 1.0));
  hbm_cmd->add_option("--seed", hbm.seed, "Pattern: random seed");
  hbm_cmd->add_option("--page-policy", hbm.page_policy, "Controller page policy: open or closed")->check(CLI::IsMember({"open", "closed"}));
  hbm_cmd->add_option("--window", hbm.window, "Requests held between their cycle and their answer (>= 256)");
  hbm_cmd->add_flag("--json", hbm_json, "Print the statistics as JSON");

  // Subcommands in their own files (commands.h).
  std::vector<cli::Subcommand> extra_commands;
  extra_commands.push_back(cli::add_plan_command(app));
  extra_commands.push_back(cli::add_replay_command(app));
  extra_commands.push_back(cli::add_trace_command(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "tpuemu: error: %s\n", e.what());
    return kExitUsage;
  }

  try {
    if (run_cmd->parsed()) return cmd_run(run);
    if (exec_cmd->parsed()) return cmd_exec(exec);
    if (info_cmd->parsed()) return cmd_info(info_preset);
    if (hbm_cmd->parsed()) return cmd_hbm(hbm, hbm_json);
    for (const auto& extra : extra_commands) {
      if (extra.command->parsed()) return extra.run();
    }
  } catch (const std::exception& e) {
    std::string message = e.what();
    for (char& ch : message) {
      if (ch == '\n') ch = ' ';
    }
    std::fprintf(stderr, "tpuemu: error: %s\n", message.c_str());
    return kExitError;
  }
  return kExitUsage;
}
