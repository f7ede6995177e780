// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/run/serving_trace.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/layout/layout.h"

namespace tpuemu {

namespace {

struct Tensor {
  std::string name;
  std::uint64_t bytes = 0, padding = 0;
};

Tensor tensor(std::string name, const TiledLayout& layout) {
  return {std::move(name), layout.bytes(), layout.padding_bytes()};
}

// One step of a request: allocate `creates`, run (a matmul or a host-side copy of `copy_bytes`),
// free `frees`.
struct Op {
  std::string name;
  std::vector<Tensor> creates;
  std::optional<MatmulSpec> matmul;
  std::uint64_t copy_bytes = 0;
  std::vector<std::string> frees;
};

// A model lowered for one batch size: its input, its ops, the tensor left at the end.
struct Lowered {
  Tensor input;
  std::vector<Op> ops;
  std::string output;
};

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

class TraceBuilder {
 public:
  TraceBuilder(const Preset& preset, const ServingOptions& options)
      : preset_(preset), options_(options), port_bytes_per_cycle_(memory_port_peak(preset).bytes_per_cycle) {
    if (options.batches.empty()) throw Error("trace: no batch sizes given");
    for (std::size_t b : options.batches) {
      if (b == 0 || b > kMaxDimension) throw Error(fmt::format("trace: batch size {} is not in 1..{}", b, kMaxDimension));
    }
    if (options.in_flight == 0) throw Error("trace: --in-flight must be at least 1");
  }

  void add_weights(const std::vector<Tensor>& weights) {
    for (const Tensor& w : weights) alloc("hbm", w.name, w.bytes, w.padding, options_.hbm_alignment, w.name);
  }

  alloc::AllocTrace run(const std::function<Lowered(std::size_t batch)>& lower) {
    const std::size_t requests = options_.requests ? options_.requests : options_.batches.size();
    struct Active {
      std::size_t request;
      Lowered lowered;
      std::size_t next_op = 0;
    };
    std::deque<Active> active;
    std::size_t started = 0;
    auto start = [&] {
      const std::size_t batch = options_.batches[started % options_.batches.size()];
      Active a{started, lower(batch)};
      const std::string r = fmt::format("r{}", started);
      std::uint64_t program_bytes = 0;
      for (const Op& op : a.lowered.ops) {
        if (op.matmul) program_bytes += compiled(*op.matmul).program_bytes;
      }
      alloc("hbm", r + ".program", program_bytes + kInstructionBytes, 0, options_.hbm_alignment,
            fmt::format("request {} program", started));
      alloc("hbm", r + "." + a.lowered.input.name, a.lowered.input.bytes, a.lowered.input.padding,
            options_.hbm_alignment, fmt::format("request {} (batch {}) {}", started, batch, a.lowered.input.name));
      active.push_back(std::move(a));
      ++started;
    };
    while (started < requests && active.size() < options_.in_flight) start();
    while (!active.empty()) {
      Active a = std::move(active.front());
      active.pop_front();
      const std::string r = fmt::format("r{}", a.request);
      run_op(r, a.request, a.lowered.ops[a.next_op++]);
      if (a.next_op == a.lowered.ops.size()) {
        free("hbm", r + "." + a.lowered.output);
        free("hbm", r + ".program");
        if (started < requests) start();
      } else {
        active.push_back(std::move(a));
      }
    }
    return std::move(trace_);
  }

 private:
  static constexpr std::uint64_t kInstructionBytes = 16;  // the END instruction

  struct Compiled {
    std::uint64_t program_bytes = 0;
    std::uint64_t cycles = 0;
    std::vector<MatmulPlan::VmemRegion> vmem;
  };

  const Compiled& compiled(const MatmulSpec& s) {
    const auto key = std::make_tuple(s.m, s.k, s.n, s.requantize);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    const std::uint32_t dim = preset_.dim;
    const HbmTensor a{matmul_a_layout(s, dim, options_.tiled), 0};
    const HbmTensor b{matmul_b_layout(s, dim, options_.tiled), 0};
    const HbmTensor c{matmul_c_layout(s, dim, options_.tiled), 0};
    Program program;
    const MatmulPlan plan = compile_matmul(preset_, s, a, b, c, options_.compile, program);
    Compiled out;
    out.program_bytes = program.to_bytes().size();
    const auto memory_cycles =
        static_cast<std::uint64_t>(std::ceil(static_cast<double>(minimum_hbm_bytes(s)) / port_bytes_per_cycle_));
    out.cycles = std::max(ideal_mxu_cycles(s, dim), memory_cycles);
    out.vmem = plan.vmem_regions;
    return cache_.emplace(key, std::move(out)).first->second;
  }

  void run_op(const std::string& r, std::size_t request, const Op& op) {
    for (const Tensor& t : op.creates) {
      alloc("hbm", r + "." + t.name, t.bytes, t.padding, options_.hbm_alignment,
            fmt::format("request {} {}", request, t.name));
    }
    if (op.matmul) {
      const Compiled& c = compiled(*op.matmul);
      for (const auto& region : c.vmem) {
        alloc("vmem", fmt::format("{}.{}.{}", r, op.name, region.name), std::uint64_t{region.rows} * preset_.dim, 0,
              preset_.dim, fmt::format("request {} {} VMEM {}", request, op.name, region.name));
      }
      time_ += c.cycles;
      for (const auto& region : c.vmem) free("vmem", fmt::format("{}.{}.{}", r, op.name, region.name));
    } else {
      time_ += std::max<std::uint64_t>(1, static_cast<std::uint64_t>(static_cast<double>(op.copy_bytes) / port_bytes_per_cycle_));
    }
    for (const std::string& name : op.frees) free("hbm", r + "." + name);
  }

  void alloc(std::string space, std::string id, std::uint64_t bytes, std::uint64_t padding, std::uint64_t alignment,
             std::string owner) {
    alloc::TraceEvent e;
    e.time = time_;
    e.alloc = true;
    e.id = std::move(id);
    e.size = bytes;
    e.alignment = alignment;
    e.space = std::move(space);
    e.padding = padding;
    e.owner = std::move(owner);
    trace_.events.push_back(std::move(e));
  }

  void free(std::string space, std::string id) {
    alloc::TraceEvent e;
    e.time = time_;
    e.alloc = false;
    e.id = std::move(id);
    e.space = std::move(space);
    trace_.events.push_back(std::move(e));
  }

  const Preset& preset_;
  const ServingOptions& options_;
  double port_bytes_per_cycle_;  // memory_port_peak(): the memory that runs
  alloc::AllocTrace trace_;
  std::uint64_t time_ = 0;
  std::map<std::tuple<std::size_t, std::size_t, std::size_t, bool>, Compiled> cache_;
};

MatmulSpec layer_spec(std::size_t batch, const LayerSpec& l) {
  return MatmulSpec{batch, l.in_features, l.out_features, !l.int32_output, l.scale, l.shift, l.relu};
}

}  // namespace

alloc::AllocTrace serving_trace(const Preset& preset, const Workload& mlp, const ServingOptions& options) {
  validate_workload(mlp);
  TraceBuilder builder(preset, options);
  const std::uint32_t dim = preset.dim;
  std::vector<Tensor> weights;
  for (std::size_t i = 0; i < mlp.layers.size(); ++i) {
    weights.push_back(tensor(fmt::format("w.layer{}", i), matmul_b_layout(layer_spec(1, mlp.layers[i]), dim, options.tiled)));
  }
  builder.add_weights(weights);
  auto trace = builder.run([&](std::size_t batch) {
    Lowered l;
    l.input = tensor("x", matmul_a_layout(layer_spec(batch, mlp.layers[0]), dim, options.tiled));
    std::string previous = "x";
    for (std::size_t i = 0; i < mlp.layers.size(); ++i) {
      const MatmulSpec s = layer_spec(batch, mlp.layers[i]);
      Op op{fmt::format("layer{}", i)};
      op.creates.push_back(tensor(fmt::format("layer{}.out", i), matmul_c_layout(s, dim, options.tiled)));
      op.matmul = s;
      op.frees.push_back(previous);
      previous = op.creates.back().name;
      l.ops.push_back(std::move(op));
    }
    l.output = previous;
    return l;
  });
  trace.source = mlp.name;
  return trace;
}

alloc::AllocTrace serving_trace(const Preset& preset, const CnnModel& cnn, const ServingOptions& options) {
  if (cnn.convs.empty() || cnn.height == 0 || cnn.width == 0 || cnn.channels == 0 || cnn.classes == 0) {
    throw Error(fmt::format("cnn '{}': needs an image size, channels, at least one conv layer and classes", cnn.name));
  }
  TraceBuilder builder(preset, options);
  const std::uint32_t dim = preset.dim;
  const bool tiled = options.tiled;
  // Shapes per conv for a batch of 1; m scales with the batch.
  struct Shape {
    std::size_t pixels_out, k, c_out;
    bool direct;  // 1x1 stride 1: the activation is the matmul's A, no patches
  };
  std::vector<Shape> shapes;
  std::size_t h = cnn.height, w = cnn.width, c = cnn.channels;
  std::vector<Tensor> weights;
  for (std::size_t j = 0; j < cnn.convs.size(); ++j) {
    const ConvLayer& conv = cnn.convs[j];
    h = ceil_div(h, conv.stride);
    w = ceil_div(w, conv.stride);
    const Shape s{h * w, conv.kernel * conv.kernel * c, conv.out_channels, conv.kernel == 1 && conv.stride == 1};
    shapes.push_back(s);
    weights.push_back(tensor(fmt::format("w.conv{}", j),
                             matmul_b_layout(MatmulSpec{1, s.k, s.c_out, true}, dim, tiled)));
    c = conv.out_channels;
  }
  const std::size_t c_last = c;
  weights.push_back(tensor("w.fc", matmul_b_layout(MatmulSpec{1, c_last, cnn.classes}, dim, tiled)));
  builder.add_weights(weights);
  auto trace = builder.run([&](std::size_t batch) {
    Lowered l;
    l.input = tensor("image", matmul_a_layout(MatmulSpec{batch * cnn.height * cnn.width, cnn.channels}, dim, tiled));
    std::string previous = "image";
    std::uint64_t previous_bytes = l.input.bytes;
    for (std::size_t j = 0; j < shapes.size(); ++j) {
      const Shape& s = shapes[j];
      const MatmulSpec spec{batch * s.pixels_out, s.k, s.c_out, true, 1, 8, true};
      if (!s.direct) {
        Op im2col{fmt::format("conv{}.im2col", j)};
        im2col.creates.push_back(tensor(fmt::format("conv{}.patches", j), matmul_a_layout(spec, dim, tiled)));
        im2col.copy_bytes = previous_bytes + im2col.creates.back().bytes;
        im2col.frees.push_back(previous);
        previous = im2col.creates.back().name;
        l.ops.push_back(std::move(im2col));
      }
      Op op{fmt::format("conv{}", j)};
      op.creates.push_back(tensor(fmt::format("conv{}.out", j), matmul_c_layout(spec, dim, tiled)));
      op.matmul = spec;
      op.frees.push_back(previous);
      previous = op.creates.back().name;
      previous_bytes = op.creates.back().bytes;
      l.ops.push_back(std::move(op));
    }
    const MatmulSpec fc{batch, c_last, cnn.classes};
    Op pool{"pool"};
    pool.creates.push_back(tensor("pooled", matmul_a_layout(fc, dim, tiled)));
    pool.copy_bytes = previous_bytes + pool.creates.back().bytes;
    pool.frees.push_back(previous);
    l.ops.push_back(std::move(pool));
    Op op{"fc"};
    op.creates.push_back(tensor("logits", matmul_c_layout(fc, dim, tiled)));
    op.matmul = fc;
    op.frees.push_back("pooled");
    l.ops.push_back(std::move(op));
    l.output = "logits";
    return l;
  });
  trace.source = cnn.name;
  return trace;
}

}  // namespace tpuemu
