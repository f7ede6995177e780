// Shared types and widths of the HBM controller (rtl/mem/hbm, contract: docs/hbm.md).
//
// C++ view of the packed structs: every struct below is declared most significant field first,
// and the fields are listed in REVERSE order so that the first field of the contract lands in the
// least significant bits. A harness can therefore fill a struct as a little-endian array of
// fields (timing_t: 16-bit fields, amap_t: bytes, stats_t: 64-bit counters).
package hbm_pkg;

  // Command bus and burst port widths (docs/hbm.md).
  localparam int unsigned BurstBytes = 64;                  // bus_bytes * BL (HBM2 16x4, HBM3 8x8)
  localparam int unsigned OffW       = $clog2(BurstBytes);  // burst offset bits of a byte address
  localparam int unsigned DataW      = BurstBytes * 8;      // 512
  localparam int unsigned MaskW      = BurstBytes;          // 64
  localparam int unsigned IdW        = 8;
  localparam int unsigned RowW       = 16;
  localparam int unsigned ColW       = 8;

  // Timing values, derived timing sums and timestamps.
  localparam int unsigned TimW = 16;  // one timing field, in tCK
  localparam int unsigned CycW = 48;  // free-running cycle counter (2^48 tCK: never wraps)
  localparam int unsigned CntW = 64;  // statistics counters

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

  // Timing set (configs/hbm/<name>.json "timing" plus the geometry's burst_length), all in tCK.
  // Field k of the list CL, CWL, tRCD, tRP, tRAS, tRC, tRRD_S, tRRD_L, tFAW, tCCD_S, tCCD_L,
  // tWTR_S, tWTR_L, tWR, tRTP, tRFC, tREFI, BL sits in bits [16k +: 16] (CL in [15:0]).
  typedef struct packed {
    logic [TimW-1:0] bl;       // k = 17
    logic [TimW-1:0] t_refi;   // 16
    logic [TimW-1:0] t_rfc;    // 15
    logic [TimW-1:0] t_rtp;    // 14
    logic [TimW-1:0] t_wr;     // 13
    logic [TimW-1:0] t_wtr_l;  // 12
    logic [TimW-1:0] t_wtr_s;  // 11
    logic [TimW-1:0] t_ccd_l;  // 10
    logic [TimW-1:0] t_ccd_s;  // 9
    logic [TimW-1:0] t_faw;    // 8
    logic [TimW-1:0] t_rrd_l;  // 7
    logic [TimW-1:0] t_rrd_s;  // 6
    logic [TimW-1:0] t_rc;     // 5
    logic [TimW-1:0] t_ras;    // 4
    logic [TimW-1:0] t_rp;     // 3
    logic [TimW-1:0] t_rcd;    // 2
    logic [TimW-1:0] cwl;      // 1
    logic [TimW-1:0] cl;       // 0
  } timing_t;

  // Address map (docs/hbm.md "address_map"), most significant field first in the names. Field
  // codes, used for a custom order: five 3-bit codes, least significant field first.
  localparam logic [2:0] FieldCo = 3'd0;  // column
  localparam logic [2:0] FieldCh = 3'd1;  // channel
  localparam logic [2:0] FieldBg = 3'd2;  // bank group
  localparam logic [2:0] FieldBa = 3'd3;  // bank
  localparam logic [2:0] FieldRo = 3'd4;  // row

  typedef enum logic [7:0] {
    AmapRoBaBgChCo = 8'd0,   // "ro-ba-bg-ch-co" (default)
    AmapRoChBaBgCo = 8'd1,   // "ro-ch-ba-bg-co"
    AmapChRoBaBgCo = 8'd2,   // "ch-ro-ba-bg-co": one contiguous region per channel
    AmapRoBaBgCoCh = 8'd3,   // "ro-ba-bg-co-ch": consecutive bursts on consecutive channels
    AmapCustom     = 8'hff   // any order: amap_t.custom
  } amap_order_e;

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

  // The field codes of an order, least significant field first.
  function automatic logic [14:0] amap_codes(amap_order_e order, logic [14:0] custom);
    unique case (order)
      AmapRoChBaBgCo: return {FieldRo, FieldCh, FieldBa, FieldBg, FieldCo};
      AmapChRoBaBgCo: return {FieldCh, FieldRo, FieldBa, FieldBg, FieldCo};
      AmapRoBaBgCoCh: return {FieldRo, FieldBa, FieldBg, FieldCo, FieldCh};
      AmapCustom:     return custom;
      default:        return {FieldRo, FieldBa, FieldBg, FieldCh, FieldCo};
    endcase
  endfunction

  function automatic amap_pos_t amap_positions(amap_t m);
    amap_pos_t   p;
    logic [7:0]  acc;
    logic [14:0] codes;
    p     = '0;
    acc   = '0;
    codes = amap_codes(m.order, m.custom[14:0]);
    for (int unsigned k = 0; k < 5; k++) begin
      unique case (codes[3*k +: 3])
        FieldCo: begin p.co = acc; acc = acc + m.col_bits; end
        FieldCh: begin p.ch = acc; acc = acc + m.ch_bits;  end
        FieldBg: begin p.bg = acc; acc = acc + m.bg_bits;  end
        FieldBa: begin p.ba = acc; acc = acc + m.ba_bits;  end
        default: begin p.ro = acc; acc = acc + m.row_bits; end
      endcase
    end
    return p;
  endfunction

  // A known order, or a custom one whose five codes are a permutation of the fields.
  function automatic logic amap_order_ok(amap_order_e order, logic [15:0] custom);
    logic [7:0] seen;
    seen = '0;
    for (int unsigned k = 0; k < 5; k++) begin
      seen[custom[3*k +: 3]] = 1'b1;
    end
    return (order inside {AmapRoBaBgChCo, AmapRoChBaBgCo, AmapChRoBaBgCo, AmapRoBaBgCoCh}) ||
           (order == AmapCustom && seen == 8'b0001_1111 && !custom[15]);
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
  } tderiv_t;

  // Per-channel statistics (free-running, never cleared except by reset). Counter k of the list
  // reads, writes, row_hits, row_misses, row_conflicts, acts, pres, preas, refs, ref_cycles,
  // occ_sum, rd_lat_sum, turnarounds sits in bits [64k +: 64] of the channel's stats_t.
  typedef struct packed {
    logic [CntW-1:0] turnarounds;    // 12: column direction changes (RD->WR or WR->RD)
    logic [CntW-1:0] rd_lat_sum;     // 11: sum over reads of (response cycle - accept cycle)
    logic [CntW-1:0] occ_sum;        // 10: sum over cycles of the queue occupancy
    logic [CntW-1:0] ref_cycles;     // 9: cycles with a refresh due, draining or in tRFC
    logic [CntW-1:0] refs;           // 8: REF commands
    logic [CntW-1:0] preas;          // 7: PREA commands
    logic [CntW-1:0] pres;           // 6: single-bank PRE commands
    logic [CntW-1:0] acts;           // 5: ACT commands
    logic [CntW-1:0] row_conflicts;  // 4: requests that needed a PRE of another row first
    logic [CntW-1:0] row_misses;     // 3: requests that needed an ACT of a closed bank
    logic [CntW-1:0] row_hits;       // 2: requests served from an open row without an ACT
    logic [CntW-1:0] writes;         // 1: WR commands
    logic [CntW-1:0] reads;          // 0: RD commands
  } stats_t;

  localparam int unsigned NumStats = 13;

  function automatic logic [TimW-1:0] tmax(logic [TimW-1:0] a, logic [TimW-1:0] b);
    return (a > b) ? a : b;
  endfunction

endpackage
