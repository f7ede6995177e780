// SPDX-License-Identifier: Apache-2.0
// Simple dual-port RAM: one write port, one synchronous read port, coded so that synthesis infers
// block RAM (docs/fpga.md). Data read in cycle t (re_i) appears on rdata_o in cycle t+1 and is
// held until the next read.
//   Transparent = 0: a read and a write of one address in one cycle return the old data (the
//                    value a combinational read of that cycle would have seen).
//   Transparent = 1: they return the new data, so a read of next cycle's address gives in that
//                    cycle what a combinational read would (the bypass is a register and a mux
//                    here, not a property asked of the RAM).
module sram_1w1r #(
  parameter int unsigned Width       = 32,
  parameter int unsigned Depth       = 1024,
  parameter bit          Transparent = 1'b0,
  localparam int unsigned AddrW      = (Depth > 1) ? $clog2(Depth) : 1
) (
  input  logic             clk_i,
  input  logic             we_i,
  input  logic [AddrW-1:0] waddr_i,
  input  logic [Width-1:0] wdata_i,
  input  logic             re_i,
  input  logic [AddrW-1:0] raddr_i,
  output logic [Width-1:0] rdata_o
);
  (* ram_style = "block" *) logic [Width-1:0] mem_q [Depth];
  logic [Width-1:0] ram_rdata_q;

  always_ff @(posedge clk_i) begin
    if (we_i) mem_q[waddr_i] <= wdata_i;
  end

  always_ff @(posedge clk_i) begin
    if (re_i) ram_rdata_q <= mem_q[raddr_i];
  end

  if (Transparent) begin : g_bypass
    logic             fwd_q;
    logic [Width-1:0] fwd_data_q;
    always_ff @(posedge clk_i) begin
      if (re_i) begin
        fwd_q      <= we_i && (waddr_i == raddr_i);
        fwd_data_q <= wdata_i;
      end
    end
    assign rdata_o = fwd_q ? fwd_data_q : ram_rdata_q;
  end else begin : g_old_data
    assign rdata_o = ram_rdata_q;
  end
endmodule
