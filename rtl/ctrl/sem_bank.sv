// Hardware semaphores that order the decoupled queues. A waiter is granted when what the granted
// higher-priority waiters (lower index) leave of the semaphore is at least its count; a granted
// waiter that takes (take_i) subtracts its count. Signals add one each and may arrive from several
// engines in one cycle.
module sem_bank import tpu_pkg::*; #(
  parameter int unsigned NumWaiters = 3,
  parameter int unsigned NumSignals = 8
) (
  input  logic                                   clk_i,
  input  logic                                   rst_ni,
  input  logic                                   clear_i,
  input  logic [NumWaiters-1:0]                  wait_req_i,
  input  logic [NumWaiters-1:0][4:0]             wait_sem_i,
  input  logic [NumWaiters-1:0][7:0]             wait_cnt_i,
  output logic [NumWaiters-1:0]                  wait_gnt_o,
  input  logic [NumWaiters-1:0]                  take_i,
  input  logic [NumSignals-1:0]                  sig_valid_i,
  input  logic [NumSignals-1:0][4:0]             sig_sem_i,
  input  logic                                   csr_we_i,
  input  logic [4:0]                             csr_sem_i,
  input  logic [SemWidth-1:0]                    csr_wdata_i,
  output logic [NumSems-1:0][SemWidth-1:0]       value_o,
  output logic                                   overflow_o
);
  logic [NumSems-1:0][SemWidth-1:0] value_q, value_d;

  assign value_o = value_q;

  // In priority order, each waiter sees what the granted higher-priority waiters leave of the
  // semaphore, so one that cannot be satisfied never blocks another.
  always_comb begin
    logic [SemWidth:0]       left;
    logic [NumWaiters-1:0]   gnt;
    gnt = '0;
    for (int unsigned w = 0; w < NumWaiters; w++) begin
      left = {1'b0, value_q[wait_sem_i[w]]};
      for (int unsigned v = 0; v < w; v++) begin
        if (gnt[v] && wait_sem_i[v] == wait_sem_i[w]) left = left - (SemWidth+1)'(wait_cnt_i[v]);
      end
      gnt[w] = wait_req_i[w] && (left >= (SemWidth+1)'(wait_cnt_i[w]));
    end
    wait_gnt_o = gnt;
  end

  always_comb begin
    logic [SemWidth:0] sum;
    value_d    = value_q;
    overflow_o = 1'b0;
    sum        = '0;
    for (int unsigned w = 0; w < NumWaiters; w++) begin
      if (take_i[w] && wait_gnt_o[w]) value_d[wait_sem_i[w]] = value_d[wait_sem_i[w]] - SemWidth'(wait_cnt_i[w]);
    end
    for (int unsigned s = 0; s < NumSignals; s++) begin
      if (sig_valid_i[s]) begin
        sum = {1'b0, value_d[sig_sem_i[s]]} + 1'b1;
        if (sum[SemWidth]) overflow_o = 1'b1;
        value_d[sig_sem_i[s]] = sum[SemWidth-1:0];
      end
    end
    if (csr_we_i) value_d[csr_sem_i] = csr_wdata_i;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni)      value_q <= '0;
    else if (clear_i) value_q <= '0;
    else              value_q <= value_d;
  end
endmodule
