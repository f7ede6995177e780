// SPDX-License-Identifier: Apache-2.0
// Processing element of the weight-stationary systolic MXU (instantiated by mxu_array).
//
// Holds one int8 weight per weight bank. In a cycle with valid_i it multiplies the incoming int8
// activation by the weight of the bank the activation is tagged with, adds the product to the
// incoming int32 partial sum (wrapping) and registers the sum for the PE below; the activation
// and its bank tag are registered for the PE to the right. A weight push of bank b moves the
// bank-b weight of the PE above into this PE; the other bank is untouched (shadow weights).
//
// valid_i is the valid bit of the row wavefront passing through this PE (mxu_array keeps one
// valid bit per wavefront rather than one per PE). It only enables the datapath registers: the
// PE has no reset and does no work in cycles without a valid row or a weight push.
module mxu_pe (
  input  logic        clk_i,
  // Weight shift chain, one weight per bank: w*_i from the PE above (or the load port), w*_o to
  // the PE below. A push of bank b (wload_valid_i && wload_bank_i == b) moves w<b>_i in.
  input  logic        wload_valid_i,
  input  logic        wload_bank_i,
  input  logic [7:0]  w0_i,
  input  logic [7:0]  w1_i,
  output logic [7:0]  w0_o,
  output logic [7:0]  w1_o,
  // Activation (int8) and its bank tag: from the left, to the right.
  input  logic        valid_i,
  input  logic        bank_i,
  input  logic [7:0]  act_i,
  output logic        bank_o,
  output logic [7:0]  act_o,
  // Partial sum (int32): from above, to below.
  input  logic [31:0] psum_i,
  output logic [31:0] psum_o
);

  logic [7:0]  w0_q, w1_q;
  logic        bank_q;
  logic [7:0]  act_q;
  logic [31:0] psum_d, psum_q;

  // Shadow weights: a push moves the weight of its bank one PE down.
  always_ff @(posedge clk_i) begin
    if (wload_valid_i && !wload_bank_i) begin
      w0_q <= w0_i;
    end
    if (wload_valid_i && wload_bank_i) begin
      w1_q <= w1_i;
    end
  end

  // Multiply-accumulate with the weight of the activation's bank. Both int8 operands are sign
  // extended to 32 bits, so the product is exact and the sum wraps like int32.
  logic [7:0] w_sel;
  assign w_sel  = bank_i ? w1_q : w0_q;
  assign psum_d = psum_i + 32'($signed(act_i) * $signed(w_sel));

  always_ff @(posedge clk_i) begin
    if (valid_i) begin
      bank_q <= bank_i;
      act_q  <= act_i;
      psum_q <= psum_d;
    end
  end

  assign w0_o   = w0_q;
  assign w1_o   = w1_q;
  assign bank_o = bank_q;
  assign act_o  = act_q;
  assign psum_o = psum_q;

endmodule
