// SPDX-License-Identifier: Apache-2.0
// hbm_ctrl as the C++ harnesses see it: the per-lane and per-channel buses as unpacked arrays,
// which Verilator turns into C arrays indexed by lane or channel (sim/src/hbm, tests/rtl). The
// controller itself has packed struct ports (hbm_spec_pkg::req_t, rsp_t, cmd_t, rdata_t), the
// only form Yosys synthesizes (docs/fpga.md); this top only unpacks them and is never synthesized.
module hbm_ctrl_harness #(
  parameter int unsigned NumChannels   = 8,
  parameter int unsigned NumPorts      = 1,
  parameter int unsigned BankGroups    = 4,
  parameter int unsigned BanksPerGroup = 4,
  parameter int unsigned QueueDepth    = hbm_spec_pkg::QueueSlots,
  parameter int unsigned RdFifoDepth   = 32,
  parameter int unsigned StarveCycles  = hbm_spec_pkg::StarveCycles,
  parameter int unsigned RefStagger    = 0,
  parameter int unsigned AddrW         = 40,
  localparam int unsigned BgW          = $clog2(BankGroups),
  localparam int unsigned BaW          = $clog2(BanksPerGroup)
) (
  input  logic                                 clk_i,
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
  input  logic [NumChannels-1:0]               rvalid_i,
  input  logic [hbm_spec_pkg::DataW-1:0]       rdata_i       [NumChannels],
  output hbm_spec_pkg::stats_t                 stats_o       [NumChannels]
);
  hbm_spec_pkg::req_t   [NumPorts-1:0]    req;
  hbm_spec_pkg::rsp_t   [NumChannels-1:0] rsp;
  hbm_spec_pkg::cmd_t   [NumChannels-1:0] cmd;
  hbm_spec_pkg::rdata_t [NumChannels-1:0] rdata;
  hbm_spec_pkg::stats_t [NumChannels-1:0] stats;

  for (genvar p = 0; p < NumPorts; p++) begin : g_lane
    assign req[p] = '{write: req_write_i[p], addr: hbm_spec_pkg::PortAddrW'(req_addr_i[p]),
                      id: req_id_i[p], wdata: req_wdata_i[p], wmask: req_wmask_i[p]};
  end
  for (genvar c = 0; c < NumChannels; c++) begin : g_channel
    assign rsp_valid_o[c]   = rsp[c].rsp_valid;
    assign rsp_id_o[c]      = rsp[c].rsp_id;
    assign rsp_data_o[c]    = rsp[c].rsp_data;
    assign bresp_valid_o[c] = rsp[c].bresp_valid;
    assign bresp_id_o[c]    = rsp[c].bresp_id;
    assign cmd_valid_o[c]   = cmd[c].valid;
    assign cmd_o[c]         = hbm_spec_pkg::cmd_e'(cmd[c].cmd);
    assign cmd_bg_o[c]      = cmd[c].bg;
    assign cmd_bank_o[c]    = cmd[c].bank;
    assign cmd_row_o[c]     = cmd[c].row;
    assign cmd_col_o[c]     = cmd[c].col;
    assign cmd_wdata_o[c]   = cmd[c].wdata;
    assign cmd_wmask_o[c]   = cmd[c].wmask;
    assign rdata[c]         = '{valid: rvalid_i[c], data: rdata_i[c]};
    assign stats_o[c]       = stats[c];
  end

  hbm_ctrl #(
    .NumChannels (NumChannels), .NumPorts (NumPorts), .BankGroups (BankGroups),
    .BanksPerGroup (BanksPerGroup), .QueueDepth (QueueDepth), .RdFifoDepth (RdFifoDepth),
    .StarveCycles (StarveCycles), .RefStagger (RefStagger), .AddrW (AddrW)
  ) u_ctrl (
    .clk_i, .rst_ni, .timing_i, .amap_i, .page_policy_i, .per_bank_refresh_i,
    .req_valid_i, .req_ready_o, .req_i (req), .rsp_o (rsp), .cmd_o (cmd), .rdata_i (rdata),
    .stats_o (stats)
  );
endmodule
