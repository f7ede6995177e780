// SPDX-License-Identifier: Apache-2.0
// The core cache (tpuemu/device/core_cache.h, docs/core-cache.md): hashing, the manifest, the
// generated CMake project of one core and the build that runs it.
#include "tpuemu/device/core_cache.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "tpuemu/base/atomic_file.h"
#include "tpuemu/base/json.h"
#include "tpuemu/base/text.h"
#include "tpuemu/sim/core_build_config.h"

extern char** environ;

namespace tpuemu {

namespace fs = std::filesystem;
namespace cb = sim::core_build;

namespace {

constexpr std::string_view kManifest = "manifest.json";
constexpr std::string_view kModule = "core.so";
// Bumped when what goes into the hash, the manifest or the module's interface changes: every older
// entry is then rebuilt rather than loaded.
constexpr std::string_view kFormat = "tpuemu-core 2";
// No manifest is near this size: a larger file is not read (it is damage, not a manifest).
constexpr std::uintmax_t kMaxManifestBytes = 1 << 20;
// How often a build polls its stop token while it waits for a lock or a tool.
constexpr auto kPollInterval = std::chrono::milliseconds(20);
// How long a stopped tool's process group has to end on SIGTERM before it is killed.
constexpr auto kTerminateGrace = std::chrono::milliseconds(500);

// FNV-1a, 64 bits: the cache is the user's own, so a key needs to notice change, not resist an
// adversary; 64 bits make an accidental collision between a user's cores negligible.
class Fnv64 {
 public:
  void add(std::string_view bytes) {
    for (const char c : bytes) {
      h_ ^= static_cast<unsigned char>(c);
      h_ *= 0x100000001b3ull;
    }
  }
  std::string hex() const { return fmt::format("{:016x}", h_); }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ull;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(path.string(),
                fmt::format("cannot read a source of the core: {}", std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

std::string digest(const fs::path& path) {
  Fnv64 h;
  h.add(read_file(path));
  return h.hex();
}

// The size and digest of a file read in chunks (a module is tens of MB); throws Error naming it.
std::pair<std::uint64_t, std::string> size_and_digest(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string(), fmt::format("cannot read: {}", std::strerror(errno)));
  Fnv64 h;
  std::uint64_t bytes = 0;
  std::vector<char> chunk(1 << 20);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto n = static_cast<std::size_t>(in.gcount());
    h.add(std::string_view(chunk.data(), n));
    bytes += n;
  }
  if (in.bad()) throw Error(path.string(), "cannot read: an I/O error");
  return {bytes, h.hex()};
}

bool is_key(std::string_view name) {
  return name.size() == 16 && std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// Every regular file directly in `dir` whose name ends in one of `suffixes`, sorted.
std::vector<fs::path> files_in(const fs::path& dir,
                               std::initializer_list<std::string_view> suffixes) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && std::any_of(suffixes.begin(), suffixes.end(),
                                           [&](std::string_view s) { return name.ends_with(s); }))
      files.push_back(e.path());
  }
  if (ec)
    throw Error(dir.string(), fmt::format("cannot list the core's sources: {}", ec.message()));
  std::sort(files.begin(), files.end());
  return files;
}

// What a core is built from, by the name the manifest gives it, and where it is now.
struct Source {
  std::string name;  // "rtl/mem/vmem.sv", "sim/src/core_sim_impl.h", "gen/tpu_pkg.sv"
  fs::path path;
};

std::vector<Source> core_sources(const fs::path& rtl_dir) {
  std::vector<Source> s;
  s.push_back({"gen/" + fs::path(cb::kGeneratedPackage).filename().string(),
               fs::path(cb::kGeneratedPackage)});
  for (std::string_view rel : cb::kRtlSources)
    s.push_back({"rtl/" + std::string(rel), rtl_dir / rel});
  // Headers found through the include directories (tpu_assert.svh) are sources too.
  for (std::string_view rel : cb::kRtlIncludeDirs) {
    for (const fs::path& f : files_in(rtl_dir / rel, {".svh", ".vh"}))
      s.push_back({"rtl/" + (fs::path(rel) / f.filename()).lexically_normal().string(), f});
  }
  // The harness: a change of the interface the module implements or the memory it is handed
  // must not load a module compiled against the old one.
  const std::pair<std::string_view, fs::path> harness[] = {
      {"sim/include/tpuemu/sim/", fs::path(cb::kSimIncludeDir) / "tpuemu" / "sim"},
      {"sim/src/", fs::path(cb::kSimSourceDir)},
      {"gen/include/tpuemu/spec/", fs::path(cb::kSpecGeneratedIncludeDir) / "tpuemu" / "spec"},
      {"spec/include/tpuemu/spec/", fs::path(cb::kSpecIncludeDir) / "tpuemu" / "spec"}};
  for (const auto& [prefix, dir] : harness) {
    if (!fs::is_directory(dir)) continue;  // spec/include may hold no spec/ headers
    for (const fs::path& f : files_in(dir, {".h"}))
      s.push_back({std::string(prefix) + f.filename().string(), f});
  }
  s.push_back({"sim/src/verilator_hooks.cpp", fs::path(cb::kSimSourceDir) / "verilator_hooks.cpp"});
  return s;
}

// The key and the digest of every source.
std::pair<std::string, std::vector<std::pair<std::string, std::string>>> hash_core(
    const std::vector<CoreField>& fields, const fs::path& rtl_dir) {
  Fnv64 h;
  h.add(kFormat);
  h.add("\n");
  for (const CoreField& f : fields) h.add(fmt::format("-G{}={}\n", f.parameter, f.value));
  for (std::string_view arg : cb::kVerilatorArgs) h.add(fmt::format("{}\n", arg));
  h.add(fmt::format("trace={} build={} cxx={}\n", cb::kTrace, cb::kBuildType, cb::kCxxCompiler));
  std::vector<std::pair<std::string, std::string>> digests;
  for (const Source& s : core_sources(rtl_dir)) {
    digests.emplace_back(s.name, digest(s.path));
    h.add(fmt::format("{} {}\n", s.name, digests.back().second));
  }
  return {h.hex(), std::move(digests)};
}

std::string env_or(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : std::move(fallback);
}

// Quoted for a CMake list file.
std::string cmake_quoted(const fs::path& p) {
  std::string s = p.string();
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\' || c == '$') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string project_cmake(const std::vector<CoreField>& fields, const CoreCacheSettings& settings) {
  std::string sources = fmt::format("    {}\n", cmake_quoted(cb::kGeneratedPackage));
  for (std::string_view rel : cb::kRtlSources)
    sources += fmt::format("    {}\n", cmake_quoted(settings.rtl_dir / rel));
  std::string incdirs;
  for (std::string_view rel : cb::kRtlIncludeDirs)
    incdirs += fmt::format(" {}", cmake_quoted((settings.rtl_dir / rel).lexically_normal()));
  std::string args;
  for (const CoreField& f : fields) args += fmt::format(" -G{}={}", f.parameter, f.value);
  for (std::string_view a : cb::kVerilatorArgs) args += fmt::format(" {}", a);
  const fs::path hooks = fs::path(cb::kSimSourceDir) / "verilator_hooks.cpp";
  // The stock cores' recipe (rtl/CMakeLists.txt) as a MODULE: Verilator's runtime is compiled into
  // it with hidden visibility, so it never meets the executable's copy; only the factory is
  // exported.
  return fmt::format(
      R"(# Generated by tpuemu core build (docs/core-cache.md). Do not edit.
cmake_minimum_required(VERSION 3.22)
project(tpuemu_core LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
find_package(verilator REQUIRED HINTS {verilator} NO_DEFAULT_PATH)
add_library(tpuemu_core MODULE core_module.cpp {hooks})
set_target_properties(tpuemu_core PROPERTIES PREFIX "" OUTPUT_NAME core LIBRARY_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}
  CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
target_include_directories(tpuemu_core PRIVATE {sim_include} {sim_src} {spec_include} {spec_gen})
target_compile_definitions(tpuemu_core PRIVATE VL_PRINTF=tpuemu_vl_printf VL_USER_STOP VL_USER_FATAL VL_USER_FINISH{trace_def})
target_compile_options(tpuemu_core PRIVATE -include {hooks_h})
verilate(tpuemu_core{trace}
  PREFIX Vtpu_custom
  TOP_MODULE tpu_top
  SOURCES
{sources}  INCLUDE_DIRS{incdirs}
  VERILATOR_ARGS{args} -O3
  OPT_FAST -O2 OPT_SLOW -O2)
)",
      fmt::arg("verilator", cmake_quoted(settings.verilator_dir)),
      fmt::arg("hooks", cmake_quoted(hooks)),
      fmt::arg("sim_include", cmake_quoted(cb::kSimIncludeDir)),
      fmt::arg("sim_src", cmake_quoted(cb::kSimSourceDir)),
      fmt::arg("spec_include", cmake_quoted(cb::kSpecIncludeDir)),
      fmt::arg("spec_gen", cmake_quoted(cb::kSpecGeneratedIncludeDir)),
      fmt::arg("trace_def", cb::kTrace ? " TPUEMU_RTL_TRACE=1" : ""),
      fmt::arg("hooks_h", cmake_quoted(fs::path(cb::kSimSourceDir) / "verilator_hooks.h")),
      fmt::arg("trace", cb::kTrace ? " TRACE_FST" : ""), fmt::arg("sources", sources),
      fmt::arg("incdirs", incdirs), fmt::arg("args", args));
}

std::string module_source(const std::vector<CoreField>& fields, const std::string& hash) {
  std::uint64_t dim = 0;
  for (const CoreField& f : fields) {
    if (f.key == "dim") dim = f.value;
  }
  return fmt::format(
      R"(// Generated by tpuemu core build (docs/core-cache.md). Do not edit.
// The preset's Verilated core behind the CoreSim interface, made by the one exported factory.
#include <memory>

#include "Vtpu_custom.h"
#include "core_sim_impl.h"

extern "C" __attribute__((visibility("default"))) void {factory}(
    const tpuemu::sim::MemoryModelConfig& mem, std::unique_ptr<tpuemu::sim::CoreSim>& core) {{
  core = std::make_unique<tpuemu::sim::VerilatedCoreSim<Vtpu_custom>>({dim}u, mem);
}}

extern "C" __attribute__((visibility("default"))) const char* {hash_fn}() {{ return "{hash}"; }}
)",
      fmt::arg("factory", kCoreModuleFactory), fmt::arg("hash_fn", kCoreModuleHash),
      fmt::arg("dim", dim), fmt::arg("hash", hash));
}

constexpr std::string_view kBuildWork = "the core build";

// The exit status of a finished child (128 + the signal that killed it).
int exit_status(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Ends the process group `group` of a stopped tool and reaps its leader: SIGTERM (ninja passes it
// on to the compilers it runs in groups of their own), then SIGKILL for what is left after a grace.
void end_process_group(pid_t group) {
  ::kill(-group, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + kTerminateGrace;
  int status = 0;
  pid_t done = 0;
  while ((done = ::waitpid(group, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(kPollInterval / 4);
  ::kill(-group, SIGKILL);
  if (done == 0) {
    while (::waitpid(group, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

// A command of the build, its output appended to `log`; its exit status (or -1: not started).
// It runs in a process group of its own, so a Ctrl-C at the terminal reaches tpuemu alone: the
// command is stopped through `stop` whether the signal came from the terminal or was sent to
// tpuemu only, and then the whole group ends (Interrupted is thrown).
int run_logged(const std::vector<std::string>& argv, const fs::path& log, const StopToken& stop) {
  stop.throw_if_requested(kBuildWork);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigset_t stops;
  sigemptyset(&none);
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &stops);  // even if the caller ignores them
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return exit_status(status);
    if (done < 0 && errno != EINTR) return -1;
    if (stop.requested()) {
      end_process_group(pid);
      stop.throw_if_requested(kBuildWork);
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

// The first error a build log reports (Verilator's %Error or a $error's %Warning-USERERROR, or a
// compiler's error), its file named without its directory: what the one-line message can say
// about a log of thousands of lines. Empty when there is none.
std::string first_error(const fs::path& log) {
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    std::size_t at = std::string::npos;
    if (line.starts_with("%Error") && !line.starts_with("%Error: Exiting")) {
      at = line.find(": ");
    } else if (line.starts_with("%Warning-USERERROR")) {
      at = line.find(": ");
    } else if (line.find(": error: ") != std::string::npos) {
      at = 0;
    }
    if (at == std::string::npos) continue;
    std::string text = line.substr(at == 0 ? 0 : at + 2);
    // "/abs/path/rtl/mem/smem.sv:42:5: ..." -> "smem.sv:42:5: ..."
    if (const std::size_t colon = text.find(':'); colon != std::string::npos) {
      if (const std::size_t slash = text.rfind('/', colon); slash != std::string::npos)
        text.erase(0, slash + 1);
    }
    return text;
  }
  return {};
}

// An open file descriptor, closed with this object.
class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// An exclusive lock on a file for this object's lifetime (flock: released if the process dies).
// When another process holds it, `on_wait` is called once and the lock is polled, so that `stop`
// ends the wait.
class FileLock {
 public:
  FileLock(const fs::path& path, const std::function<void()>& on_wait, const StopToken& stop)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_.get() < 0)
      throw Error(path.string(),
                  fmt::format("cannot create the core cache's lock: {}", std::strerror(errno)));
    for (bool said = false; !try_lock(path); said = true) {
      if (!said && on_wait) on_wait();
      stop.throw_if_requested(kBuildWork);
      std::this_thread::sleep_for(kPollInterval);
    }
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  bool try_lock(const fs::path& path) const {
    if (::flock(fd_.get(), LOCK_EX | LOCK_NB) == 0) return true;
    if (errno == EWOULDBLOCK || errno == EINTR) return false;
    throw Error(path.string(), fmt::format("cannot lock: {}", std::strerror(errno)));
  }
  UniqueFd fd_;
};

// Removes a directory tree when it goes out of scope, unless released: a failed or interrupted
// build leaves no half-made entry.
class RemoveOnExit {
 public:
  explicit RemoveOnExit(fs::path dir) : dir_(std::move(dir)) {}
  ~RemoveOnExit() {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  RemoveOnExit(const RemoveOnExit&) = delete;
  RemoveOnExit& operator=(const RemoveOnExit&) = delete;

 private:
  fs::path dir_;
};

}  // namespace

CoreCacheSettings CoreCacheSettings::from_environment() {
  CoreCacheSettings s;
  const std::string home = env_or("HOME", "");
  std::string cache = env_or("XDG_CACHE_HOME", "");
  // The XDG Base Directory specification: a relative path is invalid and ignored.
  if (!fs::path(cache).is_absolute()) cache = home.empty() ? std::string() : home + "/.cache";
  if (cache.empty())
    throw Error("core cache", "neither XDG_CACHE_HOME (an absolute path) nor HOME is set");
  s.cache_dir = fs::path(cache) / "tpuemu" / "cores";
  s.rtl_dir = env_or("TPUEMU_RTL_SOURCE_DIR", std::string(cb::kRtlDir));
  s.cmake = std::string(cb::kCmake);
  s.verilator_dir = std::string(cb::kVerilatorDir);
  return s;
}

CoreCache::CoreCache(CoreCacheSettings settings) : settings_(std::move(settings)) {}

std::vector<CoreField> CoreCache::fields_of(const Preset& preset) {
  const nlohmann::json j = to_json(preset);
  std::vector<CoreField> fields;
  for (const cb::Field& f : cb::kFields)
    fields.push_back({std::string(f.parameter), std::string(f.key),
                      j.at(std::string(f.key)).get<std::uint64_t>()});
  return fields;
}

std::string CoreCache::hash_of(const Preset& preset) const {
  return hash_core(fields_of(preset), settings_.rtl_dir).first;
}

CoreEntry CoreCache::entry(const Preset& preset) const {
  return inspect_core_entry(settings_.cache_dir / hash_of(preset));
}

std::optional<CachedCore> CoreCache::find(const Preset& preset) const {
  CoreEntry e = entry(preset);
  if (e.state != CoreEntry::State::complete) return std::nullopt;
  return std::move(e.core);
}

std::vector<CachedCore> CoreCache::list() const {
  std::vector<CachedCore> cores;
  std::error_code ec;
  for (const fs::directory_entry& d : fs::directory_iterator(settings_.cache_dir, ec)) {
    // Entries only: a build in progress works in a dot directory, a failed one leaves a log.
    if (!is_key(d.path().filename().string())) continue;
    CoreEntry e = inspect_core_entry(d.path());
    CachedCore& c = e.core;
    c.damage = e.damage;
    c.current = false;
    if (!c.fields.empty()) {
      try {
        c.current = hash_core(c.fields, settings_.rtl_dir).first == c.hash;
      } catch (const Error&) {
        // its sources are gone: it cannot be what a build makes now
      }
    }
    cores.push_back(std::move(c));
  }
  std::sort(cores.begin(), cores.end(), [](const CachedCore& a, const CachedCore& b) {
    return std::tie(a.preset, a.hash) < std::tie(b.preset, b.hash);
  });
  return cores;
}

CoreCache::Built CoreCache::build(const Preset& preset, const CoreBuildOptions& options) const {
  const std::vector<CoreField> fields = fields_of(preset);
  auto [hash, digests] = hash_core(fields, settings_.rtl_dir);
  const fs::path dir = settings_.cache_dir / hash;
  if (CoreEntry e = inspect_core_entry(dir); e.state == CoreEntry::State::complete)
    return {std::move(e.core), false};
  // What a build needs, checked before anything is made (one line, not a CMake log).
  if (!fs::is_regular_file(settings_.cmake))
    throw Error("core build",
                fmt::format("cmake not found at {} (the build tree was configured with it)",
                            settings_.cmake.string()));
  if (!fs::is_regular_file(settings_.verilator_dir / "verilator-config.cmake"))
    throw Error(
        "core build",
        fmt::format("verilator not found: no verilator-config.cmake in {} (the build tree was "
                    "configured with it)",
                    settings_.verilator_dir.string()));
  std::error_code ec;
  fs::create_directories(settings_.cache_dir, ec);
  if (ec)
    throw Error(settings_.cache_dir.string(),
                fmt::format("cannot create the core cache: {}", ec.message()));
  const auto say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  const fs::path lock_path = settings_.cache_dir / ("." + hash + ".lock");
  const FileLock lock(
      lock_path,
      [&] {
        say(fmt::format("waiting for another build of this core to finish (it holds {})",
                        lock_path.string()));
      },
      options.stop);
  const CoreEntry found = inspect_core_entry(dir);
  if (found.state == CoreEntry::State::complete)
    return {found.core, false};  // built meanwhile by another process

  // Holding the lock, no other process builds this core: a build directory of it is a killed
  // build's, and a damaged entry put aside is a killed rebuild's.
  std::vector<fs::path> killed;
  for (const fs::directory_entry& e : fs::directory_iterator(settings_.cache_dir, ec)) {
    const std::string name = e.path().filename().string();
    const bool left = name.ends_with(".tmp") || name.ends_with(".damaged");
    if (name.starts_with("." + hash + ".") && left) killed.push_back(e.path());
  }
  for (const fs::path& p : killed) fs::remove_all(p, ec);
  const fs::path work = settings_.cache_dir / fmt::format(".{}.{}.tmp", hash, ::getpid());
  const RemoveOnExit cleanup(work);
  fs::create_directories(work / "src");
  write_file_atomically(work / "src" / "CMakeLists.txt", project_cmake(fields, settings_));
  write_file_atomically(work / "src" / "core_module.cpp", module_source(fields, hash));
  const fs::path log = work / "build.log";
  std::string summary;
  for (const CoreField& f : fields)
    summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", f.key, f.value);
  say(found.state == CoreEntry::State::damaged
          ? fmt::format("rebuilding the Verilated core of preset {} ({}) in {}, whose entry is "
                        "damaged ({}): a few minutes",
                        preset.name, summary, dir.string(), found.damage)
          : fmt::format(
                "building the Verilated core of preset {} ({}) into {}: a few minutes, once",
                preset.name, summary, dir.string()));
  const auto start = std::chrono::steady_clock::now();
  const unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  const std::vector<std::vector<std::string>> steps = {
      {settings_.cmake.string(), "-S", (work / "src").string(), "-B", (work / "build").string(),
       "-G", std::string(cb::kGenerator), "-DCMAKE_MAKE_PROGRAM=" + std::string(cb::kMakeProgram),
       "-DCMAKE_CXX_COMPILER=" + std::string(cb::kCxxCompiler),
       "-DCMAKE_BUILD_TYPE=" + std::string(cb::kBuildType)},
      {settings_.cmake.string(), "--build", (work / "build").string(), "--parallel",
       std::to_string(jobs)}};
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const int rc = run_logged(steps[i], log, options.stop);
    if (rc == 0) continue;
    // A tool killed by the signal that also stopped this process is a stop, not a failure.
    options.stop.throw_if_requested(kBuildWork);
    // The log outlives the entry: it is what the user reads next.
    const fs::path kept = settings_.cache_dir / (hash + ".failed.log");
    fs::copy_file(log, kept, fs::copy_options::overwrite_existing, ec);
    const std::string cause = first_error(log);
    throw Error("core build",
                fmt::format("{} of preset {}'s core failed ({}){}: see {}",
                            i == 0 ? "cmake configure" : "the build", preset.name,
                            rc < 0 ? "cannot run " + steps[i][0] : fmt::format("exit {}", rc),
                            cause.empty() ? "" : ": " + cause, (ec ? log : kept).string()));
  }
  fs::copy_file(work / "build" / kModule, work / kModule);
  fs::remove_all(work / "build");  // hundreds of MB of objects; the module is all that is loaded
  CachedCore core{
      .preset = preset.name,
      .fields = fields,
      .hash = hash,
      .dir = dir,
      .module = dir / kModule,
      .build_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
  // The manifest last, the directory's rename into place the commit: a reader sees a whole entry
  // or none. A stop before the rename publishes nothing.
  CachedCore staged = core;
  staged.dir = work;
  write_core_manifest(staged, digests);
  options.stop.throw_if_requested(kBuildWork);
  if (found.state == CoreEntry::State::damaged) {
    // Put aside first (a rename over a directory fails), then removed.
    const fs::path aside = settings_.cache_dir / fmt::format(".{}.{}.damaged", hash, ::getpid());
    fs::rename(dir, aside, ec);
    if (ec)
      throw Error(dir.string(), fmt::format("cannot remove the damaged entry: {}", ec.message()));
    fs::remove_all(aside, ec);
  }
  fs::rename(work, dir, ec);
  if (ec)
    throw Error(dir.string(),
                fmt::format("cannot move the built core into place: {}", ec.message()));
  fs::remove(settings_.cache_dir / (hash + ".failed.log"), ec);
  const CoreEntry built = inspect_core_entry(dir);
  core.module_bytes = built.core.module_bytes;
  core.module_digest = built.core.module_digest;
  return {std::move(core), true};
}

CoreEntry inspect_core_entry(const fs::path& dir) {
  CoreEntry e;
  e.core.hash = dir.filename().string();
  e.core.dir = dir;
  e.core.module = dir / kModule;
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(dir, ec);
  if (status.type() == fs::file_type::not_found) return e;
  e.state = CoreEntry::State::damaged;
  const auto damaged = [&](std::string why) {
    e.damage = std::move(why);
    return e;
  };
  if (ec) return damaged(fmt::format("{}: {}", dir.string(), ec.message()));
  if (status.type() != fs::file_type::directory)
    return damaged(fmt::format("{}: not a directory", dir.string()));
  const fs::path manifest = dir / kManifest;
  const fs::file_status ms = fs::symlink_status(manifest, ec);
  if (ms.type() == fs::file_type::not_found)
    return damaged(fmt::format("{}: missing", manifest.string()));
  if (ms.type() != fs::file_type::regular)
    return damaged(fmt::format("{}: not a regular file", manifest.string()));
  const std::uintmax_t manifest_bytes = fs::file_size(manifest, ec);
  if (!ec && manifest_bytes > kMaxManifestBytes)
    return damaged(fmt::format("{}: {} bytes, more than any manifest", manifest.string(),
                               manifest_bytes));
  try {
    e.core = parse_core_manifest(read_file(manifest), dir);
    const fs::file_status mod = fs::symlink_status(e.core.module, ec);
    if (mod.type() == fs::file_type::not_found)
      return damaged(fmt::format("{}: missing", e.core.module.string()));
    if (mod.type() != fs::file_type::regular)
      return damaged(fmt::format("{}: not a regular file", e.core.module.string()));
    const std::uintmax_t bytes = fs::file_size(e.core.module, ec);
    if (ec) return damaged(fmt::format("{}: {}", e.core.module.string(), ec.message()));
    if (bytes != e.core.module_bytes)
      return damaged(fmt::format("{}: {} bytes where the manifest records {}",
                                 e.core.module.string(), bytes, e.core.module_bytes));
    const auto [read_bytes, digest_now] = size_and_digest(e.core.module);
    if (read_bytes != e.core.module_bytes || digest_now != e.core.module_digest)
      return damaged(fmt::format("{}: digest {} where the manifest records {}",
                                 e.core.module.string(), digest_now, e.core.module_digest));
  } catch (const Error& err) {
    return damaged(err.what());
  }
  e.state = CoreEntry::State::complete;
  return e;
}

CachedCore parse_core_manifest(std::string_view text, const fs::path& dir) {
  const std::string source = (dir / kManifest).string();
  try {
    const JsonDocument doc = JsonDocument::parse(std::string(text), source);
    JsonObjectReader r(doc, "");
    if (const std::string format = r.get_string("format"); format != kFormat)
      throw r.error("format", fmt::format("\"{}\" where this tpuemu writes \"{}\"",
                                          printable(format), kFormat));
    CachedCore c;
    c.hash = r.get_string("hash");
    if (c.hash != dir.filename().string())
      throw r.error("hash", fmt::format("core {} in the directory of core {}", printable(c.hash),
                                        printable(dir.filename().string())));
    c.preset = r.get_string("preset");
    const nlohmann::json* fields = r.find("fields");
    if (fields == nullptr || !fields->is_array() || fields->size() != cb::kFields.size())
      throw r.error("fields", fmt::format("expected an array of the {} core fields",
                                          cb::kFields.size()));
    for (std::size_t i = 0; i < cb::kFields.size(); ++i) {
      JsonObjectReader f(doc, fmt::format("/fields/{}", i));
      CoreField field{f.get_string("parameter"), f.get_string("key"), f.get_uint("value")};
      if (field.parameter != cb::kFields[i].parameter || field.key != cb::kFields[i].key)
        throw f.error("", fmt::format("expected the core field {} ({})", cb::kFields[i].key,
                                      cb::kFields[i].parameter));
      f.finish();
      c.fields.push_back(std::move(field));
    }
    if (const std::string module = r.get_string("module"); module != kModule)
      throw r.error("module", fmt::format("\"{}\" where a core's module is \"{}\"",
                                          printable(module), kModule));
    c.module_bytes = r.get_uint("module_bytes", 1);
    c.module_digest = r.get_string("module_digest");
    if (!is_key(c.module_digest))
      throw r.error("module_digest", "expected 16 lower-case hexadecimal digits");
    c.build_seconds = r.get_number("build_seconds", 0, 1e9);
    if (const nlohmann::json* sources = r.find("sources");
        sources == nullptr || !sources->is_object())
      throw r.error("sources", "expected an object (source: digest)");
    r.finish();
    c.dir = dir;
    c.module = dir / kModule;
    return c;
  } catch (const nlohmann::json::exception& e) {
    throw Error(source, e.what());  // a value the reader let through: never a crash
  }
}

void write_core_manifest(const CachedCore& core,
                         const std::vector<std::pair<std::string, std::string>>& sources) {
  nlohmann::json fields = nlohmann::json::array();
  for (const CoreField& f : core.fields)
    fields.push_back({{"parameter", f.parameter}, {"key", f.key}, {"value", f.value}});
  nlohmann::json digests = nlohmann::json::object();
  for (const auto& [name, d] : sources) digests[name] = d;
  const auto [bytes, module_digest] = size_and_digest(core.dir / kModule);
  const nlohmann::json j = {{"format", kFormat},
                            {"hash", core.hash},
                            {"preset", core.preset},
                            {"fields", fields},
                            {"module", std::string(kModule)},
                            {"module_bytes", bytes},
                            {"module_digest", module_digest},
                            {"build_seconds", core.build_seconds},
                            {"sources", digests}};
  write_file_atomically(core.dir / kManifest, j.dump(2) + "\n");
}

}  // namespace tpuemu
