// SPDX-License-Identifier: Apache-2.0
// The one SystemC module over a clocked core (clocked_core_module.h) with both models in it: the
// rtl_matmul example's program on RtlCore (the Verilated core) and TlmCore (the TLM model) of the
// same preset, each with both codings of the memory port, on the preset's simple memory. Every run
// must be bit-exact and take the same cycles (the TLM model's cycles are the RTL's on the simple
// memory, and the coding does not change a cycle with MemoryTarget). Then, for both models, an
// error response of the memory (a write into C refused) must stop the clock at that edge with
// fault() naming the beat, and clear_fault() + reset() must let the core run the program again.
//
// One elaboration holds every platform; each is driven from sc_main with grant() and sc_start(),
// as platform.h drives the tlm backend's core. Exit status 0 only when every check holds.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "rtl_matmul_program.h"
#include "tpuemu/tlm/memory_target.h"
#include "tpuemu/tlm/rtl_core.h"
#include "tpuemu/tlm/simple_timing.h"
#include "tpuemu/tlm/socket_support.h"
#include "tpuemu/tlm/tlm_core.h"

namespace {

namespace tt = tpuemu::tlm;
using namespace rtl_matmul;

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAIL", what.c_str());
  if (!ok) ++failures;
}

std::vector<std::int8_t> operand(std::size_t n, std::uint32_t seed) {
  std::vector<std::int8_t> v(n);
  std::uint32_t x = seed;
  for (auto& e : v) {
    x = x * 1664525u + 1013904223u;
    e = static_cast<std::int8_t>(static_cast<std::uint8_t>(x >> 24));
  }
  return v;
}

// A pass-through to the memory that can refuse the writes into C (TLM_ADDRESS_ERROR_RESPONSE).
struct Gate final : sc_core::sc_module {
  tlm_utils::simple_target_socket<Gate> in;
  tlm_utils::simple_initiator_socket<Gate> out;
  bool refuse_c = false;

  explicit Gate(sc_core::sc_module_name name) : sc_module(name), in("in"), out("out") {
    in.register_b_transport(this, &Gate::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    const std::uint64_t c_end = kAddrC + std::uint64_t{kM} * kN * 4;
    if (refuse_c && p.is_write() && p.get_address() >= kAddrC && p.get_address() < c_end) {
      p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    out->b_transport(p, delay);
  }
};

// The firmware's CSR initiator.
struct Bus final : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Bus> socket;
  explicit Bus(sc_core::sc_module_name name) : sc_module(name), socket("socket") {}
  void write(std::uint32_t addr, std::uint32_t value) {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    if (tt::csr_transport(socket, addr, true, value, delay) != tlm::TLM_OK_RESPONSE) {
      throw std::runtime_error("CSR write refused");
    }
  }
};

std::unique_ptr<tt::BeatTimingModel> simple_memory() {
  tt::SimpleTimingConfig timing;
  timing.beat_bytes = kDim;
  timing.latency_cycles = kLatencyCycles;
  timing.bytes_per_cycle = kBytesPerCycle;
  return std::make_unique<tt::SimpleTiming>(timing);
}

const sc_core::sc_time kPeriod(1000.0 / kClockGhz, sc_core::SC_PS);

// One platform: a core module, its memory (through the gate with the LT coding) and a CSR bus.
// dim, vmem_rows, vmem_banks, acc_rows, smem_words, queue_depth, mem_outstanding (C++17: no
// designated initialisers)
const tt::CoreShape kShape{kDim,       kVmemRows,   kVmemBanks,     kAccRows,
                           kSmemWords, kQueueDepth, kMemOutstanding};

// The two modules of the one template, with a quantum of 64 cycles.
std::unique_ptr<tt::RtlCore> make_core(const std::string& name, tt::Coding coding, tt::RtlCore*) {
  return std::make_unique<tt::RtlCore>(name.c_str(), kPreset, kPeriod, 64, coding);
}
std::unique_ptr<tt::TlmCore> make_core(const std::string& name, tt::Coding coding, tt::TlmCore*) {
  return std::make_unique<tt::TlmCore>(name.c_str(), kShape, kPeriod, coding, 64);
}

template <typename Core>
struct Platform {
  std::string name;
  std::unique_ptr<Core> core_module;
  Core& core;
  tt::MemoryTarget memory;
  std::unique_ptr<Gate> gate;
  Bus bus;

  Platform(const std::string& n, tt::Coding coding)
      : name(n),
        core_module(make_core(n + "_core", coding, static_cast<Core*>(nullptr))),
        core(*core_module),
        memory((n + "_memory").c_str(), kHbmCapacity, simple_memory(), kPeriod),
        bus((n + "_bus").c_str()) {
    if (coding == tt::Coding::LooselyTimed) {
      gate = std::make_unique<Gate>((n + "_gate").c_str());
      core.memory.bind(gate->in);
      gate->out.bind(memory.socket);
    } else {
      core.memory.bind(memory.socket);
    }
    bus.socket.bind(core.csr);
  }

  // The CSR access and its clock edge, as the Verilator harness applies it.
  void csr_write(std::uint32_t addr, std::uint32_t value) {
    bus.write(addr, value);
    core.grant(1, false);
    sc_core::sc_start();
  }

  // Loads the program and operands, starts it and runs until the core is idle (or stops);
  // returns the cycles from the PROG_BASE write.
  std::uint64_t run_program() {
    const auto a = operand(std::size_t{kM} * kK, 1), b = operand(std::size_t{kK} * kN, 2);
    memory.backdoor_write(kAddrA, reinterpret_cast<const std::uint8_t*>(a.data()), a.size());
    memory.backdoor_write(kAddrB, reinterpret_cast<const std::uint8_t*>(b.data()), b.size());
    memory.backdoor_write(kProgBase, kProgram, sizeof kProgram);
    const std::vector<std::uint8_t> zeros(std::size_t{kM} * kN * 4, 0);
    memory.backdoor_write(kAddrC, zeros.data(), zeros.size());
    const std::uint64_t start = core.cycle();
    csr_write(csr::kProgBase, static_cast<std::uint32_t>(kProgBase));
    csr_write(csr::kCtrl, csr::kCtrlStart);
    core.grant(10'000'000, true);
    sc_core::sc_start();
    return core.cycle() - start;
  }

  bool c_is_right() {
    const auto a = operand(std::size_t{kM} * kK, 1), b = operand(std::size_t{kK} * kN, 2);
    std::vector<std::int32_t> c(std::size_t{kM} * kN);
    memory.backdoor_read(kAddrC, reinterpret_cast<std::uint8_t*>(c.data()), c.size() * 4);
    for (std::uint32_t i = 0; i < kM; ++i) {
      for (std::uint32_t j = 0; j < kN; ++j) {
        std::int32_t sum = 0;
        for (std::uint32_t x = 0; x < kK; ++x)
          sum += std::int32_t{a[i * kK + x]} * std::int32_t{b[x * kN + j]};
        if (c[i * kN + j] != sum) return false;
      }
    }
    return true;
  }
};

template <typename Core>
void fault_stops_the_clock(Platform<Core>& p, const std::string& label) {
  p.gate->refuse_c = true;
  p.run_program();
  const auto fault = p.core.fault();
  check(fault && fault->rfind(label + ": memory write at ", 0) == 0,
        p.name + ": a refused write sets fault(): " + fault.value_or("(none)"));
  check(p.core.busy() && p.core.cycles_run() < 10'000'000,
        p.name + ": the clock stopped with the core busy");
  const std::uint64_t stopped = p.core.cycle();
  p.core.grant(100, false);
  sc_core::sc_start();
  check(p.core.cycle() == stopped, p.name + ": no edge while the fault stands");
  p.gate->refuse_c = false;
  p.core.clear_fault();
  p.core.reset();
  check(!p.core.busy(), p.name + ": reset() ends the run");
  p.run_program();
  check(!p.core.fault() && p.c_is_right(),
        p.name + ": after clear_fault() and reset() the program runs bit-exact");
}

int run() {
  Platform<tt::RtlCore> rtl_lt("rtl_lt", tt::Coding::LooselyTimed);
  Platform<tt::RtlCore> rtl_at("rtl_at", tt::Coding::ApproximatelyTimed);
  Platform<tt::TlmCore> tlm_lt("tlm_lt", tt::Coding::LooselyTimed);
  Platform<tt::TlmCore> tlm_at("tlm_at", tt::Coding::ApproximatelyTimed);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaboration; every clock thread pauses at once

  const std::uint64_t rtl = rtl_lt.run_program();
  check(!rtl_lt.core.fault() && rtl_lt.c_is_right(),
        "rtl_lt: bit-exact in " + std::to_string(rtl) + " cycles");
  const auto same = [&](auto& p) {
    const std::uint64_t n = p.run_program();
    check(!p.core.fault() && p.c_is_right(),
          p.name + ": bit-exact in " + std::to_string(n) + " cycles");
    check(n == rtl, p.name + ": the cycles of rtl_lt (" + std::to_string(rtl) + ")");
  };
  same(rtl_at);
  same(tlm_lt);
  same(tlm_at);
  fault_stops_the_clock(rtl_lt, "rtl core");
  fault_stops_the_clock(tlm_lt, "tlm core");
  return failures == 0 ? 0 : 1;
}

}  // namespace

int sc_main(int, char*[]) {
  sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "clocked_core_module_test: %s\n", e.what());
    return 1;
  }
}
