// SPDX-License-Identifier: Apache-2.0
// The one output writer (docs/cli.md, "Outputs"): regular files replaced atomically keeping mode and
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
#include "tpuemu/base/output_transaction.h"

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

// ---- One transaction for every output of a command (docs/cli.md, "Outputs")
namespace {

using tpuemu::OutputConflict;
using tpuemu::OutputTransaction;

TEST(OutputTransaction, NothingIsVisibleBeforeCommitAndEverythingAfter) {
  TempDir dir;
  const fs::path old = dir.write("old.json", "old\n");
  {
    OutputTransaction t;
    t.add_file(old, "new\n");
    t.add_file_in(dir.path() / "a" / "out", "summary.json", "{}\n");
    t.add_file_in(dir.path() / "a" / "out", "trace.json", "[]\n");
    EXPECT_EQ(slurp(old), "old\n");
    EXPECT_FALSE(fs::exists(dir.path() / "a" / "out"));
    t.commit();
  }
  EXPECT_EQ(slurp(old), "new\n");
  EXPECT_EQ(slurp(dir.path() / "a" / "out" / "trace.json"), "[]\n");
  EXPECT_EQ(entries(dir.path()), 2u);  // old.json and a: no temporary, no staging folder
  EXPECT_EQ(entries(dir.path() / "a"), 1u);
}

TEST(OutputTransaction, AFailureOrNoCommitLeavesNothingNew) {
  TempDir dir;
  const fs::path old = dir.write("old.json", "old\n");
  {
    OutputTransaction t;
    t.add_file(old, "new\n");
    t.add_file_in(dir.path() / "new" / "deeper" / "out", "summary.json", "{}\n");
    expect_contains(error_of([&] { t.add_file(dir.path() / "no" / "x.csv", "x"); }), "x.csv: cannot create");
  }  // destroyed without commit
  EXPECT_EQ(slurp(old), "old\n");
  EXPECT_EQ(entries(dir.path()), 1u);  // the created folders "new/deeper" went too
  // A directory that appears where a file goes is found before anything is written
  OutputTransaction t;
  t.add_file(dir.path() / "later.json", "x");
  t.add_file(old, "new\n");
  fs::create_directory(dir.path() / "later.json");
  expect_contains(error_of([&] { t.commit(); }), "later.json: is a directory");
  EXPECT_EQ(slurp(old), "old\n");
}

TEST(OutputTransaction, AnOutputThatIsAnInputIsRefused) {
  TempDir dir;
  const fs::path in = dir.write("in.csv", "data\n");
  fs::create_symlink("in.csv", dir.path() / "link.csv");
  fs::create_hard_link(in, dir.path() / "hard.csv");
  OutputTransaction t;
  t.add_input(in, "the trace");
  for (const fs::path& p : {in, dir.path() / "link.csv", dir.path() / "hard.csv", dir.path() / ".." / dir.path().filename() / "in.csv"}) {
    SCOPED_TRACE(p.string());
    EXPECT_THROW(t.check_output(p, "-o"), OutputConflict);
    EXPECT_THROW(t.add_file(p, "x"), OutputConflict);
  }
  EXPECT_THROW(t.check_output_folder(dir.path(), {"in.csv"}, "-o"), OutputConflict);
  EXPECT_THROW(t.add_file_in(dir.path(), "in.csv", "x"), OutputConflict);
  t.check_output(dir.path() / "out.csv", "--report");
  expect_contains(error_of([&] { t.check_output(dir.path() / "out.csv", "-o"); }), "is named by both --report and -o");
  t.add_file(dir.path() / "out.csv", "1");
  EXPECT_THROW(t.add_file(dir.path() / "out.csv", "2"), OutputConflict);
  t.commit();
  EXPECT_EQ(slurp(in), "data\n");
}

TEST(OutputTransaction, StdoutWaitsForCommitAndAFailedStdoutPublishesNothing) {
  TempDir dir;
  {
    ::testing::internal::CaptureStdout();
    OutputTransaction t;
    t.add_stdout("text\n");
    const std::string before = ::testing::internal::GetCapturedStdout();
    EXPECT_EQ(before, "");
    ::testing::internal::CaptureStdout();
    t.commit();
    EXPECT_EQ(::testing::internal::GetCapturedStdout(), "text\n");
  }
  // /dev/full is written through at commit, before the renames: its failure renames nothing
  OutputTransaction t;
  t.add_file(dir.path() / "out.json", "x");
  t.add_file("/dev/full", "y");
  expect_contains(error_of([&] { t.commit(); }), "/dev/full: write failed: No space left on device");
  EXPECT_EQ(entries(dir.path()), 0u);
}

TEST(OutputTransaction, TheCheckStopsStagingAndCommit) {
  TempDir dir;
  bool stop = false;
  OutputTransaction t([&] {
    if (stop) throw tpuemu::Error("interrupted");
  });
  t.add_file(dir.path() / "a.json", "a");
  stop = true;
  EXPECT_THROW(t.add_file(dir.path() / "b.json", "b"), tpuemu::Error);
  EXPECT_THROW(t.commit(), tpuemu::Error);
  EXPECT_EQ(entries(dir.path()), 0u);  // a failed commit removes what was staged at once
}

TEST(OutputTransaction, ASignalHandlerCanRemoveWhatIsStaged) {
  TempDir dir;
  OutputTransaction t;
  t.add_file(dir.path() / "a.json", "a");
  t.add_file_in(dir.path() / "out", "b.json", "b");
  EXPECT_EQ(entries(dir.path()), 2u);  // a.json.tmpXXXX and .out.staging-...
  EXPECT_FALSE(OutputTransaction::publishing_outputs());
  EXPECT_EQ(OutputTransaction::discard_staged_outputs(), 3);  // two files, one folder
  EXPECT_EQ(entries(dir.path()), 0u);
}

}  // namespace
