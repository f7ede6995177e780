// SPDX-License-Identifier: Apache-2.0
// A SystemC platform around the tpuemu RTL core (C++17): the Verilated core of the preset
// (RtlCore) bound through a small bus to device memory (MemoryTarget timed as an HBM stack,
// hbm_target.h; or as the preset's simple memory with --simple-memory),
// and a firmware thread that loads a matmul program and its operands with transport_dbg, starts the
// core through its CSR socket, waits for it to finish, and checks C = A . B bit-exactly against its
// own int8 x int8 -> int32 matmul. Exit status 0 only when every element matches.
//
// The program, the operands' addresses and the CSR addresses come from rtl_matmul_program.h, which
// the build generates with the project's compiler (gen_program.cpp): docs/systemc.md.
//
// Usage: rtl_matmul [--simple-memory] [QUANTUM_CYCLES]   (the core's temporal decoupling, default 1024)
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include "rtl_matmul_program.h"
#include "tpuemu/tlm/hbm_target.h"
#include "tpuemu/tlm/memory_target.h"
#include "tpuemu/tlm/rtl_core.h"
#include "tpuemu/tlm/simple_timing.h"
#include "tpuemu/tlm/socket_support.h"

namespace {

using tpuemu::tlm::RtlCore;

// The memory's target socket takes one initiator: this bus lets the core and the firmware share it.
struct MemoryBus final : sc_core::sc_module {
  tlm_utils::multi_passthrough_target_socket<MemoryBus> targets;
  tlm_utils::simple_initiator_socket<MemoryBus> initiator;

  explicit MemoryBus(sc_core::sc_module_name name) : sc_module(name), targets("targets"), initiator("initiator") {
    targets.register_b_transport(this, &MemoryBus::b_transport);
    targets.register_transport_dbg(this, &MemoryBus::transport_dbg);
  }
  void b_transport(int /*port*/, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) { initiator->b_transport(p, delay); }
  unsigned int transport_dbg(int /*port*/, tlm::tlm_generic_payload& p) { return initiator->transport_dbg(p); }
};

// Deterministic operands that cover the whole int8 range, -128 and 127 included.
std::vector<std::int8_t> operand(std::size_t n, std::uint32_t seed) {
  std::vector<std::int8_t> v(n);
  std::uint32_t x = seed;
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    v[i] = static_cast<std::int8_t>(static_cast<std::uint8_t>(x >> 24));
  }
  if (n >= 2) {
    v[0] = -128;
    v[1] = 127;
  }
  return v;
}

// The reference: int8 x int8 -> int32, row-major.
std::vector<std::int32_t> matmul_reference(const std::vector<std::int8_t>& a, const std::vector<std::int8_t>& b,
                                           std::size_t m, std::size_t k, std::size_t n) {
  std::vector<std::int32_t> c(m * n, 0);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      std::int32_t sum = 0;
      for (std::size_t x = 0; x < k; ++x) sum += std::int32_t{a[i * k + x]} * std::int32_t{b[x * n + j]};
      c[i * n + j] = sum;
    }
  }
  return c;
}

struct Firmware final : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Firmware> csr;     // to the core's CSR target
  tlm_utils::simple_initiator_socket<Firmware> memory;  // to the memory (debug transport only)
  bool passed = false;
  std::string verdict = "the simulation ended before the firmware finished";
  std::uint64_t run_cycles = 0;

  SC_HAS_PROCESS(Firmware);
  Firmware(sc_core::sc_module_name name, RtlCore& core)
      : sc_module(name), csr("csr"), memory("memory"), core_(core) {
    SC_THREAD(main);
  }

 private:
  void main() {
    using namespace rtl_matmul;
    const auto a = operand(std::size_t{kM} * kK, 1);
    const auto b = operand(std::size_t{kK} * kN, 2);
    debug_access(kAddrA, const_cast<std::int8_t*>(a.data()), a.size(), true);
    debug_access(kAddrB, const_cast<std::int8_t*>(b.data()), b.size(), true);
    debug_access(kProgBase, const_cast<std::uint8_t*>(kProgram), sizeof kProgram, true);

    const std::uint64_t start = core_.cycle();
    csr_access(csr::kProgBase, static_cast<std::uint32_t>(kProgBase), true);
    csr_access(csr::kCtrl, csr::kCtrlStart, true);
    // Wait like the firmware's RUN does (docs/protocol.md 3.3), woken early by the core's idle
    // event instead of polling every slice; a watchdog bounds the run.
    const std::uint64_t max_cycles = 10'000'000, slice = 1024;
    std::uint32_t status = 0;
    for (std::uint64_t waited = 0;; waited += slice) {
      status = csr_access(csr::kStatus, 0, false);
      if ((status & csr::kStatusError) != 0 || ((status & csr::kStatusDone) != 0 && (status & csr::kStatusBusy) == 0)) break;
      if (core_.fault() || waited >= max_cycles) break;
      wait(core_.period() * static_cast<double>(slice), core_.idle_event());
    }
    run_cycles = core_.cycle() - start;
    if (core_.fault()) return finish(false, *core_.fault());
    if ((status & csr::kStatusError) != 0) {
      return finish(false, "the core stopped with error code " +
                               std::to_string((status >> csr::kStatusErrorCodeLsb) & csr::kStatusErrorCodeMask) +
                               " at pc " + std::to_string(csr_access(csr::kErrorInfo, 0, false)));
    }
    if ((status & csr::kStatusDone) == 0) return finish(false, "the core did not finish within the watchdog");

    std::vector<std::int32_t> c(std::size_t{kM} * kN);
    debug_access(kAddrC, c.data(), c.size() * sizeof(std::int32_t), false);  // little-endian host
    const auto expected = matmul_reference(a, b, kM, kK, kN);
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (c[i] != expected[i]) {
        return finish(false, "C[" + std::to_string(i / kN) + "][" + std::to_string(i % kN) + "] = " +
                                 std::to_string(c[i]) + ", expected " + std::to_string(expected[i]));
      }
    }
    finish(true, "bit-exact");
  }

  void finish(bool ok, const std::string& why) {
    passed = ok;
    verdict = why;
    sc_core::sc_stop();
  }

  void debug_access(std::uint64_t addr, void* data, std::size_t len, bool write) {
    tlm::tlm_generic_payload p;
    p.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    p.set_address(addr);
    p.set_data_ptr(static_cast<unsigned char*>(data));
    p.set_data_length(static_cast<unsigned int>(len));
    p.set_streaming_width(static_cast<unsigned int>(len));
    if (memory->transport_dbg(p) != len || p.is_response_error()) {
      SC_REPORT_ERROR("rtl_matmul/firmware", ("debug access at " + std::to_string(addr) + " failed").c_str());
    }
  }

  std::uint32_t csr_access(std::uint32_t addr, std::uint32_t value, bool write) {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    if (tpuemu::tlm::csr_transport(csr, addr, write, value, delay) != tlm::TLM_OK_RESPONSE) {
      SC_REPORT_ERROR("rtl_matmul/firmware", "CSR access refused");
    }
    wait(delay);  // a write takes effect on the core's next edge: be there before the next access
    return value;
  }

  RtlCore& core_;
};

struct Options {
  std::uint64_t quantum = 1024;  // the quantum of temporal decoupling in cycles: results and cycles do not depend on it
  bool simple_memory = false;    // the preset's simple memory model instead of the HBM stack
};

Options parse(int argc, char* argv[]) {
  Options o;
  bool have_quantum = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--simple-memory") {
      o.simple_memory = true;
      continue;
    }
    char* end = nullptr;
    const unsigned long long q = std::strtoull(argv[i], &end, 10);
    if (have_quantum || end == argv[i] || *end != '\0' || q == 0) {
      throw std::invalid_argument("usage: rtl_matmul [--simple-memory] [QUANTUM_CYCLES >= 1]");
    }
    o.quantum = q;
    have_quantum = true;
  }
  return o;
}

std::unique_ptr<tpuemu::tlm::BeatTimingModel> memory_timing(bool simple_memory) {
  using namespace rtl_matmul;
  if (!simple_memory) return tpuemu::tlm::make_hbm_target_timing(hbm_config());
  tpuemu::tlm::SimpleTimingConfig timing;
  timing.beat_bytes = kDim;
  timing.latency_cycles = kLatencyCycles;
  timing.bytes_per_cycle = kBytesPerCycle;
  return std::make_unique<tpuemu::tlm::SimpleTiming>(timing);
}

int run(const Options& options) {
  using namespace rtl_matmul;
  const sc_core::sc_time period(1000.0 / kClockGhz, sc_core::SC_PS);
  RtlCore core("core", kPreset, period, options.quantum);
  if (core.dim() != kDim) throw std::runtime_error("the program was generated for DIM " + std::to_string(kDim));
  tpuemu::tlm::MemoryTarget hbm("hbm", kHbmCapacity, memory_timing(options.simple_memory), period);
  MemoryBus bus("bus");
  Firmware firmware("firmware", core);
  core.memory.bind(bus.targets);
  firmware.memory.bind(bus.targets);
  bus.initiator.bind(hbm.socket);
  firmware.csr.bind(core.csr);

  core.run_forever();
  const auto t0 = std::chrono::steady_clock::now();
  sc_core::sc_start();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("rtl_matmul: C (%ux%u int32) = A (%ux%u int8) . B (%ux%u int8) on the RTL core of preset %s, %s: %s "
              "(%llu cycles, %.2f s)\n",
              kM, kN, kM, kK, kK, kN, kPreset, options.simple_memory ? "simple memory" : "HBM target", firmware.verdict.c_str(),
              static_cast<unsigned long long>(firmware.run_cycles), seconds);
  return firmware.passed ? 0 : 1;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rtl_matmul: %s\n", e.what());
    return 1;
  }
}
