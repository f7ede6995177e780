// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/base/output_transaction.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "tpuemu/base/atomic_file.h"

namespace tpuemu {

namespace {

namespace fs = std::filesystem;

std::string errno_text(int err) { return std::strerror(err); }

// ---- The temporary names a signal handler may have to remove ----------------------------------
// A handler can reach only static storage, so the names live in a fixed table of lock-free
// atomics and character arrays: the one such table in the program, touched only by this file.
// A slot is filled before the file or folder it names is created and freed after it was renamed
// or removed, so at every moment each temporary on disk is in the table.
constexpr std::size_t kSlots = 256;
enum SlotState : int { kFree = 0, kFilling = 1, kFile = 2, kFolder = 3 };
struct Slot {
  std::atomic<int> state{kFree};
  std::atomic<unsigned long> order{0};  // folders are removed deepest (latest) first
  char path[PATH_MAX] = {};
};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<unsigned long>::is_always_lock_free,
              "a signal handler may only touch lock-free atomics");
constinit Slot g_slots[kSlots];
constinit std::atomic<unsigned long> g_next_order{1};
constinit std::atomic<int> g_publishing{0};

// One slot, held for as long as its temporary may exist.
class Registration {
 public:
  Registration() = default;
  Registration(const fs::path& path, bool folder) {
    const std::string& s = path.native();
    if (s.size() + 1 > PATH_MAX) throw Error(s, "the path is too long");
    for (std::size_t i = 0; i < kSlots; ++i) {
      int expected = kFree;
      if (!g_slots[i].state.compare_exchange_strong(expected, kFilling)) continue;
      std::memcpy(g_slots[i].path, s.c_str(), s.size() + 1);
      g_slots[i].order.store(g_next_order.fetch_add(1));
      g_slots[i].state.store(folder ? kFolder : kFile);
      slot_ = static_cast<int>(i);
      return;
    }
    throw Error(s, fmt::format("more than {} outputs staged at once", kSlots));
  }
  Registration(Registration&& o) noexcept : slot_(std::exchange(o.slot_, -1)) {}
  Registration& operator=(Registration&& o) noexcept {
    if (this != &o) {
      release();
      slot_ = std::exchange(o.slot_, -1);
    }
    return *this;
  }
  ~Registration() { release(); }
  void release() noexcept {
    if (slot_ >= 0) g_slots[slot_].state.store(kFree);
    slot_ = -1;
  }

 private:
  int slot_ = -1;
};

// Closes a descriptor on every path out of a scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
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

// The identity of a file for "is this output an input": device and inode of what exists, else the
// absolute path with links and ".." resolved.
using FileKey = std::variant<std::pair<dev_t, ino_t>, std::string>;

FileKey key_of(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return std::pair{st.st_dev, st.st_ino};
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(follow_links(path), ec), ec);
  return p.lexically_normal().string();
}

// The process's own stdout or stderr under another name (/dev/stdout, /proc/self/fd/2, the file
// stdout is redirected to): such an output is appended there, in order with everything else.
int own_stream(const struct stat& st) {
  for (const int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    struct stat own {};
    if (::fstat(fd, &own) == 0 && own.st_dev == st.st_dev && own.st_ino == st.st_ino) return fd;
  }
  return -1;
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

// Writes contents whole to the new file tmp (fsync'ed), with the mode and owner of existing when
// given; shown: the name errors give (the user's, never the temporary one).
void write_temporary(const fs::path& tmp, const std::string& shown, std::string_view contents, const struct stat* existing) {
  const mode_t mode = existing != nullptr ? (existing->st_mode & 07777) : 0666;  // less the umask
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) throw Error(shown, fmt::format("cannot create: {}", errno_text(errno)));
  Fd out(fd);
  auto fail = [&](std::string_view what, int err) {
    (void)::unlink(tmp.c_str());
    return Error(shown, fmt::format("{}: {}", what, errno_text(err)));
  };
  try {
    write_all(fd, contents, shown);
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
}

std::string random_suffix() {
  std::random_device entropy;
  return fmt::format("{:08x}", entropy());
}

}  // namespace

struct OutputTransaction::State {
  struct Input {
    FileKey key;
    std::string what;
  };
  // A file written under a temporary name, renamed over target at commit.
  struct Staged {
    fs::path target, tmp;
    Registration reg;
  };
  // stdout, a device, a FIFO: written at commit. fd >= 0: this process's stdout or stderr.
  struct Through {
    fs::path path;
    int fd = -1;
    std::string contents;
  };
  // A folder that did not exist: staged whole, renamed into place at commit.
  struct Folder {
    fs::path target, staging;
    Registration reg;
  };

  std::function<void()> check;
  std::vector<Input> inputs;
  std::vector<std::pair<FileKey, std::string>> declared;  // check_output: key, option
  std::vector<FileKey> staged_keys;
  std::vector<Staged> staged;
  std::vector<Through> through;
  std::vector<Folder> folders;
  std::vector<std::pair<fs::path, Registration>> created;  // folders made on the way, top first
  bool committed = false;

  const Input* input_of(const FileKey& key) const {
    for (const Input& in : inputs) {
      if (in.key == key) return &in;
    }
    return nullptr;
  }

  void refuse_input(const fs::path& path) const {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
    if (const Input* in = input_of(FileKey{std::pair{st.st_dev, st.st_ino}})) {
      throw OutputConflict(path.string(), fmt::format("is {} of this command; an output never replaces an input "
                                                      "(name another file)", in->what));
    }
  }

  Folder* folder_of(const fs::path& dir) {
    for (Folder& f : folders) {
      if (f.target == dir) return &f;
    }
    return nullptr;
  }

  // The folders from the first missing one down to dir, created and remembered for a rollback.
  void create_folders(const fs::path& dir) {
    std::vector<fs::path> missing;
    std::error_code ec;
    for (fs::path p = dir; !p.empty() && !fs::exists(fs::symlink_status(p, ec)); p = p.parent_path()) {
      missing.push_back(p);
      if (p == p.parent_path()) break;
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      Registration reg(*it, true);
      if (::mkdir(it->c_str(), 0777) != 0) {
        throw Error(it->string(), fmt::format("cannot create the output directory: {}", errno_text(errno)));
      }
      created.emplace_back(*it, std::move(reg));
    }
  }

  Folder& new_folder(const fs::path& dir) {
    fs::path parent = dir.parent_path();
    if (parent.empty()) parent = ".";
    std::error_code ec;
    const fs::file_status ps = fs::status(parent, ec);
    if (fs::exists(ps) && !fs::is_directory(ps)) {
      throw Error(parent.string(), "cannot create the output directory: Not a directory");
    }
    if (!fs::exists(ps)) create_folders(parent);
    // A name no other process picks: pid and a random number; a taken name is tried again.
    for (int attempt = 0; attempt < 16; ++attempt) {
      const fs::path staging =
          parent / fmt::format(".{}.staging-{}-{}", dir.filename().string(), ::getpid(), random_suffix());
      Registration reg(staging, true);
      if (::mkdir(staging.c_str(), 0777) == 0) {
        folders.push_back({dir, staging, std::move(reg)});
        return folders.back();
      }
      if (errno != EEXIST) {
        throw Error(dir.string(), fmt::format("cannot create the output directory: {}", errno_text(errno)));
      }
    }
    throw Error(parent.string(), "cannot find a free name for a staging directory");
  }

  void note_staged(const FileKey& key, const fs::path& path) {
    if (std::find(staged_keys.begin(), staged_keys.end(), key) != staged_keys.end()) {
      throw OutputConflict(path.string(), "is named as an output twice");
    }
    staged_keys.push_back(key);
  }

  void stage(const fs::path& path, std::string contents) {
    if (path.empty()) throw Error("output file", "the name is empty");
    if (check) check();
    if (path == "-") {
      note_staged(FileKey{std::string("-")}, path);
      through.push_back({path, STDOUT_FILENO, std::move(contents)});
      return;
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {  // follows links
      const int err = errno;
      if (err != ENOENT) throw Error(path.string(), fmt::format("cannot inspect: {}", errno_text(err)));
      stage_regular(follow_links(path), path.string(), std::move(contents), nullptr);  // a new name, or a dangling link's target
      return;
    }
    if (const int fd = own_stream(st); fd >= 0) {
      note_staged(FileKey{std::string(fd == STDOUT_FILENO ? "-" : "stderr")}, path);
      through.push_back({path, fd, std::move(contents)});
      return;
    }
    if (S_ISDIR(st.st_mode)) throw Error(path.string(), "is a directory");
    if (S_ISREG(st.st_mode)) {
      refuse_input(path);
      if ((st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0) throw Error(path.string(), "refusing to replace a read-only file");
      stage_regular(follow_links(path), path.string(), std::move(contents), &st);
      return;
    }
    through.push_back({path, -1, std::move(contents)});  // a device, a FIFO, a socket
  }

  void stage_regular(const fs::path& target, const std::string& shown, std::string contents, const struct stat* existing) {
    note_staged(key_of(target), target);
    const fs::path tmp = target.string() + ".tmp" + random_suffix();
    Registration reg(tmp, false);
    write_temporary(tmp, shown, contents, existing);
    staged.push_back({target, tmp, std::move(reg)});
  }

  void stage_in(const fs::path& dir_given, const std::string& name, std::string contents) {
    fs::path dir = dir_given.empty() ? fs::path(".") : dir_given;
    if (!dir.has_filename()) dir = dir.parent_path();  // "out/" is "out"
    if (Folder* f = folder_of(dir)) {
      if (check) check();
      const fs::path target = f->target / name, tmp = f->staging / name;
      note_staged(key_of(target), target);
      Registration reg(tmp, false);
      write_temporary(tmp, target.string(), contents, nullptr);
      staged.push_back({fs::path(), tmp, std::move(reg)});  // moves with its folder
      return;
    }
    std::error_code ec;
    const fs::file_status st = fs::status(dir, ec);
    if (fs::exists(st)) {
      if (!fs::is_directory(st)) throw Error(dir.string(), "exists and is not a directory");
      stage(dir / name, std::move(contents));
      return;
    }
    if (check) check();
    new_folder(dir);
    stage_in(dir, name, std::move(contents));
  }

  void rollback() noexcept {
    for (Staged& s : staged) (void)::unlink(s.tmp.c_str());
    for (auto it = folders.rbegin(); it != folders.rend(); ++it) (void)::rmdir(it->staging.c_str());
    for (auto it = created.rbegin(); it != created.rend(); ++it) (void)::rmdir(it->first.c_str());
    staged.clear();
    folders.clear();
    created.clear();
  }
};

OutputTransaction::OutputTransaction(std::function<void()> check) : state_(std::make_unique<State>()) {
  state_->check = std::move(check);
}

OutputTransaction::~OutputTransaction() {
  if (!state_->committed) state_->rollback();
}

void OutputTransaction::add_input(const fs::path& path, std::string what) {
  if (path.empty() || path == "-") return;
  struct stat st {};
  // Only regular files: a terminal or pipe may be both stdin and stdout without being "the same file".
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  state_->inputs.push_back({FileKey{std::pair{st.st_dev, st.st_ino}}, std::move(what)});
}

void OutputTransaction::check_output(const fs::path& path, std::string_view what) {
  if (path.empty() || path == "-") return;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (own_stream(st) >= 0) return;
    if (S_ISDIR(st.st_mode)) throw Error(path.string(), fmt::format("is a directory, where {} writes a file", what));
    state_->refuse_input(path);
  }
  const FileKey key = key_of(path);
  for (const auto& [k, option] : state_->declared) {
    if (k == key) throw OutputConflict(path.string(), fmt::format("is named by both {} and {}", option, what));
  }
  state_->declared.emplace_back(key, std::string(what));
}

void OutputTransaction::check_output_folder(const fs::path& dir, const std::vector<std::string>& names,
                                            std::string_view what) {
  if (dir.empty()) return;
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (fs::exists(st) && !fs::is_directory(st)) throw Error(dir.string(), "exists and is not a directory");
  for (const std::string& name : names) check_output(dir / name, what);
}

void OutputTransaction::add_file(const fs::path& path, std::string contents) { state_->stage(path, std::move(contents)); }

void OutputTransaction::add_file_in(const fs::path& dir, const std::string& name, std::string contents) {
  state_->stage_in(dir, name, std::move(contents));
}

fs::path OutputTransaction::add_produced_file(const fs::path& path) {
  State& s = *state_;
  if (path.empty()) throw Error("output file", "the name is empty");
  if (s.check) s.check();
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) throw Error(path.string(), "is a directory");
  if (exists && !S_ISREG(st.st_mode)) return path;
  if (exists) {
    s.refuse_input(path);
    if ((st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0) throw Error(path.string(), "refusing to replace a read-only file");
  }
  const fs::path target = follow_links(path);
  s.note_staged(key_of(target), target);
  const fs::path tmp = target.string() + ".tmp" + random_suffix();
  Registration reg(tmp, false);
  s.staged.push_back({target, tmp, std::move(reg)});
  return tmp;
}

void OutputTransaction::add_stdout(std::string text) {
  if (!text.empty()) state_->through.push_back({"-", STDOUT_FILENO, std::move(text)});
}

bool OutputTransaction::committed() const { return state_->committed; }

void OutputTransaction::commit() {
  try {
    publish();
  } catch (...) {
    state_->rollback();  // at once: after a failed commit nothing new remains, whoever holds the transaction
    throw;
  }
}

void OutputTransaction::publish() {
  State& s = *state_;
  if (s.committed) throw Error("output transaction", "committed twice");
  if (s.check) s.check();
  // A directory that appeared where a staged file goes would fail its rename half-way through the
  // renames: found before anything is written or moved.
  std::error_code ec;
  for (const State::Staged& f : s.staged) {
    if (!f.target.empty() && fs::is_directory(fs::symlink_status(f.target, ec))) {
      throw Error(f.target.string(), "is a directory; the output of that name cannot replace it");
    }
  }
  for (const State::Folder& f : s.folders) {
    if (fs::exists(fs::symlink_status(f.target, ec))) throw Error(f.target.string(), "appeared while the outputs were made");
  }
  // What cannot be staged, in order: what printf-style code wrote before comes first.
  std::fflush(stdout);
  for (const State::Through& t : s.through) {
    if (t.fd >= 0) write_all(t.fd, t.contents, t.fd == STDOUT_FILENO && t.path == "-" ? "standard output" : t.path.string());
    else write_through(t.path, t.contents);
  }
  // The renames: nothing here waits, and a signal handler leaves them alone (publishing_outputs).
  g_publishing.fetch_add(1);
  struct Done {
    ~Done() { g_publishing.fetch_sub(1); }
  } done;
  for (State::Folder& f : s.folders) {
    if (::rename(f.staging.c_str(), f.target.c_str()) != 0) {
      throw Error(f.target.string(), fmt::format("cannot move the outputs into place: {}", errno_text(errno)));
    }
    f.staging = f.target;  // a rollback now removes nothing of it
    f.reg.release();
  }
  for (State::Staged& f : s.staged) {
    if (f.target.empty()) {  // inside a folder moved above
      f.tmp.clear();
      f.reg.release();
      continue;
    }
    if (::rename(f.tmp.c_str(), f.target.c_str()) != 0) {
      throw Error(f.target.string(), fmt::format("cannot move into place: {}", errno_text(errno)));
    }
    f.tmp.clear();
    f.reg.release();
  }
  for (auto& c : s.created) c.second.release();
  s.staged.clear();
  s.folders.clear();
  s.created.clear();
  s.through.clear();
  s.committed = true;
}

int OutputTransaction::discard_staged_outputs() noexcept {
  int removed = 0;
  for (Slot& slot : g_slots) {
    if (slot.state.load() == kFile && ::unlink(slot.path) == 0) ++removed;
  }
  // Folders deepest first: the latest registered among those left, until none is left.
  for (;;) {
    Slot* latest = nullptr;
    for (Slot& slot : g_slots) {
      if (slot.state.load() == kFolder && (latest == nullptr || slot.order.load() > latest->order.load())) latest = &slot;
    }
    if (latest == nullptr) break;
    if (::rmdir(latest->path) == 0) ++removed;
    latest->state.store(kFree);
  }
  return removed;
}

bool OutputTransaction::publishing_outputs() noexcept { return g_publishing.load() > 0; }

}  // namespace tpuemu
