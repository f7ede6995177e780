// SPDX-License-Identifier: Apache-2.0
// Allocation traces of a model served on the accelerator, generated from the project's own
// workloads: the HBM buffers the runtime allocates for a stream of requests of varying batch size
// (weights once; per request its program, input, activations, im2col patches, output) and the
// VMEM buffers the compiler gives each matmul. Times are the layers' roofline cycles, so a trace
// is deterministic. The traces in examples/traces come from here (`tpuemu trace`); the format is
// docs/allocation.md.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/compile/compile.h"
#include "tpuemu/compile/workload.h"
#include "tpuemu/config/config.h"

namespace tpuemu {

// A small convolutional network, lowered to matmuls by im2col: a conv with kernel k, stride s
// and C_in channels on an H x W image is (batch * H/s * W/s) x (k * k * C_in) patches times
// (k * k * C_in) x C_out weights, "same" padding. A global average pool and one fully connected
// layer end it.
struct ConvLayer {
  std::size_t kernel = 3;
  std::size_t stride = 1;
  std::size_t out_channels = 0;
};

struct CnnModel {
  std::string name = "cnn";
  std::size_t height = 0, width = 0, channels = 0;
  std::vector<ConvLayer> convs;
  std::size_t classes = 0;
};

// Loads a workload file of kind "cnn" (examples/serving/cnn-8layer.json); errors are "file:line:column: cause".
CnnModel load_cnn_model(const std::filesystem::path& path);
// The same from a parsed document; `path` names the default model name.
CnnModel load_cnn_model(const JsonDocument& doc, const std::filesystem::path& path);

// Bounds of a serving trace (larger values are refused, not wrapped or run until memory runs out).
// The trace is built in memory (about 7 KB per request of the shipped MLP: 26 events of ~270 B,
// measured with /usr/bin/time at 32 k requests = 232 MB), so 65,536 requests stay under 0.5 GB.
inline constexpr std::size_t kMaxServingBatch = std::size_t{1} << 20;
inline constexpr std::size_t kMaxServingRequests = std::size_t{1} << 16;

struct ServingOptions {
  std::vector<std::size_t> batches;  // batch size of each request, cycled
  std::size_t requests = 0;          // 0: one per entry of `batches`
  std::size_t in_flight = 2;         // requests interleaved layer by layer
  CompileOptions compile;
  bool tiled = true;
  std::uint64_t hbm_alignment = 256;
};

// Throws Error for an empty batch list, zero batch or in_flight, or a shape the compiler rejects.
alloc::AllocTrace serving_trace(const Preset& preset, const Workload& mlp, const ServingOptions& options);
alloc::AllocTrace serving_trace(const Preset& preset, const CnnModel& cnn, const ServingOptions& options);

}  // namespace tpuemu
