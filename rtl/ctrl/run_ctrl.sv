// SPDX-License-Identifier: Apache-2.0
// Run control of the core: STATUS (busy / done / error and its code) and ERROR_INFO. A run ends
// when everything is drained, or at the first error: an illegal opcode at fetch, an out-of-range
// operand at a queue head, a semaphore overflow, or a deadlock (every non-empty queue's head waits
// on a semaphore and nothing else can move) that persisted for 15 cycles.
module run_ctrl (
  input  logic            clk_i,
  input  logic            rst_ni,
  input  logic            start_i,
  input  logic            clear_i,
  // fetch
  input  logic            fetch_stopped_i,
  input  logic            fetch_idle_i,
  input  logic            fetch_stall_i,
  input  logic            fetch_illegal_i,
  input  logic [31:0]     fetch_pc_i,
  // queues and engines: 0 DMA, 1 MXU, 2 vector
  input  logic [2:0]      q_empty_i,
  input  logic [2:0][31:0] head_pc_i,
  input  logic [2:0]      eng_busy_i,
  input  logic [2:0]      eng_stall_sem_i,
  input  logic [2:0]      eng_err_i,
  input  logic            sem_overflow_i,
  // status
  output logic            busy_o,
  output logic            done_o,
  output logic            err_o,
  output logic [7:0]      err_code_o,
  output logic [31:0]     err_pc_o
);
  logic        busy_q, done_q, err_q;
  logic [7:0]  err_code_q;
  logic [31:0] err_pc_q;
  logic [3:0]  deadlock_cnt_q;

  logic all_drained, deadlock_now;
  assign all_drained = fetch_stopped_i && fetch_idle_i && (&q_empty_i) && !(|eng_busy_i);
  always_comb begin
    deadlock_now = busy_q && fetch_idle_i && (fetch_stopped_i || fetch_stall_i) && !(|eng_busy_i) &&
                   (!(&q_empty_i) || fetch_stall_i);
    for (int unsigned q = 0; q < 3; q++) begin
      if (!q_empty_i[q] && !eng_stall_sem_i[q]) deadlock_now = 1'b0;
    end
  end

  // The first error in priority order is the one reported.
  logic        err_now;
  logic [7:0]  err_code_now;
  logic [31:0] err_pc_now;
  always_comb begin
    err_now      = 1'b1;
    err_code_now = tpu_pkg::ErrNone;
    err_pc_now   = fetch_pc_i;
    if (fetch_illegal_i) begin
      err_code_now = tpu_pkg::ErrIllegalOpcode;
    end else if (eng_err_i[0]) begin
      err_code_now = tpu_pkg::ErrAddressRange; err_pc_now = head_pc_i[0];
    end else if (eng_err_i[1]) begin
      err_code_now = tpu_pkg::ErrAddressRange; err_pc_now = head_pc_i[1];
    end else if (eng_err_i[2]) begin
      err_code_now = tpu_pkg::ErrAddressRange; err_pc_now = head_pc_i[2];
    end else if (sem_overflow_i) begin
      err_code_now = tpu_pkg::ErrSemOverflow;
    end else if (deadlock_cnt_q == 4'hF) begin
      err_code_now = tpu_pkg::ErrDeadlock;
    end else begin
      err_now = 1'b0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q <= 1'b0; done_q <= 1'b0; err_q <= 1'b0; err_code_q <= '0;
      err_pc_q <= '0; deadlock_cnt_q <= '0;
    end else if (clear_i) begin
      busy_q <= 1'b0; done_q <= 1'b0; err_q <= 1'b0; err_code_q <= '0; err_pc_q <= '0;
      deadlock_cnt_q <= '0;
    end else if (start_i) begin
      busy_q <= 1'b1; done_q <= 1'b0; err_q <= 1'b0; err_code_q <= '0; deadlock_cnt_q <= '0;
    end else if (busy_q) begin
      deadlock_cnt_q <= deadlock_now ? deadlock_cnt_q + 1'b1 : '0;
      if (err_now) begin
        busy_q <= 1'b0; err_q <= 1'b1; err_code_q <= err_code_now; err_pc_q <= err_pc_now;
      end else if (all_drained) begin
        busy_q <= 1'b0; done_q <= 1'b1;
      end
    end
  end

  assign busy_o     = busy_q;
  assign done_o     = done_q;
  assign err_o      = err_q;
  assign err_code_o = err_code_q;
  assign err_pc_o   = err_pc_q;
endmodule
