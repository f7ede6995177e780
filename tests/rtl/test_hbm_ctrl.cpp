// Tests of the HBM controller rtl/mem/hbm/hbm_ctrl.sv (8 channels, 8 request lanes) driving the
// DRAM device model sim/src/dram: every command the controller issues goes through
// dram::Device::command(), which throws TimingViolation on any broken timing or state rule, and
// read data come from the device. Data are compared with a byte-array model of the memory.
//
// Cycle convention: in cycle c the harness (1) hands the device's read burst due in cycle c to
// rvalid_i/rdata_i, (2) drives the request lanes, (3) evaluates, then reads the outputs of cycle c
// (commands go to the device at cycle c; responses; req_ready_o completes handshakes), and
// (4) applies the rising edge that ends cycle c. Cycle 0 is the first cycle after reset.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <ctime>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "Vhbm_ctrl.h"
#include "dram/device.h"
#include "verilated.h"

namespace {

namespace dram = tpuemu::sim::dram;

// Structure of the Verilated model (CMake: -GNumChannels=8 -GNumPorts=8).
constexpr unsigned kChannels = 8;
constexpr unsigned kPorts = 8;
constexpr unsigned kBurst = 64;
constexpr unsigned kStarveCycles = 1024;

// ---------------------------------------------------------------------------------------------
// Bit access to Verilator ports (integral for <= 64 bits, VlWide otherwise; little endian)
// ---------------------------------------------------------------------------------------------
template <class P>
std::uint64_t get_bits(const P& port, unsigned lsb, unsigned width) {
  if constexpr (std::is_integral_v<P>) {
    const std::uint64_t v = static_cast<std::uint64_t>(port) >> lsb;
    return width >= 64 ? v : v & ((std::uint64_t{1} << width) - 1);
  } else {
    std::uint64_t v = 0;
    for (unsigned i = 0; i < width; ++i) {
      const unsigned b = lsb + i;
      v |= std::uint64_t{(port[b / 32] >> (b % 32)) & 1u} << i;
    }
    return v;
  }
}

template <class P>
void set_bits(P& port, unsigned lsb, unsigned width, std::uint64_t value) {
  if constexpr (std::is_integral_v<P>) {
    const std::uint64_t mask = (width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1)
                               << lsb;
    port = static_cast<P>((static_cast<std::uint64_t>(port) & ~mask) | ((value << lsb) & mask));
  } else {
    for (unsigned i = 0; i < width; ++i) {
      const unsigned b = lsb + i;
      const std::uint32_t bit = 1u << (b % 32);
      if ((value >> i) & 1) {
        port[b / 32] |= bit;
      } else {
        port[b / 32] &= ~bit;
      }
    }
  }
}

// Byte-aligned copies into and out of wide ports.
template <class P>
void put_bytes(P& port, unsigned byte_off, const void* src, unsigned n) {
  std::memcpy(reinterpret_cast<std::uint8_t*>(port.data()) + byte_off, src, n);
}
template <class P>
void get_bytes(const P& port, unsigned byte_off, void* dst, unsigned n) {
  std::memcpy(dst, reinterpret_cast<const std::uint8_t*>(port.data()) + byte_off, n);
}

// ---------------------------------------------------------------------------------------------
// Timing sets and the address map (as hbm_pkg.sv lays them out)
// ---------------------------------------------------------------------------------------------
struct Timing {
  unsigned CL = 14, CWL = 4, tRCD = 14, tRP = 14, tRAS = 34, tRC = 48, tRRD_S = 4, tRRD_L = 6,
           tFAW = 30, tCCD_S = 1, tCCD_L = 2, tWTR_S = 6, tWTR_L = 8, tWR = 16, tRTP = 4,
           tRFC = 260, tREFI = 3900, BL = 4;
  unsigned tBURST() const { return BL / 2; }
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

  static Amap ro_ch_ba_bg_co() {
    Amap m;
    m.lsb_first = {kCo, kBg, kBa, kCh, kRo};
    return m;
  }
  // hbm_pkg::amap_t: order (five 3-bit codes, least significant field first), then the widths.
  std::uint64_t pack() const {
    std::uint64_t order = 0;
    for (unsigned k = 0; k < 5; ++k) order |= std::uint64_t{lsb_first[k]} << (3 * k);
    return order | std::uint64_t{col_bits} << 16 | std::uint64_t{ch_bits} << 24 |
           std::uint64_t{bg_bits} << 32 | std::uint64_t{ba_bits} << 40 |
           std::uint64_t{row_bits} << 48;
  }
  const std::array<Field, 5>& lsb() const { return lsb_first; }
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
  for (Field f : m.lsb()) {
    a |= std::uint64_t{l.get(f)} << sh;
    sh += m.width(f);
  }
  return a;
}

Loc decode(const Amap& m, std::uint64_t addr) {
  Loc l;
  std::uint64_t a = addr >> 6;
  for (Field f : m.lsb()) {
    l.set(f, static_cast<std::uint32_t>(a & ((std::uint64_t{1} << m.width(f)) - 1)));
    a >>= m.width(f);
  }
  return l;
}

// The k-th burst of channel ch in address order.
std::uint64_t channel_linear(const Amap& m, std::uint32_t ch, std::uint64_t k) {
  Loc l;
  l.ch = ch;
  for (Field f : m.lsb()) {
    if (f == kCh) continue;
    l.set(f, static_cast<std::uint32_t>(k & ((std::uint64_t{1} << m.width(f)) - 1)));
    k >>= m.width(f);
  }
  return encode(m, l);
}

dram::Config device_config(const Timing& t) {
  dram::Config c;
  c.channels = kChannels;
  c.bank_groups = 4;
  c.banks_per_group = 4;
  c.rows = 16384;
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

struct Stats {  // hbm_pkg::stats_t, one channel
  std::uint64_t reads, writes, row_hits, row_misses, row_conflicts, acts, pres, preas, refs,
      ref_cycles, occ_sum, rd_lat_sum, turnarounds;
  std::uint64_t requests() const { return reads + writes; }
};

// ---------------------------------------------------------------------------------------------
// The harness: controller + device + request lanes + reference memory
// ---------------------------------------------------------------------------------------------
class Harness {
 public:
  using Gen = std::function<bool(std::uint64_t cycle, Req&)>;  // false: nothing this cycle
  using CmdHook = std::function<void(std::uint64_t cycle, unsigned ch, const dram::Command&)>;

  explicit Harness(const Timing& t = {}, const Amap& m = {}, bool closed_page = false)
      : timing_(t), amap_(m), dev_(device_config(t)), ctx_(std::make_unique<VerilatedContext>()) {
    ctx_->fatalOnError(true);
    top_ = std::make_unique<Vhbm_ctrl>(ctx_.get());
    const auto f = t.fields();
    for (unsigned k = 0; k < f.size(); ++k) set_bits(top_->timing_i, 16 * k, 16, f[k]);
    top_->amap_i = m.pack();
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
    gens_.resize(kPorts);
  }

  ~Harness() { top_->final(); }

  dram::Device& device() { return dev_; }
  const Amap& amap() const { return amap_; }
  const Timing& timing() const { return timing_; }
  std::uint64_t cycle() const { return cycle_; }
  void set_gen(unsigned lane, Gen g) {
    gens_[lane] = std::move(g);
    exhausted_[lane] = false;
  }
  void clear_gens() {
    for (auto& g : gens_) g = nullptr;
  }
  void on_command(CmdHook h) { cmd_hook_ = std::move(h); }

  // One clock cycle.
  void step() {
    // (1) read data due now
    top_->rvalid_i = 0;
    for (unsigned c = 0; c < kChannels; ++c) {
      const auto d = dev_.read_data(cycle_, c);
      if (!d.empty()) {
        top_->rvalid_i |= static_cast<CData>(1u << c);
        put_bytes(top_->rdata_i[c], 0, d.data(), kBurst);
      }
    }
    // (2) request lanes
    std::uint32_t valid = 0;
    for (unsigned p = 0; p < kPorts; ++p) {
      Lane& l = lanes_[p];
      if (!l.req && gens_[p] && !free_ids_.empty()) {
        Req r;
        exhausted_[p] = !gens_[p](cycle_, r);
        if (!exhausted_[p]) {
          l.req = r;
          l.id = free_ids_.front();
          free_ids_.pop_front();
          top_->req_addr_i[p] = r.addr;
          set_bits(top_->req_write_i, p, 1, r.write);
          top_->req_id_i[p] = l.id;
          if (r.write) {
            put_bytes(top_->req_wdata_i[p], 0, r.data.data(), kBurst);
            top_->req_wmask_i[p] = r.mask;
          }
        }
      }
      if (l.req) valid |= 1u << p;
    }
    top_->req_valid_i = static_cast<CData>(valid);
    top_->clk_i = 0;
    top_->eval();

    // (3) outputs of this cycle
    const std::uint32_t ready = top_->req_ready_o & valid;
    for (unsigned p = 0; ready != 0 && p < kPorts; ++p) {
      if ((ready >> p) & 1) accept(p);
    }
    if (top_->cmd_valid_o != 0) {
      for (unsigned c = 0; c < kChannels; ++c) {
        if ((top_->cmd_valid_o >> c) & 1) command(c);
      }
    }
    if (top_->rsp_valid_o != 0) {
      for (unsigned c = 0; c < kChannels; ++c) {
        if ((top_->rsp_valid_o >> c) & 1) read_response(c);
      }
    }
    if (top_->bresp_valid_o != 0) {
      for (unsigned c = 0; c < kChannels; ++c) {
        if ((top_->bresp_valid_o >> c) & 1) write_response(c);
      }
    }

    // (4) rising edge
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    ++cycle_;
  }

  void run(std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i) step();
  }

  // Runs until every generator is exhausted (returned false) and every request has been
  // answered. Generators that never end must be removed first (clear_gens()).
  void drain(std::uint64_t max_cycles = 200000) {
    const std::uint64_t end = cycle_ + max_cycles;
    while (busy() && cycle_ < end) step();
    ASSERT_FALSE(busy()) << "requests not answered after " << max_cycles << " cycles";
  }
  bool busy() const {
    if (outstanding() != 0 || any_lane_busy()) return true;
    for (unsigned p = 0; p < kPorts; ++p) {
      if (gens_[p] && !exhausted_[p]) return true;
    }
    return false;
  }

  std::size_t outstanding() const { return 256 - free_ids_.size() - lanes_pending(); }
  std::uint64_t accepted() const { return accepted_; }
  std::uint64_t reads_done() const { return reads_done_; }
  std::uint64_t writes_done() const { return writes_done_; }
  std::uint64_t latency_sum() const { return latency_sum_; }
  const std::vector<std::uint32_t>& latencies() const { return latencies_; }
  std::uint64_t max_latency() const { return max_latency_; }

  Stats stats(unsigned c) const {
    std::array<std::uint64_t, 13> v{};
    for (unsigned k = 0; k < 13; ++k) {
      v[k] = get_bits(top_->stats_o[c], 64 * k, 64);
    }
    return {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12]};
  }
  Stats total_stats() const {
    Stats t{};
    for (unsigned c = 0; c < kChannels; ++c) {
      const Stats s = stats(c);
      t.reads += s.reads;
      t.writes += s.writes;
      t.row_hits += s.row_hits;
      t.row_misses += s.row_misses;
      t.row_conflicts += s.row_conflicts;
      t.acts += s.acts;
      t.pres += s.pres;
      t.preas += s.preas;
      t.refs += s.refs;
      t.ref_cycles += s.ref_cycles;
      t.occ_sum += s.occ_sum;
      t.rd_lat_sum += s.rd_lat_sum;
      t.turnarounds += s.turnarounds;
    }
    return t;
  }

  // Reference memory.
  Burst model_read(std::uint64_t addr) const {
    const auto it = mem_.find(addr);
    return it == mem_.end() ? Burst{} : it->second;
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

  std::size_t lanes_pending() const {
    std::size_t n = 0;
    for (const Lane& l : lanes_) n += l.req.has_value();
    return n;
  }
  bool any_lane_busy() const { return lanes_pending() != 0; }

  void accept(unsigned p) {
    Lane& l = lanes_[p];
    const Req& r = *l.req;
    Pending& q = pending_[l.id];
    q.write = r.write;
    q.addr = r.addr;
    q.ch = decode(amap_, r.addr).ch;
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
    ++accepted_;
  }

  void command(unsigned c) {
    const auto op = static_cast<dram::Op>(top_->cmd_o[c]);
    dram::Command cmd;
    cmd.op = op;
    cmd.bank_group = top_->cmd_bg_o[c];
    cmd.bank = top_->cmd_bank_o[c];
    const std::uint32_t row = top_->cmd_row_o[c];
    const std::uint32_t col = top_->cmd_col_o[c];
    switch (op) {
      case dram::Op::Act:
        cmd.row = row;
        break;
      case dram::Op::Rd:
        cmd.row = row;  // the row the controller believes is open: the device checks it
        cmd.column = col;
        break;
      case dram::Op::Wr:
        cmd.row = row;
        cmd.column = col;
        get_bytes(top_->cmd_wdata_o[c], 0, wbuf_.data(), kBurst);
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
    get_bytes(top_->rsp_data_o[c], 0, got.data(), kBurst);
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
    if (!q.write) {
      latency_sum_ += lat;
      latencies_.push_back(static_cast<std::uint32_t>(lat));
    }
    max_latency_ = std::max(max_latency_, lat);
    q = Pending{};
    free_ids_.push_back(id);
  }

  Timing timing_;
  Amap amap_;
  dram::Device dev_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vhbm_ctrl> top_;
  std::uint64_t cycle_ = 0;
  std::array<Lane, kPorts> lanes_{};
  std::vector<Gen> gens_;
  std::array<bool, kPorts> exhausted_{};
  std::deque<std::uint8_t> free_ids_;
  std::array<Pending, 256> pending_{};
  std::unordered_map<std::uint64_t, Burst> mem_;
  Burst wbuf_{};
  CmdHook cmd_hook_;
  std::uint64_t accepted_ = 0, reads_done_ = 0, writes_done_ = 0, latency_sum_ = 0;
  std::uint64_t max_latency_ = 0;
  std::vector<std::uint32_t> latencies_;
};

Burst random_burst(std::mt19937_64& rng) {
  Burst b;
  for (unsigned i = 0; i < kBurst; i += 8) {
    const std::uint64_t v = rng();
    std::memcpy(b.data() + i, &v, 8);
  }
  return b;
}

// Random requests over `rows` rows of every bank of every channel (or of one channel).
Harness::Gen random_gen(const Amap& m, std::uint64_t seed, double write_frac, unsigned rows,
                        std::uint64_t count, int channel = -1) {
  auto rng = std::make_shared<std::mt19937_64>(seed);
  auto left = std::make_shared<std::uint64_t>(count);
  return [=](std::uint64_t, Req& r) {
    if (*left == 0) return false;
    --*left;
    std::uniform_real_distribution<double> u(0.0, 1.0);
    Loc l;
    l.ch = channel >= 0 ? static_cast<std::uint32_t>(channel) : (*rng)() % kChannels;
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
double bus_utilisation(std::uint64_t columns, std::uint64_t cycles, const Timing& t) {
  return static_cast<double>(columns * t.tBURST()) / static_cast<double>(cycles * kChannels);
}

std::uint64_t device_columns(Harness& h) {
  const auto s = h.device().total_stats();
  return s.rd + s.wr;
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

TEST(HbmCtrl, SingleWriteThenReadEveryMapOrder) {
  // The four named orders of hbm_pkg, then random permutations of the five fields.
  std::vector<std::array<Field, 5>> orders = {
      {kCo, kCh, kBg, kBa, kRo},  // ro-ba-bg-ch-co
      {kCo, kBg, kBa, kCh, kRo},  // ro-ch-ba-bg-co
      {kCo, kBg, kBa, kRo, kCh},  // ch-ro-ba-bg-co
      {kCh, kCo, kBg, kBa, kRo},  // ro-ba-bg-co-ch
  };
  std::mt19937_64 prng(42);
  for (int i = 0; i < 3; ++i) {
    std::array<Field, 5> o{kCo, kCh, kBg, kBa, kRo};
    std::shuffle(o.begin(), o.end(), prng);
    orders.push_back(o);
  }
  for (unsigned order = 0; order < orders.size(); ++order) {
    Amap m;
    m.lsb_first = orders[order];
    Harness h(Timing{}, m);
    std::vector<std::pair<unsigned, dram::Command>> seen;
    h.on_command([&](std::uint64_t, unsigned c, const dram::Command& cmd) {
      seen.emplace_back(c, cmd);
    });
    std::mt19937_64 rng(100 + order);
    for (int n = 0; n < 6; ++n) {
      Loc l;
      l.ch = rng() % kChannels;
      l.bg = rng() % 4;
      l.ba = rng() % 4;
      l.row = rng() % 16384;
      l.col = rng() % 32;
      const std::uint64_t addr = encode(h.amap(), l);
      ASSERT_EQ(decode(h.amap(), addr).row, l.row);
      const Burst data = random_burst(rng);
      bool sent = false;
      h.set_gen(n % kPorts, [&](std::uint64_t, Req& r) {
        if (sent) return false;
        sent = true;
        r = Req{.write = true, .addr = addr, .data = data};
        return true;
      });
      seen.clear();
      h.drain(2000);
      bool sent_rd = false;
      h.set_gen((n + 3) % kPorts, [&](std::uint64_t, Req& r) {
        if (sent_rd) return false;
        sent_rd = true;
        r = Req{.write = false, .addr = addr};
        return true;
      });
      h.drain(2000);
      // The WR and the RD went to the mapped channel, bank group, bank, row and column.
      int wr = 0, rd = 0;
      for (const auto& [c, cmd] : seen) {
        if (cmd.op != dram::Op::Wr && cmd.op != dram::Op::Rd) continue;
        (cmd.op == dram::Op::Wr ? wr : rd)++;
        EXPECT_EQ(c, l.ch) << "order " << order;
        EXPECT_EQ(cmd.bank_group, l.bg);
        EXPECT_EQ(cmd.bank, l.ba);
        EXPECT_EQ(cmd.row, l.row);
        EXPECT_EQ(cmd.column, l.col);
      }
      EXPECT_EQ(wr, 1);
      EXPECT_EQ(rd, 1);
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
    Harness h;
    for (unsigned p = 0; p < kPorts; ++p) {
      h.set_gen(p, random_gen(h.amap(), 1000 * p + static_cast<unsigned>(wf * 10), wf, 8, 2500));
    }
    h.run(30000);
    h.drain();
    EXPECT_EQ(h.reads_done() + h.writes_done(), kPorts * 2500u);
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
    // Every miss or conflict took an ACT; a few requests took two (their row was closed by a
    // refresh before their column command).
    EXPECT_GE(s.acts, s.row_misses + s.row_conflicts);
    EXPECT_LE(s.acts, (s.row_misses + s.row_conflicts) * 101 / 100);
    EXPECT_EQ(s.rd_lat_sum, h.latency_sum());
    EXPECT_GT(s.row_conflicts, 0u);
    EXPECT_GT(s.turnarounds, 0u);
    h.device().finish(h.cycle());
    std::printf("[ mix w=%.1f ] %llu cycles, hits %llu misses %llu conflicts %llu, "
                "read latency mean %.1f p50 %.0f p99 %.0f max %llu\n",
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
  Harness h;
  for (unsigned p = 0; p < kPorts; ++p) {
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
  h.run(40000);
  h.drain();
  EXPECT_EQ(h.reads_done() + h.writes_done(), kPorts * 3000u);
}

// Sequential reads, one stream per channel: >= 85% of the peak data-bus bandwidth (one burst per
// tBURST per channel) over a window that contains refreshes, nearly all row hits.
TEST(HbmCtrl, StreamReadsReachPeakBandwidth) {
  Harness h;
  for (unsigned p = 0; p < kPorts; ++p) {
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
  const double util = bus_utilisation(device_columns(h) - cols0, window, h.timing());
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
  EXPECT_GE(s.refs - s0.refs, kChannels * (window / h.timing().tREFI));
  h.clear_gens();
  h.drain();
}

// Sequential writes, then a sequential read-back of everything written.
TEST(HbmCtrl, StreamWritesThenReadBack) {
  Harness h;
  constexpr std::uint64_t kPerLane = 3000;
  std::mt19937_64 rng(5);
  std::vector<std::vector<Burst>> data(kPorts);
  for (auto& d : data) {
    for (std::uint64_t i = 0; i < kPerLane; ++i) d.push_back(random_burst(rng));
  }
  for (unsigned p = 0; p < kPorts; ++p) {
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
  const double wutil = bus_utilisation(kPorts * kPerLane, h.cycle() - c0, h.timing());
  for (unsigned p = 0; p < kPorts; ++p) {
    auto k = std::make_shared<std::uint64_t>(0);
    h.set_gen(p, [k, p, &h](std::uint64_t, Req& r) {
      if (*k == kPerLane) return false;
      r = Req{.write = false, .addr = channel_linear(h.amap(), p, (*k)++)};
      return true;
    });
  }
  h.drain();
  EXPECT_EQ(h.reads_done(), kPorts * kPerLane);
  std::printf("[ stream write ] bus utilisation %.1f%% of peak\n", 100 * wutil);
  EXPECT_GE(wutil, 0.80);
}

// Random reads (lane p feeds channel p, so no lane waits for another channel's queue): far below
// peak (tRC, tFAW and row conflicts), with misses and conflicts counted.
TEST(HbmCtrl, RandomReadsBandwidthAndRowStats) {
  Harness h;
  for (unsigned p = 0; p < kPorts; ++p) {
    h.set_gen(p, random_gen(h.amap(), 900 + p, 0.0, 16384, ~std::uint64_t{0}, static_cast<int>(p)));
  }
  h.run(2000);
  const std::uint64_t cols0 = device_columns(h);
  const Stats s0 = h.total_stats();
  const std::uint64_t window = 20000;
  h.run(window);
  const double util = bus_utilisation(device_columns(h) - cols0, window, h.timing());
  const Stats s = h.total_stats();
  const std::uint64_t n = s.requests() - s0.requests();
  const double hits = static_cast<double>(s.row_hits - s0.row_hits) / static_cast<double>(n);
  const double misses = static_cast<double>(s.row_misses - s0.row_misses) / static_cast<double>(n);
  const double confl =
      static_cast<double>(s.row_conflicts - s0.row_conflicts) / static_cast<double>(n);
  std::printf("[ random read ] bus utilisation %.1f%% of peak; hits %.1f%% misses %.1f%% "
              "conflicts %.1f%%; mean queue occupancy %.1f\n",
              100 * util, 100 * hits, 100 * misses, 100 * confl,
              static_cast<double>(s.occ_sum - s0.occ_sum) / static_cast<double>(window * kChannels));
  EXPECT_LT(util, 0.5);
  EXPECT_GT(util, 0.1);
  EXPECT_GT(confl, 0.5);
  EXPECT_LT(hits, 0.2);
  h.clear_gens();
  h.drain();
}

// REF every tREFI per channel over a long run, idle and busy, and never more than 9 tREFI apart.
TEST(HbmCtrl, RefreshEveryTrefi) {
  Harness h;
  std::vector<std::vector<std::uint64_t>> refs(kChannels);
  h.on_command([&](std::uint64_t cyc, unsigned c, const dram::Command& cmd) {
    if (cmd.op == dram::Op::Ref) refs[c].push_back(cyc);
  });
  h.run(20000);  // idle
  for (unsigned p = 0; p < kPorts; ++p) {
    h.set_gen(p, random_gen(h.amap(), 40 + p, 0.4, 4, ~std::uint64_t{0}));
  }
  h.run(40000);  // busy
  h.clear_gens();
  h.drain();
  const std::uint64_t end = h.cycle();
  h.device().finish(end);
  const unsigned trefi = h.timing().tREFI;
  for (unsigned c = 0; c < kChannels; ++c) {
    // First REF of channel c is due tREFI - c*tREFI/8 after the start, then every tREFI.
    const std::uint64_t first = trefi - c * (trefi / kChannels);
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
// nearly every request is a miss and every bank is closed once the traffic stops.
TEST(HbmCtrl, ClosedPagePolicy) {
  {
  Harness h(Timing{}, Amap{}, /*closed_page=*/true);
  for (unsigned p = 0; p < kPorts; ++p) {
    h.set_gen(p, random_gen(h.amap(), 300 + p, 0.5, 64, 1500));
  }
  h.run(20000);
  h.drain();
  h.run(200);
  for (unsigned c = 0; c < kChannels; ++c) {
    for (unsigned b = 0; b < 16; ++b) {
      EXPECT_FALSE(h.device().bank_open(c, b / 4, b % 4)) << "channel " << c << " bank " << b;
    }
  }
  const Stats s = h.total_stats();
  EXPECT_EQ(s.requests(), kPorts * 1500u);
  EXPECT_EQ(s.row_conflicts, 0u);  // a row is never left open for someone else to close
  EXPECT_GT(s.row_misses, s.requests() / 2);
  EXPECT_GE(s.pres + s.preas * 16, s.acts);
  }
  // Open page on the same traffic keeps rows open: conflicts appear.
  Harness o;
  for (unsigned p = 0; p < kPorts; ++p) {
    o.set_gen(p, random_gen(o.amap(), 300 + p, 0.5, 64, 1500));
  }
  o.run(20000);
  o.drain();
  EXPECT_GT(o.total_stats().row_conflicts, 0u);
}

// A write to another row of a bank whose open row is hit by an endless read stream is served
// within the starvation bound.
TEST(HbmCtrl, StarvationGuard) {
  Harness h;
  Loc hot{.ch = 2, .bg = 0, .ba = 0, .row = 5, .col = 0};
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

// Another timing set (slower core clock, longer bursts: HBM3-like BL 8, tBURST 4) and the second
// address map order: integrity and timing still hold.
TEST(HbmCtrl, OtherTimingSetAndMap) {
  Timing t;
  t.CL = 20;
  t.CWL = 8;
  t.tRCD = 18;
  t.tRP = 18;
  t.tRAS = 40;
  t.tRC = 58;
  t.tRRD_S = 3;
  t.tRRD_L = 5;
  t.tFAW = 20;
  t.tCCD_S = 2;
  t.tCCD_L = 4;
  t.tWTR_S = 4;
  t.tWTR_L = 9;
  t.tWR = 20;
  t.tRTP = 6;
  t.tRFC = 350;
  t.tREFI = 3000;
  t.BL = 8;
  Harness h(t, Amap::ro_ch_ba_bg_co());
  for (unsigned p = 0; p < kPorts; ++p) {
    h.set_gen(p, random_gen(h.amap(), 600 + p, 0.5, 16, 1500));
  }
  h.run(20000);
  h.drain();
  EXPECT_EQ(h.reads_done() + h.writes_done(), kPorts * 1500u);
  h.device().finish(h.cycle());
}

}  // namespace
