// SPDX-License-Identifier: Apache-2.0
// CoreSim over one Verilated tpu_top class. Instantiated once per preset (core_<preset>.cpp),
// because every preset is a separately Verilated model with its own port widths.
#pragma once

#include <array>
#include <cstring>
#include <utility>
#include <memory>
#include <stdexcept>
#include <type_traits>

#include <verilated.h>
#ifdef TPUEMU_RTL_TRACE
#include <verilated_fst_c.h>
#endif

#include "tpuemu/sim/verilator_messages.h"
#include "core_memory.h"
#include "verilator_bits.h"
#include "verilated_csr_bus.h"
#include "tpuemu/sim/core_sim.h"
#include "tpuemu/spec/contract.h"

namespace tpuemu::sim {

// Copies between little-endian byte buffers and Verilator signals of any width.
template <typename Signal>
void bytes_to_signal(const std::uint8_t* bytes, std::size_t n, Signal& signal) {
  if constexpr (std::is_integral_v<Signal>) {
    Signal v = 0;
    std::memcpy(&v, bytes, std::min(n, sizeof(Signal)));
    signal = v;
  } else {
    std::memcpy(signal.data(), bytes, n);  // VlWide words are little-endian 32-bit
  }
}

template <typename Signal>
void signal_to_bytes(const Signal& signal, std::uint8_t* bytes, std::size_t n) {
  if constexpr (std::is_integral_v<Signal>) {
    std::memcpy(bytes, &signal, std::min(n, sizeof(Signal)));
  } else {
    std::memcpy(bytes, signal.data(), n);
  }
}

template <typename Top>
class VerilatedCoreSim final : public CoreSim {
 public:
  VerilatedCoreSim(std::uint32_t dim, const MemoryModelConfig& mem)
      : dim_(dim), context_(std::make_unique<VerilatedContext>()), memory_(make_core_memory(mem, dim)) {
    top_ = std::make_unique<Top>(context_.get(), "tpu");
    wbuf_.resize(dim);
    reset();
  }

  ~VerilatedCoreSim() override {
#ifdef TPUEMU_RTL_TRACE
    if (trace_) trace_->close();
#endif
    top_->final();
    // Verilator 5.006 unregisters scopes through the thread's current context: make it ours, or
    // destroying this core while an older one lives deadlocks in the scope registry.
    Verilated::threadContextp(context_.get());
    top_.reset();
  }

  std::uint32_t dim() const override { return dim_; }

  void reset() override {
    reset_core(*top_, [this] { tick(); }, [this] { tick(); });
  }

  std::uint32_t csr_read(std::uint32_t addr) override {
    const std::uint32_t value = peek_csr(*top_, addr);
    // SMEM_DATA reads advance SMEM_ADDR on the edge
    if (addr == spec::csr::kSmemData) csr_edge(*top_, addr, false, 0, [this] { tick(); });
    return value;
  }

  void csr_write(std::uint32_t addr, std::uint32_t value) override {
    csr_edge(*top_, addr, true, value, [this] { tick(); });
  }

  std::uint64_t step(std::uint64_t cycles, bool stop_when_idle) override {
    for (std::uint64_t i = 0; i < cycles; ++i) {
      if (memory_->fault()) return i;
      tick();
      if (stop_when_idle && !top_->busy_o) return i + 1;
    }
    return cycles;
  }

  std::uint64_t cycle() const override { return cycle_; }

  void mem_write(std::uint64_t addr, std::span<const std::uint8_t> data) override {
    memory_->backdoor_write(addr, data);
  }
  void mem_read(std::uint64_t addr, std::span<std::uint8_t> data) override {
    memory_->backdoor_read(addr, data);
  }
  std::uint64_t mem_capacity() const override { return memory_->capacity(); }
  std::optional<std::string> fault() const override { return memory_->fault(); }
  std::optional<hbm::Statistics> hbm_statistics() const override { return memory_->hbm_statistics(); }
  void clear_fault() override { memory_->clear_fault(); }

  void start_timeline() override {
    timeline_ = Timeline{};
    issued_.fill(0);
    stalled_.fill(false);
    stalled_any_ = false;
    recording_ = true;
    memory_->record_channels(true);
  }

  Timeline stop_timeline() override {
    recording_ = false;
    for (std::size_t k = 0; k < stalled_.size(); ++k) {  // a wait the run ended in (deadlock)
      if (stalled_[k]) timeline_.events.push_back({cycle_, static_cast<std::uint8_t>(k), TraceEvent::WaitEnd, issued_[k]});
    }
    timeline_.hbm = memory_->take_channel_intervals();
    memory_->record_channels(false);
    return std::exchange(timeline_, Timeline{});
  }

  void open_trace(const std::filesystem::path& fst_file) override {
#ifdef TPUEMU_RTL_TRACE
    context_->traceEverOn(true);
    trace_ = std::make_unique<VerilatedFstC>();
    top_->trace(trace_.get(), 99);
    trace_->open(fst_file.c_str());
#else
    throw std::runtime_error("trace " + fst_file.string() +
                             ": this build has no FST tracing (configure with -DTPUEMU_RTL_TRACE=ON)");
#endif
  }

 private:
  // One clock cycle: drive the memory responses due now, settle, sample the request, clock edge.
  void tick() {
    const std::uint8_t* rsp = memory_->read_response(cycle_);
    top_->mem_rsp_valid_i = rsp != nullptr;
    if (rsp) bytes_to_signal(rsp, dim_, top_->mem_rsp_rdata_i);
    top_->mem_wack_valid_i = memory_->write_ack(cycle_);
    top_->mem_req_ready_i = memory_->ready();
    top_->clk_i = 0;
    top_->eval();
#ifdef TPUEMU_RTL_TRACE
    if (trace_) trace_->dump(2 * cycle_);
#endif
    if (recording_) sample_trace();
    const bool accepted = top_->mem_req_valid_o && top_->mem_req_ready_i;
    const bool wrote = accepted && top_->mem_req_write_o;
    if (accepted) {
      if (wrote) signal_to_bytes(top_->mem_req_wdata_o, wbuf_.data(), dim_);
      memory_->accept(cycle_, top_->mem_req_write_o, top_->mem_req_addr_o, wbuf_);
    }
    top_->clk_i = 1;
    top_->eval();
#ifdef TPUEMU_RTL_TRACE
    if (trace_) trace_->dump(2 * cycle_ + 1);
#endif
    ++cycle_;
    memory_->end_cycle(cycle_, wrote);
    // A failed assertion or $stop in the core (the hooks keep it off stdout and out of abort()).
    if (context_->gotError()) throw std::runtime_error(take_verilator_error());
  }

  // One cycle of the trace port, before the clock edge (the engines' combinational outputs of
  // this cycle): a wait level change, an issue (the head's queue index is the count of issues so
  // far), completions with their queue indices.
  void sample_trace() {
    if (!timeline_.start && top_->busy_o) timeline_.start = cycle_;
    namespace tr = spec::trace;
    // Most cycles nothing happens: no issue, done or wait bit set and no wait to end.
    bool active = stalled_any_;
    for (std::size_t w = 0; !active && w < kTraceControl.size(); ++w) active = (top_->trace_o[w] & kTraceControl[w]) != 0;
    if (!active) return;
    stalled_any_ = false;
    for (std::size_t k = 0; k < tr::kEngines.size(); ++k) {
      const tr::Engine& e = tr::kEngines[k];
      const std::uint64_t bits = get_bits(top_->trace_o, e.issue, 2 + e.done_ports);
      const bool issue = (bits & 1) != 0, stall = ((bits >> 1) & 1) != 0;
      const std::uint64_t done = bits >> 2;
      const auto engine = static_cast<std::uint8_t>(k);
      stalled_any_ = stalled_any_ || stall;
      if (stall != stalled_[k]) {
        stalled_[k] = stall;
        timeline_.events.push_back({cycle_, engine, stall ? TraceEvent::WaitBegin : TraceEvent::WaitEnd, issued_[k]});
      }
      if (issue) timeline_.events.push_back({cycle_, engine, TraceEvent::Issue, issued_[k]++});
      for (std::uint32_t p = 0; done != 0 && p < e.done_ports; ++p) {
        if (!((done >> p) & 1)) continue;
        const auto index = static_cast<std::uint32_t>(get_bits(top_->trace_o, e.done_idx + p * tr::kIndexWidth, tr::kIndexWidth));
        timeline_.events.push_back({cycle_, engine, TraceEvent::Done, index});
      }
    }
  }

  std::uint32_t dim_;
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Top> top_;
  std::unique_ptr<CoreMemory> memory_;
  std::vector<std::uint8_t> wbuf_;
  std::uint64_t cycle_ = 0;
  bool recording_ = false;
  Timeline timeline_;
  std::array<std::uint32_t, spec::trace::kEngines.size()> issued_{};
  std::array<bool, spec::trace::kEngines.size()> stalled_{};
  bool stalled_any_ = false;
  // The issue, stall_sem and done bits of every engine, per 32-bit word of trace_o.
  static_assert(spec::trace::kWidth > 64, "trace_o is a VlWide");
  static constexpr std::array<std::uint32_t, (spec::trace::kWidth + 31) / 32> kTraceControl = [] {
    std::array<std::uint32_t, (spec::trace::kWidth + 31) / 32> m{};
    for (const spec::trace::Engine& e : spec::trace::kEngines) {
      for (std::uint32_t b = e.issue; b < e.done + e.done_ports; ++b) m[b / 32] |= 1u << (b % 32);
    }
    return m;
  }();
#ifdef TPUEMU_RTL_TRACE
  std::unique_ptr<VerilatedFstC> trace_;
#endif
};

}  // namespace tpuemu::sim
