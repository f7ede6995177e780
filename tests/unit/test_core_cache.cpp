// SPDX-License-Identifier: Apache-2.0
// The core cache without Verilator (docs/core-cache.md): what the key covers, that only an entry
// whose manifest was written and whose module is the one built is found (verified without
// loading it), that a changed RTL file makes another key, where the cache is, and how a build
// waits, fails, stops and replaces a damaged entry (with a stand-in for cmake).
// tests/cli/core_cache_test.sh builds real cores.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tpuemu/config/config.h"
#include "test_support.h"
#include "tpuemu/device/core_cache.h"

namespace {

namespace fs = std::filesystem;
using namespace tpuemu;
using tpuemu::test::error_of;

tpuemu::Preset shipped(const std::string& name) {
  return load_preset(std::string(TPUEMU_TEST_PRESET_DIR) + "/" + name + ".json");
}

class CoreCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("tpuemu-core-cache-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    settings_ = CoreCacheSettings::from_environment();
    // A copy of the RTL, so that a test can change a file (never the tree's).
    fs::copy(settings_.rtl_dir, root_ / "rtl", fs::copy_options::recursive);
    settings_.rtl_dir = root_ / "rtl";
    settings_.cache_dir = root_ / "cache";
  }
  void TearDown() override { fs::remove_all(root_); }

  // The cache's entries and left-overs, by name.
  std::vector<std::string> cache_files() const {
    std::vector<std::string> names;
    if (!fs::exists(settings_.cache_dir)) return names;
    for (const auto& e : fs::directory_iterator(settings_.cache_dir))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  // A stand-in for cmake: the configure step makes the build directory, the build step runs
  // `build_step` (sh) in it and then writes a module of `module` bytes. A Verilator directory
  // that has the file a build checks for.
  void fake_toolchain(const std::string& build_step = "",
                      const std::string& module = "a module") {
    settings_.cmake = root_ / "fake-cmake";
    std::ofstream(settings_.cmake) << "#!/bin/sh\n"
                                   << "if [ \"$1\" = --build ]; then cd \"$2\" || exit 9\n"
                                   << build_step << "\nprintf '" << module << "' > core.so\n"
                                   << "else mkdir -p \"$4\"; fi\n";
    fs::permissions(settings_.cmake, fs::perms::owner_all);
    settings_.verilator_dir = root_ / "verilator";
    fs::create_directories(settings_.verilator_dir);
    std::ofstream(settings_.verilator_dir / "verilator-config.cmake") << "";
  }

  // A complete entry for `p` as a build leaves it, with `module` as its core.so.
  fs::path write_entry(const Preset& p, const std::string& module) const {
    const CoreCache cache(settings_);
    const std::string key = cache.hash_of(p);
    const fs::path dir = settings_.cache_dir / key;
    fs::create_directories(dir);
    std::ofstream(dir / "core.so") << module;
    write_core_manifest({.preset = p.name,
                         .fields = CoreCache::fields_of(p),
                         .hash = key,
                         .dir = dir,
                         .module = dir / "core.so"},
                        {{"rtl/tpu_top.sv", "0123"}});
    return dir;
  }

  fs::path root_;
  CoreCacheSettings settings_;
};

Preset banks1() {
  Preset p = shipped("small");
  p.name = "small-b1";
  p.vmem_banks = 1;
  return p;
}

TEST_F(CoreCacheTest, FieldsAreTheCoreParameters) {
  const std::vector<CoreField> f = CoreCache::fields_of(shipped("small"));
  ASSERT_EQ(f.size(), 7u);
  EXPECT_EQ(f[0], (CoreField{"Dim", "dim", 8}));
  EXPECT_EQ(f[2], (CoreField{"VmemBanks", "vmem_banks", 4}));
}

TEST_F(CoreCacheTest, KeyCoversCoreFieldsAndRtlNotTheName) {
  const CoreCache cache(settings_);
  const Preset small = shipped("small");
  const std::string key = cache.hash_of(small);
  EXPECT_EQ(key.size(), 16u);
  EXPECT_EQ(cache.hash_of(small), key);  // stable
  Preset renamed = small;
  renamed.name = "my-small";
  renamed.description = "another description";
  renamed.clock_ghz = 2.0;  // not a core field: the same core
  EXPECT_EQ(cache.hash_of(renamed), key);
  Preset banks = small;
  banks.vmem_banks = 1;
  EXPECT_NE(cache.hash_of(banks), key);
  Preset dim = small;
  dim.dim = 4;
  EXPECT_NE(cache.hash_of(dim), key);
  // Touching an RTL file (its contents) makes another key: the old core is never found again.
  std::ofstream(settings_.rtl_dir / "tpu_top.sv", std::ios::app) << "// touched\n";
  EXPECT_NE(cache.hash_of(small), key);
  // A header reached through an include directory counts too.
  const std::string after_top = cache.hash_of(small);
  std::ofstream(settings_.rtl_dir / "include" / "tpu_assert.svh", std::ios::app) << "// touched\n";
  EXPECT_NE(cache.hash_of(small), after_top);
}

TEST_F(CoreCacheTest, OnlyAnEntryWithItsManifestIsFound) {
  const CoreCache cache(settings_);
  Preset p = shipped("small");
  p.vmem_banks = 1;
  EXPECT_FALSE(cache.find(p));
  const std::string key = cache.hash_of(p);
  const fs::path dir = settings_.cache_dir / key;
  fs::create_directories(dir);
  std::ofstream(dir / "core.so") << "not really";
  EXPECT_FALSE(cache.find(p)) << "a module without its manifest is a half-built entry";
  const CachedCore core{.preset = "banks1",
                        .fields = CoreCache::fields_of(p),
                        .hash = key,
                        .dir = dir,
                        .module = dir / "core.so"};
  write_core_manifest(core, {{"rtl/tpu_top.sv", "0123"}});
  EXPECT_EQ(cache.entry(p).state, CoreEntry::State::complete) << cache.entry(p).damage;
  const std::optional<CachedCore> found = cache.find(p);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->preset, "banks1");
  EXPECT_EQ(found->module, dir / "core.so");
  EXPECT_EQ(found->fields, CoreCache::fields_of(p));
  std::vector<CachedCore> all = cache.list();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(all[0].current);

  // The RTL changes: the entry is not found for the preset any more, and listed as stale.
  std::ofstream(settings_.rtl_dir / "mem" / "vmem.sv", std::ios::app) << "// touched\n";
  EXPECT_FALSE(cache.find(p));
  all = cache.list();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_FALSE(all[0].current);
}

TEST_F(CoreCacheTest, AManifestOfAnotherKeyIsIgnored) {
  const CoreCache cache(settings_);
  const Preset p = shipped("small");
  const fs::path dir = settings_.cache_dir / cache.hash_of(p);
  fs::create_directories(dir);
  std::ofstream(dir / "core.so") << "x";
  write_core_manifest({.preset = "small",
                       .fields = CoreCache::fields_of(p),
                       .hash = "0000000000000000",
                       .dir = dir,
                       .module = dir / "core.so"},
                      {});
  EXPECT_FALSE(cache.find(p));
  const std::vector<CachedCore> all = cache.list();
  ASSERT_EQ(all.size(), 1u);
  const std::string damage = all[0].damage;
  EXPECT_EQ(damage.rfind((dir / "manifest.json").string() + ":", 0), 0u) << damage;
  EXPECT_TRUE(damage.ends_with(": /hash: core 0000000000000000 in the directory of core " +
                               cache.hash_of(p)))
      << damage;
}

TEST_F(CoreCacheTest, MissingVerilatorIsOneLineAndLeavesNothing) {
  settings_.verilator_dir = root_ / "no-verilator";
  const CoreCache cache(settings_);
  try {
    cache.build(shipped("small"), {});
    FAIL() << "built without Verilator";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "core build: verilator not found: no verilator-config.cmake in " +
                  (root_ / "no-verilator").string() + " (the build tree was configured with it)");
  }
  EXPECT_TRUE(cache_files().empty());
}

TEST_F(CoreCacheTest, AFailedBuildLeavesOnlyItsLog) {
  settings_.cmake = "/bin/false";  // every step fails
  const CoreCache cache(settings_);
  Preset p = shipped("small");
  p.vmem_banks = 1;
  bool told = false;
  const std::string key = cache.hash_of(p);
  const fs::path log = settings_.cache_dir / (key + ".failed.log");
  try {
    cache.build(p, {.progress = [&](const std::string& line) {
                      told = true;
                      EXPECT_NE(line.find("building the Verilated core of preset small (dim 8, "),
                                std::string::npos)
                          << line;
                    }});
    FAIL() << "built with /bin/false";
  } catch (const Error& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "core build: cmake configure of preset small's core failed (exit 1): see " + log.string());
  }
  EXPECT_TRUE(told);
  EXPECT_TRUE(fs::is_regular_file(log));
  // The log and the lock file: no entry, no build directory.
  EXPECT_EQ(cache_files(), (std::vector<std::string>{"." + key + ".lock", key + ".failed.log"}));
  EXPECT_FALSE(cache.find(p));
}

// ---- the one check before a module is loaded: size and digest of core.so, the manifest's form

TEST_F(CoreCacheTest, AModuleIsVerifiedAgainstItsManifestWithoutLoadingIt) {
  const CoreCache cache(settings_);
  const Preset p = banks1();
  const fs::path dir = write_entry(p, "sixteen bytes...");
  const fs::path module = dir / "core.so";
  CoreEntry e = inspect_core_entry(dir);
  ASSERT_EQ(e.state, CoreEntry::State::complete) << e.damage;
  EXPECT_EQ(e.core.module_bytes, 16u);
  EXPECT_EQ(e.core.module_digest.size(), 16u);

  // Truncated (the crash: a mapped module shorter than its headers say).
  fs::resize_file(module, 7);
  e = inspect_core_entry(dir);
  EXPECT_EQ(e.state, CoreEntry::State::damaged);
  EXPECT_EQ(e.damage, module.string() + ": 7 bytes where the manifest records 16");
  EXPECT_FALSE(cache.find(p));
  const std::vector<CachedCore> listed = cache.list();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].preset, "small-b1");
  EXPECT_EQ(listed[0].damage, e.damage);

  // The same size, other bytes.
  std::ofstream(module, std::ios::trunc) << "sixteen bytes!!!";
  e = inspect_core_entry(dir);
  EXPECT_EQ(e.state, CoreEntry::State::damaged);
  EXPECT_NE(e.damage.find(module.string() + ": digest "), std::string::npos) << e.damage;
  EXPECT_NE(e.damage.find(" where the manifest records "), std::string::npos) << e.damage;

  // Gone, or the manifest gone: damaged, never absent (the directory is there).
  fs::remove(module);
  EXPECT_EQ(inspect_core_entry(dir).damage, module.string() + ": missing");
  fs::remove(dir / "manifest.json");
  EXPECT_EQ(inspect_core_entry(dir).damage, (dir / "manifest.json").string() + ": missing");
  EXPECT_EQ(inspect_core_entry(settings_.cache_dir / "0123456789abcdef").state,
            CoreEntry::State::absent);
}

TEST_F(CoreCacheTest, AManifestIsParsedStrictlyAndItsErrorsNameThePlace) {
  const fs::path dir = write_entry(banks1(), "module");
  std::ifstream in(dir / "manifest.json");
  const nlohmann::json good = nlohmann::json::parse(in);
  const std::string where = (dir / "manifest.json").string();
  EXPECT_EQ(parse_core_manifest(good.dump(), dir).module_bytes, 6u);
  const auto with = [&](const std::string& pointer, const nlohmann::json& value) {
    nlohmann::json j = good;
    j[nlohmann::json::json_pointer(pointer)] = value;
    return error_of([&] { parse_core_manifest(j.dump(), dir); });
  };
  EXPECT_EQ(error_of([&] { parse_core_manifest("", dir); }).rfind(where + ":", 0), 0u);
  EXPECT_EQ(error_of([&] { parse_core_manifest("[1]", dir); }).rfind(where + ":", 0), 0u);
  EXPECT_EQ(error_of([&] { parse_core_manifest(std::string(200, '['), dir); }).rfind(where, 0),
            0u);
  EXPECT_NE(with("/format", "tpuemu-core 1").find("/format: \"tpuemu-core 1\" where this tpuemu"),
            std::string::npos);
  EXPECT_NE(with("/module", "../../elsewhere.so").find("/module: \"../../elsewhere.so\" where"),
            std::string::npos);
  EXPECT_NE(with("/module_bytes", -1).find("/module_bytes: must be in [1, "), std::string::npos);
  EXPECT_NE(with("/module_digest", "xyz").find("/module_digest: expected 16 lower-case"),
            std::string::npos);
  EXPECT_NE(with("/fields/2/key", "vmem_rows").find("/fields/2: expected the core field"),
            std::string::npos);
  EXPECT_NE(with("/fields/2/value", "1").find("/fields/2/value: expected an integer"),
            std::string::npos);
  EXPECT_NE(with("/fields", nlohmann::json::array()).find("/fields: expected an array of the 7"),
            std::string::npos);
  EXPECT_NE(with("/extra", 1).find("/extra"), std::string::npos);
  nlohmann::json no_digest = good;
  no_digest.erase("module_digest");
  EXPECT_NE(error_of([&] { parse_core_manifest(no_digest.dump(), dir); }).find("module_digest"),
            std::string::npos);
}

// Mutations of a real manifest (fixed seed): each parses or is one Error, never another exception.
TEST_F(CoreCacheTest, AMutatedManifestIsAnErrorNeverACrash) {
  const fs::path dir = write_entry(banks1(), "module");
  std::ifstream in(dir / "manifest.json");
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::mt19937 rng(45);
  int parsed = 0;
  int refused = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits && !text.empty(); ++k) {
      const std::size_t at = rng() % text.size();
      switch (rng() % 4) {
        case 0: text[at] = static_cast<char>(rng() % 256); break;
        case 1: text.erase(at, 1 + rng() % 16); break;
        case 2: text.insert(at, text.substr(rng() % text.size(), 1 + rng() % 32)); break;
        default: text.resize(at); break;
      }
    }
    try {
      (void)parse_core_manifest(text, dir);
      ++parsed;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      ++refused;
    }
  }
  EXPECT_GT(refused, 2500);
  EXPECT_EQ(parsed + refused, 3000);
}

// ---- where the cache is

TEST(CoreCacheSettingsTest, ARelativeXdgCacheHomeIsIgnored) {
  struct Restore {
    std::optional<std::string> home, xdg;
    ~Restore() {
      put("HOME", home);
      put("XDG_CACHE_HOME", xdg);
    }
    static void put(const char* name, const std::optional<std::string>& v) {
      if (v) ::setenv(name, v->c_str(), 1);
      else ::unsetenv(name);
    }
    static std::optional<std::string> get(const char* name) {
      const char* v = std::getenv(name);
      return v ? std::optional<std::string>(v) : std::nullopt;
    }
  } restore{Restore::get("HOME"), Restore::get("XDG_CACHE_HOME")};
  ::setenv("HOME", "/home/someone", 1);
  ::setenv("XDG_CACHE_HOME", "relative/cache", 1);
  EXPECT_EQ(CoreCacheSettings::from_environment().cache_dir,
            fs::path("/home/someone/.cache/tpuemu/cores"));
  ::setenv("XDG_CACHE_HOME", "", 1);
  EXPECT_EQ(CoreCacheSettings::from_environment().cache_dir,
            fs::path("/home/someone/.cache/tpuemu/cores"));
  ::setenv("XDG_CACHE_HOME", "/var/cache/me", 1);
  EXPECT_EQ(CoreCacheSettings::from_environment().cache_dir,
            fs::path("/var/cache/me/tpuemu/cores"));
  ::unsetenv("HOME");
  ::setenv("XDG_CACHE_HOME", "relative/cache", 1);
  EXPECT_EQ(error_of([] { CoreCacheSettings::from_environment(); }),
            "core cache: neither XDG_CACHE_HOME (an absolute path) nor HOME is set");
}

// ---- building: a damaged entry replaced, another build waited for, a stop

TEST_F(CoreCacheTest, ADamagedEntryIsRebuiltInPlace) {
  fake_toolchain("", "the rebuilt module");
  const CoreCache cache(settings_);
  const Preset p = banks1();
  const fs::path dir = write_entry(p, "sixteen bytes...");
  fs::resize_file(dir / "core.so", 3);
  std::vector<std::string> lines;
  const CoreCache::Built built =
      cache.build(p, {.progress = [&](const std::string& l) { lines.push_back(l); }});
  EXPECT_TRUE(built.built_now);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("rebuilding the Verilated core of preset small-b1 (dim 8, ", 0), 0u)
      << lines[0];
  EXPECT_NE(lines[0].find("damaged (" + (dir / "core.so").string() + ": 3 bytes where"),
            std::string::npos)
      << lines[0];
  const CoreEntry e = inspect_core_entry(dir);
  ASSERT_EQ(e.state, CoreEntry::State::complete) << e.damage;
  EXPECT_EQ(e.core.module_bytes, std::string("the rebuilt module").size());
  EXPECT_EQ(built.core.module_digest, e.core.module_digest);
  // The entry and the lock: nothing put aside or half-built is left.
  EXPECT_EQ(cache_files(), (std::vector<std::string>{"." + e.core.hash + ".lock", e.core.hash}));
  // Found now, not built again.
  EXPECT_FALSE(cache.build(p, {}).built_now);
}

TEST_F(CoreCacheTest, ASecondBuildSaysOnceThatItWaitsForTheFirst) {
  fake_toolchain();
  const CoreCache cache(settings_);
  const Preset p = banks1();
  const std::string key = cache.hash_of(p);
  fs::create_directories(settings_.cache_dir);
  const fs::path lock = settings_.cache_dir / ("." + key + ".lock");
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);  // "the first build"
  std::mutex m;
  std::vector<std::string> lines;
  std::optional<CoreCache::Built> result;
  std::thread second([&] {
    result = cache.build(p, {.progress = [&](const std::string& l) {
                               const std::lock_guard<std::mutex> g(m);
                               lines.push_back(l);
                             }});
  });
  const auto said = [&] {
    const std::lock_guard<std::mutex> g(m);
    return !lines.empty();
  };
  for (int i = 0; i < 250 && !said(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a while longer: still one line
  write_entry(p, "the first build's");                          // the first build publishes
  ::close(fd);
  second.join();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "waiting for another build of this core to finish (it holds " +
                          lock.string() + ")");
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->built_now);  // the first build's entry
  EXPECT_EQ(result->core.module_bytes, std::string("the first build's").size());
}

// Whether a process runs (a zombie waiting for its parent does not).
bool runs(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  const std::size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] != 'Z';
}

TEST_F(CoreCacheTest, AStopEndsTheBuildItsToolsAndLeavesNothing) {
  const fs::path started = root_ / "tool.pid";
  // The build step starts a long tool of its own (as ninja starts the compiler) and waits.
  fake_toolchain("sleep 60 & echo $! > " + started.string() + "; wait");
  const CoreCache cache(settings_);
  const Preset p = banks1();
  const auto begin = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> asked;
  const StopToken stop([&] {
    if (!asked && fs::exists(started) && fs::file_size(started) > 0)
      asked = std::chrono::steady_clock::now();  // Ctrl-C once the tool runs
    return asked.has_value();
  });
  EXPECT_EQ(error_of([&] { cache.build(p, {.stop = stop}); }),
            "interrupted during the core build; nothing was written");
  ASSERT_TRUE(asked);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - *asked).count();
  EXPECT_LT(seconds, 1.0) << "stopped " << seconds << " s after the signal";
  EXPECT_LT(std::chrono::duration<double>(asked.value() - begin).count(), 30.0);
  pid_t tool = 0;
  std::ifstream(started) >> tool;
  ASSERT_GT(tool, 0);
  bool gone = false;
  for (int i = 0; i < 50 && !(gone = !runs(tool)); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(gone) << "the build's tool " << tool << " still runs";
  if (!gone) ::kill(tool, SIGKILL);
  // No entry, no build directory, no failed log: only the lock file.
  EXPECT_EQ(cache_files(), (std::vector<std::string>{"." + cache.hash_of(p) + ".lock"}));
}

TEST_F(CoreCacheTest, AStopWhileWaitingForTheLockEndsTheWait) {
  fake_toolchain();
  const CoreCache cache(settings_);
  const Preset p = banks1();
  fs::create_directories(settings_.cache_dir);
  const fs::path lock = settings_.cache_dir / ("." + cache.hash_of(p) + ".lock");
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  std::atomic<bool> waiting{false};
  const std::string error = error_of([&] {
    cache.build(p, {.progress = [&](const std::string&) { waiting = true; },
                    .stop = StopToken([&] { return waiting.load(); })});
  });
  ::close(fd);
  EXPECT_EQ(error, "interrupted during the core build; nothing was written");
  EXPECT_TRUE(waiting);
}

}  // namespace
