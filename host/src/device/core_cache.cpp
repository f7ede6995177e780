// SPDX-License-Identifier: Apache-2.0
// The core cache (tpuemu/device/core_cache.h, docs/core-cache.md): hashing, the manifest, the
// generated CMake project of one core and the build that runs it.
#include "tpuemu/device/core_cache.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

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
#include "tpuemu/sim/core_build_config.h"

extern char** environ;

namespace tpuemu {

namespace fs = std::filesystem;
namespace cb = sim::core_build;

namespace {

constexpr std::string_view kManifest = "manifest.json";
constexpr std::string_view kModule = "core.so";
// Bumped when what goes into the hash or the module's interface changes: every older entry is
// then rebuilt rather than loaded.
constexpr std::string_view kFormat = "tpuemu-core 1";

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

// A command of the build, its output appended to `log`; its exit status (or -1: not started).
int run_logged(const std::vector<std::string>& argv, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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

// An exclusive lock on a file for this object's lifetime (flock: released if the process dies).
class FileLock {
 public:
  explicit FileLock(const fs::path& path)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0)
      throw Error(path.string(),
                  fmt::format("cannot create the core cache's lock: {}", std::strerror(errno)));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        const int err = errno;
        ::close(fd_);
        throw Error(path.string(), fmt::format("cannot lock: {}", std::strerror(err)));
      }
    }
  }
  ~FileLock() { ::close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
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
  const std::string xdg = env_or("XDG_CACHE_HOME", home.empty() ? std::string() : home + "/.cache");
  if (xdg.empty()) throw Error("core cache", "neither XDG_CACHE_HOME nor HOME is set");
  s.cache_dir = fs::path(xdg) / "tpuemu" / "cores";
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

std::optional<CachedCore> CoreCache::find(const Preset& preset) const {
  return read_core_manifest(settings_.cache_dir / hash_of(preset));
}

std::vector<CachedCore> CoreCache::list() const {
  std::vector<CachedCore> cores;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(settings_.cache_dir, ec)) {
    if (!e.is_directory() || e.path().filename().string().starts_with("."))
      continue;  // a build in progress
    if (std::optional<CachedCore> c = read_core_manifest(e.path())) {
      try {
        c->current = hash_core(c->fields, settings_.rtl_dir).first == c->hash;
      } catch (const Error&) {
        c->current = false;  // its sources are gone: it cannot be what a build makes now
      }
      cores.push_back(std::move(*c));
    }
  }
  std::sort(cores.begin(), cores.end(), [](const CachedCore& a, const CachedCore& b) {
    return std::tie(a.preset, a.hash) < std::tie(b.preset, b.hash);
  });
  return cores;
}

CachedCore CoreCache::build(const Preset& preset,
                            const std::function<void(const std::string&)>& progress) const {
  const std::vector<CoreField> fields = fields_of(preset);
  auto [hash, digests] = hash_core(fields, settings_.rtl_dir);
  const fs::path dir = settings_.cache_dir / hash;
  if (std::optional<CachedCore> c = read_core_manifest(dir)) return *c;
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
  const FileLock lock(settings_.cache_dir / ("." + hash + ".lock"));
  if (std::optional<CachedCore> c = read_core_manifest(dir))
    return *c;  // built meanwhile by another process

  // Holding the lock, no other process builds this core: a build directory of it is a killed
  // build's.
  std::vector<fs::path> killed;
  for (const fs::directory_entry& e : fs::directory_iterator(settings_.cache_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("." + hash + ".") && name.ends_with(".tmp")) killed.push_back(e.path());
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
  if (progress)
    progress(
        fmt::format("building the Verilated core of preset {} ({}) into {}: a few minutes, once",
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
    const int rc = run_logged(steps[i], log);
    if (rc == 0) continue;
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
  // or none.
  CachedCore staged = core;
  staged.dir = work;
  write_core_manifest(staged, digests);
  fs::rename(work, dir, ec);
  if (ec)
    throw Error(dir.string(),
                fmt::format("cannot move the built core into place: {}", ec.message()));
  fs::remove(settings_.cache_dir / (hash + ".failed.log"), ec);
  return core;
}

std::optional<CachedCore> read_core_manifest(const fs::path& dir) {
  const fs::path file = dir / kManifest;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  try {
    const nlohmann::json j = nlohmann::json::parse(read_file(file));
    if (j.at("format").get<std::string>() != kFormat) return std::nullopt;
    CachedCore c;
    c.hash = j.at("hash").get<std::string>();
    if (c.hash != dir.filename().string()) return std::nullopt;  // not this directory's core
    c.preset = j.at("preset").get<std::string>();
    for (const auto& f : j.at("fields"))
      c.fields.push_back({f.at("parameter").get<std::string>(), f.at("key").get<std::string>(),
                          f.at("value").get<std::uint64_t>()});
    c.build_seconds = j.value("build_seconds", 0.0);
    c.dir = dir;
    c.module = dir / j.at("module").get<std::string>();
    if (!fs::is_regular_file(c.module, ec)) return std::nullopt;
    return c;
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable: rebuilt, as if absent
  }
}

void write_core_manifest(const CachedCore& core,
                         const std::vector<std::pair<std::string, std::string>>& sources) {
  nlohmann::json fields = nlohmann::json::array();
  for (const CoreField& f : core.fields)
    fields.push_back({{"parameter", f.parameter}, {"key", f.key}, {"value", f.value}});
  nlohmann::json digests = nlohmann::json::object();
  for (const auto& [name, d] : sources) digests[name] = d;
  const nlohmann::json j = {{"format", kFormat},
                            {"hash", core.hash},
                            {"preset", core.preset},
                            {"fields", fields},
                            {"module", core.module.filename().string()},
                            {"build_seconds", core.build_seconds},
                            {"sources", digests}};
  write_file_atomically(core.dir / kManifest, j.dump(2) + "\n");
}

}  // namespace tpuemu
