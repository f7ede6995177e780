// Banked vector memory: rows of Dim int8 lanes, row r in bank r % Banks. Each bank is a
// single-ported SRAM; ports contend per bank with fixed priority (lower port index wins) and every
// denied request is a bank conflict. Reads return one cycle after the grant.
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
  localparam int unsigned BankW   = (Banks > 1) ? $clog2(Banks) : 1;
  localparam int unsigned BankRows = Rows / Banks;
  localparam int unsigned IdxW    = $clog2(BankRows);

  logic [DataW-1:0] mem_q [Banks][BankRows];

  function automatic logic [BankW-1:0] bank_of(logic [RowW-1:0] addr);
    return (Banks > 1) ? BankW'(32'(addr) % Banks) : '0;
  endfunction

  function automatic logic [IdxW-1:0] index_of(logic [RowW-1:0] addr);
    return IdxW'(32'(addr) / Banks);
  endfunction

  always_comb begin
    conflicts_o = '0;
    for (int unsigned p = 0; p < NumPorts; p++) begin
      gnt_o[p] = req_i[p];
      for (int unsigned q = 0; q < p; q++) begin
        if (req_i[q] && bank_of(addr_i[q]) == bank_of(addr_i[p])) gnt_o[p] = 1'b0;
      end
      if (req_i[p] && !gnt_o[p]) conflicts_o = conflicts_o + 1'b1;
    end
  end

  always_ff @(posedge clk_i) begin
    for (int unsigned p = 0; p < NumPorts; p++) begin
      if (gnt_o[p]) begin
        if (we_i[p]) mem_q[bank_of(addr_i[p])][index_of(addr_i[p])] <= wdata_i[p];
        else         rdata_o[p] <= mem_q[bank_of(addr_i[p])][index_of(addr_i[p])];
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) rvalid_o <= '0;
    else         rvalid_o <= gnt_o & ~we_i;
  end
endmodule
