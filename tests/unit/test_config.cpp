// Presets and JSON input: shipped presets, validation, positioned errors, lookup.
#include <gtest/gtest.h>

#include "test_support.h"

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

void expect_contains(const std::string& msg, const std::string& fragment) {
  EXPECT_NE(msg.find(fragment), std::string::npos) << "message: " << msg << "\nexpected: " << fragment;
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
  EXPECT_EQ(small.config_csr(), 8u | 13u << 16 | 10u << 24);

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
      {"/dim", 2, "must be in [4, 256]"},
      {"/dim", 512, "must be in [4, 256]"},
      {"/dim", -8, "must be in [4, 256], got -8"},
      {"/dim", "8", "expected an integer, got string"},
      {"/dim", 8.0, "expected an integer, got number 8.0"},
      {"/dim", true, "expected an integer, got boolean"},
      {"/vmem_rows", 1000, "must be a power of two"},
      {"/vmem_rows", 4, "must be in [8, "},  // fewer rows than one weight tile
      {"/vmem_banks", 3, "must be a power of two dividing vmem_rows"},
      {"/vmem_banks", 2048, "must be in [1, 1024]"},
      {"/vmem_banks", 0, "must be in [1, 1024]"},
      {"/acc_rows", 300, "must be a power of two"},
      {"/smem_words", 65, "must be a multiple of dim/4 (2"},
      {"/smem_words", 1, "must be in [2, "},
      {"/queue_depth", 0, "must be in [1, 255]"},
      {"/queue_depth", 256, "must be in [1, 255]"},
      {"/mem_outstanding", 0, "must be in [1, 1024]"},
      {"/clock_ghz", 0, "must be in (0, 100]"},
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

// ---- JSON syntax errors ---------------------------------------------------------------------

TEST(Json, MalformedJsonReportsLineAndColumn) {
  test::TempDir dir;
  struct Case {
    std::string text;
    std::string position;  // expected "line:column"
    std::string fragment;
  };
  const std::vector<Case> cases = {
      // Trailing comma: the '}' at line 3, column 1.
      {"{\n  \"a\": 1,\n}\n", "3:1", "expected string literal"},
      // Missing colon after a key: the 5 at line 2, column 9.
      {"{\n  \"dim\" 5\n}", "2:9", "expected ':'"},
      // A bad literal; the lexer stops at the first character that cannot continue it.
      {"{\"a\": 1,\n \"b\": trux}", "2:10", "invalid literal"},
      // Unterminated input: one past the last character (line 2 has 12).
      {"{\n  \"a\": [1, 2", "2:13", "unexpected end of input"},
      {"", "1:1", "unexpected end of input"},
      // Multi-byte UTF-8 before the error counts in bytes.
      {"{\"\xc3\xa9\": 1 2}", "1:10", "expected '}'"},
  };
  for (const auto& c : cases) {
    const auto path = dir.write("bad.json", c.text);
    const std::string msg = error_of([&] { parse_json_file(path); });
    SCOPED_TRACE(c.text);
    EXPECT_EQ(msg.rfind(path.string() + ":" + c.position + ": ", 0), 0u) << msg;
    expect_contains(msg, c.fragment);
    EXPECT_EQ(msg.find('\n'), std::string::npos);
    EXPECT_EQ(msg.find("json.exception"), std::string::npos) << msg;
  }
}

TEST(Json, DuplicateKeysAreRejected) {
  const std::string text = "{\"a\": {\"x\": 1,\n  \"x\": 2}}";
  const std::string msg = error_of([&] { JsonDocument::parse(text, "d.json"); });
  EXPECT_EQ(msg, "d.json:2:3: duplicate key \"x\" in /a");
  // The same key in different objects is fine.
  EXPECT_NO_THROW(JsonDocument::parse(R"({"a": {"x": 1}, "b": {"x": 2}, "x": [{"x": 1}, {"x": 2}]})", "ok"));
}

TEST(Json, PositionsOfKeysAndArrayElements) {
  const auto doc = JsonDocument::parse("{\n  \"a\": [1, {\"b/c\": 2}],\n  \"d~\": {\"e\": \"x\\\"y\"}\n}",
                                       "pos.json");
  EXPECT_EQ(doc.position_of("/a").line, 2u);
  EXPECT_EQ(doc.position_of("/a").column, 3u);
  EXPECT_EQ(doc.position_of("/a/1").column, 12u);  // the '{' of element 1
  EXPECT_EQ(doc.position_of("/a/1/b~1c").column, 13u);
  EXPECT_EQ(doc.position_of("/a/0").column, 3u);  // scalar elements fall back to the array's key
  EXPECT_EQ(doc.position_of("/d~0/e").line, 3u);
  EXPECT_EQ(doc.position_of("/d~0/e").column, 10u);
  EXPECT_EQ(doc.position_of("").line, 1u);
  EXPECT_EQ(doc.error_at("/d~0/e", "bad").what(), std::string("pos.json:3:10: /d~0/e: bad"));
  EXPECT_EQ(json_pointer_escape("a/b~c"), "a~1b~0c");
  EXPECT_EQ(json_value_error("f.json", "/x", "nope").what(), std::string("f.json: /x: nope"));
  EXPECT_EQ(doc.root()["d~"]["e"], "x\"y");
}

TEST(Json, ObjectReaderTypes) {
  const auto doc = JsonDocument::parse(
      R"({"s": "str", "b": true, "u": 7, "i": -7, "f": 2.5, "big": 18446744073709551615, "o": {}})",
      "r.json");
  JsonObjectReader r(doc, "");
  EXPECT_EQ(r.get_string("s"), "str");
  EXPECT_TRUE(r.get_bool("b"));
  EXPECT_EQ(r.get_uint("u", 0, 7), 7u);
  EXPECT_EQ(r.get_int("i", -10, 10), -7);
  EXPECT_DOUBLE_EQ(r.get_number("f", 0, 3), 2.5);
  EXPECT_NE(error_of([&] { r.get_int("big"); }).find("must be in"), std::string::npos);
  EXPECT_NE(error_of([&] { r.get_uint("i"); }).find("got -7"), std::string::npos);
  EXPECT_NE(error_of([&] { r.get_bool("u"); }).find("expected true or false"), std::string::npos);
  EXPECT_NE(error_of([&] { r.get_string("missing"); }).find("missing required key"), std::string::npos);
  EXPECT_EQ(r.find("absent"), nullptr);
  EXPECT_TRUE(r.has("o"));
  EXPECT_NE(error_of([&] { r.finish(); }).find("unknown key \"o\""), std::string::npos);
  r.get_object("o").finish();
  EXPECT_NO_THROW(r.finish());
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

// ---- Error ----------------------------------------------------------------------------------

TEST(ErrorType, FormatsPlaces) {
  EXPECT_STREQ(Error::at("f.json", 3, 7, "bad").what(), "f.json:3:7: bad");
  EXPECT_STREQ(Error::at("f.s", 3, "bad").what(), "f.s:3: bad");
  EXPECT_STREQ(Error::at("f.s", 0, "bad").what(), "f.s: bad");
  EXPECT_STREQ(Error::in_buffer("weights", 0x1f40, "out of range").what(),
               "buffer 'weights' at 0x1f40: out of range");
  EXPECT_STREQ(Error("no place").what(), "no place");
  EXPECT_STREQ(Error("a\nb", "c\r\nd").what(), "a b: c  d");
  const Error inner("w5", "reserved bits");
  EXPECT_STREQ(inner.within("instruction 3").what(), "instruction 3: w5: reserved bits");
  EXPECT_EQ(inner.within("instruction 3").cause(), "reserved bits");
  EXPECT_STREQ(Error("cause").within("outer").what(), "outer: cause");
}

}  // namespace
}  // namespace tpuemu
