// Shared parameters, opcodes and helper functions of the tpuemu core (see docs/isa.md).
package tpu_pkg;

  localparam int unsigned NumSems     = 32;
  localparam int unsigned SemWidth    = 16;
  localparam int unsigned InstrWidth  = 256;
  localparam int unsigned AddrWidth   = 32;
  localparam int unsigned NumCounters = 22;

  // Cycles from a row entering the MXU to its result row leaving it.
  function automatic int unsigned mxu_latency(int unsigned dim);
    return 2 * dim;
  endfunction

  typedef enum logic [7:0] {
    OpEnd     = 8'h00,
    OpDma     = 8'h10,
    OpDmaNop  = 8'h1F,
    OpLoadW   = 8'h20,
    OpMatmul  = 8'h21,
    OpMxuNop  = 8'h2F,
    OpVQuant  = 8'h30,
    OpVecNop  = 8'h3F
  } opcode_e;

  typedef enum logic [3:0] {
    PathHbmToVmem = 4'd0,
    PathVmemToHbm = 4'd1,
    PathHbmToSmem = 4'd2,
    PathSmemToHbm = 4'd3,
    PathAccToHbm  = 4'd4
  } dma_path_e;

  typedef enum logic [7:0] {
    ErrNone       = 8'd0,
    ErrIllegalOp  = 8'd1,
    ErrDeadlock   = 8'd2,
    ErrAddrRange  = 8'd3,
    ErrSemOverflow = 8'd4
  } error_e;

  // Common instruction header (w0).
  typedef struct packed {
    logic [3:0] reserved;
    logic [4:0] sig_sem;
    logic       sig_en;
    logic [7:0] wait_cnt;
    logic [4:0] wait_sem;
    logic       wait_en;
    logic [7:0] opcode;
  } instr_hdr_t;

  typedef enum int unsigned {
    CntCycles        = 0,
    CntMxuBusy       = 1,
    CntMxuStallSem   = 2,
    CntMxuStallW     = 3,
    CntMxuStallVmem  = 4,
    CntDmaStallSem   = 5,
    CntDmaStallMem   = 6,
    CntVecStallSem   = 7,
    CntFetchStall    = 8,
    CntBytesH2V      = 9,
    CntBytesV2H      = 10,
    CntBytesH2S      = 11,
    CntBytesS2H      = 12,
    CntBytesA2H      = 13,
    CntBankConflicts = 14,
    CntInstrs        = 15,
    CntMemReadBeats  = 16,
    CntMemWriteBeats = 17,
    CntVecBusy       = 18,
    CntWloadBusy     = 19,
    CntMxuIdle       = 20,
    CntVecStallVmem  = 21
  } counter_e;

endpackage
