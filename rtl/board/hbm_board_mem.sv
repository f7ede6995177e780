// SPDX-License-Identifier: Apache-2.0
// The board top's memory system as the core's port sees it: the RTL beat bridge and the HBM side
// (controller on the gated target clock, DRAM shim, backing-store port), docs/fpga.md.
//
// tpu_board_top joins it to tpu_top. The simulation harness drives this module with the
// separately Verilated core on the same target clock (the core's edge is the edge target_en_o
// announces), so the board is simulated without a second core model. Besides the core port it
// shows the taps the harness checks and counts with: the lanes and their acceptance, the command
// bus, the read data the shim gave the controller, the responses and the statistics.
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
  localparam int unsigned IdW = hbm_spec_pkg::IdW;

  // the bridge runs on the target clock: the edges hbm_board_top's controller takes
  logic tclk;
  target_clock_gate u_gate (.clk_i, .en_i (target_en_o), .clk_o (tclk));

  logic [NumPorts-1:0][AddrW-1:0]                  b_addr;
  logic [NumPorts-1:0][IdW-1:0]                    b_id;
  logic [NumPorts-1:0][hbm_spec_pkg::DataW-1:0]    b_wdata;
  logic [NumPorts-1:0][hbm_spec_pkg::MaskW-1:0]    b_wmask;
  logic [NumChannels-1:0]                          b_bresp_valid;
  logic [NumChannels-1:0][IdW-1:0]                 b_rsp_id, b_bresp_id;
  logic [NumChannels-1:0][hbm_spec_pkg::DataW-1:0] b_rsp_data;
  hbm_spec_pkg::req_t   [NumPorts-1:0]             req;
  hbm_spec_pkg::rsp_t   [NumChannels-1:0]          rsp;
  hbm_spec_pkg::cmd_t   [NumChannels-1:0]          cmd;
  hbm_spec_pkg::rdata_t [NumChannels-1:0]          rdata;
  hbm_spec_pkg::stats_t [NumChannels-1:0]          stats;

  // the lanes and responses as the bridge drives and takes them, the taps as the harness reads them
  for (genvar p = 0; p < NumPorts; p++) begin : g_lane
    assign req[p] = '{write: lane_write_o[p], addr: hbm_spec_pkg::PortAddrW'(b_addr[p]),
                      id: b_id[p], wdata: b_wdata[p], wmask: b_wmask[p]};
    assign lane_id_o[p] = b_id[p];
  end
  for (genvar c = 0; c < NumChannels; c++) begin : g_channel
    assign rsp_valid_o[c]   = rsp[c].rsp_valid;
    assign b_rsp_id[c]      = rsp[c].rsp_id;
    assign rsp_id_o[c]      = rsp[c].rsp_id;
    assign b_rsp_data[c]    = rsp[c].rsp_data;
    assign b_bresp_valid[c] = rsp[c].bresp_valid;
    assign b_bresp_id[c]    = rsp[c].bresp_id;
    assign cmd_valid_o[c]   = cmd[c].valid;
    assign cmd_o[c]         = hbm_spec_pkg::cmd_e'(cmd[c].cmd);
    assign cmd_bg_o[c]      = cmd[c].bg;
    assign cmd_bank_o[c]    = cmd[c].bank;
    assign cmd_row_o[c]     = cmd[c].row;
    assign cmd_col_o[c]     = cmd[c].col;
    assign cmd_wdata_o[c]   = cmd[c].wdata;
    assign cmd_wmask_o[c]   = cmd[c].wmask;
    assign rvalid_o[c]      = rdata[c].valid;
    assign rdata_o[c]       = rdata[c].data;
    assign stats_o[c]       = stats[c];
  end

  hbm_beat_bridge #(
    .BeatBytes (BeatBytes), .NumChannels (NumChannels), .NumPorts (NumPorts),
    .CoreAddrW (CoreAddrW), .AddrW (AddrW)
  ) u_bridge (
    .clk_i (tclk), .rst_ni,
    .core_req_valid_i, .core_req_ready_o, .core_req_write_i, .core_req_addr_i, .core_req_wdata_i,
    .core_rsp_valid_o, .core_rsp_rdata_o, .core_wack_valid_o,
    .req_valid_o (lane_valid_o), .req_ready_i (lane_ready_o), .req_write_o (lane_write_o),
    .req_addr_o (b_addr), .req_id_o (b_id), .req_wdata_o (b_wdata), .req_wmask_o (b_wmask),
    .rsp_valid_i (rsp_valid_o), .rsp_id_i (b_rsp_id), .rsp_data_i (b_rsp_data),
    .bresp_valid_i (b_bresp_valid), .bresp_id_i (b_bresp_id), .idle_o (bridge_idle_o)
  );

  hbm_board_top #(
    .NumChannels (NumChannels), .NumPorts (NumPorts), .BankGroups (BankGroups),
    .BanksPerGroup (BanksPerGroup), .AddrW (AddrW)
  ) u_hbm (
    .clk_i, .rst_ni, .timing_i, .amap_i, .page_policy_i, .per_bank_refresh_i,
    .req_valid_i (lane_valid_o), .req_ready_o (lane_ready_o), .req_i (req), .rsp_o (rsp),
    .cmd_o (cmd), .rdata_o (rdata), .stats_o (stats),
    .target_hold_i, .shim_idle_o, .target_en_o, .target_cycle_o,
    .bs_req_valid_o, .bs_req_ready_i, .bs_req_write_o, .bs_req_addr_o, .bs_req_wdata_o,
    .bs_req_wmask_o, .bs_rsp_valid_i, .bs_rsp_rdata_i
  );
endmodule
