// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/base/input_file.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

namespace {

// Opens path for reading. O_NONBLOCK: opening a FIFO does not wait for a writer (a blocking open
// would wait forever); the first data or the first writer's close is then awaited for at most
// kFifoWriterWait, and the descriptor made blocking again for the reads.
int open_input(const std::filesystem::path& path, const std::string& name) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw Error(name, fmt::format("cannot open: {}", std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point deadline = Clock::now() + kFifoWriterWait;
    pollfd p{fd, POLLIN, 0};
    int ready = 0;
    do {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      ready = ::poll(&p, 1, static_cast<int>(std::max<std::chrono::milliseconds::rep>(left.count(), 0)));
    } while (ready < 0 && errno == EINTR);
    if (ready <= 0) {
      ::close(fd);
      throw Error(name, fmt::format("no process opened the FIFO for writing within {} s", kFifoWriterWait.count()));
    }
  }
  if (const int flags = ::fcntl(fd, F_GETFL); flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

Error size_error(const std::string& name, const InputLimits& limits) {
  return Error(name,
               fmt::format("larger than the {} limit of a {}", limit_text(limits.max_bytes), limits.what));
}
Error line_error(const std::string& name, std::size_t line, const InputLimits& limits) {
  return Error::at(name, line,
                   fmt::format("line longer than the {} limit of a {}", limit_text(limits.max_line_bytes),
                               limits.what));
}

}  // namespace

void check_input_limits(std::string_view text, const std::string& name, const InputLimits& limits) {
  if (text.size() > limits.max_bytes) throw size_error(name, limits);
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != '\n') continue;
    if (i - line_start > limits.max_line_bytes) throw line_error(name, line, limits);
    ++line;
    line_start = i + 1;
  }
}

std::string read_input_file(const std::filesystem::path& path, const InputLimits& limits) {
  const bool standard_input = path == "-";
  const std::string name = standard_input ? std::string("standard input") : path.string();
  const int fd = standard_input ? STDIN_FILENO : open_input(path, name);
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
  if (too_large) throw size_error(name, limits);
  if (too_long) throw line_error(name, line, limits);
  return text;
}

}  // namespace tpuemu
