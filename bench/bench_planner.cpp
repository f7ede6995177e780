// SPDX-License-Identifier: Apache-2.0
// Offline planner (docs/allocation.md) on tight guillotine instances (tests/unit/planner_instances.h:
// peak live bytes == capacity at every time step, a placement within the capacity exists):
//
//   BM_Plan/<shape>/<rules>/<buffers>/<seed>   one plan_buffers() call, 30 s search budget
//
// Shapes: "minimalloc" (the default of planner_instances.h: the shape of MiniMalloc's published
// challenging benchmarks, 2^20 time steps x 1024 memory units) and "coarse" (a 2n x 2n grid,
// where buffers share endpoints and the search has a much harder time).
//
// Counters: nodes (search nodes), greedy_pct (greedy height over the capacity, %: what
// decreasing-size best fit alone would need), solved (1 if the search placed everything within
// the capacity before its budget). A placement that fails check_placement fails the binary; a
// timeout is a figure, not a failure. A summary table follows the benchmark output.
//
//   BM_Corpus/<file>/<order>/<rules>   the planner corpus (tests/data/planner, corpus.json gives
//                                      each file's capacity and whether it is feasible)
//   BM_External/<file>/<order>/<rules> with --external DIR: every *.csv of DIR (MiniMalloc format,
//                                      e.g. its benchmarks/challenging) at --external-capacity N
//                                      (default 1048576, the challenging set's)
// Orders: sorted (by lower), file (as stored), shuffled (seed 7). Rules: all (the default search)
// or one rule off: gcd (PlanOptions::supported_raise), no-dominance, no-staircase, no-portfolio,
// so each rule is measured alone. A feasible instance that ends infeasible, or an infeasible one
// that ends solved, fails the binary.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <utility>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../tests/unit/planner_instances.h"
#include "tpuemu/plan/planner.h"

namespace {

using namespace tpuemu::plan;

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

// The search's rules, all on or one of them off, so each is measured alone.
const std::vector<std::string> kRuleSets = {"all", "gcd", "no-dominance", "no-staircase", "no-portfolio"};
PlanOptions options_for(const std::string& rules, std::uint64_t capacity) {
  return {.capacity = capacity, .timeout_seconds = kBudgetSeconds, .supported_raise = rules != "gcd",
          .dominance = rules != "no-dominance", .staircase = rules != "no-staircase",
          .portfolio = rules != "no-portfolio"};
}

void BM_Plan(benchmark::State& state, const std::string& shape, const std::string& rules) {
  const auto count = static_cast<std::size_t>(state.range(0));
  const auto seed = static_cast<std::uint64_t>(state.range(1));
  const auto inst = testing::guillotine_instance(count, seed, shape == "coarse" ? testing::coarse_grid() : testing::GuillotineShape{});
  PlanResult r;
  for (auto _ : state) {
    r = plan_buffers(inst.buffers, options_for(rules, inst.capacity));
  }
  if (r.status == PlanStatus::Solved) {
    if (const auto problem = check_placement(inst.buffers, r.offsets, inst.capacity)) {
      ++failures;
      state.SkipWithError(problem->c_str());
      return;
    }
  }
  const std::string label = shape + (rules == "all" ? "" : "/" + rules);
  Figure& f = figures()[{label, count, seed}];
  f = {label, count, seed, r.seconds, 100.0 * (static_cast<double>(r.greedy_height) / static_cast<double>(inst.capacity) - 1),
       r.search_nodes, r.status};
  state.counters["nodes"] = static_cast<double>(r.search_nodes);
  state.counters["greedy_pct"] = f.greedy_pct;
  state.counters["solved"] = r.status == PlanStatus::Solved ? 1 : 0;
}

// ---- corpus and external instances, in three row orders
struct FileRun {
  std::string set, file, order, raise;
  PlanStatus status = PlanStatus::Infeasible;
  double seconds = 0;
  std::uint64_t nodes = 0;
};
std::vector<FileRun>& file_runs() {
  static std::vector<FileRun> r;
  return r;
}

std::vector<PlanBuffer> in_order(std::vector<PlanBuffer> rows, const std::string& order) {
  if (order == "sorted") {
    std::stable_sort(rows.begin(), rows.end(), [](const PlanBuffer& a, const PlanBuffer& b) { return a.lower < b.lower; });
  } else if (order == "shuffled") {
    std::mt19937_64 rng(7);
    std::shuffle(rows.begin(), rows.end(), rng);
  }
  return rows;
}

void register_file(const std::string& set, const std::filesystem::path& path, std::uint64_t capacity,
                   std::optional<bool> feasible) {
  for (const std::string order : {"sorted", "file", "shuffled"}) {
    for (const std::string& raise : kRuleSets) {
      const std::string name = fmt::format("BM_{}/{}/{}/{}", set, path.filename().string(), order, raise);
      benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
        const auto rows = in_order(read_plan_csv(path), order);
        PlanResult r;
        for (auto _ : state) {
          r = plan_buffers(rows, options_for(raise, capacity));
        }
        if (r.status == PlanStatus::Solved) {
          if (const auto problem = check_placement(rows, r.offsets, capacity)) {
            ++failures;
            state.SkipWithError(problem->c_str());
            return;
          }
        }
        if (feasible && r.status != PlanStatus::Timeout && (r.status == PlanStatus::Solved) != *feasible) {
          ++failures;
          state.SkipWithError(*feasible ? "a feasible instance was proved infeasible" : "an infeasible instance was solved");
          return;
        }
        file_runs().push_back({set, path.filename().string(), order, raise, r.status, r.seconds, r.search_nodes});
        state.counters["nodes"] = static_cast<double>(r.search_nodes);
        state.counters["solved"] = r.status == PlanStatus::Solved ? 1 : 0;
      })->Iterations(1)->Unit(benchmark::kMillisecond);
    }
  }
}

void print_file_summary() {
  if (file_runs().empty()) return;
  fmt::print("\nPlanner corpus / external instances, budget {:g} s each\n", kBudgetSeconds);
  fmt::print("{:<9} {:<26} {:>9} {:>12} {:>11} {:>10} {:>12}\n", "set", "file", "order", "rules", "result", "seconds", "nodes");
  struct Total {
    int solved = 0, infeasible = 0, count = 0;
    double seconds = 0;
    std::uint64_t nodes = 0;
  };
  std::map<std::tuple<std::string, std::string, std::string>, Total> totals;
  for (const FileRun& f : file_runs()) {
    const char* what = f.status == PlanStatus::Solved ? "solved" : f.status == PlanStatus::Timeout ? "timeout" : "infeasible";
    fmt::print("{:<9} {:<26} {:>9} {:>12} {:>11} {:>10.3f} {:>12}\n", f.set, f.file, f.order, f.raise, what, f.seconds, f.nodes);
    Total& t = totals[{f.set, f.raise, f.order}];
    t.solved += f.status == PlanStatus::Solved;
    t.infeasible += f.status == PlanStatus::Infeasible;
    ++t.count;
    t.seconds += f.seconds;
    t.nodes += f.nodes;
  }
  for (const auto& [key, t] : totals) {
    fmt::print("{:<9} rules {:<12} order {:<8}: {}/{} solved, {} proved infeasible, {} timed out; {:.2f} s, {} nodes in all\n",
               std::get<0>(key), std::get<1>(key), std::get<2>(key), t.solved, t.count, t.infeasible,
               t.count - t.solved - t.infeasible, t.seconds, t.nodes);
  }
}

void print_summary() {
  if (figures().empty()) return;
  fmt::print("\nOffline planner on tight guillotine instances (peak live == capacity), budget {:g} s\n", kBudgetSeconds);
  fmt::print("{:>14} {:>7} {:>5} {:>13} {:>10} {:>12} {:>10}\n", "shape", "buffers", "seed", "greedy over", "result", "seconds", "nodes");
  std::map<std::pair<std::string, std::size_t>, std::pair<int, int>> solved;  // (shape, buffers) -> (solved, total)
  for (const auto& [key, f] : figures()) {
    const char* what = f.status == PlanStatus::Solved ? "solved" : f.status == PlanStatus::Timeout ? "timeout" : "infeasible";
    fmt::print("{:>14} {:>7} {:>5} {:>12.1f}% {:>10} {:>12.3f} {:>10}\n", f.shape, f.buffers, f.seed, f.greedy_pct, what, f.seconds, f.nodes);
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
  // Our own flags, taken out before Google Benchmark sees the rest.
  std::optional<std::filesystem::path> external;
  std::uint64_t external_capacity = 1048576;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--external" || a == "--external-capacity") && i + 1 >= argc) {
      std::fprintf(stderr, "bench_planner: %s needs a value\n", a.c_str());
      return 2;
    }
    if (a == "--external") {
      external = argv[++i];
      if (!std::filesystem::is_directory(*external)) {
        std::fprintf(stderr, "bench_planner: --external %s is not a directory\n", external->c_str());
        return 2;
      }
    } else if (a == "--external-capacity") {
      const std::string v = argv[++i];
      if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos) {
        std::fprintf(stderr, "bench_planner: --external-capacity '%s' is not a byte count\n", v.c_str());
        return 2;
      }
      external_capacity = std::stoull(v);
    } else {
      rest.push_back(argv[i]);
    }
  }
  argc = static_cast<int>(rest.size());
  argv = rest.data();
  {
    const std::filesystem::path dir = std::filesystem::path(TPUEMU_SOURCE_DIR) / "tests/data/planner";
    std::ifstream in(dir / "corpus.json");
    const nlohmann::json manifest = nlohmann::json::parse(in);
    for (const auto& e : manifest.at("instances")) {
      register_file("Corpus", dir / e.at("file").get<std::string>(), e.at("capacity").get<std::uint64_t>(),
                    e.at("feasible").get<bool>());
    }
  }
  if (external) {
    std::vector<std::filesystem::path> files;
    for (const auto& f : std::filesystem::directory_iterator(*external)) {
      if (f.path().extension() == ".csv") files.push_back(f.path());
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
      std::fprintf(stderr, "bench_planner: --external %s holds no .csv file\n", external->c_str());
      return 2;
    }
    for (const auto& f : files) register_file("External", f, external_capacity, std::nullopt);
  }
  for (const std::string shape : {"minimalloc", "coarse"}) {
    for (const int count : {150, 300, 450, 600}) {
      if (shape == "coarse" && count > 450) continue;
      for (int seed = 1; seed <= 6; ++seed) {
        for (const std::string& rules : kRuleSets) {
          benchmark::RegisterBenchmark(fmt::format("BM_Plan/{}/{}", shape, rules).c_str(),
                                       [shape, rules](benchmark::State& st) { BM_Plan(st, shape, rules); })
              ->Args({count, seed})
              ->Iterations(1)
              ->Unit(benchmark::kMillisecond);
        }
      }
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  print_summary();
  print_file_summary();
  benchmark::Shutdown();
  if (failures != 0) {
    std::fprintf(stderr, "\n*** %d invalid placement(s)\n", failures);
    return 1;
  }
  return 0;
}
