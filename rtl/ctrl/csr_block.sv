// SPDX-License-Identifier: Apache-2.0
// The CSR interface of the core: decodes firmware accesses into run-control commands and the
// semaphore / SMEM side ports, holds the CSR-only state (PROG_BASE, SMEM_ADDR) and muxes the read
// data. Addresses and register layouts come from tpu_pkg (csr_addr_e, csr_*_t), generated from
// spec/tpuemu.json, so the firmware's and the host's views cannot drift from this decode.
`include "tpu_assert.svh"

module csr_block #(
  parameter int unsigned Dim       = 16,
  parameter int unsigned VmemRows  = 16384,
  parameter int unsigned AccRows   = 2048,
  parameter int unsigned SmemWords = 1024,
  parameter int unsigned QCntW     = 4,     // width of a queue's entry count
  localparam int unsigned SmemW    = $clog2(SmemWords)
) (
  input  logic                             clk_i,
  input  logic                             rst_ni,
  // CSR bus
  input  logic                             csr_valid_i,
  input  logic                             csr_write_i,
  input  logic [tpu_pkg::CsrAddrWidth-1:0] csr_addr_i,
  input  logic [31:0]                      csr_wdata_i,
  output logic [31:0]                      csr_rdata_o,
  // CTRL: start is ignored while a program runs; soft reset always takes effect
  input  logic                          busy_i,
  output logic                          start_o,
  output logic                          clear_o,
  output logic [tpu_pkg::AddrWidth-1:0] prog_base_o,
  // SEM[i] writes
  output logic                                               sem_we_o,
  output logic [tpu_pkg::SemIdxWidth-1:0]                    sem_idx_o,
  output logic [tpu_pkg::SemWidth-1:0]                       sem_wdata_o,
  input  logic [tpu_pkg::NumSems-1:0][tpu_pkg::SemWidth-1:0] sem_value_i,
  // SMEM_DATA: one word at SMEM_ADDR per access, which then advances
  output logic                             smem_we_o,
  output logic [SmemW-1:0]                 smem_addr_o,        // the word accessed this cycle
  output logic [SmemW-1:0]                 smem_raddr_next_o,  // the word of the next cycle
  input  logic [31:0]                      smem_rdata_i,
  // read-only state
  input  logic                                  done_i,
  input  logic                                  err_i,
  input  logic [7:0]                            err_code_i,
  input  logic [31:0]                           err_pc_i,
  input  logic [31:0]                           pc_i,
  input  logic                                  fetch_stopped_i,
  input  logic [2:0][QCntW-1:0]                 q_count_i, // per queue: 0 DMA, 1 MXU, 2 vector
  input  logic [2:0]                            head_wait_i, // the head waits on its semaphore
  input  logic [2:0][tpu_pkg::SemIdxWidth-1:0]  head_sem_i,
  input  logic [2:0][7:0]                       head_cnt_i,
  input  logic [tpu_pkg::NumCounters-1:0][63:0] counters_i
);
  localparam int unsigned VmemRowW = $clog2(VmemRows);
  localparam int unsigned AccRowW  = $clog2(AccRows);

  // ---------------- decode
  logic csr_wr, csr_rd;
  assign csr_wr = csr_valid_i && csr_write_i;
  assign csr_rd = csr_valid_i && !csr_write_i;

  tpu_pkg::csr_ctrl_t ctrl_wdata;
  assign ctrl_wdata = csr_wdata_i;
  assign start_o = csr_wr && (csr_addr_i == tpu_pkg::CsrCtrl) && ctrl_wdata.start && !busy_i;
  assign clear_o = csr_wr && (csr_addr_i == tpu_pkg::CsrCtrl) && ctrl_wdata.soft_reset;

  logic                    sem_hit;
  logic [tpu_pkg::CsrAddrWidth-1:0] sem_off;
  assign sem_off     = csr_addr_i - tpu_pkg::CsrSem;
  assign sem_hit     = (csr_addr_i >= tpu_pkg::CsrSem) &&
                       (32'(csr_addr_i) < 32'(tpu_pkg::CsrSem) + tpu_pkg::CsrSemStride * tpu_pkg::NumSems) &&
                       (csr_addr_i[1:0] == 2'b00);
  assign sem_idx_o   = sem_off[2 +: tpu_pkg::SemIdxWidth];
  assign sem_we_o    = csr_wr && sem_hit;
  assign sem_wdata_o = csr_wdata_i[tpu_pkg::SemWidth-1:0];

  logic smem_access;
  assign smem_access = csr_valid_i && (csr_addr_i == tpu_pkg::CsrSmemData);
  assign smem_we_o   = smem_access && csr_write_i;

  // ---------------- CSR-held state
  logic [tpu_pkg::AddrWidth-1:0] prog_base_q;
  logic [SmemW-1:0]     smem_addr_q, smem_addr_d;

  always_comb begin
    smem_addr_d = smem_addr_q;
    if (csr_wr && csr_addr_i == tpu_pkg::CsrSmemAddr) smem_addr_d = SmemW'(csr_wdata_i);
    else if (smem_access)                             smem_addr_d = smem_addr_q + 1'b1;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      prog_base_q <= '0;
      smem_addr_q <= '0;
    end else begin
      if (csr_wr && csr_addr_i == tpu_pkg::CsrProgBase) prog_base_q <= csr_wdata_i;
      smem_addr_q <= smem_addr_d;
    end
  end
  assign prog_base_o = prog_base_q;
  assign smem_addr_o = smem_addr_q;
  // SMEM reads are synchronous: it is given the word SMEM_DATA reads in the next cycle.
  assign smem_raddr_next_o = smem_addr_d;

  // ---------------- read mux
  tpu_pkg::csr_config_t      csr_config;
  tpu_pkg::csr_status_t      csr_status;
  tpu_pkg::csr_queue_state_t csr_queue_state;
  tpu_pkg::csr_head_wait_t   csr_head_wait;
  always_comb begin
    csr_config                = '0;
    csr_config.dim            = 16'(Dim);
    csr_config.log2_vmem_rows = 8'(VmemRowW);
    csr_config.log2_acc_rows  = 8'(AccRowW);
    csr_status                = '0;
    csr_status.busy           = busy_i;
    csr_status.done           = done_i;
    csr_status.error          = err_i;
    csr_status.error_code     = err_code_i;
    csr_queue_state               = '0;
    csr_queue_state.dma_entries   = 8'(q_count_i[0]);
    csr_queue_state.mxu_entries   = 8'(q_count_i[1]);
    csr_queue_state.vec_entries   = 8'(q_count_i[2]);
    csr_queue_state.fetch_stopped = fetch_stopped_i;
    csr_queue_state.dma_waits     = head_wait_i[0];
    csr_queue_state.mxu_waits     = head_wait_i[1];
    csr_queue_state.vec_waits     = head_wait_i[2];
    csr_head_wait          = '0;
    csr_head_wait.dma_sem  = head_sem_i[0];
    csr_head_wait.mxu_sem  = head_sem_i[1];
    csr_head_wait.vec_sem  = head_sem_i[2];
    csr_head_wait.wait_cnt = head_wait_i[0] ? head_cnt_i[0] :
                             head_wait_i[1] ? head_cnt_i[1] : head_cnt_i[2];
  end

  // COUNTER[j] is 64 bits at CsrCounter + CsrCounterStride * j: low word, then high word.
  logic                    unused_off;
  logic [tpu_pkg::CsrAddrWidth-1:0] cnt_off;
  assign cnt_off = csr_addr_i - tpu_pkg::CsrCounter;
  always_comb begin
    csr_rdata_o = '0;
    unused_off  = 1'b0;
    unique case (csr_addr_i)
      tpu_pkg::CsrId:         csr_rdata_o = tpu_pkg::IdValue;
      tpu_pkg::CsrConfig:     csr_rdata_o = csr_config;
      tpu_pkg::CsrStatus:     csr_rdata_o = csr_status;
      tpu_pkg::CsrProgBase:   csr_rdata_o = prog_base_q;
      tpu_pkg::CsrErrorInfo:  csr_rdata_o = err_pc_i;
      tpu_pkg::CsrQueueState: csr_rdata_o = csr_queue_state;
      tpu_pkg::CsrHeadWait:   csr_rdata_o = csr_head_wait;
      tpu_pkg::CsrPc:         csr_rdata_o = pc_i;
      tpu_pkg::CsrSmemAddr:   csr_rdata_o = 32'(smem_addr_q);
      tpu_pkg::CsrSmemData:   csr_rdata_o = smem_rdata_i;
      default: begin
        if (sem_hit) begin
          csr_rdata_o = 32'(sem_value_i[sem_idx_o]);
        end else if (csr_addr_i >= tpu_pkg::CsrCounter &&
                     32'(csr_addr_i) < 32'(tpu_pkg::CsrCounter) + tpu_pkg::CsrCounterStride * tpu_pkg::NumCounters) begin
          csr_rdata_o = cnt_off[2] ? counters_i[cnt_off[tpu_pkg::CsrAddrWidth-1:3]][63:32] : counters_i[cnt_off[tpu_pkg::CsrAddrWidth-1:3]][31:0];
          unused_off  = ^cnt_off[1:0];
        end
      end
    endcase
  end

  logic unused;
  assign unused = ^{sem_off, csr_rd, ctrl_wdata.rsvd_31_2, unused_off};

  // ---------------- protocol invariants (simulation only), on clocked accesses: writes and the
  // SMEM_DATA read that advances SMEM_ADDR (other reads are combinational and take no edge)
  `TPU_ASSERT_INIT
  // Every register is a 32-bit word: the decode compares whole word addresses (and picks a
  // counter's half by bit 2), so an unaligned access would silently hit nothing.
  `TPU_ASSERT_IF_FMT(chk_word_aligned, csr_valid_i, csr_addr_i[1:0] == 2'b00,
                     ("csr_block: unaligned CSR access at 0x%03x", csr_addr_i))
  // A write reaches a writable register (the contract's W and RW rows); anything else has no
  // write path here and would be lost without a trace.
  `TPU_ASSERT_IF_FMT(chk_write_mapped, csr_wr,
                     csr_addr_i inside {tpu_pkg::CsrCtrl, tpu_pkg::CsrProgBase, tpu_pkg::CsrSmemAddr,
                                        tpu_pkg::CsrSmemData} || sem_hit,
                     ("csr_block: write to the unmapped or read-only CSR 0x%03x", csr_addr_i))
  // PROG_BASE is not written while a program runs: fetch adds it to every request address, so the
  // rest of the program would be fetched from elsewhere (the firmware loads programs only when
  // the core is not busy).
  `TPU_ASSERT(chk_prog_base_idle, !(csr_wr && csr_addr_i == tpu_pkg::CsrProgBase && busy_i),
              "csr_block: PROG_BASE written while a program runs")
endmodule
