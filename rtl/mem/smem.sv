// SPDX-License-Identifier: Apache-2.0
// Scalar memory of 32-bit words, in block RAM (sram_1w1r, docs/fpga.md). The CSR port reads and
// writes single words; the DMA moves whole rows of Dim/4 words; the vector unit reads a
// (scale, shift) pair, words w and w+1.
//
// Word w sits in word bank w % (Dim/4) at index w / (Dim/4), so a DMA row is one index of every
// bank and a pair of words two different banks. Reads are synchronous:
//   - the CSR and DMA ports give the word / row they will read in the next cycle (*_next_i) and
//     get it then, as a combinational read of that cycle would (transparent reads);
//   - the vector unit's pair is read in the cycle vec_addr_i is presented and arrives in the
//     next, as the combinational read of the presenting cycle would have seen it.
// One copy of the banks per reader (CSR, DMA, vector unit): a block RAM has one read port beside
// its write port. The two writers never meet: the DMA holds its SMEM write back while the CSR
// port writes (dma_engine's smem_wait_i).
`include "tpu_assert.svh"

module smem #(
  parameter int unsigned Dim   = 16,
  parameter int unsigned Words = 1024,
  localparam int unsigned WordW = $clog2(Words),
  localparam int unsigned RowWords = Dim / 4,
  localparam int unsigned RowW = (Words / RowWords > 1) ? $clog2(Words / RowWords) : 1
) (
  input  logic                       clk_i,
  input  logic                       rst_ni,
  input  logic                       csr_we_i,
  input  logic [WordW-1:0]           csr_addr_i,       // the word written this cycle
  input  logic [31:0]                csr_wdata_i,
  input  logic [WordW-1:0]           csr_raddr_next_i, // the word read in the next cycle
  output logic [31:0]                csr_rdata_o,
  input  logic                       dma_we_i,
  input  logic [RowW-1:0]            dma_wrow_i,
  input  logic [RowWords-1:0][31:0]  dma_wdata_i,
  input  logic [RowW-1:0]            dma_rrow_next_i,  // the row read in the next cycle
  output logic [RowWords-1:0][31:0]  dma_rdata_o,
  input  logic [WordW-1:0]           vec_addr_i,
  output logic [1:0][31:0]           vec_rdata_o       // words vec_addr_i, +1 of the last cycle
);
  localparam int unsigned BankW = $clog2(RowWords);

  if (RowWords < 2 || (RowWords & (RowWords - 1)) != 0) begin : g_bad_dim
    $error("smem: Dim/4 (%0d) must be a power of two of at least 2 (two word banks)", RowWords);
  end

  // the write of each bank this cycle: a whole DMA row, or the CSR's word
  logic [RowWords-1:0]           bank_we;
  logic [RowWords-1:0][RowW-1:0] bank_widx;
  logic [RowWords-1:0][31:0]     bank_wdata;
  for (genvar b = 0; b < RowWords; b++) begin : g_write
    logic csr_hit;
    assign csr_hit       = csr_we_i && (csr_addr_i[BankW-1:0] == BankW'(b));
    assign bank_we[b]    = dma_we_i || csr_hit;
    assign bank_widx[b]  = csr_hit ? RowW'(csr_addr_i >> BankW) : dma_wrow_i;
    assign bank_wdata[b] = csr_hit ? csr_wdata_i : dma_wdata_i[b];
  end

  // per bank: the index read for the vector unit's pair (word w in bank w%R, w+1 in the next bank,
  // one index on when that wraps to bank 0)
  logic [RowW-1:0] vec_idx;
  logic [BankW-1:0] vec_bank, vec_bank_q, vec_bank1, csr_bank_q;
  logic [RowWords-1:0] vec_below;  // banks below word w's: they hold w+1 only after a wrap
  assign vec_idx   = RowW'(vec_addr_i >> BankW);
  assign vec_bank  = vec_addr_i[BankW-1:0];
  assign vec_below = ~({RowWords{1'b1}} << vec_bank);

  logic [RowWords-1:0][31:0] csr_word, vec_word;
  for (genvar b = 0; b < RowWords; b++) begin : g_bank
    sram_1w1r #(.Width(32), .Depth(Words / RowWords), .Transparent(1'b1)) u_csr (
      .clk_i, .we_i (bank_we[b]), .waddr_i (bank_widx[b]), .wdata_i (bank_wdata[b]),
      .re_i (1'b1), .raddr_i (RowW'(csr_raddr_next_i >> BankW)), .rdata_o (csr_word[b])
    );
    sram_1w1r #(.Width(32), .Depth(Words / RowWords), .Transparent(1'b1)) u_dma (
      .clk_i, .we_i (bank_we[b]), .waddr_i (bank_widx[b]), .wdata_i (bank_wdata[b]),
      .re_i (1'b1), .raddr_i (dma_rrow_next_i), .rdata_o (dma_rdata_o[b])
    );
    sram_1w1r #(.Width(32), .Depth(Words / RowWords), .Transparent(1'b0)) u_vec (
      .clk_i, .we_i (bank_we[b]), .waddr_i (bank_widx[b]), .wdata_i (bank_wdata[b]),
      .re_i (1'b1), .raddr_i (vec_below[b] ? vec_idx + 1'b1 : vec_idx),
      .rdata_o (vec_word[b])
    );
  end

  always_ff @(posedge clk_i) begin
    csr_bank_q <= csr_raddr_next_i[BankW-1:0];
    vec_bank_q <= vec_bank;
  end
  assign csr_rdata_o    = csr_word[csr_bank_q];
  assign vec_rdata_o[0] = vec_word[vec_bank_q];
  assign vec_bank1      = vec_bank_q + 1'b1;
  assign vec_rdata_o[1] = vec_word[vec_bank1];

  `TPU_ASSERT_INIT
  `TPU_ASSERT(chk_one_writer, !(dma_we_i && csr_we_i), "smem: DMA and CSR write in one cycle")
endmodule
