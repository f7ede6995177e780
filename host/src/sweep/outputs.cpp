// SPDX-License-Identifier: Apache-2.0
// The output folder of a sweep, all or nothing: a sweep can take hours, and a folder with a new
// sweep.csv beside the plots of the previous sweep would mislead whoever opens it. The staging
// (a folder beside out_dir, or temporary names in it) is the project's output transaction.
#include <fmt/format.h>

#include "tpuemu/sweep/sweep.h"

namespace tpuemu::sweep {
namespace {

namespace fs = std::filesystem;

bool is_complete(const SweepTable& table, const SweepGrid& grid) {
  if (table.rows.size() != grid.point_count()) return false;
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    if (table.rows[i].point.index != i) return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> stage_sweep_outputs(const SweepTable& table, const SweepGrid& grid, const fs::path& out_dir,
                                             OutputTransaction& outputs) {
  if (!is_complete(table, grid)) {
    throw Error(fmt::format("sweep: the table has {} of the grid's {} points (merge the ranks' tables first)",
                            table.rows.size(), grid.point_count()));
  }
  // Every file is made before anything is written: a plot that cannot be drawn writes nothing.
  std::vector<std::pair<std::string, std::string>> files;
  files.emplace_back("sweep.csv", sweep_csv(table, grid));
  files.emplace_back("sweep.json",
                     sweep_json(table, grid).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  for (const std::string& metric : plotted_metrics(table, grid)) {
    files.emplace_back(fmt::format("plot-{}.svg", metric), sweep_plot_svg(table, grid, metric));
  }
  std::vector<std::string> names;
  for (auto& [name, contents] : files) {
    outputs.add_file_in(out_dir, name, std::move(contents));
    names.push_back(name);
  }
  return names;
}

std::vector<std::string> write_sweep_outputs(const SweepTable& table, const SweepGrid& grid, const fs::path& out_dir) {
  OutputTransaction outputs;
  std::vector<std::string> names = stage_sweep_outputs(table, grid, out_dir, outputs);
  outputs.commit();
  return names;
}

}  // namespace tpuemu::sweep
