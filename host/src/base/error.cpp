// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/base/error.h"

#include <fmt/format.h>

#include "tpuemu/base/text.h"

namespace tpuemu {
namespace {

// Messages are promised to be one line; a stray newline (e.g. from a JSON string echoed back)
// would break log parsing and editors' file:line matching, and an escape sequence in a name would
// reach the terminal: every control character is shown escaped (\n, \x1b).
std::string one_line(std::string_view s) { return printable(s); }

std::string compose(const std::string& place, const std::string& cause) {
  return place.empty() ? cause : place + ": " + cause;
}

}  // namespace

Error::Error(std::string_view cause) : Error(std::string_view{}, cause) {}

Error::Error(std::string_view place, std::string_view cause)
    : std::runtime_error(compose(one_line(place), one_line(cause))),
      place_(one_line(place)),
      cause_(one_line(cause)) {}

Error Error::at(std::string_view file, std::size_t line, std::size_t column,
                std::string_view cause) {
  if (line == 0) return Error(file, cause);
  if (column == 0) return Error(fmt::format("{}:{}", file, line), cause);
  return Error(fmt::format("{}:{}:{}", file, line, column), cause);
}

Error Error::at(std::string_view file, std::size_t line, std::string_view cause) {
  return at(file, line, 0, cause);
}

Error Error::in_buffer(std::string_view buffer, std::uint64_t address, std::string_view cause) {
  return Error(fmt::format("buffer '{}' at {:#x}", buffer, address), cause);
}

Error Error::within(std::string_view outer) const {
  if (outer.empty()) return *this;
  return Error(place_.empty() ? std::string(outer) : fmt::format("{}: {}", outer, place_), cause_);
}

}  // namespace tpuemu
