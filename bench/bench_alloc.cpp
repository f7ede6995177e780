// SPDX-License-Identifier: Apache-2.0
// Allocation policies (tpuemu/alloc/allocator.h): how fast each one places and frees blocks, and
// (to come) how much fragmentation each leaves on the traces shipped in examples/traces.
//
//   BM_AllocFree/<policy>   alloc+free pairs per second on a synthetic mixed trace
//
// main() prints one summary line per policy after the run, against the targets of
// docs/benchmarks.md (BFC >= 5 M pairs/s, TLSF >= 10 M pairs/s on one core).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <time.h>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "tpuemu/alloc/allocator.h"

namespace {

using tpuemu::alloc::Allocation;
using tpuemu::alloc::make_allocator;

// CPU time of this thread, like the benchmark library's own CPU column: on a shared machine wall
// time would measure the neighbours.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Measured pairs/s (per CPU second) of the last, longest, run of each policy, for the summary.
std::map<std::string, double>& measured_rates() {
  static std::map<std::string, double> rates;
  return rates;
}

std::optional<double> target_rate(const std::string& policy) {
  if (policy == "bfc") return 5e6;
  if (policy == "tlsf") return 10e6;
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Throughput: a mixed trace with a sliding window of kLive live blocks. Each step frees one
// randomly chosen live block and allocates the next size of the trace into its slot, so the free
// order is not LIFO and the free space stays fragmented. Sizes are log-uniform 256 B .. 1 MiB with
// a fifth of them small (1 .. 256 B); the capacity is large enough that nothing ever fails, so the
// figure is the cost of placement alone. Generated once, with a fixed seed, shared by all policies.
// ---------------------------------------------------------------------------------------------
constexpr std::size_t kLive = 1000;
constexpr std::size_t kTraceLength = std::size_t{1} << 16;
constexpr std::uint64_t kCapacity = std::uint64_t{4} << 30;

struct MixedTrace {
  std::vector<std::uint64_t> sizes;    // kTraceLength requests, cycled
  std::vector<std::uint32_t> victims;  // slot freed before each request
};

const MixedTrace& mixed_trace() {
  static const MixedTrace trace = [] {
    MixedTrace t;
    std::mt19937_64 rng(20240611);
    std::uniform_real_distribution<double> unit(0, 1), log_size(8, 20);
    std::uniform_int_distribution<std::uint64_t> small(1, 256);
    std::uniform_int_distribution<std::uint32_t> slot(0, kLive - 1);
    for (std::size_t i = 0; i < kTraceLength; ++i) {
      t.sizes.push_back(unit(rng) < 0.2 ? small(rng)
                                        : static_cast<std::uint64_t>(std::exp2(log_size(rng))));
      t.victims.push_back(slot(rng));
    }
    return t;
  }();
  return trace;
}

void BM_AllocFree(benchmark::State& state, const std::string& policy) {
  const MixedTrace& trace = mixed_trace();
  auto allocator = make_allocator(policy, {kCapacity});
  std::vector<Allocation> live(kLive);
  std::size_t next = 0;
  for (auto& slot : live) {
    const auto got = allocator->allocate(trace.sizes[next++], 1);
    if (!got) {
      state.SkipWithError(fmt::format("{}: the initial window does not fit", policy).c_str());
      return;
    }
    slot = *got;
  }
  std::size_t step = 0;
  bool failed = false;
  const double start = thread_cpu_seconds();
  for (auto _ : state) {
    Allocation& slot = live[trace.victims[step]];
    allocator->deallocate(slot);
    const auto got = allocator->allocate(trace.sizes[step], 1);
    if (!got) {
      failed = true;
      break;
    }
    slot = *got;
    if (++step == kTraceLength) step = 0;
  }
  const double seconds = thread_cpu_seconds() - start;
  if (failed) {
    state.SkipWithError(fmt::format("{}: allocation failed on a trace that fits", policy).c_str());
    return;
  }
  for (const auto& slot : live) allocator->deallocate(slot);
  const auto pairs = static_cast<std::int64_t>(state.iterations());
  state.SetItemsProcessed(pairs);
  state.counters["pairs_per_s"] = benchmark::Counter(static_cast<double>(pairs),
                                                     benchmark::Counter::kIsRate);
  if (seconds > 0) measured_rates()[policy] = static_cast<double>(pairs) / seconds;
}

void register_throughput() {
  for (const std::string& policy : tpuemu::alloc::allocator_names()) {
    benchmark::RegisterBenchmark(("BM_AllocFree/" + policy).c_str(), BM_AllocFree, policy);
  }
}

void print_throughput_summary() {
  if (measured_rates().empty()) return;
  std::printf("\nalloc+free throughput (mixed trace, %zu live blocks, per CPU second):\n", kLive);
  for (const std::string& policy : tpuemu::alloc::allocator_names()) {
    const auto it = measured_rates().find(policy);
    if (it == measured_rates().end()) continue;
    const double rate = it->second;
    std::string verdict = "no target";
    if (const auto target = target_rate(policy)) {
      verdict = fmt::format("{:.2f}x of target {:.0f} M/s ({})", rate / *target, *target / 1e6,
                            rate >= *target ? "met" : "MISSED");
    }
    std::printf("  %-10s %8.2f M pairs/s   %s\n", policy.c_str(), rate / 1e6, verdict.c_str());
  }
}

// ---------------------------------------------------------------------------------------------
// Fragmentation on the shipped traces (examples/traces, TPUEMU_SOURCE_DIR): to be added here,
// registered from main() like the throughput benchmarks.
// ---------------------------------------------------------------------------------------------

}  // namespace

int main(int argc, char** argv) {
  register_throughput();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  print_throughput_summary();
  return 0;
}
