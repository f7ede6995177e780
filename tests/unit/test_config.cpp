// SPDX-License-Identifier: Apache-2.0
// Presets: shipped presets, validation, positioned errors, lookup (JSON input itself: test_base.cpp).
#include <gtest/gtest.h>

#include "test_support.h"
#include "tpuemu/spec/contract.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/config/config.h"

namespace tpuemu {
namespace {

using test::error_of;
using test::expect_contains;
using test::TempDir;

namespace fs = std::filesystem;

const fs::path kShippedPresets = TPUEMU_TEST_PRESET_DIR;

// Sets an environment variable for the scope of a test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

nlohmann::json valid_preset_json() {
  return nlohmann::json::parse(R"({
    "name": "t", "description": "test core", "dim": 8, "vmem_rows": 1024, "vmem_banks": 4,
    "acc_rows": 256, "smem_words": 64, "queue_depth": 8, "mem_outstanding": 16, "clock_ghz": 1.0,
    "hbm": {"model": "simple", "capacity_bytes": 1048576, "latency_cycles": 10, "bytes_per_cycle": 8}
  })");
}

// The error from loading `j` (pretty-printed, so every key is on its own line).
std::string preset_error(const TempDir& dir, const nlohmann::json& j) {
  const auto path = dir.write("p.json", j.dump(2));
  return error_of([&] { load_preset_file(path); });
}

// ---- shipped presets ------------------------------------------------------------------------

TEST(Presets, ShippedPresetsLoadAndValidate) {
  const std::vector<fs::path> dirs = {kShippedPresets};
  const Preset small = load_preset("small", dirs);
  EXPECT_EQ(small.name, "small");
  EXPECT_EQ(small.dim, 8u);
  EXPECT_EQ(small.vmem_rows, 8192u);
  EXPECT_EQ(small.vmem_bytes(), 8192u * 8u);
  EXPECT_EQ(small.beat_bytes(), 8u);
  EXPECT_EQ(small.peak_macs_per_cycle(), 64u);
  EXPECT_EQ(small.hbm_bytes_per_cycle(), 8u);
  EXPECT_EQ(small.hbm.capacity_bytes, 64u << 20);
  EXPECT_EQ(small.smem_rows(), 128u);
  namespace config = tpuemu::spec::csr::config;
  EXPECT_EQ(small.config_csr(), config::dim.put(8) | config::log2_vmem_rows.put(13) | config::log2_acc_rows.put(10));

  const Preset def = load_preset("default", dirs);
  EXPECT_EQ(def.dim, 16u);
  EXPECT_EQ(def.vmem_bytes(), 256u * 1024u);  // "256 KiB VMEM"
  const Preset v4 = load_preset("tpu-v4-like", dirs);
  EXPECT_EQ(v4.dim, 128u);
  EXPECT_EQ(v4.peak_macs_per_cycle(), 16384u);
  EXPECT_DOUBLE_EQ(v4.clock_ghz, 1.05);

  EXPECT_EQ(list_presets(dirs), (std::vector<std::string>{"default", "small", "tpu-v4-like"}));
  // By path as well as by name.
  EXPECT_EQ(load_preset((kShippedPresets / "small.json").string(), dirs), small);
}

TEST(Presets, ToJsonRoundTrips) {
  test::TempDir dir;
  const Preset def = load_preset_file(kShippedPresets / "default.json");
  const auto path = dir.write("default.json", to_json(def).dump(2));
  EXPECT_EQ(load_preset_file(path), def);
  const std::string text = describe(def);
  expect_contains(text, "16x16");
  expect_contains(text, "256 KiB");
}

TEST(Presets, ValidFileLoads) {
  test::TempDir dir;
  const auto path = dir.write("t.json", valid_preset_json().dump());
  const Preset p = load_preset_file(path);
  EXPECT_EQ(p.dim, 8u);
  EXPECT_EQ(p.hbm.latency_cycles, 10u);
  EXPECT_EQ(p.smem_rows(), 32u);
  EXPECT_EQ(p.vmem_rows_per_bank(), 256u);
}

// ---- validation -----------------------------------------------------------------------------

struct BadValue {
  std::string pointer;  // JSON pointer of the value to replace
  nlohmann::json value;
  std::string fragment;  // expected in the message
};

TEST(Presets, InvalidValuesAreRejectedWithPointer) {
  test::TempDir dir;
  const std::vector<BadValue> cases = {
      {"/dim", 12, "must be a power of two"},
      {"/dim", 2, "must be a power of two in [8, 256], got 2"},
      {"/dim", 512, "must be a power of two in [8, 256], got 512"},
      {"/dim", -8, "must be a power of two in [8, 256], got -8"},
      // The RTL's own constraint: SMEM's dim/4 word banks (a core of dim 4 does not build).
      {"/dim", 4, "must be a power of two in [8, 256], got 4: SMEM has dim/4 word banks"},
      {"/dim", "8", "expected an integer, got string"},
      {"/dim", 8.0, "expected an integer, got number 8.0"},
      {"/dim", true, "expected an integer, got boolean"},
      {"/vmem_rows", 1000, "must be a power of two"},
      {"/vmem_rows", 4, "must be a power of two in [dim (8), "},  // fewer rows than one tile
      {"/vmem_banks", 3, "must be a power of two in [1, vmem_rows (1024)], got 3"},
      {"/vmem_banks", 2048, "must be a power of two in [1, vmem_rows (1024)], got 2048"},
      {"/vmem_banks", 0, "must be a power of two in [1, vmem_rows (1024)]"},
      {"/acc_rows", 300, "must be a power of two"},
      {"/acc_rows", 1, "must be a power of two in [2, 16777216], got 1: an ACC row index"},
      {"/smem_words", 65, "must be a multiple of dim/4 (2) in [dim/4 (2), 16777216], got 65"},
      {"/smem_words", 1, "in [dim/4 (2), "},
      {"/queue_depth", 0, "must be a power of two in [2, 128], got 0"},
      {"/queue_depth", 3, "must be a power of two in [2, 128], got 3: a queue is a FIFO"},
      {"/queue_depth", 256, "must be a power of two in [2, 128], got 256"},
      {"/mem_outstanding", 0, "must be a power of two in [2, 1024], got 0"},
      {"/mem_outstanding", 24, "must be a power of two in [2, 1024], got 24: the DMA's read"},
      {"/clock_ghz", 0, "must be in [0.001, 100]"},
      {"/clock_ghz", 1e-300, "must be in [0.001, 100], got 1e-300"},  // not a clock: infinite seconds
      {"/clock_ghz", 1000, "must be in [0.001, 100]"},
      {"/clock_ghz", "fast", "expected a number"},
      {"/name", "", "non-empty"},
      {"/name", "a b", "non-empty [A-Za-z0-9._-] name"},
      {"/description", 5, "expected a string"},
      {"/hbm", 5, "expected an object"},
      {"/hbm/model", "hbm9", "unknown HBM model \"hbm9\" (known: simple, hbm)"},
      {"/hbm/capacity_bytes", 1048577, "must be a multiple of dim (8)"},
      {"/hbm/capacity_bytes", 4294967304ull, "must be in [8, 4294967296]"},
      {"/hbm/capacity_bytes", 0, "must be in [8, "},
      {"/hbm/bytes_per_cycle", 9, "must be in [1, 8]"},
      {"/hbm/bytes_per_cycle", 0, "must be in [1, 8]"},
      {"/hbm/latency_cycles", 0, "must be in [1, "},
  };
  for (const auto& c : cases) {
    auto j = valid_preset_json();
    j[nlohmann::json::json_pointer(c.pointer)] = c.value;
    const std::string msg = preset_error(dir, j);
    SCOPED_TRACE(c.pointer + " = " + c.value.dump());
    expect_contains(msg, (dir.path() / "p.json").string() + ":");
    expect_contains(msg, c.pointer + ": ");
    expect_contains(msg, c.fragment);
  }
  // The largest legal capacity (4 GiB) is accepted.
  auto j = valid_preset_json();
  j["hbm"]["capacity_bytes"] = 4294967296ull;
  EXPECT_EQ(preset_error(dir, j), "(no error)");
}

// Every constraint of the contract's core_params table (the one tpu_top checks its parameters
// against) refuses a value at load: just outside each constant bound, and off a power of two.
TEST(Presets, EveryCoreParameterConstraintOfTheContractIsChecked) {
  test::TempDir dir;
  namespace cp = spec::core_params;
  const nlohmann::json valid = valid_preset_json();
  std::vector<std::uint64_t> values;
  for (const cp::Param& c : cp::kParams) {
    SCOPED_TRACE(std::string(c.name));
    const std::uint64_t v = valid.at(std::string(c.name)).get<std::uint64_t>();
    ASSERT_TRUE(c.holds(v, values)) << "the valid preset breaks its own constraint";
    std::vector<std::uint64_t> bad = {c.min.value(values) - 1, c.max.value(values) + 1};
    if (c.power_of_two) bad.push_back(v + v / 2);
    for (const std::uint64_t b : bad) {
      if (c.holds(b, values)) continue;  // min 0 - 1 wraps; v + v/2 may be a multiple
      auto j = valid;
      j[std::string(c.name)] = b;
      const std::string msg = preset_error(dir, j);
      expect_contains(msg, fmt::format("/{}: must be ", c.name));
      expect_contains(msg, fmt::format(", got {}: {}", b, c.why));
    }
    values.push_back(v);
  }
  EXPECT_EQ(values.size(), 7u);
}

TEST(Presets, InterconnectIsOptionalAndValidated) {
  test::TempDir dir;
  EXPECT_FALSE(load_preset_file(dir.write("none.json", valid_preset_json().dump())).interconnect.has_value());
  auto with = [] {
    auto j = valid_preset_json();
    j["interconnect"] = {{"topology", "ring"}, {"links_per_device", 2}, {"link_bytes_per_cycle", 2}, {"latency_cycles", 500}};
    return j;
  };
  const Preset p = load_preset_file(dir.write("ring.json", with().dump()));
  ASSERT_TRUE(p.interconnect.has_value());
  EXPECT_EQ(p.interconnect->latency_cycles, 500u);
  EXPECT_EQ(load_preset_file(dir.write("again.json", to_json(p).dump())), p);
  const std::vector<BadValue> cases = {
      {"/interconnect/topology", "mesh3d", "expected \"ring\" or \"torus2d\", got \"mesh3d\""},
      {"/interconnect/links_per_device", 4, "a ring has 1 (one direction) or 2 links per device, got 4"},
      {"/interconnect/links_per_device", 0, "must be in [1, 4]"},
      {"/interconnect/link_bytes_per_cycle", 0, "must be in [1, "},
      {"/interconnect/latency_cycles", -1, "must be in [0, "},
  };
  for (const auto& c : cases) {
    auto j = with();
    j[nlohmann::json::json_pointer(c.pointer)] = c.value;
    SCOPED_TRACE(c.pointer);
    const std::string msg = preset_error(dir, j);
    expect_contains(msg, c.pointer + ": ");
    expect_contains(msg, c.fragment);
  }
  auto torus = with();
  torus["interconnect"]["topology"] = "torus2d";
  expect_contains(preset_error(dir, torus), "a 2-D torus has 4 links per device, got 2");
  auto extra = with();
  extra["interconnect"]["hops"] = 3;
  expect_contains(preset_error(dir, extra), "/interconnect/hops");
}

TEST(Presets, UnknownKeyIsAnErrorAtItsPosition) {
  test::TempDir dir;
  const auto path = dir.write("p.json", R"({
  "name": "t", "description": "", "dim": 8, "vmem_rows": 1024, "vmem_banks": 4,
  "acc_rows": 256, "smem_words": 64, "queue_depth": 8, "mem_outstanding": 16,
  "clock_ghz": 1.0,
     "vmem_row": 5,
  "hbm": {"model": "simple", "capacity_bytes": 1048576, "latency_cycles": 10, "bytes_per_cycle": 8}
})");
  const std::string msg = error_of([&] { load_preset_file(path); });
  EXPECT_EQ(msg.rfind(path.string() + ":5:6: /vmem_row: unknown key \"vmem_row\" (known keys: ", 0), 0u)
      << msg;
  expect_contains(msg, "vmem_rows");

  auto j = valid_preset_json();
  j["hbm"]["latency"] = 3;
  const std::string nested = preset_error(dir, j);
  expect_contains(nested, "/hbm/latency: unknown key \"latency\"");
}

TEST(Presets, MissingKeyIsAnError) {
  test::TempDir dir;
  auto j = valid_preset_json();
  j.erase("acc_rows");
  expect_contains(preset_error(dir, j), "/: missing required key \"acc_rows\"");
  j = valid_preset_json();
  j["hbm"].erase("model");
  expect_contains(preset_error(dir, j), "/hbm: missing required key \"model\"");
  expect_contains(preset_error(dir, nlohmann::json::array()), "/: expected an object, got array");
}

// ---- lookup ---------------------------------------------------------------------------------

TEST(PresetLookup, UnknownPresetListsAvailable) {
  const std::vector<fs::path> dirs = {kShippedPresets};
  const std::string msg = error_of([&] { load_preset("medium", dirs); });
  expect_contains(msg, "unknown preset \"medium\"");
  expect_contains(msg, "available: default, small, tpu-v4-like");
  expect_contains(msg, kShippedPresets.string());
}

TEST(PresetLookup, SearchOrderAndNameCheck) {
  test::TempDir first, second;
  auto j = valid_preset_json();
  j["name"] = "small";
  j["dim"] = 16;
  j["hbm"]["bytes_per_cycle"] = 16;
  first.write("small.json", j.dump());
  j["name"] = "mine";
  second.write("mine.json", j.dump());
  second.write("notes.txt", "not a preset");
  const std::vector<fs::path> dirs = {first.path(), second.path(), kShippedPresets};

  EXPECT_EQ(load_preset("small", dirs).dim, 16u);  // the first directory wins
  EXPECT_EQ(load_preset("mine", dirs).name, "mine");
  EXPECT_EQ(load_preset("default", dirs).dim, 16u);
  EXPECT_EQ(list_presets(dirs), (std::vector<std::string>{"default", "mine", "small", "tpu-v4-like"}));

  // A file whose name field disagrees with its file name is rejected when loaded by name.
  j["name"] = "other";
  first.write("copy.json", j.dump());
  expect_contains(error_of([&] { load_preset("copy", dirs); }), "must match the file name");
  EXPECT_EQ(load_preset((first.path() / "copy.json").string(), dirs).name, "other");
}

TEST(PresetLookup, DefaultDirsHonourTheEnvironment) {
  test::TempDir dir;
  auto j = valid_preset_json();
  j["name"] = "envonly";
  dir.write("envonly.json", j.dump());
  {
    ScopedEnv env("TPUEMU_CONFIG_DIR", dir.path().string());
    const auto dirs = default_preset_dirs();
    ASSERT_GE(dirs.size(), 4u);
    EXPECT_EQ(dirs.front(), dir.path());
    EXPECT_EQ(load_preset("envonly").name, "envonly");
    // The source tree is the last fallback, so shipped presets are still found.
    EXPECT_EQ(load_preset("small").dim, 8u);
    const auto names = list_presets();
    EXPECT_NE(std::find(names.begin(), names.end(), "envonly"), names.end());
  }
  const auto dirs = default_preset_dirs();
  EXPECT_EQ(std::find(dirs.begin(), dirs.end(), dir.path()), dirs.end());
  EXPECT_THROW(load_preset("envonly"), Error);
  EXPECT_EQ(fs::canonical(dirs.back()), fs::canonical(kShippedPresets));
}

}  // namespace
}  // namespace tpuemu
