// SPDX-License-Identifier: Apache-2.0
// Layer sweep: `tpuemu sweep GRID.json` without the device (docs/sweep.md). A grid file names a
// model and a list of values per axis; the engine forms the cross product of the axes, runs every
// point through a PointRunner the caller supplies (the CLI maps a point to a run), collects the
// flat results into a table and writes the table as CSV, JSON and one SVG line chart per metric.
//
// The engine knows nothing of devices or runs: what a value of `preset` or `shard` means is the
// runner's business. That keeps it testable with a fake runner, and lets the multi-device runner
// replace the single-device one without touching this layer.
#pragma once

#include <array>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpuemu/base/json.h"
#include "tpuemu/base/output_transaction.h"

namespace tpuemu::sweep {

// Every axis a grid may vary, in the order points are formed (first = slowest) and columns shown.
inline constexpr std::array<std::string_view, 9> kAxisNames = {
    "devices", "shard", "buffers", "allocator", "preset", "batch", "overlap", "backend", "mesh"};
// More points than this is almost certainly a mistake in the grid (and days of simulation).
inline constexpr std::size_t kMaxSweepPoints = 4096;

struct SweepAxis {
  std::string name;                    // one of kAxisNames
  std::vector<nlohmann::json> values;  // in the order the grid lists them, no two equal
};

struct SweepGrid {
  std::string source;           // the grid file as named in errors ("standard input" for -)
  std::filesystem::path model;  // the model file, resolved against the grid file's folder
  std::vector<SweepAxis> axes;  // the axes the grid gives, in kAxisNames order (at least one)
  // The results that get a plot, as given; empty: every numeric result of the table.
  std::vector<std::string> metrics;
  // Where each metric was written ("file:line:col: /metrics/1"), for the error about a metric
  // that a point does not return, which can only be known once the point has run.
  std::vector<std::string> metric_places;
  std::string x_axis;  // the plot's x axis: as given, else the first axis with > 1 value

  const SweepAxis* find_axis(std::string_view name) const;
  std::size_t point_count() const;  // the product of the axes' value counts
};

// Throws Error "file:line:col: /pointer: cause" (one line) for anything docs/sweep.md does not
// allow. Relative model paths are taken from grid_folder.
SweepGrid parse_sweep_grid(const JsonDocument& grid, const std::filesystem::path& grid_folder);
// Reads and parses the file ("-": standard input, model paths relative to the working folder).
SweepGrid load_sweep_grid(const std::filesystem::path& path);
// The grid as sweep.json records it: {"model", "axes": [{"name", "values"}], "metrics", "x"}.
nlohmann::json grid_to_json(const SweepGrid& grid);

struct AxisValue {
  std::string axis;
  nlohmann::json value;
};

// One combination of axis values: the index-th of the cross product.
struct SweepPoint {
  std::size_t index = 0;
  std::vector<AxisValue> values;  // one per axis of the grid, in the grid's axis order

  const nlohmann::json* find(std::string_view axis) const;  // nullptr when the grid lacks it
  // "devices=4 shard=tensor buffers=2" (strings unquoted)
  std::string label() const;
};

// The index-th point (0 <= index < point_count()): mixed-radix digits, the last axis fastest.
SweepPoint sweep_point(const SweepGrid& grid, std::size_t index);
std::vector<SweepPoint> sweep_points(const SweepGrid& grid);

// Runs one point and returns its results: a flat JSON object of numbers, bools and strings whose
// keys are names of letters, digits, '_', '-' and '.' (they become CSV columns and file names).
// Throws on failure; the engine adds the point to the message.
using PointRunner = std::function<nlohmann::json(const SweepPoint&)>;

struct SweepRow {
  SweepPoint point;
  nlohmann::json results;  // the runner's object
};

// Rows in point order. A complete table has every point of its grid; the table of one rank of a
// distributed sweep has only that rank's points (merge_sweep_tables joins them).
struct SweepTable {
  std::vector<SweepRow> rows;

  // The result names, in first-seen order over the rows (keys of one row in JSON object order).
  std::vector<std::string> result_names() const;
};

struct SweepOptions {
  unsigned jobs = 1;  // points run at once on this rank (threads)
  unsigned rank = 0;  // this process runs the points i with i % world_size == rank
  unsigned world_size = 1;
  // Called after each point of this rank finishes (from the thread that ran it, one at a time).
  std::function<void(std::size_t done, std::size_t total)> progress;
};

// Runs this rank's points, `jobs` at a time, and returns their rows in point order: the same table
// for every job count. When a runner throws, no further point starts, the running ones finish,
// and the failure of the lowest-numbered point - the one a single job would have met first - is
// thrown as Error "sweep point 7 (devices=4 shard=tensor): <cause>". A named metric (grid.metrics)
// that a point does not return as a number is such an error too, so a typo stops the sweep at
// its first point instead of after the last.
SweepTable run_sweep(const SweepGrid& grid, const PointRunner& runner, const SweepOptions& options = {});

// The tables of every rank joined into the grid's complete table. Throws Error naming the point
// that no table has, or that two have.
SweepTable merge_sweep_tables(const SweepGrid& grid, const std::vector<SweepTable>& tables);

// A table as JSON and back, so that ranks can send their rows to rank 0:
// {"axes": ["buffers", ...], "rows": [{"point": 0, "values": {...}, "results": {...}}]}.
// table_from_json checks every row against the grid (its point and values) and throws Error
// "<source>: /rows/3/values: ..." otherwise.
nlohmann::json table_to_json(const SweepTable& table, const SweepGrid& grid);
SweepTable table_from_json(const nlohmann::json& table, const SweepGrid& grid, std::string_view source = "sweep table");

// The files of write_sweep_outputs, each as text, for callers (and tests) that want one of them.
// sweep.csv: axis columns, then result columns in result_names() order; RFC 4180 quoting.
std::string sweep_csv(const SweepTable& table, const SweepGrid& grid);
// sweep.json and `tpuemu sweep --json`: {"grid": grid_to_json, "axes", "rows"} (table_to_json).
nlohmann::json sweep_json(const SweepTable& table, const SweepGrid& grid);
// The metrics that get a plot: grid.metrics, or every result that is a number in some row.
std::vector<std::string> plotted_metrics(const SweepTable& table, const SweepGrid& grid);
// plot-<metric>.svg: a line chart over the x axis (sweep_plot.cpp).
std::string sweep_plot_svg(const SweepTable& table, const SweepGrid& grid, std::string_view metric);
// The table as aligned text columns, for the terminal.
std::string format_sweep_table(const SweepTable& table, const SweepGrid& grid);

// Stages sweep.csv, sweep.json and plot-<metric>.svg in out_dir (created if absent) in outputs,
// which publishes them with the command's other outputs, all or nothing (output_transaction.h).
// Every file is made in memory before any is staged. Returns the file names. Throws Error
// unless the table is complete.
std::vector<std::string> stage_sweep_outputs(const SweepTable& table, const SweepGrid& grid,
                                             const std::filesystem::path& out_dir, OutputTransaction& outputs);
// The same as a transaction of its own, committed: out_dir as it was after any failure.
std::vector<std::string> write_sweep_outputs(const SweepTable& table, const SweepGrid& grid,
                                             const std::filesystem::path& out_dir);

}  // namespace tpuemu::sweep
