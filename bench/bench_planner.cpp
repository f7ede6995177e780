// Offline planner (docs/planner.md) on tight guillotine instances (tests/unit/planner_instances.h:
// peak live bytes == capacity at every time step, a placement within the capacity exists):
//
//   BM_Plan/<buffers>/<seed>   one plan_buffers() call, 30 s search budget
//
// Counters: nodes (search nodes), greedy_pct (greedy height over the capacity, %: what
// decreasing-size best fit alone would need), solved (1 if the search placed everything within
// the capacity before its budget). A placement that fails check_placement fails the binary; a
// timeout is a figure, not a failure. A summary table follows the benchmark output.
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "../tests/unit/planner_instances.h"
#include "tpuemu/alloc/planner.h"

namespace {

using namespace tpuemu::alloc;

struct Figure {
  std::size_t buffers = 0;
  std::uint64_t seed = 0;
  double seconds = 0, greedy_pct = 0;
  std::uint64_t nodes = 0;
  PlanStatus status = PlanStatus::Infeasible;
};
std::map<std::pair<std::size_t, std::uint64_t>, Figure>& figures() {
  static std::map<std::pair<std::size_t, std::uint64_t>, Figure> f;
  return f;
}
int failures = 0;
constexpr double kBudgetSeconds = 30;

void BM_Plan(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(0));
  const auto seed = static_cast<std::uint64_t>(state.range(1));
  const auto inst = testing::guillotine_instance(count, seed);
  PlanResult r;
  for (auto _ : state) {
    r = plan_buffers(inst.buffers, {.capacity = inst.capacity, .timeout_seconds = kBudgetSeconds});
  }
  if (r.status == PlanStatus::Solved) {
    if (const auto problem = check_placement(inst.buffers, r.offsets, inst.capacity)) {
      ++failures;
      state.SkipWithError(problem->c_str());
      return;
    }
  }
  Figure& f = figures()[{count, seed}];
  f = {count, seed, r.seconds, 100.0 * (static_cast<double>(r.greedy_height) / static_cast<double>(inst.capacity) - 1),
       r.search_nodes, r.status};
  state.counters["nodes"] = static_cast<double>(r.search_nodes);
  state.counters["greedy_pct"] = f.greedy_pct;
  state.counters["solved"] = r.status == PlanStatus::Solved ? 1 : 0;
}

void print_summary() {
  if (figures().empty()) return;
  fmt::print("\nOffline planner on tight guillotine instances (peak live == capacity), budget {:g} s\n", kBudgetSeconds);
  fmt::print("{:>7} {:>5} {:>13} {:>10} {:>12} {:>10}\n", "buffers", "seed", "greedy over", "result", "seconds", "nodes");
  std::map<std::size_t, std::pair<int, int>> solved;  // buffers -> (solved, total)
  for (const auto& [key, f] : figures()) {
    const char* what = f.status == PlanStatus::Solved ? "solved" : f.status == PlanStatus::Timeout ? "timeout" : "infeasible";
    fmt::print("{:>7} {:>5} {:>12.1f}% {:>10} {:>12.3f} {:>10}\n", f.buffers, f.seed, f.greedy_pct, what, f.seconds, f.nodes);
    auto& s = solved[f.buffers];
    s.first += f.status == PlanStatus::Solved;
    ++s.second;
  }
  for (const auto& [n, s] : solved) fmt::print("{} buffers: {}/{} solved within {:g} s\n", n, s.first, s.second, kBudgetSeconds);
}

}  // namespace

int main(int argc, char** argv) {
  for (const int count : {150, 300, 450}) {
    for (int seed = 1; seed <= 6; ++seed) {
      benchmark::RegisterBenchmark("BM_Plan", BM_Plan)
          ->Args({count, seed})
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  print_summary();
  benchmark::Shutdown();
  if (failures != 0) {
    std::fprintf(stderr, "\n*** %d invalid placement(s)\n", failures);
    return 1;
  }
  return 0;
}
