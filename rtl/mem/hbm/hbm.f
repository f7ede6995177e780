// SPDX-License-Identifier: Apache-2.0
// The HBM controller's sources in compile order, relative to the repository root. The one list
// every build of the controller reads (rtl/CMakeLists.txt, tests/rtl/CMakeLists.txt); the
// generated contract package hbm_spec_pkg (build/generated/rtl/hbm_spec_pkg.sv) comes first and
// is not listed here because it lives in the build tree. Only +incdir+ options and file names.
+incdir+rtl/include
rtl/common/sync_fifo.sv
rtl/common/clock_gate.sv
rtl/mem/hbm/hbm_addr_map.sv
rtl/mem/hbm/hbm_bank_state.sv
rtl/mem/hbm/hbm_refresh_timer.sv
rtl/mem/hbm/hbm_channel_ctrl.sv
rtl/mem/hbm/hbm_ctrl.sv
