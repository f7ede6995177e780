#include "cli_common.h"

#include <unistd.h>

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "tpuemu/alloc/memory_space.h"
#include "tpuemu/base/atomic_file.h"

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

CLI::Validator byte_count() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          if (alloc::parse_bytes(text) > 0) return {};
        } catch (const Error&) {
        }
        return fmt::format("'{}' is not a byte count (e.g. 65536, 64KiB, 16MiB)", text);
      },
      "BYTES");
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
  write_file_atomically("-", text);
}

}  // namespace tpuemu::cli
