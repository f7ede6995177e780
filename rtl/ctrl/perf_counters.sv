// SPDX-License-Identifier: Apache-2.0
// The core's performance counters, COUNTER[j] of the CSR map, indexed by counter_e (tpu_pkg,
// generated from spec/tpuemu.json). Each is 64 bits wide and cleared by start and soft reset; the
// events below are sampled every cycle, whether or not a program runs.
module perf_counters #(
  parameter int unsigned Dim        = 16,
  parameter int unsigned ConflictW  = 3     // width of the VMEM bank conflict count
) (
  input  logic                         clk_i,
  input  logic                         rst_ni,
  input  logic                         clear_i,
  // events
  input  logic                         busy_i,
  input  logic                         fetch_stall_i,
  input  logic                         fetched_i,
  input  logic                         dma_stall_sem_i,
  input  logic                         dma_stall_mem_i,
  input  logic [4:0]                   dma_path_beat_i,   // one bit per dma_path_e
  input  logic                         mxu_row_in_i,
  input  logic                         mxu_stall_sem_i,
  input  logic                         mxu_stall_w_i,
  input  logic                         mxu_stall_vmem_i,
  input  logic                         mxu_wload_i,
  input  logic                         mxu_idle_i,
  input  logic                         vec_busy_i,
  input  logic                         vec_stall_sem_i,
  input  logic                         vec_stall_vmem_i,
  input  logic                         vec_add_row_i,
  input  logic [ConflictW-1:0]         vmem_conflicts_i,
  input  logic                         mem_req_valid_i,
  input  logic                         mem_req_ready_i,
  input  logic                         mem_req_write_i,
  input  logic                         mem_rsp_valid_i,
  // values
  output logic [tpu_pkg::NumCounters-1:0][63:0] counters_o
);
  // A DMA beat moves one memory beat of Dim bytes.
  function automatic logic [15:0] beat_bytes(logic beat);
    beat_bytes = beat ? 16'(Dim) : '0;
  endfunction

  logic [tpu_pkg::NumCounters-1:0][63:0] cnt_q;
  logic [tpu_pkg::NumCounters-1:0][15:0] cnt_inc;
  always_comb begin
    cnt_inc = '0;
    cnt_inc[tpu_pkg::CntCycles]                  = 16'(busy_i);
    cnt_inc[tpu_pkg::CntMxuBusy]                 = 16'(mxu_row_in_i);
    cnt_inc[tpu_pkg::CntMxuStallSemaphore]       = 16'(mxu_stall_sem_i);
    cnt_inc[tpu_pkg::CntMxuStallWeights]         = 16'(mxu_stall_w_i);
    cnt_inc[tpu_pkg::CntMxuStallBankConflict]    = 16'(mxu_stall_vmem_i);
    cnt_inc[tpu_pkg::CntDmaStallSemaphore]       = 16'(dma_stall_sem_i);
    cnt_inc[tpu_pkg::CntDmaStallMemory]          = 16'(dma_stall_mem_i);
    cnt_inc[tpu_pkg::CntVectorStallSemaphore]    = 16'(vec_stall_sem_i);
    cnt_inc[tpu_pkg::CntFetchStall]              = 16'(fetch_stall_i);
    cnt_inc[tpu_pkg::CntBytesHbmToVmem]          = beat_bytes(dma_path_beat_i[3'(tpu_pkg::PathHbmToVmem)]);
    cnt_inc[tpu_pkg::CntBytesVmemToHbm]          = beat_bytes(dma_path_beat_i[3'(tpu_pkg::PathVmemToHbm)]);
    cnt_inc[tpu_pkg::CntBytesHbmToSmem]          = beat_bytes(dma_path_beat_i[3'(tpu_pkg::PathHbmToSmem)]);
    cnt_inc[tpu_pkg::CntBytesSmemToHbm]          = beat_bytes(dma_path_beat_i[3'(tpu_pkg::PathSmemToHbm)]);
    cnt_inc[tpu_pkg::CntBytesAccToHbm]           = beat_bytes(dma_path_beat_i[3'(tpu_pkg::PathAccToHbm)]);
    cnt_inc[tpu_pkg::CntVmemBankConflicts]       = 16'(vmem_conflicts_i);
    cnt_inc[tpu_pkg::CntInstructionsFetched]     = 16'(fetched_i);
    cnt_inc[tpu_pkg::CntMemReadBeats]            = 16'(mem_rsp_valid_i);
    cnt_inc[tpu_pkg::CntMemWriteBeats]           = 16'(mem_req_valid_i && mem_req_ready_i && mem_req_write_i);
    cnt_inc[tpu_pkg::CntVectorBusy]              = 16'(vec_busy_i);
    cnt_inc[tpu_pkg::CntWeightLoadBusy]          = 16'(mxu_wload_i);
    cnt_inc[tpu_pkg::CntMxuIdleEmpty]            = 16'(busy_i && mxu_idle_i);
    cnt_inc[tpu_pkg::CntVectorStallBankConflict] = 16'(vec_stall_vmem_i);
    cnt_inc[tpu_pkg::CntVectorAddRows]           = 16'(vec_add_row_i);
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cnt_q <= '0;
    end else if (clear_i) begin
      cnt_q <= '0;
    end else begin
      for (int unsigned j = 0; j < tpu_pkg::NumCounters; j++) cnt_q[j] <= cnt_q[j] + 64'(cnt_inc[j]);
    end
  end
  assign counters_o = cnt_q;
endmodule
