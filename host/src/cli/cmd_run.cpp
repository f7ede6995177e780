// SPDX-License-Identifier: Apache-2.0
// tpuemu run: a workload (JSON file or --matmul) or a JAX/XLA program (HLO text) compiled, run on a
// backend, checked bit-exactly against the C++ reference and reported. A program's memory analysis
// is `tpuemu analyze` (cmd_analyze.cpp).
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.h"
#include "hlo_run.h"
#include "outputs.h"
#include "progress.h"
#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/base/text.h"
#include "tpuemu/compile/model.h"
#include "tpuemu/compile/workload.h"
#include "tpuemu/config/config.h"
#include "tpuemu/hlo_exec/hlo_model.h"
#include "tpuemu/profile/chrome_trace.h"
#include "tpuemu/profile/memory_map.h"
#include "tpuemu/profile/memory_profile.h"
#include "tpuemu/profile/report_html.h"
#include "tpuemu/device/timeline.h"
#include "tpuemu/run/runner.h"
#include "tpuemu/shard/collectives.h"
#include "tpuemu/shard/shard_plan.h"
#include "tpuemu/shard/sharded_run.h"
#include "tpuemu/shard_mpi/mpi_exchange.h"

namespace tpuemu::cli {

namespace {

struct RunArgs {
  CommonOptions common;
  const CLI::App* command = nullptr;  // to see which options were given
  std::string schedule;  // analyze's option: refused here, naming analyze
  std::string workload_file;
  std::string preset;
  std::string matmul;
  bool requantize = false;
  std::optional<unsigned> buffers, buffers_a, buffers_b, buffers_out;
  bool no_resident = false;
  bool untiled = false;
  std::string backend = "rtl";
  bool no_build = false;  // rtl backend: refuse a preset whose core is not built yet
  std::uint64_t max_cycles = 4'000'000'000;
  std::optional<std::uint64_t> seed;
  unsigned backpressure = 0;
  std::optional<std::uint32_t> board_shim;
  std::string wave_file;
  std::string allocator = "bfc";
  std::optional<std::string> vmem_allocator;
  std::string alloc_trace_file;
  std::string report_file;
  std::string profile_at = "peak";
  const CLI::Option* profile_at_option = nullptr;  // given on the command line
  std::optional<std::size_t> batch;
  std::size_t requests = 1;
  std::string hbm_capacity;
  bool plan = false;
  double plan_timeout = 10;
  // sharded runs (docs/sharding.md)
  std::optional<std::uint32_t> devices;
  std::optional<std::string> shard, mesh;
  std::optional<unsigned> jobs;
  bool no_overlap = false;
  bool sharded() const { return devices || shard || shard_mpi::launched_by_mpirun(); }
};

// `--allocator all`: the device runs once with the default policy and the run's HBM allocation
// trace is replayed through every other policy at the same capacity (docs/profile.md).
constexpr std::string_view kEveryAllocator = "all";
constexpr std::uint64_t kHbmGranularity = 256;  // the runner's HBM allocator granularity

// The track names report.html and docs/profile.md use for the three engine queues.
std::string_view queue_track_name(Queue q) {
  switch (q) {
    case Queue::Dma: return "DMA";
    case Queue::Mxu: return "MXU";
    case Queue::Vector: return "vector";
    case Queue::Control: break;
  }
  return "control";
}

std::string mnemonic(spec::Opcode op) {
  std::string m(opcode_name(op));
  for (char& c : m) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return m;
}

// The engine and HBM channel tracks of trace.json from every launch's timeline.
void engine_tracks(const WorkloadReport& r, profile::ChromeTraceInputs& out) {
  for (const StepTimeline& t : r.timelines) {
    const StepReport& step = r.steps[t.step];
    const std::string layer = r.requests > 1 ? fmt::format("{} r{}", r.layers[step.layer].name, step.request)
                                             : r.layers[step.layer].name;
    for (const InstructionSpan& span : t.spans) {
      const std::string queue = std::string(queue_track_name(span.queue));
      if (span.wait_begin && span.wait_end && *span.wait_end > *span.wait_begin) {
        out.engine.push_back({queue, fmt::format("wait s{}", span.wait_sem.value_or(0)), *span.wait_begin,
                              *span.wait_end, static_cast<std::uint32_t>(span.program_index), layer});
      }
      if (span.issue && span.done) {
        out.engine.push_back({queue, mnemonic(span.opcode), *span.issue, *span.done,
                              static_cast<std::uint32_t>(span.program_index), layer});
      }
    }
    for (const HbmInterval& h : t.hbm) {
      out.hbm_channels.push_back({h.channel, h.kind == HbmInterval::Refresh, h.begin, h.end});
      out.hbm_channel_count = std::max(out.hbm_channel_count, h.channel + 1);
    }
  }
  if (r.hbm) out.hbm_channel_count = std::max<unsigned>(out.hbm_channel_count, static_cast<unsigned>(r.hbm->channels()));
}

// The files of `run -o DIR` (docs/profile.md).
const std::vector<std::string> kArtefacts = {"summary.json", "fragmentation.csv", "memory.pb.gz", "trace.json",
                                             "report.html"};

// The artefacts of `run -o DIR` (docs/profile.md), staged in the command's outputs: published
// with its other outputs once all of them were made, so a failed run leaves nothing in DIR.
// A sharded run's artefacts are device `first_device`'s (the summary, trace and memory profile),
// with one HBM memory map and fragmentation curve per device, spaces "hbm device D".
void write_artefacts(CommandOutputs& out, const std::filesystem::path& dir, std::span<const WorkloadReport> devices,
                     std::uint32_t first_device,
                     nlohmann::json summary, const profile::ProfileMoment& moment, bool every_policy) {
  const WorkloadReport& r = devices.front();
  try {
    profile::check_moment(r.allocation_trace, moment);  // a cycle after the run: known only now
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  const profile::RunPlacements placements =
      profile::run_placements(r.allocation_trace, "hbm", r.hbm_allocation.policy, r.hbm_allocation.capacity,
                              kHbmGranularity, every_policy);
  std::string fragmentation = alloc::samples_csv_header();
  profile::MemoryMap map;
  if (devices.size() == 1) {
    map = placements.map;
    fragmentation += alloc::samples_csv_rows("hbm", r.hbm_allocation.policy, r.hbm_allocation_samples);
  } else {
    for (std::size_t d = 0; d < devices.size(); ++d) {
      const WorkloadReport& device = devices[d];
      const std::string space = fmt::format("hbm device {}", first_device + d);
      profile::SpaceMap m = profile::space_map_as_placed(device.allocation_trace, "hbm", device.hbm_allocation.policy,
                                                         device.hbm_allocation.capacity);
      m.space = space;
      map.spaces.push_back(std::move(m));
      fragmentation += alloc::samples_csv_rows(space, device.hbm_allocation.policy, device.hbm_allocation_samples);
    }
  }
  summary["memory_map"] = profile::memory_map_to_json(map);
  for (const alloc::ReplayRun& replay : placements.replays)
    fragmentation += alloc::samples_csv_rows(replay.metrics.space, replay.metrics.policy, replay.samples);
  profile::ChromeTraceInputs trace_inputs;
  trace_inputs.allocations = &r.allocation_trace;
  trace_inputs.samples["hbm"] = r.hbm_allocation_samples;
  trace_inputs.clock_ghz = r.clock_ghz;
  trace_inputs.title = r.workload;
  engine_tracks(r, trace_inputs);
  // trace.json is read by programs (Perfetto, report.html): compact, and parsed once, here.
  const nlohmann::json trace = profile::chrome_trace(trace_inputs);
  const std::string summary_text = json_text(summary), trace_text = json_text(trace, JsonStyle::Compact);
  const std::string report = profile::report_html({(dir / "summary.json").string(), summary_text},
                                                  {(dir / "fragmentation.csv").string(), fragmentation},
                                                  {(dir / "trace.json").string(), trace_text, &trace});
  const std::string memory = profile::memory_profile(profile::snapshot_at(r.allocation_trace, moment), r.workload);
  out.file_in(dir, "summary.json", summary_text);
  out.file_in(dir, "fragmentation.csv", std::move(fragmentation));
  out.file_in(dir, "memory.pb.gz", memory);
  out.file_in(dir, "trace.json", trace_text);
  out.file_in(dir, "report.html", report);
}

// A run over --devices devices: on threads here, or on this rank's share of them under mpirun
// (only rank 0 prints and writes; the others exit with its code).
int run_sharded_command(const RunArgs& a, CommandOutputs& out, const Preset& preset, const Model& model, RunSettings s,
                        const profile::ProfileMoment& moment) {
  const std::uint32_t devices = a.devices.value_or(1);
  if (!a.shard) throw UsageError(fmt::format("--devices {}", devices), "give --shard batch, tensor or fsdp");
  shard::ShardSettings ss;
  ss.mode = shard::parse_shard_mode(*a.shard);
  ss.devices = devices;
  ss.mesh = a.mesh.value_or("");
  ss.overlap = !a.no_overlap;
  ss.jobs = a.jobs.value_or(0);
  if (!a.alloc_trace_file.empty()) throw UsageError("--alloc-trace", "writes one device's trace; not with --devices (-o DIR has every device's memory map)");
  if (!a.wave_file.empty()) throw UsageError("--wave", "records one device; not with --devices");
  if (a.allocator == kEveryAllocator) throw UsageError("--allocator all", "replays one device's trace; not with --devices");
  std::optional<shard_mpi::MpiSession> mpi;
  std::unique_ptr<shard::Exchange> exchange;
  if (shard_mpi::launched_by_mpirun()) {
    mpi.emplace();
    exchange = std::make_unique<shard_mpi::MpiExchange>(*mpi);
  } else {
    exchange = std::make_unique<shard::LocalExchange>();
  }
  const bool root = exchange->rank() == 0;
  try {
    shard::ShardReport r = shard::run_sharded(preset, model, s, ss, *exchange);
    if (!root) return r.bit_exact ? 0 : kExitMismatch;
    nlohmann::json j = shard::shard_report_to_json(r);
    if (!a.report_file.empty()) out.file(a.report_file, json_text(j));
    if (!a.common.out.empty()) {
      nlohmann::json summary = report_to_json(r.local_reports.front());
      summary["sharded"] = j;
      write_artefacts(out, a.common.out, r.local_reports, r.first_local_device, summary, moment, false);
    }
    out.print(a.common.json ? json_text(j) : shard::format_shard_report(r));
    out.commit();
    return r.bit_exact ? 0 : kExitMismatch;
  } catch (const Error&) {
    if (root) throw;
    throw SilentExit(kExitError);  // rank 0 says what failed
  }
}

// The options that mean something only beside others, one rule each, checked before anything is
// read: refused, never ignored (docs/cli.md, "run across devices").
void check_option_combinations(const RunArgs& a) {
  if (!a.devices) {
    const std::pair<bool, const char*> sharding[] = {
        {a.shard.has_value(), "--shard"}, {a.mesh.has_value(), "--mesh"}, {a.jobs.has_value(), "--jobs"}, {a.no_overlap, "--no-overlap"}};
    for (const auto& [given, name] : sharding) {
      if (given) throw UsageError(name, "applies to a run across devices: give --devices N (docs/sharding.md)");
    }
  } else if (!a.shard) {
    throw UsageError(fmt::format("--devices {}", *a.devices), "give --shard batch, tensor or fsdp");
  }
  if (a.no_overlap && a.shard && shard::parse_shard_mode(*a.shard) != shard::ShardMode::Fsdp) {
    throw UsageError("--no-overlap", fmt::format("applies to --shard fsdp (the weight gathers it overlaps with compute), "
                                                 "not --shard {}", *a.shard));
  }
  if (a.profile_at_option->count() > 0 && a.common.out.empty()) {
    throw UsageError("--profile-at", "chooses the moment of memory.pb.gz, an artefact of -o DIR: give -o DIR");
  }
}

// `run PROGRAM.hlo`: the program's layers as a model (docs/hlo.md, "Executing on the device"). A
// program the device cannot run is refused at its first instruction that cannot, pointing to the
// analysis, which reads every program.
hlo_exec::HloModel hlo_model_to_execute(const WorkloadInput& input) {
  const hlo::Module module = input.hlo_module();
  try {
    return hlo_exec::model_from_hlo(module);
  } catch (const Error& e) {
    throw Error(e.place(), fmt::format("{}; `tpuemu analyze {}` analyses its memory", e.cause(), printable(input.path)));
  }
}

int run_run(const RunArgs& a) {
  // Read once (standard input and FIFOs cannot be read twice) and known by its content.
  std::optional<WorkloadInput> input =
      a.workload_file.empty() ? std::nullopt : std::optional(read_workload_input(a.workload_file));
  const bool hlo = input && input->hlo;
  // The analysis' options, refused naming the command that takes them.
  const std::string analyze = fmt::format("`tpuemu analyze {}`", hlo ? printable(a.workload_file) : "PROGRAM.hlo");
  if (a.command->get_option("--schedule")->count() > 0) {
    throw UsageError("--schedule", fmt::format("orders an HLO program's instructions for its memory analysis ({}); {}",
                                               analyze, hlo ? "run executes the layers in the program's order"
                                                            : "a workload's order is its compiler's"));
  }
  for (const std::string& policy : kHloOnlyPolicies) {
    if (a.allocator == policy) {
      throw UsageError(fmt::format("--allocator {}", policy),
                       fmt::format("places an HLO program's buffers for its memory analysis ({}); a run allocates "
                                   "at run time",
                                   analyze));
    }
  }
  if (hlo && a.batch) throw UsageError("--batch", "an HLO program's shapes fix its batch");
  if (hlo && a.sharded()) throw UsageError("--devices", "an HLO program runs on one device");
  if (a.workload_file.empty() == a.matmul.empty()) {
    throw UsageError("run: give either a workload file or --matmul MxKxN");
  }
  check_option_combinations(a);
  // Every output is checked before the run (an output that is an input, a directory in the way, a
  // "-" beside --json) and staged in `out`, published only when all were made (docs/cli.md).
  CommandOutputs out(a.common);
  if (a.common.out == "-") {
    throw UsageError("-o -", "run writes a directory of artefacts, not a stream (for the report on stdout, give --report - or --json)");
  }
  out.input(a.workload_file, "the workload");
  if (std::filesystem::is_regular_file(a.preset)) out.input(a.preset, "the --preset file");
  out.check(a.report_file, "--report");
  out.check_folder(a.common.out, kArtefacts, "-o");
  out.check(a.alloc_trace_file, "--alloc-trace");
  out.check(a.wave_file, "--wave");
  Model w;
  std::optional<hlo_exec::HloModel> program;  // an HLO program run on the device
  if (hlo) {
    program = hlo_model_to_execute(*input);
    w = program->model;
  } else if (a.workload_file.empty()) {
    w = model_from_workload(parse_matmul_shape(a.matmul, a.requantize, a.seed.value_or(1)));  // checked when parsed
  } else {
    w = load_model(input->json(), a.workload_file);
  }
  if (a.seed) w.seed = *a.seed;
  const profile::ProfileMoment moment = profile::ProfileMoment::parse(a.profile_at);  // checked when parsed
  // A preset the workload file names is an error at its place in the file.
  const Preset preset = !a.preset.empty() ? load_preset(a.preset) : load_model_preset(w);
  if (a.backpressure != 0 && preset.hbm.model != "simple") {
    throw UsageError("--backpressure", fmt::format("applies to the simple memory model; preset {} uses hbm.model \"{}\", "
                                                   "whose controller and DRAM model decide when requests are accepted",
                                                   preset.name, preset.hbm.model));
  }
  if (a.board_shim && preset.hbm.model != "hbm") {
    throw UsageError("--board-shim", fmt::format("is the HBM side of the board top; preset {} uses hbm.model \"{}\"",
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
  s.device.board_shim_max_latency = a.board_shim;
  s.device.trace_fst = out.produced(a.wave_file);
  s.device.build_missing_core = !a.no_build;
  s.device.preset_argument = a.preset;
  s.device.stop = out.stop_token();  // a core built on first use stops on Ctrl-C too
  const bool every_policy = a.allocator == kEveryAllocator;
  if (every_policy && a.common.out.empty())
    throw UsageError("--allocator all", "compares the policies in the artefacts of -o DIR (report.html); give -o DIR");
  s.allocator = every_policy ? std::string(alloc::kDefaultAllocator) : a.allocator;
  s.vmem_allocator = a.vmem_allocator;
  s.record_timeline = !a.common.out.empty();  // trace.json's engine and HBM channel tracks
  s.batch = a.batch;
  s.requests = a.requests;
  if (!a.hbm_capacity.empty()) {
    s.hbm_capacity = alloc::parse_bytes(a.hbm_capacity);
    // The preset decides what fits: a usage error like any malformed value, before the run.
    if (const auto problem = hbm_capacity_problem(preset, *s.hbm_capacity)) {
      throw UsageError(fmt::format("--hbm-capacity {}", a.hbm_capacity), *problem);
    }
  }
  s.plan_hbm = a.plan;
  s.plan_timeout_seconds = a.plan_timeout;
  if (a.plan && a.allocator != std::string(alloc::kDefaultAllocator)) {
    throw UsageError("--plan", "places HBM buffers with the offline planner; it cannot be combined with --allocator");
  }
  ProgressBar bar(!a.common.json && !a.common.quiet && isatty(STDERR_FILENO));
  s.progress = [&bar](const RunProgress& p) { bar.update(p); };
  s.interrupted = [&out] { return out.interrupted(); };
  if (a.sharded()) return run_sharded_command(a, out, preset, w, s, moment);
  const WorkloadReport r = run_model(preset, w, s);
  nlohmann::json j = report_to_json(r);
  std::string text = format_report(r);
  if (program) {
    // What ran stands in for the program: its arrays in int8, its values from the seed.
    j["hlo"] = {{"executed", "int8"}, {"original_dtypes", program->original_dtypes}};
    text = fmt::format("HLO program executed int8-quantised; original dtypes: {}\n{}", fmt::join(program->original_dtypes, ", "), text);
  }
  if (!a.report_file.empty()) out.file(a.report_file, json_text(j));
  if (!a.common.out.empty()) write_artefacts(out, a.common.out, std::span(&r, 1), 0, j, moment, every_policy);
  if (!a.alloc_trace_file.empty()) out.file(a.alloc_trace_file, alloc::format_alloc_trace(r.allocation_trace));
  out.print(a.common.json ? json_text(j) : text);
  out.commit();
  return r.bit_exact ? 0 : kExitMismatch;
}

}  // namespace

Subcommand add_run_command(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Run a workload (JSON file or --matmul) or a JAX/XLA program of dense and "
                                        "convolution layers (HLO text, int8-quantised) on a device and print its "
                                        "report (`tpuemu analyze` analyses a program's memory)");
  a->command = cmd;
  // The analysis' option, hidden: given here it is refused naming `tpuemu analyze`, not unknown.
  cmd->add_option("--schedule", a->schedule)->group("");
  auto* workload = cmd->add_option("workload", a->workload_file,
                                   "Workload JSON file (examples/mlp.json), or a JAX/XLA program as HLO text (*.hlo, "
                                   "XLA dumps; docs/hlo.md, \"Executing on the device\"), or - for standard input")
                       ->check(input_file());
  cmd->add_option("--preset", a->preset, "Hardware preset: small, default, tpu-v4-like, or a JSON file "
                                         "(default: the workload's, else default)");
  auto* matmul = cmd->add_option("--matmul", a->matmul, "Run C = A.B of shape MxKxN, e.g. 512x512x512")
                     ->check(parsed_by([](const std::string& text) { (void)parse_matmul_shape(text); }, "MxKxN"))
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
  cmd->add_option("--backend", a->backend, "Device backend (tpuemu info lists them): rtl, tlm, tlm-at, tlm-cycle, fake, remote://HOST:PORT");
  cmd->add_flag("--no-build", a->no_build,
                "rtl backend: a preset whose core is neither compiled in nor in the core cache is refused, naming the "
                "`tpuemu core build` command, instead of built first (docs/core-cache.md)");
  cmd->add_option("--max-cycles", a->max_cycles, "Watchdog: give up after this many cycles")->check(unsigned_in(1, UINT64_MAX));
  cmd->add_option("--seed", a->seed, "Seed of the generated inputs (default: the workload's)")->check(any_unsigned());
  cmd->add_option("--backpressure", a->backpressure,
                  "Simple memory model only: refuse requests this often (per mille, 0-999)")
      ->check(unsigned_in(0, 999));
  cmd->add_option("--board-shim", a->board_shim,
                  "HBM presets with 16-byte beats, rtl backend: run the core on the board top's memory system (RTL "
                  "beat bridge, controller, DRAM shim) with a backing store of random latency 0..N host cycles "
                  "instead of the DRAM model (the cycles must not change; docs/fpga.md)")
      ->type_name("N")
      ->check(unsigned_in(0, 100000));
  cmd->add_option("--allocator", a->allocator,
                  "HBM allocation policy: bfc, first-fit, best-fit, buddy, tlsf, or all (run with bfc, replay the "
                  "HBM trace through every policy for the memory maps of -o DIR)")
      ->check(one_of([] {
        std::vector<std::string> names = alloc::allocator_names();
        names.insert(names.end(), kHloOnlyPolicies.begin(), kHloOnlyPolicies.end());
        names.emplace_back(kEveryAllocator);
        return names;
      }()));
  cmd->add_option("--vmem-allocator", a->vmem_allocator,
                  "Place VMEM buffers with this policy at run time instead of the offline planner")
      ->check(one_of(alloc::allocator_names()));
  cmd->add_option("--alloc-trace", a->alloc_trace_file, "Write the run's HBM allocations as a trace (tpuemu replay)")
      ->type_name("FILE");
  cmd->add_option("--wave", a->wave_file, "FST waveform of the run (needs -DTPUEMU_RTL_TRACE=ON)")->type_name("FILE.fst");
  cmd->add_option("--report", a->report_file, "Also write the JSON report to this file (- for stdout)")->type_name("FILE");
  a->profile_at_option =
      cmd->add_option("--profile-at", a->profile_at, "The moment memory.pb.gz shows: peak, end or a cycle (needs -o DIR)")
          ->check(parsed_by([](const std::string& text) { (void)profile::ProfileMoment::parse(text); }, "WHEN"));
  cmd->add_option("--batch", a->batch, "Samples per request (default: the workload's batch)")->check(unsigned_in(1, kMaxDimension));
  cmd->add_option("--requests", a->requests, "Requests in flight, interleaved layer by layer (docs/workloads.md)")
      ->check(unsigned_in(1, 64));
  cmd->add_option("--hbm-capacity", a->hbm_capacity, "Shrink HBM to this many bytes (KiB/MiB/GiB suffixes)")
      ->check(byte_count());
  auto* plan = cmd->add_flag("--plan", a->plan, "Place HBM buffers with the offline planner over the whole run");
  cmd->add_option("--plan-timeout", a->plan_timeout, "Seconds the planner's exact search may take")
      ->check(finite_in(0, 3600))->needs(plan);
  cmd->add_option("--devices", a->devices, "Split the run across this many simulated devices (docs/sharding.md)")
      ->check(unsigned_in(1, 64));
  cmd->add_option("--shard", a->shard, "How --devices split the run: batch, tensor or fsdp")
      ->check(parsed_by([](const std::string& text) { (void)shard::parse_shard_mode(text); }, ""));
  cmd->add_option("--mesh", a->mesh, "The devices' arrangement: N (a ring) or RxC (a 2-D torus; preset topology torus2d)")
      ->type_name("RxC")
      ->check(parsed_by([](const std::string& text) { (void)shard::parse_mesh_shape(text); }, ""));
  cmd->add_option("--jobs", a->jobs, "Threads simulating the devices (default: one per core)")->check(unsigned_in(1, 256));
  cmd->add_flag("--no-overlap", a->no_overlap, "fsdp: gather each layer's weights just before it, not while the layer before runs");
  add_common_options(cmd, a->common, "Print the report as JSON",
                     "Write the artefacts here: summary.json, fragmentation.csv, memory.pb.gz, trace.json, report.html "
                     "(docs/profile.md)");
  cmd->get_option("--out")->type_name("DIR");
  return {cmd, [a] { return run_run(*a); }, &a->common};
}

}  // namespace tpuemu::cli
