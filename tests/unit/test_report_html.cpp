// SPDX-License-Identifier: Apache-2.0
// Layer profile: report.html from the texts of a run's artefacts: one rect per buffer, nothing
// fetched from outside, the engine lanes when the trace has them, and errors naming the file.
#include <gtest/gtest.h>

#include <regex>

#include "test_support.h"
#include "tpuemu/profile/engine_timeline.h"
#include "tpuemu/profile/memory_map.h"
#include "tpuemu/profile/report_html.h"

namespace tpuemu::profile {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

MapBuffer buffer(std::string id, std::string name, std::uint64_t offset, std::uint64_t size) {
  return {id, name, name.substr(0, name.find(' ', 6)), "weight", offset, size, 0, 100};
}

nlohmann::json summary_with(const MemoryMap& map) {
  return {{"workload", "mlp <b>&"},
          {"preset", "small"},
          {"backend", "fake"},
          {"run", {{"cycles", 100}}},
          {"result", {{"bit_exact", true}}},
          {"hbm_allocation", {{"policy", "bfc"}, {"capacity", 4096}, {"peak_live_bytes", 300},
                              {"peak_in_use_bytes", 512}, {"peak_footprint_bytes", 768},
                              {"max_external_fragmentation", 0.25}}},
          {"hbm", {{"bytes", 9000}}},
          {"mxu_utilization", 0.5},
          {"roofline", {{"fraction", 0.75}}},
          {"memory_map", memory_map_to_json(map)}};
}

MemoryMap two_policies() {
  MemoryMap map;
  map.spaces.push_back({"hbm", "bfc", 4096, 100, {buffer("t1", "layer 0 weights", 0, 200), buffer("t2", "program", 256, 100)}});
  map.spaces.push_back({"hbm", "buddy", 4096, 100, {buffer("t1", "layer 0 weights", 0, 200)}, "t.csv:3: out of hbm memory"});
  return map;
}

const std::string kCsv =
    "space,policy,event,time,live_bytes,in_use_bytes,footprint_bytes,free_bytes,free_blocks,largest_free_block,"
    "external_fragmentation,gap_square_ratio,internal_waste_bytes\n"
    "hbm,bfc,0,0,200,256,256,3840,1,3840,0.000000,1.000000,56\n"
    "hbm,bfc,1,0,300,512,512,3584,1,3584,0.000000,1.000000,212\n";

const std::string kEmptyTrace = R"({"traceEvents": [], "otherData": {"clock_ghz": 1}})";

// The tracks the engine timeline reads: instructions and waits on the core's queues, HBM channels.
const std::string kEngineTrace = R"({"traceEvents": [
  {"ph": "M", "name": "process_name", "pid": 7, "args": {"name": "core"}},
  {"ph": "M", "name": "thread_name", "pid": 7, "tid": 2, "args": {"name": "MXU queue"}},
  {"ph": "M", "name": "thread_name", "pid": 7, "tid": 1, "args": {"name": "DMA queue"}},
  {"ph": "M", "name": "process_name", "pid": 8, "args": {"name": "HBM"}},
  {"ph": "M", "name": "thread_name", "pid": 8, "tid": 10, "args": {"name": "channel 10"}},
  {"ph": "M", "name": "thread_name", "pid": 8, "tid": 2, "args": {"name": "channel 2"}},
  {"ph": "X", "name": "MATMUL", "pid": 7, "tid": 2, "ts": 0.02, "dur": 0.01, "args": {"pc": 4}},
  {"ph": "X", "name": "wait s1", "pid": 7, "tid": 2, "ts": 0.01, "dur": 0.01},
  {"ph": "X", "name": "LOAD", "pid": 7, "tid": 1, "ts": 0, "dur": 0.01, "args": {"pc": 0}},
  {"ph": "X", "name": "busy", "pid": 8, "tid": 10, "ts": 0.005, "dur": 0.002},
  {"ph": "X", "name": "refresh", "pid": 8, "tid": 2, "ts": 0.03, "dur": 0.004},
  {"ph": "X", "name": "other process", "pid": 9, "tid": 1, "ts": 0, "dur": 1}
], "otherData": {"clock_ghz": 2}})";

std::string render(const nlohmann::json& summary, const std::string& csv = kCsv, const std::string& trace = kEmptyTrace) {
  return report_html({"d/summary.json", summary.dump(1)}, {"d/fragmentation.csv", csv}, {"d/trace.json", trace});
}

TEST(ReportHtml, OneRectPerBufferAndSelfContained) {
  const std::string html = render(summary_with(two_policies()));
  EXPECT_EQ(count(html, "<rect class=\"buffer\""), 3u);
  EXPECT_EQ(count(html, "<figure class=\"map\""), 2u);
  EXPECT_EQ(count(html, "data-id=\"t1\""), 2u);
  test::expect_contains(html, "data-name=\"layer 0 weights\" data-layer=\"layer 0\" data-kind=\"weight\" "
                              "data-offset=\"0\" data-size=\"200\" data-start=\"0\" data-end=\"100\"");
  test::expect_contains(html, "buddy failed: t.csv:3: out of hbm memory");
  // Nothing from outside: no URL, no src, no link to a style sheet.
  EXPECT_EQ(count(html, "http://"), 0u);
  EXPECT_EQ(count(html, "https://"), 0u);
  EXPECT_EQ(count(html, "src="), 0u);
  EXPECT_EQ(count(html, "<link"), 0u);
  EXPECT_EQ(count(html, "@import"), 0u);
  // The summary, escaped.
  test::expect_contains(html, "<title>tpuemu report: mlp &lt;b&gt;&amp;</title>");
  test::expect_contains(html, "<tr><th>cycles</th><td>100</td></tr>");
  test::expect_contains(html, "<tr><th>max external fragmentation</th><td>25.0%</td></tr>");
  // Series and no timeline.
  test::expect_contains(html, "\"in_use\":[256,512],\"largest\":[3840,3584],\"live\":[200,300],\"policy\":\"bfc\"");
  test::expect_contains(html, "\"timeline\":{\"labels\":[],\"lanes\":[]}");
  // The same inputs give the same bytes (tpuemu report re-renders what run wrote).
  EXPECT_EQ(html, render(summary_with(two_policies())));
}

TEST(ReportHtml, DataInsideTheScriptCannotCloseIt) {
  MemoryMap map;
  map.spaces.push_back({"hbm", "bfc", 4096, 100, {buffer("t1", "</script><b>", 0, 200)}});
  const std::string html = render(summary_with(map), kCsv, R"({"traceEvents": [
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "core"}},
    {"ph": "X", "name": "</script>", "pid": 1, "tid": 1, "ts": 0, "dur": 1}]})");
  EXPECT_EQ(count(html, "</script>"), 2u);  // the data's and the code's own
  test::expect_contains(html, "\\u003c/script>");
  test::expect_contains(html, "data-name=\"&lt;/script&gt;&lt;b&gt;\"");
}

TEST(EngineTimeline, QueuesInPipelineOrderThenChannelsByNumberInCycles) {
  const EngineTimeline t = engine_timeline(nlohmann::json::parse(kEngineTrace), "t.json");
  ASSERT_EQ(t.lanes.size(), 4u);
  EXPECT_EQ(t.lanes[0].name, "DMA queue");
  EXPECT_EQ(t.lanes[1].name, "MXU queue");
  EXPECT_EQ(t.lanes[2].name, "channel 2");
  EXPECT_EQ(t.lanes[3].name, "channel 10");
  EXPECT_EQ(t.lanes[2].process, "HBM");
  ASSERT_EQ(t.lanes[1].slices.size(), 2u);
  EXPECT_EQ(t.labels[t.lanes[1].slices[0].label], "wait s1");  // sorted by start
  EXPECT_EQ(t.lanes[1].slices[0].start, 20u);                  // 0.01 us at 2 GHz
  EXPECT_EQ(t.lanes[1].slices[1].duration, 20u);
  EXPECT_EQ(t.labels.size(), 5u);  // the other process's slice is not read
  const std::string html = render(summary_with(two_policies()), kCsv, kEngineTrace);
  test::expect_contains(html, "\"name\":\"MXU queue\"");
  EXPECT_TRUE(engine_timeline(nlohmann::json::parse(kEmptyTrace), "t.json").lanes.empty());
}

TEST(ReportHtml, ErrorsNameTheFileAndThePlace) {
  EXPECT_EQ(test::error_of([] { render(nlohmann::json{{"workload", "w"}}); }), "d/summary.json:1:1: /: missing the memory_map section");
  nlohmann::json no_cycles = summary_with(two_policies());
  no_cycles["run"].erase("cycles");
  test::expect_contains(test::error_of([&] { render(no_cycles); }), "d/summary.json:");
  test::expect_contains(test::error_of([&] { render(no_cycles); }), "/run/cycles: missing");
  test::expect_contains(test::error_of([] { (void)report_html({"d/summary.json", "{\"a\": "}, {"f", kCsv}, {"t", kEmptyTrace}); }),
                        "d/summary.json:1:");
  test::expect_contains(test::error_of([] { render(summary_with(two_policies()), "space,policy\nhbm,bfc\n"); }),
                        "d/fragmentation.csv:1: missing column 'time'");
  test::expect_contains(
      test::error_of([] { render(summary_with(two_policies()), std::regex_replace(kCsv, std::regex("0\\.000000,1"), "2.5,1")); }),
      "d/fragmentation.csv:2:37: external_fragmentation '2.5' is not a fraction between 0 and 1");
  EXPECT_EQ(test::error_of([] { render(summary_with(two_policies()), kCsv, "{\"events\": []}"); }),
            "d/trace.json: /traceEvents: expected an array of trace events");
  test::expect_contains(
      test::error_of([] { render(summary_with(two_policies()), kCsv,
                                 R"({"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "core"}},)"
                                 "\n"
                                 R"({"ph": "X", "name": "A", "pid": 1, "tid": 1, "ts": "soon", "dur": 1}]})"); }),
      "d/trace.json: /traceEvents/1/ts: expected a non-negative number");
  EXPECT_EQ(test::error_of([] { render(summary_with(two_policies()), kCsv, "{\"traceEvents\":\n [1,}"); }),
            "d/trace.json:2:5: syntax error while parsing value - unexpected '}'; expected '[', '{', or a literal");
}

}  // namespace
}  // namespace tpuemu::profile
