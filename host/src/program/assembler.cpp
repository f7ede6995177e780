// SPDX-License-Identifier: Apache-2.0
// Text assembler and disassembler for the ISA (format in program.h).
#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/base/overloaded.h"
#include "tpuemu/base/input_file.h"
#include "tpuemu/program/program.h"

namespace tpuemu {
namespace {

using detail::Overloaded;

constexpr std::string_view kPaths[] = {"hbm2vmem", "vmem2hbm", "hbm2smem", "smem2hbm", "acc2hbm"};

// Decimal or 0x-hex, no sign; nullopt on anything else (including overflow).
std::optional<std::uint64_t> parse_uint(std::string_view s) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    base = 16;
  }
  if (s.empty()) return std::nullopt;
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc{} || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t' && s[j] != '\r') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// The operand fields of one line, consumed by the parser of its mnemonic; whatever is left at
// the end is an unknown field.
class LineParser {
 public:
  LineParser(std::string_view source, std::size_t line, std::string_view mnemonic,
             std::span<const std::string_view> tokens)
      : source_(source), line_(line), mnemonic_(mnemonic) {
    for (std::string_view tok : tokens) {
      const auto eq = tok.find('=');
      const std::string_view key = eq == std::string_view::npos ? tok : tok.substr(0, eq);
      const bool flag = eq == std::string_view::npos;
      if (key.empty()) fail(fmt::format("expected field=value, got '{}'", tok));
      for (const auto& f : fields_) {
        if (f.key == key) fail(fmt::format("duplicate field '{}'", tok));
      }
      fields_.push_back({key, flag ? std::string_view{} : tok.substr(eq + 1), tok, flag, false});
    }
  }

  [[noreturn]] void fail(std::string_view msg) const {
    throw Error::at(source_, line_, fmt::format("{}: {}", mnemonic_, msg));
  }

  bool flag(std::string_view key) {
    Field* f = take(key);
    if (f == nullptr) return false;
    if (!f->is_flag) fail(fmt::format("'{}' takes no value, write just '{}'", f->token, key));
    return true;
  }

  // A key=value field, or nullptr when absent.
  const std::string_view* value(std::string_view key) {
    Field* f = take(key);
    if (f == nullptr) return nullptr;
    if (f->is_flag || f->value.empty()) fail(fmt::format("'{}' needs a value: {}=...", f->token, key));
    last_token_ = f->token;
    return &f->value;
  }

  std::uint64_t uint(std::string_view key, std::uint64_t limit, std::optional<std::uint64_t> dflt,
                     std::string_view limit_text) {
    const std::string_view* v = value(key);
    if (v == nullptr) {
      if (!dflt) fail(fmt::format("missing field '{}='", key));
      return *dflt;
    }
    const auto x = parse_uint(*v);
    if (!x) fail(fmt::format("'{}': expected an unsigned number (decimal or 0x-hex)", last_token_));
    if (*x >= limit) fail(fmt::format("'{}': {} must be < {}", last_token_, key, limit_text));
    return *x;
  }

  std::int32_t int32(std::string_view key) {
    const std::string_view* v = value(key);
    if (v == nullptr) fail(fmt::format("missing field '{}='", key));
    std::string_view s = *v;
    const bool neg = !s.empty() && s[0] == '-';
    if (neg) s.remove_prefix(1);
    const auto x = parse_uint(s);
    if (!x) fail(fmt::format("'{}': expected a signed number (decimal or 0x-hex)", last_token_));
    const std::int64_t limit = neg ? std::int64_t{1} << 31 : (std::int64_t{1} << 31) - 1;
    if (*x > static_cast<std::uint64_t>(limit)) {
      fail(fmt::format("'{}': {} must be a 32-bit signed integer", last_token_, key));
    }
    return static_cast<std::int32_t>(neg ? -static_cast<std::int64_t>(*x) : static_cast<std::int64_t>(*x));
  }

  // "sN" with N < 32.
  std::uint8_t sem(std::string_view s, std::string_view token) const {
    if (s.size() < 2 || s[0] != 's') fail(fmt::format("'{}': expected a semaphore sN", token));
    const auto n = parse_uint(s.substr(1));
    if (!n) fail(fmt::format("'{}': expected a semaphore sN", token));
    if (*n >= 32) fail(fmt::format("'{}': semaphore index must be < 32", token));
    return static_cast<std::uint8_t>(*n);
  }

  std::optional<Wait> wait() {
    const std::string_view* v = value("wait");
    if (v == nullptr) return std::nullopt;
    const std::string_view tok = last_token_;
    const auto ge = v->find(">=");
    if (ge == std::string_view::npos) fail(fmt::format("'{}': expected wait=sN>=COUNT", tok));
    const std::uint8_t s = sem(v->substr(0, ge), tok);
    const auto cnt = parse_uint(v->substr(ge + 2));
    if (!cnt) fail(fmt::format("'{}': expected wait=sN>=COUNT", tok));
    if (*cnt >= 256) fail(fmt::format("'{}': wait count must be < 256", tok));
    return Wait{.sem = s, .count = static_cast<std::uint8_t>(*cnt)};
  }

  std::optional<std::uint8_t> signal() {
    const std::string_view* v = value("signal");
    if (v == nullptr) return std::nullopt;
    return sem(*v, last_token_);
  }

  // One of `names`; returns its index.
  std::size_t choice(std::string_view key, std::span<const std::string_view> names,
                     std::optional<std::size_t> dflt) {
    const std::string_view* v = value(key);
    if (v == nullptr) {
      if (!dflt) fail(fmt::format("missing field '{}='", key));
      return *dflt;
    }
    const auto it = std::find(names.begin(), names.end(), *v);
    if (it == names.end()) {
      fail(fmt::format("'{}': {} must be one of {}", last_token_, key, fmt::join(names, ", ")));
    }
    return static_cast<std::size_t>(it - names.begin());
  }

  bool has(std::string_view key) const {
    return std::any_of(fields_.begin(), fields_.end(), [&](const Field& f) { return f.key == key; });
  }

  void finish() const {
    for (const auto& f : fields_) {
      if (!f.used) fail(fmt::format("unknown field '{}'", f.token));
    }
  }

 private:
  struct Field {
    std::string_view key;
    std::string_view value;
    std::string_view token;
    bool is_flag;
    bool used;
  };
  Field* take(std::string_view key) {
    for (auto& f : fields_) {
      if (f.key == key) {
        f.used = true;
        return &f;
      }
    }
    return nullptr;
  }

  std::string_view source_;
  std::size_t line_;
  std::string_view mnemonic_;
  std::vector<Field> fields_;
  std::string_view last_token_;
};

constexpr std::uint64_t k32 = std::uint64_t{1} << 32;

Operation parse_operation(std::string_view mnem, LineParser& p) {
  if (mnem == "end") return isa::End{};
  if (mnem == "nop.dma") return isa::DmaNop{};
  if (mnem == "nop.mxu") return isa::MxuNop{};
  if (mnem == "nop.vec") return isa::VecNop{};
  if (mnem == "dma") {
    isa::Dma d;
    d.hbm_addr = static_cast<std::uint32_t>(p.uint("hbm", k32, std::nullopt, "2^32"));
    d.local_addr = static_cast<std::uint32_t>(p.uint("local", k32, std::nullopt, "2^32"));
    d.len = static_cast<std::uint16_t>(p.uint("len", 1u << 16, std::nullopt, "65536"));
    d.count = static_cast<std::uint16_t>(p.uint("count", 1u << 16, 1, "65536"));
    d.hbm_stride = static_cast<std::uint32_t>(p.uint("hbm_stride", k32, 0, "2^32"));
    d.local_stride = static_cast<std::uint32_t>(p.uint("local_stride", 1u << 20, 0, "2^20"));
    d.path = static_cast<DmaPath>(p.choice("path", kPaths, std::nullopt));
    return d;
  }
  if (mnem == "loadw") {
    isa::LoadW l;
    l.vmem_row = static_cast<std::uint32_t>(p.uint("vmem", k32, std::nullopt, "2^32"));
    l.bank = static_cast<std::uint8_t>(p.uint("bank", 2, 0, "2"));
    return l;
  }
  if (mnem == "matmul") {
    constexpr std::string_view kModes[] = {"overwrite", "accumulate"};
    isa::Matmul m;
    m.vmem_row = static_cast<std::uint32_t>(p.uint("vmem", k32, std::nullopt, "2^32"));
    m.acc_row = static_cast<std::uint32_t>(p.uint("acc", k32, std::nullopt, "2^32"));
    m.rows = static_cast<std::uint32_t>(p.uint("rows", k32, std::nullopt, "2^32"));
    m.bank = static_cast<std::uint8_t>(p.uint("bank", 2, 0, "2"));
    m.accumulate = p.choice("acc_mode", kModes, 0) == 1;
    return m;
  }
  if (mnem == "vquant") {
    isa::VQuant v;
    v.acc_row = static_cast<std::uint32_t>(p.uint("acc", k32, std::nullopt, "2^32"));
    v.vmem_row = static_cast<std::uint32_t>(p.uint("vmem", k32, std::nullopt, "2^32"));
    v.rows = static_cast<std::uint32_t>(p.uint("rows", k32, std::nullopt, "2^32"));
    v.relu = p.flag("relu");
    if (const std::string_view* params = p.value("params")) {
      if (p.has("scale") || p.has("shift")) {
        p.fail("scale= and shift= cannot be combined with params=smem:N");
      }
      const auto word = params->starts_with("smem:") ? parse_uint(params->substr(5)) : std::nullopt;
      if (!word || *word >= k32) {
        p.fail(fmt::format("'params={}': expected params=smem:WORD", *params));
      }
      v.smem_params = static_cast<std::uint32_t>(*word);
    } else {
      v.scale = p.int32("scale");
      v.shift = static_cast<std::uint8_t>(p.uint("shift", 64, 0, "64"));
    }
    if (const std::string_view* bias = p.value("bias")) {
      const auto row = bias->starts_with("vmem:") ? parse_uint(bias->substr(5)) : std::nullopt;
      if (!row || *row >= k32) p.fail(fmt::format("'bias={}': expected bias=vmem:ROW", *bias));
      v.bias = true;
      v.bias_row = static_cast<std::uint32_t>(*row);
    }
    return v;
  }
  if (mnem == "vadd") {
    isa::VAdd a;
    a.a_row = static_cast<std::uint32_t>(p.uint("a", k32, std::nullopt, "2^32"));
    a.b_row = static_cast<std::uint32_t>(p.uint("b", k32, std::nullopt, "2^32"));
    a.out_row = static_cast<std::uint32_t>(p.uint("out", k32, std::nullopt, "2^32"));
    a.rows = static_cast<std::uint32_t>(p.uint("rows", k32, std::nullopt, "2^32"));
    a.relu = p.flag("relu");
    return a;
  }
  // parse_operation is only called for known mnemonics (see is_mnemonic).
  p.fail("unknown mnemonic");
}

bool is_mnemonic(std::string_view m) {
  constexpr std::string_view kAll[] = {"end",     "dma",    "nop.dma", "loadw", "matmul",
                                       "nop.mxu", "vquant", "vadd",    "nop.vec"};
  return std::find(std::begin(kAll), std::end(kAll), m) != std::end(kAll);
}

}  // namespace

Program assemble(std::string_view text, std::string_view source_name) {
  return assemble_source(text, source_name).program;
}

SourceProgram assemble_source(std::string_view text, std::string_view source_name) {
  SourceProgram source{{}, std::string(source_name), {}};
  Program& program = source.program;
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    const auto tokens = split_ws(line);
    if (tokens.empty()) continue;
    const std::string_view mnem = tokens[0];
    if (!is_mnemonic(mnem)) {
      throw Error::at(source_name, line_no,
                      fmt::format("unknown mnemonic '{}' (expected dma, loadw, matmul, vquant, "
                                  "vadd, nop.dma, nop.mxu, nop.vec or end)",
                                  mnem));
    }
    LineParser p(source_name, line_no, mnem, std::span(tokens).subspan(1));
    Instruction in;
    in.op = parse_operation(mnem, p);
    in.wait = p.wait();
    in.signal = p.signal();
    p.finish();
    program.push_back(std::move(in));
    source.lines.push_back(line_no);
  }
  return source;
}

Program assemble_file(const std::filesystem::path& path) { return assemble_source_file(path).program; }

SourceProgram assemble_source_file(const std::filesystem::path& path) {
  return assemble_source(read_input_file(path, kProgramInput), path == "-" ? "standard input" : path.string());
}

std::string disassemble(const Instruction& in) {
  std::string s(mnemonic(in.opcode()));
  std::visit(Overloaded{
                 [](const isa::End&) {},
                 [](const isa::DmaNop&) {},
                 [](const isa::MxuNop&) {},
                 [](const isa::VecNop&) {},
                 [&](const isa::Dma& d) {
                   s += fmt::format(
                       " hbm={:#x} local={} len={} count={} hbm_stride={:#x} local_stride={} path={}",
                       d.hbm_addr, d.local_addr, d.len, d.count, d.hbm_stride, d.local_stride,
                       path_name(d.path));
                 },
                 [&](const isa::LoadW& l) { s += fmt::format(" vmem={} bank={}", l.vmem_row, l.bank); },
                 [&](const isa::Matmul& m) {
                   s += fmt::format(" vmem={} acc={} rows={} bank={} acc_mode={}", m.vmem_row,
                                    m.acc_row, m.rows, m.bank,
                                    m.accumulate ? "accumulate" : "overwrite");
                 },
                 [&](const isa::VQuant& v) {
                   s += fmt::format(" acc={} vmem={} rows={}", v.acc_row, v.vmem_row, v.rows);
                   if (v.smem_params) {
                     s += fmt::format(" params=smem:{}", *v.smem_params);
                   } else {
                     s += fmt::format(" scale={} shift={}", v.scale, v.shift);
                   }
                   if (v.bias) s += fmt::format(" bias=vmem:{}", v.bias_row);
                   if (v.relu) s += " relu";
                 },
                 [&](const isa::VAdd& a) {
                   s += fmt::format(" a={} b={} out={} rows={}", a.a_row, a.b_row, a.out_row, a.rows);
                   if (a.relu) s += " relu";
                 },
             },
             in.op);
  if (in.wait) s += fmt::format(" wait=s{}>={}", in.wait->sem, in.wait->count);
  if (in.signal) s += fmt::format(" signal=s{}", *in.signal);
  return s;
}

std::string disassemble(const Program& program) {
  std::string out;
  for (const auto& in : program) {
    out += disassemble(in);
    out += '\n';
  }
  return out;
}

}  // namespace tpuemu
