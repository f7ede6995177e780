// SPDX-License-Identifier: Apache-2.0
// HBM DRAM device model: command checking, sparse storage, read-data timing, statistics.
// The rules are those of docs/hbm.md, their derived distances the contract's table
// (spec::hbm::derive_timings); docs/hbm.md also records the decisions the contract left open (PRE
// to a closed bank, the row on RD/WR, REF and tRC, ...).
#include "dram/device.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <sstream>
#include <utility>

namespace tpuemu::sim::dram {
namespace {

// "Never happened": far enough in the past that every distance from it is satisfied, and far
// enough from INT64_MIN that subtracting it from any cycle below 2^62 cannot overflow.
constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::min() / 4;

bool is_pow2(std::uint32_t x) { return std::has_single_bit(x); }

std::string plural_cycles(std::int64_t n) {
  return std::to_string(n) + (n == 1 || n == -1 ? " cycle" : " cycles");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Config, names, violation messages, stats
// ---------------------------------------------------------------------------------------------

void Config::validate() const {
  auto pow2 = [](const char* name, std::uint32_t v) {
    if (!is_pow2(v)) {
      throw std::invalid_argument(std::string("dram::Config: ") + name +
                                  " must be a power of two, got " + std::to_string(v));
    }
  };
  pow2("channels", channels);
  pow2("bank_groups", bank_groups);
  pow2("banks_per_group", banks_per_group);
  pow2("rows", rows);
  pow2("columns", columns);
  pow2("bus_bytes", bus_bytes);
  pow2("burst_length", burst_length);
  if (burst_length < 2) {
    throw std::invalid_argument("dram::Config: burst_length must be at least 2 (tBURST = BL/2)");
  }
  if (burst_bytes() > 64) {
    throw std::invalid_argument("dram::Config: a burst of " + std::to_string(burst_bytes()) +
                                " bytes exceeds the 64-byte write mask");
  }
  const auto values = timings();
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (values[k] == 0) {
      throw std::invalid_argument("dram::Config: " + std::string(spec::hbm::kTimingNames[k]) +
                                  " must be > 0");
    }
  }
}

std::string_view op_name(Op op) {
  switch (op) {
    case Op::Nop: return "NOP";
    case Op::Act: return "ACT";
    case Op::Pre: return "PRE";
    case Op::PreA: return "PREA";
    case Op::Rd: return "RD";
    case Op::Wr: return "WR";
    case Op::Ref: return "REF";
  }
  return "?";
}

std::string TimingViolation::format(const Details& d) {
  std::ostringstream s;
  s << d.constraint << " violated: ";
  if (d.command == Op::Nop) {
    s << "check";
  } else {
    s << op_name(d.command);
  }
  s << " at cycle " << d.cycle << " channel " << d.channel;
  if (d.bank_group >= 0) s << " bank group " << d.bank_group << " bank " << d.bank;
  s << ": ";
  if (d.constraint == "refresh deadline") {
    s << plural_cycles(d.measured) << " since the last REF, allowed at most " << d.required;
    if (!d.detail.empty()) s << " (" << d.detail << ")";
  } else if (d.reference != Op::Nop) {
    s << plural_cycles(d.measured) << " after " << op_name(d.reference) << ", needs "
      << d.required;
    if (!d.detail.empty()) s << " (" << d.detail << ")";
  } else {
    s << d.detail;
  }
  return s.str();
}

TimingViolation::TimingViolation(Details d) : std::runtime_error(format(d)), d_(std::move(d)) {}

double ChannelStats::row_hit_rate() const {
  const auto cols = column_commands();
  if (cols == 0) return 0.0;
  return 1.0 - static_cast<double>(act) / static_cast<double>(cols);
}

// A counter added to ChannelStats but not to the lists would be left out of every sum.
static_assert(sizeof(ChannelStats) == sizeof(std::uint64_t) * kChannelStatCounters.size() +
                                          sizeof(std::vector<std::uint64_t>) * kChannelStatPerBank.size(),
              "every counter of ChannelStats is in kChannelStatCounters or kChannelStatPerBank");

ChannelStats& ChannelStats::operator+=(const ChannelStats& other) {
  for (const auto counter : kChannelStatCounters) this->*counter += other.*counter;
  for (const auto list : kChannelStatPerBank) {
    std::vector<std::uint64_t>& mine = this->*list;
    const std::vector<std::uint64_t>& theirs = other.*list;
    if (mine.size() < theirs.size()) mine.resize(theirs.size(), 0);
    for (std::size_t i = 0; i < theirs.size(); ++i) mine[i] += theirs[i];
  }
  return *this;
}

// ---------------------------------------------------------------------------------------------
// Per-channel state
// ---------------------------------------------------------------------------------------------

namespace {

constexpr std::uint32_t kNoDirectory = std::numeric_limits<std::uint32_t>::max();

// Sparse storage of one channel. A row ever written has a directory: one entry per column, the
// number of its burst's block plus one (0: never written). The blocks, burst_bytes() each, are
// carved from pooled chunks. A write to a fresh row costs one directory (4 bytes a column) and
// one block, not a whole row; nothing is allocated per write while the chunk and the directory
// array have room. (A 2 KiB row allocated and zeroed per first write made malloc and page faults
// a fifth of a random read/write replay's time.) Rows are found through an open-addressing hash
// table, looked up on ACT and on the back door only.
class Storage {
 public:
  Storage() = default;
  Storage(std::uint32_t columns, std::size_t burst_bytes) : columns_(columns), burst_(burst_bytes) {}

  // The directory of a row (row_key), or kNoDirectory.
  std::uint32_t find(std::uint64_t key) const {
    if (keys_.empty()) return kNoDirectory;
    for (std::size_t i = slot_of(key);; i = (i + 1) & (keys_.size() - 1)) {
      if (keys_[i] == key) return dirs_[i];
      if (keys_[i] == kEmptyKey) return kNoDirectory;
    }
  }
  // The directory of a row, made (every column unwritten) if the row has none.
  std::uint32_t find_or_add(std::uint64_t key) {
    if (const std::uint32_t d = find(key); d != kNoDirectory) return d;
    if (2 * (rows_ + 1) > keys_.size()) grow();
    const auto d = static_cast<std::uint32_t>(rows_);
    insert(key, d);
    ++rows_;
    directory_.resize(directory_.size() + columns_, 0);
    return d;
  }
  // A written burst's bytes, or nullptr.
  const std::uint8_t* burst(std::uint32_t dir, std::uint32_t column) const {
    const std::uint32_t n = directory_[std::size_t{dir} * columns_ + column];
    return n == 0 ? nullptr : block(n - 1);
  }
  // A burst's bytes to write; a burst never written gets a block of zeros.
  std::uint8_t* burst_for_write(std::uint32_t dir, std::uint32_t column) {
    std::uint32_t& n = directory_[std::size_t{dir} * columns_ + column];
    if (n == 0) {
      if (bursts_ % kChunkBursts == 0) {
        chunks_.push_back(std::make_unique<std::uint8_t[]>(kChunkBursts * burst_));  // zeros
      }
      n = static_cast<std::uint32_t>(++bursts_);
    }
    return block(n - 1);
  }
  std::size_t rows() const { return rows_; }
  std::size_t bursts() const { return bursts_; }

 private:
  static constexpr std::uint64_t kEmptyKey = ~std::uint64_t{0};  // bank index < 2^32 - 1
  static constexpr std::size_t kChunkBursts = 1024;

  std::uint8_t* block(std::size_t index) const {
    return chunks_[index / kChunkBursts].get() + (index % kChunkBursts) * burst_;
  }
  std::size_t slot_of(std::uint64_t key) const {
    // Fibonacci hashing: the top bits of the product spread rows and banks alike.
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> (64 - shift_));
  }
  void insert(std::uint64_t key, std::uint32_t dir) {
    std::size_t i = slot_of(key);
    while (keys_[i] != kEmptyKey) i = (i + 1) & (keys_.size() - 1);
    keys_[i] = key;
    dirs_[i] = dir;
  }
  void grow() {
    std::vector<std::uint64_t> keys = std::move(keys_);
    std::vector<std::uint32_t> dirs = std::move(dirs_);
    shift_ = keys.empty() ? 10 : shift_ + 1;
    keys_.assign(std::size_t{1} << shift_, kEmptyKey);
    dirs_.assign(std::size_t{1} << shift_, kNoDirectory);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] != kEmptyKey) insert(keys[i], dirs[i]);
    }
  }

  std::uint32_t columns_ = 0;
  std::size_t burst_ = 0;
  std::vector<std::uint64_t> keys_;  // the hash table: row_key or kEmptyKey
  std::vector<std::uint32_t> dirs_;  // the directory of keys_[i]
  unsigned shift_ = 0;               // keys_.size() == 2^shift_
  std::size_t rows_ = 0;
  std::vector<std::uint32_t> directory_;  // rows_ directories of columns_ entries
  std::vector<std::unique_ptr<std::uint8_t[]>> chunks_;  // kChunkBursts blocks each
  std::size_t bursts_ = 0;
};

}  // namespace

struct BankState {
  bool open = false;
  std::uint32_t row = 0;
  std::uint32_t directory = kNoDirectory;  // the open row's (Storage), none while never written
  std::int64_t last_act = kNever;
  std::int64_t last_pre = kNever;  // when this bank last went from open to closed
  std::int64_t last_rd = kNever;
  std::int64_t last_wr = kNever;
};

struct GroupState {
  std::int64_t last_act = kNever;
  std::int64_t last_rd = kNever;
  std::int64_t last_wr = kNever;
};

struct Device::Channel {
  std::vector<BankState> banks;
  std::vector<GroupState> groups;
  std::int64_t last_cmd = kNever;
  Op last_cmd_op = Op::Nop;
  std::int64_t last_act = kNever;
  std::int64_t last_rd = kNever;
  std::int64_t last_wr = kNever;
  std::int64_t last_ref = kNever;        // for tRFC
  std::int64_t last_ref_deadline = 0;    // the refresh deadline counts from cycle 0
  std::array<std::int64_t, 4> faw{kNever, kNever, kNever, kNever};  // last 4 ACTs, ring
  std::uint32_t faw_next = 0;  // slot of the oldest of the four

  Storage storage;

  // Read data in flight, a ring of burst slots in RD order.
  std::vector<std::uint8_t> ring_data;
  std::vector<std::int64_t> ring_due;
  std::vector<std::int64_t> ring_issue;
  std::size_t ring_head = 0;
  std::size_t ring_count = 0;
  std::vector<std::uint8_t> current;  // the burst handed out by read_data

  ChannelStats stats;
};

namespace {

std::uint64_t row_key(std::uint32_t bank_index, std::uint32_t row) {
  return (std::uint64_t{bank_index} << 32) | row;
}

// Builds and throws violations for one command; keeps the hot path free of string work.
struct Checker {
  const Op op;
  const std::int64_t t;
  const std::uint32_t channel;
  int bank_group = -1;
  int bank = -1;

  [[noreturn]] void fail(std::string constraint, std::int64_t measured, std::int64_t required,
                         Op reference, std::string detail = {}) const {
    throw TimingViolation(TimingViolation::Details{
        .constraint = std::move(constraint),
        .command = op,
        .cycle = static_cast<std::uint64_t>(t),
        .channel = channel,
        .bank_group = bank_group,
        .bank = bank,
        .measured = measured,
        .required = required,
        .reference = reference,
        .detail = std::move(detail),
    });
  }
  [[noreturn]] void state(std::string constraint, std::string detail) const {
    fail(std::move(constraint), 0, 0, Op::Nop, std::move(detail));
  }
  // t must be at least `required` cycles after `since`. A comparison inline; the message is built
  // out of line, so that every command's dozen checks stay a dozen compares.
  void need(const char* constraint, std::int64_t since, std::int64_t required, Op reference,
            const char* formula = nullptr) const {
    if (t - since < required) [[unlikely]] {
      fail_need(constraint, t - since, required, reference, formula);
    }
  }
  [[noreturn, gnu::noinline, gnu::cold]] void fail_need(const char* constraint,
                                                        std::int64_t measured,
                                                        std::int64_t required, Op reference,
                                                        const char* formula) const {
    fail(constraint, measured, required, reference, formula ? formula : "");
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Device
// ---------------------------------------------------------------------------------------------

Device::Device(const Config& config) : config_(config), dist_(config.derived()) {
  config_.validate();
  // Reads in flight: one RD a cycle, each until its data have left the bus, and two more.
  const std::size_t in_flight = std::size_t{dist_.rd_data} + 2;
  const std::size_t ring = std::bit_ceil(in_flight);
  channels_.reserve(config_.channels);
  for (std::uint32_t c = 0; c < config_.channels; ++c) {
    auto ch = std::make_unique<Channel>();
    ch->banks.resize(config_.banks());
    ch->groups.resize(config_.bank_groups);
    ch->storage = Storage(config_.columns, config_.burst_bytes());
    ch->ring_data.resize(ring * config_.burst_bytes());
    ch->ring_due.resize(ring);
    ch->ring_issue.resize(ring);
    ch->current.resize(config_.burst_bytes());
    ch->stats.act_per_bank.assign(config_.banks(), 0);
    ch->stats.rd_per_bank.assign(config_.banks(), 0);
    ch->stats.wr_per_bank.assign(config_.banks(), 0);
    channels_.push_back(std::move(ch));
  }
}

Device::Device(Device&&) noexcept = default;
Device& Device::operator=(Device&&) noexcept = default;
Device::~Device() = default;

namespace {
[[noreturn, gnu::noinline, gnu::cold]] void no_such_channel(std::uint32_t channel,
                                                             std::size_t channels) {
  throw std::out_of_range("dram::Device: channel " + std::to_string(channel) + " of " +
                          std::to_string(channels));
}
}  // namespace

// Called per command and per channel per cycle (read_data): the check inline, the throw not.
inline Device::Channel& Device::channel_at(std::uint32_t channel) {
  if (channel >= channels_.size()) [[unlikely]] no_such_channel(channel, channels_.size());
  return *channels_[channel];
}

const Device::Channel& Device::channel_at(std::uint32_t channel) const {
  return const_cast<Device*>(this)->channel_at(channel);
}

void Device::command(std::uint64_t cycle, std::uint32_t channel, const Command& cmd) {
  if (cmd.op == Op::Nop) return;
  Channel& ch = channel_at(channel);
  const Config& k = config_;
  const auto t = static_cast<std::int64_t>(cycle);
  Checker chk{cmd.op, t, channel};
  const bool bank_cmd = cmd.op == Op::Act || cmd.op == Op::Pre || cmd.op == Op::Rd ||
                        cmd.op == Op::Wr;
  if (bank_cmd) {
    chk.bank_group = static_cast<int>(cmd.bank_group);
    chk.bank = static_cast<int>(cmd.bank);
  }

  // --- The command bus: one command per channel per cycle, in time order.
  if (t <= ch.last_cmd) chk.fail("command bus", t - ch.last_cmd, 1, ch.last_cmd_op);

  // --- Address range.
  if (bank_cmd) {
    if (cmd.bank_group >= k.bank_groups || cmd.bank >= k.banks_per_group) {
      chk.state("address range", "bank group " + std::to_string(cmd.bank_group) + " bank " +
                                     std::to_string(cmd.bank) + " outside " +
                                     std::to_string(k.bank_groups) + " bank groups x " +
                                     std::to_string(k.banks_per_group) + " banks");
    }
    if (cmd.op == Op::Act && cmd.row >= k.rows) {
      chk.state("address range",
                "row " + std::to_string(cmd.row) + " outside " + std::to_string(k.rows) + " rows");
    }
    if ((cmd.op == Op::Rd || cmd.op == Op::Wr) && cmd.column >= k.columns) {
      chk.state("address range", "column " + std::to_string(cmd.column) + " outside " +
                                     std::to_string(k.columns) + " columns");
    }
  }
  if (cmd.op == Op::Wr && cmd.wdata == nullptr) {
    throw std::invalid_argument("dram::Device: WR without data");
  }

  // --- Refresh: the deadline (checked lazily here and in finish()), and nothing during tRFC.
  if (k.refresh_deadline_trefi != 0) {
    const std::int64_t limit = std::int64_t{k.refresh_deadline_trefi} * k.tREFI;
    if (t - ch.last_ref_deadline > limit) {
      chk.fail("refresh deadline", t - ch.last_ref_deadline, limit, Op::Nop,
               std::to_string(k.refresh_deadline_trefi) + " x tREFI");
    }
  }
  chk.need("tRFC", ch.last_ref, k.tRFC, Op::Ref);

  // The contract's derived distances (spec/tpuemu.json "derived_timings"); a violation names
  // the expression it checked.
  const spec::hbm::DerivedTimings& d = dist_;
  const auto formula = [](std::uint32_t index) { return spec::hbm::kDerivedTimings[index].expr.data(); };
  namespace derived = spec::hbm::derived;
  const std::int64_t tBURST = d.tBURST;
  const std::uint32_t bank_index = cmd.bank_group * k.banks_per_group + cmd.bank;

  switch (cmd.op) {
    case Op::Act: {
      BankState& b = ch.banks[bank_index];
      GroupState& g = ch.groups[cmd.bank_group];
      if (b.open) chk.state("ACT to open bank", "row " + std::to_string(b.row) + " is open");
      chk.need("tRP", b.last_pre, k.tRP, Op::Pre);
      chk.need("tRC", b.last_act, k.tRC, Op::Act);
      chk.need("tRRD_L", g.last_act, k.tRRD_L, Op::Act);
      chk.need("tRRD_S", ch.last_act, k.tRRD_S, Op::Act);
      chk.need("tFAW", ch.faw[ch.faw_next], k.tFAW, Op::Act, "the 4th ACT before this one");

      b.open = true;
      b.row = cmd.row;
      b.directory = ch.storage.find(row_key(bank_index, cmd.row));
      b.last_act = g.last_act = ch.last_act = t;
      ch.faw[ch.faw_next] = t;
      ch.faw_next = (ch.faw_next + 1) % 4;
      ++ch.stats.act;
      ++ch.stats.act_per_bank[bank_index];
      break;
    }

    case Op::Pre:
    case Op::PreA: {
      auto check_bank = [&](std::uint32_t index) {
        const BankState& b = ch.banks[index];
        if (!b.open) return;
        Checker c = chk;
        c.bank_group = static_cast<int>(index / k.banks_per_group);
        c.bank = static_cast<int>(index % k.banks_per_group);
        c.need("tRAS", b.last_act, k.tRAS, Op::Act);
        c.need("tRTP", b.last_rd, k.tRTP, Op::Rd);
        c.need("tWR", b.last_wr, d.wr2pre, Op::Wr, formula(derived::wr2pre));
      };
      auto close_bank = [&](std::uint32_t index) {
        BankState& b = ch.banks[index];
        if (!b.open) return;  // PRE to an idle bank is a NOP for that bank
        b.open = false;
        b.directory = kNoDirectory;
        b.last_pre = t;
      };
      if (cmd.op == Op::Pre) {
        check_bank(bank_index);
        close_bank(bank_index);
        ++ch.stats.pre;
      } else {
        for (std::uint32_t i = 0; i < k.banks(); ++i) check_bank(i);
        for (std::uint32_t i = 0; i < k.banks(); ++i) close_bank(i);
        ++ch.stats.prea;
      }
      break;
    }

    case Op::Rd:
    case Op::Wr: {
      const bool rd = cmd.op == Op::Rd;
      BankState& b = ch.banks[bank_index];
      GroupState& g = ch.groups[cmd.bank_group];
      if (!b.open) chk.state(rd ? "RD to closed bank" : "WR to closed bank", "the bank is closed");
      if (cmd.row != Command::kAnyRow && cmd.row != b.row) {
        chk.state(rd ? "RD to wrong row" : "WR to wrong row",
                  "row " + std::to_string(b.row) + " is open, not row " + std::to_string(cmd.row));
      }
      chk.need("tRCD", b.last_act, k.tRCD, Op::Act);
      if (rd) {
        chk.need("tCCD_L", g.last_rd, k.tCCD_L, Op::Rd);
        chk.need("tCCD_S", ch.last_rd, k.tCCD_S, Op::Rd);
        chk.need("tBURST", ch.last_rd, tBURST, Op::Rd, "data bus");
        chk.need("tWTR_L", g.last_wr, d.wtr_l, Op::Wr, formula(derived::wtr_l));
        chk.need("tWTR_S", ch.last_wr, d.wtr_s, Op::Wr, formula(derived::wtr_s));
      } else {
        chk.need("tCCD_L", g.last_wr, k.tCCD_L, Op::Wr);
        chk.need("tCCD_S", ch.last_wr, k.tCCD_S, Op::Wr);
        chk.need("tBURST", ch.last_wr, tBURST, Op::Wr, "data bus");
        chk.need("tRTW", ch.last_rd, d.tRTW, Op::Rd, formula(derived::tRTW));
      }

      const std::size_t burst = k.burst_bytes();
      if (rd) {
        const std::size_t cap = ch.ring_due.size();
        if (ch.ring_count == cap) {
          // Only possible when read_data() was not called at a due cycle.
          throw std::logic_error("dram::Device: read data of channel " + std::to_string(channel) +
                                 " not collected (RD at cycle " +
                                 std::to_string(ch.ring_issue[ch.ring_head]) + " was due at " +
                                 std::to_string(ch.ring_due[ch.ring_head]) + ")");
        }
        const std::size_t slot = (ch.ring_head + ch.ring_count) & (cap - 1);
        std::uint8_t* dst = ch.ring_data.data() + slot * burst;
        const std::uint8_t* src =
            b.directory == kNoDirectory ? nullptr : ch.storage.burst(b.directory, cmd.column);
        if (src != nullptr) {
          std::memcpy(dst, src, burst);
        } else {
          std::memset(dst, 0, burst);
        }
        ch.ring_due[slot] = t + d.rd_data;
        ch.ring_issue[slot] = t;
        ++ch.ring_count;
        b.last_rd = g.last_rd = ch.last_rd = t;
        ++ch.stats.rd;
        ++ch.stats.rd_per_bank[bank_index];
      } else {
        if (b.directory == kNoDirectory) {
          b.directory = ch.storage.find_or_add(row_key(bank_index, b.row));
        }
        std::uint8_t* dst = ch.storage.burst_for_write(b.directory, cmd.column);
        const std::uint64_t full = burst == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << burst) - 1;
        const std::uint64_t mask = cmd.wmask & full;
        if (mask == full) {
          std::memcpy(dst, cmd.wdata, burst);
        } else {
          for (std::size_t i = 0; i < burst; ++i) {
            if ((mask >> i) & 1) dst[i] = cmd.wdata[i];
          }
        }
        b.last_wr = g.last_wr = ch.last_wr = t;
        ++ch.stats.wr;
        ++ch.stats.wr_per_bank[bank_index];
      }
      ch.stats.data_bus_busy_cycles += static_cast<std::uint64_t>(tBURST);
      break;
    }

    case Op::Ref: {
      for (std::uint32_t i = 0; i < k.banks(); ++i) {
        const BankState& b = ch.banks[i];
        Checker c = chk;
        c.bank_group = static_cast<int>(i / k.banks_per_group);
        c.bank = static_cast<int>(i % k.banks_per_group);
        if (b.open) c.state("REF with open bank", "row " + std::to_string(b.row) + " is open");
        c.need("tRP", b.last_pre, k.tRP, Op::Pre);
      }
      ch.last_ref = t;
      ch.last_ref_deadline = t;
      ++ch.stats.ref;
      break;
    }

    case Op::Nop:
      break;
  }
  ch.last_cmd = t;
  ch.last_cmd_op = cmd.op;
}

std::span<const std::uint8_t> Device::read_data(std::uint64_t cycle, std::uint32_t channel) {
  Channel& ch = channel_at(channel);
  if (ch.ring_count == 0) return {};
  const auto t = static_cast<std::int64_t>(cycle);
  const std::int64_t due = ch.ring_due[ch.ring_head];
  if (due > t) return {};
  if (due < t) {
    throw std::logic_error("dram::Device: read data of channel " + std::to_string(channel) +
                           " (RD at cycle " + std::to_string(ch.ring_issue[ch.ring_head]) +
                           ") was due at cycle " + std::to_string(due) +
                           " but collected at cycle " + std::to_string(cycle));
  }
  const std::size_t burst = config_.burst_bytes();
  std::memcpy(ch.current.data(), ch.ring_data.data() + ch.ring_head * burst, burst);
  ch.ring_head = (ch.ring_head + 1) & (ch.ring_due.size() - 1);
  --ch.ring_count;
  return {ch.current.data(), burst};
}

std::size_t Device::reads_in_flight(std::uint32_t channel) const {
  return channel_at(channel).ring_count;
}

void Device::finish(std::uint64_t cycle) const {
  if (config_.refresh_deadline_trefi == 0) return;
  const std::int64_t limit = std::int64_t{config_.refresh_deadline_trefi} * config_.tREFI;
  const auto t = static_cast<std::int64_t>(cycle);
  for (std::uint32_t c = 0; c < channels_.size(); ++c) {
    const Channel& ch = *channels_[c];
    if (t - ch.last_ref_deadline > limit) {
      Checker{Op::Nop, t, c}.fail("refresh deadline", t - ch.last_ref_deadline, limit, Op::Nop,
                                  std::to_string(config_.refresh_deadline_trefi) + " x tREFI");
    }
  }
}

namespace {
void check_backdoor(const Config& k, std::uint32_t bg, std::uint32_t bank, std::uint32_t row,
                    std::uint32_t column, std::size_t len) {
  if (bg >= k.bank_groups || bank >= k.banks_per_group || row >= k.rows || column >= k.columns) {
    throw std::out_of_range("dram::Device backdoor: bank group " + std::to_string(bg) + " bank " +
                            std::to_string(bank) + " row " + std::to_string(row) + " column " +
                            std::to_string(column) + " out of range");
  }
  if (len > k.burst_bytes()) {
    throw std::out_of_range("dram::Device backdoor: " + std::to_string(len) +
                            " bytes exceed one burst of " + std::to_string(k.burst_bytes()));
  }
}
}  // namespace

void Device::backdoor_read(std::uint32_t channel, std::uint32_t bank_group, std::uint32_t bank,
                           std::uint32_t row, std::uint32_t column,
                           std::span<std::uint8_t> out) const {
  const Channel& ch = channel_at(channel);
  check_backdoor(config_, bank_group, bank, row, column, out.size());
  const std::uint32_t index = bank_group * config_.banks_per_group + bank;
  const std::uint32_t dir = ch.storage.find(row_key(index, row));
  const std::uint8_t* src = dir == kNoDirectory ? nullptr : ch.storage.burst(dir, column);
  if (src == nullptr) {
    std::fill(out.begin(), out.end(), std::uint8_t{0});
    return;
  }
  std::memcpy(out.data(), src, out.size());
}

void Device::backdoor_write(std::uint32_t channel, std::uint32_t bank_group, std::uint32_t bank,
                            std::uint32_t row, std::uint32_t column,
                            std::span<const std::uint8_t> data) {
  Channel& ch = channel_at(channel);
  check_backdoor(config_, bank_group, bank, row, column, data.size());
  const std::uint32_t index = bank_group * config_.banks_per_group + bank;
  const std::uint32_t dir = ch.storage.find_or_add(row_key(index, row));
  BankState& b = ch.banks[index];
  if (b.open && b.row == row) b.directory = dir;  // keep the open row's cache coherent
  std::memcpy(ch.storage.burst_for_write(dir, column), data.data(), data.size());
}

const ChannelStats& Device::stats(std::uint32_t channel) const {
  return channel_at(channel).stats;
}

ChannelStats Device::total_stats() const {
  ChannelStats total;
  for (const auto& ch : channels_) total += ch->stats;
  return total;
}

std::size_t Device::allocated_rows() const {
  std::size_t n = 0;
  for (const auto& ch : channels_) n += ch->storage.rows();
  return n;
}

std::size_t Device::allocated_bursts() const {
  std::size_t n = 0;
  for (const auto& ch : channels_) n += ch->storage.bursts();
  return n;
}

bool Device::bank_open(std::uint32_t channel, std::uint32_t bank_group, std::uint32_t bank) const {
  return channel_at(channel).banks.at(bank_group * config_.banks_per_group + bank).open;
}

std::uint32_t Device::open_row(std::uint32_t channel, std::uint32_t bank_group,
                               std::uint32_t bank) const {
  return channel_at(channel).banks.at(bank_group * config_.banks_per_group + bank).row;
}

}  // namespace tpuemu::sim::dram
