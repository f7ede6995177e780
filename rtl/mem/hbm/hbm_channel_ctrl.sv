// SPDX-License-Identifier: Apache-2.0
// One HBM channel (or pseudo channel) of hbm_ctrl: input register, request queue (a read queue
// and a write queue sharing its positions), FR-FCFS scheduler with write batching, bank state,
// refresh, command bus, read-id FIFO, responses and statistics.
//
// Queue: a collapsing queue of QueueDepth positions ordered by age: position 0 holds the oldest
// request, a request is queued at the first free position, and when one issues its column
// command every younger request moves down one position. So "the oldest request of a set" is the
// lowest set bit of a position mask (a priority encoder), and every per-request flag the
// scheduler combines is one QueueDepth-bit vector: valid, write, row hit (hit_q, updated when an
// ACT, PRE or PREA issues), blocked (blk_q: an older queued request is to the same burst; the
// column command waits for it, so reordering never changes what a read returns), and per bank
// the mask of its positions (bmask_q). What else a request carries never moves: it is written
// once, when the request is queued, at a slot taken from a free mask (the entry: bank, id,
// arrival stamp; the write data and mask in a RAM with one write and one registered read port,
// wdata_mem: block RAM); only the slot's index and the burst (row and column, which the queue is
// compared on) move with the position (slot_q, row_q, col_q). Nothing is slots x slots: the per-cycle work is a few QueueDepth-bit operations per bank and two priority
// encoders; a request compares its burst with the queue only when it is queued (for blk_q) and
// when an ACT opens a row (for hit_q), and the oldest of a burst's chain unblocks the next one
// when it issues. At most tim_q.rd_cap reads and tim_q.wr_cap writes are queued (the read and
// write queues: runtime sizes from the timing set, validated on load to fit QueueDepth). A
// request whose queue is full waits in the input register (and holds the port of its channel).
//
// Write batching: the scheduler serves one class at a time, reads or writes (a bus turnaround
// costs RD->WR or WR->RD spacing, so the classes are not interleaved). It serves writes (a
// drain) from the cycle the write queue holds wr_hi writes, or holds writes while no queued read
// can go, until it is down to wr_lo writes while a read can go, or no queued write can go. "Can
// go": not blocked (above); so a read behind a queued write to its burst ends the read phase once
// nothing else can go, and the write is served in the drain that follows (no forwarding:
// ordering).
//
// Each cycle at most one command, in this order of priority:
//   1. refresh (a REF due): PREA as soon as it is legal, then REF; while it is due no ACT and no
//      PRE issue, and a RD/WR issues only if it does not push the PREA later (rd/wr_keeps_prea);
//   2. the oldest ready row hit (RD/WR) of the class served;
//   3. the oldest request of the class served whose row command is legal: ACT if its bank is
//      closed, PRE if another row is open and no request of the class that can go hits it;
//   4. when no request of the class served that can go is a row hit and none has a legal row
//      command: the oldest queued request, if it is a ready row hit of the other class (where
//      reads and writes to the same bursts alternate, a class runs dry after a request or two,
//      and the oldest would otherwise wait for the next switch);
//   5. when every request of the class served that can go is a row hit: the ACT of the oldest
//      request of the other class whose bank is closed (its row is then open when its class is
//      served: a switch does not expose tRCD);
//   6. closed-page policy only: PRE of an open bank that no queued request hits (lowest bank).
// Starvation guard: when the oldest request has waited StarveCycles, only its own commands may
// issue, whatever its class (its PRE even if other requests hit the open row), until it is
// served. Its wait is counted in StampW bits modulo 2^StampW: exact, because once it reaches
// StarveCycles the request is served alone within a few hundred cycles, far below 2^StampW.
//
// Timing of the ports (one cycle = one tCK): a request taken in cycle t is in the input register
// in t+1 and queued at the end of that cycle at the earliest. A command chosen in cycle t is on
// the command bus in cycle t+1 (registered); cmd_row_o carries the row of an ACT and also the
// (open) row a RD/WR is for, so that the device model can check the controller's view of the
// open rows. Read data (rvalid_i) is registered and returned with the id of the oldest
// outstanding RD on rsp_* one cycle later. Writes are posted: bresp_* is high in the cycle after
// the write was queued (a later read of its burst waits for it, so it returns the written data).
`include "tpu_assert.svh"

module hbm_channel_ctrl #(
  parameter int unsigned NumChannels   = 8,
  parameter int unsigned NumPorts      = 1,    // request lanes of hbm_ctrl's burst port
  parameter int unsigned BankGroups    = 4,
  parameter int unsigned BanksPerGroup = 4,
  parameter int unsigned QueueDepth    = hbm_spec_pkg::QueueSlots,  // slots, power of two
  parameter int unsigned RdFifoDepth   = 32,   // power of two, > RDs in flight (CL+tBURST+2)
  parameter int unsigned StarveCycles  = hbm_spec_pkg::StarveCycles,
  parameter int unsigned BaddrW        = 34,   // burst address bits
  localparam int unsigned NumBanks     = BankGroups * BanksPerGroup,
  localparam int unsigned BankW        = $clog2(NumBanks),
  localparam int unsigned BaW          = $clog2(BanksPerGroup),
  localparam int unsigned BgW          = $clog2(BankGroups),
  localparam int unsigned ChW          = (NumChannels > 1) ? $clog2(NumChannels) : 1,
  localparam int unsigned PortW        = (NumPorts > 1) ? $clog2(NumPorts) : 1
) (
  input  logic                          clk_i,  // the channel's clock (hbm_ctrl skips edges, clk_en_o)
  input  logic                          rst_ni,
  output logic                          clk_en_o,  // this cycle's edge can change the channel
  input  logic [ChW-1:0]                ref_slot_i, // refresh slot (hbm_refresh_timer), constant
  input  logic [hbm_spec_pkg::CycW-1:0] now_i,  // cycles since reset, hbm_ctrl's counter
  // configuration: stable from reset on, registered in reset and in the first cycle after it
  input  hbm_spec_pkg::timing_t         timing_i,
  input  logic                          page_policy_i, // 0 open page, 1 closed page
  input  hbm_spec_pkg::amap_t           amap_i,
  // request: lane req_lane_i offers one whose address maps to this channel. Every lane's fields
  // come in, and the channel selects only where it registers them: the multiplexer is the same
  // in hardware, and a simulator copies the wide fields only in a cycle that takes a request.
  input  logic                           req_valid_i,
  output logic                           req_ready_o,
  input  logic [PortW-1:0]               req_lane_i,
  input  logic [NumPorts-1:0]                          req_write_i,
  input  logic [NumPorts-1:0][BaddrW-1:0]              req_baddr_i, // burst address (byte >> OffW)
  input  logic [NumPorts-1:0][hbm_spec_pkg::IdW-1:0]   req_id_i,
  input  logic [NumPorts-1:0][hbm_spec_pkg::DataW-1:0] req_wdata_i,
  input  logic [NumPorts-1:0][hbm_spec_pkg::MaskW-1:0] req_wmask_i,
  // responses
  output logic                           rsp_valid_o,
  output logic [hbm_spec_pkg::IdW-1:0]   rsp_id_o,
  output logic [hbm_spec_pkg::DataW-1:0] rsp_data_o,
  output logic                           bresp_valid_o,
  output logic [hbm_spec_pkg::IdW-1:0]   bresp_id_o,
  // command bus
  output logic                           cmd_valid_o,
  output hbm_spec_pkg::cmd_e             cmd_o,
  output logic [BgW-1:0]                 cmd_bg_o,
  output logic [BaW-1:0]                 cmd_bank_o,
  output logic [hbm_spec_pkg::RowW-1:0]  cmd_row_o,
  output logic [hbm_spec_pkg::ColW-1:0]  cmd_col_o,
  output logic [hbm_spec_pkg::DataW-1:0] cmd_wdata_o,
  output logic [hbm_spec_pkg::MaskW-1:0] cmd_wmask_o,
  input  logic                           rvalid_i,
  input  logic [hbm_spec_pkg::DataW-1:0] rdata_i,
  // statistics
  output hbm_spec_pkg::stats_t            stats_o
);
  localparam int unsigned N      = QueueDepth;
  localparam int unsigned PosW   = $clog2(N);
  localparam int unsigned OccW   = $clog2(N + 2);
  localparam int unsigned CntW   = $clog2(N + 1);
  localparam int unsigned OutW   = 16;
  localparam int unsigned StampW = 16;

  if (N < 2 || (1 << PosW) != N) begin : g_depth_check
    $fatal(1, "hbm_channel_ctrl: QueueDepth must be a power of two >= 2");
  end
  if (StarveCycles >= (1 << (StampW - 1))) begin : g_starve_check
    $fatal(1, "hbm_channel_ctrl: StarveCycles must be below 2^(StampW-1)");
  end

  // Position masks: bit i of a lowest-set-bit one-hot mask is set for positions whose index has
  // bit k set, so the index of a one-hot vector is PosW reductions (the priority encoder).
  function automatic logic [N-1:0] index_bits(int unsigned k);
    for (int unsigned i = 0; i < N; i++) begin
      index_bits[i] = ((i >> k) & 1) != 0;
    end
  endfunction

  function automatic logic [PosW-1:0] onehot_index(logic [N-1:0] onehot);
    for (int unsigned k = 0; k < PosW; k++) begin
      onehot_index[k] = (onehot & index_bits(k)) != '0;
    end
  endfunction

  // The lowest set bit alone (the oldest position of a set).
  function automatic logic [N-1:0] lowest(logic [N-1:0] v);
    lowest = v & (~v + N'(1));
  endfunction

  // A position vector after the request at position p left: the younger ones move down by one.
  function automatic logic [N-1:0] collapse(logic [N-1:0] v, logic [N-1:0] below_p);
    collapse = (v & below_p) | ((v >> 1) & ~below_p);
  endfunction

  // ---------------------------------------------------------------------------------------------
  // Configuration and time, registered on the channel's clock
  // ---------------------------------------------------------------------------------------------
  // hbm_ctrl stops this channel's clock while the channel is quiet (clk_en_o low), so that a
  // simulator evaluates none of its logic then. That holds only if the logic reads nothing that
  // changes on the controller's clock: the configuration is loaded here, and the time is the
  // channel's own copy now_q (cycles since reset, registered on the channel's clock). now_q is
  // exact in every cycle that follows a clocked one; in the cycle that ends a quiet stretch it is
  // late, but then nothing is queued, held, due or in progress (the quiet condition), so nothing
  // reads it. Only the refresh interval needs the true time in every cycle (now_i).
  hbm_spec_pkg::tderiv_t   tim_q;
  hbm_spec_pkg::amap_t     amap_q;
  hbm_spec_pkg::amap_pos_t amap_pos_q;
  logic                    page_policy_q;
  logic                    en_q;   // configuration loaded: from the first cycle after reset on
  logic [hbm_spec_pkg::CycW-1:0] now_q;

  // The distances are the contract's (spec/tpuemu.json "derived_timings", generated as
  // hbm_spec_pkg::derive_timings): the DRAM checker and the TLM timing model compute the same
  // table. The channel takes the column and precharge spacings; the parts those are made of stay
  // out.
  /* verilator lint_off UNUSEDSIGNAL */
  function automatic hbm_spec_pkg::tderiv_t channel_timing(hbm_spec_pkg::timing_t timing);
    hbm_spec_pkg::derived_t tdist;
    hbm_spec_pkg::tderiv_t  tim_d;
    tdist = hbm_spec_pkg::derive_timings(timing);
    tim_d.t_rcd   = timing.t_rcd;
    tim_d.t_rp    = timing.t_rp;
    tim_d.t_ras   = timing.t_ras;
    tim_d.t_rc    = timing.t_rc;
    tim_d.t_rrd_s = timing.t_rrd_s;
    tim_d.t_rrd_l = timing.t_rrd_l;
    tim_d.t_faw   = timing.t_faw;
    tim_d.t_rfc   = timing.t_rfc;
    tim_d.t_refi  = timing.t_refi;
    tim_d.ccd_s   = tdist.ccd_s;
    tim_d.ccd_l   = tdist.ccd_l;
    tim_d.rd2wr_s = tdist.rd2wr_s;
    tim_d.rd2wr_l = tdist.rd2wr_l;
    tim_d.wr2rd_s = tdist.wr2rd_s;
    tim_d.wr2rd_l = tdist.wr2rd_l;
    tim_d.rd2pre  = timing.t_rtp;
    tim_d.wr2pre  = tdist.wr2pre;
    tim_d.rd_cap  = timing.read_queue;
    tim_d.wr_cap  = timing.write_queue;
    tim_d.wr_hi   = timing.write_high;
    tim_d.wr_lo   = timing.write_low;
    channel_timing = tim_d;
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  // Loaded while en_q holds the channel off (in reset and in the first cycle after it) and kept:
  // they need no reset, and a simulator does not recompute them every cycle.
  always_ff @(posedge clk_i) begin
    if (!en_q) begin
      tim_q         <= channel_timing(timing_i);
      amap_q        <= amap_i;
      amap_pos_q    <= hbm_spec_pkg::amap_positions(amap_i);
      page_policy_q <= page_policy_i;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      en_q  <= 1'b0;
      now_q <= '0;
    end else begin
      en_q  <= 1'b1;
      now_q <= now_i + hbm_spec_pkg::CycW'(1);
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Queue storage
  // ---------------------------------------------------------------------------------------------
  logic [N-1:0]               vld_q, vld_d, wr_q, wr_d, hit_q, hit_d, miss_q, miss_d;
  logic [N-1:0]               conf_q, conf_d, blk_q, blk_d;
  logic [NumBanks-1:0][N-1:0] bmask_q;   // positions queued per bank
  logic [NumBanks-1:0][N-1:0] bmask_d;
  logic [NumBanks-1:0]        bocc;      // banks with queued requests
  logic [CntW-1:0]            rcnt_q, wcnt_q;  // reads and writes queued
  logic [N-1:0][PosW-1:0]     slot_q, slot_d;  // the slot of each position
  logic [N-1:0]               sfree_q;   // free slots
  // The burst of each position (row and column), moving with it: the comparisons with the queue
  // read them straight, not through the slot index (a QueueDepth:1 multiplexer per position).
  logic [N-1:0][hbm_spec_pkg::RowW-1:0] row_q;
  logic [N-1:0][hbm_spec_pkg::ColW-1:0] col_q;
  // What a queued request carries, at its slot: plain arrays, since Yosys reads neither a member
  // of an array element nor a named assignment pattern (docs/fpga.md).
  logic [BankW-1:0]              bank_s  [N];
  logic [hbm_spec_pkg::IdW-1:0]  id_s    [N];
  logic [StampW-1:0]             stamp_s [N];  // low bits of the cycle it was queued
  logic [hbm_spec_pkg::DataW-1:0] wdata_mem [N];
  logic [hbm_spec_pkg::MaskW-1:0] wmask_mem [N];

  always_comb begin
    for (int unsigned b = 0; b < NumBanks; b++) begin
      bocc[b] = bmask_q[b] != '0;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Input register and address decode
  // ---------------------------------------------------------------------------------------------
  logic              ins, take;
  logic              in_vld_q, in_write_q;
  logic [BaddrW-1:0] in_baddr_q;
  logic [hbm_spec_pkg::IdW-1:0]    in_id_q;
  logic [hbm_spec_pkg::DataW-1:0]  in_wdata_q;
  logic [hbm_spec_pkg::MaskW-1:0]  in_wmask_q;
  logic [BgW-1:0]    in_bg;
  logic [BaW-1:0]    in_ba;
  logic [BankW-1:0]  in_bank;
  logic [hbm_spec_pkg::RowW-1:0]   in_row;
  logic [hbm_spec_pkg::ColW-1:0]   in_col;
  logic [ChW-1:0]    unused_in_ch;

  // A request is taken when the input register is free or is queued this cycle; it is queued
  // when its queue (read or write) has room.
  logic in_room;
  assign in_room     = in_write_q ? (hbm_spec_pkg::TimW'(wcnt_q) < tim_q.wr_cap)
                                  : (hbm_spec_pkg::TimW'(rcnt_q) < tim_q.rd_cap);
  assign ins         = in_vld_q && in_room && (vld_q != '1);
  assign req_ready_o = en_q && (!in_vld_q || ins);
  assign take        = req_valid_i && req_ready_o;
  assign in_bank     = {in_bg, in_ba};

  hbm_addr_map #(
    .NumChannels   (NumChannels),
    .BankGroups    (BankGroups),
    .BanksPerGroup (BanksPerGroup),
    .BaddrW        (BaddrW)
  ) u_map (
    .amap_i  (amap_q),
    .pos_i   (amap_pos_q),
    .baddr_i (in_baddr_q),
    .ch_o    (unused_in_ch),
    .bg_o    (in_bg),
    .ba_o    (in_ba),
    .row_o   (in_row),
    .col_o   (in_col)
  );

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      in_vld_q <= 1'b0;
    end else if (take) begin
      in_vld_q <= 1'b1;
    end else if (ins) begin
      in_vld_q <= 1'b0;
    end
  end

  // Write data is stored only for writes (reads leave the registers alone).
  always_ff @(posedge clk_i) begin
    if (take) begin
      in_write_q <= req_write_i[req_lane_i];
      in_baddr_q <= req_baddr_i[req_lane_i];
      in_id_q    <= req_id_i[req_lane_i];
    end
    if (take && req_write_i[req_lane_i]) begin
      in_wdata_q <= req_wdata_i[req_lane_i];
      in_wmask_q <= req_wmask_i[req_lane_i];
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Bank state, refresh timer, read-id FIFO
  // ---------------------------------------------------------------------------------------------
  logic                  iss_valid;
  hbm_spec_pkg::cmd_e                  iss_cmd;
  logic [BankW-1:0]      iss_bank;
  logic [hbm_spec_pkg::RowW-1:0]       iss_row;
  logic [hbm_spec_pkg::ColW-1:0]       iss_cola;
  logic [PosW-1:0]       iss_pos;
  logic                  iss_for_req;   // PRE on behalf of a queued request (a row conflict)

  logic [NumBanks-1:0]   act_ok, pre_ok, col_ok;
  logic [BankGroups-1:0] rd_ok, wr_ok;
  logic                  prea_ok, ref_ok, rd_keeps_prea, wr_keeps_prea, busy, in_row_open;
  logic                  any_open;

  hbm_bank_state #(
    .BankGroups    (BankGroups),
    .BanksPerGroup (BanksPerGroup)
  ) u_bank_state (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .now_i           (now_q),
    .tim_i           (tim_q),
    .iss_valid_i     (iss_valid),
    .iss_cmd_i       (iss_cmd),
    .iss_bank_i      (iss_bank),
    .iss_row_i       (iss_row),
    .need_i          (bocc),
    .need_open_i     (page_policy_q),
    .look_bank_i     (in_bank),
    .look_row_i      (in_row),
    .look_hit_o      (in_row_open),
    .act_ok_o        (act_ok),
    .pre_ok_o        (pre_ok),
    .col_ok_o        (col_ok),
    .rd_ok_o         (rd_ok),
    .wr_ok_o         (wr_ok),
    .prea_ok_o       (prea_ok),
    .ref_ok_o        (ref_ok),
    .rd_keeps_prea_o (rd_keeps_prea),
    .wr_keeps_prea_o (wr_keeps_prea),
    .busy_o          (busy),
    .any_open_o      (any_open)
  );

  logic iss_act, iss_pre, iss_prea, iss_rd, iss_wr, iss_ref, iss_col;
  assign iss_act  = iss_valid && (iss_cmd == hbm_spec_pkg::CmdAct);
  assign iss_pre  = iss_valid && (iss_cmd == hbm_spec_pkg::CmdPre);
  assign iss_prea = iss_valid && (iss_cmd == hbm_spec_pkg::CmdPrea);
  assign iss_rd   = iss_valid && (iss_cmd == hbm_spec_pkg::CmdRd);
  assign iss_wr   = iss_valid && (iss_cmd == hbm_spec_pkg::CmdWr);
  assign iss_ref  = iss_valid && (iss_cmd == hbm_spec_pkg::CmdRef);
  assign iss_col  = iss_rd || iss_wr;

  logic ref_due, ref_idle;
  hbm_refresh_timer #(
    .NumChannels (NumChannels)
  ) u_refresh (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .ref_slot_i (ref_slot_i),
    .en_i       (en_q),
    .now_i      (now_i),
    .t_refi_i   (tim_q.t_refi),
    .ref_done_i (iss_ref),
    .due_o      (ref_due),
    .idle_o     (ref_idle)
  );

  logic [PosW-1:0] iss_slot;
  assign iss_slot = slot_q[iss_pos];

  logic                         rdf_full;
  logic [hbm_spec_pkg::IdW-1:0]               rdf_head;
  logic                         unused_rdf_empty;
  logic [$clog2(RdFifoDepth):0] unused_rdf_count;
  sync_fifo #(
    .Width (hbm_spec_pkg::IdW),
    .Depth (RdFifoDepth)
  ) u_rd_ids (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .clear_i (1'b0),
    .push_i  (iss_rd),
    .data_i  (id_s[iss_slot]),
    .pop_i   (rvalid_i),
    .data_o  (rdf_head),
    .empty_o (unused_rdf_empty),
    .full_o  (rdf_full),
    .count_o (unused_rdf_count)
  );

  // ---------------------------------------------------------------------------------------------
  // Scheduler
  // ---------------------------------------------------------------------------------------------
  logic                dir_q;       // direction of the last column command (1: write)
  logic                drain_q, drain;  // serving writes (a drain) in the last cycle, this cycle
  logic                rd_go, wr_go;    // some queued read / write not blocked
  logic [N-1:0]        cls_m;       // the positions of the class served (all when starving)
  logic [NumBanks-1:0] has_hit;     // some queued request hits the open row of the bank
  logic [NumBanks-1:0] cls_hit;     // some request of the class served that can go hits it
  logic [N-1:0]        col_o;       // ready row hits of the other class (item 4: the oldest only)
  logic                starve;
  logic [N-1:0]        oldest_oh;
  logic [N-1:0]        rd_m, wr_m, act_m, pre_m;
  logic [N-1:0]        col_c, act_c, pre_c, act_o, row_pool, pick;
  logic [NumBanks-1:0] auto_c, auto_pick;
  logic [BankW-1:0]    auto_idx;
  logic                rd_allow, wr_allow;
  logic [StampW-1:0]   oldest_wait;

  // The oldest request is at position 0.
  assign oldest_oh   = N'(vld_q[0]);
  assign oldest_wait = StampW'(now_q) - stamp_s[slot_q[0]];
  assign starve      = vld_q[0] && (oldest_wait >= StampW'(StarveCycles));
  assign rd_allow    = !rdf_full && (!ref_due || rd_keeps_prea);
  assign wr_allow    = !ref_due || wr_keeps_prea;
  assign rd_go       = (vld_q & ~wr_q & ~blk_q) != '0;
  assign wr_go       = (vld_q & wr_q & ~blk_q) != '0;

  // The class served (write batching, see the header).
  always_comb begin
    if (!drain_q) begin
      drain = wr_go && ((hbm_spec_pkg::TimW'(wcnt_q) >= tim_q.wr_hi) || !rd_go);
    end else begin
      drain = wr_go && !(rd_go && (hbm_spec_pkg::TimW'(wcnt_q) <= tim_q.wr_lo));
    end
    cls_m = starve ? '1 : (drain ? wr_q : ~wr_q);
  end

  // Candidates, bank by bank (banks without queued requests are skipped).
  always_comb begin
    has_hit = '0;
    cls_hit = '0;
    rd_m    = '0;
    wr_m    = '0;
    act_m   = '0;
    pre_m   = '0;
    for (int unsigned b = 0; b < NumBanks; b++) begin
      if (bocc[b]) begin
        if ((bmask_q[b] & hit_q) != '0) begin
          has_hit[b] = 1'b1;
        end
        if ((bmask_q[b] & hit_q & cls_m & ~blk_q) != '0) begin
          cls_hit[b] = 1'b1;
        end
        if (col_ok[b]) begin
          if (rd_ok[b / BanksPerGroup]) begin
            rd_m |= bmask_q[b] & hit_q;
          end
          if (wr_ok[b / BanksPerGroup]) begin
            wr_m |= bmask_q[b] & hit_q;
          end
        end
        if (act_ok[b]) begin
          act_m |= bmask_q[b];
        end
        // A PRE for the class served may close a row that only the other class, or requests held
        // by a dependency, hit (they open it again later): otherwise a drain could wait on a read
        // that waits on the drain.
        if (pre_ok[b] && (!cls_hit[b] || starve)) begin
          pre_m |= bmask_q[b] & ~hit_q;
        end
      end
    end
  end

  always_comb begin
    col_c = cls_m & ~blk_q & ((rd_allow ? (rd_m & ~wr_q) : '0) | (wr_allow ? (wr_m & wr_q) : '0));
    col_o = ~cls_m & ~blk_q & ((rd_allow ? (rd_m & ~wr_q) : '0) | (wr_allow ? (wr_m & wr_q) : '0));
    act_c = ref_due ? '0 : (act_m & cls_m);
    pre_c = ref_due ? '0 : (pre_m & cls_m);
    // Only while every request of the class served that can go is a row hit: an ACT taken
    // from a class that still opens rows would spend its tFAW budget (and be closed again).
    act_o = (ref_due || starve || ((vld_q & cls_m & ~blk_q & ~hit_q) != '0)) ? '0 : (act_m & ~cls_m);
    if (starve) begin
      col_c &= oldest_oh;
      act_c &= oldest_oh;
      pre_c &= oldest_oh;
    end
    row_pool = act_c | pre_c;
    if (col_c == '0 && row_pool == '0 && cls_hit == '0) begin
      col_c = col_o & oldest_oh;
    end
    if (col_c == '0 && row_pool == '0) begin
      row_pool = act_o;
    end
    auto_c = (page_policy_q && !ref_due) ? (pre_ok & ~has_hit) : '0;
    // The oldest of the pool that is used: its lowest position.
    pick      = lowest((col_c != '0) ? col_c : row_pool);
    auto_pick = auto_c & (~auto_c + NumBanks'(1));
  end

  always_comb begin
    auto_idx = '0;
    for (int unsigned b = 0; b < NumBanks; b++) begin
      if (auto_pick[b]) begin
        auto_idx = BankW'(b);
      end
    end
  end

  // The command of this cycle.
  always_comb begin
    iss_valid   = 1'b0;
    iss_cmd     = hbm_spec_pkg::CmdNop;
    iss_bank    = '0;
    iss_row     = '0;
    iss_cola    = '0;
    iss_pos     = onehot_index(pick);
    iss_for_req = 1'b0;
    if (!en_q) begin
      iss_valid = 1'b0;
    end else if (ref_due && prea_ok) begin
      iss_valid = 1'b1;
      iss_cmd   = hbm_spec_pkg::CmdPrea;
    end else if (ref_due && ref_ok) begin
      iss_valid = 1'b1;
      iss_cmd   = hbm_spec_pkg::CmdRef;
    end else if (col_c != '0) begin
      iss_valid = 1'b1;
      iss_cmd   = ((wr_q & pick) != '0) ? hbm_spec_pkg::CmdWr : hbm_spec_pkg::CmdRd;
      iss_bank  = bank_s[iss_slot];
      iss_row   = row_q[iss_pos];
      iss_cola  = col_q[iss_pos];
    end else if (row_pool != '0) begin
      iss_valid   = 1'b1;
      iss_cmd     = (((act_c | act_o) & pick) != '0) ? hbm_spec_pkg::CmdAct : hbm_spec_pkg::CmdPre;
      iss_bank    = bank_s[iss_slot];
      iss_row     = row_q[iss_pos];
      iss_for_req = 1'b1;
    end else if (auto_c != '0) begin
      iss_valid = 1'b1;
      iss_cmd   = hbm_spec_pkg::CmdPre;
      iss_bank  = auto_idx;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Queue insert and state updates
  // ---------------------------------------------------------------------------------------------
  logic [N-1:0]     iss_oh, below_iss, ins_oh, same_burst, unblock;
  logic [PosW-1:0]  ins_pos, ins_slot;
  logic             ins_hit, ins_blk;

  assign iss_oh    = N'(1) << iss_pos;
  assign below_iss = iss_oh - N'(1);
  // The request is queued behind the others, one position lower when one leaves this cycle.
  assign ins_pos   = PosW'(rcnt_q + wcnt_q - CntW'(iss_col));
  assign ins_oh    = N'(1) << ins_pos;
  assign ins_slot  = onehot_index(lowest(sfree_q));

  // Row-hit state and hazards of the request being queued, including this cycle's command.
  // Every queued request to the same burst is a predecessor (reads included: a chain to one
  // burst issues strictly in order); the one leaving this cycle no longer counts.
  always_comb begin
    ins_hit = in_row_open;
    if (iss_act && (iss_bank == in_bank)) begin
      ins_hit = (iss_row == in_row);
    end
    if ((iss_pre && (iss_bank == in_bank)) || iss_prea) begin
      ins_hit = 1'b0;
    end
    same_burst = '0;
    if (in_vld_q && bocc[in_bank]) begin
      for (int unsigned j = 0; j < N; j++) begin
        if (bmask_q[in_bank][j] && (row_q[j] == in_row) && (col_q[j] == in_col)) begin
          same_burst[j] = 1'b1;
        end
      end
    end
    ins_blk = (same_burst & ~(iss_col ? iss_oh : '0)) != '0;
  end

  // The request that leaves may head a chain of requests to its burst: the next one goes free.
  always_comb begin
    unblock = '0;
    if (iss_col && ((blk_q & bmask_q[iss_bank]) != '0)) begin
      for (int unsigned j = 0; j < N; j++) begin
        if (blk_q[j] && bmask_q[iss_bank][j] && (row_q[j] == iss_row) &&
            (col_q[j] == iss_cola)) begin
          unblock[j] = 1'b1;
        end
      end
      unblock = lowest(unblock);
    end
  end

  always_comb begin
    vld_d   = vld_q;
    wr_d    = wr_q;
    hit_d   = hit_q;
    miss_d  = miss_q;
    conf_d  = conf_q;
    blk_d   = blk_q;
    bmask_d = bmask_q;
    slot_d  = slot_q;
    if (iss_act) begin
      for (int unsigned j = 0; j < N; j++) begin
        if (bmask_q[iss_bank][j] && (row_q[j] == iss_row)) begin
          hit_d[j] = 1'b1;
        end
      end
      miss_d |= iss_oh;
    end
    if (iss_pre) begin
      hit_d &= ~bmask_q[iss_bank];
      // Closed page: the row would have been closed anyway, so the request counts as a miss.
      if (iss_for_req && !page_policy_q) begin
        conf_d |= iss_oh;
      end
    end
    if (iss_prea) begin
      hit_d = '0;
    end
    if (iss_col) begin
      blk_d  = collapse(blk_q & ~unblock, below_iss);
      vld_d  = collapse(vld_q, below_iss);
      wr_d   = collapse(wr_q, below_iss);
      hit_d  = collapse(hit_q, below_iss);
      miss_d = collapse(miss_q, below_iss);
      conf_d = collapse(conf_q, below_iss);
      for (int unsigned b = 0; b < NumBanks; b++) begin
        bmask_d[b] = collapse(bmask_q[b], below_iss);
      end
      // The slot indices move down as one wide vector.
      slot_d = (slot_q & ~({(N * PosW){1'b1}} << (32'(iss_pos) * PosW))) |
               ((slot_q >> PosW) & ({(N * PosW){1'b1}} << (32'(iss_pos) * PosW)));
    end
    if (ins) begin
      vld_d              |= ins_oh;
      bmask_d[in_bank]   |= ins_oh;
      wr_d[ins_pos]      = in_write_q;
      hit_d[ins_pos]     = ins_hit;
      miss_d[ins_pos]    = 1'b0;
      conf_d[ins_pos]    = 1'b0;
      blk_d[ins_pos]     = ins_blk;
      slot_d[ins_pos]    = ins_slot;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      vld_q   <= '0;
      wr_q    <= '0;
      hit_q   <= '0;
      miss_q  <= '0;
      conf_q  <= '0;
      blk_q   <= '0;
      bmask_q <= '0;
      slot_q  <= '0;
      sfree_q <= '1;
    end else begin
      vld_q   <= vld_d;
      wr_q    <= wr_d;
      hit_q   <= hit_d;
      miss_q  <= miss_d;
      conf_q  <= conf_d;
      blk_q   <= blk_d;
      bmask_q <= bmask_d;
      slot_q  <= slot_d;
      if (iss_col) begin
        sfree_q[iss_slot] <= 1'b1;
      end
      if (ins) begin
        sfree_q[ins_slot] <= 1'b0;
      end
    end
  end

  // A request is written once, at its slot. The write data: one write port (queueing), one
  // registered read port (the WR).
  // The bursts move down with their positions (as slot_q), and the queued request's goes in at
  // its position (the later assignment wins). They need no reset: valid flags qualify them.
  always_ff @(posedge clk_i) begin
    if (iss_col) begin
      row_q <= (row_q & ~({(N * hbm_spec_pkg::RowW){1'b1}} << (32'(iss_pos) * hbm_spec_pkg::RowW))) |
               ((row_q >> hbm_spec_pkg::RowW) &
                ({(N * hbm_spec_pkg::RowW){1'b1}} << (32'(iss_pos) * hbm_spec_pkg::RowW)));
      col_q <= (col_q & ~({(N * hbm_spec_pkg::ColW){1'b1}} << (32'(iss_pos) * hbm_spec_pkg::ColW))) |
               ((col_q >> hbm_spec_pkg::ColW) &
                ({(N * hbm_spec_pkg::ColW){1'b1}} << (32'(iss_pos) * hbm_spec_pkg::ColW)));
    end
    if (ins) begin
      row_q[ins_pos] <= in_row;
      col_q[ins_pos] <= in_col;
    end
  end

  always_ff @(posedge clk_i) begin
    if (ins) begin
      bank_s[ins_slot]  <= in_bank;
      id_s[ins_slot]    <= in_id_q;
      stamp_s[ins_slot] <= StampW'(now_q);
    end
  end

  always_ff @(posedge clk_i) begin
    if (ins && in_write_q) begin
      wdata_mem[ins_slot] <= in_wdata_q;
      wmask_mem[ins_slot] <= in_wmask_q;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      dir_q   <= 1'b0;
      drain_q <= 1'b0;
      rcnt_q  <= '0;
      wcnt_q  <= '0;
    end else begin
      if (iss_col) begin
        dir_q <= iss_wr;
      end
      drain_q <= drain;
      rcnt_q  <= rcnt_q + CntW'(ins && !in_write_q) - CntW'(iss_rd);
      wcnt_q  <= wcnt_q + CntW'(ins && in_write_q) - CntW'(iss_wr);
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Command bus and responses
  // ---------------------------------------------------------------------------------------------
  logic             cmd_valid_q, rsp_valid_q, bresp_valid_q;
  hbm_spec_pkg::cmd_e             cmd_q;
  logic [BankW-1:0] cmd_bank_q;
  logic [hbm_spec_pkg::RowW-1:0]  cmd_row_q;
  logic [hbm_spec_pkg::ColW-1:0]  cmd_col_q;
  logic [hbm_spec_pkg::DataW-1:0] cmd_wdata_q, rsp_data_q;
  logic [hbm_spec_pkg::MaskW-1:0] cmd_wmask_q;
  logic [hbm_spec_pkg::IdW-1:0]   rsp_id_q, bresp_id_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cmd_valid_q   <= 1'b0;
      cmd_q         <= hbm_spec_pkg::CmdNop;
      rsp_valid_q   <= 1'b0;
      bresp_valid_q <= 1'b0;
    end else begin
      cmd_valid_q   <= iss_valid;
      cmd_q         <= iss_cmd;
      rsp_valid_q   <= rvalid_i;
      bresp_valid_q <= ins && in_write_q;
    end
  end

  always_ff @(posedge clk_i) begin
    if (iss_valid) begin
      cmd_bank_q <= iss_bank;
      cmd_row_q  <= iss_row;
      cmd_col_q  <= iss_cola;
    end
    if (iss_wr) begin
      cmd_wdata_q <= wdata_mem[iss_slot];
      cmd_wmask_q <= wmask_mem[iss_slot];
    end
    if (ins && in_write_q) begin
      bresp_id_q <= in_id_q;
    end
    if (rvalid_i) begin
      rsp_id_q   <= rdf_head;
      rsp_data_q <= rdata_i;
    end
  end

  assign cmd_valid_o   = cmd_valid_q;
  assign cmd_o         = cmd_q;
  assign cmd_bg_o      = cmd_bank_q[BankW-1:BaW];
  assign cmd_bank_o    = cmd_bank_q[BaW-1:0];
  assign cmd_row_o     = cmd_row_q;
  assign cmd_col_o     = cmd_col_q;
  assign cmd_wdata_o   = cmd_wdata_q;
  assign cmd_wmask_o   = cmd_wmask_q;
  assign rsp_valid_o   = rsp_valid_q;
  assign rsp_id_o      = rsp_id_q;
  assign rsp_data_o    = rsp_data_q;
  assign bresp_valid_o = bresp_valid_q;
  assign bresp_id_o    = bresp_id_q;

  // ---------------------------------------------------------------------------------------------
  // Statistics
  // ---------------------------------------------------------------------------------------------
  // Unpacked: Verilator then updates only the counters that change, not a copy of all of them.
  logic [hbm_spec_pkg::StatW-1:0] cnt_q [hbm_spec_pkg::NumStats];
  logic [OccW-1:0] occ_q;      // requests in the input register and the queue
  logic [OutW-1:0] rd_out_q;   // reads taken and not yet answered on rsp_valid_o

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int unsigned k = 0; k < hbm_spec_pkg::NumStats; k++) begin
        cnt_q[k] <= '0;
      end
      occ_q    <= '0;
      rd_out_q <= '0;
    end else begin
      occ_q    <= occ_q + OccW'(take) - OccW'(iss_col);
      rd_out_q <= rd_out_q + OutW'(take && !req_write_i[req_lane_i]) - OutW'(rsp_valid_q);
      if (iss_col) begin
        if (iss_wr) begin
          cnt_q[hbm_spec_pkg::StatWrites] <= cnt_q[hbm_spec_pkg::StatWrites] + hbm_spec_pkg::StatW'(1);
        end else begin
          cnt_q[hbm_spec_pkg::StatReads] <= cnt_q[hbm_spec_pkg::StatReads] + hbm_spec_pkg::StatW'(1);
        end
        if (conf_q[iss_pos]) begin
          cnt_q[hbm_spec_pkg::StatRowConflicts] <= cnt_q[hbm_spec_pkg::StatRowConflicts] + hbm_spec_pkg::StatW'(1);
        end else if (miss_q[iss_pos]) begin
          cnt_q[hbm_spec_pkg::StatRowMisses] <= cnt_q[hbm_spec_pkg::StatRowMisses] + hbm_spec_pkg::StatW'(1);
        end else begin
          cnt_q[hbm_spec_pkg::StatRowHits] <= cnt_q[hbm_spec_pkg::StatRowHits] + hbm_spec_pkg::StatW'(1);
        end
        if (iss_wr != dir_q) begin
          cnt_q[hbm_spec_pkg::StatTurnarounds] <= cnt_q[hbm_spec_pkg::StatTurnarounds] + hbm_spec_pkg::StatW'(1);
        end
      end
      if (ins && in_write_q) begin
        cnt_q[hbm_spec_pkg::StatWritesQueued] <= cnt_q[hbm_spec_pkg::StatWritesQueued] + hbm_spec_pkg::StatW'(1);
      end
      if (iss_act) begin
        cnt_q[hbm_spec_pkg::StatActs] <= cnt_q[hbm_spec_pkg::StatActs] + hbm_spec_pkg::StatW'(1);
      end
      if (iss_pre) begin
        cnt_q[hbm_spec_pkg::StatPres] <= cnt_q[hbm_spec_pkg::StatPres] + hbm_spec_pkg::StatW'(1);
      end
      if (iss_prea) begin
        cnt_q[hbm_spec_pkg::StatPreas] <= cnt_q[hbm_spec_pkg::StatPreas] + hbm_spec_pkg::StatW'(1);
      end
      if (iss_ref) begin
        cnt_q[hbm_spec_pkg::StatRefs] <= cnt_q[hbm_spec_pkg::StatRefs] + hbm_spec_pkg::StatW'(1);
      end
      if (ref_due || busy) begin
        cnt_q[hbm_spec_pkg::StatRefCycles] <= cnt_q[hbm_spec_pkg::StatRefCycles] + hbm_spec_pkg::StatW'(1);
      end
      cnt_q[hbm_spec_pkg::StatOccSum] <= cnt_q[hbm_spec_pkg::StatOccSum] + hbm_spec_pkg::StatW'(occ_q);
      cnt_q[hbm_spec_pkg::StatRdLatSum] <= cnt_q[hbm_spec_pkg::StatRdLatSum] + hbm_spec_pkg::StatW'(rd_out_q);
    end
  end

  // The channel is quiet when its next clock edge would change nothing: no request offered or
  // held, nothing queued, in flight, answered or on the command bus, no drain, no refresh due,
  // coming or in progress, and (closed page) no bank left open to close. The statistics that add
  // every cycle then add zero (occupancy, reads in flight). hbm_ctrl leaves such edges out.
  assign clk_en_o = !(en_q && ref_idle && !ref_due && !busy && !req_valid_i && !rvalid_i &&
                      !in_vld_q && (vld_q == '0) && (occ_q == '0) && (rd_out_q == '0) &&
                      !rsp_valid_q && !bresp_valid_q && !cmd_valid_q && !drain_q &&
                      !(page_policy_q && any_open));

  always_comb begin
    for (int unsigned k = 0; k < hbm_spec_pkg::NumStats; k++) begin
      stats_o[k*hbm_spec_pkg::StatW +: hbm_spec_pkg::StatW] = cnt_q[k];
    end
  end

  `TPU_ASSERT_INIT
`ifndef SYNTHESIS

  always_ff @(posedge clk_i) begin
    if (chk_en_q) begin
      if (iss_col) begin
        assert (vld_q[iss_pos] && hit_q[iss_pos] && !blk_q[iss_pos])
          else $error("hbm_channel_ctrl: column command of position %0d that is not ready", iss_pos);
        assert (iss_cmd == hbm_spec_pkg::CmdWr || !wr_q[iss_pos])
          else $error("hbm_channel_ctrl: read command for a write");
      end
      if (iss_for_req) begin
        assert (vld_q[iss_pos] && !hit_q[iss_pos])
          else $error("hbm_channel_ctrl: row command for position %0d that hits", iss_pos);
      end
      // The valid positions are the lowest ones (the queue collapses), every flag is clean above.
      assert ((vld_q & (vld_q + N'(1))) == '0) else $error("hbm_channel_ctrl: queue has a hole");
      assert (((wr_q | hit_q | miss_q | conf_q | blk_q) & ~vld_q) == '0)
        else $error("hbm_channel_ctrl: flag of an empty position");
      assert (32'(rcnt_q) + 32'(wcnt_q) == 32'($countones(vld_q)))
        else $error("hbm_channel_ctrl: read/write queue counts broken");
      assert (32'(rcnt_q) + 32'(wcnt_q) + 32'($countones(sfree_q)) == N)
        else $error("hbm_channel_ctrl: slots leak");
      assert ((32'(rcnt_q) <= 32'(tim_q.rd_cap)) && (32'(wcnt_q) <= 32'(tim_q.wr_cap)))
        else $error("hbm_channel_ctrl: a queue holds more than its size");
      assert (!(rvalid_i && rd_out_q == '0)) else $error("hbm_channel_ctrl: read data nobody asked for");
    end
  end
`endif

endmodule
