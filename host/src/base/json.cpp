// SPDX-License-Identifier: Apache-2.0
// JSON parsing with positions: nlohmann reports only a byte offset for syntax errors and nothing
// at all for semantic ones, so we track where each key was read ourselves.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "tpuemu/base/json.h"
#include "tpuemu/base/input_file.h"

namespace tpuemu {
namespace {

// Maps byte offsets to 1-based line/column.
class LineIndex {
 public:
  explicit LineIndex(std::string_view text) {
    starts_.push_back(0);
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') starts_.push_back(i + 1);
    }
  }
  JsonDocument::Position locate(std::size_t offset) const {
    auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
    const auto line = static_cast<std::size_t>(it - starts_.begin());
    return {line, offset - *(it - 1) + 1};
  }

 private:
  std::vector<std::size_t> starts_;
};

// An input iterator over the text that publishes how far the parser has read. nlohmann's
// iterator adapter reads strictly one character at a time, so when the key callback fires the
// reach is just past the key's closing quote.
class ReachIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  ReachIterator() = default;
  ReachIterator(const char* p, const char** reach) : p_(p), reach_(reach) {}
  reference operator*() const { return *p_; }
  ReachIterator& operator++() {
    ++p_;
    if (reach_ != nullptr && p_ > *reach_) *reach_ = p_;
    return *this;
  }
  ReachIterator operator++(int) {
    ReachIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const ReachIterator& o) const { return p_ == o.p_; }

 private:
  const char* p_ = nullptr;
  const char** reach_ = nullptr;
};

// nlohmann's message is "[json.exception.parse_error.101] parse error at line 1, column 5:
// syntax error ..."; keep only the part after the position, which we compute ourselves.
std::string parser_cause(const nlohmann::json::parse_error& e) {
  std::string_view what = e.what();
  const auto pe = what.find("parse error");
  if (pe != std::string_view::npos) {
    const auto colon = what.find(": ", pe);
    if (colon != std::string_view::npos) return std::string(what.substr(colon + 2));
  }
  return std::string(what);
}

std::string shown_pointer(std::string_view p) { return p.empty() ? "/" : std::string(p); }

std::string type_name(const nlohmann::json& v) {
  if (v.is_number_integer()) return "integer";
  if (v.is_number_float()) return "number";
  return v.type_name();
}

}  // namespace

std::string json_pointer_escape(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

JsonDocument JsonDocument::parse(std::string text, std::string source_name) {
  JsonDocument doc;
  doc.source_ = std::move(source_name);
  const LineIndex lines(text);
  const char* const begin = text.data();
  const char* reach = begin;

  // Our own view of the nesting, to name keys by JSON pointer and to catch duplicates.
  struct Frame {
    std::string pointer;
    bool is_array = false;
    std::size_t next_index = 0;
    std::string key;
    std::set<std::string, std::less<>> keys;
  };
  std::vector<Frame> stack;
  auto element_pointer = [&]() -> std::string {
    if (stack.empty()) return "";
    Frame& f = stack.back();
    if (f.is_array) return fmt::format("{}/{}", f.pointer, f.next_index++);
    return f.pointer + "/" + json_pointer_escape(f.key);
  };
  auto here = [&](std::size_t back) {
    const auto offset = static_cast<std::size_t>(reach - begin);
    return lines.locate(offset >= back ? offset - back : 0);
  };

  using event = nlohmann::json::parse_event_t;
  auto callback = [&](int depth, event ev, nlohmann::json& parsed) -> bool {
    switch (ev) {
      case event::object_start:
      case event::array_start: {
        if (depth >= static_cast<int>(kMaxJsonDepth)) {
          const auto pos = here(1);
          throw Error::at(doc.source_, pos.line, pos.column,
                          fmt::format("nested deeper than {} levels", kMaxJsonDepth));
        }
        std::string ptr = element_pointer();
        doc.positions_.emplace(ptr, here(1));  // the '{' or '[' just read (kept if a key)
        stack.push_back(Frame{std::move(ptr), ev == event::array_start, 0, {}, {}});
        break;
      }
      case event::key: {
        Frame& f = stack.back();
        f.key = parsed.get<std::string>();
        // reach is just past the closing quote; walk back to the unescaped opening quote.
        std::size_t q = static_cast<std::size_t>(reach - begin) - 1;
        std::size_t open = q;
        while (open > 0) {
          --open;
          if (text[open] != '"') continue;
          std::size_t slashes = 0;
          while (open - slashes > 0 && text[open - slashes - 1] == '\\') ++slashes;
          if (slashes % 2 == 0) break;
        }
        const auto pos = lines.locate(open);
        std::string ptr = f.pointer + "/" + json_pointer_escape(f.key);
        if (!f.keys.insert(f.key).second) {
          throw Error::at(doc.source_, pos.line, pos.column,
                          fmt::format("duplicate key \"{}\" in {}", f.key, shown_pointer(f.pointer)));
        }
        doc.positions_[ptr] = pos;
        break;
      }
      case event::value:
        element_pointer();  // advances the array index for scalar elements
        break;
      case event::object_end:
      case event::array_end:
        stack.pop_back();
        break;
    }
    return true;
  };

  try {
    doc.root_ = nlohmann::json::parse(ReachIterator(begin, &reach),
                                      ReachIterator(begin + text.size(), nullptr), callback);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte counts characters read including the offending one (one past the end at EOF).
    const std::size_t offset = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    const auto pos = lines.locate(offset);
    throw Error::at(doc.source_, pos.line, pos.column, parser_cause(e));
  } catch (const nlohmann::json::exception& e) {
    // e.g. out_of_range.406 "number overflow parsing '1e999'": no byte offset, but the parser has
    // just read the number. Keep the cause, drop the library's "[json.exception.x.n] " prefix.
    std::string_view what = e.what();
    if (const auto close = what.find("] "); what.starts_with("[json.exception") && close != std::string_view::npos)
      what.remove_prefix(close + 2);
    const auto pos = here(1);
    throw Error::at(doc.source_, pos.line, pos.column, std::string(what));
  }
  return doc;
}

JsonDocument JsonDocument::load(const std::filesystem::path& path) {
  return parse(read_input_file(path, kJsonInput), path == "-" ? "standard input" : path.string());
}

JsonDocument::Position JsonDocument::position_of(std::string_view json_pointer) const {
  std::string p(json_pointer);
  while (true) {
    if (auto it = positions_.find(p); it != positions_.end()) return it->second;
    if (p.empty()) return {};
    p.erase(p.rfind('/'));
  }
}

Error JsonDocument::error_at(std::string_view json_pointer, std::string_view cause) const {
  const auto pos = position_of(json_pointer);
  return Error::at(source_, pos.line, pos.column,
                   fmt::format("{}: {}", shown_pointer(json_pointer), cause));
}

nlohmann::json parse_json_file(const std::filesystem::path& path) {
  return JsonDocument::load(path).root();
}

Error json_value_error(std::string_view file, std::string_view json_pointer,
                       std::string_view cause) {
  return Error(file, fmt::format("{}: {}", shown_pointer(json_pointer), cause));
}

// ---------------------------------------------------------------------------------------------

JsonObjectReader::JsonObjectReader(const JsonDocument& doc, std::string json_pointer)
    : doc_(&doc), pointer_(std::move(json_pointer)) {
  const auto& value = doc.root().at(nlohmann::json::json_pointer(pointer_));
  if (!value.is_object()) {
    throw doc.error_at(pointer_, fmt::format("expected an object, got {}", type_name(value)));
  }
  object_ = &value;
}

std::string JsonObjectReader::member_pointer(std::string_view key) const {
  if (key.empty()) return pointer_;
  return pointer_ + "/" + json_pointer_escape(key);
}

Error JsonObjectReader::error(std::string_view key, std::string_view cause) const {
  return doc_->error_at(member_pointer(key), cause);
}

bool JsonObjectReader::has(std::string_view key) const {
  return object_->contains(std::string(key));
}

const nlohmann::json* JsonObjectReader::find(std::string_view key) {
  known_.emplace(key);
  auto it = object_->find(std::string(key));
  return it == object_->end() ? nullptr : &*it;
}

const nlohmann::json& JsonObjectReader::require(std::string_view key) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) throw error("", fmt::format("missing required key \"{}\"", key));
  return *v;
}

std::string JsonObjectReader::get_string(std::string_view key) {
  const auto& v = require(key);
  if (!v.is_string()) throw error(key, fmt::format("expected a string, got {}", type_name(v)));
  return v.get<std::string>();
}

bool JsonObjectReader::get_bool(std::string_view key) {
  const auto& v = require(key);
  if (!v.is_boolean()) throw error(key, fmt::format("expected true or false, got {}", type_name(v)));
  return v.get<bool>();
}

std::uint64_t JsonObjectReader::get_uint(std::string_view key, std::uint64_t min,
                                         std::uint64_t max) {
  const auto& v = require(key);
  if (!v.is_number_integer()) {
    throw error(key, fmt::format("expected an integer, got {} {}", type_name(v), v.dump()));
  }
  if (v.is_number_unsigned()) {
    const auto x = v.get<std::uint64_t>();
    if (x >= min && x <= max) return x;
  }
  throw error(key, fmt::format("must be in [{}, {}], got {}", min, max, v.dump()));
}

std::int64_t JsonObjectReader::get_int(std::string_view key, std::int64_t min, std::int64_t max) {
  const auto& v = require(key);
  if (!v.is_number_integer()) {
    throw error(key, fmt::format("expected an integer, got {} {}", type_name(v), v.dump()));
  }
  const bool fits = v.is_number_unsigned() ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX)
                                           : true;
  if (fits) {
    const auto x = v.get<std::int64_t>();
    if (x >= min && x <= max) return x;
  }
  throw error(key, fmt::format("must be in [{}, {}], got {}", min, max, v.dump()));
}

double JsonObjectReader::get_number(std::string_view key, double min, double max) {
  const auto& v = require(key);
  if (!v.is_number()) throw error(key, fmt::format("expected a number, got {}", type_name(v)));
  const double x = v.get<double>();
  if (!(x >= min && x <= max) || !std::isfinite(x)) {
    throw error(key, fmt::format("must be in [{}, {}], got {}", min, max, v.dump()));
  }
  return x;
}

JsonObjectReader JsonObjectReader::get_object(std::string_view key) {
  require(key);
  return JsonObjectReader(*doc_, member_pointer(key));
}

void JsonObjectReader::finish() const {
  for (const auto& [key, value] : object_->items()) {
    if (known_.contains(key)) continue;
    std::string known;
    for (const auto& k : known_) known += (known.empty() ? "" : ", ") + k;
    throw error(key, fmt::format("unknown key \"{}\" (known keys: {})", key, known));
  }
}

}  // namespace tpuemu
