// SPDX-License-Identifier: Apache-2.0
// Layer hlo: the reader of HLO text, the format XLA prints a program in (HloModule::ToString, the
// files of XLA_FLAGS=--xla_dump_to, JAX's compiler_ir('hlo').as_hlo_text()). docs/hlo.md,
// "Reading HLO text", says what is read and what is kept verbatim.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "tpuemu/base/input_file.h"
#include "tpuemu/hlo/hlo_module.h"

namespace tpuemu::hlo {

// HLO dumps of large models run to tens of MiB (constants and backend configs included); 128 MiB
// admits them and refuses a runaway file. Bounded as a whole only: one line may hold a whole
// large constant.
inline constexpr InputLimits kHloInput{std::size_t{128} << 20, std::size_t{128} << 20, "module in HLO text"};

// Reads one module (after an optional UTF-8 byte order mark). Throws tpuemu::Error
// "SOURCE:LINE:COL: cause" (one line) for a truncated module, an unknown opcode, an undefined or
// not yet defined operand, a duplicate name, a wrong operand count for the opcode, a malformed
// shape or layout, a shape whose element count, byte size or tiled size does not fit 64 bits, an
// undefined computation, or a byte that is not text.
// The module keeps the text (Module::text): pass it with std::move to spare a copy.
Module parse_hlo(std::string text, std::string source);

// Reads one shape and its layout, the whole text (blanks and comments around it allowed), with
// the checks parse_hlo makes on every shape: "f32[8,128]{1,0:T(8,128)S(1)}", "(f32[2], s32[])".
// Throws tpuemu::Error "SOURCE:LINE:COL: cause". The layout grammar's one entry point for tests
// and fuzzing.
Shape parse_shape(std::string_view text, const std::string& source);

// True when the text starts as a module the reader reads: after an optional UTF-8 byte order mark,
// whitespace, // comments and /* comments */ (skipped exactly as parse_hlo skips them), the word
// HloModule. Every entry point that takes a program or a workload tells them apart by this, on
// the text read once (standard input and FIFOs cannot be read twice).
bool looks_like_hlo_text(std::string_view text);

// The file (bounded by kHloInput; "-" is standard input), then parse_hlo.
Module read_hlo_file(const std::filesystem::path& path);

}  // namespace tpuemu::hlo
