#include "tpuemu/base/input_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "tpuemu/base/error.h"

namespace tpuemu {

std::string limit_text(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 30) && bytes % (std::size_t{1} << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= (std::size_t{1} << 10) && bytes % (std::size_t{1} << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

std::string read_input_file(const std::filesystem::path& path, const InputLimits& limits) {
  const bool standard_input = path == "-";
  const std::string name = standard_input ? std::string("standard input") : path.string();
  const int fd = standard_input ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw Error(name, fmt::format("cannot open: {}", std::strerror(errno)));
  std::string text;
  std::size_t line = 1, line_start = 0;
  char buf[1 << 16];
  int read_error = 0;
  bool too_large = false, too_long = false;
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      read_error = errno;
      break;
    }
    if (n == 0) break;
    const std::size_t old = text.size();
    if (old + static_cast<std::size_t>(n) > limits.max_bytes) {
      too_large = true;
      break;
    }
    text.append(buf, static_cast<std::size_t>(n));
    for (std::size_t i = old; i < text.size() && !too_long; ++i) {
      if (text[i] != '\n') continue;
      too_long = i - line_start > limits.max_line_bytes;
      if (!too_long) {
        ++line;
        line_start = i + 1;
      }
    }
    too_long = too_long || text.size() - line_start > limits.max_line_bytes;
    if (too_long) break;
  }
  if (!standard_input) ::close(fd);
  if (read_error != 0) throw Error(name, fmt::format("read error: {}", std::strerror(read_error)));
  if (too_large)
    throw Error(name, fmt::format("larger than the {} limit of a {}", limit_text(limits.max_bytes), limits.what));
  if (too_long)
    throw Error::at(name, line, fmt::format("line longer than the {} limit of a {}", limit_text(limits.max_line_bytes), limits.what));
  return text;
}

}  // namespace tpuemu
