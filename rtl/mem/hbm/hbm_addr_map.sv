// SPDX-License-Identifier: Apache-2.0
// Burst address -> {channel, bank group, bank, row, column} of hbm_ctrl (docs/hbm.md "Address
// mapping"). pos_i (hbm_spec_pkg::amap_positions of the configuration) says where each field starts,
// amap_i how wide it is; bits above the most significant field are ignored.
module hbm_addr_map #(
  parameter int unsigned NumChannels   = 8,
  parameter int unsigned BankGroups    = 4,
  parameter int unsigned BanksPerGroup = 4,
  parameter int unsigned BaddrW        = 34,   // burst address bits (byte address >> OffW)
  localparam int unsigned ChW          = (NumChannels > 1) ? $clog2(NumChannels) : 1,
  localparam int unsigned BgW          = $clog2(BankGroups),
  localparam int unsigned BaW          = $clog2(BanksPerGroup)
) (
  input  hbm_spec_pkg::amap_t           amap_i,
  input  hbm_spec_pkg::amap_pos_t       pos_i,
  input  logic [BaddrW-1:0]             baddr_i,
  output logic [ChW-1:0]                ch_o,
  output logic [BgW-1:0]                bg_o,
  output logic [BaW-1:0]                ba_o,
  output logic [hbm_spec_pkg::RowW-1:0] row_o,
  output logic [hbm_spec_pkg::ColW-1:0] col_o
);
  function automatic logic [BaddrW-1:0] field(logic [BaddrW-1:0] a, logic [7:0] sh,
                                              logic [7:0] w);
    field = (a >> sh) & ~({BaddrW{1'b1}} << w);
  endfunction

  logic [BaddrW-1:0] f_ch, f_bg, f_ba, f_ro, f_co;
  assign f_ch = field(baddr_i, pos_i.ch, amap_i.ch_bits);
  assign f_bg = field(baddr_i, pos_i.bg, amap_i.bg_bits);
  assign f_ba = field(baddr_i, pos_i.ba, amap_i.ba_bits);
  assign f_ro = field(baddr_i, pos_i.ro, amap_i.row_bits);
  assign f_co = field(baddr_i, pos_i.co, amap_i.col_bits);

  assign ch_o  = f_ch[ChW-1:0];
  assign bg_o  = f_bg[BgW-1:0];
  assign ba_o  = f_ba[BaW-1:0];
  assign row_o = f_ro[hbm_spec_pkg::RowW-1:0];
  assign col_o = f_co[hbm_spec_pkg::ColW-1:0];

  // The fields are at most as wide as the outputs (hbm_ctrl checks amap_i), so the high bits of
  // the f_* vectors are zero; the order is folded into pos_i.
  logic unused_high;
  assign unused_high = ^{f_ch[BaddrW-1:ChW], f_bg[BaddrW-1:BgW], f_ba[BaddrW-1:BaW],
                         f_ro[BaddrW-1:hbm_spec_pkg::RowW], f_co[BaddrW-1:hbm_spec_pkg::ColW], amap_i.order, amap_i.custom};

endmodule
