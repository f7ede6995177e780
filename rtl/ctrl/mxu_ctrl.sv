// SPDX-License-Identifier: Apache-2.0
// MXU controller: dispatches LOADW to the weight loader and MATMUL to the row streamer, so a
// weight load into one bank overlaps a matmul on the other. Each unit orders itself only
// against the older instruction held by the other unit when it was dispatched: a LOADW waits for
// an older MATMUL on its bank to drain out of the array, a MATMUL waits for an older LOADW of its
// bank to finish. Results leave the array in order and are written (or added) into ACC.
`include "tpu_assert.svh"

module mxu_ctrl #(
  parameter int unsigned Dim      = 16,
  parameter int unsigned VmemRows = 16384,
  parameter int unsigned AccRows  = 2048,
  localparam int unsigned DataW   = Dim * 8,
  localparam int unsigned VmemRowW = $clog2(VmemRows),
  localparam int unsigned AccRowW  = $clog2(AccRows)
) (
  input  logic                           clk_i,
  input  logic                           rst_ni,
  input  logic                           clear_i,
  input  logic                           instr_valid_i,
  input  logic [tpu_pkg::InstrWidth-1:0] instr_i,
  output logic                           instr_pop_o,
  output logic                           sem_req_o,
  input  logic                           sem_gnt_i,
  output logic [2:0]                     sig_valid_o, // 0: NOP / empty MATMUL, 1: LOADW, 2: MATMUL
  output logic [2:0][4:0]                sig_sem_o,
  // instruction trace (see dma_engine): ports as sig_valid_o
  input  logic [tpu_pkg::TraceIdxW-1:0]      issue_idx_i,
  output logic [2:0]                         done_o,
  output logic [2:0][tpu_pkg::TraceIdxW-1:0] done_idx_o,
  // VMEM data (input rows) and weight ports
  output logic                  vd_req_o,
  output logic [VmemRowW-1:0]   vd_addr_o,
  input  logic                  vd_gnt_i,
  input  logic                  vd_rvalid_i,
  input  logic [DataW-1:0]      vd_rdata_i,
  output logic                  vw_req_o,
  output logic [VmemRowW-1:0]   vw_addr_o,
  input  logic                  vw_gnt_i,
  input  logic                  vw_rvalid_i,
  input  logic [DataW-1:0]      vw_rdata_i,
  // accumulator write port
  output logic                  acc_we_o,
  output logic                  acc_accumulate_o,
  output logic [AccRowW-1:0]    acc_waddr_o,
  output logic [Dim-1:0][31:0]  acc_wdata_o,
  // status
  output logic                  busy_o,
  output logic                  idle_o,
  output logic                  stall_sem_o,
  output logic                  stall_w_o,
  output logic                  stall_vmem_o,
  output logic                  row_in_o,
  output logic                  wload_busy_o,
  output logic                  err_range_o
);
  localparam int unsigned Latency  = tpu_pkg::mxu_latency(Dim);
  localparam int unsigned TagDepth = 1 << $clog2(Latency + 4);
  localparam int unsigned CntW     = $clog2(Latency + 4) + 1;
  localparam int unsigned DimW     = $clog2(Dim) + 1;

  // ---------------- decode
  // LOADW and MATMUL share the header and the first VMEM row; the bank bit sits in a different
  // word of each, so both layouts are decoded and the opcode picks.
  tpu_pkg::instr_loadw_t  loadw;
  tpu_pkg::instr_matmul_t matmul;
  tpu_pkg::instr_hdr_t    hdr;
  assign loadw  = instr_i;
  assign matmul = instr_i;
  assign hdr    = matmul.hdr;

  logic is_loadw, is_matmul, is_nop;
  assign is_loadw  = (hdr.opcode == tpu_pkg::OpLoadW);
  assign is_matmul = (hdr.opcode == tpu_pkg::OpMatmul);
  assign is_nop    = !is_loadw && !is_matmul;

  logic [31:0] op_vmem, op_acc, op_rows;
  logic        op_bank, op_accum;
  assign op_vmem  = is_loadw ? loadw.vmem_row : matmul.vmem_row;
  assign op_acc   = matmul.acc_row;
  assign op_rows  = matmul.rows;
  assign op_bank  = is_loadw ? loadw.bank : matmul.bank;
  assign op_accum = matmul.accumulate;

  logic bad;
  always_comb begin
    bad = 1'b0;
    if (is_loadw)  bad = (64'(op_vmem) + 64'(Dim) > 64'(VmemRows));
    if (is_matmul) bad = (64'(op_vmem) + 64'(op_rows) > 64'(VmemRows)) ||
                         (64'(op_acc) + 64'(op_rows) > 64'(AccRows));
  end

  // ---------------- unit state
  logic [tpu_pkg::TraceIdxW-1:0] wl_idx_q, st_idx_q;  // queue index of the LOADW / MATMUL held
  logic                wl_active_q, wl_loading_q, wl_bank_q, wl_wait_st_q, wl_sig_en_q;
  logic [4:0]          wl_sig_sem_q;
  logic [VmemRowW-1:0] wl_base_q;
  logic [DimW-1:0]     wl_issued_q, wl_pushed_q;

  logic                st_active_q, st_bank_q, st_accum_q, st_wait_wl_q, st_sig_en_q;
  logic [4:0]          st_sig_sem_q;
  logic [VmemRowW-1:0] st_vmem_q;
  logic [AccRowW-1:0]  st_acc_q;
  logic [31:0]         st_left_q;

  logic [1:0][CntW-1:0] bank_busy_q;
  logic                 st_pipe_valid_q, st_pipe_bank_q;

  // ---------------- dispatch
  logic unit_free;
  // a NOP is a fence: it starts once everything before it has completed
  assign unit_free = is_loadw ? !wl_active_q : (is_matmul ? !st_active_q : !busy_o);
  logic matmul_empty, start;
  assign matmul_empty = is_matmul && (op_rows == '0);
  issue_gate #(.CheckBeforeWait(1'b1)) u_issue (
    .valid_i         (instr_valid_i && unit_free),
    .bad_i           (bad),
    .wait_en_i       (hdr.wait_en),
    .sem_req_o,
    .sem_gnt_i,
    .issue_o         (start),
    .stall_sem_o,
    .err_o           (err_range_o),
    .done_at_issue_i (is_nop || matmul_empty),
    .sig_en_i        (hdr.sig_en),
    .sig_sem_i       (hdr.sig_sem),
    .sig_valid_o     (sig_valid_o[0]),
    .sig_sem_o       (sig_sem_o[0])
  );
  assign instr_pop_o   = start;
  assign done_o[0]     = start && (is_nop || matmul_empty);
  assign done_idx_o[0] = issue_idx_i;

  // ---------------- weight loader
  logic wl_can_load;
  assign wl_can_load = wl_active_q && !wl_wait_st_q && (bank_busy_q[wl_bank_q] == '0) &&
                       !(st_pipe_valid_q && st_pipe_bank_q == wl_bank_q);
  assign vw_req_o  = (wl_loading_q || wl_can_load) && (wl_issued_q < DimW'(Dim));
  assign vw_addr_o = wl_base_q + VmemRowW'(Dim - 1) - VmemRowW'(wl_issued_q);
  logic wl_done;
  assign wl_done = wl_active_q && vw_rvalid_i && (wl_pushed_q == DimW'(Dim - 1));
  assign sig_valid_o[1] = wl_done && wl_sig_en_q;
  assign sig_sem_o[1]   = wl_sig_sem_q;
  assign wload_busy_o   = wl_loading_q;
  assign done_o[1]      = wl_done;
  assign done_idx_o[1]  = wl_idx_q;

  // ---------------- row streamer
  logic st_can_stream;
  assign st_can_stream = st_active_q && !st_wait_wl_q;
  assign vd_req_o  = st_can_stream;
  assign vd_addr_o = st_vmem_q;
  logic st_issue, st_last_issue;
  assign st_issue      = st_can_stream && vd_gnt_i;
  assign st_last_issue = st_issue && (st_left_q == 32'd1);
  assign stall_w_o     = st_active_q && st_wait_wl_q;
  assign stall_vmem_o  = st_can_stream && !vd_gnt_i;

  // tag travelling beside each row: {queue index, acc row, accumulate, last, sig_en, sig_sem}
  localparam int unsigned TagW = tpu_pkg::TraceIdxW + AccRowW + 1 + 1 + 1 + 5;
  logic [TagW-1:0] pipe_tag_q, out_tag;
  logic            tag_empty;

  logic             arr_out_valid;
  logic [Dim-1:0][31:0] arr_out_row;

  // A row granted in a soft reset's cycle arrives after the clear, with no tag to go with it: it
  // is dropped. (Registered, not a gated request: a request that depended on the CSR write port
  // would pull the VMEM arbitration into the logic Verilator evaluates at every input change.)
  logic clear_q, row_in;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) clear_q <= 1'b0;
    else         clear_q <= clear_i;
  end
  assign row_in = vd_rvalid_i && !clear_q;

  mxu_array #(.Dim(Dim)) u_array (
    .clk_i,
    .rst_ni,
    .clear_i,
    .wload_valid_i (wl_active_q && vw_rvalid_i),
    .wload_bank_i  (wl_bank_q),
    .wload_row_i   (vw_rdata_i),
    .in_valid_i    (row_in),
    .in_bank_i     (st_pipe_bank_q),
    .in_row_i      (vd_rdata_i),
    .out_valid_o   (arr_out_valid),
    .out_row_o     (arr_out_row)
  );

  sync_fifo #(.Width(TagW), .Depth(TagDepth)) u_tags (
    .clk_i, .rst_ni, .clear_i,
    .push_i(row_in), .data_i(pipe_tag_q), .pop_i(arr_out_valid), .data_o(out_tag),
    .empty_o(tag_empty), .full_o(), .count_o()
  );

  assign row_in_o         = row_in;
  assign acc_we_o         = arr_out_valid;
  assign acc_waddr_o      = out_tag[8 +: AccRowW];
  assign acc_accumulate_o = out_tag[7];
  assign acc_wdata_o      = arr_out_row;
  assign sig_valid_o[2]   = arr_out_valid && out_tag[6] && out_tag[5];
  assign sig_sem_o[2]     = out_tag[4:0];
  assign done_o[2]        = arr_out_valid && out_tag[6];
  assign done_idx_o[2]    = out_tag[TagW-1 -: tpu_pkg::TraceIdxW];

  // ---------------- state updates
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wl_active_q <= 1'b0; wl_loading_q <= 1'b0; wl_bank_q <= 1'b0; wl_wait_st_q <= 1'b0;
      wl_sig_en_q <= 1'b0; wl_sig_sem_q <= '0; wl_base_q <= '0; wl_issued_q <= '0; wl_pushed_q <= '0;
      wl_idx_q <= '0; st_idx_q <= '0;
      st_active_q <= 1'b0; st_bank_q <= 1'b0; st_accum_q <= 1'b0; st_wait_wl_q <= 1'b0;
      st_sig_en_q <= 1'b0; st_sig_sem_q <= '0; st_vmem_q <= '0; st_acc_q <= '0; st_left_q <= '0;
      st_pipe_valid_q <= 1'b0; st_pipe_bank_q <= 1'b0; pipe_tag_q <= '0;
      bank_busy_q <= '0;
    end else if (clear_i) begin
      wl_active_q <= 1'b0; wl_loading_q <= 1'b0; st_active_q <= 1'b0; st_pipe_valid_q <= 1'b0;
      bank_busy_q <= '0;
    end else begin
      // weight loader
      if (start && is_loadw) begin
        wl_active_q  <= 1'b1;
        wl_loading_q <= 1'b0;
        wl_bank_q    <= op_bank;
        wl_base_q    <= VmemRowW'(op_vmem);
        wl_wait_st_q <= st_active_q && (st_bank_q == op_bank) && !st_last_issue;
        wl_sig_en_q  <= hdr.sig_en;
        wl_sig_sem_q <= hdr.sig_sem;
        wl_idx_q     <= issue_idx_i;
        wl_issued_q  <= '0;
        wl_pushed_q  <= '0;
      end else begin
        if (st_last_issue) wl_wait_st_q <= 1'b0;
        if (vw_req_o && vw_gnt_i) begin
          wl_issued_q  <= wl_issued_q + 1'b1;
          wl_loading_q <= 1'b1;
        end
        if (wl_active_q && vw_rvalid_i) wl_pushed_q <= wl_pushed_q + 1'b1;
        if (wl_done) begin
          wl_active_q  <= 1'b0;
          wl_loading_q <= 1'b0;
        end
      end
      // streamer
      if (start && is_matmul && !matmul_empty) begin
        st_active_q  <= 1'b1;
        st_bank_q    <= op_bank;
        st_accum_q   <= op_accum;
        st_vmem_q    <= VmemRowW'(op_vmem);
        st_acc_q     <= AccRowW'(op_acc);
        st_left_q    <= op_rows;
        st_wait_wl_q <= wl_active_q && (wl_bank_q == op_bank) && !wl_done;
        st_sig_en_q  <= hdr.sig_en;
        st_sig_sem_q <= hdr.sig_sem;
        st_idx_q     <= issue_idx_i;
      end else begin
        if (wl_done) st_wait_wl_q <= 1'b0;
        if (st_issue) begin
          st_vmem_q <= st_vmem_q + 1'b1;
          st_acc_q  <= st_acc_q + 1'b1;
          st_left_q <= st_left_q - 32'd1;
          if (st_last_issue) st_active_q <= 1'b0;
        end
      end
      st_pipe_valid_q <= st_issue;
      if (st_issue) begin
        st_pipe_bank_q <= st_bank_q;
        pipe_tag_q     <= {st_idx_q, st_acc_q, st_accum_q, st_last_issue, st_sig_en_q, st_sig_sem_q};
      end
      for (int unsigned b = 0; b < 2; b++) begin
        if (vd_rvalid_i && st_pipe_bank_q == 1'(b)) bank_busy_q[b] <= CntW'(Latency + 1);
        else if (bank_busy_q[b] != '0)            bank_busy_q[b] <= bank_busy_q[b] - 1'b1;
      end
    end
  end

  logic unused;
  assign unused = ^{loadw.rsvd_255_65, loadw.hdr, matmul.rsvd_255_130, hdr.rsvd_31_28, hdr.wait_cnt,
                    hdr.wait_sem};

  assign busy_o = wl_active_q || st_active_q || st_pipe_valid_q || !tag_empty;
  assign idle_o = !instr_valid_i && !busy_o;

  // ---------------- protocol invariants (simulation only)
  `TPU_ASSERT_INIT
  // An active streamer has rows left: st_left_q never underflows (an empty MATMUL completes at
  // issue and never becomes active).
  `TPU_ASSERT_IF(chk_rows_left, st_active_q, st_left_q != '0,
                 "mxu_ctrl: active MATMUL with no rows left")
  // The loader reads at most Dim weight rows and pushes only rows it has read.
  `TPU_ASSERT_IF(chk_weight_rows, wl_active_q,
                 wl_pushed_q <= wl_issued_q && wl_issued_q <= DimW'(Dim),
                 "mxu_ctrl: weight rows pushed beyond those read")
  // A data row arrives exactly in the cycle after its grant: its bank and tag (st_pipe_bank_q,
  // pipe_tag_q) are held for that one cycle, so a row at any other time would enter the array
  // with another row's weights and be written to another row's ACC address.
  `TPU_ASSERT_IF(chk_row_with_tag, !clear_q, vd_rvalid_i == st_pipe_valid_q,
                 "mxu_ctrl: VMEM data row without its tag")
  // Weight rows arrive only for a LOADW in progress (it pushes whatever arrives into its bank).
  `TPU_ASSERT_IF(chk_weights_for_load, !clear_q, !vw_rvalid_i || wl_active_q,
                 "mxu_ctrl: weight row with no LOADW in progress")
  // Each unit waits only for an older instruction held by the other when it was dispatched, so
  // the two never wait for each other: that would stall the MXU for good.
  `TPU_ASSERT(chk_no_mutual_wait, !(wl_active_q && wl_wait_st_q && st_active_q && st_wait_wl_q),
              "mxu_ctrl: LOADW and MATMUL wait for each other")
endmodule
