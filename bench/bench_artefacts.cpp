// SPDX-License-Identifier: Apache-2.0
// What the artefacts of `tpuemu run MODEL --out DIR` cost (docs/profile.md): the wall time of the
// same run of examples/cnn.json on `default` with and without --out, measured side by side in
// every iteration (the two commands alternate, so drift of the machine hits both), as the user
// sees it: the tpuemu binary started as a process. Counters: seconds without and with the
// artefacts per run, and the overhead in per cent (the target: under 10 %).
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

namespace {

// Runs argv to completion; false if it could not start or did not exit 0.
bool run_process(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

double seconds_of(const std::vector<std::string>& args, benchmark::State& state) {
  const auto t0 = std::chrono::steady_clock::now();
  if (!run_process(args)) state.SkipWithError(fmt::format("'{} {}' failed", args[0], args[1]).c_str());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void BM_ArtefactCost(benchmark::State& state, const std::string& preset) {
  const std::string model = TPUEMU_SOURCE_DIR "/examples/cnn.json";
  const std::filesystem::path out = std::filesystem::temp_directory_path() / fmt::format("tpuemu-bench-{}", getpid());
  const std::vector<std::string> plain = {TPUEMU_BINARY, "run", model, "--preset", preset, "-q"};
  std::vector<std::string> with = plain;
  with.insert(with.end(), {"--out", out.string()});
  double without_s = 0, with_s = 0;
  for (auto _ : state) {
    without_s += seconds_of(plain, state);
    with_s += seconds_of(with, state);
  }
  std::filesystem::remove_all(out);
  const double n = static_cast<double>(state.iterations());
  state.counters["without_s"] = without_s / n;
  state.counters["with_out_s"] = with_s / n;
  state.counters["overhead_pct"] = 100.0 * (with_s - without_s) / without_s;
}

BENCHMARK_CAPTURE(BM_ArtefactCost, cnn_default, std::string("default"))->Unit(benchmark::kSecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_ArtefactCost, cnn_small, std::string("small"))->Unit(benchmark::kSecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
