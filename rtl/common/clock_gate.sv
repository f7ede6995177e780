// SPDX-License-Identifier: Apache-2.0
// A clock with cycles left out: the board top's target clock (the host clock while the DRAM
// shim's backing store is not late) and each HBM channel's clock (hbm_ctrl: not while the channel
// is idle). A latch-based clock gate, transparent while the clock is low, so the enable settles
// before the rising edge it lets through (the standard integrated clock-gating cell). On an FPGA
// this module is where a global clock buffer with enable goes (Xilinx BUFGCE, docs/fpga.md).
// The simulator runs this behavioural form, and none of the logic of a clock that does not rise.
module clock_gate (
  input  logic clk_i,
  input  logic en_i,
  output logic clk_o
);
  logic en_q;
  always_latch begin
    if (!clk_i) en_q = en_i;
  end
  assign clk_o = clk_i & en_q;
endmodule
