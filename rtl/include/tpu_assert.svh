// SPDX-License-Identifier: Apache-2.0
// Simulation-only protocol assertions for the tpuemu RTL (active with Verilator --assert).
// Every macro expands to nothing when SYNTHESIS is defined, so a synthesis flow sees plain RTL.
//
// Usage, inside a module with the lowRISC-style clock clk_i and active-low asynchronous reset
// rst_ni (the macros refer to both by name):
//
//   `include "tpu_assert.svh"
//   ...
//   `TPU_ASSERT_INIT                         // once per module, before the first assertion
//   `TPU_ASSERT(no_push_full, !(push_i && full_o), "sync_fifo: push while full")
//   `TPU_ASSERT_IF(no_pop_empty, !clear_i, !(pop_i && empty_o), "sync_fifo: pop while empty")
//   `TPU_ASSERT_FMT(no_hazard, !hazard, ("bank %0d busy", bank))   // $error with arguments
//
// The checks are sampled on the rising edge of clk_i from the first cycle after reset on:
// TPU_ASSERT_INIT declares the enable chk_en_q, reset asynchronously so that rst_ni stays a pure
// asynchronous reset. Modules with checks that do not fit one condition (a case over commands,
// say) can use chk_en_q in their own `ifndef SYNTHESIS block after TPU_ASSERT_INIT.
// The include path is rtl/include (+incdir+ in rtl/core.f).
`ifndef TPU_ASSERT_SVH
`define TPU_ASSERT_SVH

`ifndef SYNTHESIS

`define TPU_ASSERT_INIT                                \
  logic chk_en_q;                                      \
  always_ff @(posedge clk_i or negedge rst_ni) begin   \
    if (!rst_ni) chk_en_q <= 1'b0;                     \
    else        chk_en_q <= 1'b1;                      \
  end

// cond must hold in every checked cycle in which en holds; args is a parenthesised $error
// argument list (format string and values).
`define TPU_ASSERT_IF_FMT(name, en, cond, args)        \
  always_ff @(posedge clk_i) begin : name              \
    if (chk_en_q && (en)) begin                        \
      assert (cond) else $error args;                  \
    end                                                \
  end

`define TPU_ASSERT_IF(name, en, cond, msg) `TPU_ASSERT_IF_FMT(name, en, cond, (msg))
`define TPU_ASSERT_FMT(name, cond, args)   `TPU_ASSERT_IF_FMT(name, 1'b1, cond, args)
`define TPU_ASSERT(name, cond, msg)        `TPU_ASSERT_IF_FMT(name, 1'b1, cond, (msg))

`else  // SYNTHESIS

`define TPU_ASSERT_INIT
`define TPU_ASSERT_IF_FMT(name, en, cond, args)
`define TPU_ASSERT_IF(name, en, cond, msg)
`define TPU_ASSERT_FMT(name, cond, args)
`define TPU_ASSERT(name, cond, msg)

`endif  // SYNTHESIS

`endif  // TPU_ASSERT_SVH
