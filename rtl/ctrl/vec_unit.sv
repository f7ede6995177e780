// Vector unit: requantises accumulator rows to int8 (scale, rounding shift, clamp, optional ReLU)
// and writes them to VMEM, one row per cycle when its VMEM port is granted.
module vec_unit import tpu_pkg::*; #(
  parameter int unsigned Dim       = 16,
  parameter int unsigned VmemRows  = 16384,
  parameter int unsigned AccRows   = 2048,
  parameter int unsigned SmemWords = 1024,
  localparam int unsigned DataW    = Dim * 8,
  localparam int unsigned VmemRowW = $clog2(VmemRows),
  localparam int unsigned AccRowW  = $clog2(AccRows),
  localparam int unsigned SmemW    = $clog2(SmemWords)
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  input  logic                  clear_i,
  input  logic                  instr_valid_i,
  input  logic [InstrWidth-1:0] instr_i,
  output logic                  instr_pop_o,
  output logic                  sem_req_o,
  input  logic                  sem_gnt_i,
  output logic [1:0]            sig_valid_o,   // 0: NOP / empty, 1: VQUANT done
  output logic [1:0][4:0]       sig_sem_o,
  output logic [AccRowW-1:0]    acc_raddr_o,
  input  logic [Dim-1:0][31:0]  acc_rdata_i,
  output logic [SmemW-1:0]      smem_addr_o,
  input  logic [1:0][31:0]      smem_rdata_i,
  output logic                  vmem_req_o,
  output logic [VmemRowW-1:0]   vmem_addr_o,
  output logic [DataW-1:0]      vmem_wdata_o,
  input  logic                  vmem_gnt_i,
  output logic                  busy_o,
  output logic                  idle_o,
  output logic                  stall_sem_o,
  output logic                  stall_vmem_o,
  output logic                  err_range_o
);
  instr_vquant_t vq;
  instr_hdr_t    hdr;
  assign vq  = instr_i;
  assign hdr = vq.hdr;
  logic [31:0] op_acc, op_vmem, op_rows, op_scale, op_smem;
  logic [5:0]  op_shift;
  logic        op_relu, op_from_smem, is_quant;
  assign op_acc       = vq.acc_row;
  assign op_vmem      = vq.vmem_row;
  assign op_rows      = vq.rows;
  assign op_scale     = vq.scale;
  assign op_shift     = vq.shift;
  assign op_relu      = vq.relu;
  assign op_from_smem = vq.smem_params;
  assign op_smem      = vq.smem_word;
  assign is_quant     = (hdr.opcode == OpVQuant);

  logic bad;
  assign bad = is_quant && ((64'(op_acc) + 64'(op_rows) > 64'(AccRows)) ||
                            (64'(op_vmem) + 64'(op_rows) > 64'(VmemRows)) ||
                            (op_from_smem && (64'(op_smem) + 64'd2 > 64'(SmemWords))));

  logic                active_q, relu_q, sig_en_q;
  logic [4:0]          sig_sem_q;
  logic [AccRowW-1:0]  acc_q;
  logic [VmemRowW-1:0] vmem_q;
  logic [31:0]         left_q;
  logic signed [31:0]  scale_q;
  logic [5:0]          shift_q;

  logic empty_op, start;
  assign empty_op = !is_quant || (op_rows == '0);
  issue_gate #(.CheckBeforeWait(1'b1)) u_issue (
    .valid_i         (instr_valid_i && !active_q),
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

  assign smem_addr_o = SmemW'(op_smem);
  assign acc_raddr_o = acc_q;

  // requantise one row
  always_comb begin
    for (int unsigned n = 0; n < Dim; n++) begin
      logic signed [63:0] p;
      logic signed [7:0]  q;
      p = 64'(signed'(acc_rdata_i[n])) * 64'(scale_q);
      if (shift_q != '0) p = p + (64'sd1 <<< (shift_q - 6'd1));
      p = p >>> shift_q;
      if (p > 64'sd127)       q = 8'sd127;
      else if (p < -64'sd128) q = -8'sd128;
      else                    q = p[7:0];
      if (relu_q && q[7]) q = '0;
      vmem_wdata_o[n*8 +: 8] = q;
    end
  end

  assign vmem_req_o   = active_q;
  assign vmem_addr_o  = vmem_q;
  assign stall_vmem_o = active_q && !vmem_gnt_i;
  logic row_done, last_row;
  assign row_done = active_q && vmem_gnt_i;
  assign last_row = row_done && (left_q == 32'd1);
  assign sig_valid_o[1] = last_row && sig_en_q;
  assign sig_sem_o[1]   = sig_sem_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      active_q <= 1'b0; relu_q <= 1'b0; sig_en_q <= 1'b0; sig_sem_q <= '0;
      acc_q <= '0; vmem_q <= '0; left_q <= '0; scale_q <= '0; shift_q <= '0;
    end else if (clear_i) begin
      active_q <= 1'b0;
    end else if (start && !empty_op) begin
      active_q  <= 1'b1;
      relu_q    <= op_relu;
      sig_en_q  <= hdr.sig_en;
      sig_sem_q <= hdr.sig_sem;
      acc_q     <= AccRowW'(op_acc);
      vmem_q    <= VmemRowW'(op_vmem);
      left_q    <= op_rows;
      scale_q   <= op_from_smem ? smem_rdata_i[0] : op_scale;
      shift_q   <= op_from_smem ? smem_rdata_i[1][5:0] : op_shift;
    end else if (row_done) begin
      acc_q  <= acc_q + 1'b1;
      vmem_q <= vmem_q + 1'b1;
      left_q <= left_q - 32'd1;
      if (last_row) active_q <= 1'b0;
    end
  end

  logic unused;
  assign unused = ^{vq.rsvd_255_224, vq.rsvd_191_168, hdr.rsvd_31_28, hdr.wait_cnt, hdr.wait_sem};

  assign busy_o = active_q;
  assign idle_o = !instr_valid_i && !active_q;
endmodule
