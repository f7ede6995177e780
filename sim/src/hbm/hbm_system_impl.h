// SPDX-License-Identifier: Apache-2.0
// HbmSystem over one Verilated HBM controller: the bare controller (hbm_ctrl_harness, one model per
// channel count, see hbm_system.cpp) with its request lanes, or the board's memory system
// (hbm_board_mem, HbmSetup::board: the RTL beat bridge in front of the controller, the RTL DRAM
// shim and a backing store) driven through core_port(). What both do alike - the timing set, the
// reset, the DRAM model behind the command bus, statistics, the back door - is
// VerilatedHbmSystemBase over HbmCtrlDriver (hbm_ctrl_driver.h, which tests/rtl/test_hbm_ctrl.cpp
// uses too); the two thin classes below it add only their cycle and their port.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

#include "hbm/backing_store.h"
#include "hbm/hbm_ctrl_driver.h"
#include "tpuemu/sim/verilator_messages.h"

namespace tpuemu::sim::hbm {

unsigned log2_exact(std::uint32_t v);
std::uint64_t amap_word(const HbmSetup& setup);

template <typename Top, unsigned Channels>
class VerilatedHbmSystemBase : public HbmSystem {
 public:
  explicit VerilatedHbmSystemBase(const HbmSetup& setup)
      : setup_(setup),
        layout_(address_layout(setup)),
        ctrl_(setup.dram, setup.queues, amap_word(setup), setup.closed_page),
        top_(ctrl_.top()) {}

  const HbmSetup& setup() const override { return setup_; }

  void tick() override {
    responses_.clear();
    // Responses that came while posted writes were settled (settle_posted_writes) come now.
    responses_.swap(carried_);
    step();
  }

  void record_activity(bool on) override {
    recording_ = on;
    open_.assign(Channels, std::nullopt);
  }

  std::vector<ChannelActivity> take_activity() override {
    for (auto& o : open_) {
      if (o) activity_.push_back(*o);
      o.reset();
    }
    std::stable_sort(activity_.begin(), activity_.end(),
                     [](const ChannelActivity& a, const ChannelActivity& b) {
                       return a.channel != b.channel ? a.channel < b.channel : a.begin < b.begin;
                     });
    return std::exchange(activity_, {});
  }
  const std::vector<Response>& responses() const override { return responses_; }
  std::uint64_t cycle() const override { return ctrl_.cycle(); }
  const std::optional<std::string>& fault() const override { return fault_; }

  void finish() override {
    if (fault_) return;
    try {
      ctrl_.device().finish(ctrl_.cycle());
    } catch (const std::exception& e) {
      fault_ = std::string("hbm: ") + e.what();
    }
  }

  Statistics statistics() const override {
    Statistics s;
    const std::uint64_t cycle = ctrl_.cycle();
    s.cycles = cycle;
    s.set_channels(ctrl_.all_counters(), setup_.dram.tBURST());
    s.set_figures(static_cast<double>(std::max<std::uint64_t>(cycle, 1)), Channels, setup_.dram,
                  latency_, offer_latency_);
    s.host_cycles = host_cycles_;
    s.held_host_cycles = held_host_cycles_;
    return s;
  }

  std::uint64_t posted_writes() const override { return ctrl_.posted_writes(); }

  void backdoor_write(std::uint64_t addr, std::span<const std::uint8_t> data) override {
    settle_posted_writes();
    before_backdoor_write();
    for_each_burst(addr, data.size(),
                   [&](const Coordinate& c, Burst& burst, std::uint32_t boff, std::size_t done,
                       std::uint32_t len) {
                     std::memcpy(burst.data() + boff, data.data() + done, len);
                     ctrl_.device().backdoor_write(c.channel, c.bank_group, c.bank, c.row, c.column,
                                                   burst);
                     backdoor_burst_written(c, burst);
                   });
  }

  void backdoor_read(std::uint64_t addr, std::span<std::uint8_t> data) override {
    settle_posted_writes();
    for_each_burst(
        addr, data.size(),
        [&](const Coordinate&, Burst& burst, std::uint32_t boff, std::size_t done,
            std::uint32_t len) { std::memcpy(data.data() + done, burst.data() + boff, len); });
  }

 protected:
  static constexpr std::uint64_t kMaxSettleCycles = 1'000'000;

  // One DRAM clock, its responses appended to responses_; an exception sets fault_.
  virtual void step() = 0;
  // The back door: before it writes the device model, and each burst it wrote.
  virtual void before_backdoor_write() {}
  virtual void backdoor_burst_written(const Coordinate&, const std::array<std::uint8_t, 64>&) {}

  // The commands of this cycle to the device model, recorded when asked.
  void issue_commands() {
    ctrl_.issue_commands([&](unsigned ch, const dram::Command& cmd) {
      if (recording_) record_command(ch, cmd.op);
    });
  }

  // The read responses of this cycle: their latencies; each passed to take(channel, id).
  template <typename Take>
  void read_responses(Take&& take) {
    if (top_.rsp_valid_o == 0) return;
    for (unsigned ch = 0; ch < Channels; ++ch) {
      if (!get_bits(top_.rsp_valid_o, ch, 1)) continue;
      const auto id = static_cast<std::uint8_t>(top_.rsp_id_o[ch]);
      latency_.add(ctrl_.cycle() - accept_cycle_[id]);
      offer_latency_.add(ctrl_.cycle() - offer_cycle_[id]);
      take(ch, id);
    }
  }

  // Writes are posted (answered once queued): before the back door touches the DRAM, the
  // controller's queued writes reach it, so the back door sees every write answered so far and a
  // back-door write is not overwritten by an older queued one. The clocks this takes are the
  // system's (cycle() moves on); responses they produce come with the next tick().
  void settle_posted_writes() {
    for (std::uint64_t n = 0; posted_writes() > 0 && !fault_; ++n) {
      if (n > kMaxSettleCycles) throw std::runtime_error("hbm: queued writes do not drain");
      std::swap(responses_, carried_);
      step();
      std::swap(responses_, carried_);
    }
    if (fault_) throw std::runtime_error(*fault_);
  }

  // A failed controller assertion or $stop (collected by the Verilator hooks).
  void check_verilator_error() {
    if (ctrl_.context().gotError()) throw std::runtime_error(take_verilator_error());
  }

  using Burst = std::array<std::uint8_t, 64>;

  // Each 64-byte burst that [addr, addr + size) touches: f(coordinate, the burst as the device
  // holds it, its first byte in the range, where that byte is in the range, the bytes in it).
  template <typename F>
  void for_each_burst(std::uint64_t addr, std::size_t size, F&& f) {
    for (std::size_t done = 0; done < size;) {
      const std::uint64_t a = addr + done;
      const auto boff = static_cast<std::uint32_t>(a % 64);
      const auto len = static_cast<std::uint32_t>(std::min<std::size_t>(64 - boff, size - done));
      const Coordinate c = coordinate_of(layout_.decode(a));
      Burst burst{};
      ctrl_.device().backdoor_read(c.channel, c.bank_group, c.bank, c.row, c.column, burst);
      f(c, burst, boff, done, len);
      done += len;
    }
  }

  // The data-bus burst of a RD/WR, or the refresh of a REF; a burst that starts where (or before)
  // the channel's open busy interval ends extends it.
  void record_command(unsigned ch, dram::Op op) {
    const dram::Config& d = setup_.dram;
    ChannelActivity a{.channel = ch};
    if (op == dram::Op::Rd || op == dram::Op::Wr) {
      a.begin = ctrl_.cycle() + (op == dram::Op::Rd ? d.CL : d.CWL);
      a.end = a.begin + d.tBURST();
      std::optional<ChannelActivity>& o = open_[ch];
      if (o && a.begin <= o->end) {
        o->end = std::max(o->end, a.end);
        return;
      }
      if (o) activity_.push_back(*o);
      o = a;
    } else if (op == dram::Op::Ref) {
      a.refresh = true;
      a.begin = ctrl_.cycle();
      a.end = ctrl_.cycle() + d.tRFC;
      activity_.push_back(a);
    }
  }

  HbmSetup setup_;
  AddressLayout layout_;
  HbmCtrlDriver<Top, Channels> ctrl_;
  Top& top_;
  std::vector<Response> responses_;
  std::vector<Response> carried_;  // produced while settling posted writes, for the next tick
  // Read latencies, tCK: from acceptance, and from the offer on a lane (waits for a full queue).
  LatencyHistogram latency_, offer_latency_;
  std::array<std::uint64_t, 256> accept_cycle_{};  // per id: the tick its read was accepted
  std::array<std::uint64_t, 256>
      offer_cycle_{};  // per id: the tick its request was first on a lane
  bool recording_ = false;
  std::vector<std::optional<ChannelActivity>>
      open_;  // per channel: the busy interval being extended
  std::vector<ChannelActivity> activity_;
  std::optional<std::string> fault_;
  std::uint64_t host_cycles_ = 0, held_host_cycles_ = 0;  // the board top's (0 for the controller)
};

// The bare controller: requests offered on its lanes, the device model's read data fed back.
template <typename Top, unsigned Channels, unsigned Lanes>
class VerilatedHbmSystem final : public VerilatedHbmSystemBase<Top, Channels> {
  using Base = VerilatedHbmSystemBase<Top, Channels>;
  using Base::accept_cycle_, Base::ctrl_, Base::fault_, Base::offer_cycle_, Base::responses_,
      Base::top_;

 public:
  explicit VerilatedHbmSystem(const HbmSetup& setup) : Base(setup) {
    top_.req_valid_i = 0;
    top_.rvalid_i = 0;
    ctrl_.reset();
  }

  unsigned lanes() const override { return Lanes; }

  bool offer(const Request& r) override {
    for (unsigned p = 0; p < Lanes; ++p) {
      if (lane_valid_ & (1u << p)) continue;
      lane_valid_ |= 1u << p;
      top_.req_addr_i[p] = r.addr;
      set_bits(top_.req_write_i, p, 1, r.write);
      top_.req_id_i[p] = r.id;
      lane_id_[p] = r.id;
      offer_cycle_[r.id] = ctrl_.cycle();
      lane_write_[p] = r.write;
      if (r.write) {
        put_bytes(top_.req_wdata_i[p], r.wdata, 64);
        top_.req_wmask_i[p] = r.wmask;
      }
      return true;
    }
    return false;
  }

  bool lanes_busy() const override { return busy_lanes() != 0; }
  std::uint32_t busy_lanes() const override { return lane_valid_; }

 private:
  void step() override {
    if (fault_) return;
    try {
      ctrl_.drive_read_data();
      top_.req_valid_i = lane_valid_;
      top_.clk_i = 0;
      top_.eval();
      const std::uint32_t ready = static_cast<std::uint32_t>(top_.req_ready_o) & lane_valid_;
      for (unsigned p = 0; ready != 0 && p < Lanes; ++p) {
        if (!((ready >> p) & 1)) continue;
        if (!lane_write_[p]) accept_cycle_[lane_id_[p]] = ctrl_.cycle();
        lane_valid_ &= ~(1u << p);
      }
      this->issue_commands();
      this->read_responses([&](unsigned ch, std::uint8_t id) {
        Response& r = responses_.emplace_back();
        r.write = false;
        r.id = id;
        get_bytes(top_.rsp_data_o[ch], r.data.data(), 64);
      });
      if (top_.bresp_valid_o != 0) {
        for (unsigned ch = 0; ch < Channels; ++ch) {
          if (!get_bits(top_.bresp_valid_o, ch, 1)) continue;
          Response& r = responses_.emplace_back();
          r.write = true;
          r.id = static_cast<std::uint8_t>(top_.bresp_id_o[ch]);
        }
      }
      ctrl_.clock_edge();
      this->check_verilator_error();
    } catch (const std::exception& e) {
      fault_ = std::string("hbm: ") + e.what();
    }
  }

  std::uint32_t lane_valid_ = 0;
  std::array<std::uint8_t, Lanes> lane_id_{};
  std::array<bool, Lanes> lane_write_{};
};

// The board's memory system: the core's beats on core_port(), the bridge's lanes as taps, the
// RTL DRAM shim's read data (from the backing store) checked against the device model's.
template <typename Top, unsigned Channels, unsigned Lanes>
class VerilatedBoardHbmSystem final : public VerilatedHbmSystemBase<Top, Channels>,
                                      public CorePort {
  using Base = VerilatedHbmSystemBase<Top, Channels>;
  using Base::accept_cycle_, Base::ctrl_, Base::fault_, Base::held_host_cycles_, Base::host_cycles_,
      Base::offer_cycle_, Base::setup_, Base::top_;

 public:
  explicit VerilatedBoardHbmSystem(const HbmSetup& setup) : Base(setup) {
    if (!setup.board) throw std::invalid_argument("hbm: the board top needs HbmSetup::board");
    beat_.resize(setup.board->core_beat_bytes);
    backing_.emplace(*setup.board);
    top_.core_req_valid_i = 0;
    top_.bs_req_ready_i = 0;
    top_.bs_rsp_valid_i = 0;
    top_.target_hold_i = 0;
    ctrl_.reset();
  }

  unsigned lanes() const override { return Lanes; }
  bool offer(const Request&) override {
    throw std::logic_error("hbm: the board memory takes beats on its core port, not bursts");
  }
  bool lanes_busy() const override { return busy_lanes() != 0; }
  std::uint32_t busy_lanes() const override {
    return static_cast<std::uint32_t>(top_.lane_valid_o);
  }

  // ---- CorePort: the bridge's registered outputs of this target cycle
  CorePort* core_port() override { return this; }
  bool ready() const override { return top_.core_req_ready_o != 0; }
  const std::uint8_t* read_response() override {
    if (!top_.core_rsp_valid_o) return nullptr;
    get_bytes(top_.core_rsp_rdata_o, beat_.data(), static_cast<unsigned>(beat_.size()));
    return beat_.data();
  }
  bool write_ack() const override { return top_.core_wack_valid_o != 0; }
  void drive(bool write, std::uint64_t addr, std::span<const std::uint8_t> wdata) override {
    top_.core_req_valid_i = 1;
    top_.core_req_write_i = write;
    top_.core_req_addr_i = static_cast<std::uint32_t>(addr);
    if (write)
      put_bytes(top_.core_req_wdata_i, wdata.data(),
                static_cast<unsigned>(std::min(wdata.size(), beat_.size())));
  }

 private:
  static constexpr std::uint64_t kMaxHeldHostCycles = 1'000'000;

  void step() override {
    if (fault_) return;
    try {
      check_shim_read_data();
      host_cycles_until_target_edge();
      // The bridge's lanes, as taps.
      const auto valid = static_cast<std::uint32_t>(top_.lane_valid_o);
      for (unsigned p = 0; p < Lanes; ++p) {
        if ((valid >> p & 1u) && !(lanes_seen_ >> p & 1u))
          offer_cycle_[top_.lane_id_o[p]] = ctrl_.cycle();
      }
      lanes_seen_ = valid;
      const std::uint32_t taken = static_cast<std::uint32_t>(top_.lane_valid_o & top_.lane_ready_o);
      lanes_seen_ &= ~taken;
      for (unsigned p = 0; taken != 0 && p < Lanes; ++p) {
        if (!((taken >> p) & 1)) continue;
        if (!get_bits(top_.lane_write_o, p, 1)) accept_cycle_[top_.lane_id_o[p]] = ctrl_.cycle();
      }
      this->issue_commands();
      this->read_responses([](unsigned, std::uint8_t) {});  // the bridge takes them itself
      backing_->host_cycle(top_);
      ctrl_.clock_edge();
      top_.core_req_valid_i = 0;  // a beat is driven for one target cycle
      ++host_cycles_;
      this->check_verilator_error();
    } catch (const std::exception& e) {
      fault_ = std::string("hbm: ") + e.what();
    }
  }

  // The back door's bursts reach the backing store too: the data the shim reads. Before, the
  // shim's posted writes drain.
  void before_backdoor_write() override { drain_shim(); }
  void backdoor_burst_written(const Coordinate& c,
                              const std::array<std::uint8_t, 64>& burst) override {
    backing_->write(burst_index(c), burst);
  }

  // The backing store's address of a burst, as the shim forms it: {ch, bg, bank, row, column}.
  std::uint64_t burst_index(const Coordinate& c) const {
    constexpr unsigned bgw = 2, baw = 2;  // 4 bank groups x 4 banks (make_hbm_system checks)
    std::uint64_t a = c.channel;
    a = (a << bgw) | c.bank_group;
    a = (a << baw) | c.bank;
    a = (a << spec::hbm::kRowWidth) | c.row;
    a = (a << spec::hbm::kColWidth) | c.column;
    return a;
  }

  // The shim's read data of this target cycle must be the device model's, bit for bit.
  void check_shim_read_data() {
    for (unsigned ch = 0; ch < Channels; ++ch) {
      const auto d = ctrl_.device().read_data(ctrl_.cycle(), ch);
      const bool shim = get_bits(top_.rvalid_o, ch, 1) != 0;
      if (shim != !d.empty()) {
        throw std::runtime_error("board shim: channel " + std::to_string(ch) + " cycle " +
                                 std::to_string(ctrl_.cycle()) +
                                 (shim ? ": read data the device model does not return"
                                       : ": the device model's read data is missing"));
      }
      if (!d.empty()) {
        std::array<std::uint8_t, 64> got{};
        get_bytes(top_.rdata_o[ch], got.data(), 64);
        if (!std::equal(got.begin(), got.end(), d.begin())) {
          throw std::runtime_error("board shim: channel " + std::to_string(ch) + " cycle " +
                                   std::to_string(ctrl_.cycle()) +
                                   ": read data differs from the device model's");
        }
      }
    }
  }

  // Before the host writes the backing store directly: the target clock stopped, host cycles until
  // every write the shim posted has reached the store (else one could land after the host's).
  void drain_shim() {
    top_.target_hold_i = 1;
    for (std::uint64_t n = 0; !host_clock_low(); ++n) {
      if (n > kMaxHeldHostCycles)
        throw std::runtime_error("board shim: the backing store does not drain");
      held_host_cycle();
    }
    top_.target_hold_i = 0;
    top_.eval();
  }

  // The first half of a host cycle: clock low, the backing store's outputs, evaluated. Returns
  // what the cycle waits for: the target edge (target_en_o), or with the target held, the shim's
  // idle.
  bool host_clock_low() {
    top_.clk_i = 0;
    backing_->drive(top_);
    top_.eval();
    return top_.target_hold_i ? top_.shim_idle_o != 0 : top_.target_en_o != 0;
  }

  // The rest of a host cycle without a target edge.
  void held_host_cycle() {
    backing_->host_cycle(top_);
    top_.clk_i = 1;
    top_.eval();
    ++host_cycles_;
    ++held_host_cycles_;
    if (ctrl_.context().gotError()) throw std::runtime_error(take_verilator_error());
  }

  // Host cycles with the target clock held, until the one that ends with a target edge; that one
  // is left at its falling half (clock low, evaluated) for the target cycle's sampling.
  void host_cycles_until_target_edge() {
    for (std::uint64_t held = 0; !host_clock_low(); ++held) {
      if (held > kMaxHeldHostCycles) {
        throw std::runtime_error("board shim: the target clock has been held for " +
                                 std::to_string(held) + " host cycles (target cycle " +
                                 std::to_string(ctrl_.cycle()) + ")");
      }
      held_host_cycle();
    }
  }

  std::vector<std::uint8_t> beat_;
  std::uint32_t lanes_seen_ = 0;  // lanes whose request has its offer cycle
  std::optional<BackingStore> backing_;
};

}  // namespace tpuemu::sim::hbm
