// SPDX-License-Identifier: Apache-2.0
// HBM request traces and synthetic patterns replayed through one HBM stack (the Verilated RTL
// controller driving the DRAM device model, sim::hbm::HbmSystem), and the statistics of a replay.
// The `tpuemu hbm` command; docs/hbm-trace.md.
//
// Trace format (DRAMSim3's): one request per line, `<hex address> <READ|WRITE> <cycle>`, e.g.
//   0x1f40 READ 12
// Address in hex with or without 0x; operation in any case; cycle a decimal count of DRAM tCK,
// never decreasing. Blank lines and `#` comments (whole line or after the request) are ignored.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpuemu/base/stop.h"
#include "tpuemu/config/hbm_config.h"

namespace tpuemu {

// The largest request cycle a replay accepts: 2^48 - 1 tCK (78 hours at 1 GHz). Every figure of
// a replay is counted in 64 bits: cycles up to the last request plus the drain after it, and
// per-cycle sums (queue occupancy of up to 128 slots, refresh and bus cycles) over up to 128
// channels, at most 2^48 x 2^7 x 2^7 = 2^62. A later cycle could wrap them, so it is refused on
// input (docs/hbm-trace.md "Limits").
inline constexpr std::uint64_t kMaxHbmTraceCycle = (std::uint64_t{1} << 48) - 1;

struct HbmTraceRequest {
  std::uint64_t address = 0;  // byte address as given; the replay aligns it down to the burst
  bool write = false;
  std::uint64_t cycle = 0;  // the earliest tCK at which the request may be offered

  bool operator==(const HbmTraceRequest&) const = default;
};

// Parses trace text. `file` names the source in errors. Every malformed line throws Error
// "file:line: <what is wrong> in '<line>'" (a cycle above kMaxHbmTraceCycle among them); an
// address at or beyond set.capacity_bytes() throws
// "file:line: address 0x... is beyond the capacity 0x... of <set name>".
std::vector<HbmTraceRequest> parse_hbm_trace(std::string_view text, std::string_view file,
                                             const HbmTimingSet& set);
// Reads and parses a trace file (Error "file: cannot read ..." if it cannot be read).
std::vector<HbmTraceRequest> load_hbm_trace(const std::filesystem::path& path,
                                            const HbmTimingSet& set);

// A source of requests in order (a trace, or a generated pattern that is never materialised).
class HbmRequestSource {
 public:
  virtual ~HbmRequestSource() = default;
  // The next request, or nullopt when there are no more.
  virtual std::optional<HbmTraceRequest> next() = 0;
  virtual std::uint64_t size() const = 0;  // total number of requests
  virtual std::string describe() const = 0;
};

std::unique_ptr<HbmRequestSource> hbm_trace_source(std::vector<HbmTraceRequest> requests,
                                                   std::string name);

enum class HbmPattern : std::uint8_t {
  Stream,  // sequential 64-byte bursts from address 0 (wrapping at the capacity)
  Random,  // uniformly random burst addresses over the capacity
  // STREAM's add kernel c[i] = a[i] + b[i]: read a[i], read b[i], write c[i], i = 0, 1, ...; the
  // three arrays of ceil(requests / 3) bursts each start in different banks (docs/hbm-trace.md).
  StreamAdd,
};
std::string_view to_string(HbmPattern pattern);
HbmPattern parse_hbm_pattern(std::string_view name);  // "stream" | "random" | "stream-add", else Error

struct HbmPatternOptions {
  HbmPattern pattern = HbmPattern::Stream;
  std::uint64_t requests = 100'000;
  double read_ratio = 1.0;  // probability that a request is a read (drawn from the seed); not StreamAdd
  std::uint64_t seed = 1;
};
// All requests at cycle 0: they are offered as fast as the controller accepts them. Throws Error
// for zero requests or a read ratio outside [0, 1].
std::unique_ptr<HbmRequestSource> hbm_pattern_source(const HbmTimingSet& set,
                                                     const HbmPatternOptions& options);

// The bytes of one request, one burst; the replay aligns addresses down to it.
inline constexpr std::uint64_t kHbmBurstBytes = 64;

// The 64 bytes a write carries: a function of the burst address and the write's sequence number
// (1, 2, ... over the run), so every write is distinguishable and reads can be checked.
void hbm_write_data(std::uint64_t burst_address, std::uint64_t write_seq,
                    std::uint8_t out[kHbmBurstBytes]);

struct HbmReplayOptions {
  bool closed_page = false;
  unsigned max_in_flight = 256;  // offered and not answered: the controller's 8-bit ids
  // Requests between entering (their cycle has come) and being answered, the ones waiting for
  // their channel included: how far a request to a free channel may pass requests held up by a
  // busy (refreshing, full) one. >= max_in_flight. 512 measured best (docs/hbm-trace.md).
  unsigned window = 512;
  // Give up (Error) when this many cycles pass without a response while requests are pending.
  std::uint64_t stall_limit = 1'000'000;
  std::string source_name;  // for the report; defaults to the source's describe()
  // Skip whole idle refresh periods instead of clocking them (HbmReplayReport::idle_cycles_skipped).
  bool fast_forward_idle = true;
  // A blocking requester instead of one FIFO per channel: requests are offered strictly in source
  // order, and one that its channel cannot take yet holds back every later one.
  bool in_order = false;
  StopToken stop;  // asked every few thousand cycles: the replay ends with Interrupted
};

// ---------------------------------------------------------------------------------------------
// Statistics of a replay (the figures of `tpuemu hbm`)
// ---------------------------------------------------------------------------------------------
struct HbmChannelFigures {
  std::uint64_t reads = 0, writes = 0;
  std::uint64_t row_hits = 0, row_misses = 0, row_conflicts = 0;
  std::uint64_t acts = 0, precharges = 0, refreshes = 0, refresh_cycles = 0, turnarounds = 0;
  std::uint64_t queue_occupancy_sum = 0;  // queued requests summed over every cycle
  std::uint64_t data_bus_busy_cycles = 0;

  std::uint64_t requests() const { return reads + writes; }
  double row_hit_rate() const;                          // hits / (hits + misses + conflicts)
  double mean_queue_occupancy(std::uint64_t cycles) const;
  HbmChannelFigures& operator+=(const HbmChannelFigures& other);
};

struct HbmLatencyFigures {  // in tCK
  std::uint64_t count = 0;
  double mean = 0;
  std::uint64_t p50 = 0, p99 = 0;
};

struct HbmReplayReport {
  // What ran.
  std::string config;       // timing set name
  std::string source;       // trace file or pattern description
  std::string page_policy;  // "open" | "closed"
  std::string address_map;  // the order of the fields, most significant first ("ro-ba-bg-ch-co")
  double tck_ns = 0;
  std::uint32_t burst_bytes = 64;
  double peak_gbps = 0, peak_gbps_per_channel = 0;
  // For the explanation of row misses.
  std::uint64_t tRCD = 0, tRP = 0, tRC = 0, tFAW = 0, tRRD_S = 0, tBURST = 0, banks = 0;
  // The most ACTs a channel can issue per tCK: min(banks / tRC, 4 / tFAW, 1 / tRRD_S).
  double act_rate_bound() const;

  // Outcome.
  std::uint64_t requests = 0, reads = 0, writes = 0;
  std::uint64_t cycles = 0;  // from the first tick until the last response (tCK)
  // Of those, idle cycles fast-forwarded instead of clocked (whole refresh periods with nothing in
  // flight; their refreshes are counted from one measured idle period).
  std::uint64_t idle_cycles_skipped = 0;
  std::vector<HbmChannelFigures> channels;
  HbmChannelFigures total;
  HbmLatencyFigures read_latency;        // controller: request accepted -> data out (RTL counters)
  HbmLatencyFigures read_latency_offer;  // harness: request offered -> data back (incl. lane wait)
  // source: the request's cycle (when it was due) -> data back, all waiting upstream counted
  // (the window, the per-channel queues of the replay, the lanes): the figure a client sees.
  HbmLatencyFigures read_latency_arrival;
  std::uint64_t reads_checked = 0;       // read data compared with what was written (or zeros)

  // Simulation speed.
  double wall_seconds = 0;
  double cpu_seconds = 0;

  double gbps(const HbmChannelFigures& c) const;         // achieved, reads and writes
  double peak_fraction(const HbmChannelFigures& c, bool whole_stack) const;
  double cycles_per_second() const;      // DRAM cycles per wall-clock second
  double cycles_per_cpu_second() const;  // per CPU second of the simulating thread
};

// Replays `source` through a fresh HbmSystem built from `set`. Requests enter in source order once
// their cycle has come, while fewer than options.window are unanswered. Each channel's requests
// are offered in source order, at most one per channel on the controller's lanes at a time (a
// channel takes one request per cycle), with ids recycled and at most options.max_in_flight
// offered and unanswered; so a busy channel holds back only its own requests, up to the window
// (docs/hbm-trace.md, "How a trace is replayed"). Read data are checked against the writes of the
// run (Error on a mismatch). Runs until every request is answered, then calls finish(). Throws
// Error for a fault of the system (a timing violation, a missed refresh deadline) or a stall
// longer than options.stall_limit.
HbmReplayReport replay_hbm(const HbmTimingSet& set, HbmRequestSource& source,
                           const HbmReplayOptions& options = {});

// The text report (several lines, each ending in '\n'), and the same figures as JSON.
std::string format_hbm_report(const HbmReplayReport& report);
nlohmann::json hbm_report_to_json(const HbmReplayReport& report);

// Single-request probes (`tpuemu hbm --probe`): one read alone in the system, to a bank whose row
// is open on it (hit), to a closed bank (miss), to a bank open on another row (conflict), each
// measured from its arrival to its data back, next to the timing set's JEDEC floor of that case:
// CL + tBURST, tRCD + CL + tBURST, tRP + tRCD + CL + tBURST (docs/hbm.md "Pipeline latency").
struct HbmProbeCase {
  std::string name;  // "hit" | "miss" | "conflict"
  std::uint64_t latency = 0;     // tCK, arrival -> data back
  std::uint64_t controller = 0;  // tCK, accepted by the controller -> data out
  std::uint64_t floor = 0;       // tCK, the protocol's minimum
};
struct HbmProbeReport {
  std::string config;
  std::string address_map;
  std::vector<HbmProbeCase> cases;
};
HbmProbeReport probe_hbm(const HbmTimingSet& set);
std::string format_hbm_probe(const HbmProbeReport& report);
nlohmann::json hbm_probe_to_json(const HbmProbeReport& report);

// `tpuemu hbm`: exactly one of trace_file and pattern. Loads the timing set (the loader's error
// for an unknown name), reads the trace or makes the pattern, replays it.
// The most requests a synthetic pattern generates (a larger count is refused, not wrapped).
inline constexpr std::uint64_t kMaxHbmPatternRequests = std::uint64_t{1} << 32;

struct HbmCommandOptions {
  std::string trace_file;
  std::string pattern;  // "stream" | "random" | "stream-add"
  std::uint64_t requests = 100'000;
  std::string config = "hbm2-2000";
  double read_ratio = 1.0;
  std::uint64_t seed = 1;
  std::string page_policy = "open";  // "open" | "closed"
  std::string address_map;           // any order of ro, ba, bg, ch, co; empty: the timing set's
  unsigned window = HbmReplayOptions{}.window;
  bool in_order = false;  // HbmReplayOptions::in_order
  StopToken stop;         // HbmReplayOptions::stop
};
HbmReplayReport run_hbm_command(const HbmCommandOptions& options);
// The command's timing set: options.config with options.address_map (if given) as its map.
HbmTimingSet hbm_command_timing_set(const HbmCommandOptions& options);

}  // namespace tpuemu
