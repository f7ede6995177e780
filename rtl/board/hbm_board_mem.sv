// SPDX-License-Identifier: Apache-2.0
// The board top's memory system as the core's port sees it (hbm_board_memsys: the RTL beat bridge
// and the HBM side, docs/fpga.md) with the taps unpacked per lane and channel, for the C++ harness.
//
// tpu_board_top joins hbm_board_memsys to tpu_top. The simulation harness drives this module with
// the separately Verilated core on the same target clock (the core's edge is the edge target_en_o
// announces), so the board is simulated without a second core model. Besides the core port it
// shows the taps the harness checks and counts with: the lanes and their acceptance, the command
// bus, the read data the shim gave the controller, the responses and the statistics. Never
// synthesized (Yosys does not take unpacked array ports).
module hbm_board_mem #(
  parameter int unsigned BeatBytes     = 16,
  parameter int unsigned NumChannels   = 8,
  parameter int unsigned NumPorts      = 4,
  parameter int unsigned CoreAddrW     = 32,
  parameter int unsigned BankGroups    = 4,
  parameter int unsigned BanksPerGroup = 4,
  parameter int unsigned AddrW         = 40,
  localparam int unsigned BeatW        = 8 * BeatBytes,
  localparam int unsigned BgW          = $clog2(BankGroups),
  localparam int unsigned BaW          = $clog2(BanksPerGroup),
  localparam int unsigned ChW          = (NumChannels > 1) ? $clog2(NumChannels) : 1,
  localparam int unsigned BsAddrW      = ChW + BgW + BaW + hbm_spec_pkg::RowW + hbm_spec_pkg::ColW
) (
  input  logic                                 clk_i,   // host clock
  input  logic                                 rst_ni,
  input  hbm_spec_pkg::timing_t                timing_i,
  input  hbm_spec_pkg::amap_t                  amap_i,
  input  logic                                 page_policy_i,
  input  logic                                 per_bank_refresh_i,
  // the core's memory port, on the target clock
  input  logic                                 core_req_valid_i,
  output logic                                 core_req_ready_o,
  input  logic                                 core_req_write_i,
  input  logic [CoreAddrW-1:0]                 core_req_addr_i,
  input  logic [BeatW-1:0]                     core_req_wdata_i,
  output logic                                 core_rsp_valid_o,
  output logic [BeatW-1:0]                     core_rsp_rdata_o,
  output logic                                 core_wack_valid_o,
  output logic                                 bridge_idle_o,
  // taps: lanes (valid, taken, id, write), responses, command bus, the shim's read data
  output logic [NumPorts-1:0]                  lane_valid_o,
  output logic [NumPorts-1:0]                  lane_ready_o,
  output logic [NumPorts-1:0]                  lane_write_o,
  output logic [hbm_spec_pkg::IdW-1:0]         lane_id_o     [NumPorts],
  output logic [NumChannels-1:0]               rsp_valid_o,
  output logic [hbm_spec_pkg::IdW-1:0]         rsp_id_o      [NumChannels],
  output logic [NumChannels-1:0]               cmd_valid_o,
  output hbm_spec_pkg::cmd_e                   cmd_o         [NumChannels],
  output logic [BgW-1:0]                       cmd_bg_o      [NumChannels],
  output logic [BaW-1:0]                       cmd_bank_o    [NumChannels],
  output logic [hbm_spec_pkg::RowW-1:0]        cmd_row_o     [NumChannels],
  output logic [hbm_spec_pkg::ColW-1:0]        cmd_col_o     [NumChannels],
  output logic [hbm_spec_pkg::DataW-1:0]       cmd_wdata_o   [NumChannels],
  output logic [hbm_spec_pkg::MaskW-1:0]       cmd_wmask_o   [NumChannels],
  output logic [NumChannels-1:0]               rvalid_o,
  output logic [hbm_spec_pkg::DataW-1:0]       rdata_o       [NumChannels],
  output hbm_spec_pkg::stats_t                 stats_o       [NumChannels],
  // target clock and backing store (hbm_board_top)
  input  logic                                 target_hold_i,
  output logic                                 shim_idle_o,
  output logic                                 target_en_o,
  output logic [hbm_spec_pkg::CycW-1:0]        target_cycle_o,
  output logic                                 bs_req_valid_o,
  input  logic                                 bs_req_ready_i,
  output logic                                 bs_req_write_o,
  output logic [BsAddrW-1:0]                   bs_req_addr_o,
  output logic [hbm_spec_pkg::DataW-1:0]       bs_req_wdata_o,
  output logic [hbm_spec_pkg::MaskW-1:0]       bs_req_wmask_o,
  input  logic                                 bs_rsp_valid_i,
  input  logic [hbm_spec_pkg::DataW-1:0]       bs_rsp_rdata_i
);
  logic [NumPorts-1:0][hbm_spec_pkg::IdW-1:0]                  lane_id;
  logic [NumChannels-1:0][hbm_spec_pkg::RspBits-1:0]            rsp;
  logic [NumChannels-1:0][hbm_spec_pkg::CmdBits-1:0]            cmd;
  logic [NumChannels-1:0][hbm_spec_pkg::RdataBits-1:0]          rdata;
  logic [NumChannels-1:0][hbm_spec_pkg::NumStats*hbm_spec_pkg::StatW-1:0] stats;

  for (genvar p = 0; p < NumPorts; p++) begin : g_lane
    assign lane_id_o[p] = lane_id[p];
  end
  for (genvar c = 0; c < NumChannels; c++) begin : g_channel
    /* verilator lint_off UNUSEDSIGNAL */
    hbm_spec_pkg::rsp_t   r;  // the taps show its valid bits and ids
    /* verilator lint_on UNUSEDSIGNAL */
    hbm_spec_pkg::cmd_t   k;
    hbm_spec_pkg::rdata_t d;
    assign r              = rsp[c];
    assign k              = cmd[c];
    assign d              = rdata[c];
    assign rsp_valid_o[c] = r.rsp_valid;
    assign rsp_id_o[c]    = r.rsp_id;
    assign cmd_valid_o[c] = k.valid;
    assign cmd_o[c]       = hbm_spec_pkg::cmd_e'(k.cmd);
    assign cmd_bg_o[c]    = k.bg;
    assign cmd_bank_o[c]  = k.bank;
    assign cmd_row_o[c]   = k.row;
    assign cmd_col_o[c]   = k.col;
    assign cmd_wdata_o[c] = k.wdata;
    assign cmd_wmask_o[c] = k.wmask;
    assign rvalid_o[c]    = d.valid;
    assign rdata_o[c]     = d.data;
    assign stats_o[c]     = stats[c];
  end

  hbm_board_memsys #(
    .BeatBytes (BeatBytes), .NumChannels (NumChannels), .NumPorts (NumPorts),
    .CoreAddrW (CoreAddrW), .BankGroups (BankGroups), .BanksPerGroup (BanksPerGroup),
    .AddrW (AddrW)
  ) u_memsys (
    .clk_i, .rst_ni, .timing_i, .amap_i, .page_policy_i, .per_bank_refresh_i,
    .core_req_valid_i, .core_req_ready_o, .core_req_write_i, .core_req_addr_i, .core_req_wdata_i,
    .core_rsp_valid_o, .core_rsp_rdata_o, .core_wack_valid_o, .bridge_idle_o,
    .lane_valid_o, .lane_ready_o, .lane_write_o, .lane_id_o (lane_id), .rsp_o (rsp),
    .cmd_o (cmd), .rdata_o (rdata), .stats_o (stats),
    .target_hold_i, .shim_idle_o, .target_en_o, .target_cycle_o,
    .bs_req_valid_o, .bs_req_ready_i, .bs_req_write_o, .bs_req_addr_o, .bs_req_wdata_o,
    .bs_req_wmask_o, .bs_rsp_valid_i, .bs_rsp_rdata_i
  );
endmodule
