// Tests of the HBM controller rtl/mem/hbm/hbm_ctrl.sv driving the DRAM device model
// sim/src/dram: every command the controller issues goes through dram::Device::command(), which
// throws TimingViolation on any broken timing or state rule, and read data come from the device.
// Data are compared with a byte-array model of the memory. Two Verilated configurations:
//   Vhbm_ctrl      8 channels, 8 request lanes (HBM2; enough lanes to saturate every channel)
//   Vhbm_ctrl_c16  16 channels, 1 request lane (HBM3 set, the single burst port of docs/hbm.md)
//
// Cycle convention: in cycle c the harness (1) hands the device's read burst due in cycle c to
// rvalid_i/rdata_i, (2) drives the request lanes, (3) evaluates, then reads the outputs of cycle c
// (commands go to the device at cycle c; responses; req_ready_o completes handshakes), and
// (4) applies the rising edge that ends cycle c. Cycle 0 is the first cycle after reset.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <unistd.h>
#include <unordered_map>
#include <vector>

#include "Vhbm_ctrl.h"
#include "Vhbm_ctrl_c16.h"
#include "dram/device.h"
#include "verilated.h"

namespace {

namespace dram = tpuemu::sim::dram;

constexpr unsigned kBurst = 64;
constexpr unsigned kStarveCycles = 1024;  // hbm_ctrl's default StarveCycles

// ---------------------------------------------------------------------------------------------
// Timing sets and the address map (as hbm_pkg.sv lays them out)
// ---------------------------------------------------------------------------------------------
struct Timing {
  unsigned CL = 14, CWL = 4, tRCD = 14, tRP = 14, tRAS = 34, tRC = 48, tRRD_S = 4, tRRD_L = 6,
           tFAW = 30, tCCD_S = 1, tCCD_L = 2, tWTR_S = 6, tWTR_L = 8, tWR = 16, tRTP = 4,
           tRFC = 260, tREFI = 3900, BL = 4;
  unsigned tBURST() const { return BL / 2; }
  // hbm_pkg::timing_t: field k in bits [16k +: 16].
  std::array<unsigned, 18> fields() const {
    return {CL, CWL, tRCD, tRP, tRAS, tRC, tRRD_S, tRRD_L, tFAW,
            tCCD_S, tCCD_L, tWTR_S, tWTR_L, tWR, tRTP, tRFC, tREFI, BL};
  }
};

// Field codes of hbm_pkg (FieldCo ... FieldRo).
enum Field : unsigned { kCo = 0, kCh = 1, kBg = 2, kBa = 3, kRo = 4 };

struct Amap {
  std::array<Field, 5> lsb_first{kCo, kCh, kBg, kBa, kRo};  // "ro-ba-bg-ch-co" (default)
  unsigned col_bits = 5, ch_bits = 3, bg_bits = 2, ba_bits = 2, row_bits = 14;

  // "ro-ba-bg-ch-co" style, most significant first.
  static std::array<Field, 5> parse(const std::string& s) {
    std::array<Field, 5> lsb{};
    for (unsigned k = 0; k < 5; ++k) {
      const std::string f = s.substr(3 * (4 - k), 2);
      lsb[k] = f == "co" ? kCo : f == "ch" ? kCh : f == "bg" ? kBg : f == "ba" ? kBa : kRo;
    }
    return lsb;
  }
  // hbm_pkg::amap_t: byte 0 the order (amap_order_e: a named order, or 0xff and the field codes
  // in bits [62:48]), bytes 1..5 the widths of column, channel, bank group, bank and row.
  std::uint64_t pack() const {
    static const std::array<std::string, 4> kNamed = {"ro-ba-bg-ch-co", "ro-ch-ba-bg-co",
                                                      "ch-ro-ba-bg-co", "ro-ba-bg-co-ch"};
    std::uint64_t order = 0xff, custom = 0;
    for (unsigned k = 0; k < 5; ++k) custom |= std::uint64_t{lsb_first[k]} << (3 * k);
    for (unsigned i = 0; i < kNamed.size(); ++i) {
      if (parse(kNamed[i]) == lsb_first) order = i;
    }
    return order | std::uint64_t{col_bits} << 8 | std::uint64_t{ch_bits} << 16 |
           std::uint64_t{bg_bits} << 24 | std::uint64_t{ba_bits} << 32 |
           std::uint64_t{row_bits} << 40 | (order == 0xff ? custom << 48 : 0);
  }
  unsigned width(Field f) const {
    switch (f) {
      case kCo: return col_bits;
      case kCh: return ch_bits;
      case kBg: return bg_bits;
      case kBa: return ba_bits;
      default: return row_bits;
    }
  }
};

struct Loc {
  std::uint32_t ch = 0, bg = 0, ba = 0, row = 0, col = 0;
  std::uint32_t get(Field f) const {
    switch (f) {
      case kCo: return col;
      case kCh: return ch;
      case kBg: return bg;
      case kBa: return ba;
      default: return row;
    }
  }
  void set(Field f, std::uint32_t v) {
    switch (f) {
      case kCo: col = v; break;
      case kCh: ch = v; break;
      case kBg: bg = v; break;
      case kBa: ba = v; break;
      default: row = v; break;
    }
  }
};

std::uint64_t encode(const Amap& m, const Loc& l) {
  std::uint64_t a = 0;
  unsigned sh = 6;
  for (Field f : m.lsb_first) {
    a |= std::uint64_t{l.get(f)} << sh;
    sh += m.width(f);
  }
  return a;
}

Loc decode(const Amap& m, std::uint64_t addr) {
  Loc l;
  std::uint64_t a = addr >> 6;
  for (Field f : m.lsb_first) {
    l.set(f, static_cast<std::uint32_t>(a & ((std::uint64_t{1} << m.width(f)) - 1)));
    a >>= m.width(f);
  }
  return l;
}

// The k-th burst of channel ch in address order.
std::uint64_t channel_linear(const Amap& m, std::uint32_t ch, std::uint64_t k) {
  Loc l;
  l.ch = ch;
  for (Field f : m.lsb_first) {
    if (f == kCh) continue;
    l.set(f, static_cast<std::uint32_t>(k & ((std::uint64_t{1} << m.width(f)) - 1)));
    k >>= m.width(f);
  }
  return encode(m, l);
}

// A timing set with its geometry, as the device needs it.
struct TimingSet {
  Timing t;
  Amap m;
  unsigned channels = 8;
  unsigned rows = 16384;
};

// configs/hbm/<name>.json (the shipped sets; validated by the host library, read plainly here).
TimingSet load_timing_set(const std::string& name) {
  std::ifstream in(std::string(TPUEMU_HBM_CONFIG_DIR) + "/" + name + ".json");
  const auto j = nlohmann::json::parse(in);
  const auto& g = j.at("geometry");
  const auto& k = j.at("timing");
  TimingSet s;
  s.t = Timing{k.at("CL"), k.at("CWL"), k.at("tRCD"), k.at("tRP"), k.at("tRAS"), k.at("tRC"),
               k.at("tRRD_S"), k.at("tRRD_L"), k.at("tFAW"), k.at("tCCD_S"), k.at("tCCD_L"),
               k.at("tWTR_S"), k.at("tWTR_L"), k.at("tWR"), k.at("tRTP"), k.at("tRFC"),
               k.at("tREFI"), g.at("burst_length")};
  s.channels = g.at("channels");
  s.rows = g.at("rows");
  auto bits = [](unsigned v) { return static_cast<unsigned>(std::countr_zero(v)); };
  s.m.lsb_first = Amap::parse(j.value("address_map", std::string("ro-ba-bg-ch-co")));
  s.m.col_bits = bits(g.at("columns"));
  s.m.ch_bits = bits(s.channels);
  s.m.bg_bits = bits(g.at("bank_groups"));
  s.m.ba_bits = bits(g.at("banks_per_group"));
  s.m.row_bits = bits(s.rows);
  EXPECT_EQ(static_cast<unsigned>(g.at("bus_bytes")) * s.t.BL, kBurst);
  return s;
}

dram::Config device_config(const TimingSet& s) {
  const Timing& t = s.t;
  dram::Config c;
  c.channels = s.channels;
  c.bank_groups = 4;
  c.banks_per_group = 4;
  c.rows = s.rows;
  c.columns = 32;
  c.bus_bytes = kBurst / t.BL;
  c.burst_length = t.BL;
  c.CL = t.CL;
  c.CWL = t.CWL;
  c.tRCD = t.tRCD;
  c.tRP = t.tRP;
  c.tRAS = t.tRAS;
  c.tRC = t.tRC;
  c.tRRD_S = t.tRRD_S;
  c.tRRD_L = t.tRRD_L;
  c.tFAW = t.tFAW;
  c.tCCD_S = t.tCCD_S;
  c.tCCD_L = t.tCCD_L;
  c.tWTR_S = t.tWTR_S;
  c.tWTR_L = t.tWTR_L;
  c.tWR = t.tWR;
  c.tRTP = t.tRTP;
  c.tRFC = t.tRFC;
  c.tREFI = t.tREFI;
  return c;
}

using Burst = std::array<std::uint8_t, kBurst>;

struct Req {
  bool write = false;
  std::uint64_t addr = 0;
  Burst data{};
  std::uint64_t mask = ~std::uint64_t{0};
};

struct Stats {  // hbm_pkg::stats_t, one channel: counter k in bits [64k +: 64]
  std::uint64_t reads = 0, writes = 0, row_hits = 0, row_misses = 0, row_conflicts = 0, acts = 0,
                pres = 0, preas = 0, refs = 0, ref_cycles = 0, occ_sum = 0, rd_lat_sum = 0,
                turnarounds = 0;
  std::uint64_t requests() const { return reads + writes; }
  Stats& operator+=(const Stats& o) {
    reads += o.reads;
    writes += o.writes;
    row_hits += o.row_hits;
    row_misses += o.row_misses;
    row_conflicts += o.row_conflicts;
    acts += o.acts;
    pres += o.pres;
    preas += o.preas;
    refs += o.refs;
    ref_cycles += o.ref_cycles;
    occ_sum += o.occ_sum;
    rd_lat_sum += o.rd_lat_sum;
    turnarounds += o.turnarounds;
    return *this;
  }
};

// ---------------------------------------------------------------------------------------------
// The harness: controller + device + request lanes + reference memory
// ---------------------------------------------------------------------------------------------
using Gen = std::function<bool(std::uint64_t cycle, Req&)>;  // false: no more requests
using CmdHook = std::function<void(std::uint64_t cycle, unsigned ch, const dram::Command&)>;

template <class Model, unsigned kChannels, unsigned kPorts>
class Harness {
 public:
  static constexpr unsigned channels = kChannels;
  static constexpr unsigned ports = kPorts;

  explicit Harness(const TimingSet& s, bool closed_page = false)
      : set_(s), dev_(device_config(s)), ctx_(std::make_unique<VerilatedContext>()) {
    top_ = std::make_unique<Model>(ctx_.get());
    const auto f = s.t.fields();
    for (unsigned k = 0; k < f.size(); ++k) {
      top_->timing_i[k / 2] = (top_->timing_i[k / 2] & ~(0xffffu << (16 * (k % 2)))) |
                              (f[k] << (16 * (k % 2)));
    }
    top_->amap_i = s.m.pack();
    top_->page_policy_i = closed_page ? 1 : 0;
    top_->per_bank_refresh_i = 0;
    top_->req_valid_i = 0;
    top_->rvalid_i = 0;
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
    for (unsigned id = 0; id < 256; ++id) free_ids_.push_back(static_cast<std::uint8_t>(id));
  }
  Harness() : Harness(TimingSet{}) {}
  ~Harness() { top_->final(); }

  dram::Device& device() { return dev_; }
  const Amap& amap() const { return set_.m; }
  const Timing& timing() const { return set_.t; }
  unsigned rows() const { return set_.rows; }
  std::uint64_t cycle() const { return cycle_; }
  void set_gen(unsigned lane, Gen g) {
    gens_[lane] = std::move(g);
    exhausted_[lane] = false;
  }
  void clear_gens() {
    for (auto& g : gens_) g = nullptr;
  }
  void on_command(CmdHook h) { cmd_hook_ = std::move(h); }
  void set_per_bank_refresh(bool on) { top_->per_bank_refresh_i = on ? 1 : 0; }

  // One clock cycle.
  void step() {
    // (1) read data due now
    std::uint64_t rvalid = 0;
    for (unsigned c = 0; c < kChannels; ++c) {
      const auto d = dev_.read_data(cycle_, c);
      if (!d.empty()) {
        rvalid |= std::uint64_t{1} << c;
        std::memcpy(top_->rdata_i[c].data(), d.data(), kBurst);
      }
    }
    top_->rvalid_i = static_cast<std::remove_reference_t<decltype(top_->rvalid_i)>>(rvalid);
    // (2) request lanes
    std::uint32_t valid = 0, write = 0;
    for (unsigned p = 0; p < kPorts; ++p) {
      Lane& l = lanes_[p];
      if (!l.req && gens_[p] && !exhausted_[p] && !free_ids_.empty()) {
        Req r;
        exhausted_[p] = !gens_[p](cycle_, r);
        if (!exhausted_[p]) {
          l.req = r;
          l.id = free_ids_.front();
          free_ids_.pop_front();
          top_->req_addr_i[p] = r.addr;
          top_->req_id_i[p] = l.id;
          if (r.write) {
            std::memcpy(top_->req_wdata_i[p].data(), r.data.data(), kBurst);
            top_->req_wmask_i[p] = r.mask;
          }
        }
      }
      if (l.req) {
        valid |= 1u << p;
        write |= static_cast<std::uint32_t>(l.req->write) << p;
      }
    }
    top_->req_valid_i = static_cast<CData>(valid);
    top_->req_write_i = static_cast<CData>(write);
    top_->clk_i = 0;
    top_->eval();

    // (3) outputs of this cycle
    const std::uint32_t ready = top_->req_ready_o & valid;
    for (unsigned p = 0; ready != 0 && p < kPorts; ++p) {
      if ((ready >> p) & 1) accept(p);
    }
    for_each_bit(top_->cmd_valid_o, [&](unsigned c) { command(c); });
    for_each_bit(top_->rsp_valid_o, [&](unsigned c) { read_response(c); });
    for_each_bit(top_->bresp_valid_o, [&](unsigned c) { write_response(c); });

    // (4) rising edge
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    ++cycle_;
  }

  void run(std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i) step();
  }

  // Runs until every generator is exhausted and every request has been answered. Generators
  // that never end must be removed first (clear_gens()).
  void drain(std::uint64_t max_cycles = 200000) {
    const std::uint64_t end = cycle_ + max_cycles;
    while (busy() && cycle_ < end) step();
    ASSERT_FALSE(busy()) << "requests not answered after " << max_cycles << " cycles";
  }
  bool busy() const {
    for (unsigned p = 0; p < kPorts; ++p) {
      if (lanes_[p].req || (gens_[p] && !exhausted_[p])) return true;
    }
    return free_ids_.size() != 256;
  }

  std::uint64_t reads_done() const { return reads_done_; }
  std::uint64_t writes_done() const { return writes_done_; }
  std::uint64_t latency_sum() const { return latency_sum_; }
  std::uint64_t write_latency_sum() const { return write_latency_sum_; }
  const std::vector<std::uint32_t>& latencies() const { return latencies_; }
  std::uint64_t max_latency() const { return max_latency_; }

  Stats stats(unsigned c) const {
    std::array<std::uint64_t, 13> v{};
    std::memcpy(v.data(), top_->stats_o[c].data(), sizeof v);
    return {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12]};
  }
  Stats total_stats() const {
    Stats t;
    for (unsigned c = 0; c < kChannels; ++c) t += stats(c);
    return t;
  }

 private:
  struct Lane {
    std::optional<Req> req;
    std::uint8_t id = 0;
  };
  struct Pending {
    bool write = false;
    std::uint64_t addr = 0;
    std::uint32_t ch = 0;
    std::uint64_t accept = 0;
    Burst expect{};
  };

  template <class V, class F>
  static void for_each_bit(V v, F f) {
    for (std::uint64_t x = v; x != 0; x &= x - 1) f(static_cast<unsigned>(std::countr_zero(x)));
  }

  Burst model_read(std::uint64_t addr) const {
    const auto it = mem_.find(addr);
    return it == mem_.end() ? Burst{} : it->second;
  }

  void accept(unsigned p) {
    Lane& l = lanes_[p];
    const Req& r = *l.req;
    Pending& q = pending_[l.id];
    q.write = r.write;
    q.addr = r.addr;
    q.ch = decode(set_.m, r.addr).ch;
    q.accept = cycle_;
    if (r.write) {
      Burst& b = mem_[r.addr];
      for (unsigned i = 0; i < kBurst; ++i) {
        if ((r.mask >> i) & 1) b[i] = r.data[i];
      }
    } else {
      q.expect = model_read(r.addr);
    }
    l.req.reset();
  }

  void command(unsigned c) {
    dram::Command cmd;
    cmd.op = static_cast<dram::Op>(top_->cmd_o[c]);
    cmd.bank_group = top_->cmd_bg_o[c];
    cmd.bank = top_->cmd_bank_o[c];
    switch (cmd.op) {
      case dram::Op::Act:
        cmd.row = top_->cmd_row_o[c];
        break;
      case dram::Op::Rd:
        cmd.row = top_->cmd_row_o[c];  // the row the controller believes is open: checked
        cmd.column = top_->cmd_col_o[c];
        break;
      case dram::Op::Wr:
        cmd.row = top_->cmd_row_o[c];
        cmd.column = top_->cmd_col_o[c];
        std::memcpy(wbuf_.data(), top_->cmd_wdata_o[c].data(), kBurst);
        cmd.wdata = wbuf_.data();
        cmd.wmask = top_->cmd_wmask_o[c];
        break;
      default:
        break;
    }
    if (cmd_hook_) cmd_hook_(cycle_, c, cmd);
    dev_.command(cycle_, c, cmd);  // throws dram::TimingViolation
  }

  void read_response(unsigned c) {
    const std::uint8_t id = top_->rsp_id_o[c];
    Pending& q = pending_[id];
    ASSERT_FALSE(q.write) << "read response for write id " << int{id};
    ASSERT_EQ(q.ch, c) << "read response of id " << int{id} << " on the wrong channel";
    Burst got;
    std::memcpy(got.data(), top_->rsp_data_o[c].data(), kBurst);
    EXPECT_EQ(got, q.expect) << "read data mismatch at address 0x" << std::hex << q.addr
                             << std::dec << " (id " << int{id} << ", cycle " << cycle_ << ")";
    finish(id, q);
    ++reads_done_;
  }

  void write_response(unsigned c) {
    const std::uint8_t id = top_->bresp_id_o[c];
    Pending& q = pending_[id];
    ASSERT_TRUE(q.write) << "write response for read id " << int{id};
    ASSERT_EQ(q.ch, c) << "write response of id " << int{id} << " on the wrong channel";
    finish(id, q);
    ++writes_done_;
  }

  void finish(std::uint8_t id, Pending& q) {
    const std::uint64_t lat = cycle_ - q.accept;
    if (q.write) {
      write_latency_sum_ += lat;
    } else {
      latency_sum_ += lat;
      latencies_.push_back(static_cast<std::uint32_t>(lat));
    }
    max_latency_ = std::max(max_latency_, lat);
    q = Pending{};
    free_ids_.push_back(id);
  }

  TimingSet set_;
  dram::Device dev_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Model> top_;
  std::uint64_t cycle_ = 0;
  std::array<Lane, kPorts> lanes_{};
  std::array<Gen, kPorts> gens_{};
  std::array<bool, kPorts> exhausted_{};
  std::deque<std::uint8_t> free_ids_;
  std::array<Pending, 256> pending_{};
  std::unordered_map<std::uint64_t, Burst> mem_;
  Burst wbuf_{};
  CmdHook cmd_hook_;
  std::uint64_t reads_done_ = 0, writes_done_ = 0, latency_sum_ = 0, write_latency_sum_ = 0;
  std::uint64_t max_latency_ = 0;
  std::vector<std::uint32_t> latencies_;
};

using Hbm8 = Harness<Vhbm_ctrl, 8, 8>;       // CMake: -GNumChannels=8 -GNumPorts=8
using Hbm16 = Harness<Vhbm_ctrl_c16, 16, 1>;  // CMake: -GNumChannels=16 -GNumPorts=1

Burst random_burst(std::mt19937_64& rng) {
  Burst b;
  for (unsigned i = 0; i < kBurst; i += 8) {
    const std::uint64_t v = rng();
    std::memcpy(b.data() + i, &v, 8);
  }
  return b;
}

// Random requests over `rows` rows of every bank of every channel (or of one channel).
Gen random_gen(const Amap& m, unsigned channels, std::uint64_t seed, double write_frac,
               unsigned rows, std::uint64_t count, int channel = -1) {
  auto rng = std::make_shared<std::mt19937_64>(seed);
  auto left = std::make_shared<std::uint64_t>(count);
  return [=](std::uint64_t, Req& r) {
    if (*left == 0) return false;
    --*left;
    std::uniform_real_distribution<double> u(0.0, 1.0);
    Loc l;
    l.ch = channel >= 0 ? static_cast<std::uint32_t>(channel) : (*rng)() % channels;
    l.bg = (*rng)() % 4;
    l.ba = (*rng)() % 4;
    l.row = static_cast<std::uint32_t>((*rng)() % rows);
    l.col = (*rng)() % 32;
    r.addr = encode(m, l);
    r.write = u(*rng) < write_frac;
    if (r.write) {
      r.data = random_burst(*rng);
      r.mask = ((*rng)() % 4 == 0) ? (*rng)() : ~std::uint64_t{0};
    }
    return true;
  };
}

// CPU time of this thread: simulation speed independent of other load on the machine.
double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double percentile(std::vector<std::uint32_t> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

// Data-bus utilisation over a window: column commands * tBURST / (cycles * channels).
double bus_utilisation(std::uint64_t columns, std::uint64_t cycles, const Timing& t,
                       unsigned channels) {
  return static_cast<double>(columns * t.tBURST()) / static_cast<double>(cycles * channels);
}

template <class H>
std::uint64_t device_columns(H& h) {
  const auto s = h.device().total_stats();
  return s.rd + s.wr;
}

// The controller's counters agree with the device's and with what the harness saw.
template <class H>
void check_stats(H& h) {
  const Stats s = h.total_stats();
  const auto d = h.device().total_stats();
  EXPECT_EQ(s.reads, d.rd);
  EXPECT_EQ(s.writes, d.wr);
  EXPECT_EQ(s.acts, d.act);
  EXPECT_EQ(s.pres, d.pre);
  EXPECT_EQ(s.preas, d.prea);
  EXPECT_EQ(s.refs, d.ref);
  EXPECT_EQ(s.reads, h.reads_done());
  EXPECT_EQ(s.writes, h.writes_done());
  EXPECT_EQ(s.row_hits + s.row_misses + s.row_conflicts, s.requests());
  // Every miss or conflict took an ACT; a few requests take two (their row was closed by a
  // refresh before their column command).
  EXPECT_GE(s.acts, s.row_misses + s.row_conflicts);
  EXPECT_LE(s.acts, (s.row_misses + s.row_conflicts) * 101 / 100 + 8);
  EXPECT_EQ(s.rd_lat_sum, h.latency_sum());
  h.device().finish(h.cycle());
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

// Address mapping: the four named orders of hbm_pkg and random permutations of the fields; one
// write and one read per address land on the right channel, bank group, bank, row and column.
TEST(HbmCtrl, SingleWriteThenReadEveryMapOrder) {
  std::vector<std::array<Field, 5>> orders = {
      Amap::parse("ro-ba-bg-ch-co"), Amap::parse("ro-ch-ba-bg-co"),
      Amap::parse("ch-ro-ba-bg-co"), Amap::parse("ro-ba-bg-co-ch")};
  std::mt19937_64 prng(42);
  for (int i = 0; i < 3; ++i) {
    std::array<Field, 5> o{kCo, kCh, kBg, kBa, kRo};
    std::shuffle(o.begin(), o.end(), prng);
    orders.push_back(o);
  }
  for (unsigned order = 0; order < orders.size(); ++order) {
    TimingSet ts;
    ts.m.lsb_first = orders[order];
    Hbm8 h(ts);
    std::vector<std::pair<unsigned, dram::Command>> seen;
    h.on_command([&](std::uint64_t, unsigned c, const dram::Command& cmd) {
      seen.emplace_back(c, cmd);
    });
    std::mt19937_64 rng(100 + order);
    for (unsigned n = 0; n < 6; ++n) {
      Loc l;
      l.ch = rng() % Hbm8::channels;
      l.bg = rng() % 4;
      l.ba = rng() % 4;
      l.row = rng() % 16384;
      l.col = rng() % 32;
      const std::uint64_t addr = encode(h.amap(), l);
      const Burst data = random_burst(rng);
      std::vector<Req> script = {Req{.write = true, .addr = addr, .data = data},
                                 Req{.write = false, .addr = addr}};
      for (const Req& req : script) {
        bool sent = false;
        h.set_gen((n + (req.write ? 0 : 3)) % Hbm8::ports, [&](std::uint64_t, Req& r) {
          if (sent) return false;
          sent = true;
          r = req;
          return true;
        });
        seen.clear();
        h.drain(2000);
        // The column command went to the mapped channel, bank group, bank, row and column.
        int cols = 0;
        for (const auto& [c, cmd] : seen) {
          if (cmd.op != dram::Op::Wr && cmd.op != dram::Op::Rd) continue;
          ++cols;
          EXPECT_EQ(cmd.op, req.write ? dram::Op::Wr : dram::Op::Rd);
          EXPECT_EQ(c, l.ch) << "order " << order;
          EXPECT_EQ(cmd.bank_group, l.bg);
          EXPECT_EQ(cmd.bank, l.ba);
          EXPECT_EQ(cmd.row, l.row);
          EXPECT_EQ(cmd.column, l.col);
        }
        EXPECT_EQ(cols, 1);
      }
      Burst stored{};
      h.device().backdoor_read(l.ch, l.bg, l.ba, l.row, l.col, stored);
      EXPECT_EQ(stored, data);
    }
    EXPECT_EQ(h.reads_done(), 6u);
    EXPECT_EQ(h.writes_done(), 6u);
  }
}

// Random read/write mixes over all channels and banks: data compared with the byte-array model,
// every command timing-checked by the device, statistics consistent with the device's.
TEST(HbmCtrl, RandomMixDataIntegrity) {
  for (double wf : {0.3, 0.5, 0.8}) {
    Hbm8 h;
    for (unsigned p = 0; p < Hbm8::ports; ++p) {
      h.set_gen(p, random_gen(h.amap(), Hbm8::channels, 1000 * p + static_cast<unsigned>(wf * 10),
                              wf, 8, 2500));
    }
    h.drain();
    EXPECT_EQ(h.reads_done() + h.writes_done(), Hbm8::ports * 2500u);
    check_stats(h);
    const Stats s = h.total_stats();
    EXPECT_GT(s.row_conflicts, 0u);
    EXPECT_GT(s.turnarounds, 0u);
    std::printf("[ mix w=%.1f ] %llu cycles; hits %llu misses %llu conflicts %llu; read latency "
                "mean %.1f p50 %.0f p99 %.0f max %llu\n",
                wf, static_cast<unsigned long long>(h.cycle()),
                static_cast<unsigned long long>(s.row_hits),
                static_cast<unsigned long long>(s.row_misses),
                static_cast<unsigned long long>(s.row_conflicts),
                static_cast<double>(s.rd_lat_sum) / static_cast<double>(s.reads),
                percentile(h.latencies(), 0.5), percentile(h.latencies(), 0.99),
                static_cast<unsigned long long>(h.max_latency()));
  }
}

// A few addresses hammered from all lanes: reordering must never change what a read returns
// (read-after-write, write-after-read and write-after-write to the same burst).
TEST(HbmCtrl, SameAddressHazards) {
  Hbm8 h;
  for (unsigned p = 0; p < Hbm8::ports; ++p) {
    auto rng = std::make_shared<std::mt19937_64>(77 + p);
    auto left = std::make_shared<int>(3000);
    h.set_gen(p, [rng, left, &h](std::uint64_t, Req& r) {
      if (*left == 0) return false;
      --*left;
      Loc l;
      l.ch = (*rng)() % 2;
      l.bg = 1;
      l.ba = (*rng)() % 2;
      l.row = (*rng)() % 2;  // row conflicts too
      l.col = (*rng)() % 3;
      r.addr = encode(h.amap(), l);
      r.write = (*rng)() % 2 == 0;
      r.data = random_burst(*rng);
      r.mask = (*rng)() % 2 ? ~std::uint64_t{0} : (*rng)();
      return true;
    });
  }
  h.drain();
  EXPECT_EQ(h.reads_done() + h.writes_done(), Hbm8::ports * 3000u);
  check_stats(h);
}

// Sequential reads, one stream per channel: >= 85% of the peak data-bus bandwidth (one burst per
// tBURST per channel) over a window that contains refreshes, nearly all row hits.
TEST(HbmCtrl, StreamReadsReachPeakBandwidth) {
  Hbm8 h;
  for (unsigned p = 0; p < Hbm8::ports; ++p) {
    auto k = std::make_shared<std::uint64_t>(0);
    h.set_gen(p, [k, p, &h](std::uint64_t, Req& r) {
      r = Req{.write = false, .addr = channel_linear(h.amap(), p, (*k)++)};
      return true;
    });
  }
  h.run(2000);
  const std::uint64_t cols0 = device_columns(h);
  const Stats s0 = h.total_stats();
  const std::uint64_t window = 40000;
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = thread_seconds();
  h.run(window);
  const double cpu = thread_seconds() - cpu0;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double util = bus_utilisation(device_columns(h) - cols0, window, h.timing(), 8);
  const Stats s = h.total_stats();
  const double hit_rate = static_cast<double>(s.row_hits - s0.row_hits) /
                          static_cast<double>(s.requests() - s0.requests());
  std::printf("[ stream read ] bus utilisation %.1f%% of peak, row-hit rate %.1f%%, REFs %llu; "
              "simulation (controller + device + harness, 8 channels): %.0f DRAM cycles per CPU "
              "second (%.0f per wall second)\n",
              100 * util, 100 * hit_rate, static_cast<unsigned long long>(s.refs - s0.refs),
              static_cast<double>(window) / cpu, static_cast<double>(window) / secs);
  EXPECT_GE(util, 0.85);
  EXPECT_GE(hit_rate, 0.9);
  EXPECT_GE(s.refs - s0.refs, 8 * (window / h.timing().tREFI));
  h.clear_gens();
  h.drain();
  check_stats(h);
}

// Sequential writes, then a sequential read-back of everything written. The queue-occupancy
// counter adds up to each write's time in the channel (accept to WR command).
TEST(HbmCtrl, StreamWritesThenReadBack) {
  Hbm8 h;
  constexpr std::uint64_t kPerLane = 3000;
  std::mt19937_64 rng(5);
  std::vector<std::vector<Burst>> data(Hbm8::ports);
  for (auto& d : data) {
    for (std::uint64_t i = 0; i < kPerLane; ++i) d.push_back(random_burst(rng));
  }
  for (unsigned p = 0; p < Hbm8::ports; ++p) {
    auto k = std::make_shared<std::uint64_t>(0);
    h.set_gen(p, [k, p, &h, &data](std::uint64_t, Req& r) {
      if (*k == kPerLane) return false;
      r = Req{.write = true, .addr = channel_linear(h.amap(), p, *k), .data = data[p][*k]};
      ++*k;
      return true;
    });
  }
  const std::uint64_t c0 = h.cycle();
  h.drain();
  const double wutil = bus_utilisation(Hbm8::ports * kPerLane, h.cycle() - c0, h.timing(), 8);
  // bresp is high in the cycle after the WR was chosen: one cycle per write less than its
  // response latency.
  EXPECT_EQ(h.total_stats().occ_sum, h.write_latency_sum() - Hbm8::ports * kPerLane);
  for (unsigned p = 0; p < Hbm8::ports; ++p) {
    auto k = std::make_shared<std::uint64_t>(0);
    h.set_gen(p, [k, p, &h](std::uint64_t, Req& r) {
      if (*k == kPerLane) return false;
      r = Req{.write = false, .addr = channel_linear(h.amap(), p, (*k)++)};
      return true;
    });
  }
  h.drain();
  EXPECT_EQ(h.reads_done(), Hbm8::ports * kPerLane);
  check_stats(h);
  std::printf("[ stream write ] bus utilisation %.1f%% of peak\n", 100 * wutil);
  EXPECT_GE(wutil, 0.80);
}

// Random reads (lane p feeds channel p, so no lane waits for another channel's queue): far below
// peak (tRC, tFAW and row conflicts), with misses and conflicts counted.
TEST(HbmCtrl, RandomReadsBandwidthAndRowStats) {
  Hbm8 h;
  for (unsigned p = 0; p < Hbm8::ports; ++p) {
    h.set_gen(p, random_gen(h.amap(), 8, 900 + p, 0.0, 16384, ~std::uint64_t{0},
                            static_cast<int>(p)));
  }
  h.run(2000);
  const std::uint64_t cols0 = device_columns(h);
  const Stats s0 = h.total_stats();
  const std::uint64_t window = 20000;
  h.run(window);
  const double util = bus_utilisation(device_columns(h) - cols0, window, h.timing(), 8);
  const Stats s = h.total_stats();
  const auto n = static_cast<double>(s.requests() - s0.requests());
  const double hits = static_cast<double>(s.row_hits - s0.row_hits) / n;
  const double misses = static_cast<double>(s.row_misses - s0.row_misses) / n;
  const double confl = static_cast<double>(s.row_conflicts - s0.row_conflicts) / n;
  std::printf("[ random read ] bus utilisation %.1f%% of peak; hits %.1f%% misses %.1f%% "
              "conflicts %.1f%%; mean requests per channel %.1f\n",
              100 * util, 100 * hits, 100 * misses, 100 * confl,
              static_cast<double>(s.occ_sum - s0.occ_sum) / static_cast<double>(window * 8));
  EXPECT_LT(util, 0.5);
  EXPECT_GT(util, 0.15);
  EXPECT_GT(confl, 0.5);
  EXPECT_LT(hits, 0.2);
  h.clear_gens();
  h.drain();
  check_stats(h);
}

// REF every tREFI per channel over a long run, idle and busy, and never more than 9 tREFI apart.
TEST(HbmCtrl, RefreshEveryTrefi) {
  Hbm8 h;
  std::vector<std::vector<std::uint64_t>> refs(Hbm8::channels);
  h.on_command([&](std::uint64_t cyc, unsigned c, const dram::Command& cmd) {
    if (cmd.op == dram::Op::Ref) refs[c].push_back(cyc);
  });
  h.run(20000);  // idle
  for (unsigned p = 0; p < Hbm8::ports; ++p) {
    h.set_gen(p, random_gen(h.amap(), 8, 40 + p, 0.4, 4, ~std::uint64_t{0}));
  }
  h.run(40000);  // busy
  h.clear_gens();
  h.drain();
  const std::uint64_t end = h.cycle();
  check_stats(h);
  const unsigned trefi = h.timing().tREFI;
  for (unsigned c = 0; c < Hbm8::channels; ++c) {
    // The first REF is due tREFI after the start (all channels together), then every tREFI.
    const std::uint64_t first = trefi;
    const std::uint64_t expect = end > first ? 1 + (end - first) / trefi : 0;
    EXPECT_NEAR(static_cast<double>(refs[c].size()), static_cast<double>(expect), 1.0)
        << "channel " << c;
    for (std::size_t i = 1; i < refs[c].size(); ++i) {
      const std::uint64_t gap = refs[c][i] - refs[c][i - 1];
      EXPECT_LE(gap, trefi + 200u) << "channel " << c << " REF " << i;
      EXPECT_GE(gap, trefi - 200u) << "channel " << c << " REF " << i;
    }
    EXPECT_EQ(h.stats(c).refs, refs[c].size());
    EXPECT_GE(h.stats(c).ref_cycles, refs[c].size() * h.timing().tRFC);
  }
}

// Closed-page policy: data integrity, rows closed as soon as no queued request needs them, so
// nearly every request is a miss and every bank is closed once the traffic stops. Open page on
// the same traffic leaves rows open (conflicts).
TEST(HbmCtrl, ClosedPagePolicy) {
  for (bool closed : {true, false}) {
    Hbm8 h(TimingSet{}, closed);
    for (unsigned p = 0; p < Hbm8::ports; ++p) {
      h.set_gen(p, random_gen(h.amap(), 8, 300 + p, 0.5, 64, 1500));
    }
    h.drain();
    h.run(200);
    check_stats(h);
    const Stats s = h.total_stats();
    EXPECT_EQ(s.requests(), Hbm8::ports * 1500u);
    if (closed) {
      for (unsigned c = 0; c < Hbm8::channels; ++c) {
        for (unsigned b = 0; b < 16; ++b) {
          EXPECT_FALSE(h.device().bank_open(c, b / 4, b % 4)) << "channel " << c << " bank " << b;
        }
      }
      EXPECT_EQ(s.row_conflicts, 0u);  // a row is never left open for someone else to close
      EXPECT_GT(s.row_misses, s.requests() / 2);
      EXPECT_GE(s.pres + s.preas * 16, s.acts);
    } else {
      EXPECT_GT(s.row_conflicts, s.requests() / 2);
    }
  }
}

// A write to another row of a bank whose open row is hit by an endless read stream is served
// within the starvation bound.
TEST(HbmCtrl, StarvationGuard) {
  Hbm8 h;
  const Loc hot{.ch = 2, .bg = 0, .ba = 0, .row = 5, .col = 0};
  auto k = std::make_shared<std::uint32_t>(0);
  for (unsigned p = 0; p < 2; ++p) {
    h.set_gen(p, [k, hot, &h](std::uint64_t, Req& r) {
      Loc l = hot;
      l.col = (*k)++ % 32;
      r = Req{.write = false, .addr = encode(h.amap(), l)};
      return true;
    });
  }
  h.run(500);
  Loc cold = hot;
  cold.row = 6;
  const std::uint64_t addr = encode(h.amap(), cold);
  bool sent = false;
  std::uint64_t written_at = 0;
  h.on_command([&](std::uint64_t cyc, unsigned c, const dram::Command& cmd) {
    if (c == hot.ch && cmd.op == dram::Op::Wr) written_at = cyc;
  });
  h.set_gen(2, [&](std::uint64_t, Req& r) {
    if (sent) return false;
    sent = true;
    r = Req{.write = true, .addr = addr, .data = Burst{1, 2, 3}};
    return true;
  });
  const std::uint64_t start = h.cycle();
  h.run(kStarveCycles + 300);
  EXPECT_NE(written_at, 0u) << "write starved";
  EXPECT_LE(written_at - start, kStarveCycles + 200);
  h.clear_gens();
  h.drain();
  Burst stored{};
  h.device().backdoor_read(cold.ch, cold.bg, cold.ba, cold.row, cold.col, stored);
  EXPECT_EQ(stored, (Burst{1, 2, 3}));
}

// Burst length 8 (tBURST 4, tCCD_S > tBURST / 2 ...) and the second map order of the contract.
TEST(HbmCtrl, LongBurstTimingAndOtherMap) {
  TimingSet ts;
  ts.t = Timing{.CL = 20, .CWL = 8, .tRCD = 18, .tRP = 18, .tRAS = 40, .tRC = 58, .tRRD_S = 3,
                .tRRD_L = 5, .tFAW = 20, .tCCD_S = 2, .tCCD_L = 4, .tWTR_S = 4, .tWTR_L = 9,
                .tWR = 20, .tRTP = 6, .tRFC = 350, .tREFI = 3000, .BL = 8};
  ts.m.lsb_first = Amap::parse("ro-ch-ba-bg-co");
  Hbm8 h(ts);
  for (unsigned p = 0; p < Hbm8::ports; ++p) {
    h.set_gen(p, random_gen(h.amap(), 8, 600 + p, 0.5, 16, 1500));
  }
  h.drain();
  EXPECT_EQ(h.reads_done() + h.writes_done(), Hbm8::ports * 1500u);
  check_stats(h);
}

// The shipped 8-channel timing sets (configs/hbm): random mix and streaming reads. A sequential
// stream stays in one bank group for a whole row under the default map "ro-ba-bg-ch-co", so
// where tCCD_L > tBURST (hbm2e-3200: tCCD_L 4, tBURST 2) one stream per channel is capped at
// tBURST / tCCD_L of the peak; a map with the bank group below the column ("ro-ba-co-bg-ch")
// alternates bank groups and reaches the peak again.
TEST(HbmCtrl, ShippedHbm2Sets) {
  for (const char* name : {"hbm2-2000", "hbm2e-3200"}) {
    const TimingSet ts = load_timing_set(name);
    ASSERT_EQ(ts.channels, 8u);
    {
      Hbm8 h(ts);
      for (unsigned p = 0; p < Hbm8::ports; ++p) {
        h.set_gen(p, random_gen(h.amap(), 8, 70 + p, 0.4, h.rows(), 1500));
      }
      h.drain();
      EXPECT_EQ(h.reads_done() + h.writes_done(), Hbm8::ports * 1500u) << name;
      check_stats(h);
    }
    for (const char* map : {"ro-ba-bg-ch-co", "ro-ba-co-bg-ch"}) {
      TimingSet mapped = ts;
      mapped.m.lsb_first = Amap::parse(map);
      Hbm8 h(mapped);
      for (unsigned p = 0; p < Hbm8::ports; ++p) {
        auto k = std::make_shared<std::uint64_t>(0);
        h.set_gen(p, [k, p, &h](std::uint64_t, Req& r) {
          r = Req{.write = false, .addr = channel_linear(h.amap(), p, (*k)++)};
          return true;
        });
      }
      h.run(1000);
      const std::uint64_t cols0 = device_columns(h);
      h.run(3 * ts.t.tREFI);
      const double util = bus_utilisation(device_columns(h) - cols0, 3 * ts.t.tREFI, ts.t, 8);
      const double cap = std::min(1.0, static_cast<double>(ts.t.tBURST()) /
                                           std::max(ts.t.tCCD_L, ts.t.tBURST()));
      const bool interleaved = std::string(map) == "ro-ba-co-bg-ch";
      std::printf("[ %s, %s, stream read ] bus utilisation %.1f%% of peak\n", name, map,
                  100 * util);
      // hbm2e-3200 pays more for refresh (tRFC/tREFI 9%) and for row switches (tRP + tRCD 46
      // tCK against 16 queued bursts of lead) than the 85% target set for hbm2-2000.
      const double target = std::string(name) == "hbm2-2000" ? 0.85 : 0.80;
      EXPECT_GE(util, target * (interleaved ? 1.0 : cap)) << name << " " << map;
      h.clear_gens();
      h.drain();
      check_stats(h);
    }
  }
}

// per_bank_refresh_i is tied off (docs in hbm_ctrl.sv): asking for it stops the simulation.
TEST(HbmCtrlDeathTest, PerBankRefreshIsRejected) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        dup2(2, 1);  // Verilator prints the assertion on stdout
        Hbm8 h;
        h.set_per_bank_refresh(true);
        h.run(4);
      },
      "per-bank refresh is not implemented");
}

// 16 channels (hbm3-6400) behind a single request lane, the burst port of docs/hbm.md as the
// beat bridge drives it: integrity, timing, refresh, mapping.
TEST(HbmCtrl16, Hbm3SingleLane) {
  const TimingSet ts = load_timing_set("hbm3-6400");
  ASSERT_EQ(ts.channels, 16u);
  Hbm16 h(ts);
  h.set_gen(0, random_gen(h.amap(), 16, 11, 0.4, 64, 12000));
  h.drain();
  EXPECT_EQ(h.reads_done() + h.writes_done(), 12000u);
  // Through the single lane, requests that visit the channels in turn: one burst per cycle is
  // the most one lane can bring, and the channels keep up with it.
  auto k = std::make_shared<std::uint64_t>(0);
  h.set_gen(0, [k, &h](std::uint64_t, Req& r) {
    if (*k == 8000) return false;
    const std::uint64_t n = (*k)++;
    r = Req{.write = (n % 3) == 0,
            .addr = channel_linear(h.amap(), static_cast<std::uint32_t>(n % 16), n / 16)};
    return true;
  });
  const std::uint64_t c0 = h.cycle();
  h.drain();
  const double per_cycle = 8000.0 / static_cast<double>(h.cycle() - c0);
  std::printf("[ hbm3 single lane ] %.2f bursts per cycle through one lane\n", per_cycle);
  EXPECT_GT(per_cycle, 0.9);
  h.run(2 * ts.t.tREFI);
  check_stats(h);
  for (unsigned c = 0; c < Hbm16::channels; ++c) {
    EXPECT_GE(h.stats(c).refs, (h.cycle() - ts.t.tREFI) / ts.t.tREFI) << "channel " << c;
  }
}

}  // namespace
