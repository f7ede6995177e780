// SPDX-License-Identifier: Apache-2.0
// The base layer: JSON input with exact positions, and the one-line places of Error.
#include <gtest/gtest.h>

#include "test_support.h"

#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tpuemu/base/error.h"
#include "tpuemu/base/input_file.h"
#include "tpuemu/base/json.h"
#include "tpuemu/base/markup.h"
#include "tpuemu/base/text.h"

namespace tpuemu {
namespace {

using test::error_of;
using test::expect_contains;

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

// ---- Error ----------------------------------------------------------------------------------

TEST(ErrorType, FormatsPlaces) {
  EXPECT_STREQ(Error::at("f.json", 3, 7, "bad").what(), "f.json:3:7: bad");
  EXPECT_STREQ(Error::at("f.s", 3, "bad").what(), "f.s:3: bad");
  EXPECT_STREQ(Error::at("f.s", 0, "bad").what(), "f.s: bad");
  EXPECT_STREQ(Error::in_buffer("weights", 0x1f40, "out of range").what(),
               "buffer 'weights' at 0x1f40: out of range");
  EXPECT_STREQ(Error("no place").what(), "no place");
  // Control characters (a name's newline, a terminal escape) are shown escaped, on one line.
  EXPECT_STREQ(Error("a\nb", "c\r\nd").what(), "a\\nb: c\\r\\nd");
  EXPECT_STREQ(Error("layer '\x1b[2Jx\ty'", "bad").what(), "layer '\\x1b[2Jx\\ty': bad");
  EXPECT_EQ(Error(Error("a\nb").what()).cause(), "a\\nb");  // escaping twice changes nothing
  const Error inner("w5", "reserved bits");
  EXPECT_STREQ(inner.within("instruction 3").what(), "instruction 3: w5: reserved bits");
  EXPECT_EQ(inner.within("instruction 3").cause(), "reserved bits");
  EXPECT_STREQ(Error("cause").within("outer").what(), "outer: cause");
}

// ---- markup ---------------------------------------------------------------------------------

TEST(Markup, EscapesEveryCharacterWithMeaningInTextAndAttributes) {
  EXPECT_EQ(escape_markup(R"(a<b & "c" 'd'>)"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
  EXPECT_EQ(escape_markup("plain \xc3\xa9"), "plain \xc3\xa9");  // UTF-8 passes through
  EXPECT_EQ(escape_markup(""), "");
}

}  // namespace
}  // namespace tpuemu

// Hardening: nesting and size are bounded with a one-line error naming file and limit.
TEST(InputLimits, DeepNestingIsRefusedWithItsPlace) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string msg = tpuemu::test::error_of([&] { (void)tpuemu::JsonDocument::parse(deep, "d.json"); });
  EXPECT_EQ(msg, "d.json:1:65: nested deeper than 64 levels");
  std::string objects;
  for (int i = 0; i < 50000; ++i) objects += "{\"a\":";
  objects += "1" + std::string(50000, '}');
  tpuemu::test::expect_contains(tpuemu::test::error_of([&] { (void)tpuemu::JsonDocument::parse(objects, "o.json"); }),
                                "o.json:1:321: nested deeper than 64 levels");
  // 64 levels are fine
  EXPECT_NO_THROW((void)tpuemu::JsonDocument::parse(std::string(64, '[') + std::string(64, ']'), "ok.json"));
}

TEST(InputLimits, EndlessAndOversizedInputsAreRefused) {
  using tpuemu::InputLimits;
  // /dev/zero never ends and has no newline: the line limit stops it at once
  EXPECT_EQ(tpuemu::test::error_of([] { (void)tpuemu::read_input_file("/dev/zero", tpuemu::kTableInput); }),
            "/dev/zero:1: line longer than the 64 KiB limit of a CSV or trace file");
  tpuemu::test::TempDir dir;
  const auto big = dir.write("big.json", std::string(2000, ' ') + "\n" + std::string(2000, ' '));
  constexpr InputLimits small{1000, 5000, "test file"};
  EXPECT_EQ(tpuemu::test::error_of([&] { (void)tpuemu::read_input_file(big, small); }),
            big.string() + ": larger than the 1000 B limit of a test file");
  constexpr InputLimits short_lines{100000, 1000, "test file"};
  EXPECT_EQ(tpuemu::test::error_of([&] { (void)tpuemu::read_input_file(big, short_lines); }),
            big.string() + ":1: line longer than the 1000 B limit of a test file");
  EXPECT_EQ(tpuemu::read_input_file(big, {100000, 5000, "test file"}).size(), 4001u);
  tpuemu::test::expect_contains(tpuemu::test::error_of([&] { (void)tpuemu::read_input_file(dir.path() / "none", small); }),
                                "none: cannot open: No such file or directory");
  EXPECT_EQ(tpuemu::limit_text(std::size_t{16} << 20), "16 MiB");
}

TEST(InputLimits, AFifoWithoutWriterIsAnErrorNotAHang) {
  tpuemu::test::TempDir dir;
  const auto fifo = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(tpuemu::test::error_of([&] { (void)tpuemu::read_input_file(fifo, tpuemu::kJsonInput); }),
            fifo.string() + ": no process opened the FIFO for writing within 5 s");
  EXPECT_GE(std::chrono::steady_clock::now() - start, tpuemu::kFifoWriterWait);
  // A writer that comes a little later is waited for, and its text read whole.
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::ofstream(fifo) << "{\"a\": 1}\n";
  });
  EXPECT_EQ(tpuemu::read_input_file(fifo, tpuemu::kJsonInput), "{\"a\": 1}\n");
  writer.join();
}

// ---- text for a terminal ---------------------------------------------------------------------

TEST(Text, ControlCharactersArePrintedEscaped) {
  EXPECT_EQ(tpuemu::printable("plain name, caf\xc3\xa9 \\ ok"), "plain name, caf\xc3\xa9 \\ ok");
  EXPECT_EQ(tpuemu::printable("a\nb\rc\td\x1b[31me\x7f\x01"), "a\\nb\\rc\\td\\x1b[31me\\x7f\\x01");
  EXPECT_EQ(tpuemu::printable(std::string("nul\0byte", 8)), "nul\\x00byte");
  EXPECT_EQ(tpuemu::printable_lines("line 1\nname \x1b[2J\n"), "line 1\nname \\x1b[2J\n");
}

TEST(Text, WideValuesNeverRunColumnsTogether) {
  const tpuemu::TextColumn columns[] = {{6, false, 0}, {5, true, 1}};
  // Within the minimum widths the layout is fixed.
  EXPECT_EQ(tpuemu::text_table(columns, {{"a", "1", "22"}, {"bb", "333", "4"}}, "  "),
            "  a          1    22\n"
            "  bb       333     4\n");
  // A value wider than its column widens the column for every row; one space always separates.
  EXPECT_EQ(tpuemu::text_table(columns, {{"label", "18446744073709551615", "1"}, {"x", "2", "3"}}),
            "label  18446744073709551615     1\n"
            "x                         2     3\n");
  // Widths count characters, not bytes.
  EXPECT_EQ(tpuemu::text_table(columns, {{"caf\xc3\xa9", "1"}, {"tea", "2"}}),
            "caf\xc3\xa9       1\n"
            "tea        2\n");
}

// Found by scripts/fuzz.sh: a number too large for a double is a positioned Error, not the
// library's out_of_range exception escaping as "[json.exception.out_of_range.406] ...".
TEST(Json, NumberOverflowIsAPositionedError) {
  const std::string msg = tpuemu::test::error_of([] { (void)tpuemu::JsonDocument::parse("{\"a\": 1e999}", "n.json"); });
  EXPECT_EQ(msg, "n.json:1:12: number overflow parsing '1e999'");
}
