// SPDX-License-Identifier: Apache-2.0
// Vector unit: one instruction at a time on its own VMEM port (reads return one cycle after the
// grant), datapath in vec_lanes.
//   VQUANT  requantises ACC rows to int8 and writes one VMEM row per granted cycle; with the bias
//           flag it first reads the 4 VMEM rows of int32 biases (StBias) and latches them.
//   VADD    adds two int8 VMEM rows with saturation: read a, read b, write out (3 granted cycles
//           per row, the minimum on one port). Each row's reads come before its write, so the
//           result may overwrite a or b row for row (out_row == a_row or b_row).
`include "tpu_assert.svh"

module vec_unit #(
  parameter int unsigned Dim       = 16,
  parameter int unsigned VmemRows  = 16384,
  parameter int unsigned AccRows   = 2048,
  parameter int unsigned SmemWords = 1024,
  localparam int unsigned DataW    = Dim * 8,
  localparam int unsigned VmemRowW = $clog2(VmemRows),
  localparam int unsigned AccRowW  = $clog2(AccRows),
  localparam int unsigned SmemW    = $clog2(SmemWords)
) (
  input  logic                           clk_i,
  input  logic                           rst_ni,
  input  logic                           clear_i,
  input  logic                           instr_valid_i,
  input  logic [tpu_pkg::InstrWidth-1:0] instr_i,
  output logic                           instr_pop_o,
  output logic                           sem_req_o,
  input  logic                           sem_gnt_i,
  output logic [1:0]                     sig_valid_o, // 0: NOP / empty, 1: VQUANT / VADD done
  output logic [1:0][4:0]                sig_sem_o,
  output logic [AccRowW-1:0]             acc_raddr_next_o, // ACC row read in the next cycle (sync read)
  input  logic [Dim-1:0][31:0]           acc_rdata_i,
  output logic [SmemW-1:0]               smem_addr_o, // SMEM pair read now, arriving next cycle
  input  logic [1:0][31:0]               smem_rdata_i,
  output logic                           vmem_req_o,
  output logic                           vmem_we_o,
  output logic [VmemRowW-1:0]            vmem_addr_o,
  output logic [DataW-1:0]               vmem_wdata_o,
  input  logic                           vmem_gnt_i,
  input  logic                           vmem_rvalid_i,
  input  logic [DataW-1:0]               vmem_rdata_i,
  output logic                           busy_o,
  output logic                           idle_o,
  output logic                           stall_sem_o,
  output logic                           stall_vmem_o,
  output logic                           add_row_o, // a VADD row was written
  input  logic [tpu_pkg::TraceIdxW-1:0]  issue_idx_i, // instruction trace: queue index of the head
  output logic                           done_o, // an instruction completed (also NOP / empty)
  output logic [tpu_pkg::TraceIdxW-1:0]  done_idx_o, // its queue index
  output logic                           err_range_o
);
  localparam int unsigned BiasRows = 4;  // DIM int32 lanes = 4 VMEM rows

  tpu_pkg::instr_vquant_t vq;
  tpu_pkg::instr_vadd_t   va;
  tpu_pkg::instr_hdr_t    hdr;
  assign vq  = instr_i;
  assign va  = instr_i;
  assign hdr = vq.hdr;
  logic is_quant, is_add;
  assign is_quant = (hdr.opcode == tpu_pkg::OpVQuant);
  assign is_add   = (hdr.opcode == tpu_pkg::OpVAdd);

  function automatic logic rows_past(logic [31:0] first, logic [31:0] count, int unsigned size);
    rows_past = 64'(first) + 64'(count) > 64'(size);
  endfunction

  logic bad;
  assign bad = (is_quant && (rows_past(vq.acc_row, vq.rows, AccRows) ||
                             rows_past(vq.vmem_row, vq.rows, VmemRows) ||
                             (vq.smem_params && (64'(vq.smem_word) + 64'd2 > 64'(SmemWords))) ||
                             (vq.bias && rows_past(vq.bias_row, BiasRows, VmemRows)))) ||
               (is_add && (rows_past(va.a_row, va.rows, VmemRows) ||
                           rows_past(va.b_row, va.rows, VmemRows) ||
                           rows_past(va.out_row, va.rows, VmemRows)));

  typedef enum logic [2:0] {StIdle, StBias, StQuant, StAddA, StAddB, StAddW} state_e;
  state_e              state_q;
  logic                relu_q, sig_en_q, bias_en_q;
  logic [4:0]          sig_sem_q;
  logic [AccRowW-1:0]  acc_q;
  logic [VmemRowW-1:0] out_q;   // VQUANT / VADD destination row
  logic [VmemRowW-1:0] rd_q;    // VADD a row; VQUANT bias row while loading
  logic [VmemRowW-1:0] b_q;     // VADD b row
  logic [31:0]         left_q;
  logic signed [31:0]  scale_q;
  logic [5:0]          shift_q;
  logic                params_smem_q;  // first cycle after the start: scale, shift from SMEM
  logic [2:0]          bias_req_q, bias_got_q;  // bias rows requested / received
  logic [BiasRows-1:0][DataW-1:0] bias_q;
  logic [DataW-1:0]    a_data_q;
  logic [tpu_pkg::TraceIdxW-1:0] idx_q;

  logic active, empty_op, start;
  assign active   = (state_q != StIdle);
  assign empty_op = is_quant ? (vq.rows == '0) : is_add ? (va.rows == '0) : 1'b1;
  issue_gate #(.CheckBeforeWait(1'b1)) u_issue (
    .valid_i         (instr_valid_i && !active),
    .bad_i           (bad),
    .wait_en_i       (hdr.wait_en),
    .sem_req_o,
    .sem_gnt_i,
    .issue_o         (start),
    .stall_sem_o,
    .err_o           (err_range_o),
    .done_at_issue_i (empty_op),
    .sig_en_i        (hdr.sig_en),
    .sig_sem_i       (hdr.sig_sem),
    .sig_valid_o     (sig_valid_o[0]),
    .sig_sem_o       (sig_sem_o[0])
  );
  assign instr_pop_o = start;

  // SMEM and ACC reads are synchronous. The (scale, shift) pair is read in the start cycle and
  // taken from SMEM's output in the next one, the first it is used in; ACC is given the row of
  // the next cycle.
  assign smem_addr_o = SmemW'(vq.smem_word);
  logic signed [31:0] scale;
  logic [5:0]         shift;
  assign scale = params_smem_q ? smem_rdata_i[0] : scale_q;
  assign shift = params_smem_q ? smem_rdata_i[1][5:0] : shift_q;

  logic [DataW-1:0] quant_row, add_row;
  vec_lanes #(.Dim(Dim)) u_lanes (
    .relu_i    (relu_q),
    .acc_i     (acc_rdata_i),
    .bias_en_i (bias_en_q),
    .bias_i    (bias_q),
    .scale_i   (scale),
    .shift_i   (shift),
    .quant_o   (quant_row),
    .a_i       (a_data_q),
    .b_i       (vmem_rdata_i),  // b's read data, held by VMEM until the port's next read
    .add_o     (add_row)
  );

  always_comb begin
    vmem_req_o  = 1'b0;
    vmem_we_o   = 1'b0;
    vmem_addr_o = out_q;
    unique case (state_q)
      StBias:  begin vmem_req_o = (bias_req_q != 3'(BiasRows)); vmem_addr_o = rd_q; end
      StQuant: begin vmem_req_o = 1'b1; vmem_we_o = 1'b1; end
      StAddA:  begin vmem_req_o = 1'b1; vmem_addr_o = rd_q; end
      StAddB:  begin vmem_req_o = 1'b1; vmem_addr_o = b_q; end
      StAddW:  begin vmem_req_o = 1'b1; vmem_we_o = 1'b1; end
      default: ;
    endcase
  end
  assign vmem_wdata_o = (state_q == StAddW) ? add_row : quant_row;
  assign stall_vmem_o = vmem_req_o && !vmem_gnt_i;

  logic row_done, last_row;
  assign row_done  = vmem_gnt_i && ((state_q == StQuant) || (state_q == StAddW));
  assign last_row  = row_done && (left_q == 32'd1);

  always_comb begin
    acc_raddr_next_o = acc_q;
    if (!clear_i) begin
      if (start && !empty_op) acc_raddr_next_o = AccRowW'(vq.acc_row);
      else if (row_done)      acc_raddr_next_o = acc_q + 1'b1;
    end
  end
  assign add_row_o = vmem_gnt_i && (state_q == StAddW);
  assign sig_valid_o[1] = last_row && sig_en_q;
  assign sig_sem_o[1]   = sig_sem_q;
  assign done_o     = last_row || (start && empty_op);
  assign done_idx_o = (start && empty_op) ? issue_idx_i : idx_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= StIdle; relu_q <= 1'b0; sig_en_q <= 1'b0; sig_sem_q <= '0; bias_en_q <= 1'b0;
      acc_q <= '0; out_q <= '0; rd_q <= '0; b_q <= '0; left_q <= '0; scale_q <= '0;
      shift_q <= '0; params_smem_q <= 1'b0; bias_req_q <= '0; bias_got_q <= '0; bias_q <= '0; a_data_q <= '0; idx_q <= '0;
    end else if (clear_i) begin
      state_q       <= StIdle;
      params_smem_q <= 1'b0;
    end else if (start && !empty_op) begin
      relu_q    <= is_add ? va.relu : vq.relu;
      sig_en_q  <= hdr.sig_en;
      sig_sem_q <= hdr.sig_sem;
      idx_q     <= issue_idx_i;
      left_q    <= is_add ? va.rows : vq.rows;
      acc_q     <= AccRowW'(vq.acc_row);
      bias_en_q <= is_quant && vq.bias;
      bias_req_q <= '0;
      bias_got_q <= '0;
      scale_q   <= vq.scale;
      shift_q   <= vq.shift;
      params_smem_q <= is_quant && vq.smem_params;
      if (is_add) begin
        state_q <= StAddA;
        rd_q    <= VmemRowW'(va.a_row);
        b_q     <= VmemRowW'(va.b_row);
        out_q   <= VmemRowW'(va.out_row);
      end else begin
        state_q <= vq.bias ? StBias : StQuant;
        rd_q    <= VmemRowW'(vq.bias_row);
        out_q   <= VmemRowW'(vq.vmem_row);
      end
    end else begin
      params_smem_q <= 1'b0;
      if (params_smem_q) begin
        scale_q <= smem_rdata_i[0];
        shift_q <= smem_rdata_i[1][5:0];
      end
      unique case (state_q)
        StBias: begin
          if (vmem_gnt_i && vmem_req_o) begin
            rd_q       <= rd_q + 1'b1;
            bias_req_q <= bias_req_q + 3'd1;
          end
          if (vmem_rvalid_i) begin
            bias_q[bias_got_q[1:0]] <= vmem_rdata_i;
            bias_got_q <= bias_got_q + 3'd1;
            if (bias_got_q == 3'(BiasRows - 1)) state_q <= StQuant;
          end
        end
        StAddA: if (vmem_gnt_i) state_q <= StAddB;
        StAddB: begin
          if (vmem_rvalid_i) a_data_q <= vmem_rdata_i;  // a's data, the cycle after its grant
          if (vmem_gnt_i) state_q <= StAddW;
        end
        default: ;
      endcase
      if (row_done) begin
        acc_q  <= acc_q + 1'b1;
        out_q  <= out_q + 1'b1;
        rd_q   <= rd_q + 1'b1;
        b_q    <= b_q + 1'b1;
        left_q <= left_q - 32'd1;
        if (last_row) state_q <= StIdle;
        else if (state_q == StAddW) state_q <= StAddA;
      end
    end
  end

  logic unused;
  assign unused = ^{vq.rsvd_191_169, va.rsvd_255_161, va.hdr, hdr.rsvd_31_28, hdr.wait_cnt, hdr.wait_sem};

  assign busy_o = active;
  assign idle_o = !instr_valid_i && !active;

  // ---------------- protocol invariants (simulation only)
  `TPU_ASSERT_INIT
`ifndef SYNTHESIS
  // The cycle after a soft reset: VMEM still answers a read it granted in the reset's cycle.
  logic chk_clear_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) chk_clear_q <= 1'b0;
    else         chk_clear_q <= clear_i;
  end
`endif
  // Six of the eight codes are states; the others would leave the unit hung with no output.
  `TPU_ASSERT(chk_state_legal, state_q inside {StIdle, StBias, StQuant, StAddA, StAddB, StAddW},
              "vec_unit: illegal state")
  // A busy unit has rows left: left_q never underflows (empty instructions complete at issue).
  `TPU_ASSERT_IF(chk_rows_left, active, left_q != '0, "vec_unit: active instruction with no rows left")
  // The bias load requests at most its 4 rows and receives only rows it requested.
  `TPU_ASSERT_IF(chk_bias_rows, state_q == StBias,
                 bias_got_q <= bias_req_q && bias_req_q <= 3'(BiasRows) &&
                 (!vmem_rvalid_i || bias_got_q < bias_req_q),
                 "vec_unit: bias row received beyond those requested")
  // Read data arrives only where the unit takes it: a bias row (StBias), a's row (StAddB, the
  // cycle after a's grant), b's row (StAddW). Data at another time would mean the one-cycle read
  // latency the datapath relies on does not hold.
  `TPU_ASSERT_IF(chk_read_expected, !chk_clear_q,
                 !vmem_rvalid_i || state_q inside {StBias, StAddB, StAddW},
                 "vec_unit: VMEM read data in a state that takes none")
  // SMEM's (scale, shift) pair is taken in a VQUANT's first cycle only.
  `TPU_ASSERT_IF(chk_smem_params, params_smem_q, state_q inside {StBias, StQuant},
                 "vec_unit: SMEM parameters outside a VQUANT")
endmodule
