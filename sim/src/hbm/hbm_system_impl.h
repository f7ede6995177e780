// SPDX-License-Identifier: Apache-2.0
// HbmSystem over one Verilated hbm_ctrl (one per channel count, see hbm_system.cpp), or over the
// board's memory system (hbm_board_mem, HbmSetup::board: the RTL beat bridge in front of the
// controller, the RTL DRAM shim and a backing store), driven through core_port().
#pragma once

#include <algorithm>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

#include <verilated.h>

#include "tpuemu/sim/verilator_messages.h"
#include "dram/device.h"
#include "hbm/backing_store.h"
#include "tpuemu/sim/hbm_system.h"
#include "verilator_bits.h"

namespace tpuemu::sim::hbm {

unsigned log2_exact(std::uint32_t v);
std::uint64_t amap_word(const HbmSetup& setup);

// The board top shows the shim's read data (rvalid_o) instead of taking the device model's.
template <typename Top>
concept BoardTop = requires(Top t) { t.target_en_o; t.rvalid_o; };
// The board's memory system takes the core's beats; its lanes are taps.
template <typename Top>
concept BridgeTop = requires(Top t) { t.core_req_valid_i; t.lane_valid_o; };

template <typename Top, unsigned Channels, unsigned Lanes>
class VerilatedHbmSystem final : public HbmSystem, public CorePort {
  static constexpr bool kBoard = BoardTop<Top>;
  static constexpr bool kBridge = BridgeTop<Top>;
  static_assert(kBoard == kBridge, "the board's memory system is the one board top Verilated");

 public:
  explicit VerilatedHbmSystem(const HbmSetup& setup)
      : setup_(setup),
        layout_(address_layout(setup)),
        device_(setup.dram),
        context_(std::make_unique<VerilatedContext>()) {
    top_ = std::make_unique<Top>(context_.get(), "hbm");
    // hbm_spec_pkg::timing_t: the contract's timings in order, the burst length, the queue sizes.
    const auto timings = setup.dram.timings();
    constexpr unsigned w = spec::hbm::kTimingWidth;
    for (unsigned k = 0; k < timings.size(); ++k) set_bits(top_->timing_i, w * k, w, timings[k]);
    set_bits(top_->timing_i, w * spec::hbm::kNumTimings, w, setup.dram.burst_length);
    const auto queues = setup.queues.values();
    for (unsigned k = 0; k < queues.size(); ++k) set_bits(top_->timing_i, w * (spec::hbm::kNumTimings + 1 + k), w, queues[k]);
    top_->amap_i = amap_word(setup);
    top_->page_policy_i = setup.closed_page ? 1 : 0;
    top_->per_bank_refresh_i = 0;
    if constexpr (kBridge) {
      top_->core_req_valid_i = 0;
    } else {
      top_->req_valid_i = 0;
    }
    if constexpr (kBoard) {
      if (!setup.board) throw std::invalid_argument("hbm: the board top needs HbmSetup::board");
      backing_.emplace(*setup.board);
      top_->bs_req_ready_i = 0;
      top_->bs_rsp_valid_i = 0;
      top_->target_hold_i = 0;
    } else {
      top_->rvalid_i = 0;
    }
    top_->rst_ni = 0;
    for (int i = 0; i < 2; ++i) {
      top_->clk_i = 0;
      top_->eval();
      top_->clk_i = 1;
      top_->eval();
    }
    top_->rst_ni = 1;
    top_->clk_i = 0;
    top_->eval();
  }

  ~VerilatedHbmSystem() override {
    top_->final();
    Verilated::threadContextp(context_.get());  // see VerilatedCoreSim's destructor
    top_.reset();
  }

  const HbmSetup& setup() const override { return setup_; }
  unsigned lanes() const override { return Lanes; }

  bool offer(const Request& r) override {
    if constexpr (kBridge) {
      throw std::logic_error("hbm: the board memory takes beats on its core port, not bursts");
    } else {
      for (unsigned p = 0; p < Lanes; ++p) {
        if (lane_valid_ & (1u << p)) continue;
        lane_valid_ |= 1u << p;
        top_->req_addr_i[p] = r.addr;
        set_bits(top_->req_write_i, p, 1, r.write);
        top_->req_id_i[p] = r.id;
        lane_id_[p] = r.id;
        offer_cycle_[r.id] = cycle_;
        lane_write_[p] = r.write;
        if (r.write) {
          put_bytes(top_->req_wdata_i[p], r.wdata, 64);
          top_->req_wmask_i[p] = r.wmask;
        }
        return true;
      }
      return false;
    }
  }

  bool lanes_busy() const override { return busy_lanes() != 0; }
  std::uint32_t busy_lanes() const override {
    if constexpr (kBridge) return static_cast<std::uint32_t>(top_->lane_valid_o);
    return lane_valid_;
  }

  // ---- CorePort (the board memory only): the bridge's registered outputs of this target cycle
  CorePort* core_port() override {
    if constexpr (kBridge) return this;
    return nullptr;
  }
  bool ready() const override {
    if constexpr (kBridge) return top_->core_req_ready_o != 0;
    return false;
  }
  const std::uint8_t* read_response() override {
    if constexpr (kBridge) {
      if (!top_->core_rsp_valid_o) return nullptr;
      get_bytes(top_->core_rsp_rdata_o, beat_.data(), static_cast<unsigned>(beat_.size()));
      return beat_.data();
    }
    return nullptr;
  }
  bool write_ack() const override {
    if constexpr (kBridge) return top_->core_wack_valid_o != 0;
    return false;
  }
  void drive(bool write, std::uint64_t addr, std::span<const std::uint8_t> wdata) override {
    if constexpr (kBridge) {
      top_->core_req_valid_i = 1;
      top_->core_req_write_i = write;
      top_->core_req_addr_i = static_cast<std::uint32_t>(addr);
      if (write) put_bytes(top_->core_req_wdata_i, wdata.data(), static_cast<unsigned>(std::min(wdata.size(), beat_.size())));
    }
  }

  void tick() override {
    responses_.clear();
    // Responses that came while posted writes were settled (settle_posted_writes) come now.
    responses_.swap(carried_);
    step();
  }

  // One DRAM clock, its responses appended to responses_.
  void step() {
    accepted_ = 0;
    if (fault_) return;
    try {
      if constexpr (kBoard) {
        check_shim_read_data();
        host_cycles_until_target_edge();
      } else {
        top_->rvalid_i = 0;
        for (unsigned ch = 0; ch < Channels; ++ch) {
          const auto d = device_.read_data(cycle_, ch);
          if (!d.empty()) {
            set_bits(top_->rvalid_i, ch, 1, 1);
            put_bytes(top_->rdata_i[ch], d.data(), 64);
          }
        }
        top_->req_valid_i = lane_valid_;
        top_->clk_i = 0;
        top_->eval();
      }

      if constexpr (kBridge) {  // the bridge's lanes, as taps
        const auto valid = static_cast<std::uint32_t>(top_->lane_valid_o);
        for (unsigned p = 0; p < Lanes; ++p) {
          if ((valid >> p & 1u) && !(lanes_seen_ >> p & 1u)) offer_cycle_[top_->lane_id_o[p]] = cycle_;
        }
        lanes_seen_ = valid;
        const std::uint32_t taken = static_cast<std::uint32_t>(top_->lane_valid_o & top_->lane_ready_o);
        lanes_seen_ &= ~taken;
        for (unsigned p = 0; taken != 0 && p < Lanes; ++p) {
          if (!((taken >> p) & 1)) continue;
          if (!get_bits(top_->lane_write_o, p, 1)) accept_cycle_[top_->lane_id_o[p]] = cycle_;
          ++accepted_;
        }
      } else {
        const std::uint32_t ready = static_cast<std::uint32_t>(top_->req_ready_o) & lane_valid_;
        for (unsigned p = 0; ready != 0 && p < Lanes; ++p) {
          if (!((ready >> p) & 1)) continue;
          if (!lane_write_[p]) accept_cycle_[lane_id_[p]] = cycle_;
          lane_valid_ &= ~(1u << p);
          ++accepted_;
        }
      }
      if (top_->cmd_valid_o != 0) {
        for (unsigned ch = 0; ch < Channels; ++ch) {
          if (get_bits(top_->cmd_valid_o, ch, 1)) command(ch);
        }
      }
      if (top_->rsp_valid_o != 0) {
        for (unsigned ch = 0; ch < Channels; ++ch) {
          if (!get_bits(top_->rsp_valid_o, ch, 1)) continue;
          const auto id = static_cast<std::uint8_t>(top_->rsp_id_o[ch]);
          latency_.add(cycle_ - accept_cycle_[id]);
          offer_latency_.add(cycle_ - offer_cycle_[id]);
          if constexpr (!kBridge) {  // the bridge takes them itself
            Response& r = responses_.emplace_back();
            r.write = false;
            r.id = id;
            get_bytes(top_->rsp_data_o[ch], r.data.data(), 64);
          }
        }
      }
      if constexpr (!kBridge) collect_write_responses();
      if constexpr (kBoard) backing_->host_cycle(*top_);
      top_->clk_i = 1;
      top_->eval();
      top_->clk_i = 0;
      if constexpr (kBridge) top_->core_req_valid_i = 0;  // a beat is driven for one target cycle
      ++cycle_;
      if constexpr (kBoard) ++host_cycles_;
      // A failed controller assertion or $stop (collected by the Verilator hooks).
      if (context_->gotError()) throw std::runtime_error(take_verilator_error());
    } catch (const std::exception& e) {
      fault_ = std::string("hbm: ") + e.what();
    }
  }

  unsigned accepted_last_tick() const override { return accepted_; }

  void record_activity(bool on) override {
    recording_ = on;
    open_.assign(Channels, std::nullopt);
  }

  std::vector<ChannelActivity> take_activity() override {
    for (auto& o : open_) {
      if (o) activity_.push_back(*o);
      o.reset();
    }
    std::stable_sort(activity_.begin(), activity_.end(), [](const ChannelActivity& a, const ChannelActivity& b) {
      return a.channel != b.channel ? a.channel < b.channel : a.begin < b.begin;
    });
    return std::exchange(activity_, {});
  }
  const std::vector<Response>& responses() const override { return responses_; }
  std::uint64_t cycle() const override { return cycle_; }
  const std::optional<std::string>& fault() const override { return fault_; }

  void finish() override {
    if (fault_) return;
    try {
      device_.finish(cycle_);
    } catch (const std::exception& e) {
      fault_ = std::string("hbm: ") + e.what();
    }
  }

  Statistics statistics() const override {
    Statistics s;
    s.cycles = cycle_;
    // hbm_spec_pkg::stats_t of each channel: counter k in bits [64k +: 64]. The totals are the
    // sums of the counters, converted like a channel's.
    std::array<std::uint64_t, spec::hbm::kNumStats> total{};
    for (unsigned ch = 0; ch < Channels; ++ch) {
      std::array<std::uint64_t, spec::hbm::kNumStats> counters{};
      for (unsigned k = 0; k < counters.size(); ++k) {
        counters[k] = get_bits(top_->stats_o[ch], 64 * k, 64);
        total[k] += counters[k];
      }
      s.channels.push_back(channel_statistics(counters));
    }
    s.total = channel_statistics(total);
    const double cycles = static_cast<double>(std::max<std::uint64_t>(cycle_, 1));
    const double burst = setup_.dram.burst_bytes();
    s.bytes_per_cycle = static_cast<double>(s.total.reads + s.total.writes) * burst / cycles;
    s.peak_bytes_per_cycle = Channels * burst / setup_.dram.tBURST();
    s.peak_fraction = s.bytes_per_cycle / s.peak_bytes_per_cycle;
    const std::uint64_t requests = s.total.row_hits + s.total.row_misses + s.total.row_conflicts;
    s.row_hit_rate = requests ? static_cast<double>(s.total.row_hits) / static_cast<double>(requests) : 0;
    s.read_latency_mean = latency_.mean();
    s.read_latency_p50 = latency_.percentile(0.50);
    s.read_latency_p99 = latency_.percentile(0.99);
    s.read_latency_from_offer_mean = offer_latency_.mean();
    s.read_latency_from_offer_p50 = offer_latency_.percentile(0.50);
    s.read_latency_from_offer_p99 = offer_latency_.percentile(0.99);
    s.host_cycles = host_cycles_;
    s.held_host_cycles = held_host_cycles_;
    return s;
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

  // Queued writes the device has not had a WR for (the controller counts a WR when it chooses
  // it, a cycle before the device gets it).
  std::uint64_t posted_writes() const override {
    std::uint64_t queued = 0;
    for (unsigned ch = 0; ch < Channels; ++ch) {
      queued += get_bits(top_->stats_o[ch], 64 * spec::hbm::stat::writes_queued, 64);
    }
    return queued - device_.total_stats().wr;
  }

  void backdoor_write(std::uint64_t addr, std::span<const std::uint8_t> data) override {
    settle_posted_writes();
    if constexpr (kBoard) drain_shim();
    for_each_burst(addr, data.size(), [&](const Coordinate& c, std::uint32_t boff, std::size_t done, std::uint32_t len) {
      std::array<std::uint8_t, 64> burst{};
      device_.backdoor_read(c.channel, c.bank_group, c.bank, c.row, c.column, burst);
      std::memcpy(burst.data() + boff, data.data() + done, len);
      device_.backdoor_write(c.channel, c.bank_group, c.bank, c.row, c.column, burst);
      if constexpr (kBoard) backing_->write(burst_index(c), burst);  // the data the shim reads
    });
  }

  void backdoor_read(std::uint64_t addr, std::span<std::uint8_t> data) override {
    settle_posted_writes();
    for_each_burst(addr, data.size(), [&](const Coordinate& c, std::uint32_t boff, std::size_t done, std::uint32_t len) {
      std::array<std::uint8_t, 64> burst{};
      device_.backdoor_read(c.channel, c.bank_group, c.bank, c.row, c.column, burst);
      std::memcpy(data.data() + done, burst.data() + boff, len);
    });
  }

 private:
  static constexpr std::size_t kHistogramBins = 1 << 14;
  static constexpr std::uint64_t kMaxSettleCycles = 1'000'000;

  void collect_write_responses() {
    if constexpr (!kBridge) {
      if (top_->bresp_valid_o != 0) {
        for (unsigned ch = 0; ch < Channels; ++ch) {
          if (!get_bits(top_->bresp_valid_o, ch, 1)) continue;
          Response& r = responses_.emplace_back();
          r.write = true;
          r.id = static_cast<std::uint8_t>(top_->bresp_id_o[ch]);
        }
      }
    }
  }

  // The report's figures of one channel's counters (or of their sums).
  ChannelStatistics channel_statistics(
      const std::array<std::uint64_t, spec::hbm::kNumStats>& v) const {
    namespace stat = spec::hbm::stat;
    ChannelStatistics c;
    c.counters = v;
    c.reads = v[stat::reads];
    c.writes = v[stat::writes];
    c.row_hits = v[stat::row_hits];
    c.row_misses = v[stat::row_misses];
    c.row_conflicts = v[stat::row_conflicts];
    c.acts = v[stat::acts];
    c.precharges = v[stat::pres] + v[stat::preas];
    c.refreshes = v[stat::refs];
    c.refresh_cycles = v[stat::ref_cycles];
    c.queue_occupancy_sum = v[stat::occ_sum];
    c.read_latency_sum = v[stat::rd_lat_sum];
    c.turnarounds = v[stat::turnarounds];
    c.data_bus_busy_cycles = (c.reads + c.writes) * setup_.dram.tBURST();
    return c;
  }

  template <typename F>
  void for_each_burst(std::uint64_t addr, std::size_t size, F&& f) {
    for (std::size_t done = 0; done < size;) {
      const std::uint64_t a = addr + done;
      const std::uint32_t boff = static_cast<std::uint32_t>(a % 64);
      const std::uint32_t len = static_cast<std::uint32_t>(std::min<std::size_t>(64 - boff, size - done));
      f(coordinate_of(layout_.decode(a)), boff, done, len);
      done += len;
    }
  }

  void command(unsigned ch) {
    dram::Command cmd;
    cmd.op = static_cast<dram::Op>(top_->cmd_o[ch]);
    cmd.bank_group = static_cast<std::uint32_t>(top_->cmd_bg_o[ch]);
    cmd.bank = static_cast<std::uint32_t>(top_->cmd_bank_o[ch]);
    cmd.row = static_cast<std::uint32_t>(top_->cmd_row_o[ch]);
    cmd.column = static_cast<std::uint32_t>(top_->cmd_col_o[ch]);
    if (cmd.op == dram::Op::Wr) {
      get_bytes(top_->cmd_wdata_o[ch], wbuf_.data(), 64);
      cmd.wdata = wbuf_.data();
      cmd.wmask = top_->cmd_wmask_o[ch];
    }
    device_.command(cycle_, ch, cmd);
    if (recording_) record_command(ch, cmd.op);
  }

  // The data-bus burst of a RD/WR, or the refresh of a REF; a burst that starts where (or before)
  // the channel's open busy interval ends extends it.
  void record_command(unsigned ch, dram::Op op) {
    const dram::Config& d = setup_.dram;
    ChannelActivity a{.channel = ch};
    if (op == dram::Op::Rd || op == dram::Op::Wr) {
      a.begin = cycle_ + (op == dram::Op::Rd ? d.CL : d.CWL);
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
      a.begin = cycle_;
      a.end = cycle_ + d.tRFC;
      activity_.push_back(a);
    }
  }


  // ---- board top
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
      const auto d = device_.read_data(cycle_, ch);
      const bool shim = get_bits(top_->rvalid_o, ch, 1) != 0;
      if (shim != !d.empty()) {
        throw std::runtime_error("board shim: channel " + std::to_string(ch) + " cycle " + std::to_string(cycle_) +
                                 (shim ? ": read data the device model does not return"
                                       : ": the device model's read data is missing"));
      }
      if (!d.empty()) {
        std::array<std::uint8_t, 64> got{};
        get_bytes(top_->rdata_o[ch], got.data(), 64);
        if (!std::equal(got.begin(), got.end(), d.begin())) {
          throw std::runtime_error("board shim: channel " + std::to_string(ch) + " cycle " +
                                   std::to_string(cycle_) + ": read data differs from the device model's");
        }
      }
    }
  }

  // Before the host writes the backing store directly: the target clock stopped, host cycles until
  // every write the shim posted has reached the store (else one could land after the host's).
  void drain_shim() {
    top_->target_hold_i = 1;
    for (std::uint64_t n = 0; !host_clock_low(); ++n) {
      if (n > kMaxHeldHostCycles) throw std::runtime_error("board shim: the backing store does not drain");
      held_host_cycle();
    }
    top_->target_hold_i = 0;
    top_->eval();
  }

  // The first half of a host cycle: clock low, the backing store's outputs, evaluated. Returns
  // what the cycle waits for: the target edge (target_en_o), or with the target held, the shim's
  // idle.
  bool host_clock_low() {
    top_->clk_i = 0;
    backing_->drive(*top_);
    top_->eval();
    return top_->target_hold_i ? top_->shim_idle_o != 0 : top_->target_en_o != 0;
  }

  // The rest of a host cycle without a target edge.
  void held_host_cycle() {
    backing_->host_cycle(*top_);
    top_->clk_i = 1;
    top_->eval();
    ++host_cycles_;
    ++held_host_cycles_;
    if (context_->gotError()) throw std::runtime_error(take_verilator_error());
  }

  // Host cycles with the target clock held, until the one that ends with a target edge; that one
  // is left at its falling half (clock low, evaluated) for the target cycle's sampling.
  void host_cycles_until_target_edge() {
    for (std::uint64_t held = 0; !host_clock_low(); ++held) {
      if (held > kMaxHeldHostCycles) {
        throw std::runtime_error("board shim: the target clock has been held for " + std::to_string(held) +
                                 " host cycles (target cycle " + std::to_string(cycle_) + ")");
      }
      held_host_cycle();
    }
  }


  HbmSetup setup_;
  AddressLayout layout_;
  dram::Device device_;
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Top> top_;
  std::uint32_t lane_valid_ = 0;
  std::array<std::uint8_t, Lanes> lane_id_{};
  std::array<bool, Lanes> lane_write_{};
  std::array<std::uint64_t, 256> accept_cycle_{};
  std::array<std::uint8_t, 64> wbuf_{};
  std::vector<std::uint8_t> beat_ = std::vector<std::uint8_t>(setup_.board ? setup_.board->core_beat_bytes : 0);
  std::vector<Response> responses_;
  std::vector<Response> carried_;  // produced while settling posted writes, for the next tick
  // Read latencies, tCK: from acceptance, and from the offer on a lane (waits for a full queue).
  struct Histogram {
    std::vector<std::uint64_t> bins = std::vector<std::uint64_t>(kHistogramBins, 0);
    std::uint64_t n = 0, sum = 0;
    void add(std::uint64_t v) {
      ++bins[std::min<std::uint64_t>(v, kHistogramBins - 1)];
      ++n;
      sum += v;
    }
    double mean() const { return n ? static_cast<double>(sum) / static_cast<double>(n) : 0; }
    std::uint64_t percentile(double q) const {
      if (n == 0) return 0;
      const std::uint64_t target = static_cast<std::uint64_t>(q * static_cast<double>(n - 1)) + 1;
      std::uint64_t seen = 0;
      for (std::size_t i = 0; i < bins.size(); ++i) {
        seen += bins[i];
        if (seen >= target) return i;
      }
      return bins.size() - 1;
    }
  };
  Histogram latency_, offer_latency_;
  std::array<std::uint64_t, 256> offer_cycle_{};  // per id: the tick its request was first on a lane
  std::uint32_t lanes_seen_ = 0;                   // bridge: lanes whose request has its offer cycle
  unsigned accepted_ = 0;
  std::uint64_t cycle_ = 0;
  bool recording_ = false;
  std::vector<std::optional<ChannelActivity>> open_;  // per channel: the busy interval being extended
  std::vector<ChannelActivity> activity_;
  std::optional<std::string> fault_;
  // board top
  static constexpr std::uint64_t kMaxHeldHostCycles = 1'000'000;
  std::optional<BackingStore> backing_;
  std::uint64_t host_cycles_ = 0, held_host_cycles_ = 0;
};

}  // namespace tpuemu::sim::hbm
