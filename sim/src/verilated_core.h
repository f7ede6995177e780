// SPDX-License-Identifier: Apache-2.0
// The Verilated tpu_top of one preset as a ClockedCore (tpuemu/sim/clocked_core.h): the one clock
// loop of the RTL core, used by the rtl backend's CoreSim (core_sim_impl.h, the memory model
// stepped every cycle) and by the SystemC IP block (sim/tlm/rtl/rtl_core_model_impl.h, a BeatPort
// that times each beat when the core presents it). Instantiated once per preset and port, because
// every preset is a separately Verilated model with its own port widths.
//
// One cycle: drive the responses due now, settle with the clock low, offer the request, sample
// the trace port, clock edge. The memory side is the Port, a class with these members (static,
// so that the per-cycle calls inline):
//   const std::uint8_t* read_response(cycle)   the read data due now, or nullptr
//   bool write_ack(cycle)                      a write acknowledgement due now
//   bool ready(cycle)                          mem_req_ready_i before the settle
//   bool offer(cycle, valid, write, addr, wdata)  after the settle, when the core presents a
//       request that ready did not take (valid) or presents none: true raises ready in this
//       cycle (a memory that times a beat when it sees it), and the core settles again
//   void accept(cycle, write, addr, wdata)     the request is taken at this edge
//   void end_cycle(next_cycle, wrote)          after the edge
//   bool halted()                              the memory stopped the clock (a fault)
//   void reset()                               rst_ni: what the memory owed the core is dropped
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <verilated.h>
#ifdef TPUEMU_RTL_TRACE
#include <verilated_fst_c.h>
#endif

#include "tpuemu/sim/clocked_core.h"
#include "tpuemu/sim/verilator_messages.h"
#include "tpuemu/spec/contract.h"
#include "verilated_csr_bus.h"
#include "verilator_bits.h"

namespace tpuemu::sim {

// Base: ClockedCore, or an interface derived from it that adds no pure virtual (the SystemC side's
// RtlCoreModel, which only names the factory).
template <typename Top, typename Port, typename Base = ClockedCore>
class VerilatedCore : public Base {
  static_assert(std::is_base_of_v<ClockedCore, Base>);

 public:
  // `dim` is the preset's; the model's CONFIG register must agree (the Port was sized for it).
  VerilatedCore(std::uint32_t dim, Port port)
      : dim_(dim), port_(std::move(port)), context_(std::make_unique<VerilatedContext>()) {
    top_ = std::make_unique<Top>(context_.get(), "tpu");
    wbuf_.resize(dim);
    reset();
    const std::uint32_t config_dim = spec::csr::config::dim.get(csr_peek(spec::csr::kConfig));
    if (config_dim != dim_ || dim_ != sizeof(top_->mem_rsp_rdata_i)) {
      throw std::logic_error("rtl core: CONFIG reads DIM " + std::to_string(config_dim) +
                             ", the preset " + std::to_string(dim_) +
                             ": the model does not match its memory port");
    }
  }
  VerilatedCore(const VerilatedCore&) = delete;
  VerilatedCore& operator=(const VerilatedCore&) = delete;

  ~VerilatedCore() override {
#ifdef TPUEMU_RTL_TRACE
    if (fst_) fst_->close();
#endif
    top_->final();
    // Verilator 5.006 unregisters scopes through the thread's current context: make it ours, or
    // destroying this core while an older one lives deadlocks in the scope registry.
    Verilated::threadContextp(context_.get());
    top_.reset();
  }

  std::uint32_t dim() const override { return dim_; }

  void reset() override {
    port_.reset();
    reset_core(
        *top_, [this] { tick(); }, [this] { tick(); });
  }

  std::uint32_t csr_peek(std::uint32_t addr) override { return peek_csr(*top_, addr); }
  bool csr_read_advances(std::uint32_t addr) const override { return addr == spec::csr::kSmemData; }
  void csr_cycle(std::uint32_t addr, bool write, std::uint32_t value) override {
    csr_edge(*top_, addr, write, value, [this] { tick(); });
  }

  std::uint64_t run(std::uint64_t cycles, bool stop_when_idle) override {
    stop_ = false;
    for (std::uint64_t i = 0; i < cycles; ++i) {
      if (port_.halted()) return i;
      tick();
      if (stop_ || (stop_when_idle && !top_->busy_o)) return i + 1;
    }
    return cycles;
  }

  void stop() override { stop_ = true; }
  std::uint64_t cycle() const override { return cycle_; }
  bool busy() const override { return top_->busy_o != 0; }

  Port& port() { return port_; }
  const Port& port() const { return port_; }

  void record_trace(bool on) override {
    recording_ = on;
    if (!on) return;
    trace_.clear();
    trace_start_.reset();
    issued_.fill(0);
    stalled_.fill(false);
    stalled_any_ = false;
  }
  std::vector<TraceEvent> take_trace() override {
    for (std::size_t k = 0; k < stalled_.size(); ++k) {
      if (stalled_[k])
        trace_.push_back({cycle_, static_cast<std::uint8_t>(k), TraceEvent::WaitEnd, issued_[k]});
    }
    stalled_.fill(false);
    return std::exchange(trace_, {});
  }
  std::optional<std::uint64_t> trace_start() const override { return trace_start_; }

  // FST waveform of every following cycle.
  void open_waveform(const std::filesystem::path& fst_file) {
#ifdef TPUEMU_RTL_TRACE
    context_->traceEverOn(true);
    fst_ = std::make_unique<VerilatedFstC>();
    top_->trace(fst_.get(), 99);
    fst_->open(fst_file.c_str());
#else
    throw std::runtime_error(
        "trace " + fst_file.string() +
        ": this build has no FST tracing (configure with -DTPUEMU_RTL_TRACE=ON)");
#endif
  }

 private:
  void tick() {
    const std::uint8_t* rsp = port_.read_response(cycle_);
    top_->mem_rsp_valid_i = rsp != nullptr;
    if (rsp) put_bytes(top_->mem_rsp_rdata_i, rsp, dim_);
    top_->mem_wack_valid_i = port_.write_ack(cycle_);
    top_->mem_req_ready_i = port_.ready(cycle_);
    top_->clk_i = 0;
    top_->eval();
    dump(2 * cycle_);
    const bool valid = top_->mem_req_valid_o != 0, write = top_->mem_req_write_o != 0;
    const auto addr = static_cast<std::uint64_t>(top_->mem_req_addr_o);
    bool have_wdata = false;
    const auto wdata = [&]() -> std::span<const std::uint8_t> {
      if (write && !have_wdata) get_bytes(top_->mem_req_wdata_o, wbuf_.data(), dim_);
      have_wdata = true;
      return wbuf_;
    };
    if (!(valid && top_->mem_req_ready_i) && port_.offer(cycle_, valid, write, addr, wdata)) {
      top_->mem_req_ready_i = 1;  // accepted in the cycle it appeared: settle again with ready
      top_->eval();
    }
    if (recording_) sample_trace();
    const bool accepted = valid && top_->mem_req_ready_i;
    if (accepted) port_.accept(cycle_, write, addr, wdata());
    top_->clk_i = 1;
    top_->eval();
    dump(2 * cycle_ + 1);
    ++cycle_;
    port_.end_cycle(cycle_, accepted && write);
    // A failed assertion or $stop in the core (the hooks keep it off stdout and out of abort()).
    if (context_->gotError()) throw std::runtime_error(take_verilator_error());
  }

  void dump([[maybe_unused]] std::uint64_t time) {
#ifdef TPUEMU_RTL_TRACE
    if (fst_) fst_->dump(time);
#endif
  }

  // One cycle of the trace port, before the clock edge (the engines' combinational outputs of
  // this cycle): a wait level change, an issue (the head's queue index is the count of issues so
  // far), completions with their queue indices.
  void sample_trace() {
    if (!trace_start_ && top_->busy_o) trace_start_ = cycle_;
    namespace tr = spec::trace;
    // Most cycles nothing happens: no issue, done or wait bit set and no wait to end.
    bool active = stalled_any_;
    for (std::size_t w = 0; !active && w < kTraceControl.size(); ++w)
      active = (top_->trace_o[w] & kTraceControl[w]) != 0;
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
        trace_.push_back(
            {cycle_, engine, stall ? TraceEvent::WaitBegin : TraceEvent::WaitEnd, issued_[k]});
      }
      if (issue) trace_.push_back({cycle_, engine, TraceEvent::Issue, issued_[k]++});
      for (std::uint32_t p = 0; done != 0 && p < e.done_ports; ++p) {
        if (!((done >> p) & 1)) continue;
        const auto index = static_cast<std::uint32_t>(
            get_bits(top_->trace_o, e.done_idx + p * tr::kIndexWidth, tr::kIndexWidth));
        trace_.push_back({cycle_, engine, TraceEvent::Done, index});
      }
    }
  }

  std::uint32_t dim_;
  Port port_;
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Top> top_;
  std::vector<std::uint8_t> wbuf_;  // the write data of the cycle's request
  std::uint64_t cycle_ = 0;
  bool stop_ = false;
  bool recording_ = false;
  std::vector<TraceEvent> trace_;
  std::optional<std::uint64_t> trace_start_;
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
  std::unique_ptr<VerilatedFstC> fst_;
#endif
};

}  // namespace tpuemu::sim
