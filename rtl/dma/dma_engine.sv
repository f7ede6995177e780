// SPDX-License-Identifier: Apache-2.0
// Descriptor-driven 2-D strided DMA between HBM and VMEM / SMEM / the accumulators.
// The issue stage walks one descriptor at a time, one beat per cycle; reads keep up to
// Outstanding beats in flight and their data is written locally in order as it returns; writes
// read local memory into a small buffer and post beats to memory. Completion is tracked per
// descriptor in two in-order classes (reads from HBM, writes to HBM) and signals a semaphore.
`include "tpu_assert.svh"

module dma_engine #(
  parameter int unsigned Dim         = 16,
  parameter int unsigned VmemRows    = 16384,
  parameter int unsigned AccRows     = 2048,
  parameter int unsigned SmemWords   = 1024,
  parameter int unsigned Outstanding = 16,   // power of two
  localparam int unsigned DataW      = Dim * 8,
  localparam int unsigned VmemRowW   = $clog2(VmemRows),
  localparam int unsigned AccRowW    = $clog2(AccRows),
  localparam int unsigned SmemRows   = SmemWords / (Dim / 4),
  localparam int unsigned SmemRowW   = (SmemRows > 1) ? $clog2(SmemRows) : 1
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic                      clear_i,
  // queue head and semaphores
  input  logic                           instr_valid_i,
  input  logic [tpu_pkg::InstrWidth-1:0] instr_i,
  output logic                           instr_pop_o,
  output logic                           sem_req_o,
  input  logic                           sem_gnt_i,
  output logic [2:0]                     sig_valid_o, // 0: immediate, 1: read class, 2: write class
  output logic [2:0][4:0]                sig_sem_o,
  // instruction trace: queue index of the head, completions per port (as sig_valid_o, for every
  // instruction whether it signals or not) and the queue index of each completed instruction
  input  logic [tpu_pkg::TraceIdxW-1:0]      issue_idx_i,
  output logic [2:0]                         done_o,
  output logic [2:0][tpu_pkg::TraceIdxW-1:0] done_idx_o,
  // memory port
  output logic                          mem_req_valid_o,
  input  logic                          mem_req_ready_i,
  output logic                          mem_req_write_o,
  output logic [tpu_pkg::AddrWidth-1:0] mem_req_addr_o,
  output logic [DataW-1:0]              mem_req_wdata_o,
  input  logic                          mem_rsp_valid_i,
  input  logic [DataW-1:0]              mem_rsp_data_i,
  input  logic                          mem_wack_valid_i,
  // VMEM port
  output logic                      vmem_req_o,
  output logic                      vmem_we_o,
  output logic [VmemRowW-1:0]       vmem_addr_o,
  output logic [DataW-1:0]          vmem_wdata_o,
  input  logic                      vmem_gnt_i,
  input  logic                      vmem_rvalid_i,
  input  logic [DataW-1:0]          vmem_rdata_i,
  // SMEM and accumulator ports
  output logic                      smem_we_o,
  output logic [SmemRowW-1:0]       smem_wrow_o,
  output logic [DataW-1:0]          smem_wdata_o,
  input  logic                      smem_wait_i,      // the CSR port writes SMEM this cycle
  output logic [SmemRowW-1:0]       smem_rrow_next_o, // row read in the next cycle (sync read)
  input  logic [DataW-1:0]          smem_rdata_i,
  output logic [AccRowW-1:0]        acc_raddr_next_o, // row read in the next cycle (sync read)
  input  logic [Dim-1:0][31:0]      acc_rdata_i,
  // status
  output logic                      busy_o,
  output logic                      stall_sem_o,
  output logic                      stall_mem_o,
  output logic                      err_range_o,
  output logic [4:0]                path_beat_o    // one bit per dma_path_e: a beat moved
);
  localparam int unsigned TagW    = 1 + 20;          // is_smem, local row
  localparam int unsigned WDepth  = 4;
  localparam int unsigned UnitW   = 36;

  // ---------------- descriptor decode and start
  tpu_pkg::instr_dma_t dma;
  tpu_pkg::instr_hdr_t hdr;
  assign dma = instr_i;
  assign hdr = dma.hdr;
  logic [31:0] d_hbm, d_local, d_hstride;
  logic [15:0] d_len, d_count;
  logic [19:0] d_lstride;
  logic [3:0]  d_path;
  assign d_hbm     = dma.hbm_addr;
  assign d_local   = dma.local_addr;
  assign d_len     = dma.len;
  assign d_count   = dma.count;
  assign d_hstride = dma.hbm_stride;
  assign d_lstride = dma.local_stride;
  assign d_path    = dma.path;

  logic d_is_read, d_empty, d_is_nop;
  assign d_is_nop  = (hdr.opcode == tpu_pkg::OpDmaNop);
  assign d_is_read = (d_path == tpu_pkg::PathHbmToVmem) || (d_path == tpu_pkg::PathHbmToSmem);
  assign d_empty   = d_is_nop || (d_len == '0) || (d_count == '0);

  logic [63:0] d_last_row, d_rows;
  always_comb begin
    d_last_row = 64'(d_local) + (64'(d_count) - 64'd1) * 64'(d_lstride) + 64'(d_len) - 64'd1;
    unique case (d_path)
      tpu_pkg::PathHbmToVmem, tpu_pkg::PathVmemToHbm: d_rows = 64'(VmemRows);
      tpu_pkg::PathHbmToSmem, tpu_pkg::PathSmemToHbm: d_rows = 64'(SmemRows);
      tpu_pkg::PathAccToHbm:                 d_rows = 64'(AccRows);
      default:                      d_rows = 64'd0;
    endcase
  end
  logic d_bad;
  assign d_bad = !d_is_nop && !d_empty && (d_last_row >= d_rows);

  // issue-stage state
  logic              active_q;
  logic [3:0]        path_q;
  logic [31:0]       chunk_hbm_q, cur_hbm_q, hstride_q;
  logic [31:0]       chunk_local_q, cur_local_q;
  logic [19:0]       lstride_q;
  logic [15:0]       len_q, count_q, row_q, chunk_q;
  logic [1:0]        sub_q;

  // completion classes
  logic [1:0]        cls_full, cls_empty;
  logic [1:0]        cls_push, cls_pop;
  localparam int unsigned ClsW = tpu_pkg::TraceIdxW + 6 + UnitW;  // {queue index, sig_en, sig_sem, units}
  logic [ClsW-1:0]   cls_in, cls_head [2];

  logic can_start;
  // a NOP is a fence: it starts once every earlier descriptor has completed
  assign can_start = instr_valid_i && !active_q &&
                     (d_is_nop ? !busy_o : (d_empty || !cls_full[d_is_read ? 0 : 1]));
  logic start;
  issue_gate #(.CheckBeforeWait(1'b0)) u_issue (
    .valid_i         (can_start),
    .bad_i           (d_bad),
    .wait_en_i       (hdr.wait_en),
    .sem_req_o,
    .sem_gnt_i,
    .issue_o         (start),
    .stall_sem_o,
    .err_o           (err_range_o),
    .done_at_issue_i (d_empty),
    .sig_en_i        (hdr.sig_en),
    .sig_sem_i       (hdr.sig_sem),
    .sig_valid_o     (sig_valid_o[0]),
    .sig_sem_o       (sig_sem_o[0])
  );
  assign instr_pop_o   = start;
  assign done_o[0]     = start && d_empty;
  assign done_idx_o[0] = issue_idx_i;

  logic [UnitW-1:0] d_units;
  assign d_units = UnitW'(d_len) * UnitW'(d_count) * ((d_path == tpu_pkg::PathAccToHbm) ? UnitW'(4) : UnitW'(1));
  assign cls_in  = {issue_idx_i, hdr.sig_en, hdr.sig_sem, d_units};
  assign cls_push[0] = start && !d_empty && d_is_read;
  assign cls_push[1] = start && !d_empty && !d_is_read;

  // ---------------- read path: requests, tags, returned data
  logic             rtag_full, rtag_empty, rdat_empty;
  logic [$clog2(Outstanding):0] rtag_count, rdat_count;
  // Responses still to come for requests issued before a soft reset: the memory answers them
  // anyway, and they must neither land in local memory nor count towards a descriptor.
  logic [$clog2(Outstanding):0] rd_discard_q;
  logic             rsp_keep;
  logic [TagW-1:0]  rtag_head;
  logic [DataW-1:0] rdat_head;
  logic             rtag_push, rdrain;
  logic [TagW-1:0]  rtag_in;

  // ---------------- write path buffer
  logic             wbuf_full, wbuf_empty, wbuf_push, wbuf_pop;
  logic [2:0]       wbuf_count;
  logic [tpu_pkg::AddrWidth+3+DataW-1:0] wbuf_in, wbuf_head;
  logic             vread_pending_q;
  logic [tpu_pkg::AddrWidth+3-1:0] vread_meta_q;
  localparam int unsigned WackW = $clog2(Outstanding) + 1;
  logic [WackW-1:0] wack_pending_q;

  // what the issue stage wants this cycle
  logic is_read_q;
  assign is_read_q = (path_q == tpu_pkg::PathHbmToVmem) || (path_q == tpu_pkg::PathHbmToSmem);
  logic issue_read, issue_write_direct, issue_vread;
  logic wbuf_space;
  assign wbuf_space = (32'(wbuf_count) + 32'(vread_pending_q)) < WDepth;

  // memory port: buffered writes first, then read requests
  logic wants_write_mem, wants_read_mem;
  assign wants_write_mem = !wbuf_empty && (wack_pending_q < WackW'(Outstanding));
  assign wants_read_mem  = active_q && is_read_q && !rtag_full;
  assign mem_req_valid_o = wants_write_mem || wants_read_mem;
  assign mem_req_write_o = wants_write_mem;
  assign mem_req_addr_o  = wants_write_mem ? wbuf_head[tpu_pkg::AddrWidth+3+DataW-1 -: tpu_pkg::AddrWidth] : cur_hbm_q;
  assign mem_req_wdata_o = wbuf_head[DataW-1:0];
  assign wbuf_pop        = wants_write_mem && mem_req_ready_i;
  assign issue_read      = !wants_write_mem && wants_read_mem && mem_req_ready_i;

  // local row of the current beat
  logic [31:0] cur_row;
  assign cur_row = cur_local_q;
  assign rtag_in   = {(path_q == tpu_pkg::PathHbmToSmem), cur_row[19:0]};
  assign rtag_push = issue_read;

  // write descriptors: SMEM and ACC are read synchronously, so they are given the local row of
  // the next cycle and return the current row's data in this one; VMEM is read through its port
  logic [31:0] cur_local_d;
  assign smem_rrow_next_o = SmemRowW'(cur_local_d);
  assign acc_raddr_next_o = AccRowW'(cur_local_d);
  assign issue_write_direct = active_q && !is_read_q && (path_q != tpu_pkg::PathVmemToHbm) && wbuf_space;

  // VMEM port: drain returned read data first, then V2H reads
  logic rdat_wants_vmem, rdat_is_smem;
  assign rdat_is_smem    = rtag_head[TagW-1];
  assign rdat_wants_vmem = !rdat_empty && !rdat_is_smem;
  logic vread_wants;
  assign vread_wants = active_q && (path_q == tpu_pkg::PathVmemToHbm) && wbuf_space && !rdat_wants_vmem;
  assign vmem_req_o   = rdat_wants_vmem || vread_wants;
  assign vmem_we_o    = rdat_wants_vmem;
  assign vmem_addr_o  = rdat_wants_vmem ? VmemRowW'(rtag_head[19:0]) : VmemRowW'(cur_row);
  assign vmem_wdata_o = rdat_head;
  assign issue_vread  = vread_wants && vmem_gnt_i;

  assign smem_we_o    = !rdat_empty && rdat_is_smem && !smem_wait_i;
  assign smem_wrow_o  = SmemRowW'(rtag_head[19:0]);
  assign smem_wdata_o = rdat_head;
  assign rdrain       = smem_we_o || (rdat_wants_vmem && vmem_gnt_i);

  // write buffer entry: {addr, path, data}
  logic [DataW-1:0] direct_data;
  assign direct_data = (path_q == tpu_pkg::PathAccToHbm) ? acc_rdata_i[(Dim/4)*sub_q +: Dim/4]
                                                : smem_rdata_i;
  assign wbuf_push = issue_write_direct || vmem_rvalid_i;
  assign wbuf_in   = vmem_rvalid_i ? {vread_meta_q, vmem_rdata_i}
                                   : {cur_hbm_q, 3'(path_q), direct_data};

  // ---------------- walk the descriptor
  logic advance;
  assign advance = issue_read || issue_write_direct || issue_vread;
  logic last_sub;
  assign last_sub = (path_q != tpu_pkg::PathAccToHbm) || (sub_q == 2'd3);

  always_comb begin
    cur_local_d = cur_local_q;
    if (!clear_i) begin
      if (start && !d_empty) begin
        cur_local_d = d_local;
      end else if (advance && last_sub) begin
        if (row_q + 16'd1 < len_q)         cur_local_d = cur_local_q + 32'd1;
        else if (chunk_q + 16'd1 < count_q) cur_local_d = chunk_local_q + 32'(lstride_q);
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      active_q <= 1'b0;
      path_q <= '0; chunk_hbm_q <= '0; cur_hbm_q <= '0; hstride_q <= '0;
      chunk_local_q <= '0; cur_local_q <= '0; lstride_q <= '0;
      len_q <= '0; count_q <= '0; row_q <= '0; chunk_q <= '0; sub_q <= '0;
      vread_pending_q <= 1'b0; vread_meta_q <= '0;
    end else if (clear_i) begin
      active_q <= 1'b0;
      vread_pending_q <= 1'b0;
    end else begin
      vread_pending_q <= issue_vread;
      cur_local_q     <= cur_local_d;
      if (issue_vread) vread_meta_q <= {cur_hbm_q, 3'(path_q)};
      if (start && !d_empty) begin
        active_q      <= 1'b1;
        path_q        <= d_path;
        chunk_hbm_q   <= d_hbm;
        cur_hbm_q     <= d_hbm;
        hstride_q     <= d_hstride;
        chunk_local_q <= d_local;
        lstride_q     <= d_lstride;
        len_q         <= d_len;
        count_q       <= d_count;
        row_q         <= '0;
        chunk_q       <= '0;
        sub_q         <= '0;
      end else if (advance) begin
        cur_hbm_q <= cur_hbm_q + tpu_pkg::AddrWidth'(Dim);
        if (!last_sub) begin
          sub_q <= sub_q + 2'd1;
        end else begin
          sub_q <= '0;
          if (row_q + 16'd1 < len_q) begin
            row_q       <= row_q + 16'd1;
          end else begin
            row_q <= '0;
            if (chunk_q + 16'd1 < count_q) begin
              chunk_q       <= chunk_q + 16'd1;
              chunk_hbm_q   <= chunk_hbm_q + hstride_q;
              cur_hbm_q     <= chunk_hbm_q + hstride_q;
              chunk_local_q <= chunk_local_q + 32'(lstride_q);
            end else begin
              active_q <= 1'b0;
            end
          end
        end
      end
    end
  end

  // ---------------- FIFOs
  sync_fifo #(.Width(TagW), .Depth(Outstanding)) u_rtag (
    .clk_i, .rst_ni, .clear_i,
    .push_i(rtag_push), .data_i(rtag_in), .pop_i(rdrain), .data_o(rtag_head),
    .empty_o(rtag_empty), .full_o(rtag_full), .count_o(rtag_count)
  );
  assign rsp_keep = mem_rsp_valid_i && (rd_discard_q == '0);
  sync_fifo #(.Width(DataW), .Depth(Outstanding)) u_rdat (
    .clk_i, .rst_ni, .clear_i,
    .push_i(rsp_keep), .data_i(mem_rsp_data_i), .pop_i(rdrain), .data_o(rdat_head),
    .empty_o(rdat_empty), .full_o(), .count_o(rdat_count)
  );
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rd_discard_q <= '0;
    end else if (clear_i) begin
      rd_discard_q <= rd_discard_q + rtag_count - rdat_count + ($clog2(Outstanding)+1)'(issue_read)
                      - ($clog2(Outstanding)+1)'(mem_rsp_valid_i);
    end else if (mem_rsp_valid_i && rd_discard_q != '0) begin
      rd_discard_q <= rd_discard_q - 1'b1;
    end
  end
  sync_fifo #(.Width(tpu_pkg::AddrWidth+3+DataW), .Depth(WDepth)) u_wbuf (
    .clk_i, .rst_ni, .clear_i,
    .push_i(wbuf_push), .data_i(wbuf_in), .pop_i(wbuf_pop), .data_o(wbuf_head),
    .empty_o(wbuf_empty), .full_o(wbuf_full), .count_o(wbuf_count)
  );

  // Write acknowledgements are counted across a soft reset too; those of writes issued before it
  // are discarded.
  logic [WackW-1:0] wack_discard_q;
  logic             wack_keep;
  assign wack_keep = mem_wack_valid_i && (wack_discard_q == '0);
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wack_pending_q <= '0;
      wack_discard_q <= '0;
    end else begin
      wack_pending_q <= wack_pending_q + WackW'(wbuf_pop) - WackW'(mem_wack_valid_i);
      if (clear_i) wack_discard_q <= wack_pending_q + WackW'(wbuf_pop) - WackW'(mem_wack_valid_i);
      else if (mem_wack_valid_i && wack_discard_q != '0) wack_discard_q <= wack_discard_q - 1'b1;
    end
  end

  // ---------------- completion per class
  logic [1:0] unit_done;
  assign unit_done[0] = rdrain;
  assign unit_done[1] = wack_keep;
  logic [UnitW-1:0] done_q [2];

  for (genvar c = 0; c < 2; c++) begin : g_class
    sync_fifo #(.Width(ClsW), .Depth(8)) u_cls (
      .clk_i, .rst_ni, .clear_i,
      .push_i(cls_push[c]), .data_i(cls_in), .pop_i(cls_pop[c]), .data_o(cls_head[c]),
      .empty_o(cls_empty[c]), .full_o(cls_full[c]), .count_o()
    );
    assign cls_pop[c] = unit_done[c] && !cls_empty[c] &&
                        (done_q[c] + UnitW'(1) == cls_head[c][UnitW-1:0]);
    assign sig_valid_o[c+1] = cls_pop[c] && cls_head[c][UnitW+5];
    assign sig_sem_o[c+1]   = cls_head[c][UnitW+4:UnitW];
    assign done_o[c+1]      = cls_pop[c];
    assign done_idx_o[c+1]  = cls_head[c][ClsW-1 -: tpu_pkg::TraceIdxW];
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni)           done_q[c] <= '0;
      else if (clear_i)      done_q[c] <= '0;
      else if (cls_pop[c])   done_q[c] <= '0;
      else if (unit_done[c]) done_q[c] <= done_q[c] + UnitW'(1);
    end
  end

  logic unused;
  assign unused = ^{dma.rsvd_255_184, hdr.rsvd_31_28, hdr.wait_cnt, hdr.wait_sem, wbuf_full,
                    cur_row[31:20]};

  // ---------------- status
  assign busy_o = active_q || !cls_empty[0] || !cls_empty[1] || !wbuf_empty || vread_pending_q ||
                  !rtag_empty || (wack_pending_q != '0);
  assign stall_mem_o = (wants_write_mem && !mem_req_ready_i) ||
                       (active_q && is_read_q && (rtag_full || !mem_req_ready_i || wants_write_mem));
  always_comb begin
    path_beat_o = '0;
    if (wbuf_pop)   path_beat_o[wbuf_head[DataW +: 3]] = 1'b1;
    if (issue_read) path_beat_o[path_q[2:0]] = 1'b1;
  end

  // ---------------- protocol invariants (simulation only)
  `TPU_ASSERT_INIT
  // Read data never runs ahead of its tags: each kept response is the data of a read whose tag
  // (its local row) is queued, else it would be written to another read's row.
  `TPU_ASSERT(chk_data_behind_tags, rdat_count <= rtag_count,
              "dma_engine: read data without a read tag")
  // The memory answers only reads it accepted: those still unanswered are the tags without data
  // and the reads from before a soft reset still to drop (rd_discard_q never underflows).
  `TPU_ASSERT(chk_rsp_requested,
              !mem_rsp_valid_i || rd_discard_q != '0 || rdat_count < rtag_count || issue_read,
              "dma_engine: read response without an outstanding read")
  // Write acknowledgements answer accepted writes only (wack_pending_q never underflows), and
  // those to drop after a soft reset are some of them.
  `TPU_ASSERT(chk_wack_requested, !mem_wack_valid_i || wack_pending_q != '0 || wbuf_pop,
              "dma_engine: write acknowledge without an outstanding write")
  `TPU_ASSERT(chk_wack_discard, wack_discard_q <= wack_pending_q,
              "dma_engine: more write acknowledges to drop than outstanding")

`ifndef SYNTHESIS
  // A write offered to memory and not accepted: the buffer pops only on acceptance, so the same
  // write must be offered in the next cycle (unless a soft reset drops it).
  logic                          chk_wr_wait_q;
  logic [tpu_pkg::AddrWidth-1:0] chk_wr_addr_q;
  logic [DataW-1:0]              chk_wr_data_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) chk_wr_wait_q <= 1'b0;
    else         chk_wr_wait_q <= mem_req_valid_o && mem_req_write_o && !mem_req_ready_i && !clear_i;
  end
  always_ff @(posedge clk_i) begin
    chk_wr_addr_q <= mem_req_addr_o;
    chk_wr_data_q <= mem_req_wdata_o;
  end
`endif
  // A posted write is held, unchanged, until memory takes it: withdrawing or changing it would
  // lose or corrupt a beat that its descriptor still counts on being acknowledged.
  `TPU_ASSERT_IF(chk_write_held, chk_wr_wait_q,
                 mem_req_valid_o && mem_req_write_o && mem_req_addr_o == chk_wr_addr_q &&
                 mem_req_wdata_o == chk_wr_data_q,
                 "dma_engine: a write not yet accepted was withdrawn or changed")
  // A completion class counts the units (beats, or ACC quarter rows) of its oldest descriptor
  // only: it is never asked to count one with no descriptor, and pops at the last, so the count
  // stays below the descriptor's units.
  for (genvar c = 0; c < 2; c++) begin : g_chk_class
    `TPU_ASSERT_FMT(chk_class_units,
                    cls_empty[c] ? (done_q[c] == '0 && !unit_done[c])
                                 : (done_q[c] < cls_head[c][UnitW-1:0]),
                    ("dma_engine: completion class %0d counted a unit beyond its descriptors", c))
  end
endmodule
