// SPDX-License-Identifier: Apache-2.0
// The head-of-queue issue handshake of an engine (DMA, MXU, vector unit): a head the engine can
// take asks the semaphore bank when it waits (wait_en) and issues (pops) once granted; a head
// with an operand out of range raises err_o instead. An instruction that is complete when it
// issues (a NOP, an empty transfer) signals its semaphore in the same cycle.
module issue_gate #(
  // 1: a faulting head neither asks for nor waits on its semaphore (MXU, vector unit).
  // 0: the head asks before its range is known to be good (the DMA engine): in the cycle a run
  //    faults, its grant can still shadow a lower-priority waiter on the same semaphore.
  parameter bit CheckBeforeWait = 1'b1
) (
  input  logic                            valid_i, // a head is present and the engine can take it
  input  logic                            bad_i, // the head's operands are out of range
  input  logic                            wait_en_i,
  output logic                            sem_req_o,
  input  logic                            sem_gnt_i,
  output logic                            issue_o, // pop the head and start it
  output logic                            stall_sem_o, // the head waits on its semaphore
  output logic                            err_o,
  input  logic                            done_at_issue_i, // the head completes as it issues
  input  logic                            sig_en_i,
  input  logic [tpu_pkg::SemIdxWidth-1:0] sig_sem_i,
  output logic                            sig_valid_o,
  output logic [tpu_pkg::SemIdxWidth-1:0] sig_sem_o
);
  logic ask;
  assign ask = CheckBeforeWait ? (valid_i && !bad_i) : valid_i;

  assign sem_req_o   = ask && wait_en_i;
  assign issue_o     = ask && (!wait_en_i || sem_gnt_i) && !bad_i;
  assign stall_sem_o = ask && wait_en_i && !sem_gnt_i;
  assign err_o       = valid_i && bad_i;

  assign sig_valid_o = issue_o && done_at_issue_i && sig_en_i;
  assign sig_sem_o   = sig_sem_i;
endmodule
