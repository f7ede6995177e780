// SPDX-License-Identifier: Apache-2.0
// The HBM side of the board top: the RTL controller on the gated target clock, and the DRAM shim
// with its backing-store port on the host clock (docs/fpga.md "The host-decoupled DRAM model").
//
// Its burst port and taps are those of hbm_ctrl_harness, so the C++ HBM system drives it like the
// simulation top. Instead of taking read data from a device model (rvalid_i/rdata_i), it shows
// what the shim gave the controller (rvalid_o/rdata_o), for the harness's bit-exact check
// against the C++ device model, which it runs beside as the timing checker. target_en_o says
// whether this host cycle ends with a target clock edge; target_cycle_o counts those edges.
// target_hold_i stops the target clock while the host loads or reads memory behind the target's
// back; shim_idle_o says that every posted write has reached the backing store.
module hbm_board_top #(
  parameter int unsigned NumChannels   = 8,
  parameter int unsigned NumPorts      = 1,
  parameter int unsigned BankGroups    = 4,
  parameter int unsigned BanksPerGroup = 4,
  parameter int unsigned AddrW         = 40,
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
  input  logic [NumPorts-1:0]                  req_valid_i,
  output logic [NumPorts-1:0]                  req_ready_o,
  input  logic [NumPorts-1:0]                  req_write_i,
  input  logic [AddrW-1:0]                     req_addr_i    [NumPorts],
  input  logic [hbm_spec_pkg::IdW-1:0]         req_id_i      [NumPorts],
  input  logic [hbm_spec_pkg::DataW-1:0]       req_wdata_i   [NumPorts],
  input  logic [hbm_spec_pkg::MaskW-1:0]       req_wmask_i   [NumPorts],
  output logic [NumChannels-1:0]               rsp_valid_o,
  output logic [hbm_spec_pkg::IdW-1:0]         rsp_id_o      [NumChannels],
  output logic [hbm_spec_pkg::DataW-1:0]       rsp_data_o    [NumChannels],
  output logic [NumChannels-1:0]               bresp_valid_o,
  output logic [hbm_spec_pkg::IdW-1:0]         bresp_id_o    [NumChannels],
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
  input  logic                                 target_hold_i,  // stop the target clock
  output logic                                 shim_idle_o,    // nothing queued for the backing store
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
  logic tclk, advance;
  target_clock_gate u_gate (.clk_i, .en_i (advance), .clk_o (tclk));
  assign target_en_o = advance;

  // the command bus as the shim takes it (packed), the read data as the controller takes it
  logic [NumChannels-1:0][2:0]                     cmd;
  logic [NumChannels-1:0][BgW-1:0]                 cmd_bg;
  logic [NumChannels-1:0][BaW-1:0]                 cmd_bank;
  logic [NumChannels-1:0][hbm_spec_pkg::RowW-1:0]  cmd_row;
  logic [NumChannels-1:0][hbm_spec_pkg::ColW-1:0]  cmd_col;
  logic [NumChannels-1:0][hbm_spec_pkg::DataW-1:0] cmd_wdata, rdata;
  logic [NumChannels-1:0][hbm_spec_pkg::MaskW-1:0] cmd_wmask;
  for (genvar c = 0; c < NumChannels; c++) begin : g_channel
    assign cmd[c]       = 3'(cmd_o[c]);
    assign cmd_bg[c]    = cmd_bg_o[c];
    assign cmd_bank[c]  = cmd_bank_o[c];
    assign cmd_row[c]   = cmd_row_o[c];
    assign cmd_col[c]   = cmd_col_o[c];
    assign cmd_wdata[c] = cmd_wdata_o[c];
    assign cmd_wmask[c] = cmd_wmask_o[c];
    assign rdata_o[c]   = rdata[c];
  end

  hbm_ctrl_harness #(
    .NumChannels (NumChannels), .NumPorts (NumPorts), .BankGroups (BankGroups),
    .BanksPerGroup (BanksPerGroup), .AddrW (AddrW)
  ) u_ctrl (
    .clk_i (tclk), .rst_ni, .timing_i, .amap_i, .page_policy_i, .per_bank_refresh_i,
    .req_valid_i, .req_ready_o, .req_write_i, .req_addr_i, .req_id_i, .req_wdata_i, .req_wmask_i,
    .rsp_valid_o, .rsp_id_o, .rsp_data_o, .bresp_valid_o, .bresp_id_o,
    .cmd_valid_o, .cmd_o, .cmd_bg_o, .cmd_bank_o, .cmd_row_o, .cmd_col_o, .cmd_wdata_o,
    .cmd_wmask_o, .rvalid_i (rvalid_o), .rdata_i (rdata_o), .stats_o
  );

  dram_shim #(
    .NumChannels (NumChannels), .BankGroups (BankGroups), .BanksPerGroup (BanksPerGroup)
  ) u_shim (
    .clk_i, .rst_ni, .timing_i,
    .cmd_valid_i (cmd_valid_o), .cmd_i (cmd), .cmd_bg_i (cmd_bg), .cmd_bank_i (cmd_bank),
    .cmd_row_i (cmd_row), .cmd_col_i (cmd_col), .cmd_wdata_i (cmd_wdata), .cmd_wmask_i (cmd_wmask),
    .rvalid_o, .rdata_o (rdata), .hold_i (target_hold_i), .idle_o (shim_idle_o),
    .advance_o (advance), .target_cycle_o,
    .bs_req_valid_o, .bs_req_ready_i, .bs_req_write_o, .bs_req_addr_o, .bs_req_wdata_o,
    .bs_req_wmask_o, .bs_rsp_valid_i, .bs_rsp_rdata_i
  );
endmodule
