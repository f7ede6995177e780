// SPDX-License-Identifier: Apache-2.0
// HBM controller (docs/hbm.md): AXI-like burst port(s) -> address mapping -> per-channel request
// queues with FR-FCFS scheduling (hbm_channel_ctrl), bank state and refresh -> one command bus per
// channel towards the DRAM device model, read responses with ids, write responses.
//
// =================================================================================================
// Decisions where docs/hbm.md is silent or does not fit (they are part of the contract)
// =================================================================================================
// 1. Bandwidth of the ports. One request per cycle cannot feed 8 channels that each move a
//    burst every tBURST = 2 cycles, and one response per cycle cannot return their data. So:
//    - the burst port is NumPorts identical request lanes (req_valid_i[p] and req_i[p], an
//      hbm_spec_pkg::req_t; NumPorts = 1 is exactly the port of docs/hbm.md). Any lane may address
//      any channel; a channel accepts one request per cycle, round robin among the lanes that
//      address it. req_ready_o[p] depends on req_valid_i and req_i[p].addr of the lanes (never the
//      other way round);
//    - read and write responses come per channel (rsp_o[c], hbm_spec_pkg::rsp_t): in order within a
//      channel, out of order across channels, always accepted. The ids are the requester's.
// 2. Timing is a runtime input (timing_i, see hbm_spec_pkg::timing_t for the bit layout) that must
//    be stable from reset on; it is registered while the controller is held off (in reset and in
//    the first cycle after it, when it issues and accepts nothing) and kept. The derived distances (column spacing,
//    RD->WR, WR->RD, WR->PRE) are the contract's table, hbm_spec_pkg::derive_timings
//    (docs/hbm.md); besides: RD->PRE >= tRTP; ACT->REF >= tRC; PRE/PREA->REF >= tRP; nothing for
//    tRFC after a REF.
// 3. Address map: runtime amap_i (hbm_spec_pkg::amap_t): the order (enum amap_order_e: the contract's
//    "ro-ba-bg-ch-co" (default) and "ro-ch-ba-bg-co", "ch-ro-ba-bg-co", "ro-ba-bg-co-ch", or
//    AmapCustom with any order of the five fields given as field codes, so every "address_map"
//    string of a timing set maps) and the width of every field (from the geometry). The burst
//    offset (log2 64 = 6 bits) is always the least significant part; byte addresses must be
//    burst aligned (assertion). Address bits above the most significant field are ignored (the
//    bridge checks the capacity).
// 4. Refresh: all-bank only. per_bank_refresh_i is tied off: the command bus of docs/hbm.md has
//    no per-bank REF, so it must be 0 (assertion). A REF is due every tREFI per channel, the first
//    one tREFI after reset, and is never postponed: ACT/PRE stop, column commands go on only
//    while they do not delay the PREA, then PREA (if a bank is open), REF, tRFC. All channels
//    refresh together by default: a channel in tRFC (260..560 tCK) stops taking requests once
//    its queue is full, and with a shared request port that blocks the port (head of line), so
//    one common blackout per tREFI costs far less than NumChannels staggered ones. RefStagger = 1
//    spreads the channels' REFs evenly over tREFI instead (smoother aggregate bandwidth when
//    every channel has its own requester).
// 5. Scheduling (hbm_channel_ctrl): FR-FCFS with read/write grouping; requests to the same
//    burst keep their acceptance order (so a read returns exactly the data written by the writes
//    accepted before it); a starvation guard serves the oldest request alone once it has waited
//    StarveCycles. Ids are opaque: they come back unchanged, even if the requester repeats one.
// 6. Statistics per channel (stats_o[c], hbm_spec_pkg::stats_t). A request is a row hit if its
//    column command issued without an ACT or PRE on its behalf, a row miss if an ACT was issued
//    for it, a row conflict if a PRE of another row was issued for it (closed page: a miss, the
//    row would have closed anyway). A request whose row a refresh closed again takes a second
//    ACT, so acts >= row_misses + row_conflicts. occ_sum adds, every cycle, the requests held by
//    the channel (input register and queue); rd_lat_sum is the sum over reads of (cycle its
//    rsp_o[c].rsp_valid is high - cycle it was accepted on the port).
// 7. Pipeline: a request accepted in cycle t waits in the channel's input register in t+1 and is
//    queued at the end of it (the queue logic depends on flops only). A command is on cmd_o[c] the
//    cycle after the scheduler chose it; cmd_o[c].row carries the row of RD/WR too (the device
//    model checks it, docs/hbm.md, decision D7). Read data from the device (rdata_i[c]) reaches
//    rsp_o[c] one cycle later; the controller does not predict it but pairs each valid read burst
//    with the oldest outstanding RD of the channel (RdFifoDepth RDs in flight at most). Writes are
//    posted: rsp_o[c].bresp_valid is high the cycle after the write entered the channel's write
//    queue.
// 8. Timestamps are CycW = 48-bit cycle counts (never wrap in a simulation) compared with a
//    free-running counter. Each channel runs on a gated clock (clock_gate, GateChannelClocks = 1)
//    that leaves out the edges of its quiet cycles: no request offered or held, nothing queued,
//    in flight or answered, no refresh due or in progress (hbm_channel_ctrl's clk_en_o). Such an
//    edge would change nothing, so leaving it out is exact, and a simulator then evaluates none of
//    the channel's logic: an idle channel costs next to nothing per cycle. The channel registers
//    its configuration and its copy of the cycle count on its own clock for that reason. On an
//    FPGA each gate is a clock buffer with enable; GateChannelClocks = 0 puts every channel on
//    clk_i instead (the same behaviour, cycle for cycle).
// =================================================================================================
`include "tpu_assert.svh"

module hbm_ctrl #(
  parameter int unsigned NumChannels   = 8,     // 8 for HBM2, 16/32 for HBM3 pseudo channels
  parameter int unsigned NumPorts      = 1,     // request lanes of the burst port
  parameter int unsigned BankGroups    = 4,
  parameter int unsigned BanksPerGroup = 4,
  parameter int unsigned QueueDepth    = hbm_spec_pkg::QueueSlots,  // slots per channel, power of two
  parameter int unsigned RdFifoDepth   = 32,    // RDs in flight per channel, power of two
  parameter int unsigned StarveCycles  = hbm_spec_pkg::StarveCycles,
  parameter int unsigned RefStagger    = 0,     // 0: all channels refresh together
  parameter int unsigned AddrW         = hbm_spec_pkg::PortAddrW,  // byte address bits used
  parameter int unsigned GateChannelClocks = 1,  // 0: every channel on clk_i (decision 8)
  localparam int unsigned ChW          = (NumChannels > 1) ? $clog2(NumChannels) : 1,
  localparam int unsigned PortW        = (NumPorts > 1) ? $clog2(NumPorts) : 1,
  localparam int unsigned BgW          = $clog2(BankGroups),
  localparam int unsigned BaW          = $clog2(BanksPerGroup)
) (
  input  logic                                 clk_i,
  input  logic                                 rst_ni,
  // configuration (stable from reset on)
  input  hbm_spec_pkg::timing_t timing_i,
  input  hbm_spec_pkg::amap_t   amap_i,
  input  logic                  page_policy_i, // 0 open, 1 closed page
  input  logic                  per_bank_refresh_i, // must be 0 (decision 4)
  // burst port: request lanes, responses per channel
  input  logic [NumPorts-1:0]                               req_valid_i,
  output logic [NumPorts-1:0]                               req_ready_o,
  input  logic [NumPorts-1:0][hbm_spec_pkg::ReqBits-1:0]    req_i,    // hbm_spec_pkg::req_t
  output logic [NumChannels-1:0][hbm_spec_pkg::RspBits-1:0] rsp_o,    // hbm_spec_pkg::rsp_t
  // command bus and read data per channel (docs/hbm.md)
  output logic [NumChannels-1:0][hbm_spec_pkg::CmdBits-1:0]   cmd_o,    // hbm_spec_pkg::cmd_t
  input  logic [NumChannels-1:0][hbm_spec_pkg::RdataBits-1:0] rdata_i,  // hbm_spec_pkg::rdata_t
  // statistics
  output logic [NumChannels-1:0][hbm_spec_pkg::NumStats*hbm_spec_pkg::StatW-1:0] stats_o
);
  localparam int unsigned BaddrW = AddrW - hbm_spec_pkg::OffW;

  if ((1 << ChW) != NumChannels || NumChannels < 2) begin : g_chan_check
    $fatal(1, "hbm_ctrl: NumChannels must be a power of two >= 2");
  end
  if (BaddrW <= hbm_spec_pkg::RowW) begin : g_addr_check
    $fatal(1, "hbm_ctrl: AddrW too small");
  end
  // the port structs carry the contract's widths (hbm_spec_pkg::req_t, cmd_t)
  if (AddrW > hbm_spec_pkg::PortAddrW || BgW != hbm_spec_pkg::CmdBgW ||
      BaW != hbm_spec_pkg::CmdBaW) begin : g_port_check
    $fatal(1, "hbm_ctrl: AddrW, BankGroups or BanksPerGroup do not fit the port structs");
  end
`ifndef SYNTHESIS
  // the port widths are hand-written sums (Yosys cannot take $bits of a type): keep them honest
  if (hbm_spec_pkg::ReqBits != $bits(hbm_spec_pkg::req_t) ||
      hbm_spec_pkg::RspBits != $bits(hbm_spec_pkg::rsp_t) ||
      hbm_spec_pkg::CmdBits != $bits(hbm_spec_pkg::cmd_t) ||
      hbm_spec_pkg::RdataBits != $bits(hbm_spec_pkg::rdata_t)) begin : g_bits_check
    $fatal(1, "hbm_ctrl: a port width of hbm_spec_pkg does not match its struct");
  end
`endif

  // ---------------------------------------------------------------------------------------------
  // Configuration of the lanes' address decode, registered; the cycle counter
  // ---------------------------------------------------------------------------------------------
  // The channels register their own configuration (the derived timing, the page policy, the
  // address map): they run on clocks of their own (below).
  hbm_spec_pkg::amap_t           amap_q;
  hbm_spec_pkg::amap_pos_t       amap_pos_q;
  logic            en_q;
  logic [hbm_spec_pkg::CycW-1:0] now_q;

  // Loaded while en_q holds the controller off, in reset and in the first cycle after it, and
  // kept: they need no reset, and a simulator does not recompute the positions every cycle.
  always_ff @(posedge clk_i) begin
    if (!en_q) begin
      amap_q     <= amap_i;
      amap_pos_q <= hbm_spec_pkg::amap_positions(amap_i);
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      en_q  <= 1'b0;
      now_q <= '0;
    end else begin
      en_q  <= 1'b1;
      now_q <= now_q + hbm_spec_pkg::CycW'(1);
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Channel of every lane's address (the channel decodes the rest from its input register)
  // ---------------------------------------------------------------------------------------------
  logic [ChW-1:0] lane_ch [NumPorts];
  // every lane's fields, for the channels to select from
  logic [NumPorts-1:0]                          lane_write;
  logic [NumPorts-1:0][BaddrW-1:0]              lane_baddr;
  logic [NumPorts-1:0][hbm_spec_pkg::IdW-1:0]   lane_id;
  logic [NumPorts-1:0][hbm_spec_pkg::DataW-1:0] lane_wdata;
  logic [NumPorts-1:0][hbm_spec_pkg::MaskW-1:0] lane_wmask;

  // Struct members are read from plain struct signals, never from an array element: Yosys reads
  // req_i[p].addr as a new 1-bit wire (docs/fpga.md).
  for (genvar p = 0; p < NumPorts; p++) begin : g_lane
    hbm_spec_pkg::req_t req;
    logic [BgW-1:0]  unused_bg;
    logic [BaW-1:0]  unused_ba;
    logic [hbm_spec_pkg::RowW-1:0] unused_row;
    logic [hbm_spec_pkg::ColW-1:0] unused_col;
    assign req = req_i[p];
    assign lane_write[p] = req.write;
    assign lane_baddr[p] = req.addr[AddrW-1:hbm_spec_pkg::OffW];
    assign lane_id[p]    = req.id;
    assign lane_wdata[p] = req.wdata;
    assign lane_wmask[p] = req.wmask;
    logic unused_req;  // burst aligned (assertion below)
    assign unused_req = ^req.addr[hbm_spec_pkg::OffW-1:0];
    hbm_addr_map #(
      .NumChannels   (NumChannels),
      .BankGroups    (BankGroups),
      .BanksPerGroup (BanksPerGroup),
      .BaddrW        (BaddrW)
    ) u_map (
      .amap_i  (amap_q),
      .pos_i   (amap_pos_q),
      .baddr_i (req.addr[AddrW-1:hbm_spec_pkg::OffW]),
      .ch_o    (lane_ch[p]),
      .bg_o    (unused_bg),
      .ba_o    (unused_ba),
      .row_o   (unused_row),
      .col_o   (unused_col)
    );
  end

  // ---------------------------------------------------------------------------------------------
  // Lanes -> channels: each channel takes one request per cycle, round robin over the lanes
  // ---------------------------------------------------------------------------------------------
  logic [NumPorts-1:0]    lane_req [NumChannels];  // lanes that address the channel
  logic [NumPorts-1:0]    gnt      [NumChannels];  // one-hot: the lane the channel would take
  logic [PortW-1:0]       sel      [NumChannels];
  logic [PortW-1:0]       rr_q     [NumChannels];  // lane with the highest priority
  logic [NumChannels-1:0] ch_valid, ch_ready;

  always_comb begin
    for (int unsigned c = 0; c < NumChannels; c++) begin
      lane_req[c] = '0;
    end
    for (int unsigned p = 0; p < NumPorts; p++) begin
      lane_req[lane_ch[p]][p] = req_valid_i[p];
    end
    req_ready_o = '0;
    for (int unsigned c = 0; c < NumChannels; c++) begin
      logic [NumPorts-1:0] high;
      high   = lane_req[c] & ~((NumPorts'(1) << rr_q[c]) - NumPorts'(1));
      gnt[c] = (high != '0) ? (high & (~high + NumPorts'(1)))
                            : (lane_req[c] & (~lane_req[c] + NumPorts'(1)));
      sel[c] = '0;
      for (int unsigned p = 0; p < NumPorts; p++) begin
        if (gnt[c][p]) begin
          sel[c] = PortW'(p);
        end
      end
      ch_valid[c] = (lane_req[c] != '0);
      if (ch_ready[c]) begin
        req_ready_o = req_ready_o | gnt[c];
      end
    end
  end

  for (genvar c = 0; c < NumChannels; c++) begin : g_rr
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        rr_q[c] <= '0;
      end else if (ch_valid[c] && ch_ready[c]) begin
        rr_q[c] <= (32'(sel[c]) == NumPorts - 1) ? '0 : sel[c] + PortW'(1);
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Channels
  // ---------------------------------------------------------------------------------------------
  for (genvar c = 0; c < NumChannels; c++) begin : g_ch
    hbm_spec_pkg::rsp_t   rsp;
    hbm_spec_pkg::cmd_t   cmd;
    hbm_spec_pkg::rdata_t rdata;
    assign rsp_o[c] = rsp;
    assign cmd_o[c] = cmd;
    assign rdata    = rdata_i[c];
    // The channel's clock leaves out the edges of its quiet cycles (decision 8).
    logic clk_ch, clk_en;
    if (GateChannelClocks != 0) begin : g_gate
      clock_gate u_gate (.clk_i, .en_i (clk_en), .clk_o (clk_ch));
    end else begin : g_free
      logic unused_clk_en;
      assign unused_clk_en = clk_en;
      assign clk_ch = clk_i;
    end
    hbm_channel_ctrl #(
      .NumChannels   (NumChannels),
      .NumPorts      (NumPorts),
      .BankGroups    (BankGroups),
      .BanksPerGroup (BanksPerGroup),
      .QueueDepth    (QueueDepth),
      .RdFifoDepth   (RdFifoDepth),
      .StarveCycles  (StarveCycles),
      .BaddrW        (BaddrW)
    ) u_ch (
      .clk_i         (clk_ch),
      .rst_ni        (rst_ni),
      .clk_en_o      (clk_en),
      .ref_slot_i    ((RefStagger != 0) ? ChW'(c) : '0),
      .now_i         (now_q),
      .timing_i      (timing_i),
      .page_policy_i (page_policy_i),
      .amap_i        (amap_i),
      .req_valid_i   (ch_valid[c]),
      .req_ready_o   (ch_ready[c]),
      .req_lane_i    (sel[c]),
      .req_write_i   (lane_write),
      .req_baddr_i   (lane_baddr),
      .req_id_i      (lane_id),
      .req_wdata_i   (lane_wdata),
      .req_wmask_i   (lane_wmask),
      .rsp_valid_o   (rsp.rsp_valid),
      .rsp_id_o      (rsp.rsp_id),
      .rsp_data_o    (rsp.rsp_data),
      .bresp_valid_o (rsp.bresp_valid),
      .bresp_id_o    (rsp.bresp_id),
      .cmd_valid_o   (cmd.valid),
      .cmd_o         (cmd.cmd),
      .cmd_bg_o      (cmd.bg),
      .cmd_bank_o    (cmd.bank),
      .cmd_row_o     (cmd.row),
      .cmd_col_o     (cmd.col),
      .cmd_wdata_o   (cmd.wdata),
      .cmd_wmask_o   (cmd.wmask),
      .rvalid_i      (rdata.valid),
      .rdata_i       (rdata.data),
      .stats_o       (stats_o[c])
    );
  end

  // per_bank_refresh_i is tied off (decision 4); the assertion below rejects 1.
  logic unused_per_bank_refresh;
  assign unused_per_bank_refresh = per_bank_refresh_i;

  `TPU_ASSERT_INIT
`ifndef SYNTHESIS

  always_ff @(posedge clk_i) begin
    if (chk_en_q) begin
      assert (!per_bank_refresh_i)
        else $error("hbm_ctrl: per-bank refresh is not implemented (per_bank_refresh_i must be 0)");
      assert (amap_i.ch_bits <= 8'(ChW) && amap_i.bg_bits <= 8'(BgW) &&
              amap_i.ba_bits <= 8'(BaW) && amap_i.row_bits <= 8'(hbm_spec_pkg::RowW) &&
              amap_i.col_bits <= 8'(hbm_spec_pkg::ColW) && hbm_spec_pkg::amap_order_ok(amap_i.order, amap_i.custom))
        else $error("hbm_ctrl: address map %0h does not fit the controller", amap_i);
      assert (timing_i.bl >= 16'd2 && !timing_i.bl[0] && timing_i.t_refi > timing_i.t_rfc &&
              timing_i.cwl >= 16'd1 && timing_i.t_rc >= timing_i.t_ras)
        else $error("hbm_ctrl: bad timing set");
    end
  end

  for (genvar p = 0; p < NumPorts; p++) begin : g_chk_lane
    always_ff @(posedge clk_i) begin
      if (chk_en_q && req_valid_i[p]) begin
        assert (g_lane[p].req.addr[hbm_spec_pkg::OffW-1:0] == '0)
          else $error("hbm_ctrl: lane %0d address %0h is not burst aligned", p, g_lane[p].req.addr);
      end
    end
  end
`endif

endmodule
