// SPDX-License-Identifier: Apache-2.0
// The one exception type of the host runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tpuemu {

// Every error the runtime reports to a user is an Error whose what() is a single line
// "<place>: <cause>" (or just "<cause>" when there is no place). The place is what an editor or a
// user needs to find the problem: "file:line:column", "file:line", "file: /json/pointer",
// "buffer 'x' at 0x40", "instruction 3". Keeping it one line lets a CLI print it verbatim and
// lets tests match on it.
class Error : public std::runtime_error {
 public:
  explicit Error(std::string_view cause);
  Error(std::string_view place, std::string_view cause);

  // "file:line:column: cause"; line/column 0 mean unknown and are left out.
  static Error at(std::string_view file, std::size_t line, std::size_t column,
                  std::string_view cause);
  // "file:line: cause"
  static Error at(std::string_view file, std::size_t line, std::string_view cause);
  // "buffer 'name' at 0x1f40: cause"
  static Error in_buffer(std::string_view buffer, std::uint64_t address, std::string_view cause);

  // The same cause with an outer place prepended: "outer: place: cause". Used when a lower layer
  // knows the detail ("w5 reserved bits") and a caller knows where ("instruction 3").
  Error within(std::string_view outer) const;

  const std::string& place() const noexcept { return place_; }
  const std::string& cause() const noexcept { return cause_; }

 private:
  std::string place_;
  std::string cause_;
};

}  // namespace tpuemu
