// SPDX-License-Identifier: Apache-2.0
// The board top's memory system (docs/fpga.md): the RTL beat bridge in front of the HBM side
// (controller on the gated target clock, DRAM shim, backing-store port), with its taps as packed
// vectors of hbm_spec_pkg's port structs: the form Yosys reads, so that tpu_board_top is
// synthesized with it. hbm_board_mem wraps it with the unpacked taps the C++ harness reads.
module hbm_board_memsys #(
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
  // taps: the lanes (valid, taken, write, id), and hbm_ctrl's responses, command bus, the shim's
  // read data and the statistics as hbm_spec_pkg::rsp_t, cmd_t, rdata_t, stats_t
  output logic [NumPorts-1:0]                                   lane_valid_o,
  output logic [NumPorts-1:0]                                   lane_ready_o,
  output logic [NumPorts-1:0]                                   lane_write_o,
  output logic [NumPorts-1:0][hbm_spec_pkg::IdW-1:0]            lane_id_o,
  output logic [NumChannels-1:0][hbm_spec_pkg::RspBits-1:0]     rsp_o,
  output logic [NumChannels-1:0][hbm_spec_pkg::CmdBits-1:0]     cmd_o,
  output logic [NumChannels-1:0][hbm_spec_pkg::RdataBits-1:0]   rdata_o,
  output logic [NumChannels-1:0][hbm_spec_pkg::NumStats*hbm_spec_pkg::StatW-1:0] stats_o,
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
  clock_gate u_gate (.clk_i, .en_i (target_en_o), .clk_o (tclk));

  logic [NumPorts-1:0][AddrW-1:0]                  b_addr;
  logic [NumPorts-1:0][hbm_spec_pkg::DataW-1:0]    b_wdata;
  logic [NumPorts-1:0][hbm_spec_pkg::MaskW-1:0]    b_wmask;
  logic [NumPorts-1:0][hbm_spec_pkg::ReqBits-1:0]  req;
  logic [NumChannels-1:0]                          b_rsp_valid, b_bresp_valid;
  logic [NumChannels-1:0][IdW-1:0]                 b_rsp_id, b_bresp_id;
  logic [NumChannels-1:0][hbm_spec_pkg::DataW-1:0] b_rsp_data;

  // plain structs per lane and channel: Yosys misreads members of array elements (docs/fpga.md)
  for (genvar p = 0; p < NumPorts; p++) begin : g_lane
    hbm_spec_pkg::req_t r;
    assign r.write = lane_write_o[p];
    assign r.addr  = hbm_spec_pkg::PortAddrW'(b_addr[p]);
    assign r.id    = lane_id_o[p];
    assign r.wdata = b_wdata[p];
    assign r.wmask = b_wmask[p];
    assign req[p]  = r;
  end
  for (genvar c = 0; c < NumChannels; c++) begin : g_channel
    hbm_spec_pkg::rsp_t r;
    assign r                = rsp_o[c];
    assign b_rsp_valid[c]   = r.rsp_valid;
    assign b_rsp_id[c]      = r.rsp_id;
    assign b_rsp_data[c]    = r.rsp_data;
    assign b_bresp_valid[c] = r.bresp_valid;
    assign b_bresp_id[c]    = r.bresp_id;
  end

  hbm_beat_bridge #(
    .BeatBytes (BeatBytes), .NumChannels (NumChannels), .NumPorts (NumPorts),
    .CoreAddrW (CoreAddrW), .AddrW (AddrW)
  ) u_bridge (
    .clk_i (tclk), .rst_ni,
    .core_req_valid_i, .core_req_ready_o, .core_req_write_i, .core_req_addr_i, .core_req_wdata_i,
    .core_rsp_valid_o, .core_rsp_rdata_o, .core_wack_valid_o,
    .req_valid_o (lane_valid_o), .req_ready_i (lane_ready_o), .req_write_o (lane_write_o),
    .req_addr_o (b_addr), .req_id_o (lane_id_o), .req_wdata_o (b_wdata), .req_wmask_o (b_wmask),
    .rsp_valid_i (b_rsp_valid), .rsp_id_i (b_rsp_id), .rsp_data_i (b_rsp_data),
    .bresp_valid_i (b_bresp_valid), .bresp_id_i (b_bresp_id), .idle_o (bridge_idle_o)
  );

  hbm_board_top #(
    .NumChannels (NumChannels), .NumPorts (NumPorts), .BankGroups (BankGroups),
    .BanksPerGroup (BanksPerGroup), .AddrW (AddrW)
  ) u_hbm (
    .clk_i, .rst_ni, .timing_i, .amap_i, .page_policy_i, .per_bank_refresh_i,
    .req_valid_i (lane_valid_o), .req_ready_o (lane_ready_o), .req_i (req), .rsp_o, .cmd_o,
    .rdata_o, .stats_o,
    .target_hold_i, .shim_idle_o, .target_en_o, .target_cycle_o,
    .bs_req_valid_o, .bs_req_ready_i, .bs_req_write_o, .bs_req_addr_o, .bs_req_wdata_o,
    .bs_req_wmask_o, .bs_rsp_valid_i, .bs_rsp_rdata_i
  );
endmodule
