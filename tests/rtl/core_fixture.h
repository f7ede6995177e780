// SPDX-License-Identifier: Apache-2.0
// Drives a whole Verilated core through its CSRs (below the firmware): loads a program into HBM,
// starts it and runs until the core stops.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "tpuemu/program/program.h"
#include "tpuemu/sim/core_sim.h"
#include "tpuemu/spec/contract.h"

namespace tpuemu::test {

// CSR byte addresses of the contract (spec/tpuemu.json).
namespace csr = spec::csr;

struct CoreRun {
  bool done = false;
  bool error = false;
  std::uint32_t error_code = 0;
  std::uint32_t error_pc = 0;
  std::uint64_t cycles = 0;
};

inline constexpr std::uint64_t kProgramBase = 0x0100'0000;  // 16 MiB: clear of test data

inline CoreRun run_core(sim::CoreSim& core, const Program& program, std::uint64_t max_cycles = 2'000'000) {
  const auto bytes = program.to_bytes();
  core.mem_write(kProgramBase, bytes);
  core.csr_write(csr::kProgBase, static_cast<std::uint32_t>(kProgramBase));
  core.csr_write(csr::kCtrl, csr::ctrl::start.put(1));
  CoreRun run;
  run.cycles = core.step(max_cycles, /*stop_when_idle=*/true);
  const std::uint32_t status = core.csr_read(csr::kStatus);
  run.done = csr::status::done.get(status) != 0;
  run.error = csr::status::error.get(status) != 0;
  run.error_code = csr::status::error_code.get(status);
  run.error_pc = core.csr_read(csr::kErrorInfo);
  return run;
}

// The `small` core behind a 64 MiB memory model; back-pressure draws from `seed`.
inline std::unique_ptr<sim::CoreSim> small_core(std::uint32_t latency = 20, std::uint32_t backpressure = 0,
                                                std::uint32_t bytes_per_cycle = 8, std::uint64_t seed = 7) {
  sim::MemoryModelConfig mem;
  mem.capacity_bytes = 64ull << 20;
  mem.latency_cycles = latency;
  mem.bytes_per_cycle = bytes_per_cycle;
  mem.backpressure_permille = backpressure;
  mem.seed = seed;
  return sim::make_core_sim("small", mem);
}

// Uniform int8 values; the first and last are the extremes -128 and 127.
inline std::vector<std::int8_t> random_int8(std::size_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> dist(-128, 127);
  std::vector<std::int8_t> v(n);
  for (auto& x : v) x = static_cast<std::int8_t>(dist(rng));
  if (n > 0) {
    v.front() = -128;
    v.back() = 127;
  }
  return v;
}

inline void write_int8(sim::CoreSim& core, std::uint64_t addr, const std::vector<std::int8_t>& v) {
  core.mem_write(addr, std::span(reinterpret_cast<const std::uint8_t*>(v.data()), v.size()));
}

inline std::vector<std::int32_t> read_int32(sim::CoreSim& core, std::uint64_t addr, std::size_t n) {
  std::vector<std::int32_t> out(n);
  std::vector<std::uint8_t> bytes(4 * n);
  core.mem_read(addr, bytes);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

inline std::uint64_t counter(sim::CoreSim& core, unsigned index) {
  const std::uint32_t lo = core.csr_read(csr::counter_lo(index));
  const std::uint32_t hi = core.csr_read(csr::counter_hi(index));
  return (std::uint64_t{hi} << 32) | lo;
}

inline std::vector<std::uint8_t> read_mem(sim::CoreSim& core, std::uint64_t addr, std::size_t n) {
  std::vector<std::uint8_t> out(n);
  core.mem_read(addr, out);
  return out;
}

}  // namespace tpuemu::test
