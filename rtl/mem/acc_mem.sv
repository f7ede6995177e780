// Accumulator memory: rows of Dim int32 lanes. The MXU writes a result row or adds it in place
// (read-modify-write in one cycle); the vector unit and the DMA read rows combinationally.
module acc_mem #(
  parameter int unsigned Dim  = 16,
  parameter int unsigned Rows = 2048,
  localparam int unsigned RowW = $clog2(Rows)
) (
  input  logic                  clk_i,
  input  logic                  we_i,
  input  logic                  accumulate_i,
  input  logic [RowW-1:0]       waddr_i,
  input  logic [Dim-1:0][31:0]  wdata_i,
  input  logic [RowW-1:0]       vec_raddr_i,
  output logic [Dim-1:0][31:0]  vec_rdata_o,
  input  logic [RowW-1:0]       dma_raddr_i,
  output logic [Dim-1:0][31:0]  dma_rdata_o
);
  logic [Dim-1:0][31:0] mem_q [Rows];

  assign vec_rdata_o = mem_q[vec_raddr_i];
  assign dma_rdata_o = mem_q[dma_raddr_i];

  logic [Dim-1:0][31:0] row_d;
  always_comb begin
    for (int unsigned n = 0; n < Dim; n++) begin
      row_d[n] = accumulate_i ? mem_q[waddr_i][n] + wdata_i[n] : wdata_i[n];
    end
  end

  always_ff @(posedge clk_i) begin
    if (we_i) mem_q[waddr_i] <= row_d;
  end
endmodule
