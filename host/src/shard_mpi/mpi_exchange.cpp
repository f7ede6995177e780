// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/shard_mpi/mpi_exchange.h"

#include <climits>
#include <cstdlib>

#include <fmt/format.h>
#include <mpi.h>

#include "tpuemu/base/error.h"

namespace tpuemu::shard_mpi {
namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(fmt::format("MPI: {} failed: {}", what, std::string(text, static_cast<std::size_t>(len))));
}

void put_u64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (int b = 0; b < 8; ++b) out.push_back(static_cast<std::uint8_t>(v >> (8 * b)));
}
std::uint64_t get_u64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int b = 0; b < 8; ++b) v |= std::uint64_t{p[b]} << (8 * b);
  return v;
}

}  // namespace

bool launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

MpiSession::MpiSession() {
  check(MPI_Init(nullptr, nullptr), "MPI_Init");
  // errors come back as codes (check), not as an abort of every rank
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  rank_ = static_cast<std::uint32_t>(rank);
  ranks_ = static_cast<std::uint32_t>(size);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

// Each rank's blobs travel as one message: their count, their sizes, their bytes.
std::vector<std::vector<std::uint8_t>> MpiExchange::all_gather(const std::vector<std::vector<std::uint8_t>>& local) {
  std::vector<std::uint8_t> message;
  put_u64(message, local.size());
  for (const auto& blob : local) put_u64(message, blob.size());
  for (const auto& blob : local) message.insert(message.end(), blob.begin(), blob.end());
  if (message.size() > static_cast<std::size_t>(INT_MAX)) {
    throw Error(fmt::format("MPI: a part of {} bytes is larger than one MPI message can carry", message.size()));
  }
  const int mine = static_cast<int>(message.size());
  std::vector<int> sizes(ranks_), offsets(ranks_);
  check(MPI_Allgather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
  long long total = 0;
  for (std::uint32_t r = 0; r < ranks_; ++r) {
    offsets[r] = static_cast<int>(total);
    total += sizes[r];
  }
  if (total > INT_MAX) throw Error(fmt::format("MPI: an exchange of {} bytes is larger than one MPI message can carry", total));
  std::vector<std::uint8_t> all(static_cast<std::size_t>(total));
  check(MPI_Allgatherv(message.data(), mine, MPI_BYTE, all.data(), sizes.data(), offsets.data(), MPI_BYTE, MPI_COMM_WORLD),
        "MPI_Allgatherv");
  std::vector<std::vector<std::uint8_t>> out;
  for (std::uint32_t r = 0; r < ranks_; ++r) {
    const std::uint8_t* p = all.data() + offsets[r];
    const std::uint64_t count = get_u64(p);
    const std::uint8_t* data = p + 8 * (count + 1);
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint64_t size = get_u64(p + 8 * (i + 1));
      out.emplace_back(data, data + size);
      data += size;
    }
  }
  return out;
}

std::uint64_t MpiExchange::max(std::uint64_t local) {
  std::uint64_t result = 0;
  check(MPI_Allreduce(&local, &result, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  return result;
}

// An empty blob is "no error"; a rank's error is its message, prefixed so that an empty message
// still counts.
std::optional<std::string> MpiExchange::first_error(const std::optional<std::string>& local) {
  std::vector<std::vector<std::uint8_t>> mine(1);
  if (local) {
    mine[0].push_back('!');
    mine[0].insert(mine[0].end(), local->begin(), local->end());
  }
  for (const auto& blob : all_gather(mine)) {
    if (!blob.empty()) return std::string(blob.begin() + 1, blob.end());
  }
  return std::nullopt;
}

}  // namespace tpuemu::shard_mpi
