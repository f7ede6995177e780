// SPDX-License-Identifier: Apache-2.0
// Instruction fetch: prefetches instructions from device memory through the shared memory port
// (several beats in flight) and dispatches them in order into the DMA, MXU and vector queues. An
// instruction whose queue is full stalls dispatch; END stops fetching and drops what was prefetched.
`include "tpu_assert.svh"

module fetch_unit #(
  parameter int unsigned Dim       = 16,
  parameter int unsigned BufInstrs = 8
) (
  input  logic                          clk_i,
  input  logic                          rst_ni,
  input  logic                          clear_i,
  input  logic                          start_i,
  input  logic [tpu_pkg::AddrWidth-1:0] prog_base_i,
  input  logic                          halt_i,
  // memory read requests and their (in-order) responses
  output logic                          req_valid_o,
  input  logic                          req_ready_i,
  output logic [tpu_pkg::AddrWidth-1:0] req_addr_o,
  input  logic                          rsp_valid_i,
  input  logic [Dim*8-1:0]              rsp_data_i,
  // dispatch: queue 0 DMA, 1 MXU, 2 vector
  output logic [2:0]                     q_push_o,
  output logic [tpu_pkg::InstrWidth-1:0] q_instr_o,
  input  logic [2:0]                     q_full_i,
  output logic                           stopped_o,
  output logic                           idle_o,
  output logic                           stall_o,
  output logic                           illegal_o,
  output logic [31:0]                    pc_o,
  output logic                           fetched_o
);
  localparam int unsigned BeatsPerInstr = (Dim >= 32) ? 1 : 32 / Dim;
  localparam int unsigned SlotW   = (Dim >= 32) ? tpu_pkg::InstrWidth : Dim * 8;
  localparam int unsigned Depth   = BufInstrs * BeatsPerInstr;
  localparam int unsigned PtrW    = $clog2(Depth);
  localparam int unsigned BeatIdxW = (BeatsPerInstr > 1) ? $clog2(BeatsPerInstr) : 1;

  logic [SlotW-1:0] buf_q [Depth];
  logic [PtrW-1:0]  rd_q, wr_q;
  logic [PtrW:0]    buffered_q;     // beats in the buffer
  logic [PtrW:0]    inflight_q;     // beats requested, not yet dispatched (buffer + outstanding)
  logic [PtrW:0]    outstanding_q;  // beats requested, response not yet received
  logic [PtrW:0]    discard_q;      // responses still to come that belong to an earlier program
  logic [31:0]      pc_q, req_pc_q, rsp_pc_q;
  logic [BeatIdxW-1:0] req_beat_q, rsp_beat_q;
  logic             running_q;

  // ---- requests
  logic [tpu_pkg::AddrWidth-1:0] req_instr_addr;
  assign req_instr_addr = prog_base_i + (req_pc_q << 5);
  assign req_valid_o = running_q && !halt_i && (inflight_q < (PtrW+1)'(Depth));
  always_comb begin
    if (Dim >= 32) req_addr_o = req_instr_addr & ~tpu_pkg::AddrWidth'(Dim - 1);
    else           req_addr_o = req_instr_addr + tpu_pkg::AddrWidth'(req_beat_q) * tpu_pkg::AddrWidth'(Dim);
  end
  logic req_fire;
  assign req_fire = req_valid_o && req_ready_i;

  // ---- responses
  logic [SlotW-1:0] rsp_slot;
  always_comb begin
    if (Dim >= 32) begin
      logic [tpu_pkg::AddrWidth-1:0] rsp_addr;
      rsp_addr = prog_base_i + (rsp_pc_q << 5);
      rsp_slot = SlotW'(rsp_data_i >> (32'(rsp_addr % Dim) * 8));
    end else begin
      rsp_slot = SlotW'(rsp_data_i);
    end
  end
  logic rsp_keep;
  assign rsp_keep = rsp_valid_i && running_q && (discard_q == '0);

  // ---- dispatch
  tpu_pkg::instr_t head_instr;
  always_comb begin
    for (int unsigned b = 0; b < BeatsPerInstr; b++) begin
      head_instr[b*SlotW +: SlotW] = buf_q[rd_q + PtrW'(b)];
    end
  end
  logic [7:0] head_op;
  logic       head_ready, is_end, is_illegal;
  logic [1:0] head_q;
  assign head_op    = head_instr.hdr.opcode;
  assign head_ready = running_q && !halt_i && (buffered_q >= (PtrW+1)'(BeatsPerInstr));
  assign is_end     = (head_op == tpu_pkg::OpEnd);
  always_comb begin
    head_q     = 2'd0;
    is_illegal = 1'b0;
    unique case (head_op)
      tpu_pkg::OpDma, tpu_pkg::OpDmaNop:              head_q = 2'd0;
      tpu_pkg::OpLoadW, tpu_pkg::OpMatmul, tpu_pkg::OpMxuNop:  head_q = 2'd1;
      tpu_pkg::OpVQuant, tpu_pkg::OpVAdd, tpu_pkg::OpVecNop:   head_q = 2'd2;
      tpu_pkg::OpEnd:                        head_q = 2'd0;
      default:                      is_illegal = 1'b1;
    endcase
  end
  logic dispatch;
  assign dispatch  = head_ready && !is_end && !is_illegal && !q_full_i[head_q];
  assign q_push_o  = dispatch ? (3'b001 << head_q) : 3'b000;
  assign q_instr_o = head_instr;
  assign stall_o   = head_ready && !is_end && !is_illegal && q_full_i[head_q];
  assign illegal_o = head_ready && is_illegal;
  assign fetched_o = dispatch;
  assign stopped_o = !running_q;
  assign idle_o    = (outstanding_q == '0);
  assign pc_o      = pc_q;

  logic stop;
  assign stop = head_ready && is_end;

  always_ff @(posedge clk_i) begin
    if (rsp_keep) buf_q[wr_q] <= rsp_slot;
  end

  // The memory answers every accepted request, even across a soft reset or a new start: count
  // them all, and drop the responses that belong to an earlier program.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      outstanding_q <= '0;
      discard_q     <= '0;
    end else begin
      outstanding_q <= outstanding_q + (PtrW+1)'(req_fire) - (PtrW+1)'(rsp_valid_i);
      if (clear_i || start_i) begin
        discard_q <= outstanding_q + (PtrW+1)'(req_fire) - (PtrW+1)'(rsp_valid_i);
      end else if (rsp_valid_i && discard_q != '0) begin
        discard_q <= discard_q - 1'b1;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      running_q <= 1'b0;
      rd_q <= '0; wr_q <= '0; buffered_q <= '0; inflight_q <= '0;
      pc_q <= '0; req_pc_q <= '0; rsp_pc_q <= '0; req_beat_q <= '0; rsp_beat_q <= '0;
    end else if (clear_i) begin
      running_q <= 1'b0;
      rd_q <= '0; wr_q <= '0; buffered_q <= '0; inflight_q <= '0;
      pc_q <= '0; req_pc_q <= '0; rsp_pc_q <= '0; req_beat_q <= '0; rsp_beat_q <= '0;
    end else begin
      if (start_i) begin
        running_q <= 1'b1;
        rd_q <= '0; wr_q <= '0; buffered_q <= '0; inflight_q <= '0;
        pc_q <= '0; req_pc_q <= '0; rsp_pc_q <= '0; req_beat_q <= '0; rsp_beat_q <= '0;
      end else if (stop) begin
        running_q  <= 1'b0;
        buffered_q <= '0;
        inflight_q <= '0;
      end else if (running_q) begin
        if (req_fire) begin
          if (32'(req_beat_q) == BeatsPerInstr - 1) begin
            req_beat_q <= '0;
            req_pc_q   <= req_pc_q + 1;
          end else begin
            req_beat_q <= req_beat_q + 1'b1;
          end
        end
        if (rsp_keep) begin
          wr_q <= wr_q + 1'b1;
          if (32'(rsp_beat_q) == BeatsPerInstr - 1) begin
            rsp_beat_q <= '0;
            rsp_pc_q   <= rsp_pc_q + 1;
          end else begin
            rsp_beat_q <= rsp_beat_q + 1'b1;
          end
        end
        if (dispatch) begin
          rd_q <= rd_q + PtrW'(BeatsPerInstr);
          pc_q <= pc_q + 1;
        end
        buffered_q <= buffered_q + (PtrW+1)'(rsp_keep)
                      - (dispatch ? (PtrW+1)'(BeatsPerInstr) : '0);
        inflight_q <= inflight_q + (PtrW+1)'(req_fire)
                      - (dispatch ? (PtrW+1)'(BeatsPerInstr) : '0);
      end
    end
  end

  // ---------------- protocol invariants (simulation only)
  `TPU_ASSERT_INIT
  // The memory answers only the requests it accepted: a response with none outstanding would
  // underflow outstanding_q, and with it the count of an earlier program's responses to drop.
  `TPU_ASSERT(chk_rsp_requested, !rsp_valid_i || outstanding_q != '0 || req_fire,
              "fetch_unit: memory response without an outstanding request")
  // The responses to drop after a soft reset or a new start are some of those outstanding.
  `TPU_ASSERT(chk_discard_outstanding, discard_q <= outstanding_q,
              "fetch_unit: more responses to drop than outstanding")
  // Requests stop when the buffer would be full, so every kept response finds a free slot.
  `TPU_ASSERT(chk_inflight_bound, inflight_q <= (PtrW+1)'(Depth) && buffered_q <= inflight_q,
              "fetch_unit: more beats in flight than the buffer holds")
  // While a program runs, each of its beats in flight is either buffered or a response still to
  // come that will be kept: were a beat lost or counted twice, dispatch would read a slot that
  // was never written, or fetch would stop requesting for good.
  `TPU_ASSERT_IF(chk_beats_accounted, running_q,
                 inflight_q - buffered_q == outstanding_q - discard_q,
                 "fetch_unit: beats in flight and responses outstanding disagree")
endmodule
