// SPDX-License-Identifier: Apache-2.0
// Controller-internal types and functions of the HBM controller (rtl/mem/hbm, contract:
// docs/hbm.md), included at the end of the generated package hbm_spec_pkg, whose contract items
// (burst and bus widths, timing_t, stats_t, the address-field codes and the named orders) they
// build on. One package rather than two because Yosys does not resolve one package's names in
// another (docs/fpga.md).
//
// C++ view of the packed structs: every struct is declared most significant field first, so the
// first field lands in the least significant bits and a harness can fill a struct as a
// little-endian array of fields (timing_t: 16-bit fields, amap_t: bytes, stats_t: 64-bit
// counters).
  // Burst port widths derived from the contract's burst size.
  localparam int unsigned OffW  = $clog2(BurstBytes);  // burst offset bits of a byte address
  localparam int unsigned DataW = BurstBytes * 8;      // 512
  localparam int unsigned MaskW = BurstBytes;          // 64

  // Timestamps.
  localparam int unsigned CycW = 48;  // free-running cycle counter (2^48 tCK: never wraps)

  // Per-channel command bus encoding (docs/hbm.md).
  typedef enum logic [2:0] {
    CmdNop  = 3'd0,
    CmdAct  = 3'd1,
    CmdPre  = 3'd2,
    CmdPrea = 3'd3,
    CmdRd   = 3'd4,
    CmdWr   = 3'd5,
    CmdRef  = 3'd6
  } cmd_e;

  // Address-map configuration. Byte k (LSB first): order, col_bits, ch_bits, bg_bits, ba_bits,
  // row_bits; bits [62:48] the custom order (used only with AmapCustom): custom[3k +: 3] is the
  // code of the k-th field from the burst offset up. Widths may be smaller than the structure
  // (unused high bits of a field are zero) but not larger: ch_bits <= log2(NumChannels),
  // col_bits <= ColW, bg_bits <= log2(BankGroups), ba_bits <= log2(BanksPerGroup),
  // row_bits <= RowW.
  typedef struct packed {
    logic [15:0] custom;    // [63:48]
    logic [7:0]  row_bits;  // [47:40]
    logic [7:0]  ba_bits;   // [39:32]
    logic [7:0]  bg_bits;   // [31:24]
    logic [7:0]  ch_bits;   // [23:16]
    logic [7:0]  col_bits;  // [15:8]
    amap_order_e order;     // [7:0]
  } amap_t;

  // Where each field starts in the burst address (derived from amap_t once, in hbm_ctrl).
  typedef struct packed {
    logic [7:0] ro, ba, bg, ch, co;
  } amap_pos_t;

  // Names in function bodies are package-qualified: Yosys resolves them where a function is
  // called, outside the package.
  // The field codes of an order, least significant field first.
  function automatic logic [14:0] amap_codes(amap_order_e order, logic [14:0] custom);
    amap_codes = (order == hbm_spec_pkg::AmapCustom) ? custom : hbm_spec_pkg::amap_named_codes(order);
  endfunction

  function automatic amap_pos_t amap_positions(amap_t m);
    amap_pos_t   p;
    logic [7:0]  acc;
    logic [14:0] codes;
    p     = '0;
    acc   = '0;
    codes = hbm_spec_pkg::amap_codes(m.order, m.custom[14:0]);
    for (int unsigned k = 0; k < 5; k++) begin
      unique case (codes[3*k +: 3])
        hbm_spec_pkg::FieldCo: begin p.co = acc; acc = acc + m.col_bits; end
        hbm_spec_pkg::FieldCh: begin p.ch = acc; acc = acc + m.ch_bits;  end
        hbm_spec_pkg::FieldBg: begin p.bg = acc; acc = acc + m.bg_bits;  end
        hbm_spec_pkg::FieldBa: begin p.ba = acc; acc = acc + m.ba_bits;  end
        default: begin p.ro = acc; acc = acc + m.row_bits; end
      endcase
    end
    amap_positions = p;
  endfunction

  // A known order, or a custom one whose five codes are a permutation of the fields.
  function automatic logic amap_order_ok(amap_order_e order, logic [15:0] custom);
    logic [7:0] seen;
    seen = '0;
    for (int unsigned k = 0; k < 5; k++) begin
      seen[custom[3*k +: 3]] = 1'b1;
    end
    amap_order_ok = hbm_spec_pkg::amap_order_named(order) ||
           (order == hbm_spec_pkg::AmapCustom && seen == 8'b0001_1111 && !custom[15]);
  endfunction

  // Timing sums the channels use, derived once from timing_t in hbm_ctrl (all in tCK).
  typedef struct packed {
    logic [TimW-1:0] t_rcd;     // ACT -> RD/WR, same bank
    logic [TimW-1:0] t_rp;      // PRE/PREA -> ACT/REF
    logic [TimW-1:0] t_ras;     // ACT -> PRE, same bank
    logic [TimW-1:0] t_rc;      // ACT -> ACT, same bank (and ACT -> REF)
    logic [TimW-1:0] t_rrd_s;   // ACT -> ACT, other bank group
    logic [TimW-1:0] t_rrd_l;   // ACT -> ACT, same bank group
    logic [TimW-1:0] t_faw;     // window of four ACTs
    logic [TimW-1:0] t_rfc;     // REF -> any command
    logic [TimW-1:0] t_refi;    // average REF interval
    logic [TimW-1:0] ccd_s;     // column -> same-direction column, other bank group
    logic [TimW-1:0] ccd_l;     // column -> same-direction column, same bank group
    logic [TimW-1:0] rd2wr_s;   // RD -> WR, other bank group (bus turnaround)
    logic [TimW-1:0] rd2wr_l;   // RD -> WR, same bank group
    logic [TimW-1:0] wr2rd_s;   // WR -> RD, other bank group (tWTR_S)
    logic [TimW-1:0] wr2rd_l;   // WR -> RD, same bank group (tWTR_L)
    logic [TimW-1:0] rd2pre;    // RD -> PRE, same bank (tRTP)
    logic [TimW-1:0] wr2pre;    // WR -> PRE, same bank (write recovery)
    logic [TimW-1:0] rd_cap;    // reads queued at most (read_queue)
    logic [TimW-1:0] wr_cap;    // writes queued at most (write_queue)
    logic [TimW-1:0] wr_hi;     // queued writes that start a drain while reads wait (write_high)
    logic [TimW-1:0] wr_lo;     // queued writes at which a drain ends while reads wait (write_low)
  } tderiv_t;

  // The controller's ports as packed structs (docs/hbm.md "Ports"): hbm_ctrl, the board top and
  // every top that instantiates the controller declare their buses with these, so the port list
  // is written once. The address and the bank fields have the widths of every timing set's
  // geometry (4 bank groups of 4 banks); hbm_ctrl checks its parameters against them. A port
  // that is an array of them (one per lane or channel) is a packed array of their *Bits-wide
  // vectors: Yosys drops the array dimension of a port whose elements are structs (and cannot
  // take $bits(type), hence the sums, which hbm_ctrl checks in simulation).
  localparam int unsigned PortAddrW = 40;  // byte address bits of the burst port
  localparam int unsigned CmdBgW    = 2;   // bank group field of the command bus
  localparam int unsigned CmdBaW    = 2;   // bank field of the command bus

  // One request lane without its handshake (req_valid_i in, req_ready_o out).
  typedef struct packed {
    logic                 write;
    logic [PortAddrW-1:0] addr;   // burst aligned byte address
    logic [IdW-1:0]       id;     // comes back unchanged with the response
    logic [DataW-1:0]     wdata;
    logic [MaskW-1:0]     wmask;
  } req_t;
  localparam int unsigned ReqBits = 1 + PortAddrW + IdW + DataW + MaskW;

  // One channel's responses: read data and write acknowledgements, always accepted.
  typedef struct packed {
    logic             rsp_valid;
    logic [IdW-1:0]   rsp_id;
    logic [DataW-1:0] rsp_data;
    logic             bresp_valid;
    logic [IdW-1:0]   bresp_id;
  } rsp_t;
  localparam int unsigned RspBits = 1 + IdW + DataW + 1 + IdW;

  // One channel's command bus towards the DRAM device; cmd holds a cmd_e value as plain bits.
  typedef struct packed {
    logic              valid;
    logic [2:0]        cmd;
    logic [CmdBgW-1:0] bg;
    logic [CmdBaW-1:0] bank;
    logic [RowW-1:0]   row;    // of RD/WR too: the device model checks it
    logic [ColW-1:0]   col;
    logic [DataW-1:0]  wdata;
    logic [MaskW-1:0]  wmask;
  } cmd_t;
  localparam int unsigned CmdBits = 1 + 3 + CmdBgW + CmdBaW + RowW + ColW + DataW + MaskW;

  // One channel's read data from the DRAM device.
  typedef struct packed {
    logic             valid;
    logic [DataW-1:0] data;
  } rdata_t;
  localparam int unsigned RdataBits = 1 + DataW;
