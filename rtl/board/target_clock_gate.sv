// SPDX-License-Identifier: Apache-2.0
// The target clock of the board top: the host clock with cycles left out while the target must
// wait (the DRAM shim's backing store is late). A latch-based clock gate, transparent while the
// clock is low, so the enable settles before the rising edge it lets through (the standard
// integrated clock-gating cell). On an FPGA this module is where a global clock buffer with
// enable goes (Xilinx BUFGCE, docs/fpga.md); Verilator simulates this behavioural form.
module target_clock_gate (
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
