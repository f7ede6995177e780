// The output folder of a sweep, all or nothing: a sweep can take hours, and a folder with a new
// sweep.csv beside the plots of the previous sweep would mislead whoever opens it.
#include <unistd.h>

#include <random>
#include <system_error>

#include <fmt/format.h>

#include "tpuemu/base/atomic_file.h"
#include "tpuemu/sweep/sweep.h"

namespace tpuemu::sweep {
namespace {

namespace fs = std::filesystem;

// A new folder on out_dir's file system where every output is written (each with the project's
// atomic writer) before any of them reaches out_dir. commit() then only renames: out_dir itself
// when it did not exist (it appears whole), else each file into it. Destroyed without commit() -
// a failed write, a full disk - it removes what it wrote and the folders it created.
class StagingFolder {
 public:
  explicit StagingFolder(fs::path out_dir) : out_dir_(std::move(out_dir)) {
    if (!out_dir_.has_filename()) out_dir_ = out_dir_.parent_path();  // "out/" is "out"
    std::error_code ec;
    const fs::file_status status = fs::status(out_dir_, ec);
    out_dir_existed_ = fs::exists(status);
    if (out_dir_existed_ && !fs::is_directory(status)) throw Error(out_dir_.string(), "exists and is not a directory");
    fs::path parent = out_dir_existed_ ? out_dir_ : out_dir_.parent_path();
    if (parent.empty()) parent = ".";
    // The folders above out_dir that this creates, removed again unless the sweep is committed.
    for (fs::path p = parent; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) created_root_ = p;
    fs::create_directories(parent, ec);
    if (ec) throw Error(parent.string(), fmt::format("cannot create the output directory: {}", ec.message()));
    // A name no other process picks: pid and a random number; taken names are tried again.
    std::random_device entropy;
    for (int attempt = 0; attempt < 16 && staging_.empty(); ++attempt) {
      const fs::path candidate =
          parent / fmt::format(".{}.staging-{}-{:08x}", out_dir_.filename().string(), ::getpid(), entropy());
      if (fs::create_directory(candidate, ec)) staging_ = candidate;
      if (ec) throw Error(candidate.string(), fmt::format("cannot create the staging directory: {}", ec.message()));
    }
    if (staging_.empty()) throw Error(parent.string(), "cannot find a free name for the staging directory");
  }
  StagingFolder(const StagingFolder&) = delete;
  StagingFolder& operator=(const StagingFolder&) = delete;
  ~StagingFolder() {
    std::error_code ignored;  // nothing to report from a destructor: the error that got here is thrown
    if (!staging_.empty()) fs::remove_all(staging_, ignored);
    if (!committed_ && !created_root_.empty()) fs::remove_all(created_root_, ignored);
  }

  void write(const std::string& name, std::string_view contents) { write_file_atomically(staging_ / name, contents); }

  // names: every file written.
  void commit(const std::vector<std::string>& names) {
    std::error_code ec;
    if (!out_dir_existed_) {
      fs::rename(staging_, out_dir_, ec);
      if (ec) throw Error(out_dir_.string(), fmt::format("cannot move the outputs into place: {}", ec.message()));
      staging_.clear();
    } else {
      // A directory in the way would fail its rename half-way through; find it before any move.
      for (const std::string& name : names) {
        if (fs::is_directory(fs::symlink_status(out_dir_ / name, ec))) {
          throw Error((out_dir_ / name).string(), "is a directory; the sweep's file of that name cannot replace it");
        }
      }
      for (const std::string& name : names) {
        fs::rename(staging_ / name, out_dir_ / name, ec);
        if (ec) throw Error((out_dir_ / name).string(), fmt::format("cannot move into place: {}", ec.message()));
      }
    }
    committed_ = true;
  }

 private:
  fs::path out_dir_, staging_, created_root_;
  bool out_dir_existed_ = false, committed_ = false;
};

bool is_complete(const SweepTable& table, const SweepGrid& grid) {
  if (table.rows.size() != grid.point_count()) return false;
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    if (table.rows[i].point.index != i) return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> write_sweep_outputs(const SweepTable& table, const SweepGrid& grid, const fs::path& out_dir) {
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
  StagingFolder staging(out_dir);
  std::vector<std::string> names;
  for (const auto& [name, contents] : files) {
    staging.write(name, contents);
    names.push_back(name);
  }
  staging.commit(names);
  return names;
}

}  // namespace tpuemu::sweep
