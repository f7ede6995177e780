#include "tpuemu/base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include <fmt/format.h>

#include "tpuemu/base/error.h"

namespace tpuemu {

namespace {

namespace fs = std::filesystem;

std::string errno_text(int err) { return std::strerror(err); }

// Closes a descriptor on every path out of a scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Closes now and reports the error of close (NFS and some file systems report late errors here).
  int close_now() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc == 0 ? 0 : errno;
  }

 private:
  int fd_;
};

// The final target of a chain of symbolic links (relative targets resolved against the link's
// directory); Error for a loop.
fs::path follow_links(const fs::path& path) {
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(p, ec);
    if (ec || st.type() != fs::file_type::symlink) return p;
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) throw Error(p.string(), fmt::format("cannot read the symbolic link: {}", ec.message()));
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  throw Error(path.string(), "too many levels of symbolic links");
}

void write_through(const fs::path& path, std::string_view contents) {
  // O_NONBLOCK: opening a FIFO without a reader fails (ENXIO) instead of waiting for one.
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENXIO) throw Error(path.string(), "cannot write: a FIFO with no reader");
    throw Error(path.string(), fmt::format("cannot open for writing: {}", errno_text(err)));
  }
  Fd out(fd);
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  write_all(fd, contents, path.string());
  if (const int err = out.close_now()) throw Error(path.string(), fmt::format("close failed: {}", errno_text(err)));
}

void replace_regular(const fs::path& path, std::string_view contents, const struct stat* existing) {
  if (existing != nullptr && (existing->st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0)
    throw Error(path.string(), "refusing to replace a read-only file");
  std::random_device entropy;
  const fs::path tmp = path.string() + fmt::format(".tmp{:08x}", entropy());
  const mode_t mode = existing != nullptr ? (existing->st_mode & 07777) : 0666;  // less the umask
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) throw Error(tmp.string(), fmt::format("cannot create: {}", errno_text(errno)));
  Fd out(fd);
  auto fail = [&](std::string_view what, int err) {
    (void)::unlink(tmp.c_str());
    return Error(path.string(), fmt::format("{}: {}", what, errno_text(err)));
  };
  try {
    write_all(fd, contents, tmp.string());
  } catch (const Error&) {
    (void)::unlink(tmp.c_str());
    throw;
  }
  if (existing != nullptr) {
    // The mode exactly as it was (open() applied the umask), the owner where allowed.
    if (::fchmod(fd, existing->st_mode & 07777) != 0) throw fail("cannot keep the mode", errno);
    if (::fchown(fd, existing->st_uid, existing->st_gid) != 0 && errno != EPERM) throw fail("cannot keep the owner", errno);
  }
  if (::fsync(fd) != 0) throw fail("fsync failed", errno);
  if (const int err = out.close_now()) throw fail("close failed", err);
  if (::rename(tmp.c_str(), path.c_str()) != 0) throw fail("cannot rename into place", errno);
}

}  // namespace

void write_all(int fd, std::string_view contents, std::string_view what) {
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(what, fmt::format("write failed: {}", errno_text(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
}

bool is_regular_or_absent(const fs::path& path) {
  if (path == "-") return false;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno == ENOENT;
  return S_ISREG(st.st_mode);
}

void write_file_atomically(const fs::path& path, std::string_view contents) {
  if (path.empty()) throw Error("output file", "the name is empty");
  std::fflush(stdout);  // what printf-style code wrote before comes first
  if (path == "-") {
    write_all(STDOUT_FILENO, contents, "standard output");
    return;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {  // follows links
    const int err = errno;
    if (err != ENOENT) throw Error(path.string(), fmt::format("cannot inspect: {}", errno_text(err)));
    replace_regular(follow_links(path), contents, nullptr);  // a new name, or a dangling link's target
    return;
  }
  // The process's own stdout or stderr by another name (/dev/stdout, /proc/self/fd/2, the file
  // stdout is redirected to): append there, in order with everything else written to it.
  for (const int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    struct stat own {};
    if (::fstat(fd, &own) == 0 && own.st_dev == st.st_dev && own.st_ino == st.st_ino) {
      write_all(fd, contents, path.string());
      return;
    }
  }
  if (S_ISDIR(st.st_mode)) throw Error(path.string(), "is a directory");
  if (S_ISREG(st.st_mode)) {
    replace_regular(follow_links(path), contents, &st);
    return;
  }
  write_through(path, contents);
}

}  // namespace tpuemu
