// SPDX-License-Identifier: Apache-2.0
// The HBM side of the board top: the RTL controller on the gated target clock, and the DRAM shim
// with its backing-store port on the host clock (docs/fpga.md "The host-decoupled DRAM model").
//
// Its burst port and taps are hbm_ctrl's port structs (hbm_spec_pkg::req_t, rsp_t, cmd_t). Instead
// of taking read data from a device model, it shows what the shim gave the controller (rdata_o),
// for the harness's bit-exact check against the C++ device model, which it runs beside as the
// timing checker. target_en_o says
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
  // hbm_ctrl's ports (hbm_spec_pkg::req_t, rsp_t, cmd_t, rdata_t); the last three are taps
  input  logic [NumPorts-1:0][hbm_spec_pkg::ReqBits-1:0]      req_i,
  output logic [NumChannels-1:0][hbm_spec_pkg::RspBits-1:0]   rsp_o,
  output logic [NumChannels-1:0][hbm_spec_pkg::CmdBits-1:0]   cmd_o,
  output logic [NumChannels-1:0][hbm_spec_pkg::RdataBits-1:0] rdata_o,  // the shim's read data
  output logic [NumChannels-1:0][hbm_spec_pkg::NumStats*hbm_spec_pkg::StatW-1:0] stats_o,
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
  clock_gate u_gate (.clk_i, .en_i (advance), .clk_o (tclk));
  assign target_en_o = advance;

  logic [NumChannels-1:0]                          rvalid;
  logic [NumChannels-1:0][hbm_spec_pkg::DataW-1:0] rdata;
  for (genvar c = 0; c < NumChannels; c++) begin : g_channel
    assign rdata_o[c] = {rvalid[c], rdata[c]};  // hbm_spec_pkg::rdata_t
  end

  hbm_ctrl #(
    .NumChannels (NumChannels), .NumPorts (NumPorts), .BankGroups (BankGroups),
    .BanksPerGroup (BanksPerGroup), .AddrW (AddrW)
  ) u_ctrl (
    .clk_i (tclk), .rst_ni, .timing_i, .amap_i, .page_policy_i, .per_bank_refresh_i,
    .req_valid_i, .req_ready_o, .req_i, .rsp_o, .cmd_o, .rdata_i (rdata_o), .stats_o
  );

  dram_shim #(
    .NumChannels (NumChannels), .BankGroups (BankGroups), .BanksPerGroup (BanksPerGroup)
  ) u_shim (
    .clk_i, .rst_ni, .timing_i, .cmd_i (cmd_o), .rvalid_o (rvalid), .rdata_o (rdata),
    .hold_i (target_hold_i), .idle_o (shim_idle_o), .advance_o (advance), .target_cycle_o,
    .bs_req_valid_o, .bs_req_ready_i, .bs_req_write_o, .bs_req_addr_o, .bs_req_wdata_o,
    .bs_req_wmask_o, .bs_rsp_valid_i, .bs_rsp_rdata_i
  );
endmodule
