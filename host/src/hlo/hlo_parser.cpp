// SPDX-License-Identifier: Apache-2.0
// The HLO text reader. The format is token based: whitespace (newlines included) and comments may
// stand between any two tokens, so an instruction may be spread over several lines; an
// instruction ends where no ", name=value" follows. Attribute values are kept as written: the
// reader only needs to find where one ends (a ',' or whitespace outside brackets and strings), so
// an attribute it does not know is never an error. The ones with a structure are also read into
// their typed fields, once, by hlo_attributes.cpp.
#include "tpuemu/hlo/hlo_parser.h"

#include <algorithm>
#include <tuple>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "attribute_reader.h"
#include "tiled_size.h"
#include "tpuemu/base/error.h"
#include "tpuemu/base/input_file.h"

namespace tpuemu::hlo {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_name_char(char c) { return is_alpha(c) || is_digit(c) || c == '_' || c == '.' || c == '-'; }

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

// Text is UTF-8 without control characters other than tab, newline and carriage return: anything
// else is binary data handed in by mistake, refused at its byte before any parsing.
void check_text(std::string_view text, const std::string& source) {
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t extra = 0;
    bool ok = true;
    if (c == '\n') {
      ++line;
      line_start = i + 1;
    } else if (c < 0x20) {
      ok = c == '\t' || c == '\r';
    } else if (c == 0x7f) {
      ok = false;
    } else if (c >= 0x80) {
      extra = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : 0;
      ok = extra > 0 && i + extra < text.size();
      for (std::size_t k = 1; ok && k <= extra; ++k) ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    }
    if (!ok)
      throw Error::at(source, line, i - line_start + 1,
                      fmt::format("byte 0x{:02x} is not text: the file is binary, not HLO text", c));
    i += 1 + extra;
  }
}

// A position in the text and the scanning primitives. Copyable: a known attribute's value is
// read again from a copy placed at its start, so its errors point into the file.
struct Cursor {
  std::string_view text;
  const std::string* source = nullptr;
  std::size_t pos = 0;
  std::size_t end = 0;
  std::uint32_t line = 1;
  std::size_t line_start = 0;

  bool at_end() const { return pos >= end; }
  char peek(std::size_t ahead = 0) const { return pos + ahead < end ? text[pos + ahead] : '\0'; }
  SourcePos here() const { return {line, static_cast<std::uint32_t>(pos - line_start + 1)}; }
  void advance() {
    if (text[pos] == '\n') {
      ++line;
      line_start = pos + 1;
    }
    ++pos;
  }

  [[noreturn]] void fail(SourcePos at, std::string_view cause) const {
    throw Error::at(*source, at.line, at.col, cause);
  }
  [[noreturn]] void fail(std::string_view cause) const { fail(here(), cause); }
  [[noreturn]] void truncated(std::string_view expected) const {
    fail(fmt::format("unexpected end of file: the module is truncated (expected {})", expected));
  }

  // A UTF-8 byte order mark at the start of the text (editors on Windows write one): skipped, and
  // columns count from the byte after it.
  void skip_byte_order_mark() {
    if (pos == 0 && text.starts_with(kByteOrderMark)) pos = line_start = kByteOrderMark.size();
  }

  // Whitespace, /* comments */ and // comments. Returns where an unterminated /* comment opened.
  std::optional<SourcePos> skip_blank() {
    while (!at_end()) {
      const char c = peek();
      if (is_space(c)) {
        advance();
      } else if (c == '/' && peek(1) == '*') {
        const SourcePos start = here();
        advance();
        advance();
        while (!at_end() && !(peek() == '*' && peek(1) == '/')) advance();
        if (at_end()) return start;
        advance();
        advance();
      } else if (c == '/' && peek(1) == '/') {
        while (!at_end() && peek() != '\n') advance();
      } else {
        break;
      }
    }
    return std::nullopt;
  }
  void skip_ws() {
    if (const auto open = skip_blank()) fail(*open, "unterminated /* comment: the module is truncated");
  }

  bool eat(char c) {
    skip_ws();
    if (peek() != c || at_end()) return false;
    advance();
    return true;
  }
  void expect(char c, std::string_view context) {
    skip_ws();
    if (at_end()) truncated(fmt::format("'{}' {}", c, context));
    if (peek() != c) fail(fmt::format("expected '{}' {}, found '{}'", c, context, peek()));
    advance();
  }

  // A name: letters, digits, '_', '.', '-' after an optional '%'; a '-' that starts "->" ends it.
  std::string_view name() {
    skip_ws();
    if (peek() == '%') advance();
    const std::size_t start = pos;
    while (!at_end() && is_name_char(peek()) && !(peek() == '-' && peek(1) == '>')) advance();
    return text.substr(start, pos - start);
  }

  // A word of letters and digits only (element types, keywords).
  std::string_view word() {
    skip_ws();
    const std::size_t start = pos;
    while (!at_end() && (is_alpha(peek()) || is_digit(peek()))) advance();
    return text.substr(start, pos - start);
  }

  std::int64_t integer(std::string_view what) {
    skip_ws();
    const SourcePos at = here();
    const std::size_t start = pos;
    if (peek() == '-') advance();
    while (!at_end() && is_digit(peek())) advance();
    std::int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(text.data() + start, text.data() + pos, value);
    if (ec == std::errc::result_out_of_range) fail(at, fmt::format("{} does not fit 64 bits", what));
    if (ec != std::errc() || ptr != text.data() + pos) {
      if (at_end()) truncated(what);
      fail(at, fmt::format("expected {}", what));
    }
    return value;
  }

  // A "string" with its escapes; the cursor is on the opening quote. Returns the raw text.
  void skip_string() {
    const SourcePos start = here();
    advance();
    while (!at_end() && peek() != '"') {
      if (peek() == '\\' && pos + 1 < end) advance();
      advance();
    }
    if (at_end()) fail(start, "unterminated string: the module is truncated");
    advance();
  }

  // Skips a bracketed group starting at the cursor ('(', '{' or '['), strings and comments
  // inside included; brackets must match.
  void skip_group() {
    std::vector<std::pair<char, SourcePos>> open;
    do {
      const char c = peek();
      if (c == '"') {
        skip_string();
        continue;
      }
      if (c == '/' && peek(1) == '*') {
        skip_ws();
        continue;
      }
      if (c == '(' || c == '{' || c == '[') {
        open.emplace_back(c == '(' ? ')' : c == '{' ? '}' : ']', here());
      } else if (c == ')' || c == '}' || c == ']') {
        if (c != open.back().first)
          fail(fmt::format("'{}' closes the '{}' opened at {}:{}", c,
                           open.back().first == ')' ? '(' : open.back().first == '}' ? '{' : '[',
                           open.back().second.line, open.back().second.col));
        open.pop_back();
      }
      advance();
    } while (!open.empty() && !at_end());
    if (!open.empty())
      fail(open.back().second, "unclosed bracket: the module is truncated");
  }

  // An attribute value as written: up to a ',' or whitespace outside brackets and strings, or an
  // unmatched closing bracket.
  std::string_view raw_value(std::string_view attribute) {
    skip_ws();
    const std::size_t start = pos;
    while (!at_end()) {
      const char c = peek();
      if (c == '"') {
        skip_string();
      } else if (c == '(' || c == '{' || c == '[') {
        skip_group();
      } else if (c == ',' || is_space(c) || c == ')' || c == '}' || c == ']' ||
                 (c == '/' && (peek(1) == '*' || peek(1) == '/'))) {
        break;
      } else {
        advance();
      }
    }
    if (pos == start) {
      if (at_end()) truncated(fmt::format("the value of {}", attribute));
      fail(fmt::format("expected the value of {}", attribute));
    }
    return text.substr(start, pos - start);
  }
};

std::uint64_t checked_bytes(const Shape& shape, const Cursor& at, SourcePos pos);

// Shapes: f32[8,128]{1,0:T(8,128)}, bf16[<=8,?], (f32[2], s32[]), token[], pred[].
// Real programs nest tuples a few levels deep; the bound keeps the recursion off the end of the
// stack on a file of '((((...'.
constexpr int kMaxTupleDepth = 64;

// The ranges of layout items (docs/hlo.md, "Layouts"). A memory space names one of a device's
// few memories (XLA: 0 the default, 1 the alternate - a TPU's VMEM -, 5 the host's); 255 leaves
// room for any backend's numbering and refuses a mistyped number. E(n) is a width in bits, at
// most the widest element type's (c128). TPU layouts have up to three tiles of up to two
// dimensions; the bounds keep a hostile layout's size algebra small.
constexpr std::int64_t kMaxMemorySpace = 255;
constexpr std::int64_t kMaxElementBits = 128;
constexpr std::size_t kMaxTiles = 16;
constexpr std::size_t kMaxTileRank = 16;

// The items of a layout after ':', in the one order XLA's printer writes them and its parser
// reads them (xla/layout.cc Layout::Print, xla/hlo/parser/hlo_parser.cc ParseLayout).
enum class LayoutItem {
  DimLevels,
  Tiles,
  TailPadding,
  IndexType,
  PointerType,
  ElementSize,
  MemorySpace,
  SplitConfigs,
  PhysicalShape,
  MetadataPrefix
};
constexpr std::string_view kLayoutItemOrder = "D T L # * E S SC P M";

std::optional<LayoutItem> layout_item(std::string_view name) {
  static constexpr std::pair<std::string_view, LayoutItem> kItems[] = {
      {"D", LayoutItem::DimLevels},     {"T", LayoutItem::Tiles},
      {"L", LayoutItem::TailPadding},   {"#", LayoutItem::IndexType},
      {"*", LayoutItem::PointerType},   {"E", LayoutItem::ElementSize},
      {"S", LayoutItem::MemorySpace},   {"SC", LayoutItem::SplitConfigs},
      {"P", LayoutItem::PhysicalShape}, {"M", LayoutItem::MetadataPrefix}};
  for (const auto& [text, item] : kItems)
    if (text == name) return item;
  return std::nullopt;
}

bool is_unsigned_integer(PrimitiveType t) {
  return t == PrimitiveType::U2 || t == PrimitiveType::U4 || t == PrimitiveType::U8 ||
         t == PrimitiveType::U16 || t == PrimitiveType::U32 || t == PrimitiveType::U64;
}

// Layouts already read, by their text: equal texts share one Layout.
using LayoutCache = std::unordered_map<std::string, std::shared_ptr<const Layout>>;

struct ShapeReader {
  Cursor& c;
  int depth = 0;
  LayoutCache* layouts = nullptr;  // none: every layout its own

  std::shared_ptr<const Layout> shared(Layout l) {
    if (layouts == nullptr) return std::make_shared<const Layout>(std::move(l));
    auto [it, added] = layouts->try_emplace(l.text);
    if (added) it->second = std::make_shared<const Layout>(std::move(l));
    return it->second;
  }

  Shape shape() {
    c.skip_ws();
    const SourcePos at = c.here();
    if (c.at_end()) c.truncated("a shape");
    Shape s;
    if (c.peek() == '(') {
      if (depth == kMaxTupleDepth)
        c.fail(at, fmt::format("malformed shape: tuples nested more than {} deep", kMaxTupleDepth));
      c.advance();
      s.type = PrimitiveType::Tuple;
      if (!c.eat(')')) {
        ++depth;
        do s.elements.push_back(shape());
        while (c.eat(','));
        --depth;
        c.expect(')', "closing the tuple shape");
      }
      // Once, at the outermost tuple: each array was checked where it was read.
      if (depth == 0) checked_bytes(s, c, at);
      return s;
    }
    const std::string_view type = c.word();
    if (type.empty()) c.fail(at, fmt::format("malformed shape: expected an element type, found '{}'", c.peek()));
    const auto t = type_from_name(type);
    if (!t) c.fail(at, fmt::format("malformed shape: unknown element type '{}'", type));
    s.type = *t;
    if (c.at_end()) c.truncated("'[' of the shape");
    if (c.peek() != '[') c.fail(fmt::format("malformed shape: expected '[' after '{}'", type));
    c.advance();
    c.skip_ws();
    if (c.peek() == ']') {
      c.advance();
    } else {
      while (true) {
        c.skip_ws();
        bool dynamic = false;
        std::int64_t dim = 0;
        if (c.peek() == '?') {
          c.advance();
          dynamic = true;
          dim = -1;
        } else {
          if (c.peek() == '<' && c.peek(1) == '=') {
            c.advance();
            c.advance();
            dynamic = true;
          }
          c.skip_ws();
          if (!is_digit(c.peek())) {
            if (c.at_end()) c.truncated("a dimension");
            c.fail(fmt::format("malformed shape: expected a dimension, found '{}'", c.peek()));
          }
          dim = c.integer("a dimension");
        }
        s.dims.push_back(dim);
        if (dynamic) {
          s.dynamic.resize(s.dims.size(), false);
          s.dynamic.back() = true;
        }
        c.skip_ws();
        if (c.at_end()) c.truncated("']' closing the shape");
        if (c.peek() == ']') {
          c.advance();
          break;
        }
        if (c.peek() != ',') c.fail(fmt::format("malformed shape: expected ',' or ']', found '{}'", c.peek()));
        c.advance();
      }
    }
    if (s.type == PrimitiveType::Token && !s.dims.empty()) c.fail(at, "malformed shape: token has no dimensions");
    // A layout follows the ']' directly: "f32[8] {" is a shape before a computation's body.
    std::optional<SourcePos> sized_at;
    if (c.peek() == '{' && !c.at_end()) s.layout = shared(layout(s, sized_at));
    checked_bytes(s, c, at);
    // The module's own tiles, tail padding and element size are what the analysis counts: the
    // bytes they store must fit 64 bits too.
    if (sized_at && !detail::own_tiled_bytes(s))
      c.fail(*sized_at, fmt::format("malformed layout: shape {}: its {} size overflows 64 bits",
                                    s.to_string(), s.layout->tiles.empty() ? "stored" : "tiled"));
    return s;
  }

  // {minor_to_major} or {minor_to_major:items}; sized_at: where the first of the items that change
  // the stored bytes (T, L, E) stood, if one did.
  Layout layout(const Shape& s, std::optional<SourcePos>& sized_at) {
    c.advance();  // '{'
    const std::size_t start = c.pos;
    Layout l;
    minor_to_major(l, s);
    c.skip_ws();
    if (c.peek() == ':' && !c.at_end()) {
      c.advance();
      items(l, s, sized_at);
    }
    c.skip_ws();
    if (c.at_end()) c.truncated("'}' closing the layout");
    if (c.peek() != '}')
      c.fail(fmt::format("malformed layout: expected '}}' closing the layout, found '{}'", c.peek()));
    l.text = std::string(c.text.substr(start, c.pos - start));
    c.advance();
    return l;
  }

  // Every dimension of the shape once, minor first; none: the default order. A dimension twice
  // would lay one out twice and another not at all.
  void minor_to_major(Layout& l, const Shape& s) {
    const std::size_t rank = s.dims.size();
    std::vector<bool> seen(rank, false);
    c.skip_ws();
    if (c.at_end() || !is_digit(c.peek())) return;
    while (true) {
      const SourcePos at = c.here();
      const std::int64_t d = c.integer("a layout dimension");
      const auto dim = static_cast<std::uint64_t>(d);  // digits only: never negative
      if (dim >= rank)
        c.fail(at, fmt::format("malformed layout: dimension {} is not a dimension of a rank-{} shape", d, rank));
      if (seen[dim])
        c.fail(at, fmt::format("malformed layout: dimension {} appears twice in minor_to_major (each of the "
                               "shape's {} dimensions once)",
                               d, rank));
      seen[dim] = true;
      l.minor_to_major.push_back(d);
      if (!c.eat(',')) break;
      c.skip_ws();
      if (c.at_end() || !is_digit(c.peek())) c.fail("malformed layout: expected a dimension after ','");
    }
    if (l.minor_to_major.size() != rank) {
      c.skip_ws();
      c.fail(fmt::format("malformed layout: minor_to_major orders {} of the shape's {} dimensions",
                         l.minor_to_major.size(), rank));
    }
  }

  // The items after ':', each read into its field and checked, in XLA's order (kLayoutItemOrder),
  // each at most once. An item of another name - one a newer XLA adds - is kept in the text only.
  void items(Layout& l, const Shape& s, std::optional<SourcePos>& sized_at) {
    std::optional<LayoutItem> last;
    std::string_view last_name;
    while (true) {
      c.skip_ws();
      if (c.at_end()) c.truncated("'}' closing the layout");
      if (c.peek() == '}') return;
      const SourcePos at = c.here();
      if (!is_alpha(c.peek()) && c.peek() != '#' && c.peek() != '*')
        c.fail(fmt::format("malformed layout: unexpected '{}' in the layout", c.peek()));
      const std::size_t start = c.pos;
      c.advance();
      if (is_alpha(c.text[start]))
        while (!c.at_end() && is_alpha(c.peek())) c.advance();
      const std::string_view name = c.text.substr(start, c.pos - start);
      const std::optional<LayoutItem> item = layout_item(name);
      if (!item) {
        c.skip_ws();
        while (!c.at_end() && c.peek() == '(') {
          c.skip_group();
          c.skip_ws();
        }
        continue;
      }
      if (last && *item == *last)
        c.fail(at, fmt::format("malformed layout: a second {}(...) item", name));
      if (last && *item < *last)
        c.fail(at,
               fmt::format(
                   "malformed layout: {}(...) after {}(...): XLA writes the items in the order {}",
                   name, last_name, kLayoutItemOrder));
      last = item;
      last_name = name;
      switch (*item) {
        case LayoutItem::DimLevels:
          dim_levels(l, s, at);
          break;
        case LayoutItem::Tiles:
          if (!sized_at) sized_at = at;
          tiles(l);
          break;
        case LayoutItem::TailPadding:
          if (!sized_at) sized_at = at;
          l.tail_padding_elements =
              item_value(name, "a tail padding alignment", "tail padding alignment", 1, INT64_MAX,
                         "is not positive");
          break;
        case LayoutItem::IndexType:
          l.index_type = sparse_type(name, "index type");
          break;
        case LayoutItem::PointerType:
          l.pointer_type = sparse_type(name, "pointer type");
          break;
        case LayoutItem::ElementSize:
          if (!sized_at) sized_at = at;
          l.element_size_bits =
              item_value(name, "an element size", "element size", 0, kMaxElementBits,
                         fmt::format("is not in 0..{} bits", kMaxElementBits));
          break;
        case LayoutItem::MemorySpace:
          l.memory_space = item_value(name, "a memory space", "memory space", 0, kMaxMemorySpace,
                                      fmt::format("is not in 0..{}", kMaxMemorySpace));
          break;
        case LayoutItem::SplitConfigs:
          split_configs(l, s);
          break;
        case LayoutItem::PhysicalShape:
          physical_shape(l, at);
          break;
        case LayoutItem::MetadataPrefix:
          l.dynamic_metadata_prefix_bytes =
              item_value(name, "a metadata prefix size", "dynamic shape metadata prefix", 0,
                         INT64_MAX, "is negative");
          break;
      }
    }
  }

  // D(D,C+,S~,H+~): one level type per dimension of the shape (dense, compressed, singleton, loose
  // compressed), '+' not unique, '~' not ordered. A dense dimension holds every index once and in
  // order, so neither suffix follows D. D() is every dimension dense, as no D at all.
  void dim_levels(Layout& l, const Shape& s, SourcePos item_at) {
    c.skip_ws();
    if (c.at_end() || c.peek() != '(') c.fail("malformed layout: expected '(' after D");
    c.advance();
    if (c.eat(')')) return;
    do {
      c.skip_ws();
      const SourcePos at = c.here();
      const std::string_view word = c.word();
      DimLevel level;
      if (word == "D") {
        level.type = DimLevelType::Dense;
      } else if (word == "C") {
        level.type = DimLevelType::Compressed;
      } else if (word == "S") {
        level.type = DimLevelType::Singleton;
      } else if (word == "H") {
        level.type = DimLevelType::LooseCompressed;
      } else {
        if (c.at_end()) c.truncated("a dimension level type");
        c.fail(at,
               fmt::format(
                   "malformed layout: expected a dimension level type (D, C, S or H), found '{}'",
                   word.empty() ? std::string(1, c.peek()) : std::string(word)));
      }
      if (!c.at_end() && c.peek() == '+') {
        level.unique = false;
        c.advance();
      }
      if (!c.at_end() && c.peek() == '~') {
        level.ordered = false;
        c.advance();
      }
      if (level.type == DimLevelType::Dense && (!level.unique || !level.ordered))
        c.fail(at, "malformed layout: a dense dimension holds every index once and in order: "
                   "no '+' or '~' after D");
      l.dim_levels.push_back(level);
    } while (c.eat(','));
    c.expect(')', "closing D(");
    if (l.dim_levels.size() != s.dims.size())
      c.fail(
          item_at,
          fmt::format("malformed layout: D(...) gives {} dimension level types for the shape's {} "
                      "dimensions",
                      l.dim_levels.size(), s.dims.size()));
  }

  // #(u32), *(u32): the types of a sparse array's indices and pointers, unsigned integers as
  // XLA's parser reads them.
  PrimitiveType sparse_type(std::string_view item, std::string_view noun) {
    c.skip_ws();
    if (c.at_end() || c.peek() != '(')
      c.fail(fmt::format("malformed layout: expected '(' after {}", item));
    c.advance();
    c.skip_ws();
    const SourcePos at = c.here();
    const std::string_view word = c.word();
    if (word.empty() && c.at_end()) c.truncated(fmt::format("the {}", noun));
    const std::optional<PrimitiveType> type = type_from_name(word);
    if (!type || !is_unsigned_integer(*type))
      c.fail(
          at,
          fmt::format(
              "malformed layout: {} {}({}) is not an unsigned integer type (u8, u16, u32, u64...)",
              noun, item, word));
    c.expect(')', fmt::format("closing {}(", item));
    return *type;
  }

  // SC(0:512)(1:64,128): per split dimension (physical: 0 is the major-most) the indices where a
  // new part starts, ascending inside the dimension. A dimension is split at most once.
  void split_configs(Layout& l, const Shape& s) {
    const std::size_t rank = s.dims.size();
    c.skip_ws();
    if (c.at_end() || c.peek() != '(') c.fail("malformed layout: expected '(' after SC");
    while (!c.at_end() && c.peek() == '(') {
      c.advance();
      c.skip_ws();
      const SourcePos at = c.here();
      SplitConfig split;
      split.dimension = c.integer("a split dimension");
      if (split.dimension < 0 || static_cast<std::uint64_t>(split.dimension) >= rank)
        c.fail(at,
               fmt::format(
                   "malformed layout: split dimension {} is not a physical dimension of a rank-{} "
                   "shape (0 is the major-most)",
                   split.dimension, rank));
      for (const SplitConfig& other : l.split_configs)
        if (other.dimension == split.dimension)
          c.fail(at, fmt::format("malformed layout: physical dimension {} is split twice",
                                 split.dimension));
      // The logical dimension at that physical place; the default order when none is given.
      const std::size_t physical = static_cast<std::size_t>(split.dimension);
      const std::int64_t logical = l.minor_to_major.empty() ? static_cast<std::int64_t>(physical)
                                                            : l.minor_to_major[rank - 1 - physical];
      const std::int64_t size = s.dims[static_cast<std::size_t>(logical)];  // -1: unbounded
      c.expect(':', "after the split dimension");
      if (!c.eat(')')) {
        do {
          c.skip_ws();
          const SourcePos index_at = c.here();
          const std::int64_t index = c.integer("a split index");
          const std::int64_t previous =
              split.split_indices.empty() ? 0 : split.split_indices.back();
          if (index <= previous || (size >= 0 && index >= size))
            c.fail(
                index_at,
                size >= 0
                    ? fmt::format(
                          "malformed layout: split index {} is not in {}..{}: each index above the "
                          "one before it and inside physical dimension {} of size {}",
                          index, previous + 1, size - 1, split.dimension, size)
                    : fmt::format(
                          "malformed layout: split index {} is not above {}: each index above the "
                          "one before it, and above 0",
                          index, previous));
          split.split_indices.push_back(index);
        } while (c.eat(','));
        c.expect(')', "closing the split config");
      }
      l.split_configs.push_back(std::move(split));
      c.skip_ws();
    }
  }

  // P(shape): a sparse array's stored shape, read with every check of a shape. Nesting counts
  // against the same bound as tuples.
  void physical_shape(Layout& l, SourcePos item_at) {
    c.skip_ws();
    if (c.at_end() || c.peek() != '(') c.fail("malformed layout: expected '(' after P");
    c.advance();
    if (depth == kMaxTupleDepth)
      c.fail(item_at,
             fmt::format("malformed layout: physical shapes and tuples nested more than {} deep",
                         kMaxTupleDepth));
    ++depth;
    c.skip_ws();
    const SourcePos shape_at = c.here();
    Shape physical = shape();
    --depth;
    // A tuple is checked whole at the outermost level only; this one is its own outermost.
    if (physical.is_tuple()) checked_bytes(physical, c, shape_at);
    c.expect(')', "closing P(");
    l.physical_shape = std::make_shared<const Shape>(std::move(physical));
  }

  // T(8,128)(2,1): tiles of positive dimensions or '*' (-1: the dimension whole).
  void tiles(Layout& l) {
    c.skip_ws();
    if (c.at_end() || c.peek() != '(') c.fail("malformed layout: expected '(' after T");
    while (!c.at_end() && c.peek() == '(') {
      if (l.tiles.size() == kMaxTiles) c.fail(fmt::format("malformed layout: more than {} tiles", kMaxTiles));
      c.advance();
      std::vector<std::int64_t> tile;
      do {
        c.skip_ws();
        const SourcePos at = c.here();
        if (tile.size() == kMaxTileRank)
          c.fail(at, fmt::format("malformed layout: a tile of more than {} dimensions", kMaxTileRank));
        if (!c.at_end() && c.peek() == '*') {
          c.advance();
          tile.push_back(-1);
          continue;
        }
        const std::int64_t d = c.integer("a tile dimension");
        if (d < 1)
          c.fail(at, fmt::format("malformed layout: tile dimension {} is not positive (a tile dimension is 1 or "
                                 "more, or '*')",
                                 d));
        tile.push_back(d);
      } while (c.eat(','));
      c.expect(')', "closing the tile");
      l.tiles.push_back(std::move(tile));
      c.skip_ws();
    }
  }

  // The value of ITEM(value), in lo..hi.
  std::int64_t item_value(std::string_view item, std::string_view expected, std::string_view noun, std::int64_t lo,
                          std::int64_t hi, std::string_view out_of_range) {
    c.skip_ws();
    if (c.at_end() || c.peek() != '(') c.fail(fmt::format("malformed layout: expected '(' after {}", item));
    c.advance();
    c.skip_ws();
    const SourcePos at = c.here();
    const std::int64_t value = c.integer(expected);
    if (value < lo || value > hi)
      c.fail(at, fmt::format("malformed layout: {} {}({}) {}", noun, item, value, out_of_range));
    c.expect(')', fmt::format("closing {}(", item));
    return value;
  }
};

// The shape's bytes unpadded; refuses element counts and byte sizes that do not fit 64 bits, so
// that every later size computation on an accepted shape is exact.
std::uint64_t checked_bytes(const Shape& shape, const Cursor& at, SourcePos pos) {
  if (shape.is_tuple()) {
    std::uint64_t total = 0;
    for (const Shape& e : shape.elements)
      if (__builtin_add_overflow(total, checked_bytes(e, at, pos), &total))
        at.fail(pos, "tuple shape: its byte size overflows 64 bits");
    return total;
  }
  std::uint64_t count = 1;
  for (const std::int64_t d : shape.dims) {
    if (d < 0) continue;
    if (__builtin_mul_overflow(count, static_cast<std::uint64_t>(d), &count))
      at.fail(pos, fmt::format("shape {}: its element count overflows 64 bits", shape.to_string()));
  }
  const unsigned bits = bit_width(shape.type);
  if (bits < 8) return (count / 8) * bits + ((count % 8) * bits + 7) / 8;
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, std::uint64_t{bits / 8}, &bytes))
    at.fail(pos, fmt::format("shape {}: its byte size overflows 64 bits", shape.to_string()));
  return bytes;
}

std::string unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      const char n = s[++i];
      out += n == 'n' ? '\n' : n == 't' ? '\t' : n;
    } else {
      out += s[i];
    }
  }
  return out;
}

// metadata={op_name="..." source_file="..." source_line=12 ...}: the fields the reports use.
// Never an error: metadata the reader cannot follow is still kept verbatim as the attribute.
Metadata parse_metadata(std::string_view v) {
  Metadata m;
  std::size_t i = v.empty() || v.front() != '{' ? v.size() : 1;
  while (i < v.size()) {
    while (i < v.size() && (is_space(v[i]) || v[i] == ',')) ++i;
    const std::size_t key_start = i;
    while (i < v.size() && is_name_char(v[i])) ++i;
    const std::string_view key = v.substr(key_start, i - key_start);
    if (key.empty() || i >= v.size() || v[i] != '=') break;
    ++i;
    std::string value;
    if (i < v.size() && v[i] == '"') {
      const std::size_t s = ++i;
      while (i < v.size() && v[i] != '"') i += v[i] == '\\' ? 2 : 1;
      value = unescape(v.substr(s, std::min(i, v.size()) - s));
      ++i;
    } else {
      const std::size_t s = i;
      while (i < v.size() && !is_space(v[i]) && v[i] != '}') ++i;
      value = std::string(v.substr(s, i - s));
    }
    if (key == "op_name") m.op_name = std::move(value);
    else if (key == "source_file") m.source_file = std::move(value);
    else if (key == "source_line") (void)std::from_chars(value.data(), value.data() + value.size(), m.source_line);
  }
  return m;
}

// A computation named by an attribute, resolved once every computation is known (XLA prints
// callees first, hand-written text may not).
struct CalleeRef {
  std::size_t computation, instruction;
  std::string name;
  SourcePos pos;
  enum Role { Called, Condition, Body, Branch, TrueBranch, FalseBranch } role;
};

class Parser {
 public:
  // The module keeps the text (instructions' texts and literals are ranges of it): taken, not copied.
  Parser(std::string text, std::string source) : source_(std::move(source)), text_(std::move(text)) {
    c_.text = text_;
    c_.source = &source_;
    c_.end = text_.size();
    c_.skip_byte_order_mark();
  }

  Module module() {
    Module m;
    m.source = source_;
    // Instructions' texts are 32-bit ranges of it; the input limit (kHloInput) is far below.
    if (c_.text.size() > UINT32_MAX)
      throw Error(fmt::format("{}: {} bytes of HLO text: more than 4 GiB", source_, c_.text.size()));
    c_.skip_ws();
    if (c_.at_end()) c_.fail("empty file: expected 'HloModule'");
    const SourcePos at = c_.here();
    if (c_.word() != "HloModule") c_.fail(at, "expected 'HloModule' at the start of an HLO module");
    const SourcePos name_at = c_.here();
    m.name = std::string(c_.name());
    if (m.name.empty()) {
      if (c_.at_end()) c_.truncated("the module's name");
      c_.fail(name_at, "expected the module's name after 'HloModule'");
    }
    while (c_.eat(',')) module_attribute(m, attribute());
    c_.skip_ws();
    if (c_.at_end()) c_.truncated("a computation");
    std::optional<std::size_t> entry;
    while (!c_.at_end()) {
      const SourcePos cat = c_.here();
      const std::size_t index = m.computations.size();
      m.computations.push_back(computation(index));
      Computation& comp = m.computations.back();
      if (const auto prior = names_.find(comp.name); prior != names_.end())
        c_.fail(cat, fmt::format("duplicate computation name '{}' (first at line {})", comp.name,
                                 m.computations[prior->second].pos.line));
      names_.emplace(comp.name, index);
      if (comp.is_entry) {
        if (entry) c_.fail(cat, fmt::format("a second ENTRY computation ('{}')", comp.name));
        entry = index;
      }
      c_.skip_ws();
    }
    // Without an ENTRY mark the last computation is the entry, as XLA's parser has it.
    m.entry = entry.value_or(m.computations.size() - 1);
    m.computations[m.entry].is_entry = true;
    for (const CalleeRef& ref : callees_) {
      const auto found = names_.find(ref.name);
      if (found == names_.end()) c_.fail(ref.pos, fmt::format("undefined computation '{}'", ref.name));
      Instruction& inst = m.computations[ref.computation].instructions[ref.instruction];
      const std::size_t callee = found->second;
      inst.called.push_back(callee);
      if (ref.role == CalleeRef::Condition) inst.condition = static_cast<std::uint32_t>(callee);
      if (ref.role == CalleeRef::Body) inst.body = static_cast<std::uint32_t>(callee);
      if (ref.role == CalleeRef::Branch) inst.branches.push_back(callee);
      if (ref.role == CalleeRef::TrueBranch) inst.branches.insert(inst.branches.begin(), callee);
      if (ref.role == CalleeRef::FalseBranch) inst.branches.push_back(callee);
    }
    m.metadata = std::move(metadata_);
    m.text = std::move(text_);  // the cursor's view of it is not read again
    return m;
  }

 private:
  struct RawAttribute {
    Attribute attr;
    Cursor at;  // at the value's first character, for reading it again
  };

  RawAttribute attribute() {
    c_.skip_ws();
    const SourcePos at = c_.here();
    std::size_t start = c_.pos;
    while (!c_.at_end() && is_name_char(c_.peek())) c_.advance();
    const std::string_view name = c_.text.substr(start, c_.pos - start);
    if (name.empty()) {
      if (c_.at_end()) c_.truncated("an attribute after ','");
      c_.fail(at, fmt::format("expected an attribute name=value after ',', found '{}'", c_.peek()));
    }
    c_.expect('=', fmt::format("after attribute '{}'", name));
    c_.skip_ws();
    Cursor value_at = c_;
    const std::string_view value = c_.raw_value(fmt::format("attribute '{}'", name));
    value_at.end = c_.pos;
    return {Attribute{std::string(name), std::string(value), at}, value_at};
  }

  void module_attribute(Module& m, RawAttribute raw) {
    const Attribute& a = raw.attr;
    if (a.name == "entry_computation_layout") {
      m.entry_computation_layout = a.value;
    } else if (a.name == "is_scheduled") {
      m.is_scheduled = a.value == "true";
    } else if (a.name == "num_partitions" || a.name == "replica_count") {
      const std::int64_t n = raw.at.integer(fmt::format("an integer for {}", a.name));
      if (n < 1) raw.at.fail(a.pos, fmt::format("{} must be at least 1", a.name));
      (a.name == "num_partitions" ? m.num_partitions : m.replica_count) = n;
    } else if (a.name == "input_output_alias") {
      m.input_output_alias = io_aliases(raw.at);
    }
    m.attributes.push_back(std::move(raw.attr));
  }

  // { {0}: (1, {}, may-alias), {1}: (2, {0}) }
  static std::vector<std::int64_t> index_list(Cursor& c) {
    std::vector<std::int64_t> out;
    c.expect('{', "opening a shape index");
    if (c.eat('}')) return out;
    do out.push_back(c.integer("a shape index"));
    while (c.eat(','));
    c.expect('}', "closing the shape index");
    return out;
  }
  static std::vector<IoAlias> io_aliases(Cursor c) {
    std::vector<IoAlias> out;
    c.expect('{', "opening input_output_alias");
    if (c.eat('}')) return out;
    do {
      IoAlias a;
      a.output_index = index_list(c);
      c.expect(':', "after the output index of input_output_alias");
      c.expect('(', "opening the aliased parameter");
      a.parameter_number = c.integer("a parameter number");
      c.expect(',', "after the parameter number");
      a.parameter_index = index_list(c);
      if (c.eat(',')) a.kind = std::string(c.name());
      c.expect(')', "closing the aliased parameter");
      out.push_back(std::move(a));
    } while (c.eat(','));
    c.expect('}', "closing input_output_alias");
    return out;
  }

  Computation computation(std::size_t index) {
    Computation comp;
    comp.pos = c_.here();
    std::string_view first = c_.name();
    if (first == "ENTRY") {
      comp.is_entry = true;
      first = c_.name();
    }
    if (first.empty()) c_.fail(comp.pos, fmt::format("expected a computation, found '{}'", c_.peek()));
    comp.name = std::string(first);
    c_.skip_ws();
    if (c_.peek() == '(') {  // the signature; the parameters are read from their instructions
      c_.skip_group();
      c_.skip_ws();
      if (c_.at_end()) c_.truncated("'->' of the signature");
      if (c_.peek() != '-' || c_.peek(1) != '>') c_.fail("expected '->' after the computation's parameters");
      c_.advance();
      c_.advance();
      ShapeReader{c_, 0, &layouts_}.shape();
    }
    c_.expect('{', fmt::format("opening computation '{}'", comp.name));
    std::unordered_map<std::string_view, std::size_t> defined;
    // Operands are resolved as each instruction is read (a valid module defines them first); a
    // name not yet defined waits in `unresolved` for the error that names it.
    std::vector<std::pair<std::string_view, SourcePos>> operand_names;
    std::vector<std::tuple<std::string_view, SourcePos, std::size_t>> unresolved;
    std::optional<std::size_t> root;
    // One instruction a line, as XLA prints them, up to the first '}' opening a line: reserved
    // once, the instructions are never moved by growth (a vector grown by doubling would hold up
    // to three times a large computation at its last move).
    const std::size_t body_end = std::min(c_.text.find("\n}", c_.pos), c_.text.size());
    const auto lines = static_cast<std::size_t>(
        std::count(c_.text.begin() + static_cast<std::ptrdiff_t>(c_.pos), c_.text.begin() + static_cast<std::ptrdiff_t>(body_end), '\n'));
    comp.instructions.reserve(lines + 1);
    while (true) {
      c_.skip_ws();
      if (c_.at_end()) c_.truncated(fmt::format("'}}' closing computation '{}'", comp.name));
      if (c_.peek() == '}') {
        c_.advance();
        break;
      }
      const std::size_t i = comp.instructions.size();
      operand_names.clear();
      comp.instructions.push_back(instruction(index, i, operand_names));
      Instruction& inst = comp.instructions.back();
      inst.operands.reserve(operand_names.size());
      for (const auto& [name, at] : operand_names) {
        const auto found = defined.find(name);
        if (found == defined.end()) {
          unresolved.emplace_back(name, at, i);
          continue;
        }
        inst.operands.push_back(found->second);
      }
      std::string_view key = c_.text.substr(name_offset_, inst.name.size());
      if (const auto [it, fresh] = defined.emplace(key, i); !fresh)
        c_.fail(inst.pos, fmt::format("duplicate name '{}' (first defined at line {})", inst.name,
                                      comp.instructions[it->second].pos.line));
      if (inst.is_root) {
        if (root) c_.fail(inst.pos, fmt::format("a second ROOT in computation '{}'", comp.name));
        root = i;
      }
    }
    if (comp.instructions.empty()) c_.fail(comp.pos, fmt::format("computation '{}' has no instructions", comp.name));
    // execution_thread="..." after the closing brace (async computations)
    if (c_.eat(',')) (void)attribute();
    comp.root = root.value_or(comp.instructions.size() - 1);
    comp.instructions[comp.root].is_root = true;
    for (const auto& [name, at, i] : unresolved) {
      const auto found = defined.find(name);
      if (found == defined.end())
        c_.fail(at, fmt::format("undefined operand '{}' in computation '{}'", name, comp.name));
      c_.fail(at, fmt::format("'{}' is used before its definition (line {})", name,
                              comp.instructions[found->second].pos.line));
    }
    for (std::size_t i = 0; i < comp.instructions.size(); ++i) {
      Instruction& inst = comp.instructions[i];
      if (inst.opcode == Opcode::Parameter) {
        const auto n = static_cast<std::size_t>(inst.parameter_number);
        if (n >= comp.instructions.size())
          c_.fail(inst.pos, fmt::format("parameter({}) in computation '{}' of {} instructions: parameters are numbered from 0",
                                        n, comp.name, comp.instructions.size()));
        if (comp.parameters.size() <= n) comp.parameters.resize(n + 1, SIZE_MAX);
        if (comp.parameters[n] != SIZE_MAX)
          c_.fail(inst.pos, fmt::format("parameter({}) appears twice in computation '{}'", n, comp.name));
        comp.parameters[n] = i;
      }
    }
    for (std::size_t n = 0; n < comp.parameters.size(); ++n)
      if (comp.parameters[n] == SIZE_MAX)
        c_.fail(comp.pos, fmt::format("computation '{}' has no parameter({})", comp.name, n));
    return comp;
  }

  Instruction instruction(std::size_t comp, std::size_t index,
                          std::vector<std::pair<std::string_view, SourcePos>>& operands) {
    Instruction inst;
    const std::size_t start = c_.pos;
    c_.skip_ws();
    inst.pos = c_.here();
    std::size_t name_start = c_.pos + (c_.peek() == '%' ? 1 : 0);
    std::string_view name = c_.name();
    if (name == "ROOT") {
      inst.is_root = true;
      c_.skip_ws();
      inst.pos = c_.here();
      name_start = c_.pos + (c_.peek() == '%' ? 1 : 0);
      name = c_.name();
    }
    if (name.empty()) c_.fail(fmt::format("expected an instruction or '}}', found '{}'", c_.peek()));
    inst.name = std::string(name);
    name_offset_ = name_start;
    c_.expect('=', fmt::format("after instruction name '{}'", name));
    inst.shape = ShapeReader{c_, 0, &layouts_}.shape();
    c_.skip_ws();
    const SourcePos op_at = c_.here();
    const std::size_t op_start = c_.pos;
    while (!c_.at_end() && (is_alpha(c_.peek()) || is_digit(c_.peek()) || c_.peek() == '-')) c_.advance();
    const std::string_view op_text = c_.text.substr(op_start, c_.pos - op_start);
    if (op_text.empty()) {
      if (c_.at_end()) c_.truncated("an opcode");
      c_.fail(op_at, fmt::format("expected an opcode, found '{}'", c_.peek()));
    }
    const auto op = opcode_from_name(op_text);
    if (!op) c_.fail(op_at, fmt::format("unknown opcode '{}'", op_text));
    inst.opcode = *op;
    c_.expect('(', fmt::format("after opcode '{}'", op_text));
    std::size_t count = 0;
    if (*op == Opcode::Parameter) {
      const std::int64_t number = c_.integer("a parameter number");
      if (number < 0) c_.fail(op_at, "a negative parameter number");
      if (number > INT32_MAX) c_.fail(op_at, fmt::format("parameter({}): more than 2^31 - 1", number));
      inst.parameter_number = static_cast<std::int32_t>(number);
      c_.expect(')', "closing parameter(");
    } else if (*op == Opcode::Constant) {
      // The literal, verbatim: scan to the ')' that closes constant(.
      c_.skip_ws();
      const std::size_t lit = c_.pos;
      std::size_t depth = 0;
      while (true) {
        if (c_.at_end()) c_.truncated("')' closing the constant");
        const char ch = c_.peek();
        if (ch == '"') {
          c_.skip_string();
          continue;
        }
        if (ch == '(' || ch == '{' || ch == '[') ++depth;
        if (ch == ')' || ch == '}' || ch == ']') {
          if (depth == 0) break;
          --depth;
        }
        c_.advance();
      }
      std::string_view literal = c_.text.substr(lit, c_.pos - lit);
      while (!literal.empty() && is_space(literal.back())) literal.remove_suffix(1);
      inst.literal_begin = static_cast<std::uint32_t>(lit);
      inst.literal_end = static_cast<std::uint32_t>(lit + literal.size());
      c_.expect(')', "closing constant(");
    } else if (!c_.eat(')')) {
      do {
        operand(operands);
        ++count;
      } while (c_.eat(','));
      c_.expect(')', fmt::format("closing the operands of '{}'", op_text));
    }
    const int arity = opcode_arity(*op);
    if (arity >= 0 && count != static_cast<std::size_t>(arity))
      c_.fail(op_at, fmt::format("'{}' takes {} operand{}, not {}", op_text, arity, arity == 1 ? "" : "s", count));
    while (c_.eat(',')) {
      RawAttribute raw = attribute();
      instruction_attribute(inst, raw, comp, index);
      inst.attributes.push_back(std::move(raw.attr));
    }
    detail::check_typed_attributes(inst, source_);
    inst.text_begin = static_cast<std::uint32_t>(start);
    inst.text_end = static_cast<std::uint32_t>(c_.pos);
    return inst;
  }

  // An operand: a name, after the operand's shape in the older long form "f32[8]{0} %x".
  void operand(std::vector<std::pair<std::string_view, SourcePos>>& operands) {
    c_.skip_ws();
    bool shaped = c_.peek() == '(';
    if (!shaped && is_alpha(c_.peek())) {
      std::size_t k = c_.pos;
      while (k < c_.end && (is_alpha(c_.text[k]) || is_digit(c_.text[k]))) ++k;
      shaped = k < c_.end && c_.text[k] == '[' && type_from_name(c_.text.substr(c_.pos, k - c_.pos));
    }
    if (shaped) ShapeReader{c_, 0, &layouts_}.shape();
    c_.skip_ws();
    const SourcePos at = c_.here();
    const std::string_view name = c_.name();
    if (name.empty()) {
      if (c_.at_end()) c_.truncated("an operand");
      c_.fail(at, fmt::format("expected an operand name, found '{}'", c_.peek()));
    }
    operands.emplace_back(name, at);
  }

  void instruction_attribute(Instruction& inst, const RawAttribute& raw, std::size_t comp, std::size_t index) {
    const Attribute& a = raw.attr;
    auto callee = [&](CalleeRef::Role role) {
      // One name, or a list {%a, %b}.
      Cursor c = raw.at;
      const bool list = c.eat('{');
      if (list && c.eat('}')) return;
      do {
        c.skip_ws();
        const SourcePos at = c.here();
        const std::string_view name = c.name();
        if (name.empty()) c.fail(at, fmt::format("expected a computation name in {}", a.name));
        callees_.push_back({comp, index, std::string(name), at, role});
      } while (list && c.eat(','));
      if (list) c.expect('}', fmt::format("closing {}", a.name));
    };
    if (a.name == "metadata") {
      if (metadata_.size() == UINT32_MAX) c_.fail(a.pos, "more than 2^32 - 1 metadata attributes");
      inst.metadata = static_cast<std::uint32_t>(metadata_.size());
      metadata_.push_back(parse_metadata(a.value));
    } else if (a.name == "index" && inst.opcode == Opcode::GetTupleElement) {
      Cursor c = raw.at;
      const std::int64_t index = c.integer("a tuple index");
      if (index < 0) c.fail(a.pos, "a negative tuple index");
      if (index > INT32_MAX) c.fail(a.pos, fmt::format("tuple index {}: more than 2^31 - 1", index));
      inst.tuple_index = static_cast<std::int32_t>(index);
    } else if (a.name == "to_apply" || a.name == "calls" || a.name == "called_computations" ||
               (inst.opcode == Opcode::SelectAndScatter && (a.name == "select" || a.name == "scatter"))) {
      callee(CalleeRef::Called);
    } else if (a.name == "condition") {
      callee(CalleeRef::Condition);
    } else if (a.name == "body") {
      callee(CalleeRef::Body);
    } else if (a.name == "branch_computations") {
      callee(CalleeRef::Branch);
    } else if (a.name == "true_computation") {
      callee(CalleeRef::TrueBranch);
    } else if (a.name == "false_computation") {
      callee(CalleeRef::FalseBranch);
    } else {
      // dimensions, dot and convolution dimension numbers, window, slice, padding, group counts
      (void)detail::read_typed_attribute(inst, a, raw.at.here(), source_);
    }
  }

  std::string source_;  // before c_, which points at it
  std::string text_;    // likewise
  Cursor c_;
  std::size_t name_offset_ = 0;
  LayoutCache layouts_;
  std::vector<Metadata> metadata_{Metadata{}};  // Module::metadata, filled while reading
  std::unordered_map<std::string, std::size_t> names_;
  std::vector<CalleeRef> callees_;
};

}  // namespace

Module parse_hlo(std::string text, std::string source) {
  check_text(text, source);
  Parser parser(std::move(text), std::move(source));
  return parser.module();
}

Shape parse_shape(std::string_view text, const std::string& source) {
  check_text(text, source);
  Cursor c;
  c.text = text;
  c.source = &source;
  c.end = text.size();
  Shape shape = ShapeReader{c}.shape();
  c.skip_ws();
  if (!c.at_end()) c.fail(fmt::format("unexpected '{}' after the shape", c.peek()));
  return shape;
}

bool looks_like_hlo_text(std::string_view text) {
  Cursor c;
  c.text = text;
  c.end = text.size();
  c.skip_byte_order_mark();
  return !c.skip_blank() && c.word() == "HloModule";
}

Module read_hlo_file(const std::filesystem::path& path) {
  const std::string text = read_input_file(path, kHloInput);
  return parse_hlo(text, path == "-" ? std::string("standard input") : path.string());
}

}  // namespace tpuemu::hlo
