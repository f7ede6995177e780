// SPDX-License-Identifier: Apache-2.0
// Static program checks against a preset (what the core would fault on, and obvious bugs).
#include <fmt/format.h>

#include "tpuemu/base/overloaded.h"
#include "tpuemu/program/program.h"

namespace tpuemu {
namespace {

using detail::Overloaded;

constexpr std::uint64_t kBiasRows = 4;  // DIM int32 lanes in rows of DIM bytes

struct Checker {
  const Preset& preset;
  std::vector<std::string>& problems;
  const SourceProgram* source = nullptr;  // set: problems start with "file:line: "
  std::size_t index = 0;
  std::string_view name = {};

  // "file:line: " of instruction i, "file: " for the whole program (i = npos), or nothing.
  std::string place(std::size_t i) const {
    if (source == nullptr) return {};
    if (i >= source->lines.size()) return source->source + ": ";
    return fmt::format("{}:{}: ", source->source, source->lines[i]);
  }

  void report(std::string_view msg) {
    problems.push_back(fmt::format("{}instruction {} ({}): {}", place(index), index, name, msg));
  }

  // Rows [first, first+count) of a memory with `size` rows; 64-bit so nothing wraps.
  void rows_in(std::string_view what, std::uint64_t first, std::uint64_t count, std::uint64_t size) {
    if (first + count > size) {
      report(fmt::format("{} rows [{}, {}) exceed its {} rows", what, first, first + count, size));
    }
  }

  void dma(const isa::Dma& d) {
    if (d.len == 0 || d.count == 0) {
      report(fmt::format("moves nothing (len={}, count={})", d.len, d.count));
      return;
    }
    const std::uint32_t dim = preset.dim;
    if (d.hbm_addr % dim != 0) report(fmt::format("hbm address {:#x} is not aligned to {} bytes", d.hbm_addr, dim));
    if (d.count > 1 && d.hbm_stride % dim != 0) {
      report(fmt::format("hbm_stride {:#x} is not a multiple of {} bytes", d.hbm_stride, dim));
    }
    std::string_view local = "VMEM";
    std::uint64_t local_rows = preset.vmem_rows;
    std::uint64_t row_bytes = dim;
    switch (d.path) {
      case DmaPath::HbmToVmem:
      case DmaPath::VmemToHbm: break;
      case DmaPath::HbmToSmem:
      case DmaPath::SmemToHbm:
        local = "SMEM";
        local_rows = preset.smem_rows();
        break;
      case DmaPath::AccToHbm:
        local = "ACC";
        local_rows = preset.acc_rows;
        row_bytes = 4ull * dim;  // an ACC row is dim int32
        break;
    }
    const std::uint64_t last = d.count - 1ull;
    rows_in(local, d.local_addr + last * d.local_stride, d.len, local_rows);
    const std::uint64_t hbm_end = d.hbm_addr + last * d.hbm_stride + d.len * row_bytes;
    if (hbm_end > preset.hbm.capacity_bytes) {
      report(fmt::format("HBM bytes up to {:#x} exceed the capacity {:#x}", hbm_end,
                         preset.hbm.capacity_bytes));
    }
  }

  void matmul(const isa::Matmul& m) {
    if (m.rows == 0) report("rows=0 computes nothing");
    rows_in("VMEM", m.vmem_row, m.rows, preset.vmem_rows);
    rows_in("ACC", m.acc_row, m.rows, preset.acc_rows);
  }

  void vquant(const isa::VQuant& v) {
    if (v.rows == 0) report("rows=0 computes nothing");
    rows_in("ACC", v.acc_row, v.rows, preset.acc_rows);
    rows_in("VMEM", v.vmem_row, v.rows, preset.vmem_rows);
    if (v.smem_params && std::uint64_t{*v.smem_params} + 2 > preset.smem_words) {
      report(fmt::format("SMEM params at words {}..{} exceed its {} words", *v.smem_params,
                         std::uint64_t{*v.smem_params} + 1, preset.smem_words));
    }
    if (v.bias) rows_in("VMEM bias", v.bias_row, kBiasRows, preset.vmem_rows);
  }

  void vadd(const isa::VAdd& a) {
    if (a.rows == 0) report("rows=0 computes nothing");
    rows_in("VMEM a", a.a_row, a.rows, preset.vmem_rows);
    rows_in("VMEM b", a.b_row, a.rows, preset.vmem_rows);
    rows_in("VMEM out", a.out_row, a.rows, preset.vmem_rows);
    // Row r is read before it is written, so out == a (or b) exactly is fine; any other overlap
    // writes an input row before it is read.
    const auto overlap = [&](std::string_view what, std::uint64_t in) {
      const std::uint64_t out = a.out_row;
      if (in != out && in < out + a.rows && out < in + a.rows) {
        report(fmt::format("out rows [{}, {}) partially overlap {} rows [{}, {}) (only out={} in place "
                           "is defined)",
                           out, out + a.rows, what, in, in + a.rows, what));
      }
    };
    overlap("a", a.a_row);
    overlap("b", a.b_row);
  }
};

}  // namespace

namespace {

std::vector<std::string> check_program(const Program& program, const Preset& preset, const SourceProgram* source) {
  std::vector<std::string> problems;
  Checker c{preset, problems, source};
  std::optional<std::size_t> first_end;
  for (std::size_t i = 0; i < program.size(); ++i) {
    const Instruction& in = program[i];
    c.index = i;
    c.name = mnemonic(in.opcode());
    try {
      encode(in);
    } catch (const Error& e) {
      c.report(e.cause());
    }
    std::visit(Overloaded{
                   [&](const isa::End&) {
                     if (!first_end) first_end = i;
                   },
                   [&](const isa::Dma& d) { c.dma(d); },
                   [&](const isa::LoadW& l) { c.rows_in("VMEM", l.vmem_row, preset.dim, preset.vmem_rows); },
                   [&](const isa::Matmul& m) { c.matmul(m); },
                   [&](const isa::VQuant& v) { c.vquant(v); },
                   [&](const isa::VAdd& a) { c.vadd(a); },
                   [](const auto&) {},
               },
               in.op);
  }
  if (!first_end) {
    problems.push_back(c.place(std::string::npos) + "program has no end instruction: fetch would run past it");
  } else if (*first_end + 1 < program.size()) {
    problems.push_back(c.place(*first_end + 1) + fmt::format("instructions after the end at {} are never fetched", *first_end));
  }
  return problems;
}

}  // namespace

std::vector<std::string> check_program(const Program& program, const Preset& preset) {
  return check_program(program, preset, nullptr);
}

std::vector<std::string> check_program(const SourceProgram& program, const Preset& preset) {
  return check_program(program.program, preset, &program);
}

}  // namespace tpuemu
