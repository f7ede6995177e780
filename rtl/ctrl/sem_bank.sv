// SPDX-License-Identifier: Apache-2.0
// Hardware semaphores that order the decoupled queues. A waiter is granted when what the granted
// higher-priority waiters (lower index) leave of the semaphore is at least its count; a granted
// waiter that takes (take_i) subtracts its count. Signals add one each and may arrive from several
// engines in one cycle.
module sem_bank #(
  parameter int unsigned NumWaiters = 3,
  parameter int unsigned NumSignals = 8
) (
  input  logic                                               clk_i,
  input  logic                                               rst_ni,
  input  logic                                               clear_i,
  input  logic [NumWaiters-1:0]                              wait_req_i,
  input  logic [NumWaiters-1:0][4:0]                         wait_sem_i,
  input  logic [NumWaiters-1:0][7:0]                         wait_cnt_i,
  output logic [NumWaiters-1:0]                              wait_gnt_o,
  input  logic [NumWaiters-1:0]                              take_i,
  input  logic [NumSignals-1:0]                              sig_valid_i,
  input  logic [NumSignals-1:0][4:0]                         sig_sem_i,
  input  logic                                               csr_we_i,
  input  logic [4:0]                                         csr_sem_i,
  input  logic [tpu_pkg::SemWidth-1:0]                       csr_wdata_i,
  output logic [tpu_pkg::NumSems-1:0][tpu_pkg::SemWidth-1:0] value_o,
  output logic                                               overflow_o
);
  logic [tpu_pkg::NumSems-1:0][tpu_pkg::SemWidth-1:0] value_q, value_d;

  assign value_o = value_q;

  // In priority order, each waiter sees what the granted higher-priority waiters leave of the
  // semaphore, so one that cannot be satisfied never blocks another.
  always_comb begin
    logic [tpu_pkg::SemWidth:0]       left;
    logic [NumWaiters-1:0]   gnt;
    gnt = '0;
    for (int unsigned w = 0; w < NumWaiters; w++) begin
      left = {1'b0, value_q[wait_sem_i[w]]};
      for (int unsigned v = 0; v < w; v++) begin
        if (gnt[v] && wait_sem_i[v] == wait_sem_i[w]) left = left - (tpu_pkg::SemWidth+1)'(wait_cnt_i[v]);
      end
      gnt[w] = wait_req_i[w] && (left >= (tpu_pkg::SemWidth+1)'(wait_cnt_i[w]));
    end
    wait_gnt_o = gnt;
  end

  // The update, per semaphore: granted takes subtract their counts, then each signal adds one
  // (overflow when the sum passes the width, which is where adding them one at a time would
  // first carry), then a CSR write replaces the value. One adder chain per semaphore rather than
  // a chain of indexed read-modify-writes over the whole bank, which synthesis cannot share.
  localparam int unsigned IncW = $clog2(NumSignals + 1);
  logic [tpu_pkg::NumSems-1:0] sem_overflow;
  for (genvar k = 0; k < tpu_pkg::NumSems; k++) begin : g_sem
    logic [tpu_pkg::SemWidth-1:0] dec, after_take;
    logic [IncW-1:0]              inc;
    logic [tpu_pkg::SemWidth:0]   sum;
    always_comb begin
      dec = '0;
      for (int unsigned w = 0; w < NumWaiters; w++) begin
        if (take_i[w] && wait_gnt_o[w] && wait_sem_i[w] == 5'(k)) begin
          dec = dec + tpu_pkg::SemWidth'(wait_cnt_i[w]);
        end
      end
      inc = '0;
      for (int unsigned s = 0; s < NumSignals; s++) begin
        if (sig_valid_i[s] && sig_sem_i[s] == 5'(k)) inc = inc + 1'b1;
      end
    end
    assign after_take      = value_q[k] - dec;
    assign sum             = {1'b0, after_take} + (tpu_pkg::SemWidth+1)'(inc);
    assign sem_overflow[k] = sum[tpu_pkg::SemWidth];
    assign value_d[k]      = (csr_we_i && csr_sem_i == 5'(k)) ? csr_wdata_i : sum[tpu_pkg::SemWidth-1:0];
  end
  assign overflow_o = |sem_overflow;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni)      value_q <= '0;
    else if (clear_i) value_q <= '0;
    else              value_q <= value_d;
  end
endmodule
