// SPDX-License-Identifier: Apache-2.0
// The interconnect between the core's memory port and the HBM controller's burst port, in RTL:
// the board top's counterpart of the C++ bridge (sim/src/hbm/beat_bridge.cpp), cycle for cycle.
//
// The core moves beats of BeatBytes (a divisor of the 64-byte burst: every beat lies in one
// burst, since core addresses are beat aligned, docs/isa.md), in order, one per cycle; the
// controller moves bursts tagged with ids and completes them out of order across channels.
//   - Consecutive reads of one burst share one RD while it is outstanding; a write, or the RD's
//     data coming back, ends the sharing.
//   - Consecutive writes to one burst are combined under a byte mask into one WR, sent when a
//     beat of another burst, a read, or a cycle without a write comes.
//   - Read data and write acknowledgements return to the core in request order.
// The C++ bridge's figures are the contract: the same readiness (beats in flight + free ids),
// the same requests on the same lanes in the same cycles (a request made in a cycle is offered
// in that cycle; free lanes are filled in lane order from the oldest request), the same
// responses in the same cycles. The ids themselves may differ (the controller only carries
// them): here the lowest free id is taken.
//
// Storage, all indexed so that nothing is copied per beat:
//   - A read beat records its group (the ring index of the first beat that shares its RD) and
//     its place in the burst. A RD's data is written once, into its group's slot; a beat is
//     complete when its group's slot is. Ring indices run over 2*MaxBeats, so a slot is never
//     reused while a beat of its group waits (at most MaxBeats-1 beats are in flight).
//   - Write beats likewise (a WR acknowledges its group).
//   - A WR's data and mask are kept per id until its acknowledgement.
// Coded for an FPGA (docs/fpga.md), with the cycles of the flip-flop form:
//   - The read slots are block RAM, one bank per channel (sram_1w1r: one write port each, the
//     channel's response), read every cycle at the group the head beat will have next cycle;
//     a slot written in that cycle is forwarded. Which bank holds a group's data is recorded when
//     the data comes (rd_chan_q), and selects the head beat's data.
//   - The WR data and masks, the ids' groups: one write port each, read combinationally by the
//     lanes and the responses (LUT RAM, one copy per reader).
`include "tpu_assert.svh"

module hbm_beat_bridge #(
  parameter int unsigned BeatBytes   = 16,
  parameter int unsigned NumChannels = 8,
  parameter int unsigned NumPorts    = 4,
  parameter int unsigned CoreAddrW   = 32,
  parameter int unsigned AddrW       = 40,   // the controller's byte address
  parameter int unsigned MaxBeats    = 256,  // beats in flight (reads + writes), as the C++ bridge
  localparam int unsigned BeatW      = 8 * BeatBytes,
  localparam int unsigned IdW        = hbm_spec_pkg::IdW,
  localparam int unsigned DataW      = hbm_spec_pkg::DataW,
  localparam int unsigned MaskW      = hbm_spec_pkg::MaskW
) (
  input  logic                                 clk_i,   // the target clock
  input  logic                                 rst_ni,
  // the core's memory port (tpu_top mem_*)
  input  logic                                 core_req_valid_i,
  output logic                                 core_req_ready_o,
  input  logic                                 core_req_write_i,
  input  logic [CoreAddrW-1:0]                 core_req_addr_i,
  input  logic [BeatW-1:0]                     core_req_wdata_i,
  output logic                                 core_rsp_valid_o,
  output logic [BeatW-1:0]                     core_rsp_rdata_o,
  output logic                                 core_wack_valid_o,
  // the controller's request lanes
  output logic [NumPorts-1:0]                  req_valid_o,
  input  logic [NumPorts-1:0]                  req_ready_i,
  output logic [NumPorts-1:0]                  req_write_o,
  output logic [NumPorts-1:0][AddrW-1:0]       req_addr_o,
  output logic [NumPorts-1:0][IdW-1:0]         req_id_o,
  output logic [NumPorts-1:0][DataW-1:0]       req_wdata_o,
  output logic [NumPorts-1:0][MaskW-1:0]       req_wmask_o,
  // the controller's responses
  input  logic [NumChannels-1:0]               rsp_valid_i,
  input  logic [NumChannels-1:0][IdW-1:0]      rsp_id_i,
  input  logic [NumChannels-1:0][DataW-1:0]    rsp_data_i,
  input  logic [NumChannels-1:0]               bresp_valid_i,
  input  logic [NumChannels-1:0][IdW-1:0]      bresp_id_i,
  output logic                                 idle_o
);
  localparam int unsigned NumIds   = 1 << IdW;
  localparam int unsigned OffW     = hbm_spec_pkg::OffW;             // byte in a burst
  localparam int unsigned BurstW   = CoreAddrW - OffW;               // burst address bits
  localparam int unsigned BeatOffW = OffW - $clog2(BeatBytes);       // beat in a burst
  localparam int unsigned RingW    = $clog2(MaxBeats) + 1;           // 2*MaxBeats ring indices
  localparam int unsigned Ring     = 1 << RingW;
  localparam int unsigned OutDepth = NumIds;                         // a queued request holds an id
  localparam int unsigned OutW     = IdW;
  localparam int unsigned CntW     = RingW + 1;
  localparam int unsigned Beats    = 1 << BeatOffW;                  // beats in a burst
  localparam int unsigned ChW      = (NumChannels > 1) ? $clog2(NumChannels) : 1;

  if (BeatBytes < 8 || BeatBytes > 64 || (1 << $clog2(BeatBytes)) != BeatBytes) begin : g_beat_check
    $fatal(1, "hbm_beat_bridge: BeatBytes must be a power of two from 8 to 64 (one burst)");
  end
  if ((1 << $clog2(MaxBeats)) != MaxBeats || MaxBeats > NumIds) begin : g_beats_check
    $fatal(1, "hbm_beat_bridge: MaxBeats must be a power of two of at most the ids");
  end
  if (AddrW < CoreAddrW) begin : g_addr_check
    $fatal(1, "hbm_beat_bridge: the controller's address must hold the core's");
  end

  // ---------------------------------------------------------------------------------------------
  // State
  // ---------------------------------------------------------------------------------------------
  // ids
  logic [NumIds-1:0]      id_used_q;
  logic [IdW:0]           id_free_q;                 // free ids (NumIds at reset)
  logic [RingW-1:0]       id_group_q [NumIds];       // the ring index of the id's group
  logic [DataW-1:0]       wr_data_q  [NumIds];       // a WR's data and mask
  logic [MaskW-1:0]       wr_mask_q  [NumIds];
  // read beats: ring, group per beat, beat place in its burst; group slots (block RAM per
  // channel, below) and the channel whose bank holds each group's data
  logic [RingW-1:0]       rd_head_q, rd_tail_q;
  logic [RingW-1:0]       rd_group_q [Ring];
  logic [BeatOffW-1:0]    rd_place_q [Ring];
  logic [Ring-1:0]        rd_done_q;
  logic [ChW-1:0]         rd_chan_q  [Ring];
  // write beats
  logic [RingW-1:0]       wr_head_q, wr_tail_q;
  logic [RingW-1:0]       wr_group_q [Ring];
  logic [Ring-1:0]        wr_done_q;
  // the RD open for sharing, the WR being combined
  logic                   ord_valid_q, owr_valid_q;
  // ord_id_q is an id taken from the free list, not a state machine: Yosys's FSM detection takes
  // it for one, and extracting it enumerates transitions over 257 control bits without end.
  (* fsm_encoding = "none" *) logic [IdW-1:0] ord_id_q;
  logic [IdW-1:0]         owr_id_q;
  logic [BurstW-1:0]      ord_burst_q, owr_burst_q;
  logic [RingW-1:0]       ord_group_q, owr_group_q;
  // requests made and not yet on a lane: {write, burst, id}
  logic [OutW-1:0]        out_head_q, out_tail_q;
  logic [OutW:0]          out_count_q;
  logic                   out_write_q [OutDepth];
  logic [BurstW-1:0]      out_burst_q [OutDepth];
  logic [IdW-1:0]         out_id_q    [OutDepth];
  // lanes: a request offered and not yet taken stays on its lane
  logic [NumPorts-1:0]                lane_valid_q, lane_write_q;
  logic [NumPorts-1:0][BurstW-1:0]    lane_burst_q;
  logic [NumPorts-1:0][IdW-1:0]       lane_id_q;

  // ---------------------------------------------------------------------------------------------
  // Core side: the oldest beats, readiness
  // ---------------------------------------------------------------------------------------------
  logic [CntW-1:0]  rd_count, wr_count, in_flight;
  logic             rd_pop, wr_pop;
  logic [RingW-1:0] rd_head_group, wr_head_group;
  logic [BeatOffW-1:0] rd_head_place;

  logic [RingW-1:0] rd_used, wr_used;  // modulo the ring, before widening
  assign rd_used       = rd_tail_q - rd_head_q;
  assign wr_used       = wr_tail_q - wr_head_q;
  assign rd_count      = CntW'(rd_used);
  assign wr_count      = CntW'(wr_used);
  assign rd_head_group = rd_group_q[rd_head_q];
  assign rd_head_place = rd_place_q[rd_head_q];
  assign wr_head_group = wr_group_q[wr_head_q];
  assign rd_pop        = (rd_count != '0) && rd_done_q[rd_head_group];
  assign wr_pop        = (wr_count != '0) && wr_done_q[wr_head_group];

  assign core_rsp_valid_o  = rd_pop;
  assign core_wack_valid_o = wr_pop;
  // as BeatBridge::can_accept after this cycle's pops: room for a beat, and ids for a beat's
  // burst plus the one a flushed write may hold
  assign in_flight        = rd_count - CntW'(rd_pop) + wr_count - CntW'(wr_pop);
  assign core_req_ready_o = (in_flight < CntW'(MaxBeats)) && (id_free_q >= (IdW + 1)'(2));

  // ---------------------------------------------------------------------------------------------
  // Core side: the beat taken this cycle
  // ---------------------------------------------------------------------------------------------
  logic              take, take_rd, take_wr;
  logic [BurstW-1:0] burst;
  logic [BeatOffW-1:0] place;
  logic              new_rd, new_wr, flush;
  logic [IdW-1:0]    free_id;

  assign take    = core_req_valid_i && core_req_ready_o;
  assign take_rd = take && !core_req_write_i;
  assign take_wr = take && core_req_write_i;
  assign burst   = core_req_addr_i[CoreAddrW-1:OffW];
  assign place   = core_req_addr_i[OffW-1:OffW-BeatOffW];
  // a beat of another burst needs a new RD or WR
  assign new_rd  = take_rd && !(ord_valid_q && ord_burst_q == burst);
  assign new_wr  = take_wr && !(owr_valid_q && owr_burst_q == burst);
  // the combined WR goes out before a read, before a write of another burst, and at the end of a
  // cycle without a write
  assign flush   = owr_valid_q && (take_rd || new_wr || !take_wr);

  // the lowest free id (at most one is taken per cycle: a new RD or a new WR)
  always_comb begin
    free_id = '0;
    for (int i = NumIds - 1; i >= 0; i--) begin
      if (!id_used_q[i]) free_id = IdW'(i);
    end
  end

  // this cycle's new requests, oldest first: the flushed WR, then a new RD
  logic [1:0]             push_n;
  logic [1:0]             push_write;
  logic [1:0][BurstW-1:0] push_burst;
  logic [1:0][IdW-1:0]    push_id;
  always_comb begin
    push_n     = '0;
    push_write = '0;
    push_burst = '0;
    push_id    = '0;
    if (flush) begin
      push_write[0] = 1'b1;
      push_burst[0] = owr_burst_q;
      push_id[0]    = owr_id_q;
      push_n        = 2'd1;
    end
    if (new_rd) begin
      push_write[push_n[0]] = 1'b0;
      push_burst[push_n[0]] = burst;
      push_id[push_n[0]]    = free_id;
      push_n                = push_n + 2'd1;
    end
  end

  // the group slots: per channel a block RAM, read at the group the head beat has next cycle (the
  // beat after a pop; a beat taken this cycle into an empty ring), so that in each cycle its
  // output is the head group's slot as written up to the previous cycle
  logic [RingW-1:0]                        rd_head_next, rd_head_group_next;
  logic [NumChannels-1:0][RingW-1:0]       rsp_group, bresp_group;
  logic [NumChannels-1:0][DataW-1:0]       slot_rdata;
  logic [DataW-1:0]                        head_slot;
  assign rd_head_next       = rd_head_q + RingW'(rd_pop);
  assign rd_head_group_next = (take_rd && rd_tail_q == rd_head_next) ?
                              (new_rd ? rd_tail_q : ord_group_q) : rd_group_q[rd_head_next];
  for (genvar c = 0; c < NumChannels; c++) begin : g_slot
    assign rsp_group[c]   = id_group_q[rsp_id_i[c]];
    assign bresp_group[c] = id_group_q[bresp_id_i[c]];
    sram_1w1r #(.Width (DataW), .Depth (Ring), .Transparent (1'b1)) u_slots (
      .clk_i, .we_i (rsp_valid_i[c]), .waddr_i (rsp_group[c]), .wdata_i (rsp_data_i[c]),
      .re_i (1'b1), .raddr_i (rd_head_group_next), .rdata_o (slot_rdata[c])
    );
  end
  assign head_slot = slot_rdata[rd_chan_q[rd_head_group]];

  assign core_rsp_rdata_o  = head_slot[32'(rd_head_place) * BeatW +: BeatW];

  // ---------------------------------------------------------------------------------------------
  // Lanes: free lanes take the oldest requests (queued ones, then this cycle's)
  // ---------------------------------------------------------------------------------------------
  logic [NumPorts-1:0] fill;
  logic [NumPorts-1:0] fill_write;
  logic [NumPorts-1:0][BurstW-1:0] fill_burst;
  logic [NumPorts-1:0][IdW-1:0]    fill_id;
  logic [OutW:0] taken;
  always_comb begin
    logic [OutW:0]   avail, q;
    logic [OutW-1:0] idx;
    avail      = out_count_q + (OutW + 1)'(push_n);
    idx        = '0;
    q          = '0;
    taken      = '0;
    fill       = '0;
    fill_write = '0;
    fill_burst = '0;
    fill_id    = '0;
    for (int p = 0; p < NumPorts; p++) begin
      if (!lane_valid_q[p] && taken < avail) begin
        fill[p] = 1'b1;
        if (taken < out_count_q) begin
          idx           = out_head_q + OutW'(taken);
          fill_write[p] = out_write_q[idx];
          fill_burst[p] = out_burst_q[idx];
          fill_id[p]    = out_id_q[idx];
        end else begin
          q             = taken - out_count_q;
          fill_write[p] = push_write[q[0]];  // q < 2: this cycle pushes at most two
          fill_burst[p] = push_burst[q[0]];
          fill_id[p]    = push_id[q[0]];
        end
        taken = taken + 1'b1;
      end
    end
  end

  for (genvar p = 0; p < NumPorts; p++) begin : g_lane
    logic [BurstW-1:0] lburst;
    logic [IdW-1:0]    lid;
    assign lburst         = fill[p] ? fill_burst[p] : lane_burst_q[p];
    assign lid            = fill[p] ? fill_id[p] : lane_id_q[p];
    assign req_valid_o[p] = lane_valid_q[p] || fill[p];
    assign req_write_o[p] = fill[p] ? fill_write[p] : lane_write_q[p];
    assign req_addr_o[p]  = AddrW'({lburst, OffW'(0)});
    assign req_id_o[p]    = lid;
    // a WR's data was complete before it was queued (it is flushed in a cycle that adds nothing
    // to it); reads carry no data
    assign req_wdata_o[p] = wr_data_q[lid];
    assign req_wmask_o[p] = wr_mask_q[lid];

    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        lane_valid_q[p] <= 1'b0;
      end else begin
        lane_valid_q[p] <= req_valid_o[p] && !req_ready_i[p];
      end
    end
    always_ff @(posedge clk_i) begin
      if (fill[p]) begin
        lane_write_q[p] <= fill_write[p];
        lane_burst_q[p] <= fill_burst[p];
        lane_id_q[p]    <= fill_id[p];
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Responses: a RD's data fills its group's slot, a WR acknowledges its group; both free the id
  // ---------------------------------------------------------------------------------------------
  logic [IdW:0] freed;
  always_comb begin
    freed = '0;
    for (int c = 0; c < NumChannels; c++) begin
      freed = freed + (IdW + 1)'(rsp_valid_i[c]) + (IdW + 1)'(bresp_valid_i[c]);
    end
  end

  // the open RD after this cycle's beat (a response for it ends its sharing)
  logic ord_valid_next;
  logic [IdW-1:0] ord_id_next;
  always_comb begin
    ord_valid_next = ord_valid_q && !take_wr;
    ord_id_next    = ord_id_q;
    if (new_rd) begin
      ord_valid_next = 1'b1;
      ord_id_next    = free_id;
    end
    for (int c = 0; c < NumChannels; c++) begin
      if (rsp_valid_i[c] && rsp_id_i[c] == ord_id_next) ord_valid_next = 1'b0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      id_used_q   <= '0;
      id_free_q   <= (IdW + 1)'(NumIds);
      rd_head_q   <= '0;
      rd_tail_q   <= '0;
      wr_head_q   <= '0;
      wr_tail_q   <= '0;
      rd_done_q   <= '0;
      wr_done_q   <= '0;
      ord_valid_q <= 1'b0;
      owr_valid_q <= 1'b0;
      out_head_q  <= '0;
      out_tail_q  <= '0;
      out_count_q <= '0;
    end else begin
      // core side
      if (rd_pop) rd_head_q <= rd_head_q + 1'b1;
      if (wr_pop) wr_head_q <= wr_head_q + 1'b1;
      if (take_rd) rd_tail_q <= rd_tail_q + 1'b1;
      if (take_wr) wr_tail_q <= wr_tail_q + 1'b1;
      if (new_rd) rd_done_q[rd_tail_q] <= 1'b0;
      if (new_wr) wr_done_q[wr_tail_q] <= 1'b0;
      ord_valid_q <= ord_valid_next;
      owr_valid_q <= take_wr || (owr_valid_q && !flush);
      // requests
      out_tail_q  <= out_tail_q + OutW'(push_n);
      out_head_q  <= out_head_q + OutW'(taken);
      out_count_q <= out_count_q + (OutW + 1)'(push_n) - taken;
      // ids: one taken, the answered ones freed
      for (int c = 0; c < NumChannels; c++) begin
        if (rsp_valid_i[c]) begin
          id_used_q[rsp_id_i[c]]    <= 1'b0;
          rd_done_q[rsp_group[c]]   <= 1'b1;
        end
        if (bresp_valid_i[c]) begin
          id_used_q[bresp_id_i[c]]  <= 1'b0;
          wr_done_q[bresp_group[c]] <= 1'b1;
        end
      end
      if (new_rd || new_wr) id_used_q[free_id] <= 1'b1;
      id_free_q <= id_free_q - (IdW + 1)'(new_rd || new_wr) + freed;
    end
  end

  // one write port per memory, so that each is a RAM (docs/fpga.md)
  logic [RingW-1:0] id_group_wdata;
  logic [IdW-1:0]   wr_id;
  logic [Beats-1:0] wr_beat_en;
  logic [DataW-1:0] wr_beat_data;
  logic [MaskW-1:0] wr_beat_mask;
  assign id_group_wdata = new_rd ? rd_tail_q : wr_tail_q;
  // a new WR's burst holds its first beat and zeros; a combined beat overwrites its place only
  assign wr_id          = new_wr ? free_id : owr_id_q;
  for (genvar b = 0; b < Beats; b++) begin : g_wr_beat
    assign wr_beat_en[b] = new_wr || (take_wr && place == BeatOffW'(b));
    assign wr_beat_data[b * BeatW +: BeatW] = (place == BeatOffW'(b)) ? core_req_wdata_i : '0;
    assign wr_beat_mask[b * BeatBytes +: BeatBytes] = {BeatBytes{place == BeatOffW'(b)}};
  end
  always_ff @(posedge clk_i) begin
    if (new_rd || new_wr) id_group_q[free_id] <= id_group_wdata;
    for (int b = 0; b < Beats; b++) begin
      if (wr_beat_en[b]) begin
        wr_data_q[wr_id][b * BeatW +: BeatW]         <= wr_beat_data[b * BeatW +: BeatW];
        wr_mask_q[wr_id][b * BeatBytes +: BeatBytes] <= wr_beat_mask[b * BeatBytes +: BeatBytes];
      end
    end
  end
  always_ff @(posedge clk_i) begin
    for (int c = 0; c < NumChannels; c++) begin
      if (rsp_valid_i[c]) rd_chan_q[rsp_group[c]] <= ChW'(c);
    end
  end

  always_ff @(posedge clk_i) begin
    if (take_rd) begin
      rd_group_q[rd_tail_q] <= new_rd ? rd_tail_q : ord_group_q;
      rd_place_q[rd_tail_q] <= place;
    end
    if (new_rd) begin
      ord_id_q            <= free_id;
      ord_burst_q         <= burst;
      ord_group_q         <= rd_tail_q;
    end
    if (take_wr) wr_group_q[wr_tail_q] <= new_wr ? wr_tail_q : owr_group_q;
    if (new_wr) begin
      owr_id_q            <= free_id;
      owr_burst_q         <= burst;
      owr_group_q         <= wr_tail_q;
    end
    if (push_n != '0) begin
      out_write_q[out_tail_q] <= push_write[0];
      out_burst_q[out_tail_q] <= push_burst[0];
      out_id_q[out_tail_q]    <= push_id[0];
    end
    if (push_n == 2'd2) begin
      out_write_q[out_tail_q + 1'b1] <= push_write[1];
      out_burst_q[out_tail_q + 1'b1] <= push_burst[1];
      out_id_q[out_tail_q + 1'b1]    <= push_id[1];
    end
  end

  assign idle_o = (rd_count == '0) && (wr_count == '0) && (out_count_q == '0) && !owr_valid_q &&
                  (lane_valid_q == '0);

  // ---------------------------------------------------------------------------------------------
  // Checks
  // ---------------------------------------------------------------------------------------------
  `TPU_ASSERT_INIT
  `TPU_ASSERT(valid_only_when_ready, !core_req_valid_i || core_req_ready_o,
              "hbm_beat_bridge: a beat offered while the bridge is not ready")
  `ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (chk_en_q) begin
      for (int c = 0; c < NumChannels; c++) begin
        if (rsp_valid_i[c]) begin
          assert (id_used_q[rsp_id_i[c]])
          else $error("hbm_beat_bridge: read data for id %0d, which is not in flight", rsp_id_i[c]);
        end
        if (bresp_valid_i[c]) begin
          assert (id_used_q[bresp_id_i[c]])
          else $error("hbm_beat_bridge: write response for id %0d, which is not in flight", bresp_id_i[c]);
        end
      end
    end
  end
  `endif
endmodule
