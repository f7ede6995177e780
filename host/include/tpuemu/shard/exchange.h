// SPDX-License-Identifier: Apache-2.0
// How the devices of a sharded run reach each other's data (docs/sharding.md, "The runner"): in one
// process every device is local; under mpirun each rank holds an equal, contiguous group of the
// devices and the exchange carries parts between ranks (tpuemu/shard_mpi). The runner calls the
// same operations in the same order on every rank.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tpuemu::shard {

class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual std::uint32_t rank() const = 0;
  virtual std::uint32_t ranks() const = 0;
  // Every rank's `local` blobs (one per local device, in device order), concatenated in rank order.
  virtual std::vector<std::vector<std::uint8_t>> all_gather(const std::vector<std::vector<std::uint8_t>>& local) = 0;
  // The largest of every rank's value.
  virtual std::uint64_t max(std::uint64_t local) = 0;
  // The first error of any rank (in rank order), so that all stop together instead of waiting for
  // a rank that failed.
  virtual std::optional<std::string> first_error(const std::optional<std::string>& local) = 0;
};

// One process holds every device.
class LocalExchange final : public Exchange {
 public:
  std::uint32_t rank() const override { return 0; }
  std::uint32_t ranks() const override { return 1; }
  std::vector<std::vector<std::uint8_t>> all_gather(const std::vector<std::vector<std::uint8_t>>& local) override {
    return local;
  }
  std::uint64_t max(std::uint64_t local) override { return local; }
  std::optional<std::string> first_error(const std::optional<std::string>& local) override { return local; }
};

}  // namespace tpuemu::shard
