// SPDX-License-Identifier: Apache-2.0
// Bank state and timing bookkeeping of one HBM channel: which banks are open (and to which row)
// and, for every command type, the earliest cycle at which it is legal again.
//
// Every constraint is kept as a timestamp "legal from cycle X" against the free-running cycle
// counter now_i (hbm_spec_pkg::CycW bits, never wraps), updated only when a command issues, so an idle
// channel costs nothing per cycle. Constraints that several commands feed keep the maximum.
//
//   per bank b        act_at   ACT   >= ACT(b)+tRC,  PRE(b)+tRP
//                     rcd_at   RD/WR >= ACT(b)+tRCD
//                     pre_at   PRE   >= ACT(b)+tRAS, RD(b)+tRTP, WR(b)+CWL+tBURST+tWR
//   per bank group g  bgact_at ACT   >= ACT(g)+tRRD_L
//                     rd_at    RD    >= RD(g)+max(tCCD_L,tBURST), RD(other)+max(tCCD_S,tBURST),
//                                       WR(g)+CWL+tBURST+tWTR_L, WR(other)+CWL+tBURST+tWTR_S
//                     wr_at    WR    >= WR(g)+max(tCCD_L,tBURST), WR(other)+max(tCCD_S,tBURST),
//                                       RD(any)+CL+tBURST+2-CWL
//   per channel       chact_at ACT   >= ACT(any)+tRRD_S, PREA+tRP
//                     faw_at   ACT   >= 4th last ACT + tFAW (ring of the last four ACT times)
//                     prea_at  PREA  >= max over banks of pre_at
//                     ref_at   REF   >= max over banks of act_at, PREA+tRP
//                     busy_at  any   >= REF+tRFC
// The RD->WR and WR->RD sums are at least the column spacing (hbm_ctrl derives them).
`include "tpu_assert.svh"

module hbm_bank_state #(
  parameter int unsigned BankGroups    = 4,
  parameter int unsigned BanksPerGroup = 4,
  localparam int unsigned NumBanks     = BankGroups * BanksPerGroup,
  localparam int unsigned BankW        = $clog2(NumBanks),
  localparam int unsigned BaW          = $clog2(BanksPerGroup),
  localparam int unsigned BgW          = $clog2(BankGroups)
) (
  input  logic                          clk_i,
  input  logic                          rst_ni,
  input  logic [hbm_spec_pkg::CycW-1:0] now_i,
  input  hbm_spec_pkg::tderiv_t         tim_i,
  // the command issued this cycle (bank = {bank group, bank})
  input  logic                          iss_valid_i,
  input  hbm_spec_pkg::cmd_e            iss_cmd_i,
  input  logic [BankW-1:0]              iss_bank_i,
  input  logic [hbm_spec_pkg::RowW-1:0] iss_row_i,
  // banks whose readiness is needed (those with queued requests; with need_open_i also every
  // open bank); the others read as not ready. A simulation-speed measure, free in hardware.
  input  logic [NumBanks-1:0]   need_i,
  input  logic                  need_open_i,
  // is row look_row_i of bank look_bank_i open?
  input  logic [BankW-1:0]              look_bank_i,
  input  logic [hbm_spec_pkg::RowW-1:0] look_row_i,
  output logic                          look_hit_o,
  // what is legal this cycle
  output logic [NumBanks-1:0]   act_ok_o,    // bank closed, ACT legal (all ACT constraints)
  output logic [NumBanks-1:0]   pre_ok_o,    // bank open, PRE legal
  output logic [NumBanks-1:0]   col_ok_o,    // bank open and tRCD elapsed
  output logic [BankGroups-1:0] rd_ok_o,     // column-to-column constraints of a RD
  output logic [BankGroups-1:0] wr_ok_o,     // column-to-column constraints of a WR
  output logic                  prea_ok_o,   // some bank open, PREA legal
  output logic                  ref_ok_o,    // all banks closed, REF legal
  output logic                  rd_keeps_prea_o,  // a RD now would not delay PREA
  output logic                  wr_keeps_prea_o,  // a WR now would not delay PREA
  output logic                  busy_o,      // within tRFC of a REF
  output logic                  any_open_o   // some bank open
);

  if (BankGroups < 2 || BanksPerGroup < 2 ||
      (1 << BgW) != BankGroups || (1 << BaW) != BanksPerGroup) begin : g_geom_check
    $fatal(1, "hbm_bank_state: BankGroups and BanksPerGroup must be powers of two >= 2");
  end

  logic [NumBanks-1:0] open_q;
  logic [hbm_spec_pkg::RowW-1:0]     open_row_q [NumBanks];
  // Unpacked arrays: Verilator then updates the entries a command changes, not a copy of all.
  logic [hbm_spec_pkg::CycW-1:0] act_at_q   [NumBanks];
  logic [hbm_spec_pkg::CycW-1:0] rcd_at_q   [NumBanks];
  logic [hbm_spec_pkg::CycW-1:0] pre_at_q   [NumBanks];
  logic [hbm_spec_pkg::CycW-1:0] bgact_at_q [BankGroups];
  logic [hbm_spec_pkg::CycW-1:0] rd_at_q    [BankGroups];
  logic [hbm_spec_pkg::CycW-1:0] wr_at_q    [BankGroups];
  logic [hbm_spec_pkg::CycW-1:0] faw_at_q   [4];
  logic [1:0]          faw_ptr_q;
  logic [hbm_spec_pkg::CycW-1:0]     chact_at_q, prea_at_q, ref_at_q, busy_at_q;

  logic [BgW-1:0] iss_bg;
  assign iss_bg = iss_bank_i[BankW-1:BaW];

  logic iss_act, iss_pre, iss_prea, iss_rd, iss_wr, iss_ref;
  assign iss_act  = iss_valid_i && (iss_cmd_i == hbm_spec_pkg::CmdAct);
  assign iss_pre  = iss_valid_i && (iss_cmd_i == hbm_spec_pkg::CmdPre);
  assign iss_prea = iss_valid_i && (iss_cmd_i == hbm_spec_pkg::CmdPrea);
  assign iss_rd   = iss_valid_i && (iss_cmd_i == hbm_spec_pkg::CmdRd);
  assign iss_wr   = iss_valid_i && (iss_cmd_i == hbm_spec_pkg::CmdWr);
  assign iss_ref  = iss_valid_i && (iss_cmd_i == hbm_spec_pkg::CmdRef);

  function automatic logic [hbm_spec_pkg::CycW-1:0] at(logic [hbm_spec_pkg::CycW-1:0] now, logic [hbm_spec_pkg::TimW-1:0] delay);
    at = now + hbm_spec_pkg::CycW'(delay);
  endfunction

  function automatic logic [hbm_spec_pkg::CycW-1:0] cmax(logic [hbm_spec_pkg::CycW-1:0] a, logic [hbm_spec_pkg::CycW-1:0] b);
    cmax = (a > b) ? a : b;
  endfunction

  // ---------------------------------------------------------------------------------------------
  // Readiness
  // ---------------------------------------------------------------------------------------------
  logic chan_act_ok;
  assign chan_act_ok = (now_i >= chact_at_q) && (now_i >= faw_at_q[faw_ptr_q]) &&
                       (now_i >= busy_at_q);

  logic [NumBanks-1:0] need;
  assign need = need_i | (need_open_i ? open_q : '0);

  always_comb begin
    act_ok_o = '0;
    pre_ok_o = '0;
    col_ok_o = '0;
    for (int unsigned b = 0; b < NumBanks; b++) begin
      if (need[b]) begin
        if (open_q[b]) begin
          pre_ok_o[b] = (now_i >= pre_at_q[b]);
          col_ok_o[b] = (now_i >= rcd_at_q[b]);
        end else begin
          act_ok_o[b] = chan_act_ok && (now_i >= act_at_q[b]) &&
                        (now_i >= bgact_at_q[b / BanksPerGroup]);
        end
      end
    end
    for (int unsigned g = 0; g < BankGroups; g++) begin
      rd_ok_o[g] = (now_i >= rd_at_q[g]);
      wr_ok_o[g] = (now_i >= wr_at_q[g]);
    end
  end

  assign prea_ok_o       = (open_q != '0) && (now_i >= prea_at_q);
  assign ref_ok_o        = (open_q == '0) && (now_i >= ref_at_q) && (now_i >= busy_at_q);
  assign rd_keeps_prea_o = (at(now_i, tim_i.rd2pre) <= prea_at_q);
  assign wr_keeps_prea_o = (at(now_i, tim_i.wr2pre) <= prea_at_q);
  assign busy_o          = (now_i < busy_at_q);
  assign any_open_o      = (open_q != '0);
  assign look_hit_o      = open_q[look_bank_i] && (open_row_q[look_bank_i] == look_row_i);

  // The refresh interval is the refresh timer's business.
  logic unused_tim;  // the refresh interval and the queue sizes are the channel's business
  assign unused_tim = ^{tim_i.t_refi, tim_i.rd_cap, tim_i.wr_cap, tim_i.wr_hi, tim_i.wr_lo};

  // ---------------------------------------------------------------------------------------------
  // Updates on the issued command
  // ---------------------------------------------------------------------------------------------
  always_ff @(posedge clk_i) begin
    if (iss_act) begin
      open_row_q[iss_bank_i] <= iss_row_i;
    end
  end

  // Per bank: an ACT is legal only when act_at/pre_at of its (closed) bank have passed, so the
  // new values need no maximum; PRE, RD and WR can only push them later.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      open_q <= '0;
      for (int unsigned b = 0; b < NumBanks; b++) begin
        act_at_q[b] <= '0;
        rcd_at_q[b] <= '0;
        pre_at_q[b] <= '0;
      end
    end else begin
      if (iss_act) begin
        open_q[iss_bank_i]   <= 1'b1;
        act_at_q[iss_bank_i] <= at(now_i, tim_i.t_rc);
        rcd_at_q[iss_bank_i] <= at(now_i, tim_i.t_rcd);
        pre_at_q[iss_bank_i] <= at(now_i, tim_i.t_ras);
      end
      if (iss_pre) begin
        open_q[iss_bank_i]   <= 1'b0;
        act_at_q[iss_bank_i] <= cmax(act_at_q[iss_bank_i], at(now_i, tim_i.t_rp));
      end
      if (iss_prea) begin
        open_q <= '0;
      end
      if (iss_rd) begin
        pre_at_q[iss_bank_i] <= cmax(pre_at_q[iss_bank_i], at(now_i, tim_i.rd2pre));
      end
      if (iss_wr) begin
        pre_at_q[iss_bank_i] <= cmax(pre_at_q[iss_bank_i], at(now_i, tim_i.wr2pre));
      end
    end
  end

  // Per bank group.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int unsigned g = 0; g < BankGroups; g++) begin
        bgact_at_q[g] <= '0;
        rd_at_q[g]    <= '0;
        wr_at_q[g]    <= '0;
      end
    end else begin
      if (iss_act) begin
        bgact_at_q[iss_bg] <= at(now_i, tim_i.t_rrd_l);
      end
      if (iss_rd) begin
        for (int unsigned g = 0; g < BankGroups; g++) begin
          rd_at_q[g] <= cmax(rd_at_q[g],
                             at(now_i, (BgW'(g) == iss_bg) ? tim_i.ccd_l : tim_i.ccd_s));
          wr_at_q[g] <= cmax(wr_at_q[g],
                             at(now_i, (BgW'(g) == iss_bg) ? tim_i.rd2wr_l : tim_i.rd2wr_s));
        end
      end
      if (iss_wr) begin
        for (int unsigned g = 0; g < BankGroups; g++) begin
          wr_at_q[g] <= cmax(wr_at_q[g],
                             at(now_i, (BgW'(g) == iss_bg) ? tim_i.ccd_l : tim_i.ccd_s));
          rd_at_q[g] <= cmax(rd_at_q[g],
                             at(now_i, (BgW'(g) == iss_bg) ? tim_i.wr2rd_l : tim_i.wr2rd_s));
        end
      end
    end
  end

  // Per channel.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int unsigned k = 0; k < 4; k++) begin
        faw_at_q[k] <= '0;
      end
      faw_ptr_q  <= '0;
      chact_at_q <= '0;
      prea_at_q  <= '0;
      ref_at_q   <= '0;
      busy_at_q  <= '0;
    end else begin
      if (iss_act) begin
        faw_at_q[faw_ptr_q] <= at(now_i, tim_i.t_faw);
        faw_ptr_q           <= faw_ptr_q + 2'd1;
        chact_at_q          <= at(now_i, tim_i.t_rrd_s);
        prea_at_q           <= cmax(prea_at_q, at(now_i, tim_i.t_ras));
        ref_at_q            <= cmax(ref_at_q, at(now_i, tim_i.t_rc));
      end
      if (iss_pre) begin
        ref_at_q <= cmax(ref_at_q, at(now_i, tim_i.t_rp));
      end
      if (iss_prea) begin
        chact_at_q <= cmax(chact_at_q, at(now_i, tim_i.t_rp));
        ref_at_q   <= cmax(ref_at_q, at(now_i, tim_i.t_rp));
      end
      if (iss_rd) begin
        prea_at_q <= cmax(prea_at_q, at(now_i, tim_i.rd2pre));
      end
      if (iss_wr) begin
        prea_at_q <= cmax(prea_at_q, at(now_i, tim_i.wr2pre));
      end
      if (iss_ref) begin
        busy_at_q <= at(now_i, tim_i.t_rfc);
      end
    end
  end

  `TPU_ASSERT_INIT
`ifndef SYNTHESIS

  // The scheduler issues only what this module declares legal.
  always_ff @(posedge clk_i) begin
    if (chk_en_q && iss_valid_i) begin
      unique case (iss_cmd_i)
        hbm_spec_pkg::CmdAct:  assert (act_ok_o[iss_bank_i] && !open_q[iss_bank_i])
                   else $error("hbm_bank_state: illegal ACT of bank %0d", iss_bank_i);
        hbm_spec_pkg::CmdPre:  assert (pre_ok_o[iss_bank_i] && open_q[iss_bank_i])
                   else $error("hbm_bank_state: illegal PRE of bank %0d", iss_bank_i);
        hbm_spec_pkg::CmdPrea: assert (prea_ok_o) else $error("hbm_bank_state: illegal PREA");
        hbm_spec_pkg::CmdRd:   assert (col_ok_o[iss_bank_i] && open_q[iss_bank_i] && rd_ok_o[iss_bg])
                   else $error("hbm_bank_state: illegal RD of bank %0d", iss_bank_i);
        hbm_spec_pkg::CmdWr:   assert (col_ok_o[iss_bank_i] && open_q[iss_bank_i] && wr_ok_o[iss_bg])
                   else $error("hbm_bank_state: illegal WR of bank %0d", iss_bank_i);
        hbm_spec_pkg::CmdRef:  assert (ref_ok_o) else $error("hbm_bank_state: illegal REF");
        default: assert (1'b0) else $error("hbm_bank_state: bad command %0d", iss_cmd_i);
      endcase
    end
  end
`endif

endmodule
