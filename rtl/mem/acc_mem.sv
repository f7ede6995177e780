// SPDX-License-Identifier: Apache-2.0
// Accumulator memory: rows of Dim int32 lanes, in block RAM (sram_1w1r, docs/fpga.md).
//
// The MXU writes a result row or adds it in place. The add is a read-modify-write over two
// cycles: the row is read in the cycle the result arrives (we_i) and written, old + new, in the
// next. The vector unit and the DMA read rows with a one-cycle synchronous read, so they give the
// row they will need in the next cycle (*_raddr_next_i) and get it then (*_rdata_o), and the
// pending second half of a read-modify-write is forwarded to them. Together that makes every
// read see exactly what a combinational read of a single-cycle memory would: no cycle of any
// program changes.
//
// Three copies of the rows, one per reader (read-modify-write, vector unit, DMA), since a block
// RAM has one read port beside its write port.
module acc_mem #(
  parameter int unsigned Dim  = 16,
  parameter int unsigned Rows = 2048,
  localparam int unsigned RowW = $clog2(Rows)
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  input  logic                  we_i,
  input  logic                  accumulate_i,
  input  logic [RowW-1:0]       waddr_i,
  input  logic [Dim-1:0][31:0]  wdata_i,
  input  logic [RowW-1:0]       vec_raddr_next_i,
  output logic [Dim-1:0][31:0]  vec_rdata_o,
  input  logic [RowW-1:0]       dma_raddr_next_i,
  output logic [Dim-1:0][31:0]  dma_rdata_o
);
  localparam int unsigned RowBits = Dim * 32;

  // second half of the read-modify-write
  logic                 wb_valid_q, wb_accum_q;
  logic [RowW-1:0]      wb_addr_q;
  logic [Dim-1:0][31:0] wb_new_q, wb_old, wb_row;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) wb_valid_q <= 1'b0;
    else         wb_valid_q <= we_i;
  end
  always_ff @(posedge clk_i) begin
    if (we_i) begin
      wb_accum_q <= accumulate_i;
      wb_addr_q  <= waddr_i;
      wb_new_q   <= wdata_i;
    end
  end

  always_comb begin
    for (int unsigned n = 0; n < Dim; n++) begin
      wb_row[n] = wb_accum_q ? wb_old[n] + wb_new_q[n] : wb_new_q[n];
    end
  end

  // The old row: read as the result arrives; the row written back in that very cycle (the
  // previous result's) is forwarded by the transparent read.
  sram_1w1r #(.Width(RowBits), .Depth(Rows), .Transparent(1'b1)) u_rmw (
    .clk_i,
    .we_i (wb_valid_q), .waddr_i (wb_addr_q), .wdata_i (wb_row),
    .re_i (we_i), .raddr_i (waddr_i), .rdata_o (wb_old)
  );

  logic [Dim-1:0][31:0] vec_ram, dma_ram;
  logic [RowW-1:0]      vec_raddr_q, dma_raddr_q;
  sram_1w1r #(.Width(RowBits), .Depth(Rows), .Transparent(1'b1)) u_vec (
    .clk_i,
    .we_i (wb_valid_q), .waddr_i (wb_addr_q), .wdata_i (wb_row),
    .re_i (1'b1), .raddr_i (vec_raddr_next_i), .rdata_o (vec_ram)
  );
  sram_1w1r #(.Width(RowBits), .Depth(Rows), .Transparent(1'b1)) u_dma (
    .clk_i,
    .we_i (wb_valid_q), .waddr_i (wb_addr_q), .wdata_i (wb_row),
    .re_i (1'b1), .raddr_i (dma_raddr_next_i), .rdata_o (dma_ram)
  );
  always_ff @(posedge clk_i) begin
    vec_raddr_q <= vec_raddr_next_i;
    dma_raddr_q <= dma_raddr_next_i;
  end

  // A result that arrived last cycle is, for a single-cycle memory, already in its row.
  assign vec_rdata_o = (wb_valid_q && wb_addr_q == vec_raddr_q) ? wb_row : vec_ram;
  assign dma_rdata_o = (wb_valid_q && wb_addr_q == dma_raddr_q) ? wb_row : dma_ram;
endmodule
