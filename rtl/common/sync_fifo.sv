// SPDX-License-Identifier: Apache-2.0
// Synchronous FIFO with a registered storage array; the head is readable combinationally.
`include "tpu_assert.svh"

module sync_fifo #(
  parameter int unsigned Width = 32,
  parameter int unsigned Depth = 8   // power of two
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             clear_i,
  input  logic             push_i,
  input  logic [Width-1:0] data_i,
  input  logic             pop_i,
  output logic [Width-1:0] data_o,
  output logic             empty_o,
  output logic             full_o,
  output logic [$clog2(Depth):0] count_o
);
  localparam int unsigned PtrW = $clog2(Depth);

  logic [Width-1:0] mem_q [Depth];
  logic [PtrW-1:0]  rd_q, wr_q;
  logic [PtrW:0]    count_q;

  assign data_o  = mem_q[rd_q];
  assign empty_o = (count_q == '0);
  assign full_o  = (count_q == (PtrW+1)'(Depth));
  assign count_o = count_q;

  always_ff @(posedge clk_i) begin
    if (push_i) mem_q[wr_q] <= data_i;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rd_q    <= '0;
      wr_q    <= '0;
      count_q <= '0;
    end else if (clear_i) begin
      rd_q    <= '0;
      wr_q    <= '0;
      count_q <= '0;
    end else begin
      if (push_i) wr_q <= wr_q + 1'b1;
      if (pop_i)  rd_q <= rd_q + 1'b1;
      count_q <= count_q + (PtrW+1)'(push_i) - (PtrW+1)'(pop_i);
    end
  end

  `TPU_ASSERT_INIT
  `TPU_ASSERT_IF(chk_push_full, !clear_i, !(push_i && full_o && !pop_i), "sync_fifo: push while full")
  `TPU_ASSERT_IF(chk_pop_empty, !clear_i, !(pop_i && empty_o), "sync_fifo: pop while empty")
endmodule
