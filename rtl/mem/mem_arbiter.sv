// SPDX-License-Identifier: Apache-2.0
// Shares the core's single memory port between instruction fetch (priority) and the DMA engine,
// and routes the in-order read responses back to whichever of the two asked.
module mem_arbiter #(
  parameter int unsigned Dim        = 16,
  parameter int unsigned RouteDepth = 64,   // >= reads either side may have in flight
  localparam int unsigned DataW     = Dim * 8
) (
  input  logic                          clk_i,
  input  logic                          rst_ni,
  input  logic                          f_req_valid_i,
  output logic                          f_req_ready_o,
  input  logic [tpu_pkg::AddrWidth-1:0] f_req_addr_i,
  output logic                          f_rsp_valid_o,
  input  logic                          d_req_valid_i,
  output logic                          d_req_ready_o,
  input  logic                          d_req_write_i,
  input  logic [tpu_pkg::AddrWidth-1:0] d_req_addr_i,
  input  logic [DataW-1:0]              d_req_wdata_i,
  output logic                          d_rsp_valid_o,
  output logic                          mem_req_valid_o,
  input  logic                          mem_req_ready_i,
  output logic                          mem_req_write_o,
  output logic [tpu_pkg::AddrWidth-1:0] mem_req_addr_o,
  output logic [DataW-1:0]              mem_req_wdata_o,
  input  logic                          mem_rsp_valid_i
);
  logic route_head, route_full;

  assign mem_req_valid_o = f_req_valid_i ? !route_full
                                         : (d_req_valid_i && (d_req_write_i || !route_full));
  assign mem_req_write_o = !f_req_valid_i && d_req_write_i;
  assign mem_req_addr_o  = f_req_valid_i ? f_req_addr_i : d_req_addr_i;
  assign mem_req_wdata_o = d_req_wdata_i;
  assign f_req_ready_o   = mem_req_ready_i && !route_full;
  assign d_req_ready_o   = mem_req_ready_i && !f_req_valid_i && (d_req_write_i || !route_full);

  logic read_accepted;
  assign read_accepted = mem_req_valid_o && !mem_req_write_o && mem_req_ready_i;

  // Not cleared by a soft reset: the memory still answers the reads accepted before it, and the
  // fetch unit and the DMA discard those answers themselves.
  sync_fifo #(.Width(1), .Depth(RouteDepth)) u_route (
    .clk_i, .rst_ni, .clear_i(1'b0),
    .push_i(read_accepted), .data_i(f_req_valid_i), .pop_i(mem_rsp_valid_i), .data_o(route_head),
    .empty_o(), .full_o(route_full), .count_o()
  );

  assign f_rsp_valid_o = mem_rsp_valid_i && route_head;
  assign d_rsp_valid_o = mem_rsp_valid_i && !route_head;
endmodule
