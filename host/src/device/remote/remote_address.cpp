// SPDX-License-Identifier: Apache-2.0
#include "remote_address.h"

#include <charconv>

#include <fmt/format.h>

#include "tpuemu/base/error.h"

namespace tpuemu {

namespace {

constexpr std::string_view kScheme = "remote://";

std::chrono::milliseconds seconds_option(const RemoteAddress& a, std::string_view key, std::string_view value) {
  double seconds = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec != std::errc{} || end != value.data() + value.size() || !(seconds >= 0) || seconds > 1e7)
    throw Error("device", fmt::format("{}: option {}={}: expected seconds (a number >= 0)", a.name, key, value));
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

}  // namespace

RemoteAddress parse_remote_address(std::string_view backend) {
  RemoteAddress a;
  a.name = std::string(backend);
  if (!backend.starts_with(kScheme)) throw Error("device", fmt::format("{}: expected remote://host:port", a.name));
  std::string_view rest = backend.substr(kScheme.size());
  std::string_view query;
  if (const auto q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  std::string_view host, port;
  if (rest.starts_with('[')) {  // [v6 address]:port
    const auto close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':')
      throw Error("device", fmt::format("{}: expected remote://[address]:port", a.name));
    host = rest.substr(1, close - 1);
    port = rest.substr(close + 2);
  } else {
    const auto colon = rest.rfind(':');
    if (colon == std::string_view::npos)
      throw Error("device", fmt::format("{}: no port (expected remote://host:port)", a.name));
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  unsigned port_number = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), port_number);
  if (host.empty() || ec != std::errc{} || end != port.data() + port.size() || port_number == 0 || port_number > 65535)
    throw Error("device", fmt::format("{}: expected remote://host:port with a port 1..65535", a.name));
  a.host = std::string(host);
  a.port = std::string(port);
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    const auto eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view{} : item.substr(eq + 1);
    if (key == "connect_timeout") {
      a.connect_timeout = seconds_option(a, key, value);
    } else if (key == "timeout") {
      a.timeout = seconds_option(a, key, value);
    } else if (key == "run_timeout") {
      a.run_timeout = seconds_option(a, key, value);
    } else {
      throw Error("device", fmt::format("{}: unknown option '{}' (known: connect_timeout, timeout, run_timeout)",
                                        a.name, key));
    }
  }
  if (a.timeout.count() == 0 || a.connect_timeout.count() == 0)
    throw Error("device", fmt::format("{}: connect_timeout and timeout must be > 0", a.name));
  return a;
}

}  // namespace tpuemu
