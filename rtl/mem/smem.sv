// Scalar memory of 32-bit words. The CSR port reads and writes single words; the DMA moves whole
// rows of Dim/4 words; the vector unit reads a (scale, shift) pair. All reads are combinational.
module smem #(
  parameter int unsigned Dim   = 16,
  parameter int unsigned Words = 1024,
  localparam int unsigned WordW = $clog2(Words),
  localparam int unsigned RowWords = Dim / 4,
  localparam int unsigned RowW = (Words / RowWords > 1) ? $clog2(Words / RowWords) : 1
) (
  input  logic                       clk_i,
  input  logic                       csr_we_i,
  input  logic [WordW-1:0]           csr_addr_i,
  input  logic [31:0]                csr_wdata_i,
  output logic [31:0]                csr_rdata_o,
  input  logic                       dma_we_i,
  input  logic [RowW-1:0]            dma_wrow_i,
  input  logic [RowWords-1:0][31:0]  dma_wdata_i,
  input  logic [RowW-1:0]            dma_rrow_i,
  output logic [RowWords-1:0][31:0]  dma_rdata_o,
  input  logic [WordW-1:0]           vec_addr_i,
  output logic [1:0][31:0]           vec_rdata_o
);
  logic [RowWords-1:0][31:0] mem_q [Words / RowWords];

  function automatic logic [31:0] word_at(logic [WordW-1:0] w);
    return mem_q[32'(w) / RowWords][32'(w) % RowWords];
  endfunction

  assign csr_rdata_o    = word_at(csr_addr_i);
  assign dma_rdata_o    = mem_q[dma_rrow_i];
  assign vec_rdata_o[0] = word_at(vec_addr_i);
  assign vec_rdata_o[1] = word_at(vec_addr_i + 1'b1);

  // Both writes land in one cycle; on the same row the CSR word (assigned last) wins.
  always_ff @(posedge clk_i) begin
    if (dma_we_i) mem_q[dma_wrow_i] <= dma_wdata_i;
    if (csr_we_i) mem_q[32'(csr_addr_i) / RowWords][32'(csr_addr_i) % RowWords] <= csr_wdata_i;
  end
endmodule
