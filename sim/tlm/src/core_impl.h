// SPDX-License-Identifier: Apache-2.0
// The state of the core model (core_model.h), one struct per RTL module, and the wires of one
// cycle. Every cycle is two phases, as in the RTL: combinational (wires from the registers, in
// dependency order: memory responses, fetch, queue heads, semaphore grants, memory port, VMEM
// arbitration, signals, run control) and the clock edge (registers and memories from the wires).
// Member names follow the RTL's signals (_q registers) so each line can be checked against it.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "ring_fifo.h"
#include "tpuemu/spec/contract.h"
#include "tpuemu/tlm/core_model.h"

namespace tpuemu::tlm {

using Words = std::array<std::uint32_t, spec::kInstrWords>;

// What the queue heads' per-cycle wires need of an instruction, decoded once when it is queued
// (it depends on the instruction and the core's sizes only).
struct HeadInfo {
  bool wait_en = false, sig_en = false;
  std::uint32_t wait_sem = 0, wait_cnt = 0, sig_sem = 0;
  bool nop = false, empty = false, bad = false;  // each engine's own sense (issue_model.cpp)
  bool dma_read = false;                          // DMA: a read from HBM
  bool loadw = false, matmul = false;             // MXU
  bool quant = false, add = false;                // vector unit
};

struct QueueEntry {
  Words instr{};
  std::uint32_t pc = 0;
  HeadInfo info;
};

// What the three engines and the fetch unit drive in one cycle.
struct Wires {
  // memory responses and port
  bool rsp_valid = false, wack_valid = false, f_rsp = false, d_rsp = false;
  const std::uint8_t* rsp_data = nullptr;
  bool f_req = false, d_req = false, d_write = false;
  std::uint64_t d_addr = 0;
  bool mem_valid = false, mem_ready = false, mem_write = false;
  bool mem_held_wait = false;  // a request held from an earlier cycle, still not accepted
  bool f_ready = false, d_ready = false;
  // fetch
  bool f_dispatch = false, f_stall = false, f_illegal = false, f_stop = false;
  std::uint32_t f_queue = 0;
  // queue heads and the semaphore bank (waiter 0 DMA, 1 MXU, 2 vector)
  std::array<bool, 3> valid{}, sem_req{}, sem_gnt{}, pop{}, stall_sem{}, err{};
  std::array<std::uint32_t, 3> wait_sem{}, wait_cnt{};
  std::array<bool, 8> sig{};
  std::array<std::uint32_t, 8> sig_sem{};
  // VMEM ports: 0 MXU data, 1 MXU weights, 2 vector, 3 DMA
  std::array<bool, 4> v_req{}, v_we{}, v_gnt{};
  std::array<std::uint32_t, 4> v_addr{};
  std::array<const std::uint8_t*, 4> v_wdata{};
  std::uint32_t v_conflicts = 0;
  // engine status
  std::array<bool, 3> eng_busy{};
  bool dma_stall_mem = false;
  std::uint32_t dma_path_beat = 0;  // bit per spec::DmaPath
  bool mxu_stall_w = false, mxu_stall_vmem = false, mxu_row_in = false, mxu_wload = false, mxu_idle = false;
  bool vec_stall_vmem = false, vec_add_row = false;
  // per-engine decode of the queue heads and internal wires
  struct Dma {
    bool nop = false, is_read = false, empty = false, bad = false, can_start = false, wait_en = false;
    bool wants_write = false, wants_read = false, wbuf_pop = false, issue_read = false, issue_write_direct = false;
    bool rdat_wants_vmem = false, vread_wants = false, smem_we = false, issue_vread = false, rdrain = false;
    bool rsp_keep = false, wack_keep = false;
    std::array<bool, 2> cls_pop{};
  } dma;
  struct Mxu {
    bool loadw = false, matmul = false, nop = false, bad = false, unit_free = false, empty = false, wait_en = false;
    bool busy = false, vw_req = false, vd_req = false, wl_done = false, out_valid = false;
    bool st_can_stream = false, st_issue = false, st_last_issue = false;
  } mxu;
  struct Vec {
    bool quant = false, add = false, bad = false, empty = false, wait_en = false;
    bool row_done = false, last_row = false;
  } vec;
  // trace: done ports (DMA 3, MXU 3, vector 1) and their queue indices
  std::array<std::array<bool, 3>, 3> done{};
  std::array<std::array<std::uint32_t, 3>, 3> done_idx{};
};

// Copies and clears of the wires, once per cycle or more. A plain assignment, memset or memcpy of
// these ~300 bytes compiles to `rep movsq`/`rep stosq`, whose start-up is most of their cost
// (measured: 40 % of the engines' loop's own time); SSE2 moves do not have it. GCC would turn the
// loop back into a memcpy (loop distribution), hence the attribute.
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
inline void copy_wires(Wires& to, const Wires& from) {
  static_assert(std::is_trivially_copyable_v<Wires> && sizeof(Wires) % 8 == 0);
#if defined(__SSE2__)
  auto* out = reinterpret_cast<unsigned char*>(&to);
  const auto* in = reinterpret_cast<const unsigned char*>(&from);
  std::size_t i = 0;
  for (; i + 16 <= sizeof(Wires); i += 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
  }
  if (i != sizeof(Wires)) std::memcpy(out + i, in + i, 8);
#else
  to = from;
#endif
}

inline void clear_wires(Wires& w) {
  static const Wires none{};
  copy_wires(w, none);
}

struct FetchState {
  std::vector<std::uint8_t> buf;  // Depth slots of slot_bytes
  std::uint32_t rd = 0, wr = 0, buffered = 0, inflight = 0, outstanding = 0, discard = 0;
  std::uint32_t pc = 0, req_pc = 0, rsp_pc = 0, req_beat = 0, rsp_beat = 0;
  bool running = false;
};

struct DmaState {
  struct Tag { bool smem = false; std::uint32_t row = 0; };
  struct WriteBeat { std::uint64_t addr = 0; std::uint32_t path = 0; std::vector<std::uint8_t> data; };
  struct Class { std::uint32_t idx = 0; bool sig_en = false; std::uint32_t sig_sem = 0; std::uint64_t units = 0; };
  bool active = false;
  std::uint32_t path = 0;
  std::uint32_t chunk_hbm = 0, cur_hbm = 0, hstride = 0, chunk_local = 0, cur_local = 0, lstride = 0;
  std::uint32_t len = 0, count = 0, row = 0, chunk = 0, sub = 0;
  RingFifo<Tag> rtag;
  RingFifo<std::vector<std::uint8_t>> rdat;
  RingFifo<WriteBeat> wbuf;
  std::array<RingFifo<Class>, 2> cls;
  std::array<std::uint64_t, 2> done_units{};
  bool vread_pending = false;
  std::uint64_t vread_addr = 0;
  std::uint32_t vread_path = 0;
  std::uint32_t wack_pending = 0, wack_discard = 0, rd_discard = 0;
};

struct MxuState {
  struct Tag { std::uint32_t idx = 0, acc = 0; bool accum = false, last = false, sig_en = false; std::uint32_t sig_sem = 0; };

  // weight loader
  std::uint32_t wl_idx = 0, wl_base = 0, wl_issued = 0, wl_pushed = 0, wl_sig_sem = 0;
  bool wl_active = false, wl_loading = false, wl_bank = false, wl_wait_st = false, wl_sig_en = false;
  // row streamer
  std::uint32_t st_idx = 0, st_vmem = 0, st_acc = 0, st_left = 0, st_sig_sem = 0;
  bool st_active = false, st_bank = false, st_accum = false, st_wait_wl = false, st_sig_en = false;
  std::array<std::uint32_t, 2> bank_busy{};
  bool pipe_valid = false, pipe_bank = false;
  Tag pipe_tag;
  RingFifo<Tag> tags;
  // the array: both weight banks (row k, column n at k * dim + n), each also as int16 pairs of
  // rows (k, k+1) per column for the product (rebuilt after a load), and the result rows in
  // flight, a ring of a power of two >= 2*DIM + 4 slots
  std::array<std::vector<std::int8_t>, 2> weights;
  // row k of bank b is physical row (weight_top[b] + k) mod DIM: a push moves the top instead of
  // shifting DIM-1 rows (16 KiB a cycle at DIM 128)
  std::array<std::uint32_t, 2> weight_top{};
  std::array<std::vector<std::int16_t>, 2> weight_pairs;
  std::array<bool, 2> pairs_stale{true, true};
  std::vector<std::int32_t> flight_rows;
  std::vector<std::uint64_t> flight_out;
  std::size_t flight_head = 0, flight_count = 0;
  std::size_t flight_row_len = 0;  // DIM
  std::int32_t* flight_row(std::size_t i) { return flight_rows.data() + i * flight_row_len; }
  bool flight_empty() const { return flight_count == 0; }
  std::uint64_t flight_front_out() const { return flight_out[flight_head]; }
};

struct VecState {
  enum State : std::uint8_t { Idle, Bias, Quant, AddA, AddB, AddW };
  State state = Idle;
  bool relu = false, sig_en = false, bias_en = false;
  std::uint32_t sig_sem = 0, acc = 0, out = 0, rd = 0, b = 0, left = 0, idx = 0;
  std::int32_t scale = 0;
  std::uint32_t shift = 0, bias_req = 0, bias_got = 0;
  std::vector<std::uint8_t> bias;    // 4 VMEM rows of int32 lanes
  std::vector<std::uint8_t> a_data;  // VADD's a row
};

struct RunState {
  bool busy = false, done = false, err = false;
  std::uint32_t err_code = 0, err_pc = 0, deadlock_cnt = 0;
};

// One in-order stream of responses from the memory (read data, or write acknowledgements).
struct PendingResponses {
  std::deque<std::uint64_t> due;
  std::uint64_t last = 0;
};

class CoreModelImpl final : public CoreModel {
 public:
  CoreModelImpl(const CoreShape& shape, BeatPort& port);

  const CoreShape& shape() const override { return shape_; }
  void reset() override;
  std::uint32_t csr_peek(std::uint32_t addr) override;
  void csr_cycle(std::uint32_t addr, bool write, std::uint32_t value) override;
  bool csr_read_advances(std::uint32_t addr) const override { return addr == spec::csr::kSmemData; }
  std::uint64_t run(std::uint64_t cycles, bool stop_when_idle) override;
  void stop() override { stop_ = true; }
  void set_fast_paths(bool on) override { fast_paths_ = on; }
  std::uint64_t cycle() const override { return cycle_; }
  bool busy() const override { return run_.busy; }
  void record_trace(bool on) override;
  std::vector<CoreTraceEvent> take_trace() override;
  std::optional<std::uint64_t> trace_start() const override { return trace_start_; }

 private:
  struct Csr { bool valid = false, write = false; std::uint32_t addr = 0, wdata = 0; };
  // One cycle; returns whether it was quiet: nothing but the counters and countdowns changed, so
  // the cycles up to the next timed event (next_event()) repeat it exactly.
  bool tick(const Csr& csr);
  bool quiet(const Wires& w) const;
  // stream_model.cpp: cycles in which only the MXU streamer moves, stepped alone; returns how
  // many (0 when the core is not in such a state).
  std::uint64_t stream(std::uint64_t max_cycles);
  bool may_stream() const;
  enum class StreamDma { Reads, Writes, Other };  // what the DMA may do while the MXU streams
  StreamDma stream_dma_mode() const;
  std::uint32_t bytes_counter_of(std::uint32_t path) const;  // core_model.cpp: the DMA path's byte counter
  // stream_model.cpp: fetch neither requests nor dispatches, no queue head issues or faults -
  // the wires the streaming and engine loops compute once (w's combinational wires set).
  bool fetch_and_queues_frozen(Wires& w);
  // mxu_model.cpp: the array's datapath
  void build_weight_pairs(bool bank);
  // The weight loader's bank is free: no stream on it ahead, no row of it in the array or entering.
  bool weight_load_can_start() const;
  void row_product(const std::uint8_t* input, bool bank, std::int32_t* out);
  // engine_model.cpp: cycles in which only the DMA engine and the MXU move, with the wires of
  // fetch, the heads and the semaphores computed once; returns how many (0 when not in such a
  // state).
  std::uint64_t step_engines(std::uint64_t max_cycles);
  bool may_step_engines() const;
  bool engines_alone(Wires& w);
  void swap_vmem_read_data();  // the VMEM read data of the cycle that ends become the registers
  void end_cycle(const Wires& w);  // the responses taken, the cycle counted
  std::uint64_t next_event() const;
  void repeat_quiet_cycles(std::uint64_t n);
  void clear_state();  // rst_ni

  // combinational phases (core_model.cpp unless noted)
  void comb_memory_responses(Wires& w);
  void comb_fetch(Wires& w);                 // fetch_model.cpp
  void comb_heads(Wires& w);                 // issue_model.cpp: decode, valid, sem_req, wait_sem/cnt
  void comb_semaphores(Wires& w);
  void comb_issue(Wires& w);                 // issue_model.cpp: pop, stall_sem, err, done at issue
  void comb_dma_port(Wires& w);              // dma_model.cpp
  void comb_memory_port(Wires& w);
  void comb_dma_local(Wires& w);
  void comb_mxu(Wires& w);                   // mxu_model.cpp
  void comb_vec(Wires& w);                   // vec_model.cpp
  void comb_vmem(Wires& w);
  void comb_dma_grants(Wires& w);
  void comb_mxu_grants(Wires& w);
  void comb_vec_grants(Wires& w);

  // clock edge
  void edge_fetch(const Wires& w, bool start, bool clear);
  void edge_dma(const Wires& w, bool clear);
  void edge_mxu(const Wires& w, bool clear);
  void edge_vec(const Wires& w, bool clear);
  void edge_memories(const Wires& w);
  void edge_mxu_result(const Wires& w);      // mxu_model.cpp: the array's output row into ACC
  void write_result_row(const MxuState::Tag& tag, const std::int32_t* out);  // ACC takes a row (tag's rule)
  void edge_dma_smem(const Wires& w);        // dma_model.cpp: returned data into SMEM
  void advance_dma_walker();                 // dma_model.cpp: the next beat of the descriptor
  std::uint64_t fetch_req_addr() const;      // fetch_model.cpp
  bool dma_busy() const;
  void edge_semaphores(const Wires& w, const Csr& csr, bool clear);
  void edge_run(const Wires& w, bool start, bool clear);
  void edge_counters(const Wires& w, bool clear_counters);
  void sample_trace(const Wires& w);

  // helpers
  const QueueEntry& head(std::uint32_t q) const { return queues_[q].head(); }
  HeadInfo decode_head(std::uint32_t queue, const Words& instr) const;  // issue_model.cpp
  std::uint8_t* vmem_row(std::uint32_t row) { return vmem_.data() + std::size_t{row} * dim_; }
  std::int32_t* acc_row(std::uint32_t row) { return acc_.data() + std::size_t{row} * dim_; }
  std::uint8_t* smem_row(std::uint32_t row) { return reinterpret_cast<std::uint8_t*>(smem_.data()) + std::size_t{row} * dim_; }
  std::uint32_t smem_rows() const { return shape_.smem_words / (dim_ / 4); }
  void quant_row(std::uint8_t* out);
  void add_row(std::uint8_t* out);

  CoreShape shape_;
  std::uint32_t dim_;
  BeatPort& port_;
  std::uint64_t cycle_ = 0;
  bool stop_ = false;  // stop(): the memory port ends the run after this edge
  bool fast_paths_ = true;  // off: every cycle is a tick() (set_fast_paths)

  // memories
  std::vector<std::uint8_t> vmem_;
  std::vector<std::int32_t> acc_;
  std::vector<std::uint32_t> smem_;
  // VMEM read data registers per port, and the values the current edge latches (swapped in after
  // the engines' edges, which read the registers of the cycle that ends)
  std::array<std::vector<std::uint8_t>, 4> v_rdata_, v_rdata_next_;
  std::array<bool, 4> v_rvalid_{}, v_rvalid_next_{};
  bool sem_overflow_ = false;

  // control
  std::array<RingFifo<QueueEntry>, 3> queues_;
  std::array<std::uint32_t, 3> q_idx_{};
  std::array<std::uint32_t, spec::kNumSems> sems_{};
  std::array<std::uint64_t, spec::kNumCounters> counters_{};
  std::array<std::uint64_t, spec::kNumCounters> increments_{};  // the last cycle's
  std::uint32_t prog_base_ = 0, smem_addr_ = 0;
  RunState run_;
  FetchState fetch_;
  DmaState dma_;
  MxuState mxu_;
  VecState vec_;

  // memory port: the request accepted in a later cycle (back-pressure), the route FIFO of reads
  // (fetch or DMA) and the responses to come, with the read data copied at acceptance
  struct HeldRequest { bool fetch = false; bool write = false; std::uint64_t addr = 0; std::uint64_t accept = 0; };
  std::optional<HeldRequest> held_;
  std::uint32_t route_depth_ = 0;
  std::deque<bool> route_;  // true: the read belongs to fetch
  PendingResponses reads_, acks_;
  std::vector<std::uint8_t> read_ring_;  // route_depth_ slots of dim_ bytes, in read order
  std::uint64_t reads_issued_ = 0, reads_delivered_ = 0;
  std::vector<std::uint8_t> write_beat_;

  // trace
  bool recording_ = false;
  std::vector<CoreTraceEvent> trace_;
  std::array<std::uint32_t, 3> issued_{};
  std::array<bool, 3> stalled_{};
  std::optional<std::uint64_t> trace_start_;

  // scratch rows of the cycle's combinational data
  std::vector<std::uint8_t> dma_direct_, vec_out_;
  // the wires of the cycle being stepped (tick, the streaming loop) and the engines' loop's
  // frozen ones: members, cleared by clear_wires, not locals that every call zeroes
  Wires cycle_wires_, frozen_wires_;
};

}  // namespace tpuemu::tlm
