// SPDX-License-Identifier: Apache-2.0
// The simple memory's timing (sim/src/memory_model.cpp, the `simple` HBM model of a preset) in
// closed form for the TLM target: a fixed latency, a bandwidth cap as a token bucket of two
// beats refilled every cycle, in-order responses at most one per cycle, optional random
// back-pressure. The state is advanced lazily to each request's cycle, so idle cycles cost
// nothing (except with back-pressure, whose dice are rolled per cycle as the RTL harness does).
#pragma once

#include <cstdint>
#include <random>

#include "tpuemu/tlm/beat_timing.h"

namespace tpuemu::tlm {

struct SimpleTimingConfig {
  std::uint32_t beat_bytes = 0;
  std::uint32_t latency_cycles = 0;
  std::uint32_t bytes_per_cycle = 0;        // in [1, beat_bytes]
  std::uint32_t backpressure_permille = 0;  // chance per cycle that the port refuses a request
  std::uint64_t seed = 1;
};

class SimpleTiming final : public BeatTimingModel {
 public:
  // Throws std::invalid_argument for a bandwidth outside [1, beat_bytes].
  explicit SimpleTiming(const SimpleTimingConfig& config);
  BeatTiming access(std::uint64_t cycle, bool write, std::uint64_t addr) override;

 private:
  void end_cycle();  // the bucket refills, the dice roll: the port's ready for the next cycle
  SimpleTimingConfig config_;
  std::uint64_t now_ = 0;  // the cycle tokens_ and ready_ hold for
  std::uint64_t tokens_ = 0;
  bool ready_ = true;
  std::uint64_t last_read_due_ = 0, last_ack_due_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace tpuemu::tlm
