// SPDX-License-Identifier: Apache-2.0
// Workloads a user runs: a single matmul, or a multi-layer int8 MLP, with their inputs generated
// from a seed. Loaded from JSON files (examples/*.json; format in docs/workloads.md) or built from
// command-line options.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tpuemu/base/json.h"

namespace tpuemu {

// One fully connected layer: out = requantise(in . W) with int8 weights, or int32 accumulators
// when `int32_output` (allowed on the last layer only).
struct LayerSpec {
  std::size_t in_features = 0;
  std::size_t out_features = 0;
  std::int32_t scale = 1;
  unsigned shift = 0;
  bool relu = true;
  bool int32_output = false;
};

struct Workload {
  std::string name = "workload";
  std::size_t batch = 0;          // rows of the activations (M of every layer)
  std::vector<LayerSpec> layers;  // a matmul is one layer
  std::uint64_t seed = 1;
  // Optional run settings the file may carry; command-line options override them.
  std::optional<std::string> preset;
  std::string preset_place;  // "file:line:column" of "preset" in its file, for errors about it
  std::optional<unsigned> buffers;
};

// The "kind"s load_workload reads, in the order docs/workloads.md lists them: the one list its
// errors name, and the base of the lists of the commands that read other kinds too.
const std::vector<std::string>& workload_kinds();
// "expected one of \"a\", \"b\"": the kinds a reader accepts, for its unknown-kind error.
std::string expected_kinds_text(const std::vector<std::string>& kinds);

// Largest extent of any dimension: beyond it no preset's HBM could hold the tensors.
inline constexpr std::uint64_t kMaxDimension = 1u << 20;

// A single C = A . B with A m x k, B k x n: int32 out, or requantised int8 when `requantize`.
Workload make_matmul_workload(std::uint64_t m, std::uint64_t k, std::uint64_t n, bool requantize = false,
                              std::uint64_t seed = 1);
// Parses "MxKxN" (e.g. "512x512x512"); throws Error naming the bad part.
Workload parse_matmul_shape(const std::string& text, bool requantize = false, std::uint64_t seed = 1);

// Loads a workload file; errors are "file:line:column: /pointer: cause".
Workload load_workload(const std::filesystem::path& path);
// The same from a parsed document (a file read once, e.g. standard input); `path` names defaults.
Workload load_workload(const JsonDocument& doc, const std::filesystem::path& path);

// Throws Error naming the layer on an inconsistent chain (in_features != previous out_features),
// zero or absurd sizes, or int32 output before the last layer.
void validate_workload(const Workload& workload);

}  // namespace tpuemu
