// SPDX-License-Identifier: Apache-2.0
// The core cache without Verilator (docs/core-cache.md): what the key covers, that only an entry
// whose manifest was written is found, that a changed RTL file makes another key, and that a
// failed build leaves nothing behind but its log. tests/cli/core_cache_test.sh builds real cores.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tpuemu/config/config.h"
#include "tpuemu/device/core_cache.h"

namespace {

namespace fs = std::filesystem;
using namespace tpuemu;

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

  fs::path root_;
  CoreCacheSettings settings_;
};

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
  EXPECT_TRUE(cache.list().empty());
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
  p.dim = 4;
  bool told = false;
  const std::string key = cache.hash_of(p);
  const fs::path log = settings_.cache_dir / (key + ".failed.log");
  try {
    cache.build(p, [&](const std::string& line) {
      told = true;
      EXPECT_NE(line.find("building the Verilated core of preset small (dim 4, "),
                std::string::npos)
          << line;
    });
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

}  // namespace
