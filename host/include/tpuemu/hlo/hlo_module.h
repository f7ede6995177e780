// SPDX-License-Identifier: Apache-2.0
// Layer hlo: a JAX/XLA program as XLA prints it (HLO text), read into plain data. The reader
// (hlo_parser.h) fills these structs; the memory analysis (liveness.h, placement.h) reads them.
// Every attribute is kept as its text, whether or not an analysis uses it; the ones with a
// structure are also read into types (hlo_attributes.h) (docs/hlo.md).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tpuemu/hlo/hlo_attributes.h"

namespace tpuemu::hlo {

// XLA's primitive types (xla_data.proto's PrimitiveType), by their HLO text names.
enum class PrimitiveType : std::uint8_t {
  Pred, S2, S4, S8, S16, S32, S64, U2, U4, U8, U16, U32, U64,
  F16, BF16, F32, F64, C64, C128,
  F4E2M1FN, F8E3M4, F8E4M3, F8E4M3FN, F8E4M3B11FNUZ, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0FNU,
  Token, Tuple,
};
std::string_view type_name(PrimitiveType type);
std::optional<PrimitiveType> type_from_name(std::string_view name);
// Bits per element as stored unpacked (pred: 8, s4: 4, c64: 64); 0 for token and tuple.
unsigned bit_width(PrimitiveType type);

// Every opcode XLA defines, one table (hlo_opcodes.inc): HLO_OPCODE(Enumerator, "text", arity)
// with arity the operand count, or -1 when it varies.
enum class Opcode : std::uint16_t {
#define HLO_OPCODE(id, text, arity) id,
#include "tpuemu/hlo/hlo_opcodes.inc"
#undef HLO_OPCODE
};
std::string_view opcode_name(Opcode op);
std::optional<Opcode> opcode_from_name(std::string_view text);
int opcode_arity(Opcode op);  // -1: variadic

// Where something was in the file (1-based).
struct SourcePos {
  std::uint32_t line = 0;
  std::uint32_t col = 0;
};

struct Shape;

// D(...) of a layout: how one dimension of a sparse array is stored (XLA's DimLevelType). Dense
// is every index; the others hold only the nonzeros' coordinates. `unique` false is printed '+',
// `ordered` false '~'.
enum class DimLevelType : std::uint8_t { Dense, Compressed, Singleton, LooseCompressed };
struct DimLevel {
  DimLevelType type = DimLevelType::Dense;
  bool unique = true;
  bool ordered = true;
};

// SC(1:512,1024): physical dimension 1 (0 is the major-most) split between memories at indices
// 512 and 1024, into three parts.
struct SplitConfig {
  std::int64_t dimension = 0;
  std::vector<std::int64_t> split_indices;
};

// A layout as XLA prints it: {1,0}, {1,0:T(8,128)(2,1)S(1)}, every item of
// {minor_to_major:D(...)T(...)L(n)#(type)*(type)E(n)S(n)SC(...)P(shape)M(n)} read into its field
// (docs/hlo.md, "Layouts"; which of them change the bytes: "Sizes").
struct Layout {
  std::vector<std::int64_t> minor_to_major;
  std::vector<std::vector<std::int64_t>> tiles;  // T(8,128)(2,1) -> {{8,128},{2,1}}; '*' is -1
  std::int64_t memory_space = 0;                 // S(n); 0: the default (HBM)
  std::string text;                              // the whole layout as written, without braces
  std::int64_t element_size_bits = 0;            // E(n): bits stored per element; 0: the type's
  std::int64_t tail_padding_elements = 1;        // L(n): a tiled array's elements round up to n
  std::vector<DimLevel> dim_levels;              // D(D,C+~): one per dimension; none: all dense
  std::optional<PrimitiveType> index_type;       // #(u32): a sparse array's index type
  std::optional<PrimitiveType> pointer_type;     // *(u32): a sparse array's pointer type
  std::vector<SplitConfig> split_configs;        // SC(0:512)(1:64)
  std::shared_ptr<const Shape> physical_shape;   // P(shape): a sparse array's stored shape
  std::int64_t dynamic_metadata_prefix_bytes = 0;  // M(n): metadata before a dynamic array's data

  // A D(...) with a level other than dense: a sparse array.
  bool is_sparse() const {
    for (const DimLevel& level : dim_levels)
      if (level.type != DimLevelType::Dense) return true;
    return false;
  }
};

struct Shape {
  PrimitiveType type = PrimitiveType::Tuple;
  std::vector<std::int64_t> dims;       // array shapes; a bounded dynamic dim <=N holds N
  std::vector<bool> dynamic;            // per dim: written <=N or ?; dims past its end are static
  // Shared and immutable: the reader gives every shape written with the same layout text one
  // Layout (a module of millions of instructions has a handful of distinct layouts).
  std::shared_ptr<const Layout> layout;
  std::vector<Shape> elements;          // tuple shapes

  bool is_tuple() const { return type == PrimitiveType::Tuple; }
  bool is_array() const { return type != PrimitiveType::Tuple && type != PrimitiveType::Token; }
  // Elements of an array shape; saturates at INT64_MAX is impossible: the reader refuses products
  // that overflow 64 bits, so this is exact.
  std::uint64_t element_count() const;
  // "f32[8,128]{1,0}", "(f32[2], s32[])": for reports.
  std::string to_string() const;
};

// metadata={op_name="jit(f)/dot_general" source_file="x.py" source_line=12}
struct Metadata {
  std::string op_name;
  std::string source_file;
  std::int64_t source_line = 0;
};

// One attribute as written: name=value, value's text verbatim (braces included).
struct Attribute {
  std::string name;
  std::string value;
  SourcePos pos;
};

struct Instruction {
  std::string name;  // without the '%'
  Opcode opcode = Opcode{};
  bool is_root = false;
  std::uint32_t metadata = 0;  // its metadata={...}: an index into Module::metadata; 0: none
  Shape shape;
  std::vector<std::size_t> operands;  // indices into the computation's instructions
  // Computations it runs, as indices into Module::computations, from to_apply, calls, condition,
  // body, branch_computations, called_computations (in that order of appearance).
  std::vector<std::size_t> called;
  std::optional<std::uint32_t> condition, body;  // while
  std::vector<std::size_t> branches;             // conditional
  std::vector<Attribute> attributes;             // every attribute, including the ones above
  // parameter(N) and get-tuple-element's index=N; -1 elsewhere. The reader refuses N >= 2^31.
  std::int32_t parameter_number = -1;
  std::int32_t tuple_index = -1;
  // constant(...)'s text, verbatim: a range of Module::text (Module::literal).
  std::uint32_t literal_begin = 0, literal_end = 0;
  // Where the instruction's text is in Module::text (Module::instruction_text puts it on one line).
  std::uint32_t text_begin = 0, text_end = 0;
  SourcePos pos;
  // The typed attributes (hlo_attributes.h), read once with the module; each also stays in
  // `attributes` as written. Held apart, null when there are none (most instructions have none):
  // a module may have millions of instructions, and each should stay small.
  std::shared_ptr<TypedAttributes> typed_attributes;
  const TypedAttributes& typed() const;  // an empty set (every attribute absent) when null
  TypedAttributes& typed_for_writing();  // for the reader: the set, created when null

  const Attribute* attribute(std::string_view name) const;
};

struct Computation {
  std::string name;
  std::vector<Instruction> instructions;  // in textual order
  std::size_t root = 0;                   // ROOT, or the last instruction
  std::vector<std::size_t> parameters;    // parameters[n] = the instruction of parameter(n)
  bool is_entry = false;
  SourcePos pos;
};

// input_output_alias={ {0}: (1, {}, may-alias) }: output {0} shares parameter 1's buffer.
struct IoAlias {
  std::vector<std::int64_t> output_index;
  std::int64_t parameter_number = 0;
  std::vector<std::int64_t> parameter_index;
  std::string kind;  // "may-alias", "must-alias" or empty
};

struct Module {
  std::string name;
  std::string source;  // the file name, for messages
  bool is_scheduled = false;
  std::int64_t num_partitions = 1;
  std::int64_t replica_count = 1;
  std::string entry_computation_layout;  // verbatim
  std::vector<IoAlias> input_output_alias;
  std::vector<Attribute> attributes;    // every header attribute, verbatim
  std::vector<Computation> computations;  // in textual order; callees may come before or after
  std::size_t entry = 0;
  std::string text;  // the module's text as read: instructions' texts are ranges of it
  // Every instruction's metadata; the first, empty, is an instruction's without metadata.
  std::vector<Metadata> metadata{Metadata{}};

  const Computation& entry_computation() const { return computations[entry]; }
  std::optional<std::size_t> find_computation(std::string_view name) const;
  std::size_t instruction_count() const;
  // An instruction's text on one line (whitespace collapsed, comments kept), at most 400 bytes
  // and "..." beyond: what reports show of it.
  std::string instruction_text(const Instruction& instruction) const;
  const Metadata& metadata_of(const Instruction& instruction) const { return metadata[instruction.metadata]; }
  std::string_view literal(const Instruction& instruction) const {
    return std::string_view(text).substr(instruction.literal_begin, instruction.literal_end - instruction.literal_begin);
  }
};

}  // namespace tpuemu::hlo
