// SPDX-License-Identifier: Apache-2.0
// The plain data of a parsed HLO module: names of types and opcodes, shape text and sizes.
#include "tpuemu/hlo/hlo_module.h"

#include <array>
#include <string>

namespace tpuemu::hlo {

namespace {

struct TypeInfo {
  PrimitiveType type;
  std::string_view name;
  unsigned bits;
};

// The order of the enum; names as HLO text prints them (primitive_util's lower-case names).
constexpr std::array kTypes{
    TypeInfo{PrimitiveType::Pred, "pred", 8},
    TypeInfo{PrimitiveType::S2, "s2", 2},
    TypeInfo{PrimitiveType::S4, "s4", 4},
    TypeInfo{PrimitiveType::S8, "s8", 8},
    TypeInfo{PrimitiveType::S16, "s16", 16},
    TypeInfo{PrimitiveType::S32, "s32", 32},
    TypeInfo{PrimitiveType::S64, "s64", 64},
    TypeInfo{PrimitiveType::U2, "u2", 2},
    TypeInfo{PrimitiveType::U4, "u4", 4},
    TypeInfo{PrimitiveType::U8, "u8", 8},
    TypeInfo{PrimitiveType::U16, "u16", 16},
    TypeInfo{PrimitiveType::U32, "u32", 32},
    TypeInfo{PrimitiveType::U64, "u64", 64},
    TypeInfo{PrimitiveType::F16, "f16", 16},
    TypeInfo{PrimitiveType::BF16, "bf16", 16},
    TypeInfo{PrimitiveType::F32, "f32", 32},
    TypeInfo{PrimitiveType::F64, "f64", 64},
    TypeInfo{PrimitiveType::C64, "c64", 64},
    TypeInfo{PrimitiveType::C128, "c128", 128},
    TypeInfo{PrimitiveType::F4E2M1FN, "f4e2m1fn", 4},
    TypeInfo{PrimitiveType::F8E3M4, "f8e3m4", 8},
    TypeInfo{PrimitiveType::F8E4M3, "f8e4m3", 8},
    TypeInfo{PrimitiveType::F8E4M3FN, "f8e4m3fn", 8},
    TypeInfo{PrimitiveType::F8E4M3B11FNUZ, "f8e4m3b11fnuz", 8},
    TypeInfo{PrimitiveType::F8E4M3FNUZ, "f8e4m3fnuz", 8},
    TypeInfo{PrimitiveType::F8E5M2, "f8e5m2", 8},
    TypeInfo{PrimitiveType::F8E5M2FNUZ, "f8e5m2fnuz", 8},
    TypeInfo{PrimitiveType::F8E8M0FNU, "f8e8m0fnu", 8},
    TypeInfo{PrimitiveType::Token, "token", 0},
    TypeInfo{PrimitiveType::Tuple, "tuple", 0},
};
static_assert(kTypes.size() == static_cast<std::size_t>(PrimitiveType::Tuple) + 1);

struct OpcodeInfo {
  std::string_view name;
  int arity;
};

constexpr std::array kOpcodes{
#define HLO_OPCODE(id, text, arity) OpcodeInfo{text, arity},
#include "tpuemu/hlo/hlo_opcodes.inc"
#undef HLO_OPCODE
};

}  // namespace

std::string_view type_name(PrimitiveType type) { return kTypes[static_cast<std::size_t>(type)].name; }

std::optional<PrimitiveType> type_from_name(std::string_view name) {
  // "tuple" is not a type one writes: a tuple shape is written (...).
  for (const TypeInfo& t : kTypes)
    if (t.name == name && t.type != PrimitiveType::Tuple) return t.type;
  return std::nullopt;
}

unsigned bit_width(PrimitiveType type) { return kTypes[static_cast<std::size_t>(type)].bits; }

std::string_view opcode_name(Opcode op) { return kOpcodes[static_cast<std::size_t>(op)].name; }

std::optional<Opcode> opcode_from_name(std::string_view text) {
  for (std::size_t i = 0; i < kOpcodes.size(); ++i)
    if (kOpcodes[i].name == text) return static_cast<Opcode>(i);
  return std::nullopt;
}

int opcode_arity(Opcode op) { return kOpcodes[static_cast<std::size_t>(op)].arity; }

std::uint64_t Shape::element_count() const {
  if (!is_array()) return 0;
  std::uint64_t n = 1;
  // An unbounded dynamic dimension ('?', held as -1) has no size to count.
  for (const std::int64_t d : dims) n *= d < 0 ? 0 : static_cast<std::uint64_t>(d);
  return n;
}

std::string Shape::to_string() const {
  std::string out;
  if (is_tuple()) {
    out += '(';
    for (std::size_t i = 0; i < elements.size(); ++i) {
      if (i > 0) out += ", ";
      out += elements[i].to_string();
    }
    out += ')';
    return out;
  }
  out += type_name(type);
  out += '[';
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ',';
    const bool dyn = i < dynamic.size() && dynamic[i];
    if (dyn && dims[i] < 0) {
      out += '?';
    } else {
      if (dyn) out += "<=";
      out += std::to_string(dims[i]);
    }
  }
  out += ']';
  if (layout) {
    out += '{';
    out += layout->text;
    out += '}';
  }
  return out;
}

std::string Module::instruction_text(const Instruction& instruction) const {
  constexpr std::size_t kLimit = 400;
  const std::string_view s = std::string_view(text).substr(
      instruction.text_begin, instruction.text_end - std::min(instruction.text_begin, instruction.text_end));
  std::string out;
  out.reserve(std::min(s.size(), kLimit + 3));
  bool space = false;
  for (const char ch : s) {
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += ch;
    if (out.size() >= kLimit) {
      out += "...";
      break;
    }
  }
  return out;
}

const TypedAttributes& Instruction::typed() const {
  static const TypedAttributes kNone;  // constant: every attribute absent
  return typed_attributes ? *typed_attributes : kNone;
}

TypedAttributes& Instruction::typed_for_writing() {
  if (!typed_attributes) typed_attributes = std::make_shared<TypedAttributes>();
  return *typed_attributes;
}

const Attribute* Instruction::attribute(std::string_view name) const {
  for (const Attribute& a : attributes)
    if (a.name == name) return &a;
  return nullptr;
}

std::optional<std::size_t> Module::find_computation(std::string_view name) const {
  for (std::size_t i = 0; i < computations.size(); ++i)
    if (computations[i].name == name) return i;
  return std::nullopt;
}

std::size_t Module::instruction_count() const {
  std::size_t n = 0;
  for (const Computation& c : computations) n += c.instructions.size();
  return n;
}

}  // namespace tpuemu::hlo
