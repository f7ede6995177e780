// SPDX-License-Identifier: Apache-2.0
// The typed attributes (tpuemu/hlo/hlo_attributes.h): read from their text once, by the reader's
// hook (attribute_reader.h), and printed back as XLA prints them. The grammar of each value is
// XLA's (xla/hlo/parser/hlo_parser.cc and its lexer); the checks are the ones XLA's shape inference
// makes on the value alone (a stride is positive, a slice starts at 0 or later...), so a value
// accepted here has a meaning, and the executor and analyses need not check its form again.
#include "tpuemu/hlo/hlo_attributes.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attribute_reader.h"
#include "tpuemu/base/error.h"

namespace tpuemu::hlo {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string plural(std::size_t n, std::string_view noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

// A scanner over one attribute's value. Its errors name the attribute and point at their byte of
// the file: a braced value may span lines, with whitespace and comments between its tokens as
// anywhere else in the module (the parser has already checked its brackets and comments close).
class ValueReader {
 public:
  ValueReader(std::string_view name, std::string_view text, SourcePos at, const std::string& source)
      : name_(name), text_(text), source_(source), line_(at.line), col_(at.col) {}

  SourcePos here() const { return {line_, col_}; }
  bool at_end() const { return pos_ >= text_.size(); }
  char peek(std::size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }

  [[noreturn]] void fail(SourcePos at, std::string_view cause) const {
    throw Error::at(source_, at.line, at.col, fmt::format("malformed {}: {}", name_, cause));
  }
  [[noreturn]] void fail(std::string_view cause) const { fail(here(), cause); }
  // What stands at the cursor, for "expected X, found Y".
  std::string found() const {
    return at_end() ? "the end of the value" : fmt::format("'{}'", peek());
  }

  void skip_blank() {
    while (!at_end()) {
      if (is_space(peek())) {
        advance();
      } else if (peek() == '/' && peek(1) == '*') {
        advance();
        advance();
        while (!at_end() && !(peek() == '*' && peek(1) == '/')) advance();
        if (!at_end()) {
          advance();
          advance();
        }
      } else if (peek() == '/' && peek(1) == '/') {
        while (!at_end() && peek() != '\n') advance();
      } else {
        return;
      }
    }
  }
  // The next token is c (blanks before it skipped): consumes it.
  bool eat(char c) {
    skip_blank();
    if (at_end() || peek() != c) return false;
    advance();
    return true;
  }
  // c right at the cursor, inside one token such as 3x3 or 1_1: consumes it.
  bool eat_adjacent(char c) {
    if (at_end() || peek() != c) return false;
    advance();
    return true;
  }
  void expect(char c, std::string_view context) {
    if (!eat(c)) fail(fmt::format("expected '{}' {}, found {}", c, context, found()));
  }

  // -?[0-9]+ at the cursor (no blanks skipped: callers inside a token must not skip them).
  std::int64_t integer(std::string_view what) {
    const SourcePos at = here();
    const std::size_t start = pos_;
    if (peek() == '-') advance();
    while (!at_end() && is_digit(peek())) advance();
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text_.data() + start, text_.data() + pos_, value);
    if (ec == std::errc::result_out_of_range)
      fail(at, fmt::format("{} does not fit 64 bits", what));
    if (ec != std::errc() || end != text_.data() + pos_) {
      pos_ = start;
      fail(at, fmt::format("expected {}, found {}", what, found()));
    }
    return value;
  }

  // A field name of a window: letters and '_'.
  std::string_view word() {
    const std::size_t start = pos_;
    while (!at_end() && ((peek() >= 'a' && peek() <= 'z') || peek() == '_')) advance();
    return text_.substr(start, pos_ - start);
  }

  void finish() {
    skip_blank();
    if (!at_end()) fail(fmt::format("unexpected '{}' after the value", peek()));
  }

 private:
  std::string_view name_;
  std::string_view text_;
  const std::string& source_;
  std::size_t pos_ = 0;
  std::uint32_t line_;
  std::uint32_t col_;
};

// A number of the value and where it stood, for checks made once all are read.
struct Placed {
  std::int64_t value;
  SourcePos at;
};

// {1,0}, {}: dimension numbers, each 0 or more and at most once.
std::vector<std::int64_t> dimension_list(ValueReader& r) {
  std::vector<std::int64_t> out;
  r.expect('{', "opening the list of dimensions");
  if (r.eat('}')) return out;
  do {
    r.skip_blank();
    const SourcePos at = r.here();
    const std::int64_t d = r.integer("a dimension number");
    if (d < 0) r.fail(at, fmt::format("dimension {} is negative", d));
    if (std::find(out.begin(), out.end(), d) != out.end())
      r.fail(at, fmt::format("dimension {} appears twice", d));
    out.push_back(d);
  } while (r.eat(','));
  r.expect('}', "closing the list of dimensions");
  return out;
}

// 3x3, 2: one number per window dimension, joined by 'x' inside one token.
std::vector<Placed> dims_by_x(ValueReader& r, std::string_view field) {
  std::vector<Placed> out;
  r.skip_blank();
  do {
    const SourcePos at = r.here();
    out.push_back({r.integer(fmt::format("a number for {}", field)), at});
  } while (r.eat_adjacent('x'));
  return out;
}

// pad=1_1x0_2: LOW_HIGH per window dimension.
std::vector<std::pair<Placed, Placed>> window_pads(ValueReader& r) {
  std::vector<std::pair<Placed, Placed>> out;
  r.skip_blank();
  do {
    const SourcePos low_at = r.here();
    const std::int64_t low = r.integer("a low padding in pad");
    if (!r.eat_adjacent('_'))
      r.fail(
          fmt::format("expected '_' between the low and high padding of pad, found {}", r.found()));
    const SourcePos high_at = r.here();
    const std::int64_t high = r.integer("a high padding in pad");
    if (!r.at_end() && r.peek() == '_')
      r.fail("a window's pad is LOW_HIGH per dimension (no interior padding)");
    out.push_back({{low, low_at}, {high, high_at}});
  } while (r.eat_adjacent('x'));
  return out;
}

constexpr std::string_view kWindowFields =
    "size, stride, pad, lhs_dilate, rhs_dilate, rhs_reversal";

// {size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=2x2 rhs_reversal=0x1}: the fields in
// any order, each at most once; every field given has one entry per dimension of size.
Window window(ValueReader& r) {
  r.expect('{', "opening the window");
  struct Field {
    std::string_view name;
    std::optional<SourcePos> at;
    std::vector<Placed> values;
  };
  std::array<Field, 5> fields{{{"size", {}, {}},
                               {"stride", {}, {}},
                               {"lhs_dilate", {}, {}},
                               {"rhs_dilate", {}, {}},
                               {"rhs_reversal", {}, {}}}};
  std::optional<SourcePos> pad_at;
  std::vector<std::pair<Placed, Placed>> pads;
  while (!r.eat('}')) {
    const SourcePos at = r.here();
    const std::string_view key = r.word();
    if (key.empty())
      r.fail(
          fmt::format("expected a window field ({}) or '}}', found {}", kWindowFields, r.found()));
    const auto field =
        std::find_if(fields.begin(), fields.end(), [&](const Field& f) { return f.name == key; });
    if (field == fields.end() && key != "pad")
      r.fail(at, fmt::format("unknown window field '{}' (the fields are {})", key, kWindowFields));
    std::optional<SourcePos>& seen = field == fields.end() ? pad_at : field->at;
    if (seen)
      r.fail(at, fmt::format("a second {}= in the window (first at {}:{})", key, seen->line,
                             seen->col));
    seen = at;
    if (!r.eat_adjacent('='))
      r.fail(fmt::format("expected '=' after window field '{}', found {}", key, r.found()));
    if (field == fields.end()) {
      pads = window_pads(r);
    } else {
      field->values = dims_by_x(r, key);
    }
    r.skip_blank();
  }
  const Field& size = fields[0];
  const std::size_t rank = size.values.size();
  const auto check_count = [&](std::string_view name, std::optional<SourcePos> at,
                               std::size_t count) {
    if (at && count != rank)
      r.fail(*at, fmt::format("{} has {}, size has {}", name, plural(count, "dimension"), rank));
  };
  for (const Field& f : fields) check_count(f.name, f.at, f.values.size());
  check_count("pad", pad_at, pads.size());
  for (const Placed& s : size.values)
    if (s.value < 0) r.fail(s.at, fmt::format("window size {} is negative", s.value));
  for (std::size_t k = 1; k <= 3; ++k)
    for (const Placed& v : fields[k].values)
      if (v.value < 1) r.fail(v.at, fmt::format("{} {} is not positive", fields[k].name, v.value));
  for (const Placed& v : fields[4].values)
    if (v.value != 0 && v.value != 1)
      r.fail(v.at, fmt::format("rhs_reversal {} is not 0 or 1", v.value));
  Window w;
  w.dimensions.resize(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    WindowDimension& dim = w.dimensions[d];
    dim.size = size.values[d].value;
    if (fields[1].at) dim.stride = fields[1].values[d].value;
    if (fields[2].at) dim.base_dilation = fields[2].values[d].value;
    if (fields[3].at) dim.window_dilation = fields[3].values[d].value;
    if (fields[4].at) dim.window_reversal = fields[4].values[d].value == 1;
    if (pad_at) {
      dim.padding_low = pads[d].first.value;
      dim.padding_high = pads[d].second.value;
    }
  }
  return w;
}

// One side of dim_labels: the text of lhs, rhs or the output, where it starts, its letters.
struct LabelPart {
  std::string_view role;        // "input", "kernel", "output"
  std::array<char, 2> letters;  // b f, i o
  std::string text;
  std::vector<SourcePos> at;  // per character
  SourcePos start;
};

// The dimensions a part names: the two letters' positions and the spatial dimensions in order.
struct PartDimensions {
  std::array<std::int64_t, 2> letter;
  std::vector<std::int64_t> spatial;
};

PartDimensions part_dimensions(const ValueReader& r, const LabelPart& p) {
  PartDimensions out{{-1, -1}, {}};
  std::vector<std::size_t> digits;  // indices into p.text
  for (std::size_t i = 0; i < p.text.size(); ++i) {
    const char c = p.text[i];
    if (c == '?') continue;
    if (c == p.letters[0] || c == p.letters[1]) {
      std::int64_t& slot = out.letter[c == p.letters[0] ? 0 : 1];
      if (slot >= 0)
        r.fail(p.at[i], fmt::format("'{}' appears twice in the {} labels '{}'", c, p.role, p.text));
      slot = static_cast<std::int64_t>(i);
    } else if (is_digit(c)) {
      digits.push_back(i);
    } else {
      r.fail(p.at[i], fmt::format("'{}' is not a label of the {} ({}, {}, a spatial digit or ?)", c,
                                  p.role, p.letters[0], p.letters[1]));
    }
  }
  for (std::size_t k = 0; k < 2; ++k)
    if (out.letter[k] < 0)
      r.fail(p.start, fmt::format("the {} labels '{}' have no '{}'", p.role, p.text, p.letters[k]));
  out.spatial.assign(digits.size(), -1);
  for (const std::size_t i : digits) {
    const auto k = static_cast<std::size_t>(p.text[i] - '0');
    if (k >= digits.size())
      r.fail(p.at[i], fmt::format("spatial dimension {} in the {} labels '{}' of {}", k, p.role,
                                  p.text, plural(digits.size(), "spatial dimension")));
    if (out.spatial[k] >= 0)
      r.fail(p.at[i],
             fmt::format("'{}' appears twice in the {} labels '{}'", p.text[i], p.role, p.text));
    out.spatial[k] = static_cast<std::int64_t>(i);
  }
  return out;
}

// b01f_01io->b01f, b012f_012io->b012f, bf_io->bf, b0f_0io->b0f: each side names its batch and
// feature dimensions (b f; i o for the kernel) once and its spatial dimensions 0..n-1 once, n the
// same on all three sides; '?' is a dimension none names.
ConvolutionDimensionNumbers dim_labels(ValueReader& r) {
  std::array<LabelPart, 3> parts{{{"input", {'b', 'f'}, {}, {}, r.here()},
                                  {"kernel", {'i', 'o'}, {}, {}, {}},
                                  {"output", {'b', 'f'}, {}, {}, {}}}};
  for (std::size_t k = 0; k < 3; ++k) {
    LabelPart& p = parts[k];
    p.start = r.here();
    while (!r.at_end() && !(k == 0 && r.peek() == '_') &&
           !(k == 1 && r.peek() == '-' && r.peek(1) == '>')) {
      p.at.push_back(r.here());
      p.text += r.peek();
      r.advance();
    }
    if (k < 2 && r.at_end())
      r.fail(parts[0].start, "expected INPUT_KERNEL->OUTPUT labels such as b01f_01io->b01f");
    if (k == 0) r.advance();
    if (k == 1) {
      r.advance();
      r.advance();
    }
  }
  std::array<PartDimensions, 3> dims;
  for (std::size_t k = 0; k < 3; ++k) dims[k] = part_dimensions(r, parts[k]);
  for (std::size_t k = 1; k < 3; ++k)
    if (dims[k].spatial.size() != dims[0].spatial.size())
      r.fail(parts[k].start,
             fmt::format("the {} labels '{}' have {}, the input labels '{}' {}", parts[k].role,
                         parts[k].text, plural(dims[k].spatial.size(), "spatial dimension"),
                         parts[0].text, dims[0].spatial.size()));
  ConvolutionDimensionNumbers n;
  n.input_batch_dimension = dims[0].letter[0];
  n.input_feature_dimension = dims[0].letter[1];
  n.input_spatial_dimensions = dims[0].spatial;
  n.kernel_input_feature_dimension = dims[1].letter[0];
  n.kernel_output_feature_dimension = dims[1].letter[1];
  n.kernel_spatial_dimensions = dims[1].spatial;
  n.output_batch_dimension = dims[2].letter[0];
  n.output_feature_dimension = dims[2].letter[1];
  n.output_spatial_dimensions = dims[2].spatial;
  return n;
}

// {[0:4], [0:128:2]}, {}: per dimension start 0 or more, limit start or more, stride 1 or more.
std::vector<SliceDimension> slice_ranges(ValueReader& r) {
  std::vector<SliceDimension> out;
  r.expect('{', "opening the slice");
  if (r.eat('}')) return out;
  do {
    r.expect('[', "opening a slice range [start:limit] or [start:limit:stride]");
    SliceDimension s;
    r.skip_blank();
    const SourcePos start_at = r.here();
    s.start = r.integer("a slice start");
    r.expect(':', "after the slice start");
    r.skip_blank();
    const SourcePos limit_at = r.here();
    s.limit = r.integer("a slice limit");
    std::optional<SourcePos> stride_at;
    if (r.eat(':')) {
      r.skip_blank();
      stride_at = r.here();
      s.stride = r.integer("a slice stride");
    }
    r.expect(']', "closing the slice range");
    if (s.start < 0) r.fail(start_at, fmt::format("slice start {} is negative", s.start));
    if (s.limit < s.start)
      r.fail(limit_at, fmt::format("slice limit {} is below its start {}", s.limit, s.start));
    if (stride_at && s.stride < 1)
      r.fail(*stride_at, fmt::format("slice stride {} is not positive", s.stride));
    out.push_back(s);
  } while (r.eat(','));
  r.expect('}', "closing the slice");
  return out;
}

// 0_0x1_1_2: LOW_HIGH or LOW_HIGH_INTERIOR per dimension, joined by 'x'; the interior 0 or more.
PaddingConfig padding_config(ValueReader& r) {
  PaddingConfig out;
  do {
    PaddingDimension d;
    d.edge_padding_low = r.integer("a low edge padding");
    if (!r.eat_adjacent('_'))
      r.fail(fmt::format("expected '_' between the low and high padding, found {}", r.found()));
    d.edge_padding_high = r.integer("a high edge padding");
    if (r.eat_adjacent('_')) {
      const SourcePos at = r.here();
      d.interior_padding = r.integer("an interior padding");
      if (d.interior_padding < 0)
        r.fail(at, fmt::format("interior padding {} is negative", d.interior_padding));
    }
    out.dimensions.push_back(d);
  } while (r.eat_adjacent('x'));
  return out;
}

// The rank of an array instruction whose attribute has one entry per dimension of its own shape.
void check_rank(const ValueReader& r, SourcePos at, const Instruction& inst, std::size_t entries,
                std::string_view entry) {
  if (!inst.shape.is_array() || entries == inst.shape.dims.size()) return;
  r.fail(at, fmt::format("{} for the rank-{} shape {}", plural(entries, entry),
                         inst.shape.dims.size(), inst.shape.to_string()));
}

constexpr std::array<std::string_view, 4> kDotAttributes = {
    "lhs_batch_dims", "rhs_batch_dims", "lhs_contracting_dims", "rhs_contracting_dims"};

}  // namespace

std::string dimensions_to_string(const std::vector<std::int64_t>& dimensions) {
  return fmt::format("{{{}}}", fmt::join(dimensions, ","));
}

std::string to_string(const DotDimensionNumbers& numbers) {
  std::vector<std::string> parts;
  if (!numbers.lhs_batch_dimensions.empty())
    parts.push_back("lhs_batch_dims=" + dimensions_to_string(numbers.lhs_batch_dimensions));
  parts.push_back("lhs_contracting_dims=" +
                  dimensions_to_string(numbers.lhs_contracting_dimensions));
  if (!numbers.rhs_batch_dimensions.empty())
    parts.push_back("rhs_batch_dims=" + dimensions_to_string(numbers.rhs_batch_dimensions));
  parts.push_back("rhs_contracting_dims=" +
                  dimensions_to_string(numbers.rhs_contracting_dimensions));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string to_string(const ConvolutionDimensionNumbers& numbers) {
  // Each side as long as its highest named dimension; a position none names prints '?'.
  const auto side = [](std::int64_t first, char first_label, std::int64_t second, char second_label,
                       const std::vector<std::int64_t>& spatial) {
    std::int64_t last = std::max(first, second);
    for (const std::int64_t d : spatial) last = std::max(last, d);
    std::string labels(static_cast<std::size_t>(last + 1), '?');
    labels[static_cast<std::size_t>(first)] = first_label;
    labels[static_cast<std::size_t>(second)] = second_label;
    for (std::size_t k = 0; k < spatial.size(); ++k)
      labels[static_cast<std::size_t>(spatial[k])] = static_cast<char>('0' + k);
    return labels;
  };
  return side(numbers.input_batch_dimension, 'b', numbers.input_feature_dimension, 'f',
              numbers.input_spatial_dimensions) +
         "_" +
         side(numbers.kernel_input_feature_dimension, 'i', numbers.kernel_output_feature_dimension,
              'o', numbers.kernel_spatial_dimensions) +
         "->" +
         side(numbers.output_batch_dimension, 'b', numbers.output_feature_dimension, 'f',
              numbers.output_spatial_dimensions);
}

std::string to_string(const Window& window) {
  const auto& dims = window.dimensions;
  const auto any = [&](auto differs) { return std::any_of(dims.begin(), dims.end(), differs); };
  std::vector<std::string> fields;
  const auto field = [&](std::string_view name, auto format) {
    std::vector<std::string> values;
    for (const WindowDimension& d : dims) values.push_back(format(d));
    fields.push_back(fmt::format("{}={}", name, fmt::join(values, "x")));
  };
  if (!dims.empty()) field("size", [](const WindowDimension& d) { return std::to_string(d.size); });
  if (any([](const WindowDimension& d) { return d.stride != 1; }))
    field("stride", [](const WindowDimension& d) { return std::to_string(d.stride); });
  if (any([](const WindowDimension& d) { return d.padding_low != 0 || d.padding_high != 0; }))
    field("pad", [](const WindowDimension& d) {
      return fmt::format("{}_{}", d.padding_low, d.padding_high);
    });
  if (any([](const WindowDimension& d) { return d.base_dilation != 1; }))
    field("lhs_dilate", [](const WindowDimension& d) { return std::to_string(d.base_dilation); });
  if (any([](const WindowDimension& d) { return d.window_dilation != 1; }))
    field("rhs_dilate", [](const WindowDimension& d) { return std::to_string(d.window_dilation); });
  if (any([](const WindowDimension& d) { return d.window_reversal; }))
    field("rhs_reversal",
          [](const WindowDimension& d) { return std::string(d.window_reversal ? "1" : "0"); });
  return fmt::format("{}", fmt::join(fields, " "));
}

std::string to_string(const PaddingConfig& padding) {
  const auto& dims = padding.dimensions;
  const bool interior = std::any_of(
      dims.begin(), dims.end(), [](const PaddingDimension& d) { return d.interior_padding != 0; });
  std::vector<std::string> out;
  for (const PaddingDimension& d : dims)
    out.push_back(interior ? fmt::format("{}_{}_{}", d.edge_padding_low, d.edge_padding_high,
                                         d.interior_padding)
                           : fmt::format("{}_{}", d.edge_padding_low, d.edge_padding_high));
  return fmt::format("{}", fmt::join(out, "x"));
}

std::string to_string(const std::vector<SliceDimension>& slice) {
  const bool strides = std::any_of(slice.begin(), slice.end(),
                                   [](const SliceDimension& s) { return s.stride != 1; });
  std::vector<std::string> out;
  for (const SliceDimension& s : slice)
    out.push_back(strides ? fmt::format("[{}:{}:{}]", s.start, s.limit, s.stride)
                          : fmt::format("[{}:{}]", s.start, s.limit));
  return fmt::format("{{{}}}", fmt::join(out, ", "));
}

namespace detail {

bool read_typed_attribute(Instruction& inst, const Attribute& attribute, SourcePos value_pos,
                          const std::string& source) {
  const std::string_view name = attribute.name;
  const bool dot =
      std::find(kDotAttributes.begin(), kDotAttributes.end(), name) != kDotAttributes.end();
  const bool typed = dot || name == "dimensions" || name == "dim_labels" || name == "window" ||
                     name == "slice" || name == "padding" || name == "feature_group_count" ||
                     name == "batch_group_count";
  if (!typed) return false;
  ValueReader r(name, attribute.value, value_pos, source);
  // One value per attribute: XLA refuses a second, and the typed field and the verbatim list
  // would otherwise disagree on which one holds.
  if (const Attribute* first = inst.attribute(name))
    r.fail(attribute.pos, fmt::format("a second {}= on '{}' (first at {}:{})", name, inst.name,
                                      first->pos.line, first->pos.col));
  TypedAttributes& t = inst.typed_for_writing();
  if (dot) {
    DotDimensionNumbers& n = t.dot_dims ? *t.dot_dims : t.dot_dims.emplace();
    std::vector<std::int64_t>& list = name == "lhs_batch_dims"   ? n.lhs_batch_dimensions
                                      : name == "rhs_batch_dims" ? n.rhs_batch_dimensions
                                      : name == "lhs_contracting_dims"
                                          ? n.lhs_contracting_dimensions
                                          : n.rhs_contracting_dimensions;
    list = dimension_list(r);
  } else if (name == "dimensions") {
    t.dimensions = dimension_list(r);
  } else if (name == "dim_labels") {
    t.conv_dims = dim_labels(r);
  } else if (name == "window") {
    t.window = window(r);
  } else if (name == "slice") {
    t.slice = slice_ranges(r);
    if (inst.opcode == Opcode::Slice) check_rank(r, value_pos, inst, t.slice->size(), "range");
  } else if (name == "padding") {
    t.padding = padding_config(r);
    if (inst.opcode == Opcode::Pad)
      check_rank(r, value_pos, inst, t.padding->dimensions.size(), "dimension");
  } else {
    const std::int64_t count = r.integer(fmt::format("an integer for {}", name));
    if (count < 1) r.fail(value_pos, fmt::format("{} {} is not positive", name, count));
    (name == "feature_group_count" ? t.feature_group_count : t.batch_group_count) = count;
  }
  r.finish();
  return true;
}

void check_typed_attributes(const Instruction& inst, const std::string& source) {
  const TypedAttributes& t = inst.typed();
  const auto fail = [&](std::string_view name, std::string_view cause) {
    const Attribute* a = inst.attribute(name);
    throw Error::at(source, a->pos.line, a->pos.col, fmt::format("malformed {}: {}", name, cause));
  };
  if (t.dot_dims) {
    // lhs and rhs pair their contracting (and batch) dimensions one to one; reported at the rhs
    // attribute, or at the lhs one when the rhs is missing.
    const auto pair = [&](std::string_view kind, const std::vector<std::int64_t>& lhs,
                          const std::vector<std::int64_t>& rhs) {
      if (lhs.size() == rhs.size()) return;
      const std::string lhs_name = fmt::format("lhs_{}_dims", kind),
                        rhs_name = fmt::format("rhs_{}_dims", kind);
      const bool rhs_given = inst.attribute(rhs_name) != nullptr;
      fail(
          rhs_given ? rhs_name : lhs_name,
          fmt::format("{} has {}, {} {}: lhs and rhs pair them one to one", rhs_name,
                      plural(rhs.size(), fmt::format("{} dimension", kind)), lhs_name, lhs.size()));
    };
    pair("batch", t.dot_dims->lhs_batch_dimensions, t.dot_dims->rhs_batch_dimensions);
    pair("contracting", t.dot_dims->lhs_contracting_dimensions,
         t.dot_dims->rhs_contracting_dimensions);
  }
  if (t.window && t.conv_dims &&
      t.window->dimensions.size() != t.conv_dims->input_spatial_dimensions.size())
    fail("window",
         fmt::format("{} for the {} of dim_labels={}",
                     plural(t.window->dimensions.size(), "dimension"),
                     plural(t.conv_dims->input_spatial_dimensions.size(), "spatial dimension"),
                     to_string(*t.conv_dims)));
}

}  // namespace detail

}  // namespace tpuemu::hlo
