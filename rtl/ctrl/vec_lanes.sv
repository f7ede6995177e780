// SPDX-License-Identifier: Apache-2.0
// The vector unit's per-lane datapath (combinational): the VQUANT requantisation of one ACC row,
// with an optional int32 bias per lane added first, and the VADD saturating int8 add of two VMEM
// rows. docs/isa.md gives the semantics; spec/include/tpuemu/spec/arith.h is the one C++ copy of
// this arithmetic, which tests/rtl/test_core_arith.cpp compares with this module bit for bit.
module vec_lanes #(
  parameter int unsigned Dim   = 16,
  localparam int unsigned DataW = Dim * 8
) (
  input  logic                 relu_i,
  // VQUANT
  input  logic [Dim-1:0][31:0] acc_i,
  input  logic                 bias_en_i,
  input  logic [Dim-1:0][31:0] bias_i,
  input  logic signed [31:0]   scale_i,
  input  logic [5:0]           shift_i,
  output logic [DataW-1:0]     quant_o,
  // VADD
  input  logic [DataW-1:0]     a_i,
  input  logic [DataW-1:0]     b_i,
  output logic [DataW-1:0]     add_o
);
  // Both results end alike: clamp to [-128, 127], then ReLU.
  function automatic logic [7:0] to_int8(logic signed [63:0] v, logic relu);
    logic signed [7:0] q;
    if (v > 64'sd127)       q = 8'sd127;
    else if (v < -64'sd128) q = -8'sd128;
    else                    q = v[7:0];
    if (relu && q[7]) q = '0;
    to_int8 = q;
  endfunction

  always_comb begin
    for (int unsigned n = 0; n < Dim; n++) begin
      logic signed [31:0] x;
      logic signed [63:0] p;
      x = bias_en_i ? signed'(acc_i[n] + bias_i[n]) : signed'(acc_i[n]);  // int32, wrapping
      p = 64'(x) * 64'(scale_i);
      if (shift_i != '0) p = p + (64'sd1 <<< (shift_i - 6'd1));
      p = p >>> shift_i;
      quant_o[n*8 +: 8] = to_int8(p, relu_i);
    end
  end

  always_comb begin
    for (int unsigned n = 0; n < Dim; n++) begin
      logic signed [8:0] s;
      s = 9'(signed'(a_i[n*8 +: 8])) + 9'(signed'(b_i[n*8 +: 8]));
      add_o[n*8 +: 8] = to_int8(64'(s), relu_i);
    end
  end
endmodule
