// SPDX-License-Identifier: Apache-2.0
// The hand-written sources of the tpuemu core (tpu_top), in compile order: leaf modules first,
// the top last. Verilator -F format: paths are relative to this file's directory (rtl/).
//
// The core's package tpu_pkg is generated from spec/tpuemu.json (build/generated/rtl/tpu_pkg.sv,
// or a temp file in scripts/lint-rtl.sh) and is not listed here: every reader puts it first.
// Readers: rtl/CMakeLists.txt (the Verilated cores), tests/rtl/CMakeLists.txt (per-module
// tests take their modules from here), scripts/lint-rtl.sh (verilator -F rtl/core.f).
// Only +incdir+ options and file names are allowed, one per line.
+incdir+include
lint.vlt
common/sync_fifo.sv
mem/sram_1w1r.sv
mem/vmem.sv
mem/acc_mem.sv
mem/smem.sv
mem/mem_arbiter.sv
dma/dma_engine.sv
mxu/mxu_pe.sv
mxu/mxu_array.sv
ctrl/sem_bank.sv
ctrl/issue_gate.sv
ctrl/fetch_unit.sv
ctrl/mxu_ctrl.sv
ctrl/vec_lanes.sv
ctrl/vec_unit.sv
ctrl/csr_block.sv
ctrl/run_ctrl.sv
ctrl/perf_counters.sv
tpu_top.sv
