// SPDX-License-Identifier: Apache-2.0
// The tlm backend's HBM timing model (sim/tlm, docs/hbm-trace.md) alone: wall time per core
// memory beat through make_hbm_beat_timing, as the tlm backend calls it (one access per beat, the
// next beat presented the cycle after the previous accept).
//
//   BM_HbmBeatTiming/<set>/<beat>/stream   sequential reads from address 0
//   BM_HbmBeatTiming/<set>/<beat>/random   uniformly random reads over 256 MiB (seed 11)
//   BM_HbmBeatTiming/<set>/<beat>/mixed    uniformly random reads and writes, half each (seed 11)
//
// Counter ns_per_beat: wall time of the run over its beats (the model built fresh each iteration).
// Label: a hash of every (accept, done) pair, which must not change when the model is only made
// faster (tests/unit/test_hbm_timing_golden.cpp pins the exact timings in ctest).
// The tlm backend needs well under ~100 ns per beat (about 100x the Verilated core).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <utility>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "tpuemu/config/hbm_config.h"
#include "tpuemu/sim_setup/hbm_setup.h"
#include "tpuemu/tlm/hbm_beat_timing.h"

namespace {

constexpr std::uint64_t kCapacity = 256ull << 20;
constexpr std::size_t kBeats = 20'000;

enum class Pattern { Stream, Random, Mixed };

struct Beat {
  bool write;
  std::uint64_t addr;
};

std::vector<Beat> beats(Pattern p, std::uint32_t beat_bytes) {
  std::mt19937_64 rng(11);
  std::vector<Beat> out;
  out.reserve(kBeats);
  for (std::size_t i = 0; i < kBeats; ++i) {
    switch (p) {
      case Pattern::Stream: out.push_back({false, i * beat_bytes % kCapacity}); break;
      case Pattern::Random: out.push_back({false, (rng() % (kCapacity / beat_bytes)) * beat_bytes}); break;
      case Pattern::Mixed: {
        const bool write = (rng() & 1) != 0;
        out.push_back({write, (rng() % (kCapacity / beat_bytes)) * beat_bytes});
        break;
      }
    }
  }
  return out;
}

void BM_HbmBeatTiming(benchmark::State& state, const std::string& set_name, double ratio,
                      std::uint32_t beat_bytes, Pattern pattern) {
  const tpuemu::sim::hbm::HbmSetup setup = tpuemu::hbm_setup_from(tpuemu::load_hbm_timing_set(set_name));
  const std::vector<Beat> seq = beats(pattern, beat_bytes);
  double ns = 0;
  std::uint64_t runs = 0, hash = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto model = tpuemu::tlm::make_hbm_beat_timing(setup, ratio, beat_bytes, kCapacity);
    std::uint64_t presented = 0, h = 0xcbf29ce484222325ull;
    for (const Beat& b : seq) {
      const tpuemu::tlm::BeatTiming t = model->access(presented, b.write, b.addr);
      // One multiply per word rather than per byte: enough to tell runs apart, cheap to time.
      h = (h ^ t.accept) * 0x100000001b3ull;
      h = (h ^ t.done) * 0x100000001b3ull;
      presented = t.accept + 1;
    }
    benchmark::DoNotOptimize(h);
    ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    ++runs;
    hash = h;
  }
  state.counters["ns_per_beat"] = ns / static_cast<double>(runs * seq.size());
  char label[32];
  std::snprintf(label, sizeof label, "hash %016llx", static_cast<unsigned long long>(hash));
  state.SetLabel(label);
}

// The default preset's 1 GHz core over each set's tCK, as the tlm backend runs them.
void register_all() {
  struct Set {
    const char* name;
    double ratio;
  };
  for (const Set set : {Set{"hbm2-2000", 1.0}, Set{"hbm2e-3200", 1.6}}) {
    for (const std::uint32_t beat : {16u, 128u}) {
      for (const auto& [pattern, pname] : {std::pair{Pattern::Stream, "stream"}, std::pair{Pattern::Random, "random"},
                                           std::pair{Pattern::Mixed, "mixed"}}) {
        const std::string name =
            std::string("BM_HbmBeatTiming/") + set.name + "/" + std::to_string(beat) + "/" + pname;
        benchmark::RegisterBenchmark(name.c_str(), BM_HbmBeatTiming, std::string(set.name), set.ratio, beat, pattern)
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
