// SPDX-License-Identifier: Apache-2.0
// One tpuemu core: instruction fetch into decoupled DMA / MXU / vector queues ordered by
// semaphores, the DMA engine, the MXU with its controller, the vector unit, VMEM, SMEM and the
// accumulators, behind a CSR interface for firmware and one memory port towards HBM.
module tpu_top #(
  parameter int unsigned Dim            = 16,
  parameter int unsigned VmemRows       = 16384,
  parameter int unsigned VmemBanks      = 8,
  parameter int unsigned AccRows        = 2048,
  parameter int unsigned SmemWords      = 1024,
  parameter int unsigned QueueDepth     = 8,
  parameter int unsigned MemOutstanding = 16,
  localparam int unsigned DataW         = Dim * 8
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  // CSR bus
  input  logic                             csr_valid_i,
  input  logic                             csr_write_i,
  input  logic [tpu_pkg::CsrAddrWidth-1:0] csr_addr_i,
  input  logic [31:0]                      csr_wdata_i,
  output logic [31:0]                      csr_rdata_o,
  // memory port
  output logic                          mem_req_valid_o,
  input  logic                          mem_req_ready_i,
  output logic                          mem_req_write_o,
  output logic [tpu_pkg::AddrWidth-1:0] mem_req_addr_o,
  output logic [DataW-1:0]              mem_req_wdata_o,
  input  logic                          mem_rsp_valid_i,
  input  logic [DataW-1:0]              mem_rsp_rdata_i,
  input  logic                          mem_wack_valid_i,
  // convenience for the harness: the core is running a program
  output logic                 busy_o,
  // instruction trace (tpu_pkg::trace_t): what the engines started, waited on and completed this
  // cycle; the harness samples it only while it records a timeline
  output tpu_pkg::trace_t               trace_o
);
  localparam int unsigned VmemRowW = $clog2(VmemRows);
  localparam int unsigned AccRowW  = $clog2(AccRows);
  localparam int unsigned SmemW    = $clog2(SmemWords);
  localparam int unsigned SmemRowW = (SmemWords / (Dim / 4) > 1) ? $clog2(SmemWords / (Dim / 4)) : 1;
  localparam int unsigned QCntW    = $clog2(QueueDepth) + 1;

  // Only values the RTL is built for (spec/tpuemu.json core_params, the table the host's preset
  // check uses too): any other is refused here rather than misbuilt in a module below.
  localparam int unsigned ParamViolation = tpu_pkg::core_param_violation(
      Dim, VmemRows, VmemBanks, AccRows, SmemWords, QueueDepth, MemOutstanding);
  if (ParamViolation != 0) begin : g_param_check
    $fatal(1, "tpu_top: parameter %0d of %s has a value the RTL is not built for (core_params)",
           ParamViolation, tpu_pkg::CoreParamNames);
  end

  // A queue entry: the instruction and the PC it was fetched from (reported in ERROR_INFO).
  typedef struct packed {
    logic [31:0] pc;
    tpu_pkg::instr_t      instr;
  } q_entry_t;
  localparam int unsigned QEntryW = 32 + tpu_pkg::InstrWidth;  // $bits(q_entry_t): Yosys has no $bits of a type

  // ---------------- CSRs and run control
  logic                 start, clear;
  logic [tpu_pkg::AddrWidth-1:0] prog_base;
  logic                 run_busy, run_done, run_err;
  logic [7:0]           run_err_code;
  logic [31:0]          run_err_pc;

  // ---------------- queues
  logic [2:0]              q_push, q_pop, q_full, q_empty;
  logic [tpu_pkg::InstrWidth-1:0]   f_instr;
  logic [31:0]             f_pc;
  q_entry_t                f_entry;
  logic [2:0][tpu_pkg::InstrWidth-1:0] q_instr;  // each queue's head
  logic [2:0][31:0]        head_pc;
  logic [2:0][QCntW-1:0]   q_count;

  assign f_entry.pc    = f_pc;
  assign f_entry.instr = f_instr;
  for (genvar q = 0; q < 3; q++) begin : g_queue
    // a scalar struct per queue: Yosys cannot select a member of an array element
    q_entry_t head;
    sync_fifo #(.Width(QEntryW), .Depth(QueueDepth)) u_queue (
      .clk_i, .rst_ni, .clear_i(clear || start),
      .push_i(q_push[q]), .data_i(f_entry), .pop_i(q_pop[q]), .data_o(head),
      .empty_o(q_empty[q]), .full_o(q_full[q]), .count_o(q_count[q])
    );
    assign q_instr[q] = head.instr;
    assign head_pc[q] = head.pc;
  end

  // Queue index of each queue's head: the instructions the queue has popped since start, which is
  // the head's position among the queue's instructions in program order (fetch is in order).
  logic [2:0][tpu_pkg::TraceIdxW-1:0] q_idx_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      q_idx_q <= '0;
    end else if (clear || start) begin
      q_idx_q <= '0;
    end else begin
      for (int unsigned q = 0; q < 3; q++) begin
        if (q_pop[q]) q_idx_q[q] <= q_idx_q[q] + 1'b1;
      end
    end
  end

  // ---------------- fetch and memory port sharing
  logic                 f_req_valid, f_req_ready, f_rsp_valid;
  logic [tpu_pkg::AddrWidth-1:0] f_req_addr;
  logic                 f_stopped, f_idle, f_stall, f_illegal, f_fetched;

  fetch_unit #(.Dim(Dim)) u_fetch (
    .clk_i, .rst_ni, .clear_i(clear),
    .start_i     (start),
    .prog_base_i (prog_base),
    .halt_i      (!run_busy),
    .req_valid_o (f_req_valid),
    .req_ready_i (f_req_ready),
    .req_addr_o  (f_req_addr),
    .rsp_valid_i (f_rsp_valid),
    .rsp_data_i  (mem_rsp_rdata_i),
    .q_push_o    (q_push),
    .q_instr_o   (f_instr),
    .q_full_i    (q_full),
    .stopped_o   (f_stopped),
    .idle_o      (f_idle),
    .stall_o     (f_stall),
    .illegal_o   (f_illegal),
    .pc_o        (f_pc),
    .fetched_o   (f_fetched)
  );

  logic                 d_req_valid, d_req_ready, d_req_write, d_rsp_valid;
  logic [tpu_pkg::AddrWidth-1:0] d_req_addr;
  logic [DataW-1:0]     d_req_wdata;

  mem_arbiter #(.Dim(Dim), .RouteDepth(1 << $clog2(MemOutstanding + 32))) u_arb (
    .clk_i, .rst_ni,
    .f_req_valid_i   (f_req_valid),
    .f_req_ready_o   (f_req_ready),
    .f_req_addr_i    (f_req_addr),
    .f_rsp_valid_o   (f_rsp_valid),
    .d_req_valid_i   (d_req_valid),
    .d_req_ready_o   (d_req_ready),
    .d_req_write_i   (d_req_write),
    .d_req_addr_i    (d_req_addr),
    .d_req_wdata_i   (d_req_wdata),
    .d_rsp_valid_o   (d_rsp_valid),
    .mem_req_valid_o,
    .mem_req_ready_i,
    .mem_req_write_o,
    .mem_req_addr_o,
    .mem_req_wdata_o,
    .mem_rsp_valid_i
  );

  // ---------------- semaphores
  logic [2:0]       sem_req, sem_gnt;
  logic [2:0][4:0]  sem_idx;
  logic [2:0][7:0]  sem_cnt;
  logic [7:0]       sig_valid;
  logic [7:0][4:0]  sig_sem;
  logic [tpu_pkg::NumSems-1:0][tpu_pkg::SemWidth-1:0] sem_value;
  logic             sem_overflow;
  logic             csr_sem_we;
  logic [tpu_pkg::SemIdxWidth-1:0] csr_sem_idx;
  logic [tpu_pkg::SemWidth-1:0]    csr_sem_wdata;

  for (genvar q = 0; q < 3; q++) begin : g_sem_fields
    tpu_pkg::instr_hdr_t hdr;
    assign hdr        = q_instr[q][31:0];
    assign sem_idx[q] = hdr.wait_sem;
    assign sem_cnt[q] = hdr.wait_cnt;
    logic unused_hdr;  // the engines decode the rest
    assign unused_hdr = ^{hdr.rsvd_31_28, hdr.sig_sem, hdr.sig_en, hdr.wait_en, hdr.opcode};
  end

  sem_bank #(.NumWaiters(3), .NumSignals(8)) u_sems (
    .clk_i, .rst_ni, .clear_i(clear),
    .wait_req_i  (sem_req),
    .wait_sem_i  (sem_idx),
    .wait_cnt_i  (sem_cnt),
    .wait_gnt_o  (sem_gnt),
    .take_i      (q_pop),
    .sig_valid_i (sig_valid),
    .sig_sem_i   (sig_sem),
    .csr_we_i    (csr_sem_we),
    .csr_sem_i   (csr_sem_idx),
    .csr_wdata_i (csr_sem_wdata),
    .value_o     (sem_value),
    .overflow_o  (sem_overflow)
  );

  // ---------------- memories
  localparam int unsigned VPorts = 4;  // 0 MXU data, 1 MXU weights, 2 vector, 3 DMA
  logic [VPorts-1:0]                v_req, v_we, v_gnt, v_rvalid;
  logic [VPorts-1:0][VmemRowW-1:0]  v_addr;
  logic [VPorts-1:0][DataW-1:0]     v_wdata, v_rdata;
  logic [2:0]                       v_conflicts;

  vmem #(.Dim(Dim), .Rows(VmemRows), .Banks(VmemBanks), .NumPorts(VPorts)) u_vmem (
    .clk_i, .rst_ni,
    .req_i (v_req), .we_i (v_we), .addr_i (v_addr), .wdata_i (v_wdata),
    .gnt_o (v_gnt), .rvalid_o (v_rvalid), .rdata_o (v_rdata), .conflicts_o (v_conflicts)
  );

  logic                 acc_we, acc_accumulate;
  logic [AccRowW-1:0]   acc_waddr, acc_vec_raddr_next, acc_dma_raddr_next;
  logic [Dim-1:0][31:0] acc_wdata, acc_vec_rdata, acc_dma_rdata;

  acc_mem #(.Dim(Dim), .Rows(AccRows)) u_acc (
    .clk_i,
    .rst_ni,
    .we_i         (acc_we),
    .accumulate_i (acc_accumulate),
    .waddr_i      (acc_waddr),
    .wdata_i      (acc_wdata),
    .vec_raddr_next_i (acc_vec_raddr_next),
    .vec_rdata_o      (acc_vec_rdata),
    .dma_raddr_next_i (acc_dma_raddr_next),
    .dma_rdata_o      (acc_dma_rdata)
  );

  logic                 smem_dma_we;
  logic [SmemRowW-1:0]  smem_dma_wrow, smem_dma_rrow_next;
  logic [DataW-1:0]     smem_dma_wdata, smem_dma_rdata;
  logic [SmemW-1:0]     smem_vec_addr;
  logic [1:0][31:0]     smem_vec_rdata;
  logic [31:0]          smem_csr_rdata;
  logic                 smem_csr_we;
  logic [SmemW-1:0]     smem_csr_addr, smem_csr_raddr_next;

  smem #(.Dim(Dim), .Words(SmemWords)) u_smem (
    .clk_i,
    .rst_ni,
    .csr_we_i         (smem_csr_we),
    .csr_addr_i       (smem_csr_addr),
    .csr_wdata_i      (csr_wdata_i),
    .csr_raddr_next_i (smem_csr_raddr_next),
    .csr_rdata_o      (smem_csr_rdata),
    .dma_we_i         (smem_dma_we),
    .dma_wrow_i       (smem_dma_wrow),
    .dma_wdata_i      (smem_dma_wdata),
    .dma_rrow_next_i  (smem_dma_rrow_next),
    .dma_rdata_o      (smem_dma_rdata),
    .vec_addr_i       (smem_vec_addr),
    .vec_rdata_o      (smem_vec_rdata)
  );

  // ---------------- engines
  logic [2:0] eng_busy, eng_stall_sem, eng_err;
  logic       dma_stall_mem, mxu_stall_w, mxu_stall_vmem, mxu_row_in, mxu_wload, mxu_idle;
  logic       vec_stall_vmem, vec_idle, vec_add_row, vec_done;
  logic [2:0] dma_done, mxu_done;
  logic [2:0][tpu_pkg::TraceIdxW-1:0] dma_done_idx, mxu_done_idx;
  logic [tpu_pkg::TraceIdxW-1:0]      vec_done_idx;
  logic [4:0] dma_path_beat;

  dma_engine #(
    .Dim(Dim), .VmemRows(VmemRows), .AccRows(AccRows), .SmemWords(SmemWords),
    .Outstanding(MemOutstanding)
  ) u_dma (
    .clk_i, .rst_ni, .clear_i(clear),
    .instr_valid_i    (!q_empty[0]),
    .instr_i          (q_instr[0]),
    .instr_pop_o      (q_pop[0]),
    .sem_req_o        (sem_req[0]),
    .sem_gnt_i        (sem_gnt[0]),
    .sig_valid_o      (sig_valid[2:0]),
    .sig_sem_o        (sig_sem[2:0]),
    .issue_idx_i      (q_idx_q[0]),
    .done_o           (dma_done),
    .done_idx_o       (dma_done_idx),
    .mem_req_valid_o  (d_req_valid),
    .mem_req_ready_i  (d_req_ready),
    .mem_req_write_o  (d_req_write),
    .mem_req_addr_o   (d_req_addr),
    .mem_req_wdata_o  (d_req_wdata),
    .mem_rsp_valid_i  (d_rsp_valid),
    .mem_rsp_data_i   (mem_rsp_rdata_i),
    .mem_wack_valid_i (mem_wack_valid_i),
    .vmem_req_o       (v_req[3]),
    .vmem_we_o        (v_we[3]),
    .vmem_addr_o      (v_addr[3]),
    .vmem_wdata_o     (v_wdata[3]),
    .vmem_gnt_i       (v_gnt[3]),
    .vmem_rvalid_i    (v_rvalid[3]),
    .vmem_rdata_i     (v_rdata[3]),
    .smem_we_o        (smem_dma_we),
    .smem_wrow_o      (smem_dma_wrow),
    .smem_wdata_o     (smem_dma_wdata),
    .smem_wait_i      (smem_csr_we),
    .smem_rrow_next_o (smem_dma_rrow_next),
    .smem_rdata_i     (smem_dma_rdata),
    .acc_raddr_next_o (acc_dma_raddr_next),
    .acc_rdata_i      (acc_dma_rdata),
    .busy_o           (eng_busy[0]),
    .stall_sem_o      (eng_stall_sem[0]),
    .stall_mem_o      (dma_stall_mem),
    .err_range_o      (eng_err[0]),
    .path_beat_o      (dma_path_beat)
  );

  assign v_we[0] = 1'b0;
  assign v_we[1] = 1'b0;
  assign v_wdata[0] = '0;
  assign v_wdata[1] = '0;

  mxu_ctrl #(.Dim(Dim), .VmemRows(VmemRows), .AccRows(AccRows)) u_mxu (
    .clk_i, .rst_ni, .clear_i(clear),
    .instr_valid_i    (!q_empty[1]),
    .instr_i          (q_instr[1]),
    .instr_pop_o      (q_pop[1]),
    .sem_req_o        (sem_req[1]),
    .sem_gnt_i        (sem_gnt[1]),
    .sig_valid_o      (sig_valid[5:3]),
    .sig_sem_o        (sig_sem[5:3]),
    .issue_idx_i      (q_idx_q[1]),
    .done_o           (mxu_done),
    .done_idx_o       (mxu_done_idx),
    .vd_req_o         (v_req[0]),
    .vd_addr_o        (v_addr[0]),
    .vd_gnt_i         (v_gnt[0]),
    .vd_rvalid_i      (v_rvalid[0]),
    .vd_rdata_i       (v_rdata[0]),
    .vw_req_o         (v_req[1]),
    .vw_addr_o        (v_addr[1]),
    .vw_gnt_i         (v_gnt[1]),
    .vw_rvalid_i      (v_rvalid[1]),
    .vw_rdata_i       (v_rdata[1]),
    .acc_we_o         (acc_we),
    .acc_accumulate_o (acc_accumulate),
    .acc_waddr_o      (acc_waddr),
    .acc_wdata_o      (acc_wdata),
    .busy_o           (eng_busy[1]),
    .idle_o           (mxu_idle),
    .stall_sem_o      (eng_stall_sem[1]),
    .stall_w_o        (mxu_stall_w),
    .stall_vmem_o     (mxu_stall_vmem),
    .row_in_o         (mxu_row_in),
    .wload_busy_o     (mxu_wload),
    .err_range_o      (eng_err[1])
  );

  vec_unit #(.Dim(Dim), .VmemRows(VmemRows), .AccRows(AccRows), .SmemWords(SmemWords)) u_vec (
    .clk_i, .rst_ni, .clear_i(clear),
    .instr_valid_i (!q_empty[2]),
    .instr_i       (q_instr[2]),
    .instr_pop_o   (q_pop[2]),
    .sem_req_o     (sem_req[2]),
    .sem_gnt_i     (sem_gnt[2]),
    .sig_valid_o   (sig_valid[7:6]),
    .sig_sem_o     (sig_sem[7:6]),
    .acc_raddr_next_o (acc_vec_raddr_next),
    .acc_rdata_i   (acc_vec_rdata),
    .smem_addr_o   (smem_vec_addr),
    .smem_rdata_i  (smem_vec_rdata),
    .vmem_req_o    (v_req[2]),
    .vmem_we_o     (v_we[2]),
    .vmem_addr_o   (v_addr[2]),
    .vmem_wdata_o  (v_wdata[2]),
    .vmem_gnt_i    (v_gnt[2]),
    .vmem_rvalid_i (v_rvalid[2]),
    .vmem_rdata_i  (v_rdata[2]),
    .busy_o        (eng_busy[2]),
    .idle_o        (vec_idle),
    .stall_sem_o   (eng_stall_sem[2]),
    .stall_vmem_o  (vec_stall_vmem),
    .add_row_o     (vec_add_row),
    .issue_idx_i   (q_idx_q[2]),
    .done_o        (vec_done),
    .done_idx_o    (vec_done_idx),
    .err_range_o   (eng_err[2])
  );

  // ---------------- run control, counters, CSRs
  run_ctrl u_run (
    .clk_i, .rst_ni,
    .start_i         (start),
    .clear_i         (clear),
    .fetch_stopped_i (f_stopped),
    .fetch_idle_i    (f_idle),
    .fetch_stall_i   (f_stall),
    .fetch_illegal_i (f_illegal),
    .fetch_pc_i      (f_pc),
    .q_empty_i       (q_empty),
    .head_pc_i       (head_pc),
    .eng_busy_i      (eng_busy),
    .eng_stall_sem_i (eng_stall_sem),
    .eng_err_i       (eng_err),
    .sem_overflow_i  (sem_overflow),
    .busy_o          (run_busy),
    .done_o          (run_done),
    .err_o           (run_err),
    .err_code_o      (run_err_code),
    .err_pc_o        (run_err_pc)
  );
  assign busy_o = run_busy;

  logic [tpu_pkg::NumCounters-1:0][63:0] counters;

  perf_counters #(.Dim(Dim), .ConflictW($bits(v_conflicts))) u_counters (
    .clk_i, .rst_ni,
    .clear_i          (clear || start),
    .busy_i           (run_busy),
    .fetch_stall_i    (f_stall),
    .fetched_i        (f_fetched),
    .dma_stall_sem_i  (eng_stall_sem[0]),
    .dma_stall_mem_i  (dma_stall_mem),
    .dma_path_beat_i  (dma_path_beat),
    .mxu_row_in_i     (mxu_row_in),
    .mxu_stall_sem_i  (eng_stall_sem[1]),
    .mxu_stall_w_i    (mxu_stall_w),
    .mxu_stall_vmem_i (mxu_stall_vmem),
    .mxu_wload_i      (mxu_wload),
    .mxu_idle_i       (mxu_idle),
    .vec_busy_i       (eng_busy[2]),
    .vec_stall_sem_i  (eng_stall_sem[2]),
    .vec_stall_vmem_i (vec_stall_vmem),
    .vec_add_row_i    (vec_add_row),
    .vmem_conflicts_i (v_conflicts),
    .mem_req_valid_i  (mem_req_valid_o),
    .mem_req_ready_i  (mem_req_ready_i),
    .mem_req_write_i  (mem_req_write_o),
    .mem_rsp_valid_i  (mem_rsp_valid_i),
    .counters_o       (counters)
  );

  csr_block #(
    .Dim(Dim), .VmemRows(VmemRows), .AccRows(AccRows), .SmemWords(SmemWords), .QCntW(QCntW)
  ) u_csr (
    .clk_i, .rst_ni,
    .csr_valid_i, .csr_write_i, .csr_addr_i, .csr_wdata_i, .csr_rdata_o,
    .busy_i          (run_busy),
    .start_o         (start),
    .clear_o         (clear),
    .prog_base_o     (prog_base),
    .sem_we_o        (csr_sem_we),
    .sem_idx_o       (csr_sem_idx),
    .sem_wdata_o     (csr_sem_wdata),
    .sem_value_i     (sem_value),
    .smem_we_o       (smem_csr_we),
    .smem_addr_o     (smem_csr_addr),
    .smem_raddr_next_o (smem_csr_raddr_next),
    .smem_rdata_i    (smem_csr_rdata),
    .done_i          (run_done),
    .err_i           (run_err),
    .err_code_i      (run_err_code),
    .err_pc_i        (run_err_pc),
    .pc_i            (f_pc),
    .fetch_stopped_i (f_stopped),
    .q_count_i       (q_count),
    .head_wait_i     (eng_stall_sem),
    .head_sem_i      (sem_idx),
    .head_cnt_i      (sem_cnt),
    .counters_i      (counters)
  );

  logic unused;
  assign unused = ^{vec_idle, q_full, v_rdata[1:0]};

  // ---------------- instruction trace
  assign trace_o.dma.issue        = q_pop[0];
  assign trace_o.dma.stall_sem    = eng_stall_sem[0];
  assign trace_o.dma.done         = dma_done;
  assign trace_o.dma.done_idx     = dma_done_idx;
  assign trace_o.mxu.issue        = q_pop[1];
  assign trace_o.mxu.stall_sem    = eng_stall_sem[1];
  assign trace_o.mxu.done         = mxu_done;
  assign trace_o.mxu.done_idx     = mxu_done_idx;
  assign trace_o.vec.issue        = q_pop[2];
  assign trace_o.vec.stall_sem    = eng_stall_sem[2];
  assign trace_o.vec.done         = vec_done;
  assign trace_o.vec.done_idx     = vec_done_idx;
endmodule
