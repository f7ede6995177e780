// SPDX-License-Identifier: Apache-2.0
// tpuemu sweep: every point of a grid file run (sweep_point.cpp), the table and its plots written
// to one directory (docs/sweep.md). The engine is the sweep layer; this file wires it to the
// runner, the terminal and Ctrl-C.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "outputs.h"
#include "progress.h"
#include "sweep_point.h"
#include "tpuemu/compile/model.h"
#include "tpuemu/run/runner.h"
#include "tpuemu/shard_mpi/mpi_exchange.h"
#include "tpuemu/sweep/sweep.h"

namespace tpuemu::cli {

namespace {

constexpr std::string_view kDefaultOutDir = "sweep-out";
constexpr unsigned kMaxJobs = 256;

struct SweepArgs {
  CommonOptions common;
  std::string grid_file;
  unsigned jobs = 1;
};

// "sweep: 3/12 points" on stderr, rewritten in place; only on a terminal and not with -q/--json.
class PointCounter {
 public:
  explicit PointCounter(bool enabled) : enabled_(enabled) {}
  ~PointCounter() { clear(); }
  PointCounter(const PointCounter&) = delete;
  PointCounter& operator=(const PointCounter&) = delete;
  void update(std::size_t done, std::size_t total) {
    if (!enabled_) return;
    std::fprintf(stderr, "\rsweep: %zu/%zu points", done, total);
    std::fflush(stderr);
    shown_ = true;
  }
  // Before anything else reaches the terminal: the table must not start on the counter's line.
  void clear() {
    if (shown_) std::fputs("\r\033[K", stderr);
    shown_ = false;
  }

 private:
  bool enabled_;
  bool shown_ = false;
};

int run_sweep_command(const SweepArgs& a) {
  const std::filesystem::path out_dir =
      a.common.out.empty() ? std::filesystem::path(kDefaultOutDir) : std::filesystem::path(a.common.out);
  if (out_dir == "-") {
    throw UsageError("-o -", "a sweep writes a directory of files, not a stream (for its table on stdout, give --json)");
  }
  CommandOutputs out(a.common);
  const sweep::SweepGrid grid = sweep::load_sweep_grid(a.grid_file);
  out.input(a.grid_file, "the grid");
  out.input(grid.model.string(), "the grid's model");
  out.check_folder(out_dir.string(), {"sweep.csv", "sweep.json"}, "-o");
  // A bad model is one error at its own place, before any point runs (not once per point).
  try {
    (void)load_model(grid.model);
  } catch (const Error& e) {
    throw e.within(fmt::format("{}: /model", grid.source));
  }

  // Under mpirun the points are dealt out to the ranks (point i to rank i % R); rank 0 gathers
  // the rows and writes the outputs, the others exit with its code.
  std::optional<shard_mpi::MpiSession> mpi;
  std::optional<shard_mpi::MpiExchange> exchange;
  if (shard_mpi::launched_by_mpirun()) {
    mpi.emplace();
    exchange.emplace(*mpi);
  }
  const bool root = !exchange || exchange->rank() == 0;
  PointCounter counter(root && !a.common.json && !a.common.quiet && isatty(STDERR_FILENO));
  sweep::SweepOptions options;
  options.jobs = a.jobs;
  if (exchange) {
    options.rank = exchange->rank();
    options.world_size = exchange->ranks();
  }
  // Points in parallel share the cores: each point's devices then run one at a time.
  const unsigned device_jobs = a.jobs > 1 ? 1 : 0;
  options.progress = [&counter](std::size_t done, std::size_t total) { counter.update(done, total); };
  // Ctrl-C: no new point starts, and the running ones stop as `tpuemu run` does.
  const StopToken stop = out.stop_token();
  const sweep::PointRunner runner = [&](const sweep::SweepPoint& point) {
    stop.throw_if_requested("the sweep");
    return run_sweep_point(point, grid.model, device_jobs, stop);
  };
  sweep::SweepTable table;
  std::optional<std::string> failure;
  try {
    table = sweep::run_sweep(grid, runner, options);
  } catch (const Error& e) {
    if (out.interrupted()) throw Interrupted("sweep: interrupted; nothing was written");
    if (!exchange) throw;
    failure = e.what();
  }
  if (exchange) {
    // every rank's failure or rows reach every rank; rank 0 reports
    if (const auto error = exchange->first_error(failure)) {
      if (!root) throw SilentExit(kExitError);
      throw Error(*error);
    }
    const std::string mine = table_to_json(table, grid).dump();
    std::vector<sweep::SweepTable> tables;
    for (const auto& blob : exchange->all_gather({std::vector<std::uint8_t>(mine.begin(), mine.end())})) {
      tables.push_back(sweep::table_from_json(nlohmann::json::parse(blob.begin(), blob.end()), grid, "an MPI rank's table"));
    }
    table = sweep::merge_sweep_tables(grid, tables);
  }
  const bool all_exact = std::all_of(table.rows.begin(), table.rows.end(),
                                     [](const sweep::SweepRow& row) { return row.results.value("bit_exact", true); });
  if (!root) return all_exact ? 0 : kExitMismatch;
  counter.clear();
  std::vector<std::string> files;
  out.stage([&](OutputTransaction& t) { files = sweep::stage_sweep_outputs(table, grid, out_dir, t); });
  if (a.common.json) {
    out.print(json_text(sweep::sweep_json(table, grid)));
  } else {
    out.print(fmt::format("{}{} points; {} in {}\n", sweep::format_sweep_table(table, grid), table.rows.size(),
                                fmt::join(files, ", "), out_dir.string()));
  }
  out.commit();
  // As `tpuemu run`: a point whose result differs from the reference makes the command's outcome.
  return all_exact ? 0 : kExitMismatch;
}

}  // namespace

Subcommand add_sweep_command(CLI::App& app) {
  auto a = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep", "Run every point of a grid file and write the table and its plots");
  cmd->add_option("grid", a->grid_file, "Grid JSON file (docs/sweep.md)")->required()->check(input_file());
  cmd->add_option("--jobs", a->jobs, "Points run at once (threads)")->check(unsigned_in(1, kMaxJobs));
  add_common_options(
      cmd, a->common, "Print the table as JSON (the contents of sweep.json) instead of text",
      fmt::format("Output directory: sweep.csv, sweep.json, plot-<metric>.svg (default {})", kDefaultOutDir));
  cmd->get_option("--out")->type_name("DIR");
  return {cmd, [a] { return run_sweep_command(*a); }, &a->common};
}

}  // namespace tpuemu::cli
