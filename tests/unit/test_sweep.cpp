// SPDX-License-Identifier: Apache-2.0
// The sweep layer (docs/sweep.md) with fake point runners: grid files and every error they can
// hold with its line:column, the cross product's order, the same table for any job count, a
// failing point, the CSV, the SVG plots, the outputs folder and ranks merged.
#include <gtest/gtest.h>

#include "test_support.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tpuemu/base/json.h"
#include "tpuemu/sweep/sweep.h"

namespace tpuemu::sweep {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using test::expect_contains;

SweepGrid grid_of(const std::string& text, const fs::path& folder = "/grids") {
  return parse_sweep_grid(JsonDocument::parse(text, "grid.json"), folder);
}

// "grid.json:L:C" of the first occurrence of needle in text: where an error about it must point.
std::string where(const std::string& text, const std::string& needle) {
  const std::size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  const std::size_t line_start = text.rfind('\n', at == 0 ? 0 : at - 1);
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  const std::size_t column = line_start == std::string::npos ? at + 1 : at - line_start;
  return fmt::format("grid.json:{}:{}", line, column);
}

// The results a fake runner derives from a point alone, so any job count must give the same.
nlohmann::json fake_results(const SweepPoint& point) {
  const std::uint64_t buffers = point.find("buffers") ? point.find("buffers")->get<std::uint64_t>() : 1;
  const std::uint64_t batch = point.find("batch") ? point.find("batch")->get<std::uint64_t>() : 1;
  return {{"step_cycles", 1000 * buffers + batch},
          {"hbm_peak_bytes", 64 * batch},
          {"mxu_utilization", 0.5 / static_cast<double>(buffers)},
          {"bit_exact", true},
          {"note", "fake"}};
}

const std::string kGrid = R"({
  "model": "models/mlp.json",
  "axes": {"batch": [2, 4], "buffers": [1, 2, 3], "preset": ["small"]},
  "metrics": ["step_cycles", "hbm_peak_bytes"]
})";

// ---- grid files -----------------------------------------------------------------------------

TEST(SweepGrid, AxesInTheFixedOrderModelFromTheGridsFolder) {
  const SweepGrid grid = grid_of(kGrid);
  ASSERT_EQ(grid.axes.size(), 3u);
  // buffers before batch (kAxisNames), although the file lists batch first
  EXPECT_EQ(grid.axes[0].name, "buffers");
  EXPECT_EQ(grid.axes[1].name, "preset");
  EXPECT_EQ(grid.axes[2].name, "batch");
  EXPECT_EQ(grid.axes[0].values, (std::vector<nlohmann::json>{1, 2, 3}));
  EXPECT_EQ(grid.model, fs::path("/grids/models/mlp.json"));
  EXPECT_EQ(grid_of(R"({"model": "/abs/m.json", "axes": {"batch": [1]}})").model, fs::path("/abs/m.json"));
  EXPECT_EQ(grid.point_count(), 6u);
  EXPECT_EQ(grid.metrics, (std::vector<std::string>{"step_cycles", "hbm_peak_bytes"}));
  EXPECT_EQ(grid.metric_places[1], where(kGrid, "\"metrics\"") + ": /metrics/1");
  EXPECT_EQ(grid.x_axis, "buffers");  // the first axis with more than one value
}

TEST(SweepGrid, DefaultXIsTheFirstAxisThatVaries) {
  EXPECT_EQ(grid_of(R"({"model": "m", "axes": {"devices": [1], "batch": [1, 2]}})").x_axis, "batch");
  EXPECT_EQ(grid_of(R"({"model": "m", "axes": {"devices": [1], "batch": [1]}})").x_axis, "devices");
  EXPECT_EQ(grid_of(R"({"model": "m", "axes": {"devices": [1], "batch": [1, 2]}, "x": "devices"})").x_axis, "devices");
}

TEST(SweepGrid, LoadTakesTheModelFromTheFilesFolder) {
  test::TempDir dir;
  fs::create_directories(dir.path() / "g");
  const fs::path file = dir.write("g/grid.json", R"({"model": "../m.json", "axes": {"overlap": [true, false]}})");
  const SweepGrid grid = load_sweep_grid(file);
  EXPECT_EQ(grid.model, (dir.path() / "m.json").lexically_normal());
  EXPECT_EQ(grid.source, file.string());
}

TEST(SweepGrid, EveryMistakeIsOneLineAtItsPlace) {
  struct Case {
    std::string text;
    std::string at;      // the text the error must point at
    std::string prefix;  // after "grid.json:L:C: "
  };
  std::string many_devices, many_batches;
  for (int i = 1; i <= 64; ++i) many_devices += fmt::format("{}{}", i == 1 ? "" : ", ", i);
  for (int i = 1; i <= 65; ++i) many_batches += fmt::format("{}{}", i == 1 ? "" : ", ", i);
  const std::vector<Case> cases = {
      {"{\"model\": \"m\",\n \"axes\": {\"batch\": [1]},\n \"colour\": 1}", "\"colour\"",
       "/colour: unknown key \"colour\""},
      {"{\"model\": \"m\",\n \"axes\": {\"batch\": [1],\n   \"threads\": [2]}}", "\"threads\"",
       "/axes/threads: unknown axis \"threads\" (axes: devices, shard, buffers"},
      {"{\"model\": \"m\",\n \"axes\": {\"buffers\": []}}", "\"buffers\"", "/axes/buffers: empty list"},
      {"{\"model\": \"m\",\n \"axes\": {\"buffers\": 2}}", "\"buffers\"",
       "/axes/buffers: expected a list of values, got number"},
      {"{\"model\": \"m\",\n \"axes\": {\"devices\": [1, \"2\"]}}", "\"devices\"",
       "/axes/devices/1: expected a positive integer, got \"2\""},
      {"{\"model\": \"m\",\n \"axes\": {\"buffers\": [0]}}", "\"buffers\"",
       "/axes/buffers/0: expected a positive integer, got 0"},
      {"{\"model\": \"m\",\n \"axes\": {\"batch\": [-8]}}", "\"batch\"",
       "/axes/batch/0: expected a positive integer, got -8"},
      {"{\"model\": \"m\",\n \"axes\": {\"batch\": [2.0]}}", "\"batch\"",
       "/axes/batch/0: expected a positive integer, got 2.0"},
      {"{\"model\": \"m\",\n \"axes\": {\"overlap\": [\"yes\"]}}", "\"overlap\"",
       "/axes/overlap/0: expected true or false, got \"yes\""},
      {"{\"model\": \"m\",\n \"axes\": {\"preset\": [3]}}", "\"preset\"",
       "/axes/preset/0: expected a non-empty string, got 3"},
      {"{\"model\": \"m\",\n \"axes\": {\"mesh\": [\"\"]}}", "\"mesh\"",
       "/axes/mesh/0: expected a non-empty string, got \"\""},
      {"{\"model\": \"m\",\n \"axes\": {\"shard\": [\"batch\", \"tensor\", \"batch\"]}}", "\"shard\"",
       "/axes/shard/2: duplicate value \"batch\" (also /axes/shard/0)"},
      {"{\"model\": \"m\",\n \"axes\": {}}", "\"axes\"", "/axes: no axes"},
      {"{\"model\": \"m\",\n \"axes\": [1]}", "\"axes\"", "/axes: expected an object, got array"},
      {"{\"model\": \"m\",\n \"axes\": {\"devices\": [" + many_devices + "],\n \"batch\": [" + many_batches + "]}}",
       "\"axes\"", "/axes: 4160 points (devices 64 x batch 65), more than the 4096"},
      {"{\"model\": \"m\",\n \"axes\": {\"batch\": [1, 2]},\n \"x\": \"devices\"}", "\"x\"",
       "/x: \"devices\" is not an axis of this grid (its axes: batch)"},
      {"{\"model\": \"m\",\n \"axes\": {\"batch\": [1]},\n \"x\": 1}", "\"x\"", "/x: expected an axis name, got 1"},
      {"{\"model\": \"m\",\n \"axes\": {\"batch\": [1]},\n \"metrics\": []}", "\"metrics\"", "/metrics: empty list"},
      {"{\"model\": \"m\",\n \"axes\": {\"batch\": [1]},\n \"metrics\": [\"a\", \"a\"]}", "\"metrics\"",
       "/metrics/1: duplicate metric \"a\" (also /metrics/0)"},
      {"{\"model\": \"m\",\n \"axes\": {\"batch\": [1]},\n \"metrics\": [\"../x\"]}", "\"metrics\"",
       "/metrics/0: \"../x\": a result name"},
      {"{\"model\": \"m\",\n \"axes\": {\"batch\": [1]},\n \"metrics\": [7]}", "\"metrics\"",
       "/metrics/0: expected a result name, got 7"},
      {"{\n \"axes\": {\"batch\": [1]}}", "{", "/: missing required key \"model\""},
      {"{\"model\": \"\",\n \"axes\": {\"batch\": [1]}}", "\"model\"", "/model: empty path"},
      {"{\"model\": 5,\n \"axes\": {\"batch\": [1]}}", "\"model\"", "/model: expected a string"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string message = error_of([&] { grid_of(c.text); });
    const std::string expected = where(c.text, c.at) + ": " + c.prefix;
    EXPECT_EQ(message.substr(0, expected.size()), expected) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

// ---- points ---------------------------------------------------------------------------------

TEST(SweepPoints, CrossProductFirstAxisSlowest) {
  const SweepGrid grid = grid_of(
      R"({"model": "m", "axes": {"overlap": [true, false], "batch": [8, 16], "buffers": [1, 2], "backend": ["fake"]}})");
  const std::vector<SweepPoint> points = sweep_points(grid);
  ASSERT_EQ(points.size(), 8u);
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(points[i].index, i);
    labels.push_back(points[i].label());
  }
  EXPECT_EQ(labels,
            (std::vector<std::string>{
                "buffers=1 batch=8 overlap=true backend=fake", "buffers=1 batch=8 overlap=false backend=fake",
                "buffers=1 batch=16 overlap=true backend=fake", "buffers=1 batch=16 overlap=false backend=fake",
                "buffers=2 batch=8 overlap=true backend=fake", "buffers=2 batch=8 overlap=false backend=fake",
                "buffers=2 batch=16 overlap=true backend=fake", "buffers=2 batch=16 overlap=false backend=fake"}));
  EXPECT_EQ(*points[5].find("overlap"), false);
  EXPECT_EQ(points[5].find("devices"), nullptr);
  expect_contains(error_of([&] { sweep_point(grid, 8); }), "sweep point 8: the grid has 8 points");
}

// ---- running --------------------------------------------------------------------------------

TEST(SweepRun, SameTableForOneAndFourJobs) {
  const SweepGrid grid = grid_of(R"({"model": "m", "axes": {"buffers": [1, 2, 3, 4], "batch": [1, 2, 4, 8]}})");
  std::atomic<int> running{0}, most_at_once{0};
  std::mt19937 seed(7);
  std::vector<int> delays_ms(grid.point_count());
  for (int& d : delays_ms) d = static_cast<int>(seed() % 15);  // finish out of order
  const PointRunner runner = [&](const SweepPoint& point) {
    const int now = ++running;
    int seen = most_at_once.load();
    while (now > seen && !most_at_once.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + delays_ms[point.index]));
    --running;
    return fake_results(point);
  };
  std::size_t progress_calls = 0;
  SweepOptions one;
  one.progress = [&](std::size_t done, std::size_t total) {
    ++progress_calls;
    EXPECT_EQ(total, 16u);
    EXPECT_EQ(done, progress_calls);
  };
  const SweepTable sequential = run_sweep(grid, runner, one);
  EXPECT_EQ(most_at_once.load(), 1);
  EXPECT_EQ(progress_calls, 16u);
  most_at_once = 0;
  SweepOptions four;
  four.jobs = 4;
  const SweepTable parallel = run_sweep(grid, runner, four);
  EXPECT_GT(most_at_once.load(), 1);  // it really ran points side by side
  ASSERT_EQ(parallel.rows.size(), 16u);
  for (std::size_t i = 0; i < parallel.rows.size(); ++i) EXPECT_EQ(parallel.rows[i].point.index, i);
  EXPECT_EQ(table_to_json(parallel, grid), table_to_json(sequential, grid));
  EXPECT_EQ(sweep_csv(parallel, grid), sweep_csv(sequential, grid));
}

TEST(SweepRun, AFailingPointStopsTheSweepAndIsNamed) {
  test::TempDir dir;
  const SweepGrid grid = grid_of(R"({"model": "m", "axes": {"buffers": [1, 2, 3], "batch": [2, 4, 8, 16]}})");
  std::atomic<std::size_t> ran{0};
  const PointRunner runner = [&](const SweepPoint& point) -> nlohmann::json {
    ++ran;
    // A later point fails sooner, so with several jobs the first failure in time is not point 5.
    if (point.index == 5) {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      throw Error("preset 'tiny'", "no such preset\nsecond line");
    }
    if (point.index == 6) throw std::runtime_error("later failure");
    // Long enough that the failure of point 6 is seen before the last points are handed out.
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    return fake_results(point);
  };
  for (unsigned jobs : {1u, 3u}) {
    SCOPED_TRACE(jobs);
    ran = 0;
    SweepOptions options;
    options.jobs = jobs;
    const std::string message = error_of([&] {
      const SweepTable table = run_sweep(grid, runner, options);
      write_sweep_outputs(table, grid, dir.path() / "out");
    });
    // One line: the newline inside the point's message is escaped, as every printed message is.
    EXPECT_EQ(message, "sweep point 5 (buffers=2 batch=4): preset 'tiny': no such preset\\nsecond line");
    EXPECT_LT(ran.load(), grid.point_count());  // no point started after the failure was seen
    EXPECT_FALSE(fs::exists(dir.path() / "out"));
  }
}

TEST(SweepRun, ResultsMustBeFlatAndNamedMetricsNumbers) {
  const std::string text =
      "{\"model\": \"m\", \"axes\": {\"batch\": [1, 2]},\n \"metrics\": [\"step_cycles\", \"cycles\"]}";
  const SweepGrid grid = grid_of(text);
  const std::string missing = error_of([&] { run_sweep(grid, fake_results); });
  EXPECT_EQ(missing, "sweep point 0 (batch=1): " + where(text, "\"metrics\"") +
                         ": /metrics/1: the point has no numeric result \"cycles\" (its results: bit_exact, "
                         "hbm_peak_bytes, mxu_utilization, note, step_cycles)");
  const SweepGrid plain = grid_of(R"({"model": "m", "axes": {"batch": [1]}})");
  auto returning = [&](nlohmann::json results) {
    return error_of([&] { run_sweep(plain, [&](const SweepPoint&) { return results; }); });
  };
  expect_contains(returning(nlohmann::json::array()), "sweep point 0 (batch=1): the point runner returned array");
  expect_contains(returning({{"nested", {{"a", 1}}}}), "result \"nested\" is object");
  expect_contains(returning({{"batch", 1}}), "result \"batch\" has the name of an axis");
  expect_contains(returning({{"a b", 1}}), "result \"a b\": a result name is");
  expect_contains(returning({{"x", std::nan("")}}), "result \"x\" is not a finite number");
  EXPECT_EQ(returning({{"x", 1}}), "(no error)");
}

TEST(SweepRun, BadOptionsAreErrors) {
  const SweepGrid grid = grid_of(R"({"model": "m", "axes": {"batch": [1]}})");
  SweepOptions options;
  options.jobs = 0;
  expect_contains(error_of([&] { run_sweep(grid, fake_results, options); }), "jobs must be at least 1");
  options = {};
  options.rank = 2;
  options.world_size = 2;
  expect_contains(error_of([&] { run_sweep(grid, fake_results, options); }), "rank 2 is not a rank of a world of 2");
  // A callback that throws fails its point instead of escaping a worker thread (std::terminate).
  options = {};
  options.jobs = 2;
  options.progress = [](std::size_t, std::size_t) { throw Error("progress display broke"); };
  EXPECT_EQ(error_of([&] { run_sweep(grid, fake_results, options); }),
            "sweep point 0 (batch=1): progress display broke");
}

// ---- ranks ----------------------------------------------------------------------------------

TEST(SweepRanks, PartitionAndMergeGiveTheSingleRankTable) {
  const SweepGrid grid = grid_of(kGrid);
  const SweepTable whole = run_sweep(grid, fake_results);
  std::vector<SweepTable> shipped;
  std::set<std::size_t> every_point;
  for (unsigned rank = 0; rank < 4; ++rank) {  // 4 ranks, 6 points: ranks 2 and 3 get one each
    SweepOptions options;
    options.rank = rank;
    options.world_size = 4;
    options.jobs = 2;
    const SweepTable mine = run_sweep(grid, fake_results, options);
    for (const SweepRow& row : mine.rows) {
      EXPECT_EQ(row.point.index % 4, rank);
      EXPECT_TRUE(every_point.insert(row.point.index).second);
    }
    // What rank 0 receives: the JSON text of the rank's table.
    const std::string wire = table_to_json(mine, grid).dump();
    shipped.push_back(table_from_json(nlohmann::json::parse(wire), grid, fmt::format("rank {}", rank)));
  }
  EXPECT_EQ(every_point.size(), grid.point_count());
  std::reverse(shipped.begin(), shipped.end());  // arrival order does not matter
  const SweepTable merged = merge_sweep_tables(grid, shipped);
  EXPECT_EQ(table_to_json(merged, grid), table_to_json(whole, grid));

  // A rank missing, or one sent twice
  expect_contains(error_of([&] {
                    merge_sweep_tables(grid, {shipped[0], shipped[1], shipped[2]});
                  }),
                  "sweep point 0 (buffers=1 preset=small batch=2): in none of the 3 tables");
  expect_contains(error_of([&] { merge_sweep_tables(grid, {shipped[0], shipped[0]}); }), "in two tables (0 and 1)");
  // A partial table is not written
  expect_contains(error_of([&] { write_sweep_outputs(shipped[0], grid, "/nonexistent/out"); }),
                  "the table has 1 of the grid's 6 points");
}

TEST(SweepRanks, TableFromJsonChecksRowsAgainstTheGrid) {
  const SweepGrid grid = grid_of(kGrid);
  nlohmann::json j = table_to_json(run_sweep(grid, fake_results), grid);
  nlohmann::json wrong_values = j;
  wrong_values["rows"][2]["values"]["batch"] = 8;
  EXPECT_EQ(error_of([&] { table_from_json(wrong_values, grid, "rank 1"); }).substr(0, 30),
            "rank 1: /rows/2/values: {\"batc");
  nlohmann::json out_of_order = j;
  std::swap(out_of_order["rows"][0], out_of_order["rows"][1]);
  expect_contains(error_of([&] { table_from_json(out_of_order, grid); }),
                  "sweep table: /rows/1/point: point 0 after point 1");
  nlohmann::json other_axes = j;
  other_axes["axes"] = {"batch"};
  expect_contains(error_of([&] { table_from_json(other_axes, grid); }), "sweep table: /axes: expected the grid's axes");
  nlohmann::json bad_results = j;
  bad_results["rows"][0]["results"].erase("step_cycles");
  expect_contains(error_of([&] { table_from_json(bad_results, grid); }), "sweep table: /rows/0/results: grid.json:");
}

// ---- CSV, JSON, text ------------------------------------------------------------------------

TEST(SweepCsv, HeaderAxesThenResultsAndRfc4180Quoting) {
  const SweepGrid grid =
      grid_of(R"({"model": "m", "axes": {"allocator": ["first-fit", "best,fit"], "overlap": [true]}})");
  const PointRunner runner = [](const SweepPoint& point) -> nlohmann::json {
    if (point.index == 0) return {{"zeta", 1}, {"comment", "say \"hi\", then\nleave"}};
    return {{"zeta", 2.5}, {"extra", false}};  // "extra" first seen in row 1: after zeta
  };
  const SweepTable table = run_sweep(grid, runner);
  EXPECT_EQ(table.result_names(), (std::vector<std::string>{"comment", "zeta", "extra"}));
  EXPECT_EQ(sweep_csv(table, grid),
            "allocator,overlap,comment,zeta,extra\n"
            "first-fit,true,\"say \"\"hi\"\", then\nleave\",1,\n"
            "\"best,fit\",true,,2.5,false\n");
  // Every numeric result gets a plot by default; bools and strings do not.
  EXPECT_EQ(plotted_metrics(table, grid), (std::vector<std::string>{"zeta"}));
  const nlohmann::json j = sweep_json(table, grid);
  EXPECT_EQ(j["grid"]["x"], "allocator");
  EXPECT_EQ(j["grid"]["axes"][0]["name"], "allocator");
  EXPECT_EQ(j["rows"][1]["values"]["allocator"], "best,fit");
  EXPECT_EQ(j["rows"][1]["results"]["zeta"], 2.5);
  const std::string text = format_sweep_table(table, grid);
  expect_contains(text, "allocator  overlap  comment");
  expect_contains(text, "best,fit   true");
}

// ---- plots ----------------------------------------------------------------------------------

// The element names of svg in document order, checking that every element is closed in order
// (the XML-ish well-formedness a browser needs; attributes are not parsed).
std::vector<std::string> elements_of(const std::string& svg) {
  std::vector<std::string> names, open;
  for (std::size_t at = svg.find('<'); at != std::string::npos; at = svg.find('<', at + 1)) {
    const std::size_t end = svg.find('>', at);
    EXPECT_NE(end, std::string::npos);
    const std::string tag = svg.substr(at + 1, end - at - 1);
    if (tag.front() == '/') {
      EXPECT_FALSE(open.empty()) << tag;
      if (open.empty()) break;
      EXPECT_EQ(open.back(), tag.substr(1));
      open.pop_back();
      continue;
    }
    const std::string name = tag.substr(0, tag.find_first_of(" />"));
    names.push_back(name);
    if (tag.back() != '/') open.push_back(name);
  }
  EXPECT_TRUE(open.empty()) << "unclosed: " << (open.empty() ? "" : open.back());
  return names;
}

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(SweepPlot, OneSeriesPerCombinationOfTheOtherVaryingAxes) {
  const SweepGrid grid = grid_of(kGrid);  // x = buffers (3), series = batch 2 and 4, preset constant
  const SweepTable table = run_sweep(grid, fake_results);
  const std::string svg = sweep_plot_svg(table, grid, "step_cycles");
  const std::vector<std::string> elements = elements_of(svg);
  ASSERT_FALSE(elements.empty());
  EXPECT_EQ(elements.front(), "svg");
  EXPECT_EQ(std::count(elements.begin(), elements.end(), "polyline"), 2);
  EXPECT_EQ(count_of(svg, "class=\"legend\">batch=2<"), 1u);
  EXPECT_EQ(count_of(svg, "class=\"legend\">batch=4<"), 1u);
  EXPECT_EQ(count_of(svg, "<title>step_cycles</title>"), 1u);
  expect_contains(svg, ">preset=small<");  // the constant axis, under the title
  expect_contains(svg, ">buffers<");       // the x axis label
  for (const char* category : {">1<", ">2<", ">3<"}) expect_contains(svg, category);
  EXPECT_EQ(count_of(svg, "<circle"), 6u + 2u);  // a marker per point, one per legend entry
  // The y axis starts at 0 and its top tick covers the largest value (3004 cycles): steps of 1k.
  expect_contains(svg, ">0<");
  expect_contains(svg, ">4k<");
  EXPECT_EQ(count_of(svg, "stroke=\"#ddd\""), 5u);  // ticks 0, 1k, 2k, 3k, 4k
}

TEST(SweepPlot, OneSeriesWhenNothingElseVariesAndNegativeValues) {
  const SweepGrid grid = grid_of(R"({"model": "m", "axes": {"shard": ["batch", "<tensor>"], "batch": [4]}})");
  const SweepTable table = run_sweep(grid, [](const SweepPoint& p) -> nlohmann::json {
    return {{"delta", p.index == 0 ? -40 : 75}};
  });
  const std::string svg = sweep_plot_svg(table, grid, "delta");
  const std::vector<std::string> elements = elements_of(svg);
  EXPECT_EQ(std::count(elements.begin(), elements.end(), "polyline"), 1);
  EXPECT_EQ(count_of(svg, "class=\"legend\">delta<"), 1u);
  expect_contains(svg, ">&lt;tensor&gt;<");  // escaped
  // The y axis starts below the least value (-40), not at 0, in steps of 25.
  expect_contains(svg, ">-50<");
  expect_contains(svg, ">75<");
  EXPECT_EQ(count_of(svg, "stroke=\"#ddd\""), 6u);
}

// ---- the outputs folder ---------------------------------------------------------------------

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(SweepOutputs, EveryFileOnceAndNoStagingLeft) {
  test::TempDir dir;
  const SweepGrid grid = grid_of(kGrid);
  const SweepTable table = run_sweep(grid, fake_results);
  const fs::path out = dir.path() / "new" / "sweep-out";
  const std::vector<std::string> written = write_sweep_outputs(table, grid, out);
  EXPECT_EQ(written,
            (std::vector<std::string>{"sweep.csv", "sweep.json", "plot-step_cycles.svg", "plot-hbm_peak_bytes.svg"}));
  EXPECT_EQ(names_in(out),
            (std::vector<std::string>{"plot-hbm_peak_bytes.svg", "plot-step_cycles.svg", "sweep.csv", "sweep.json"}));
  EXPECT_EQ(names_in(dir.path() / "new"), std::vector<std::string>{"sweep-out"});  // no staging folder left
  EXPECT_EQ(read_text(out / "sweep.csv"), sweep_csv(table, grid));
  EXPECT_EQ(nlohmann::json::parse(read_text(out / "sweep.json")), sweep_json(table, grid));

  // Again into the existing folder: the files are replaced, a user's own file stays, nothing else.
  std::ofstream(out / "notes.txt") << "mine";
  std::ofstream(out / "sweep.csv") << "stale";
  write_sweep_outputs(table, grid, out);
  EXPECT_EQ(read_text(out / "sweep.csv"), sweep_csv(table, grid));
  EXPECT_EQ(read_text(out / "notes.txt"), "mine");
  EXPECT_EQ(names_in(out).size(), 5u);
}

TEST(SweepOutputs, AFailureLeavesNothing) {
  test::TempDir dir;
  const SweepGrid grid = grid_of(kGrid);
  const SweepTable table = run_sweep(grid, fake_results);
  std::ofstream(dir.path() / "file") << "x";
  // out_dir is a file; out_dir's parent is a file
  expect_contains(error_of([&] { write_sweep_outputs(table, grid, dir.path() / "file"); }),
                  "exists and is not a directory");
  expect_contains(error_of([&] { write_sweep_outputs(table, grid, dir.path() / "file" / "out"); }),
                  "cannot create the output directory");
  // A name in the way of a file to move in: a directory where sweep.json goes. The staging folder
  // and the folders created on the way are removed.
  fs::create_directories(dir.path() / "out" / "sweep.json" / "x");
  std::ofstream(dir.path() / "out" / "sweep.csv") << "old";
  expect_contains(error_of([&] { write_sweep_outputs(table, grid, dir.path() / "out"); }),
                  "sweep.json: is a directory");
  EXPECT_EQ(names_in(dir.path()), (std::vector<std::string>{"file", "out"}));
  EXPECT_EQ(names_in(dir.path() / "out"), (std::vector<std::string>{"sweep.csv", "sweep.json"}));  // no staging
  EXPECT_EQ(read_text(dir.path() / "out" / "sweep.csv"), "old");  // nothing was moved in
}

}  // namespace
}  // namespace tpuemu::sweep
