// SPDX-License-Identifier: Apache-2.0
// Weight-stationary systolic matrix unit: Dim x Dim mxu_pe instances, int8 x int8 -> int32.
//
// Dataflow (PE (k, n) sits in row k, column n and holds W[0][k][n] and W[1][k][n]):
// - Weights are shifted in from the top, one row per push, into the bank named by wload_bank_i;
//   the other bank keeps its weights (shadow weights), so a load overlaps compute on the other bank.
// - Input lane k is registered and then delayed k more cycles (input skew) before it enters PE row
//   k from the left. It moves one PE to the right per cycle together with its bank tag, so rows
//   tagged with different banks can be in the array at the same time.
// - Partial sums move one PE down per cycle; the sum leaving the bottom of column n is delayed
//   Dim-1-n more cycles (output de-skew) so that a whole result row leaves in one cycle.
// A row presented in cycle t is in PE (k, n) in cycle t+1+k+n (the PE registers its sum at the end
// of that cycle) and its result leaves in cycle t+2*Dim = t+tpu_pkg::mxu_latency(Dim).
//
// Valid bits: vld_q[i] is the valid bit of the row presented i+1 cycles ago. Since a row is in PE
// (k, n) i = k+n+1 cycles after it was presented, vld_q[k+n] is that PE's clock enable, and the
// same shift register enables the skew and de-skew registers and drives out_valid_o. Nothing in
// the datapath is written without a valid row (or a weight push) and nothing in it is reset; a
// soft reset (clear_i) clears only the valid bits.
//
// Protocol (guaranteed by the controller; checked by the assertion at the end when simulating):
// bank b is never pushed while a row tagged b is in the array, and a row tagged b is presented no
// earlier than the cycle after the last push of bank b.
`include "tpu_assert.svh"

module mxu_array #(
  parameter int unsigned Dim = 16
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  // Soft reset (CTRL.soft_reset): the rows in flight are dropped, the weights kept.
  input  logic                  clear_i,
  // Weight load into one of two weight banks (shadow weights), one row per cycle, shifted in from
  // the top: after Dim pushes to bank b, row k of bank b holds the row pushed (Dim-1-k)-th, i.e.
  // push W[Dim-1] first and W[0] last.
  input  logic                  wload_valid_i,
  input  logic                  wload_bank_i,
  input  logic [Dim-1:0][7:0]   wload_row_i,
  // One input row per cycle (int8 lanes k = 0..Dim-1), tagged with the weight bank it uses.
  input  logic                  in_valid_i,
  input  logic                  in_bank_i,
  input  logic [Dim-1:0][7:0]   in_row_i,
  // Exactly tpu_pkg::mxu_latency(Dim) cycles after an input row is presented with in_valid_i,
  // out_valid_o is high for one cycle with out_row_o[n] = sum_k in[k]*W[bank][k][n] (int32, wrapping).
  output logic                  out_valid_o,
  output logic [Dim-1:0][31:0]  out_row_o
);

  // The pipeline below has a latency of 2*Dim; the package function is what the controller uses,
  // so both must agree.
  localparam int unsigned Latency = tpu_pkg::mxu_latency(Dim);

  if (Dim < 2) begin : g_dim_check
    $fatal(1, "mxu_array: Dim must be at least 2, got %0d", Dim);
  end
  if (Latency != 2 * Dim) begin : g_latency_check
    $fatal(1, "mxu_array: tpu_pkg::mxu_latency(%0d) = %0d, but the array's latency is %0d",
           Dim, Latency, 2 * Dim);
  end

  // ---------------------------------------------------------------------------------------------
  // Valid bits and bank tags of the rows in flight
  // ---------------------------------------------------------------------------------------------
  // vld_q[i] / bank_q[i]: valid bit / bank tag of the row presented i+1 cycles ago. Bank tags are
  // kept here only until the row enters the PE array (bank_q[k] enters PE row k), after which the
  // tag travels through the PEs with the activation.
  logic [Latency-1:0] vld_d, vld_q;
  logic [Dim-1:0]     bank_d, bank_q;

  assign vld_d  = {vld_q[Latency-2:0], in_valid_i};
  assign bank_d = {bank_q[Dim-2:0], in_bank_i};

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      vld_q <= '0;
    end else if (clear_i) begin
      // Without their valid bits the dropped rows neither move nor leave: no result, and no tag
      // popped for them in mxu_ctrl, whose tag FIFO the same clear empties.
      vld_q <= '0;
    end else begin
      vld_q <= vld_d;
    end
  end

  always_ff @(posedge clk_i) begin
    bank_q <= bank_d;
  end

  assign out_valid_o = vld_q[Latency-1];

  // ---------------------------------------------------------------------------------------------
  // PE interconnect
  // ---------------------------------------------------------------------------------------------
  // The split_var metacomments let Verilator treat every element as a variable of its own (a large
  // simulation speed-up, no effect on synthesis).
  // Horizontal: [k][n] enters PE (k, n) from the left; [k][Dim] leaves the array (unused).
  logic [7:0]  h_act  [Dim][Dim+1] /* verilator split_var */;
  logic        h_bank [Dim][Dim+1] /* verilator split_var */;
  // Vertical: [k][n] enters PE (k, n) from above; [Dim][n] leaves the array (only psum is used).
  logic [31:0] v_psum [Dim+1][Dim] /* verilator split_var */;
  logic [7:0]  v_w0   [Dim+1][Dim] /* verilator split_var */;
  logic [7:0]  v_w1   [Dim+1][Dim] /* verilator split_var */;

  // ---------------------------------------------------------------------------------------------
  // Input skew: lane k is registered, then delayed k more cycles (k+1 registers in all)
  // ---------------------------------------------------------------------------------------------
  for (genvar k = 0; k < Dim; k++) begin : g_skew
    // skew_q[s] holds lane k of the row presented s+1 cycles ago.
    logic [7:0] skew_q [k+1] /* verilator split_var */;

    always_ff @(posedge clk_i) begin
      if (in_valid_i) begin
        skew_q[0] <= in_row_i[k];
      end
    end
    for (genvar s = 1; s <= k; s++) begin : g_stage
      always_ff @(posedge clk_i) begin
        if (vld_q[s-1]) begin
          skew_q[s] <= skew_q[s-1];
        end
      end
    end

    assign h_act[k][0]  = skew_q[k];
    assign h_bank[k][0] = bank_q[k];
  end

  // ---------------------------------------------------------------------------------------------
  // PE array
  // ---------------------------------------------------------------------------------------------
  for (genvar n = 0; n < Dim; n++) begin : g_top
    assign v_w0[0][n]   = wload_row_i[n];
    assign v_w1[0][n]   = wload_row_i[n];
    assign v_psum[0][n] = '0;
  end

  for (genvar k = 0; k < Dim; k++) begin : g_row
    for (genvar n = 0; n < Dim; n++) begin : g_col
      mxu_pe u_pe (
        .clk_i         (clk_i),
        .wload_valid_i (wload_valid_i),
        .wload_bank_i  (wload_bank_i),
        .w0_i          (v_w0[k][n]),
        .w1_i          (v_w1[k][n]),
        .w0_o          (v_w0[k+1][n]),
        .w1_o          (v_w1[k+1][n]),
        .valid_i       (vld_q[k+n]),
        .bank_i        (h_bank[k][n]),
        .act_i         (h_act[k][n]),
        .bank_o        (h_bank[k][n+1]),
        .act_o         (h_act[k][n+1]),
        .psum_i        (v_psum[k][n]),
        .psum_o        (v_psum[k+1][n])
      );
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Output de-skew: column n of a row presented in cycle t leaves PE row Dim-1 in cycle t+1+Dim+n
  // and is delayed Dim-1-n more cycles
  // ---------------------------------------------------------------------------------------------
  for (genvar n = 0; n < Dim; n++) begin : g_deskew
    if (n == Dim - 1) begin : g_direct
      assign out_row_o[n] = v_psum[Dim][n];
    end else begin : g_delay
      // deskew_q[j] holds column n of the row presented Dim+n+j+2 cycles ago.
      logic [31:0] deskew_q [Dim-1-n] /* verilator split_var */;

      always_ff @(posedge clk_i) begin
        if (vld_q[Dim+n]) begin
          deskew_q[0] <= v_psum[Dim][n];
        end
      end
      for (genvar j = 1; j < Dim - 1 - n; j++) begin : g_stage
        always_ff @(posedge clk_i) begin
          if (vld_q[Dim+n+j]) begin
            deskew_q[j] <= deskew_q[j-1];
          end
        end
      end

      assign out_row_o[n] = deskew_q[Dim-2-n];
    end
  end

  // Outputs of the last PE column and row that lead nowhere.
  logic [Dim-1:0] unused_east;
  logic [Dim-1:0] unused_south;
  for (genvar i = 0; i < Dim; i++) begin : g_unused
    assign unused_east[i]  = ^{h_act[i][Dim], h_bank[i][Dim]};
    assign unused_south[i] = ^{v_w0[Dim][i], v_w1[Dim][i]};
  end

  // ---------------------------------------------------------------------------------------------
  // Protocol check (simulation only; active with Verilator --assert). The window tracker below
  // exists for the check alone, so it is left out of synthesis with it.
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  // A row presented in cycle t reads weights up to cycle t+2*Dim-1, so a push of bank b in cycle u
  // corrupts a row tagged b presented in cycle t if t <= u <= t+2*Dim-2 (u = t+2*Dim-1 takes
  // effect after the last read). The controller's rules (no push while a row of the bank is in
  // the array, rows only after the last push) rule this out with margin.
  localparam int unsigned ChkWin = 2 * Dim - 1;  // rows presented in cycles u-ChkWin+1 .. u

  logic [ChkWin-2:0] chk_bank_q;  // chk_bank_q[i]: bank tag of the row presented i+1 cycles ago
  logic [ChkWin-1:0] chk_vld, chk_bank;
  logic              chk_hazard;

  always_ff @(posedge clk_i) begin
    chk_bank_q <= {chk_bank_q[ChkWin-3:0], in_bank_i};
  end

  assign chk_vld    = {vld_q[ChkWin-2:0], in_valid_i};
  assign chk_bank   = {chk_bank_q, in_bank_i};
  assign chk_hazard = wload_valid_i &&
                      |(chk_vld & (wload_bank_i ? chk_bank : ~chk_bank));

  `TPU_ASSERT_INIT
  `TPU_ASSERT_FMT(no_weight_hazard, !chk_hazard,
                  ("mxu_array: weight push to bank %0d while a row tagged %0d is in the array",
                   wload_bank_i, wload_bank_i))
`endif

endmodule
