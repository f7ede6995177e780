// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/tlm/simple_timing.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace tpuemu::tlm {

SimpleTiming::SimpleTiming(const SimpleTimingConfig& config) : config_(config), rng_(config.seed) {
  if (config_.bytes_per_cycle == 0 || config_.bytes_per_cycle > config_.beat_bytes) {
    throw std::invalid_argument("simple memory: bytes_per_cycle " + std::to_string(config_.bytes_per_cycle) +
                                " must be in [1, " + std::to_string(config_.beat_bytes) + "] (one beat per cycle)");
  }
  tokens_ = config_.beat_bytes;
}

void SimpleTiming::end_cycle() {
  tokens_ = std::min<std::uint64_t>(tokens_ + config_.bytes_per_cycle, 2ull * config_.beat_bytes);
  ready_ = tokens_ >= config_.beat_bytes;
  if (ready_ && config_.backpressure_permille != 0) ready_ = (rng_() % 1000) >= config_.backpressure_permille;
  ++now_;
}

BeatTiming SimpleTiming::access(std::uint64_t cycle, bool write, std::uint64_t /*addr*/) {
  if (config_.backpressure_permille == 0 && cycle > now_) {
    // Idle cycles only refill the bucket: jump.
    const std::uint64_t idle = cycle - now_;
    tokens_ = std::min<std::uint64_t>(tokens_ + idle * config_.bytes_per_cycle, 2ull * config_.beat_bytes);
    ready_ = tokens_ >= config_.beat_bytes;
    now_ = cycle;
  }
  while (now_ < cycle || !ready_) end_cycle();
  const std::uint64_t accept = now_;
  tokens_ -= config_.beat_bytes;
  std::uint64_t& last = write ? last_ack_due_ : last_read_due_;
  last = std::max(accept + config_.latency_cycles, last + 1);
  end_cycle();
  return {accept, last};
}

}  // namespace tpuemu::tlm
