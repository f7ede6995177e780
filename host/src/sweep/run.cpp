// SPDX-License-Identifier: Apache-2.0
// Running a sweep: this rank's points on `jobs` threads, results kept by point so the table does
// not depend on which thread finished first, and the ranks' tables joined.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "sweep_rules.h"
#include "tpuemu/sweep/sweep.h"

namespace tpuemu::sweep {
namespace {

std::string one_line(std::string text) {
  std::replace_if(
      text.begin(), text.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return text;
}

// The error of the lowest-numbered failed point. Points are handed out in increasing order and a
// point once taken always finishes, so when point k fails every point before k has run or is
// running: after the join, the lowest failure is the one a single job would have stopped at.
class FirstFailure {
 public:
  void record(std::size_t point, std::string message) {
    std::scoped_lock lock(mutex_);
    if (!failure_ || point < failure_->point) failure_ = Failure{point, std::move(message)};
    stop_.store(true);
  }
  bool stopped() const { return stop_.load(); }
  void rethrow() const {
    if (failure_) throw Error(failure_->message);
  }

 private:
  struct Failure {
    std::size_t point;
    std::string message;
  };
  std::mutex mutex_;
  std::optional<Failure> failure_;
  std::atomic<bool> stop_{false};
};

}  // namespace

SweepTable run_sweep(const SweepGrid& grid, const PointRunner& runner, const SweepOptions& options) {
  if (!runner) throw Error("sweep: no point runner");
  if (options.jobs == 0) throw Error("sweep: jobs must be at least 1");
  if (options.world_size == 0 || options.rank >= options.world_size) {
    throw Error(fmt::format("sweep: rank {} is not a rank of a world of {}", options.rank, options.world_size));
  }
  std::vector<std::size_t> mine;  // this rank's points, in order
  for (std::size_t i = options.rank; i < grid.point_count(); i += options.world_size) mine.push_back(i);

  std::vector<std::optional<SweepRow>> rows(mine.size());  // by position in `mine`, not by finish
  std::atomic<std::size_t> next{0};
  FirstFailure failure;
  std::mutex progress_mutex;
  std::size_t done = 0;
  auto work = [&] {
    while (!failure.stopped()) {
      const std::size_t slot = next.fetch_add(1);
      if (slot >= mine.size()) return;
      SweepPoint point = sweep_point(grid, mine[slot]);
      // Nothing may leave the thread (std::terminate): a throwing progress callback fails the point.
      try {
        nlohmann::json results = runner(point);
        check_results(grid, results);
        rows[slot] = SweepRow{point, std::move(results)};  // a copy: the catch below names the point
        if (options.progress) {
          std::scoped_lock lock(progress_mutex);
          options.progress(++done, mine.size());
        }
      } catch (const std::exception& e) {
        failure.record(point.index, fmt::format("{}: {}", point_place(point), one_line(e.what())));
        return;
      } catch (...) {
        failure.record(point.index, fmt::format("{}: an exception that is not a std::exception", point_place(point)));
        return;
      }
    }
  };
  {
    std::vector<std::jthread> workers;
    const std::size_t threads = std::min<std::size_t>(options.jobs, mine.size());
    for (std::size_t t = 0; t < threads; ++t) workers.emplace_back(work);
  }  // the jthreads join here
  failure.rethrow();

  SweepTable table;
  for (std::optional<SweepRow>& row : rows) table.rows.push_back(std::move(*row));
  return table;
}

SweepTable merge_sweep_tables(const SweepGrid& grid, const std::vector<SweepTable>& tables) {
  const std::size_t count = grid.point_count();
  std::vector<const SweepRow*> by_point(count, nullptr);
  std::vector<std::size_t> from_table(count, 0);
  for (std::size_t t = 0; t < tables.size(); ++t) {
    for (const SweepRow& row : tables[t].rows) {
      const std::size_t i = row.point.index;
      if (i >= count) throw Error(fmt::format("sweep table {}: point {} is not in the grid ({} points)", t, i, count));
      if (by_point[i] != nullptr) {
        throw Error(point_place(row.point), fmt::format("in two tables ({} and {})", from_table[i], t));
      }
      by_point[i] = &row;
      from_table[i] = t;
    }
  }
  SweepTable merged;
  for (std::size_t i = 0; i < count; ++i) {
    if (by_point[i] == nullptr) {
      throw Error(point_place(sweep_point(grid, i)), fmt::format("in none of the {} tables", tables.size()));
    }
    merged.rows.push_back(*by_point[i]);
  }
  return merged;
}

}  // namespace tpuemu::sweep
