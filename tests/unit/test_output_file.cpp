// The one output writer (issue 9, defect 1): regular files replaced atomically keeping mode and
// owner, special files written through and never replaced, symbolic links followed, FIFOs without
// a reader refused instead of waited for, read-only files and directories refused. Everything in a
// per-test temporary directory plus /dev/null; no other system file is touched.
#include <gtest/gtest.h>

#include "test_support.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "tpuemu/base/atomic_file.h"

namespace {

using tpuemu::write_file_atomically;
using tpuemu::test::error_of;
using tpuemu::test::expect_contains;
using tpuemu::test::TempDir;
namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t entries(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(OutputFile, NewAndExistingRegularFilesAreReplacedKeepingTheMode) {
  TempDir dir;
  const fs::path p = dir.path() / "report.json";
  write_file_atomically(p, "one\n");
  EXPECT_EQ(slurp(p), "one\n");
  ASSERT_EQ(::chmod(p.c_str(), 0600), 0);
  struct stat before {};
  ASSERT_EQ(::stat(p.c_str(), &before), 0);
  write_file_atomically(p, "two\n");
  struct stat after {};
  ASSERT_EQ(::stat(p.c_str(), &after), 0);
  EXPECT_EQ(slurp(p), "two\n");
  EXPECT_EQ(after.st_mode & 07777, 0600u);  // not widened to 0644
  EXPECT_EQ(after.st_uid, before.st_uid);
  EXPECT_EQ(after.st_gid, before.st_gid);
  EXPECT_NE(after.st_ino, before.st_ino);  // replaced by rename, not rewritten in place
  EXPECT_EQ(entries(dir.path()), 1u);       // no temporary file left
}

TEST(OutputFile, ReadOnlyFilesAndDirectoriesAreRefused) {
  TempDir dir;
  const fs::path p = dir.write("locked.csv", "keep\n");
  ASSERT_EQ(::chmod(p.c_str(), 0444), 0);
  expect_contains(error_of([&] { write_file_atomically(p, "x"); }), "locked.csv: refusing to replace a read-only file");
  EXPECT_EQ(slurp(p), "keep\n");
  expect_contains(error_of([&] { write_file_atomically(dir.path(), "x"); }), "is a directory");
  expect_contains(error_of([&] { write_file_atomically(dir.path() / "no" / "such.json", "x"); }),
                  "cannot create: No such file or directory");
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(OutputFile, SymlinksAreFollowedAndStay) {
  TempDir dir;
  const fs::path target = dir.write("target.json", "old\n");
  ASSERT_EQ(::chmod(target.c_str(), 0640), 0);
  const fs::path link = dir.path() / "link.json";
  fs::create_symlink("target.json", link);  // relative, resolved against the link's directory
  write_file_atomically(link, "new\n");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(slurp(target), "new\n");
  struct stat st {};
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  // a dangling link creates its target
  const fs::path dangling = dir.path() / "dangling.json";
  fs::create_symlink(dir.path() / "created.json", dangling);
  write_file_atomically(dangling, "made\n");
  EXPECT_TRUE(fs::is_symlink(dangling));
  EXPECT_EQ(slurp(dir.path() / "created.json"), "made\n");
}

TEST(OutputFile, DevNullIsWrittenThroughNotReplaced) {
  struct stat before {};
  ASSERT_EQ(::stat("/dev/null", &before), 0);
  ASSERT_TRUE(S_ISCHR(before.st_mode));
  write_file_atomically("/dev/null", std::string(100000, 'x'));
  struct stat after {};
  ASSERT_EQ(::stat("/dev/null", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));
  EXPECT_EQ(after.st_rdev, before.st_rdev);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_FALSE(tpuemu::is_regular_or_absent("/dev/null"));
}

TEST(OutputFile, FifoIsWrittenThroughAndWithoutReaderRefused) {
  TempDir dir;
  const fs::path fifo = dir.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // no reader: an error at once, not a hang, and the FIFO stays a FIFO
  expect_contains(error_of([&] { write_file_atomically(fifo, "x"); }), "pipe: cannot write: a FIFO with no reader");
  // a reader: the contents arrive through the FIFO
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  write_file_atomically(fifo, "through the pipe\n");
  char buf[64] = {};
  const ssize_t n = ::read(reader, buf, sizeof buf);
  ::close(reader);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0), "through the pipe\n");
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_FALSE(tpuemu::is_regular_or_absent(fifo));
  EXPECT_TRUE(tpuemu::is_regular_or_absent(dir.path() / "new.csv"));
}

TEST(OutputFile, DashIsStandardOutput) {
  ::testing::internal::CaptureStdout();
  write_file_atomically("-", "to stdout\n");
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "to stdout\n");
}

TEST(OutputFile, WriteAllReportsTheErrno) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);  // nobody reads: EPIPE once SIGPIPE is ignored
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction old {};
  ::sigaction(SIGPIPE, &ignore, &old);
  const std::string msg = error_of([&] { tpuemu::write_all(fds[1], "x", "standard output"); });
  ::sigaction(SIGPIPE, &old, nullptr);
  ::close(fds[1]);
  EXPECT_EQ(msg, "standard output: write failed: Broken pipe");
}

}  // namespace
