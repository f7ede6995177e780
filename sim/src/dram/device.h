// SPDX-License-Identifier: Apache-2.0
// The HBM DRAM device model behind the RTL controller's per-channel command bus (docs/hbm.md,
// with the decisions the contract left open). It applies ACT/PRE/PREA/RD/WR/REF commands, checks every
// timing and state rule of the contract against per-bank, per-bank-group and per-channel history,
// stores data sparsely (a burst is allocated on its first write), returns read bursts exactly
// CL + tBURST after their RD, and counts what a report needs.
//
// Plain C++20, no Verilator and no host dependency: the harness converts its timing set
// (tpuemu::HbmTimingSet) into a dram::Config. Cost: every command is O(1) in the memory size (PREA
// and REF look at the banks of one channel); read_data() is one comparison when nothing is due.
#pragma once

#include "tpuemu/sim/dram_config.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tpuemu::sim::dram {

// Geometry and timings of one stack. All timings are in tCK (the command clock); the names and
// meanings are those of docs/hbm.md. A burst is bus_bytes * burst_length bytes and occupies the
// data bus for tBURST = burst_length / 2 cycles (DDR).
// Config: geometry and timings of one device, in tpuemu/sim/dram_config.h.

// Command codes as on the command bus (`cmd`, 3 bits).
enum class Op : std::uint8_t { Nop = 0, Act = 1, Pre = 2, PreA = 3, Rd = 4, Wr = 5, Ref = 6 };
std::string_view op_name(Op op);  // "ACT", "PRE", ...

// One command on one channel's command bus.
struct Command {
  // RD/WR with this row skip the open-row check (a bus that does not carry the row).
  static constexpr std::uint32_t kAnyRow = std::numeric_limits<std::uint32_t>::max();

  Op op = Op::Nop;
  std::uint32_t bank_group = 0;  // ACT, PRE, RD, WR
  std::uint32_t bank = 0;        // within the group
  // ACT: the row to open. RD/WR: the row the controller believes is open; the device checks it
  // (real DRAM ignores it; see docs/hbm.md). kAnyRow skips the check.
  std::uint32_t row = kAnyRow;
  std::uint32_t column = 0;  // RD/WR, in bursts
  // WR: burst_bytes() bytes; byte i is written when bit i of wmask is set, else keeps its value.
  const std::uint8_t* wdata = nullptr;
  std::uint64_t wmask = ~std::uint64_t{0};

  static Command act(std::uint32_t bg, std::uint32_t bank, std::uint32_t row) {
    return {.op = Op::Act, .bank_group = bg, .bank = bank, .row = row};
  }
  static Command pre(std::uint32_t bg, std::uint32_t bank) {
    return {.op = Op::Pre, .bank_group = bg, .bank = bank};
  }
  static Command prea() { return {.op = Op::PreA}; }
  static Command ref() { return {.op = Op::Ref}; }
  static Command rd(std::uint32_t bg, std::uint32_t bank, std::uint32_t column,
                    std::uint32_t row = kAnyRow) {
    return {.op = Op::Rd, .bank_group = bg, .bank = bank, .row = row, .column = column};
  }
  static Command wr(std::uint32_t bg, std::uint32_t bank, std::uint32_t column,
                    const std::uint8_t* data, std::uint64_t mask = ~std::uint64_t{0},
                    std::uint32_t row = kAnyRow) {
    return {.op = Op::Wr, .bank_group = bg, .bank = bank, .row = row, .column = column,
            .wdata = data, .wmask = mask};
  }
};

// A broken rule. what() is one line, e.g.
//   "tRCD violated: RD at cycle 1234 channel 3 bank group 1 bank 2: 9 cycles after ACT, needs 14"
// The constraint is a timing name ("tRCD", "tFAW", "tRTW" for the read-to-write turnaround,
// "tBURST" for data-bus occupancy, "tRFC", "refresh deadline", "command bus") or a state rule
// ("ACT to open bank", "RD to closed bank", "WR to closed bank", "RD to wrong row",
// "WR to wrong row", "REF with open bank", "address range").
class TimingViolation : public std::runtime_error {
 public:
  struct Details {
    std::string constraint;
    Op command = Op::Nop;
    std::uint64_t cycle = 0;
    std::uint32_t channel = 0;
    int bank_group = -1;  // -1: the rule concerns the whole channel
    int bank = -1;
    // Timing rules: the distance in cycles from `reference` (an earlier command) and the minimum
    // required. Refresh deadline: cycles since the last REF and the maximum allowed. State rules:
    // both 0 and `detail` says what was wrong.
    std::int64_t measured = 0;
    std::int64_t required = 0;
    Op reference = Op::Nop;
    std::string detail;
  };
  explicit TimingViolation(Details d);

  const Details& details() const noexcept { return d_; }
  const std::string& constraint() const noexcept { return d_.constraint; }
  Op command() const noexcept { return d_.command; }
  std::uint64_t cycle() const noexcept { return d_.cycle; }
  std::uint32_t channel() const noexcept { return d_.channel; }
  int bank_group() const noexcept { return d_.bank_group; }
  int bank() const noexcept { return d_.bank; }
  std::int64_t measured() const noexcept { return d_.measured; }
  std::int64_t required() const noexcept { return d_.required; }

 private:
  static std::string format(const Details& d);
  Details d_;
};

// Counters of one channel. Row hits are the controller's business; with open-page scheduling,
// hit rate = 1 - act / (rd + wr).
struct ChannelStats {
  std::uint64_t act = 0;
  std::uint64_t pre = 0;   // PRE commands (including PRE to an already closed bank)
  std::uint64_t prea = 0;  // PREA commands
  std::uint64_t rd = 0;
  std::uint64_t wr = 0;
  std::uint64_t ref = 0;
  std::uint64_t data_bus_busy_cycles = 0;  // (rd + wr) * tBURST
  std::vector<std::uint64_t> act_per_bank;  // index bank_group * banks_per_group + bank
  std::vector<std::uint64_t> rd_per_bank;
  std::vector<std::uint64_t> wr_per_bank;

  std::uint64_t column_commands() const { return rd + wr; }
  // 1 - act / (rd + wr), or 0 without column commands.
  double row_hit_rate() const;
  // Adds every counter of kChannelStatCounters and kChannelStatPerBank (the per-bank lists grow to
  // the longer of the two).
  ChannelStats& operator+=(const ChannelStats& other);
};

// The counters of ChannelStats, one list for whatever walks them all (sums, reports).
inline constexpr std::array<std::uint64_t ChannelStats::*, 7> kChannelStatCounters{
    &ChannelStats::act, &ChannelStats::pre, &ChannelStats::prea, &ChannelStats::rd,
    &ChannelStats::wr,  &ChannelStats::ref, &ChannelStats::data_bus_busy_cycles};
inline constexpr std::array<std::vector<std::uint64_t> ChannelStats::*, 3> kChannelStatPerBank{
    &ChannelStats::act_per_bank, &ChannelStats::rd_per_bank, &ChannelStats::wr_per_bank};

class Device {
 public:
  explicit Device(const Config& config);  // validates the config
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  Device(Device&&) noexcept;
  Device& operator=(Device&&) noexcept;
  ~Device();

  const Config& config() const noexcept { return config_; }

  // Applies one command issued at `cycle` on `channel`, or throws TimingViolation (the device
  // state is then unchanged). Cycles of one channel must not go backwards, and a channel takes
  // one command per cycle. Op::Nop is accepted and does nothing.
  void command(std::uint64_t cycle, std::uint32_t channel, const Command& cmd);

  // The burst of the RD issued at c, when cycle == c + CL + tBURST; empty otherwise. Call it
  // every cycle per channel (or at least at every due cycle): a burst whose cycle has passed
  // without being collected throws std::logic_error. The span is valid until the next call for
  // that channel.
  std::span<const std::uint8_t> read_data(std::uint64_t cycle, std::uint32_t channel);
  // Reads in flight on a channel (issued, data not yet returned).
  std::size_t reads_in_flight(std::uint32_t channel) const;

  // Throws TimingViolation ("refresh deadline") for the first channel that went more than
  // refresh_deadline_trefi * tREFI without a REF by `cycle`. command() checks its own channel
  // on every command; call this at the end of a run (or periodically).
  void finish(std::uint64_t cycle) const;

  // Direct access to the stored data, no timing (loading and inspecting memory). `out`/`data`
  // are at most one burst and must not cross the row; never-written bytes read as zeros.
  void backdoor_read(std::uint32_t channel, std::uint32_t bank_group, std::uint32_t bank,
                     std::uint32_t row, std::uint32_t column, std::span<std::uint8_t> out) const;
  void backdoor_write(std::uint32_t channel, std::uint32_t bank_group, std::uint32_t bank,
                      std::uint32_t row, std::uint32_t column, std::span<const std::uint8_t> data);

  const ChannelStats& stats(std::uint32_t channel) const;
  ChannelStats total_stats() const;  // summed over channels
  // The model's data footprint: rows written so far (each a directory of 4 bytes a column) and
  // bursts written so far (each burst_bytes() of memory).
  std::size_t allocated_rows() const;
  std::size_t allocated_bursts() const;

  // Introspection for tests and debugging.
  bool bank_open(std::uint32_t channel, std::uint32_t bank_group, std::uint32_t bank) const;
  std::uint32_t open_row(std::uint32_t channel, std::uint32_t bank_group, std::uint32_t bank) const;

 private:
  struct Channel;
  Channel& channel_at(std::uint32_t channel);
  const Channel& channel_at(std::uint32_t channel) const;

  Config config_;
  spec::hbm::DerivedTimings dist_;  // of config_
  std::vector<std::unique_ptr<Channel>> channels_;
};

}  // namespace tpuemu::sim::dram
