// SPDX-License-Identifier: Apache-2.0
// The requests of `tpuemu hbm`: a trace's requests in order (parsed in hbm_trace_text.cpp), the
// synthetic patterns (stream, random, stream-add), and the data each write carries, which the
// replay (hbm_replay.cpp) checks every read against (docs/hbm-trace.md).
#include <algorithm>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/hbm_replay/hbm_trace.h"

namespace tpuemu {
namespace {

constexpr std::uint64_t kBurstBytes = kHbmBurstBytes;

class VectorSource final : public HbmRequestSource {
 public:
  VectorSource(std::vector<HbmTraceRequest> requests, std::string name)
      : requests_(std::move(requests)), name_(std::move(name)) {}
  std::optional<HbmTraceRequest> next() override {
    if (next_ == requests_.size()) return std::nullopt;
    return requests_[next_++];
  }
  std::uint64_t size() const override { return requests_.size(); }
  std::string describe() const override { return name_; }

 private:
  std::vector<HbmTraceRequest> requests_;
  std::size_t next_ = 0;
  std::string name_;
};

// A uniform double in [0, 1) from the top 53 bits (the same sequence on every platform).
double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

class PatternSource final : public HbmRequestSource {
 public:
  PatternSource(const HbmTimingSet& set, const HbmPatternOptions& o)
      : o_(o), bursts_(set.capacity_bytes() / kBurstBytes), rng_(o.seed) {
    if (o.pattern == HbmPattern::StreamAdd) {
      // Array k at k arrays (each rounded up to whole stripes of every bank of every channel)
      // plus k * banks / 3 stripes, a stripe being one row in every channel: a[i], b[i] and
      // c[i] are a third of the banks apart, so a stream moving on to its next bank finds a row
      // there that no other stream still reads (STREAM's OFFSET against bank aliasing).
      const std::uint64_t stripe = set.page_bytes() * set.geometry.channels / kBurstBytes;
      const std::uint64_t bank_stripes = stripe * set.banks_per_channel();
      const std::uint64_t n = (o.requests + 2) / 3;
      array_stride_ = (n + bank_stripes - 1) / bank_stripes * bank_stripes +
                      std::max<std::uint64_t>(1, set.banks_per_channel() / 3) * stripe;
      if (3 * array_stride_ > bursts_) {
        throw Error(fmt::format(
            "--requests {}: the stream-add arrays need {} bursts, more than the {} of {}",
            o.requests, 3 * array_stride_, bursts_, set.name));
      }
    }
  }
  std::optional<HbmTraceRequest> next() override {
    if (index_ == o_.requests) return std::nullopt;
    HbmTraceRequest r;
    std::uint64_t burst = 0;
    switch (o_.pattern) {
      case HbmPattern::Stream:
        burst = index_ % bursts_;
        break;
      case HbmPattern::Random:
        burst = rng_() & (bursts_ - 1);
        break;
      case HbmPattern::StreamAdd:
        burst = index_ % 3 * array_stride_ + index_ / 3;
        break;
    }
    r.address = burst * kBurstBytes;
    r.write = o_.pattern == HbmPattern::StreamAdd
                  ? index_ % 3 == 2
                  : o_.read_ratio < 1.0 && unit(rng_) >= o_.read_ratio;
    ++index_;
    return r;
  }
  std::uint64_t size() const override { return o_.requests; }
  std::string describe() const override {
    if (o_.pattern == HbmPattern::StreamAdd) {
      return fmt::format("stream-add ({} requests: read a[i], read b[i], write c[i])", o_.requests);
    }
    return fmt::format("{} ({} requests, read ratio {:.2f}, seed {})", to_string(o_.pattern),
                       o_.requests, o_.read_ratio, o_.seed);
  }

 private:
  HbmPatternOptions o_;
  std::uint64_t bursts_;  // a power of two (every geometry field is)
  std::mt19937_64 rng_;
  std::uint64_t index_ = 0;
  std::uint64_t array_stride_ = 0;  // StreamAdd: bursts from one array's start to the next
};

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

std::unique_ptr<HbmRequestSource> hbm_trace_source(std::vector<HbmTraceRequest> requests,
                                                   std::string name) {
  return std::make_unique<VectorSource>(std::move(requests), std::move(name));
}

std::string_view to_string(HbmPattern pattern) {
  switch (pattern) {
    case HbmPattern::Stream:
      return "stream";
    case HbmPattern::Random:
      return "random";
    case HbmPattern::StreamAdd:
      return "stream-add";
  }
  return "?";
}

HbmPattern parse_hbm_pattern(std::string_view name) {
  if (name == "stream") return HbmPattern::Stream;
  if (name == "random") return HbmPattern::Random;
  if (name == "stream-add") return HbmPattern::StreamAdd;
  throw Error(fmt::format("unknown pattern '{}' (expected stream, random or stream-add)", name));
}

std::unique_ptr<HbmRequestSource> hbm_pattern_source(const HbmTimingSet& set,
                                                     const HbmPatternOptions& options) {
  if (options.requests == 0) throw Error("--requests must be at least 1");
  if (!(options.read_ratio >= 0.0 && options.read_ratio <= 1.0)) {
    throw Error(fmt::format("--read-ratio must be in [0, 1], got {}", options.read_ratio));
  }
  if (options.pattern == HbmPattern::StreamAdd && options.read_ratio != 1.0) {
    throw Error("--read-ratio: stream-add has its own mix (two reads, then a write)");
  }
  return std::make_unique<PatternSource>(set, options);
}

void hbm_write_data(std::uint64_t burst_address, std::uint64_t write_seq,
                    std::uint8_t out[kHbmBurstBytes]) {
  std::uint64_t state = burst_address * 0x2545F4914F6CDD1Dull ^ write_seq;
  for (int i = 0; i < 8; ++i) {
    const std::uint64_t w = splitmix64(state);
    std::memcpy(out + 8 * i, &w, 8);
  }
}

}  // namespace tpuemu
