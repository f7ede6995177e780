// SPDX-License-Identifier: Apache-2.0
#include "cli_common.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tpuemu/alloc/memory_space.h"
#include "tpuemu/base/atomic_file.h"
#include "tpuemu/base/text.h"

namespace tpuemu::cli {

void add_common_options(CLI::App* cmd, CommonOptions& o, std::string_view json_help, std::string_view out_help,
                        std::string out_names) {
  cmd->add_flag("--json", o.json, std::string(json_help));
  cmd->add_flag("-q,--quiet", o.quiet, "Print nothing on stdout (errors still go to stderr)");
  if (!out_help.empty()) cmd->add_option(out_names, o.out, std::string(out_help))->type_name("FILE");
}

CLI::Validator unsigned_in(std::uint64_t min, std::uint64_t max, std::string name) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        std::uint64_t v = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, v);
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
          return fmt::format("'{}' is not a non-negative integer", text);
        if (ec == std::errc::result_out_of_range || ptr != end || v > max)
          return fmt::format("{} is larger than {}", text, max);
        if (v < min) return fmt::format("{} is smaller than {}", text, min);
        return {};
      },
      std::move(name));
}

CLI::Validator finite_in(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        double v = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, v);
        if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(v))
          return fmt::format("'{}' is not a finite number", text);
        if (v < min || v > max) return fmt::format("{} is not in [{:g}, {:g}]", text, min, max);
        return {};
      },
      "NUMBER");
}

CLI::Validator byte_count(std::uint64_t multiple) {
  return CLI::Validator(
      [multiple](std::string& text) -> std::string {
        std::uint64_t bytes = 0;
        try {
          bytes = alloc::parse_bytes(text);
        } catch (const Error&) {
        }
        if (bytes == 0) return fmt::format("'{}' is not a byte count (e.g. 65536, 64KiB, 16MiB)", text);
        if (bytes % multiple != 0) return fmt::format("{} is not a multiple of {} bytes", text, multiple);
        return {};
      },
      "BYTES");
}

CLI::Validator one_of(std::vector<std::string> names, std::string type_name) {
  return CLI::Validator(
      [names = std::move(names)](std::string& text) -> std::string {
        if (std::find(names.begin(), names.end(), text) != names.end()) return {};
        return fmt::format("'{}' is not one of {}", text, fmt::join(names, ", "));
      },
      std::move(type_name));
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    items.emplace_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

CLI::Validator list_of(CLI::Validator item, ListItems kind, std::string type_name) {
  return CLI::Validator(
      [item, kind](std::string& text) -> std::string {
        const std::vector<std::string> items = split_list(text);
        for (std::size_t i = 0; i < items.size(); ++i) {
          if (items[i].empty()) return fmt::format("'{}': item {} is empty", text, i + 1);
          const auto before = items.begin() + static_cast<std::ptrdiff_t>(i);
          if (kind == ListItems::Distinct && std::find(items.begin(), before, items[i]) != before)
            return fmt::format("'{}': '{}' is given twice", text, items[i]);
          std::string value = items[i];
          if (std::string problem = item(value); !problem.empty()) return problem;
        }
        return {};
      },
      std::move(type_name));
}

CLI::Validator parsed_by(std::function<void(const std::string&)> parse, std::string type_name) {
  return CLI::Validator(
      [parse = std::move(parse)](std::string& text) -> std::string {
        try {
          parse(text);
        } catch (const Error& e) {
          return e.cause();  // CLI11 names the option; the place of a parser's Error is that option
        }
        return {};
      },
      std::move(type_name));
}

void refuse_empty_values(CLI::App& cmd) {
  const CLI::Validator non_empty(
      [](std::string& text) -> std::string { return text.empty() ? std::string("an empty value is not a value") : std::string(); },
      "");
  for (CLI::Option* option : cmd.get_options()) {
    if (option->get_type_size() != 0) option->check(non_empty);
  }
}

CLI::Validator input_file() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text == "-") return {};
        return CLI::ExistingFile(text);
      },
      "FILE");
}

std::string json_text(const nlohmann::json& j, JsonStyle style) {
  return j.dump(style == JsonStyle::Compact ? -1 : 2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void print(const CommonOptions& options, std::string_view text) {
  if (options.quiet) return;
  // A name in a report (a layer, a workload, an owner) may hold control characters: shown escaped,
  // never sent to the terminal. JSON escapes them itself; its newlines are kept.
  write_file_atomically("-", printable_lines(text));
}

}  // namespace tpuemu::cli
