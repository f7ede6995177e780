// SPDX-License-Identifier: Apache-2.0
// The sharded runner's Exchange across OpenMPI ranks (docs/sharding.md, "The runner"): a run
// launched as `mpirun -np R tpuemu run ... --devices N` gives each rank N/R devices; parts, clocks
// and errors travel by MPI_Allgatherv and MPI_Allreduce on MPI_COMM_WORLD.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tpuemu/shard/exchange.h"

namespace tpuemu::shard_mpi {

// True when this process was started by mpirun (OpenMPI's or PMIx's environment says so): only
// then does tpuemu initialise MPI, so a plain `tpuemu run` never needs an MPI runtime.
bool launched_by_mpirun();

// MPI_Init on construction, MPI_Finalize on destruction; one per process.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  std::uint32_t rank() const { return rank_; }
  std::uint32_t ranks() const { return ranks_; }

 private:
  std::uint32_t rank_ = 0, ranks_ = 1;
};

class MpiExchange final : public shard::Exchange {
 public:
  explicit MpiExchange(const MpiSession& session) : rank_(session.rank()), ranks_(session.ranks()) {}
  std::uint32_t rank() const override { return rank_; }
  std::uint32_t ranks() const override { return ranks_; }
  std::vector<std::vector<std::uint8_t>> all_gather(const std::vector<std::vector<std::uint8_t>>& local) override;
  std::uint64_t max(std::uint64_t local) override;
  std::optional<std::string> first_error(const std::optional<std::string>& local) override;

 private:
  std::uint32_t rank_, ranks_;
};

}  // namespace tpuemu::shard_mpi
