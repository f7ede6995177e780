// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/base/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/base/output_transaction.h"

namespace tpuemu {

void write_all(int fd, std::string_view contents, std::string_view what) {
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(what, fmt::format("write failed: {}", std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
}

bool is_regular_or_absent(const std::filesystem::path& path) {
  if (path == "-") return false;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno == ENOENT;
  return S_ISREG(st.st_mode);
}

// A transaction of one file: the rules of every output are in one place (output_transaction.cpp),
// and a temporary file of this write is known to a signal handler too.
void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  OutputTransaction t;
  t.add_file(path, std::string(contents));
  t.commit();
}

}  // namespace tpuemu
