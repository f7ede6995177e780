// SPDX-License-Identifier: Apache-2.0
// HBM request traces as text (docs/hbm-trace.md): the parser, apart from the replay so that it
// builds without the simulator (tests/fuzz/fuzz_inputs.cpp compiles this file alone).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/base/input_file.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/hbm_replay/hbm_trace.h"

namespace tpuemu {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> fields_of(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    const std::size_t start = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x >= 'a' && x <= 'z' ? x - 32 : x) == (y >= 'a' && y <= 'z' ? y - 32 : y);
         });
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::vector<HbmTraceRequest> parse_hbm_trace(std::string_view text, std::string_view file,
                                             const HbmTimingSet& set) {
  std::vector<HbmTraceRequest> out;
  const std::uint64_t capacity = set.capacity_bytes();
  std::size_t line_no = 0;
  std::optional<std::uint64_t> last_cycle;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view raw = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    const std::string_view shown = trim(raw);
    const auto fail = [&](const std::string& what) {
      return Error::at(file, line_no, fmt::format("{} in '{}'", what, shown));
    };
    const auto fields = fields_of(raw.substr(0, raw.find('#')));
    if (fields.empty()) continue;

    // Address.
    std::string_view hex = fields[0];
    if (hex.size() >= 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) hex.remove_prefix(2);
    std::uint64_t address = 0;
    bool ok = !hex.empty();
    bool overflow = false;
    for (char c : hex) {
      const int d = hex_digit(c);
      if (d < 0) {
        ok = false;
        break;
      }
      if (address >> 60) overflow = true;
      address = (address << 4) | static_cast<std::uint64_t>(d);
    }
    if (!ok) throw fail(fmt::format("bad hex address '{}'", fields[0]));
    if (overflow) throw fail(fmt::format("hex address '{}' does not fit in 64 bits", fields[0]));

    // Operation.
    if (fields.size() < 2) throw fail("missing operation (READ or WRITE) after the address");
    HbmTraceRequest r;
    r.address = address;
    if (iequals(fields[1], "READ")) {
      r.write = false;
    } else if (iequals(fields[1], "WRITE")) {
      r.write = true;
    } else {
      throw fail(fmt::format("unknown operation '{}' (expected READ or WRITE)", fields[1]));
    }

    // Cycle.
    if (fields.size() < 3) throw fail("missing cycle after the operation");
    const std::string_view cyc = fields[2];
    if (cyc.front() == '-') throw fail(fmt::format("negative cycle {}", cyc));
    std::uint64_t cycle = 0;
    for (char c : cyc) {
      if (c < '0' || c > '9') {
        throw fail(fmt::format("bad cycle '{}' (expected a decimal count of tCK)", cyc));
      }
      const auto d = static_cast<std::uint64_t>(c - '0');
      if (cycle > (~std::uint64_t{0} - d) / 10) {
        throw fail(fmt::format("cycle '{}' does not fit in 64 bits", cyc));
      }
      cycle = cycle * 10 + d;
    }
    if (cycle > kMaxHbmTraceCycle) {
      throw fail(fmt::format("cycle {} is beyond the last the replay can count, {} (2^48 - 1)", cycle,
                             kMaxHbmTraceCycle));
    }
    if (fields.size() > 3) throw fail(fmt::format("unexpected '{}' after the cycle", fields[3]));
    if (last_cycle && cycle < *last_cycle) {
      throw fail(fmt::format("cycle {} goes backwards (the previous request is at cycle {})",
                             cycle, *last_cycle));
    }
    if (address >= capacity) {
      throw Error::at(file, line_no,
                      fmt::format("address {:#x} is beyond the capacity {:#x} of {}", address,
                                  capacity, set.name));
    }
    last_cycle = cycle;
    r.cycle = cycle;
    out.push_back(r);
  }
  return out;
}

std::vector<HbmTraceRequest> load_hbm_trace(const std::filesystem::path& path,
                                            const HbmTimingSet& set) {
  auto requests = parse_hbm_trace(read_input_file(path, kTableInput), path.string(), set);
  if (requests.empty()) throw Error(path.string(), "the trace has no requests");
  return requests;
}

}  // namespace tpuemu
