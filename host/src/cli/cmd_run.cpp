// tpuemu run: a workload (JSON file or --matmul) compiled, run on a backend, checked bit-exactly
// against the C++ reference and reported.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "tpuemu/base/atomic_file.h"
#include "tpuemu/compile/workload.h"
#include "tpuemu/config/config.h"
#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/profile/chrome_trace.h"
#include "tpuemu/profile/memory_profile.h"
#include "tpuemu/device/timeline.h"
#include "tpuemu/run/runner.h"

namespace tpuemu::cli {

namespace {

struct RunArgs {
  CommonOptions common;
  std::string workload_file;
  std::string preset;
  std::string matmul;
  bool requantize = false;
  std::optional<unsigned> buffers, buffers_a, buffers_b, buffers_out;
  bool no_resident = false;
  bool untiled = false;
  std::string backend = "rtl";
  std::uint64_t max_cycles = 4'000'000'000;
  std::optional<std::uint64_t> seed;
  unsigned backpressure = 0;
  std::string wave_file;
  std::string allocator = "bfc";
  std::optional<std::string> vmem_allocator;
  std::string alloc_trace_file;
  std::string report_file;
  std::string timeline_file;
  std::string profile_at = "peak";
};

// The artefacts of `run -o DIR` (docs/profile.md), each written atomically; only after the run
// succeeded, so a failed run leaves nothing in DIR.
void write_artefacts(const std::filesystem::path& dir, const WorkloadReport& r, const nlohmann::json& summary,
                     const profile::ProfileMoment& moment) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(dir.string(), fmt::format("cannot create the output directory: {}", ec.message()));
  write_file_atomically(dir / "summary.json", json_text(summary));
  write_file_atomically(dir / "fragmentation.csv",
                        alloc::samples_csv_header() + alloc::samples_csv_rows("hbm", r.hbm_allocation.policy,
                                                                              r.hbm_allocation_samples));
  write_file_atomically(dir / "memory.pb.gz",
                        profile::memory_profile(profile::snapshot_at(r.allocation_trace, moment), r.workload));
  profile::ChromeTraceInputs trace;
  trace.allocations = &r.allocation_trace;
  trace.samples["hbm"] = r.hbm_allocation_samples;
  trace.clock_ghz = r.clock_ghz;
  trace.title = r.workload;
  write_file_atomically(dir / "trace.json", json_text(profile::chrome_trace(trace)));
}

int run_run(const RunArgs& a) {
  if (a.workload_file.empty() == a.matmul.empty()) {
    throw UsageError("run: give either a workload file or --matmul MxKxN");
  }
  Workload w;
  if (a.workload_file.empty()) {
    try {
      w = parse_matmul_shape(a.matmul, a.requantize, a.seed.value_or(1));
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
  } else {
    w = load_workload(a.workload_file);
  }
  if (a.seed) w.seed = *a.seed;
  profile::ProfileMoment moment;
  try {
    moment = profile::ProfileMoment::parse(a.profile_at);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  const std::string preset_name = !a.preset.empty() ? a.preset : w.preset.value_or("default");
  const Preset preset = load_preset(preset_name);
  if (a.backpressure != 0 && preset.hbm.model != "simple") {
    throw UsageError("--backpressure", fmt::format("applies to the simple memory model; preset {} uses hbm.model \"{}\", "
                                                   "whose controller and DRAM model decide when requests are accepted",
                                                   preset.name, preset.hbm.model));
  }
  RunSettings s;
  s.backend = a.backend;
  const unsigned all = a.buffers.value_or(w.buffers.value_or(2));
  s.compile.buffers = {a.buffers_a.value_or(all), a.buffers_b.value_or(all), a.buffers_out.value_or(all)};
  s.compile.reuse_resident = !a.no_resident;
  s.tiled = !a.untiled;
  s.max_cycles = a.max_cycles;
  s.device.backpressure_permille = a.backpressure;
  s.device.trace_fst = a.wave_file;
  s.allocator = a.allocator;
  s.vmem_allocator = a.vmem_allocator;
  s.record_timeline = !a.timeline_file.empty();
  if (!a.common.json && !a.common.quiet && isatty(STDERR_FILENO))
    std::fprintf(stderr, "tpuemu: running %s on %s (%s)...\n", w.name.c_str(), preset.name.c_str(), s.backend.c_str());
  const WorkloadReport r = run_workload(preset, w, s);
  const nlohmann::json j = report_to_json(r);
  if (!a.report_file.empty()) write_file_atomically(a.report_file, json_text(j));
  if (!a.timeline_file.empty()) {
    write_file_atomically(a.timeline_file,
                          json_text(timeline_chrome_trace(instruction_spans(r.run.timeline, r.program),
                                                          r.run.hbm_timeline, r.clock_ghz)));
  }
  if (!a.common.out.empty()) write_artefacts(a.common.out, r, j, moment);
  if (!a.alloc_trace_file.empty()) alloc::write_alloc_trace(a.alloc_trace_file, r.allocation_trace);
  print(a.common, a.common.json ? json_text(j) : format_report(r));
  return r.bit_exact ? 0 : kExitMismatch;
}

}  // namespace

Subcommand add_run_command(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Run a workload (JSON file or --matmul) and print its report");
  auto* workload = cmd->add_option("workload", a->workload_file, "Workload JSON file (examples/mlp.json)")
                       ->check(input_file());
  cmd->add_option("--preset", a->preset, "Hardware preset: small, default, tpu-v4-like, or a JSON file "
                                         "(default: the workload's, else default)");
  auto* matmul = cmd->add_option("--matmul", a->matmul, "Run C = A.B of shape MxKxN, e.g. 512x512x512")
                     ->excludes(workload);
  cmd->add_flag("--requantize", a->requantize, "With --matmul: requantise C to int8 in the vector unit")
      ->needs(matmul);
  auto buffers = [&](const char* name, std::optional<unsigned>& v, const char* help) {
    cmd->add_option(name, v, help)->check(unsigned_in(1, 3));
  };
  buffers("--buffers", a->buffers, "Buffers per operand, 1-3 (default: the workload's, else 2)");
  buffers("--buffers-a", a->buffers_a, "Buffers for A (default: --buffers)");
  buffers("--buffers-b", a->buffers_b, "Buffers for B, the weights (default: --buffers)");
  buffers("--buffers-out", a->buffers_out, "Accumulator regions / output slots (default: --buffers)");
  cmd->add_flag("--no-resident", a->no_resident, "Never keep A panels resident in VMEM (reload them)");
  cmd->add_flag("--untiled", a->untiled, "Row-major layouts instead of TPU tiles");
  cmd->add_option("--backend", a->backend, "Device backend (tpuemu info lists them): rtl, fake");
  cmd->add_option("--max-cycles", a->max_cycles, "Watchdog: give up after this many cycles")->check(unsigned_in(1, UINT64_MAX));
  cmd->add_option("--seed", a->seed, "Seed of the generated inputs (default: the workload's)")->check(any_unsigned());
  cmd->add_option("--backpressure", a->backpressure,
                  "Simple memory model only: refuse requests this often (per mille, 0-999)")
      ->check(unsigned_in(0, 999));
  cmd->add_option("--allocator", a->allocator, "HBM allocation policy: bfc, first-fit, best-fit, buddy, tlsf");
  cmd->add_option("--vmem-allocator", a->vmem_allocator,
                  "Place VMEM buffers with this policy at run time instead of the offline planner");
  cmd->add_option("--alloc-trace", a->alloc_trace_file, "Write the run's HBM allocations as a trace (tpuemu replay)")
      ->type_name("FILE");
  cmd->add_option("--wave", a->wave_file, "FST waveform of the run (needs -DTPUEMU_RTL_TRACE=ON)")->type_name("FILE.fst");
  cmd->add_option("--report", a->report_file, "Also write the JSON report to this file (- for stdout)")->type_name("FILE");
  cmd->add_option("--timeline", a->timeline_file,
                  "Record the instruction timeline and write it as a Chrome trace (Perfetto): a track per "
                  "queue, one per HBM channel")
      ->type_name("FILE.json");
  cmd->add_option("--profile-at", a->profile_at, "The moment memory.pb.gz shows: peak, end or a cycle");
  add_common_options(cmd, a->common, "Print the report as JSON",
                     "Write the artefacts here: summary.json, fragmentation.csv, memory.pb.gz, trace.json "
                     "(docs/profile.md)");
  cmd->get_option("--out")->type_name("DIR");
  return {cmd, [a] { return run_run(*a); }, &a->common};
}

}  // namespace tpuemu::cli
