// SPDX-License-Identifier: Apache-2.0
// Refresh interval timer of one HBM channel: a REF becomes due every tREFI cycles; due_o stays
// high while at least one due REF has not been issued (ref_done_i). The first REF is due
// tREFI - s*(tREFI/NumChannels) cycles after the timer starts (en_i), s = ref_slot_i, then every
// tREFI: channels with different slots refresh at different times.
`include "tpu_assert.svh"

module hbm_refresh_timer #(
  parameter int unsigned NumChannels = 8,
  localparam int unsigned ChW        = (NumChannels > 1) ? $clog2(NumChannels) : 1
) (
  input  logic                          clk_i,
  input  logic                          rst_ni,
  input  logic [ChW-1:0]                ref_slot_i, // refresh slot, constant
  input  logic                          en_i, // timing valid; the timer starts on the first such cycle
  input  logic [hbm_spec_pkg::CycW-1:0] now_i,
  input  logic [hbm_spec_pkg::TimW-1:0] t_refi_i,
  input  logic                          ref_done_i, // a REF issues this cycle
  output logic                          due_o,
  output logic                          idle_o      // armed, and no REF comes due this cycle
);
  logic            armed_q;
  logic [hbm_spec_pkg::CycW-1:0] next_q;
  logic [3:0]      pend_q;   // due REFs not yet issued (JEDEC allows postponing 8)

  logic [hbm_spec_pkg::TimW-1:0] stagger, first;
  logic            tick;
  assign stagger = hbm_spec_pkg::TimW'(ref_slot_i) * (t_refi_i >> ChW);
  assign first   = t_refi_i - stagger;
  assign tick    = armed_q && (now_i >= next_q);
  assign due_o   = (pend_q != '0);
  assign idle_o  = armed_q && !tick;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      armed_q <= 1'b0;
      next_q  <= '0;
      pend_q  <= '0;
    end else begin
      if (en_i && !armed_q) begin
        armed_q <= 1'b1;
        next_q  <= now_i + hbm_spec_pkg::CycW'(first);
      end else if (tick) begin
        next_q <= next_q + hbm_spec_pkg::CycW'(t_refi_i);
      end
      pend_q <= pend_q + 4'(tick) - 4'(ref_done_i);
    end
  end

  `TPU_ASSERT_INIT
  `TPU_ASSERT(chk_ref_was_due, !(ref_done_i && !due_o), "hbm_refresh_timer: REF that was not due")
  `TPU_ASSERT(chk_postpone_limit, pend_q < 4'd8, "hbm_refresh_timer: 8 REFs postponed")

endmodule
