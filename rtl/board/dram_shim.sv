// SPDX-License-Identifier: Apache-2.0
// The HBM device of the board top, decoupled from the board's own memory (the technique of
// FireSim's FASED; docs/fpga.md "The host-decoupled DRAM model").
//
// On an FPGA the DRAM device cannot be the C++ model, and the memory that holds the data (the
// board's DDR or HBM, the "backing store") has a latency of its own. The shim runs on the host
// clock and keeps the target (controller and core, on the gated target clock) in step with the
// timing set, whatever the backing store does:
//   - In target cycle k it takes the controller's RD and WR commands (the other commands move no
//     data; row and bank state is the controller's business and the checker's) into a per-channel
//     queue towards the backing store, a burst each.
//   - The read data of a RD of cycle k is due to the controller in cycle k + CL + tBURST, as the
//     C++ device model returns it. It is presented exactly then.
//   - advance_o lets the target take its next edge only when every read due in the next target
//     cycle has its data and every queue has room for this cycle's commands. Otherwise the
//     target clock stops, the backing store catches up, and the target does not notice: its
//     cycle counts, counters and results do not depend on the backing store's latency.
// The backing store takes one request per host cycle when ready and answers reads in request
// order; writes are posted (no answer). Channels share it round-robin. Its address is the burst
// index {channel, bank group, bank, row, column}.
`include "tpu_assert.svh"

module dram_shim #(
  parameter int unsigned NumChannels   = 8,
  parameter int unsigned BankGroups    = 4,
  parameter int unsigned BanksPerGroup = 4,
  parameter int unsigned CmdDepth      = 8,   // per channel: bursts waiting for the backing store
  parameter int unsigned ReadDepth     = 32,  // per channel: reads issued and not yet returned
  parameter int unsigned RouteDepth    = 64,  // backing-store reads in flight
  localparam int unsigned ChW          = (NumChannels > 1) ? $clog2(NumChannels) : 1,
  localparam int unsigned BgW          = $clog2(BankGroups),
  localparam int unsigned BaW          = $clog2(BanksPerGroup),
  localparam int unsigned DataW        = hbm_spec_pkg::DataW,
  localparam int unsigned MaskW        = hbm_spec_pkg::MaskW,
  localparam int unsigned BsAddrW      = ChW + BgW + BaW + hbm_spec_pkg::RowW + hbm_spec_pkg::ColW
) (
  input  logic                                          clk_i,      // host clock
  input  logic                                          rst_ni,
  input  hbm_spec_pkg::timing_t                         timing_i,
  // the controller's command bus and read data, in target cycles
  input  logic [NumChannels-1:0][hbm_spec_pkg::CmdBits-1:0] cmd_i,  // hbm_spec_pkg::cmd_t
  output logic [NumChannels-1:0]                        rvalid_o,
  output logic [NumChannels-1:0][DataW-1:0]             rdata_o,
  // target clock enable for this host cycle, and the target cycle; hold_i keeps the target
  // clock stopped (the host reaching the backing store directly waits for idle_o first)
  input  logic                                          hold_i,
  output logic                                          idle_o,
  output logic                                          advance_o,
  output logic [hbm_spec_pkg::CycW-1:0]                 target_cycle_o,
  // backing store
  output logic                                          bs_req_valid_o,
  input  logic                                          bs_req_ready_i,
  output logic                                          bs_req_write_o,
  output logic [BsAddrW-1:0]                            bs_req_addr_o,
  output logic [DataW-1:0]                              bs_req_wdata_o,
  output logic [MaskW-1:0]                              bs_req_wmask_o,
  input  logic                                          bs_rsp_valid_i,
  input  logic [DataW-1:0]                              bs_rsp_rdata_i
);
  // the command bus is a hbm_spec_pkg::cmd_t, with the contract's bank fields
  if (BgW != hbm_spec_pkg::CmdBgW || BaW != hbm_spec_pkg::CmdBaW) begin : g_cmd_check
    $fatal(1, "dram_shim: BankGroups or BanksPerGroup do not fit hbm_spec_pkg::cmd_t");
  end
  localparam int unsigned CmdW = 1 + BsAddrW + MaskW + DataW;  // {write, addr, mask, data}
  localparam int unsigned CycW = hbm_spec_pkg::CycW;

  logic [CycW-1:0] tcyc_q;
  logic [CycW-1:0] read_delay;  // CL + tBURST
  assign read_delay     = CycW'(timing_i.cl) + CycW'(timing_i.bl[hbm_spec_pkg::TimW-1:1]);
  assign target_cycle_o = tcyc_q;

  // per channel: the command queue towards the backing store, the due cycles of its reads and
  // their returned data
  logic [NumChannels-1:0]            cmd_push, cmd_pop, cmd_empty, cmd_full;
  logic [NumChannels-1:0][CmdW-1:0]  cmd_head;
  logic [NumChannels-1:0]            due_push, due_pop, due_empty, due_full;
  logic [NumChannels-1:0][CycW-1:0]  due_head;
  logic [NumChannels-1:0]            dat_push, dat_empty;
  logic [NumChannels-1:0][DataW-1:0] dat_head;
  logic [NumChannels-1:0]            is_rd, is_wr, need, ok;

  for (genvar c = 0; c < NumChannels; c++) begin : g_channel
    hbm_spec_pkg::cmd_t cmd;  // a plain struct: Yosys misreads members of array elements
    assign cmd      = cmd_i[c];
    assign is_rd[c] = cmd.valid && (cmd.cmd == 3'(hbm_spec_pkg::CmdRd));
    assign is_wr[c] = cmd.valid && (cmd.cmd == 3'(hbm_spec_pkg::CmdWr));
    // a read due in the next target cycle must have its data; this cycle's burst needs room
    assign need[c] = !due_empty[c] && (due_head[c] == tcyc_q + 1'b1);
    assign ok[c]   = (!need[c] || !dat_empty[c]) &&
                     (!(is_rd[c] || is_wr[c]) || !cmd_full[c]) && (!is_rd[c] || !due_full[c]);

    logic [BsAddrW-1:0] addr;
    assign addr        = {ChW'(c), cmd.bg, cmd.bank, cmd.row, cmd.col};
    assign cmd_push[c] = advance_o && (is_rd[c] || is_wr[c]);
    assign due_push[c] = advance_o && is_rd[c];
    assign due_pop[c]  = advance_o && need[c];

    sync_fifo #(.Width(CmdW), .Depth(CmdDepth)) u_cmd (
      .clk_i, .rst_ni, .clear_i (1'b0),
      .push_i (cmd_push[c]), .data_i ({is_wr[c], addr, cmd.wmask, cmd.wdata}),
      .pop_i (cmd_pop[c]), .data_o (cmd_head[c]),
      .empty_o (cmd_empty[c]), .full_o (cmd_full[c]), .count_o ()
    );
    sync_fifo #(.Width(CycW), .Depth(ReadDepth)) u_due (
      .clk_i, .rst_ni, .clear_i (1'b0),
      .push_i (due_push[c]), .data_i (tcyc_q + read_delay), .pop_i (due_pop[c]),
      .data_o (due_head[c]), .empty_o (due_empty[c]), .full_o (due_full[c]), .count_o ()
    );
    // at most ReadDepth entries: one per read in the due queue
    sync_fifo #(.Width(DataW), .Depth(ReadDepth)) u_data (
      .clk_i, .rst_ni, .clear_i (1'b0),
      .push_i (dat_push[c]), .data_i (bs_rsp_rdata_i), .pop_i (due_pop[c]),
      .data_o (dat_head[c]), .empty_o (dat_empty[c]), .full_o (), .count_o ()
    );

    // the controller's read data of the next target cycle
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni)        rvalid_o[c] <= 1'b0;
      else if (advance_o) rvalid_o[c] <= need[c];
    end
    always_ff @(posedge clk_i) begin
      if (advance_o && need[c]) rdata_o[c] <= dat_head[c];
    end
  end

  assign advance_o = &ok && !hold_i;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni)        tcyc_q <= '0;
    else if (advance_o) tcyc_q <= tcyc_q + 1'b1;
  end

  // ---------------- backing store: channels round-robin, one request per host cycle
  logic [ChW-1:0] rr_q, pick;
  logic           any;
  always_comb begin
    any  = 1'b0;
    pick = rr_q;
    for (int unsigned k = 0; k < NumChannels; k++) begin
      if (!any && !cmd_empty[ChW'(32'(rr_q) + k)]) begin
        any  = 1'b1;
        pick = ChW'(32'(rr_q) + k);
      end
    end
  end

  logic            route_full, route_empty, route_push, issue;
  logic [ChW-1:0]  route_head;
  logic            head_write;
  assign head_write     = cmd_head[pick][CmdW-1];
  assign bs_req_valid_o = any && (head_write || !route_full);
  assign bs_req_write_o = head_write;
  assign bs_req_addr_o  = cmd_head[pick][CmdW-2 -: BsAddrW];
  assign bs_req_wmask_o = cmd_head[pick][DataW +: MaskW];
  assign bs_req_wdata_o = cmd_head[pick][DataW-1:0];
  assign issue          = bs_req_valid_o && bs_req_ready_i;
  assign route_push     = issue && !head_write;
  for (genvar c = 0; c < NumChannels; c++) begin : g_pop
    assign cmd_pop[c]  = issue && (pick == ChW'(c));
    assign dat_push[c] = bs_rsp_valid_i && (route_head == ChW'(c));
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni)    rr_q <= '0;
    else if (issue) rr_q <= pick + 1'b1;
  end

  assign idle_o = (&cmd_empty) && route_empty;

  // which channel each backing-store read answers, in request order
  sync_fifo #(.Width(ChW), .Depth(RouteDepth)) u_route (
    .clk_i, .rst_ni, .clear_i (1'b0),
    .push_i (route_push), .data_i (pick), .pop_i (bs_rsp_valid_i), .data_o (route_head),
    .empty_o (route_empty), .full_o (route_full), .count_o ()
  );

  `TPU_ASSERT_INIT
  `TPU_ASSERT(chk_rsp_expected, !(bs_rsp_valid_i && route_empty),
              "dram_shim: backing-store answer without a read")
  for (genvar c = 0; c < NumChannels; c++) begin : g_check
    `TPU_ASSERT(chk_due_ahead, due_empty[c] || due_head[c] > tcyc_q,
                "dram_shim: a read's due cycle passed without its data")
  end
endmodule
