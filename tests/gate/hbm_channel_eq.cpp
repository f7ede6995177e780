// SPDX-License-Identifier: Apache-2.0
// Drives hbm_channel_eq (the RTL HBM controller with one channel's gate-level netlist beside it)
// with a fixed-seed request trace on that channel, through the emulator's own HbmCtrlDriver and
// DRAM device model. Exit 0 when every output of the netlist equals the RTL channel's in every
// cycle, 1 at the first cycle one differs (docs/fpga.md "Gate-level equivalence"). +gate-break
// switches on the netlist's changed gate (tests/gate/break_gate.py).
// Built by tests/gate/hbm_gate_eq.sh against netlists made at test time, not by the CMake build.
//
//   hbm_channel_eq KEY=VALUE... [+gate-break]   geometry, timings and queue sizes of the timing
//                                 set (the contract's names), requests=N, seed=S
//
// The trace: segments of 1000 requests to the checked channel, in turn sequential reads (row
// hits), random reads and writes over every bank (misses, conflicts, turnarounds, write drains)
// and writes then reads of a few bursts (same-burst ordering), each segment after an idle gap
// long enough for a refresh.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "Vhbm_channel_eq.h"
#include "hbm/hbm_ctrl_driver.h"
#include "hbm_channel_gates_names.h"

namespace {

namespace dram = tpuemu::sim::dram;
namespace spec = tpuemu::spec::hbm;
using tpuemu::sim::get_bits;
using tpuemu::sim::put_bytes;

constexpr unsigned kChannels = TPUEMU_GATE_CHANNELS;
constexpr unsigned kChecked = TPUEMU_GATE_CHECKED;

struct Options {
  dram::Config dram;
  spec::QueueSizes queues;
  std::uint64_t requests = 6000;
  std::uint64_t seed = 1;
};

Options parse(int argc, char** argv) {
  Options o;
  // The timing set's fields by their names in the contract and the configs/hbm files.
  const std::vector<std::pair<std::string_view, std::uint32_t*>> fields{
      {"channels", &o.dram.channels},
      {"bank_groups", &o.dram.bank_groups},
      {"banks_per_group", &o.dram.banks_per_group},
      {"rows", &o.dram.rows},
      {"columns", &o.dram.columns},
      {"bus_bytes", &o.dram.bus_bytes},
      {"burst_length", &o.dram.burst_length},
#define TIMING(name, doc) {#name, &o.dram.name},
      TPUEMU_SPEC_HBM_TIMINGS(TIMING)
#undef TIMING
#define QUEUE(name, def, doc) {#name, &o.queues.name},
          TPUEMU_SPEC_HBM_QUEUE_PARAMS(QUEUE)
#undef QUEUE
  };
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with('+')) continue;  // a plusarg of the model
    const auto eq = arg.find('=');
    if (eq == std::string_view::npos)
      throw std::invalid_argument("not KEY=VALUE: " + std::string(arg));
    const std::string_view key = arg.substr(0, eq);
    const std::uint64_t v = std::stoull(std::string(arg.substr(eq + 1)));
    if (key == "requests") {
      o.requests = v;
    } else if (key == "seed") {
      o.seed = v;
    } else {
      const auto f =
          std::find_if(fields.begin(), fields.end(), [&](const auto& e) { return e.first == key; });
      if (f == fields.end()) throw std::invalid_argument("unknown key: " + std::string(key));
      *f->second = static_cast<std::uint32_t>(v);
    }
  }
  o.dram.validate();
  if (o.dram.channels != kChannels)
    throw std::invalid_argument("the model was built for another channel count");
  return o;
}

unsigned log2(std::uint32_t v) { return static_cast<unsigned>(std::countr_zero(v)); }

// The contract's default order ro-ba-bg-ch-co (amap_t order 0), as the emulator packs it.
std::uint64_t amap_word(const dram::Config& c) {
  return std::uint64_t{log2(c.columns)} << 8 | std::uint64_t{log2(c.channels)} << 16 |
         std::uint64_t{log2(c.bank_groups)} << 24 | std::uint64_t{log2(c.banks_per_group)} << 32 |
         std::uint64_t{log2(c.rows)} << 40;
}
std::uint64_t address(const dram::Config& c, std::uint64_t row, std::uint64_t bank,
                      std::uint64_t col) {
  std::uint64_t a = row;
  a = a << log2(c.banks_per_group) | bank % c.banks_per_group;
  a = a << log2(c.bank_groups) | bank / c.banks_per_group;
  a = a << log2(c.channels) | kChecked;
  a = a << log2(c.columns) | col;
  return a << log2(c.burst_bytes());
}

struct Request {
  bool write;
  std::uint64_t addr;
};

class Trace {
 public:
  Trace(const dram::Config& c, std::uint64_t seed) : c_(c), rng_(seed) {}
  Request next(std::uint64_t i) {
    const std::uint64_t k = i % kSegment;
    switch ((i / kSegment) % 3) {
      case 0:  // sequential reads through a row of each bank in turn
        return {false, address(c_, 7, (k / c_.columns) % c_.banks(), k % c_.columns)};
      case 1:  // random reads and writes anywhere on the channel
        return {pick(2) == 1, address(c_, pick(c_.rows), pick(c_.banks()), pick(c_.columns))};
      default:  // writes and reads of eight bursts: same-burst order, write drains
        return {pick(3) != 0, address(c_, pick(2), pick(2), pick(4))};
    }
  }
  static bool gap_before(std::uint64_t i) { return i != 0 && i % kSegment == 0; }

 private:
  static constexpr std::uint64_t kSegment = 1000;
  std::uint64_t pick(std::uint64_t n) {
    return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng_);
  }
  const dram::Config& c_;
  std::mt19937_64 rng_;
};

int run(const Options& o, int argc, char** argv) {
  tpuemu::sim::hbm::HbmCtrlDriver<Vhbm_channel_eq, kChannels> drv(o.dram, o.queues,
                                                                  amap_word(o.dram), false);
  auto& top = drv.top();
  drv.context().commandArgs(argc, argv);  // +gate-break, read by the netlist's first evaluation
  top.req_valid_i = 0;
  drv.reset();
  Trace trace(o.dram, o.seed);
  std::mt19937_64 data_rng(o.seed + 1);
  const std::uint64_t gap = o.dram.tREFI + 100;       // an idle channel refreshes
  std::uint64_t issued = 0, answered = 0, quiet = 0;  // quiet: cycles with nothing outstanding
  bool have = false;
  Request req{};
  std::uint8_t wdata[64];
  for (;;) {
    const std::uint64_t cycle = drv.cycle();
    if (cycle > 400 * o.requests + 100000) {
      std::fprintf(stderr, "hbm_channel_eq: no end after %llu cycles\n",
                   static_cast<unsigned long long>(cycle));
      return 2;
    }
    drv.drive_read_data();
    if (!have && issued < o.requests && !(Trace::gap_before(issued) && quiet < gap)) {
      req = trace.next(issued);
      have = true;
    }
    top.req_valid_i = have;
    if (have) {
      top.req_write_i = req.write;
      top.req_addr_i[0] = req.addr;
      top.req_id_i[0] = static_cast<std::uint8_t>(issued);
      for (auto& b : wdata) b = static_cast<std::uint8_t>(data_rng());
      put_bytes(top.req_wdata_i[0], wdata, 64);
      top.req_wmask_i[0] = ~std::uint64_t{0};
    }
    top.eval();
    drv.issue_commands([](unsigned, const dram::Command&) {});
    if (top.gate_mismatch_o != 0) {
      std::printf("hbm_channel_eq: MISMATCH in cycle %llu: the netlist's",
                  static_cast<unsigned long long>(cycle));
      for (unsigned k = 0; k < std::size(kGateOutputs); ++k)
        if (get_bits(top.gate_mismatch_o, k, 1)) std::printf(" %s", kGateOutputs[k]);
      std::printf(" differ(s) from the RTL channel's (%llu requests issued)\n",
                  static_cast<unsigned long long>(issued));
      return 1;
    }
    if (have && (top.req_ready_o & 1)) {
      have = false;
      ++issued;
    }
    answered += get_bits(top.rsp_valid_o, kChecked, 1) + get_bits(top.bresp_valid_o, kChecked, 1);
    const bool outstanding = answered != issued || drv.posted_writes() != 0;
    quiet = outstanding || have ? 0 : quiet + 1;
    drv.clock_edge();
    if (issued == o.requests && !outstanding && quiet > 100) break;
  }
  const auto s = drv.counters(kChecked);
  std::printf(
      "hbm_channel_eq: %llu requests on channel %u, %llu cycles, every output of the netlist "
      "equal to the RTL channel's in every cycle\n",
      static_cast<unsigned long long>(issued), kChecked,
      static_cast<unsigned long long>(drv.cycle()));
  std::printf("counters:");
#define STAT(k, name, unit, doc) \
  std::printf(" %s=%llu", #name, static_cast<unsigned long long>(s[k]));
  TPUEMU_SPEC_HBM_STATS(STAT)
#undef STAT
  std::printf("\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv), argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hbm_channel_eq: %s\n", e.what());
    return 2;
  }
}
