// SPDX-License-Identifier: Apache-2.0
// The board top (docs/fpga.md): one tpuemu core and its memory system on the gated target clock,
// the DRAM shim and the backing-store port on the host clock. The firmware's CPU reaches the
// CSRs; a CSR access is a target cycle, so the CPU holds the bus until target_en_o has been
// high once (the harness does the same).
//
// Only instantiates: tpu_top on the target clock, hbm_board_memsys (beat bridge, controller,
// shim). Synthesized whole by scripts/synth.sh --board.
module tpu_board_top #(
  parameter int unsigned Dim            = 16,
  parameter int unsigned VmemRows       = 16384,
  parameter int unsigned VmemBanks      = 8,
  parameter int unsigned AccRows        = 2048,
  parameter int unsigned SmemWords      = 1024,
  parameter int unsigned QueueDepth     = 8,
  parameter int unsigned MemOutstanding = 128,
  parameter int unsigned NumChannels    = 8,
  parameter int unsigned NumPorts       = 4,
  localparam int unsigned ChW           = (NumChannels > 1) ? $clog2(NumChannels) : 1,
  localparam int unsigned BsAddrW       = ChW + 2 + 2 + hbm_spec_pkg::RowW + hbm_spec_pkg::ColW
) (
  input  logic                             clk_i,   // host clock
  input  logic                             rst_ni,
  input  hbm_spec_pkg::timing_t            timing_i,
  input  hbm_spec_pkg::amap_t              amap_i,
  input  logic                             page_policy_i,
  // CSR bus of the core
  input  logic                             csr_valid_i,
  input  logic                             csr_write_i,
  input  logic [tpu_pkg::CsrAddrWidth-1:0] csr_addr_i,
  input  logic [31:0]                      csr_wdata_i,
  output logic [31:0]                      csr_rdata_o,
  output logic                             busy_o,
  output tpu_pkg::trace_t                  trace_o,
  // target clock
  input  logic                             target_hold_i,
  output logic                             shim_idle_o,
  output logic                             target_en_o,
  output logic [hbm_spec_pkg::CycW-1:0]    target_cycle_o,
  // backing store
  output logic                             bs_req_valid_o,
  input  logic                             bs_req_ready_i,
  output logic                             bs_req_write_o,
  output logic [BsAddrW-1:0]               bs_req_addr_o,
  output logic [hbm_spec_pkg::DataW-1:0]   bs_req_wdata_o,
  output logic [hbm_spec_pkg::MaskW-1:0]   bs_req_wmask_o,
  input  logic                             bs_rsp_valid_i,
  input  logic [hbm_spec_pkg::DataW-1:0]   bs_rsp_rdata_i
);
  localparam int unsigned DataW = Dim * 8;

  logic tclk;
  clock_gate u_gate (.clk_i, .en_i (target_en_o), .clk_o (tclk));

  logic                          mem_req_valid, mem_req_ready, mem_req_write;
  logic [tpu_pkg::AddrWidth-1:0] mem_req_addr;
  logic [DataW-1:0]              mem_req_wdata, mem_rsp_rdata;
  logic                          mem_rsp_valid, mem_wack_valid;

  tpu_top #(
    .Dim (Dim), .VmemRows (VmemRows), .VmemBanks (VmemBanks), .AccRows (AccRows),
    .SmemWords (SmemWords), .QueueDepth (QueueDepth), .MemOutstanding (MemOutstanding)
  ) u_core (
    .clk_i (tclk), .rst_ni,
    .csr_valid_i, .csr_write_i, .csr_addr_i, .csr_wdata_i, .csr_rdata_o,
    .mem_req_valid_o (mem_req_valid), .mem_req_ready_i (mem_req_ready),
    .mem_req_write_o (mem_req_write), .mem_req_addr_o (mem_req_addr),
    .mem_req_wdata_o (mem_req_wdata), .mem_rsp_valid_i (mem_rsp_valid),
    .mem_rsp_rdata_i (mem_rsp_rdata), .mem_wack_valid_i (mem_wack_valid),
    .busy_o, .trace_o
  );

  hbm_board_memsys #(
    .BeatBytes (Dim), .NumChannels (NumChannels), .NumPorts (NumPorts),
    .CoreAddrW (tpu_pkg::AddrWidth)
  ) u_mem (
    .clk_i, .rst_ni, .timing_i, .amap_i, .page_policy_i, .per_bank_refresh_i (1'b0),
    .core_req_valid_i (mem_req_valid && mem_req_ready), .core_req_ready_o (mem_req_ready),
    .core_req_write_i (mem_req_write), .core_req_addr_i (mem_req_addr),
    .core_req_wdata_i (mem_req_wdata), .core_rsp_valid_o (mem_rsp_valid),
    .core_rsp_rdata_o (mem_rsp_rdata), .core_wack_valid_o (mem_wack_valid), .bridge_idle_o (),
    .lane_valid_o (), .lane_ready_o (), .lane_write_o (), .lane_id_o (), .rsp_o (), .cmd_o (),
    .rdata_o (), .stats_o (),
    .target_hold_i, .shim_idle_o, .target_en_o, .target_cycle_o,
    .bs_req_valid_o, .bs_req_ready_i, .bs_req_write_o, .bs_req_addr_o, .bs_req_wdata_o,
    .bs_req_wmask_o, .bs_rsp_valid_i, .bs_rsp_rdata_i
  );
endmodule
