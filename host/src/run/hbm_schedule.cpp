// SPDX-License-Identifier: Apache-2.0
#include "hbm_schedule.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "tpuemu/alloc/allocator.h"
#include "tpuemu/base/error.h"
#include "tpuemu/plan/planner.h"

namespace tpuemu {
namespace {

constexpr std::uint64_t kGranularity = 256;

struct Event {
  std::uint64_t time = 0;
  bool alloc = true;
  std::size_t buffer = 0;
};

// Every allocation and free in order; `start(s)` / `end(s)` are step s's times, `last` the end.
std::vector<Event> schedule_events(const HbmSchedule& sc, const std::function<std::uint64_t(std::size_t)>& start,
                                   const std::function<std::uint64_t(std::size_t)>& end, std::uint64_t last) {
  std::vector<Event> ev;
  for (std::size_t b = 0; b < sc.buffers.size(); ++b) {
    if (sc.buffers[b].persistent) ev.push_back({0, true, b});
  }
  for (std::size_t s = 0; s < sc.steps.size(); ++s) {
    for (std::size_t b = 0; b < sc.buffers.size(); ++b) {
      if (!sc.buffers[b].persistent && sc.buffers[b].first_step == s) ev.push_back({start(s), true, b});
    }
    for (std::size_t b = 0; b < sc.buffers.size(); ++b) {
      if (!sc.buffers[b].persistent && sc.buffers[b].last_step == s) ev.push_back({end(s), false, b});
    }
  }
  for (std::size_t b = 0; b < sc.buffers.size(); ++b) {
    if (sc.buffers[b].persistent) ev.push_back({last, false, b});
  }
  return ev;
}

std::vector<Event> logical_events(const HbmSchedule& sc) {
  return schedule_events(sc, [](std::size_t s) { return 2 * s + 1; }, [](std::size_t s) { return 2 * s + 2; },
                         2 * sc.steps.size() + 1);
}

// A policy that hands out offsets decided beforehand (the offline plan), in allocation order, so
// the plan is measured by the same MemorySpace metrics as every runtime policy.
class FixedPlacement final : public alloc::Allocator {
 public:
  FixedPlacement(std::uint64_t capacity, std::vector<std::uint64_t> offsets)
      : capacity_(capacity), offsets_(std::move(offsets)) {}
  std::string_view name() const override { return "planner"; }
  std::uint64_t capacity() const override { return capacity_; }
  std::optional<alloc::Allocation> allocate(std::uint64_t size, std::uint64_t) override {
    if (next_ >= offsets_.size()) return std::nullopt;
    const std::uint64_t offset = offsets_[next_++];
    return alloc::Allocation{offset, size, next_ - 1};
  }
  void deallocate(const alloc::Allocation&) override {}
  alloc::NeededBlock needed(std::uint64_t size, std::uint64_t) const override { return {size, {}}; }
  std::string oversize_rule() const override { return {}; }
  void visit_free_blocks(const std::function<void(const alloc::FreeBlock&)>&) const override {}

 private:
  std::uint64_t capacity_;
  std::vector<std::uint64_t> offsets_;  // in allocation order
  std::uint64_t next_ = 0;
};

std::unique_ptr<alloc::Allocator> policy_for(const HbmSchedule& sc, const HbmPlacement* placement,
                                             const Preset& preset, const RunSettings& settings) {
  if (!settings.plan_hbm) return alloc::make_allocator(settings.allocator, {preset.hbm.capacity_bytes, kGranularity});
  std::vector<std::uint64_t> in_order;
  for (const Event& e : logical_events(sc)) {
    if (e.alloc) in_order.push_back(placement->offsets[e.buffer]);
  }
  return std::make_unique<FixedPlacement>(preset.hbm.capacity_bytes, std::move(in_order));
}

std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

std::uint64_t HbmSchedule::weight_shard_bytes(std::size_t layer) const {
  return buffers[weight_shard_buffer[layer]].size;
}

HbmSchedule make_hbm_schedule(const ModelCompiler& compiler, std::size_t requests, const WeightSharding& sharding) {
  const Model& model = compiler.model();
  const std::size_t layers = model.layers.size();
  if (sharding.parts > 1 && requests != 1) {
    throw Error(fmt::format("a sharded run takes one request at a time, not {}", requests));
  }
  HbmSchedule sc;
  // waves: request q runs layer l in wave q + l
  std::vector<ScheduleStep> launches;
  for (std::size_t wave = 0; wave + 1 < layers + requests; ++wave) {
    for (std::size_t q = 0; q < requests; ++q) {
      if (wave < q || wave - q >= layers) continue;
      launches.push_back({wave - q, q, wave == q, model.layers[wave - q].kind == LayerKind::Gather ? StepKind::Gather : StepKind::Launch});
    }
  }
  const bool shard_weights = sharding.parts > 1;
  auto gathers_weights = [&](const ScheduleStep& st) {
    return shard_weights && st.kind == StepKind::Launch && has_weights(model.layers[st.layer].kind);
  };
  for (std::size_t k = 0; k < launches.size(); ++k) {
    const ScheduleStep& st = launches[k];
    if (gathers_weights(st) && (!sharding.prefetch || k == 0)) sc.steps.push_back({st.layer, 0, false, StepKind::GatherWeights, false});
    if (sharding.prefetch && st.kind == StepKind::Launch) {
      // the next launch's weights arrive while this one runs
      for (std::size_t n = k + 1; n < launches.size(); ++n) {
        if (launches[n].kind != StepKind::Launch) continue;
        if (gathers_weights(launches[n])) sc.steps.push_back({launches[n].layer, 0, false, StepKind::GatherWeights, true});
        break;
      }
    }
    sc.steps.push_back(st);
  }
  auto add = [&](ScheduledBuffer b) {
    b.size = round_up(b.size, 1);
    sc.buffers.push_back(std::move(b));
    return sc.buffers.size() - 1;
  };
  const std::uint64_t dim = compiler.layout(0).tile_cols;
  if (compiler.needs_zeros()) sc.zeros_buffer = add({"zeros (convolution padding)", compiler.zeros_bytes(), 0, dim, true, 0, 0});
  sc.weight_shard_buffer.assign(layers, kNoBuffer);
  for (std::size_t i = 0; i < layers; ++i) {
    const ModelLayer& l = model.layers[i];
    sc.weight_buffer.push_back(kNoBuffer);
    sc.bias_buffer.push_back(kNoBuffer);
    if (!has_weights(l.kind)) continue;
    const TiledLayout& w = compiler.weight_layout(i);
    if (shard_weights) {
      const std::uint64_t part = (w.bytes() + sharding.parts - 1) / sharding.parts;
      sc.weight_shard_buffer[i] = add({l.name + " weights shard", part, 0, dim, true, 0, 0});
    } else {
      sc.weight_buffer[i] = add({l.name + " weights", w.bytes(), w.padding_bytes(), dim, true, 0, 0});
    }
    if (l.bias) sc.bias_buffer[i] = add({l.name + " bias weights", compiler.bias_bytes(i), 0, dim, true, 0, 0});
  }
  // activations: first and last step per (request, tensor)
  sc.tensor_buffer.assign(requests, std::vector<std::size_t>(layers + 1, kNoBuffer));
  std::vector<std::vector<std::size_t>> last_use(requests, std::vector<std::size_t>(layers + 1, 0));
  for (std::size_t s = 0; s < sc.steps.size(); ++s) {
    if (sc.steps[s].kind == StepKind::GatherWeights) continue;
    for (std::size_t t : model.layers[sc.steps[s].layer].inputs) last_use[sc.steps[s].request][t] = s;
  }
  for (std::size_t s = 0; s < sc.steps.size(); ++s) {
    const ScheduleStep& st = sc.steps[s];
    if (st.kind == StepKind::GatherWeights) {
      sc.program_buffer.push_back(kNoBuffer);
      std::size_t consumer = s + 1;
      while (sc.steps[consumer].kind != StepKind::Launch || sc.steps[consumer].layer != st.layer) ++consumer;
      const TiledLayout& w = compiler.weight_layout(st.layer);
      sc.weight_buffer[st.layer] = add({model.layers[st.layer].name + " weights", w.bytes(), w.padding_bytes(), dim, false, s, consumer});
      continue;
    }
    const std::string suffix = requests > 1 ? fmt::format(" r{}", st.request) : "";
    sc.program_buffer.push_back(st.kind == StepKind::Launch ? add({"program", 32, 0, std::max<std::uint64_t>(32, dim), false, s, s}) : kNoBuffer);
    if (st.first_of_request) {
      const TiledLayout& in = compiler.layout(0);
      sc.tensor_buffer[st.request][0] =
          add({(model.input_name == "input" ? std::string("input") : "input " + model.input_name) + suffix, in.bytes(), in.padding_bytes(), dim, false, s, last_use[st.request][0]});
    }
    const std::size_t t = st.layer + 1;
    const TiledLayout& out = compiler.layout(t);
    const bool is_output = t == layers;
    // the model's output lives until the run ends (it is read back); pretend its last use is the last step
    const std::size_t last = is_output ? sc.steps.size() - 1 : last_use[st.request][t];
    sc.tensor_buffer[st.request][t] =
        add({model.layers[st.layer].name + " output" + suffix, out.bytes(), out.padding_bytes(), dim, false, s, last});
  }
  return sc;
}

HbmPlacement place_hbm_schedule(const HbmSchedule& sc, const Preset& preset, const RunSettings& settings) {
  HbmPlacement p;
  p.offsets.assign(sc.buffers.size(), 0);
  const std::vector<Event> events = logical_events(sc);
  if (settings.plan_hbm) {
    p.method = "planner";
    std::vector<plan::PlanBuffer> buffers(sc.buffers.size());
    for (const Event& e : events) {
      plan::PlanBuffer& b = buffers[e.buffer];
      if (e.alloc) {
        b.id = sc.buffers[e.buffer].owner;
        b.lower = static_cast<std::int64_t>(e.time);
        b.size = round_up(sc.buffers[e.buffer].size, kGranularity);
        b.alignment = std::max<std::uint64_t>(sc.buffers[e.buffer].alignment, kGranularity);
      } else {
        b.upper = static_cast<std::int64_t>(e.time);
      }
    }
    plan::PlanOptions options;
    options.capacity = preset.hbm.capacity_bytes;
    options.timeout_seconds = settings.plan_timeout_seconds;
    const plan::PlanResult plan = plan::plan_buffers(buffers, options);
    if (plan.status != plan::PlanStatus::Solved) {
      throw Error(fmt::format("HBM plan: the run's {} buffers do not fit {} bytes: {}", buffers.size(),
                              preset.hbm.capacity_bytes, plan.reason));
    }
    p.offsets = plan.offsets;
    return p;
  }
  p.method = settings.allocator;
  alloc::MemorySpace space("HBM", policy_for(sc, nullptr, preset, settings));
  std::vector<alloc::BufferId> ids(sc.buffers.size());
  for (const Event& e : events) {
    const ScheduledBuffer& b = sc.buffers[e.buffer];
    if (e.alloc) {
      const alloc::PlacedBuffer placed = space.allocate({b.size, b.alignment, b.owner, b.padding}, e.time);
      ids[e.buffer] = placed.id;
      p.offsets[e.buffer] = placed.offset;
    } else {
      space.free(ids[e.buffer], e.time);
    }
  }
  return p;
}

HbmTimeline replay_hbm_schedule(const HbmSchedule& sc, const HbmPlacement& placement, const Preset& preset,
                                const RunSettings& settings, const std::vector<StepReport>& steps,
                                std::uint64_t end_cycle) {
  const std::vector<Event> events = schedule_events(
      sc, [&](std::size_t s) { return steps[s].start_cycle; }, [&](std::size_t s) { return steps[s].end_cycle; },
      end_cycle);
  alloc::MemorySpace space("HBM", policy_for(sc, &placement, preset, settings), true);
  HbmTimeline t;
  std::vector<alloc::BufferId> ids(sc.buffers.size());
  for (const Event& e : events) {
    const ScheduledBuffer& b = sc.buffers[e.buffer];
    const std::string id = fmt::format("t{}", e.buffer);
    if (e.alloc) {
      const alloc::PlacedBuffer placed = space.allocate({b.size, b.alignment, b.owner, b.padding}, e.time);
      if (placed.offset != placement.offsets[e.buffer]) {
        throw Error(fmt::format("HBM: policy {} placed '{}' at {:#x} on replay but at {:#x} before the run",
                                space.policy(), b.owner, placed.offset, placement.offsets[e.buffer]));
      }
      ids[e.buffer] = placed.id;
      t.trace.events.push_back({e.time, true, id, b.size, b.alignment, "hbm", b.padding, b.owner, placed.offset});
    } else {
      space.free(ids[e.buffer], e.time);
      t.trace.events.push_back({e.time, false, id, 0, 1, "hbm", 0, ""});
    }
  }
  t.metrics = space.metrics();
  t.samples = space.samples();
  return t;
}

}  // namespace tpuemu
