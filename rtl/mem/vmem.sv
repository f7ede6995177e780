// SPDX-License-Identifier: Apache-2.0
// Banked vector memory: rows of Dim int8 lanes, row r in bank r % Banks. Each bank is a
// single-ported SRAM (sram_1w1r, one access per cycle: block RAM on an FPGA); ports contend per
// bank with fixed priority (lower port index wins) and every denied request is a bank conflict.
// Reads return one cycle after the grant, and a port's read data stays until its next read.
module vmem #(
  parameter int unsigned Dim      = 16,
  parameter int unsigned Rows     = 16384,
  parameter int unsigned Banks    = 8,
  parameter int unsigned NumPorts = 4,
  localparam int unsigned RowW    = $clog2(Rows),
  localparam int unsigned DataW   = Dim * 8
) (
  input  logic                               clk_i,
  input  logic                               rst_ni,
  input  logic [NumPorts-1:0]                req_i,
  input  logic [NumPorts-1:0]                we_i,
  input  logic [NumPorts-1:0][RowW-1:0]      addr_i,
  input  logic [NumPorts-1:0][DataW-1:0]     wdata_i,
  output logic [NumPorts-1:0]                gnt_o,
  output logic [NumPorts-1:0]                rvalid_o,
  output logic [NumPorts-1:0][DataW-1:0]     rdata_o,
  output logic [$clog2(NumPorts+1)-1:0]      conflicts_o
);
  localparam int unsigned BankW    = (Banks > 1) ? $clog2(Banks) : 1;
  localparam int unsigned BankRows = Rows / Banks;
  localparam int unsigned IdxW     = (BankRows > 1) ? $clog2(BankRows) : 1;

  // Banks is a power of two: the low address bits pick the bank, the rest the row in it.
  logic [NumPorts-1:0][BankW-1:0] bank;
  logic [NumPorts-1:0][IdxW-1:0]  index;
  for (genvar p = 0; p < NumPorts; p++) begin : g_port_addr
    if (Banks > 1) begin : g_banked
      assign bank[p]  = addr_i[p][BankW-1:0];
      assign index[p] = IdxW'(addr_i[p] >> BankW);
    end else begin : g_single
      assign bank[p]  = '0;
      assign index[p] = IdxW'(addr_i[p]);
    end
  end

  always_comb begin
    conflicts_o = '0;
    for (int unsigned p = 0; p < NumPorts; p++) begin
      gnt_o[p] = req_i[p];
      for (int unsigned q = 0; q < p; q++) begin
        if (req_i[q] && bank[q] == bank[p]) gnt_o[p] = 1'b0;
      end
      if (req_i[p] && !gnt_o[p]) conflicts_o = conflicts_o + 1'b1;
    end
  end

  // Per bank: the granted port's access (at most one port is granted per bank).
  logic [Banks-1:0][DataW-1:0] bank_rdata;
  for (genvar b = 0; b < Banks; b++) begin : g_bank
    logic             acc_en, acc_we;
    logic [IdxW-1:0]  acc_idx;
    logic [DataW-1:0] acc_wdata;
    always_comb begin
      acc_en = 1'b0; acc_we = 1'b0; acc_idx = '0; acc_wdata = '0;
      for (int unsigned p = 0; p < NumPorts; p++) begin
        if (gnt_o[p] && bank[p] == BankW'(b)) begin
          acc_en = 1'b1; acc_we = we_i[p]; acc_idx = index[p]; acc_wdata = wdata_i[p];
        end
      end
    end
    sram_1w1r #(.Width(DataW), .Depth(BankRows), .Transparent(1'b0)) u_ram (
      .clk_i,
      .we_i    (acc_en && acc_we),
      .waddr_i (acc_idx),
      .wdata_i (acc_wdata),
      .re_i    (acc_en && !acc_we),
      .raddr_i (acc_idx),
      .rdata_o (bank_rdata[b])
    );
  end

  // A port's read data comes from the bank it read, in the cycle after the grant; then it is held
  // (the bank's output moves on with the bank's next read, possibly by another port).
  logic [NumPorts-1:0][BankW-1:0] rbank_q;
  logic [NumPorts-1:0][DataW-1:0] hold_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) rvalid_o <= '0;
    else         rvalid_o <= gnt_o & ~we_i;
  end
  always_ff @(posedge clk_i) begin
    for (int unsigned p = 0; p < NumPorts; p++) begin
      if (gnt_o[p] && !we_i[p]) rbank_q[p] <= bank[p];
    end
    hold_q <= rdata_o;
  end
  for (genvar p = 0; p < NumPorts; p++) begin : g_port_data
    assign rdata_o[p] = rvalid_o[p] ? bank_rdata[rbank_q[p]] : hold_q[p];
  end

endmodule
