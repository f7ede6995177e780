// SPDX-License-Identifier: Apache-2.0
// HBM timing sets (configs/hbm/*.json, host/src/config/hbm_config.cpp): the shipped sets load with
// the documented numbers and bandwidths; every malformed or inconsistent file is refused with a
// one-line "file:line:column: /pointer: cause" error; lookup by name; address mapping.
#include <gtest/gtest.h>

#include "test_support.h"

#include <unistd.h>

#include <fstream>
#include <regex>
#include <string>

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/config/hbm_config.h"

namespace tpuemu {
namespace {

using test::error_of;

namespace fs = std::filesystem;

// The shipped timing sets: the presets directory's sibling.
const fs::path kShippedHbm = fs::path(TPUEMU_TEST_PRESET_DIR).parent_path() / "hbm";

// A valid file, one timing per line from line 8 on, so positions are easy to state:
// line 12 column 5 is the key "tRC".
const std::string kGood = R"({
  "name": "hbm2-test",
  "source": "unit test",
  "tck_ps": 1000,
  "geometry": { "channels": 8, "bank_groups": 4, "banks_per_group": 4, "rows": 16384,
                "columns": 32, "bus_bytes": 16, "burst_length": 4 },
  "timing": {
    "CL": 14, "CWL": 4,
    "tRCD": 14,
    "tRP": 14,
    "tRAS": 34,
    "tRC": 48,
    "tRRD_S": 4, "tRRD_L": 6,
    "tFAW": 30,
    "tCCD_S": 1, "tCCD_L": 2,
    "tWTR_S": 6, "tWTR_L": 8,
    "tWR": 16, "tRTP": 4,
    "tRFC": 260,
    "tREFI": 3900
  }
}
)";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

// Loads `text` as <tmp>/<name> and returns the error (prefix "<path>:" stripped to "<name>:").
std::string load_error(const test::TempDir& dir, const std::string& name, const std::string& text) {
  const auto path = dir.write(name, text);
  auto msg = error_of([&] { load_hbm_timing_set_file(path); });
  const auto prefix = path.string();
  if (msg.rfind(prefix, 0) == 0) msg = name + msg.substr(prefix.size());
  return msg;
}

// ---------------------------------------------------------------------------------------------
// Shipped sets
// ---------------------------------------------------------------------------------------------

TEST(HbmConfig, EveryShippedSetLoads) {
  const std::vector<fs::path> dirs{kShippedHbm};
  const auto names = list_hbm_timing_sets(dirs);
  EXPECT_EQ(names, (std::vector<std::string>{"hbm2-2000", "hbm2e-3200", "hbm3-6400"}));
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    const HbmTimingSet s = load_hbm_timing_set(name, dirs);
    EXPECT_EQ(s.name, name);
    EXPECT_FALSE(s.source.empty());
    EXPECT_EQ(s.burst_bytes(), 64u);
    EXPECT_EQ(s.tBURST(), 2u);
    EXPECT_EQ(s.page_bytes(), 2048u);
    EXPECT_EQ(s.address_map.to_string(), "ro-ba-bg-ch-co");
    EXPECT_EQ(s.addressable_bytes(), std::uint64_t{4} << 30);
    // Round trip through the file format.
    const auto doc = JsonDocument::parse(to_json(s).dump(2), "roundtrip.json");
    EXPECT_EQ(hbm_timing_set_from_json(doc), s);
    EXPECT_NE(describe(s).find(name), std::string::npos);
  }
}

TEST(HbmConfig, Hbm2ReferenceValues) {
  const std::vector<fs::path> dirs{kShippedHbm};
  const HbmTimingSet s = load_hbm_timing_set("hbm2-2000", dirs);
  EXPECT_EQ(s.tck_ps, 1000u);
  const HbmGeometry g{.channels = 8, .bank_groups = 4, .banks_per_group = 4, .rows = 16384,
                      .columns = 32, .bus_bytes = 16, .burst_length = 4};
  EXPECT_EQ(s.geometry, g);
  const HbmTimings t{.CL = 14, .CWL = 4, .tRCD = 14, .tRP = 14, .tRAS = 34, .tRC = 48,
                     .tRRD_S = 4, .tRRD_L = 6, .tFAW = 30, .tCCD_S = 1, .tCCD_L = 2,
                     .tWTR_S = 6, .tWTR_L = 8, .tWR = 16, .tRTP = 6, .tRFC = 260,
                     .tREFI = 3900};
  EXPECT_EQ(s.timings, t);
  EXPECT_EQ(s.peak_bytes_per_tck_per_channel(), 32u);
  EXPECT_EQ(s.peak_bytes_per_tck(), 256u);
  EXPECT_DOUBLE_EQ(s.peak_gbps(), 256.0);  // 8 channels x 32 GB/s per stack
  EXPECT_DOUBLE_EQ(s.peak_gbps_per_channel(), 32.0);
  EXPECT_EQ(s.capacity_bytes(), std::uint64_t{4} << 30);
  EXPECT_EQ(s.channel_capacity_bytes(), std::uint64_t{512} << 20);
  EXPECT_NE(describe(s).find("256.0 GB/s"), std::string::npos) << describe(s);
}

TEST(HbmConfig, FasterSetsBandwidthAndCapacity) {
  const std::vector<fs::path> dirs{kShippedHbm};
  const HbmTimingSet e = load_hbm_timing_set("hbm2e-3200", dirs);
  EXPECT_EQ(e.tck_ps, 625u);
  EXPECT_DOUBLE_EQ(e.peak_gbps(), 409.6);
  EXPECT_EQ(e.capacity_bytes(), std::uint64_t{16} << 30);
  const HbmTimingSet h = load_hbm_timing_set("hbm3-6400", dirs);
  EXPECT_EQ(h.tck_ps, 625u);
  EXPECT_EQ(h.geometry.channels, 16u);
  EXPECT_DOUBLE_EQ(h.peak_gbps(), 819.2);
  EXPECT_EQ(h.capacity_bytes(), std::uint64_t{16} << 30);
  // Array timings are analog: about the same nanoseconds at every speed.
  for (const auto* s : {&e, &h}) {
    EXPECT_NEAR(s->timings.tRCD * s->tck_ns(), 14.0, 3.0) << s->name;
    EXPECT_NEAR(s->timings.tRC * s->tck_ns(), 47.0, 3.0) << s->name;
    EXPECT_GE(s->timings.tRC, s->timings.tRAS + s->timings.tRP);
  }
}

TEST(HbmConfig, LookupByNameInTheDefaultDirectories) {
  // The source tree's configs/hbm is the last fallback of default_hbm_dirs().
  const HbmTimingSet s = load_hbm_timing_set("hbm3-6400");
  EXPECT_EQ(s.name, "hbm3-6400");
  const auto names = list_hbm_timing_sets();
  EXPECT_NE(std::find(names.begin(), names.end(), "hbm2-2000"), names.end());
  for (const auto& d : default_hbm_dirs()) EXPECT_EQ(d.filename(), "hbm") << d;
}

TEST(HbmConfig, UnknownNameListsWhatExists) {
  const std::vector<fs::path> dirs{kShippedHbm};
  const auto msg = error_of([&] { load_hbm_timing_set("hbm9-9999", dirs); });
  EXPECT_NE(msg.find("unknown HBM timing set \"hbm9-9999\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("hbm2-2000, hbm2e-3200, hbm3-6400"), std::string::npos) << msg;
}

TEST(HbmConfig, NameMustMatchTheFile) {
  test::TempDir dir;
  dir.write("other.json", kGood);
  const std::vector<fs::path> dirs{dir.path()};
  const auto msg = error_of([&] { load_hbm_timing_set("other", dirs); });
  EXPECT_NE(msg.find(":2:3: /name: timing set file other.json is named \"hbm2-test\""),
            std::string::npos)
      << msg;
  // By path there is no such rule.
  EXPECT_EQ(load_hbm_timing_set((dir.path() / "other.json").string(), dirs).name, "hbm2-test");
}

// ---------------------------------------------------------------------------------------------
// Errors: file:line:column, the field, the cause
// ---------------------------------------------------------------------------------------------

TEST(HbmConfigErrors, InconsistentTrc) {
  test::TempDir dir;
  EXPECT_EQ(load_error(dir, "hbm2-bad.json", replaced(kGood, "\"tRC\": 48", "\"tRC\": 40")),
            "hbm2-bad.json:12:5: /timing/tRC: 40 < tRAS + tRP = 48");
}

TEST(HbmConfigErrors, MissingField) {
  test::TempDir dir;
  EXPECT_EQ(load_error(dir, "m.json", replaced(kGood, "    \"tRC\": 48,\n", "")),
            "m.json:7:3: /timing: missing required key \"tRC\"");
  EXPECT_EQ(load_error(dir, "m2.json", replaced(kGood, "  \"tck_ps\": 1000,\n", "")),
            "m2.json:1:1: /: missing required key \"tck_ps\"");
  EXPECT_EQ(load_error(dir, "m3.json", replaced(kGood, " \"rows\": 16384,", "")),
            "m3.json:5:3: /geometry: missing required key \"rows\"");
}

TEST(HbmConfigErrors, WrongType) {
  test::TempDir dir;
  EXPECT_EQ(load_error(dir, "t.json", replaced(kGood, "\"tRAS\": 34", "\"tRAS\": \"34\"")),
            "t.json:11:5: /timing/tRAS: expected an integer, got string \"34\"");
  EXPECT_EQ(load_error(dir, "t2.json", replaced(kGood, "\"tRP\": 14", "\"tRP\": 14.0")),
            "t2.json:10:5: /timing/tRP: expected an integer, got number 14.0");
  EXPECT_EQ(load_error(dir, "t3.json", replaced(kGood, "\"tck_ps\": 1000", "\"tck_ps\": [1000]")),
            "t3.json:4:3: /tck_ps: expected an integer, got array [1000]");
  EXPECT_EQ(load_error(dir, "t4.json", replaced(kGood, "\"source\": \"unit test\"", "\"source\": 3")),
            "t4.json:3:3: /source: expected a string, got integer");
}

TEST(HbmConfigErrors, UnknownKey) {
  test::TempDir dir;
  const auto msg = load_error(dir, "u.json", replaced(kGood, "\"tREFI\": 3900", "\"tREFI\": 3900, \"tXYZ\": 1"));
  EXPECT_EQ(msg.rfind("u.json:19:20: /timing/tXYZ: unknown key \"tXYZ\" (known keys: ", 0), 0u)
      << msg;
  const auto root = load_error(dir, "u2.json", replaced(kGood, "\"tck_ps\"", "\"tck\": 1, \"tck_ps\""));
  EXPECT_EQ(root.rfind("u2.json:4:3: /tck: unknown key \"tck\"", 0), 0u) << root;
  const auto geo = load_error(dir, "u3.json", replaced(kGood, "\"channels\"", "\"pseudo\": 2, \"channels\""));
  EXPECT_EQ(geo.rfind("u3.json:5:17: /geometry/pseudo: unknown key \"pseudo\"", 0), 0u) << geo;
}

TEST(HbmConfigErrors, MalformedJson) {
  test::TempDir dir;
  const auto msg = load_error(dir, "j.json", replaced(kGood, "\"tRAS\": 34,", "\"tRAS\": 34"));
  EXPECT_TRUE(std::regex_search(msg, std::regex(R"(^j\.json:12:9: syntax error while parsing object)"))) << msg;
  const auto dup = load_error(dir, "j2.json", replaced(kGood, "\"tRAS\": 34,", "\"tRAS\": 34, \"tRAS\": 35,"));
  EXPECT_EQ(dup, "j2.json:11:17: duplicate key \"tRAS\" in /timing");
  EXPECT_EQ(load_error(dir, "j3.json", "[]"), "j3.json:1:1: /: expected an object, got array");
  EXPECT_TRUE(std::regex_search(load_error(dir, "j4.json", ""), std::regex(R"(^j4\.json:1:1: )")));
}

TEST(HbmConfigErrors, OutOfRangeAndOtherConsistencyRules) {
  test::TempDir dir;
  struct Case {
    std::string from, to, error;
  };
  const Case cases[] = {
      {"\"CWL\": 4", "\"CWL\": 0", "c.json:8:15: /timing/CWL: must be in [1, 65535], got 0"},
      {"\"tRAS\": 34", "\"tRAS\": 12", "c.json:11:5: /timing/tRAS: 12 < tRCD = 14"},
      {"\"tCCD_L\": 2", "\"tCCD_L\": 0", "c.json:15:18: /timing/tCCD_L: must be in [1, 65535], got 0"},
      {"\"tCCD_S\": 1, \"tCCD_L\": 2", "\"tCCD_S\": 3, \"tCCD_L\": 2",
       "c.json:15:18: /timing/tCCD_L: 2 < tCCD_S = 3"},
      {"\"tRRD_L\": 6", "\"tRRD_L\": 3", "c.json:13:18: /timing/tRRD_L: 3 < tRRD_S = 4"},
      {"\"tWTR_L\": 8", "\"tWTR_L\": 5", "c.json:16:18: /timing/tWTR_L: 5 < tWTR_S = 6"},
      {"\"tFAW\": 30", "\"tFAW\": 3", "c.json:14:5: /timing/tFAW: 3 < tRRD_S = 4"},
      {"\"tREFI\": 3900", "\"tREFI\": 260",
       "c.json:19:5: /timing/tREFI: 260 <= tRFC + tRC + tWR + CWL = 328 (a forced refresh - close a row just opened "
       "(tRC), recover from a write (CWL + tWR), refresh (tRFC) - must fit in one interval, or refreshes fall behind "
       "and the controller stops)"},
      {"\"rows\": 16384", "\"rows\": 16000",
       "c.json:5:72: /geometry/rows: must be a power of two, got 16000"},
      {"\"rows\": 16384", "\"rows\": 131072",
       "c.json:5:72: /geometry/rows: must be in [1, 65536], got 131072"},
      {"\"bank_groups\": 4", "\"bank_groups\": 8",
       "c.json:5:32: /geometry/bank_groups: must be in [1, 4], got 8"},
      {"\"bus_bytes\": 16", "\"bus_bytes\": 8",
       "c.json:6:48: /geometry/burst_length: bus_bytes * burst_length = 8 * 4 = 32, must be 64 "
       "(one 512-bit burst of the command bus)"},
      {"\"tck_ps\": 1000", "\"tck_ps\": -1",
       "c.json:4:3: /tck_ps: must be in [1, 1000000], got -1"},
      {"\"name\": \"hbm2-test\"", "\"name\": \"hbm 2\"",
       "c.json:2:3: /name: must be a non-empty [A-Za-z0-9._-] name, got \"hbm 2\""},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(load_error(dir, "c.json", replaced(kGood, c.from, c.to)), c.error) << c.to;
  }
}

// ---------------------------------------------------------------------------------------------
// Address map
// ---------------------------------------------------------------------------------------------

TEST(HbmAddressMap, DefaultOrderChannelInterleavesEveryPage) {
  const std::vector<fs::path> dirs{kShippedHbm};
  const HbmTimingSet s = load_hbm_timing_set("hbm2-2000", dirs);
  // ro-ba-bg-ch-co: offset 6 bits, column 5, channel 3, bank group 2, bank 2, row 14.
  EXPECT_EQ(s.decode(0x0), HbmAddress{});
  EXPECT_EQ(s.decode(0x47), (HbmAddress{.column = 1, .offset = 7}));
  EXPECT_EQ(s.decode(2048), (HbmAddress{.channel = 1}));
  EXPECT_EQ(s.decode(2048 * 8), (HbmAddress{.bank_group = 1}));
  EXPECT_EQ(s.decode(2048 * 8 * 4), (HbmAddress{.bank = 1}));
  EXPECT_EQ(s.decode(2048 * 8 * 16), (HbmAddress{.row = 1}));
  const std::uint64_t last = (std::uint64_t{4} << 30) - 1;
  EXPECT_EQ(s.decode(last), (HbmAddress{.channel = 7, .bank_group = 3, .bank = 3, .row = 16383,
                                        .column = 31, .offset = 63}));
  EXPECT_THROW(s.decode(last + 1), Error);
  for (std::uint64_t a : {std::uint64_t{0}, std::uint64_t{64}, std::uint64_t{12345}, std::uint64_t{0x12345678}, last}) {
    EXPECT_EQ(s.encode(s.decode(a)), a);
  }
  EXPECT_THROW(s.encode(HbmAddress{.channel = 8}), Error);
}

TEST(HbmAddressMap, CustomOrderFromTheFile) {
  test::TempDir dir;
  const auto path = dir.write("m.json", replaced(kGood, "  \"tck_ps\": 1000,",
                                                 "  \"tck_ps\": 1000, \"address_map\": \"ro-co-ba-bg-ch\","));
  const HbmTimingSet s = load_hbm_timing_set_file(path);
  EXPECT_EQ(s.address_map.to_string(), "ro-co-ba-bg-ch");
  EXPECT_EQ(s.decode(64), (HbmAddress{.channel = 1}));
  EXPECT_EQ(s.decode(64 * 8), (HbmAddress{.bank_group = 1}));
  EXPECT_EQ(s.decode(64 * 8 * 16), (HbmAddress{.column = 1}));

  EXPECT_EQ(load_error(dir, "bad.json", replaced(kGood, "  \"tck_ps\": 1000,",
                                                 "  \"tck_ps\": 1000, \"address_map\": \"ro-ba-bg-ch\",")),
            "bad.json:4:19: /address_map: address map \"ro-ba-bg-ch\": fewer than five fields "
            "(expected the five fields ro, ba, bg, ch, co once each, most significant first, "
            "separated by '-', e.g. \"ro-ba-bg-ch-co\")");
  EXPECT_NE(load_error(dir, "bad2.json", replaced(kGood, "  \"tck_ps\": 1000,",
                                                  "  \"tck_ps\": 1000, \"address_map\": \"ro-ro-bg-ch-co\","))
                .find("field \"ro\" twice"),
            std::string::npos);
  EXPECT_NE(load_error(dir, "bad3.json", replaced(kGood, "  \"tck_ps\": 1000,",
                                                  "  \"tck_ps\": 1000, \"address_map\": \"ro-ba-bg-ch-xx\","))
                .find("unknown field \"xx\""),
            std::string::npos);
}

// ---- presets: every memory field is simulated by the chosen model or refused -------------------

std::string preset_error(const std::string& base, const std::string& key, const nlohmann::json& value) {
  nlohmann::json j = nlohmann::json::parse(std::ifstream(fs::path(TPUEMU_TEST_PRESET_DIR) / (base + ".json")));
  j["hbm"][key] = value;
  try {
    preset_from_json(JsonDocument::parse(j.dump(2), "variant.json"));
  } catch (const Error& e) {
    return e.what();
  }
  return "(loaded)";
}

// The HBM model takes its latency and bandwidth from the timing set: the simple model's fields
// changed nothing (default with bytes_per_cycle 1 and latency 10^6 ran the same cycles and claimed
// 1042 % of its roofline), so they are refused; the hbm fields on "simple" likewise.
TEST(PresetFields, UnsimulatedMemoryFieldsAreRefused) {
  for (const std::string base : {"default", "tpu-v4-like"}) {
    for (const std::string key : {"bytes_per_cycle", "latency_cycles"}) {
      const std::string m = preset_error(base, key, 1);
      EXPECT_TRUE(std::regex_search(m, std::regex("^variant\\.json:[0-9]+:[0-9]+: /hbm/" + key +
                                                  ": is not simulated with hbm.model \"hbm\": the latency and the "
                                                  "bandwidth come from the timing set and the core's port; remove it$")))
          << m;
    }
  }
  EXPECT_NE(preset_error("small", "timing_set", "hbm2-2000").find("/hbm/timing_set: is not simulated with hbm.model "
                                                                  "\"simple\": only the \"hbm\" model has them"),
            std::string::npos);
  EXPECT_NE(preset_error("small", "page_policy", "open").find("/hbm/page_policy: is not simulated"), std::string::npos);
  EXPECT_EQ(preset_error("small", "bytes_per_cycle", 4), "(loaded)");
}

// The port's peak is the memory that runs: the simple model's figure, or the timing set's data
// bus capped at one beat per core cycle.
TEST(PresetFields, MemoryPortPeakIsTheMemoryThatRuns) {
  const std::vector<fs::path> dirs = {fs::path(TPUEMU_TEST_PRESET_DIR)};
  const Preset small = load_preset("small", dirs);
  EXPECT_EQ(memory_port_peak(small).bytes_per_cycle, 8.0);
  Preset p = load_preset("default", dirs);
  EXPECT_EQ(p.hbm.bytes_per_cycle, 0u);  // not part of an hbm preset
  EXPECT_FALSE(to_json(p).at("hbm").contains("bytes_per_cycle"));
  const HbmTimingSet set = load_hbm_timing_set_file(kShippedHbm / "hbm2-2000.json");
  EXPECT_EQ(memory_port_peak(p, set).bytes_per_cycle, 16.0);  // 256 B/tCK at 1 tCK per cycle: the beat caps
  EXPECT_EQ(memory_port_peak(p, set).basis,
            "one 16 B beat per cycle (the DRAM's hbm2-2000: 256 B/tCK x 1.000 tCK/cycle = 256.0 B/cycle)");
  p.clock_ghz = 100;  // a core 100x faster than tCK: the DRAM limits
  EXPECT_DOUBLE_EQ(memory_port_peak(p, set).bytes_per_cycle, 2.56);
  EXPECT_NE(memory_port_peak(p, set).basis.find("below the port's one 16 B beat per cycle"), std::string::npos);
}

}  // namespace
}  // namespace tpuemu
