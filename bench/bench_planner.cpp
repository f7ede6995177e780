// Offline planner (docs/planner.md) on tight guillotine instances (tests/unit/planner_instances.h:
// peak live bytes == capacity at every time step, a placement within the capacity exists):
//
//   BM_Plan/<shape>/<buffers>/<seed>   one plan_buffers() call, 30 s search budget
//
// Shapes: "minimalloc" (the default of planner_instances.h: the shape of MiniMalloc's published
// challenging benchmarks, 2^20 time steps x 1024 memory units) and "coarse" (a 2n x 2n grid,
// where buffers share endpoints and the search has a much harder time).
//
// Counters: nodes (search nodes), greedy_pct (greedy height over the capacity, %: what
// decreasing-size best fit alone would need), solved (1 if the search placed everything within
// the capacity before its budget). A placement that fails check_placement fails the binary; a
// timeout is a figure, not a failure. A summary table follows the benchmark output.
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "../tests/unit/planner_instances.h"
#include "tpuemu/plan/planner.h"

namespace {

using namespace tpuemu::alloc;

struct Figure {
  std::string shape;
  std::size_t buffers = 0;
  std::uint64_t seed = 0;
  double seconds = 0, greedy_pct = 0;
  std::uint64_t nodes = 0;
  PlanStatus status = PlanStatus::Infeasible;
};
using Key = std::tuple<std::string, std::size_t, std::uint64_t>;
std::map<Key, Figure>& figures() {
  static std::map<Key, Figure> f;
  return f;
}
int failures = 0;
constexpr double kBudgetSeconds = 30;

void BM_Plan(benchmark::State& state, const std::string& shape) {
  const auto count = static_cast<std::size_t>(state.range(0));
  const auto seed = static_cast<std::uint64_t>(state.range(1));
  const auto inst = testing::guillotine_instance(count, seed, shape == "coarse" ? testing::coarse_grid() : testing::GuillotineShape{});
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
  Figure& f = figures()[{shape, count, seed}];
  f = {shape, count, seed, r.seconds, 100.0 * (static_cast<double>(r.greedy_height) / static_cast<double>(inst.capacity) - 1),
       r.search_nodes, r.status};
  state.counters["nodes"] = static_cast<double>(r.search_nodes);
  state.counters["greedy_pct"] = f.greedy_pct;
  state.counters["solved"] = r.status == PlanStatus::Solved ? 1 : 0;
}

void print_summary() {
  if (figures().empty()) return;
  fmt::print("\nOffline planner on tight guillotine instances (peak live == capacity), budget {:g} s\n", kBudgetSeconds);
  fmt::print("{:>10} {:>7} {:>5} {:>13} {:>10} {:>12} {:>10}\n", "shape", "buffers", "seed", "greedy over", "result", "seconds", "nodes");
  std::map<std::pair<std::string, std::size_t>, std::pair<int, int>> solved;  // (shape, buffers) -> (solved, total)
  for (const auto& [key, f] : figures()) {
    const char* what = f.status == PlanStatus::Solved ? "solved" : f.status == PlanStatus::Timeout ? "timeout" : "infeasible";
    fmt::print("{:>10} {:>7} {:>5} {:>12.1f}% {:>10} {:>12.3f} {:>10}\n", f.shape, f.buffers, f.seed, f.greedy_pct, what, f.seconds, f.nodes);
    auto& s = solved[{f.shape, f.buffers}];
    s.first += f.status == PlanStatus::Solved;
    ++s.second;
  }
  for (const auto& [key, s] : solved) {
    fmt::print("{:>10} {} buffers: {}/{} solved within {:g} s\n", key.first, key.second, s.first, s.second, kBudgetSeconds);
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (const std::string shape : {"minimalloc", "coarse"}) {
    for (const int count : {150, 300, 450, 600}) {
      if (shape == "coarse" && count > 450) continue;
      for (int seed = 1; seed <= 6; ++seed) {
        benchmark::RegisterBenchmark(fmt::format("BM_Plan/{}", shape).c_str(),
                                     [shape](benchmark::State& st) { BM_Plan(st, shape); })
            ->Args({count, seed})
            ->Iterations(1)
            ->Unit(benchmark::kMillisecond);
      }
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
