// SPDX-License-Identifier: Apache-2.0
// Reading and analysing a large JAX/XLA program (docs/hlo.md): a generated module of 40 000
// instructions and 6.6 MB of HLO text (the target names 4 MB: this is the harder case), the size
// of a mid-sized model's training step.
//
//   BM_ReadHlo        parse_hlo on the text                      counter: instructions/s
//   BM_AnalyseHlo     every schedule (text, dfs, list), liveness, the xla heap simulator and the
//                     five runtime policies (the planner is left out: it has its own timeout)
//                                                                counter: instructions/s
//   BM_DifficultHlo   one run over a module with XLA's benchmark statistics (30 000 ENTRY
//                     instructions, 3 000 long-lived parameters read late, many same-size
//                     buffers, nested calls), each phase timed alone
//                                                                counters: seconds per phase
//   BM_TrainingStepHlo the same over a generated training step (29 912 ENTRY instructions, 3 630
//                     weights live throughout, a forward pass whose saved activations the backward
//                     pass reads in reverse order, the gradients returned), the planner with its
//                     default 10-s timeout   counters: seconds per phase, heap / peak per policy
//
// A summary after the benchmark output prints both rates and the whole read + analysis time
// against its 2 s target, then reads and analyses chains of adds of 10 MB and 100 MB (text
// schedule, xla heap) against 5 s and 60 s and about 10 (at most 12) bytes of memory per byte
// of text; the binary fails if a target is missed or a placement is invalid.
//
// `bench_hlo --write-modules DIR` writes the generated modules (generated.hlo, difficult.hlo,
// training_step.hlo, chain_10mb.hlo) to DIR instead, to time `tpuemu run` on them.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "tpuemu/hlo/analysis.h"
#include "tpuemu/hlo/hlo_parser.h"
#include "tpuemu/hlo/liveness.h"
#include "tpuemu/hlo/placement.h"

namespace {

using namespace tpuemu;

constexpr int kInstructions = 40000;

// A chain of layer-like blocks: each reads the running activation and a weight, with JAX-style
// metadata as XLA dumps carry it (most of a real dump's bytes).
const std::string& generated_module() {
  static const std::string text = [] {
    std::string t = "HloModule jit_train_step, entry_computation_layout={(f32[256,512]{1,0}, f32[512,512]{1,0})->f32[256,512]{1,0}}\n\n";
    t += "ENTRY %main (p0: f32[256,512], p1: f32[512,512]) -> f32[256,512] {\n";
    t += "  %x.0 = f32[256,512]{1,0} parameter(0), metadata={op_name=\"x\"}\n";
    t += "  %w = f32[512,512]{1,0} parameter(1), metadata={op_name=\"w\"}\n";
    std::string last = "x.0";
    for (int i = 1; i + 2 < kInstructions; i += 4) {
      const std::string meta = fmt::format(
          ", metadata={{op_name=\"jit(train_step)/layer_{}/mlp\" source_file=\"model.py\" source_line={}}}\n",
          i / 4, 100 + i % 400);
      t += fmt::format("  %dot.{} = f32[256,512]{{1,0}} dot(%{}, %w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}{}", i,
                       last, meta);
      t += fmt::format("  %mul.{} = f32[256,512]{{1,0}} multiply(%dot.{}, %{}){}", i + 1, i, last, meta);
      t += fmt::format("  %add.{} = f32[256,512]{{1,0}} add(%mul.{}, %dot.{}){}", i + 2, i + 1, i, meta);
      t += fmt::format("  %max.{} = f32[256,512]{{1,0}} maximum(%add.{}, %{}){}", i + 3, i + 2, last, meta);
      last = fmt::format("max.{}", i + 3);
    }
    t += fmt::format("  ROOT %out = f32[256,512]{{1,0}} copy(%{})\n}}\n", last);
    return t;
  }();
  return text;
}

hlo::AnalysisOptions analysis_options() {
  hlo::AnalysisOptions o;
  o.policies = {"xla", "bfc", "first-fit", "best-fit", "buddy", "tlsf"};
  return o;
}

void BM_ReadHlo(benchmark::State& state) {
  const std::string& text = generated_module();
  std::size_t instructions = 0;
  for (auto _ : state) {
    const hlo::Module m = hlo::parse_hlo(text, "generated.hlo");
    instructions = m.instruction_count();
    benchmark::DoNotOptimize(instructions);
  }
  state.counters["instructions"] = static_cast<double>(instructions);
  state.counters["MB"] = static_cast<double>(text.size()) / 1e6;
  state.counters["instructions/s"] =
      benchmark::Counter(static_cast<double>(instructions) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ReadHlo)->Unit(benchmark::kMillisecond);

void BM_AnalyseHlo(benchmark::State& state) {
  const hlo::Module m = hlo::parse_hlo(generated_module(), "generated.hlo");
  for (auto _ : state) {
    const hlo::Analysis a = hlo::analyze(m, analysis_options());
    benchmark::DoNotOptimize(a.usage.total);
  }
  state.counters["instructions/s"] = benchmark::Counter(
      static_cast<double>(m.instruction_count()) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AnalyseHlo)->Unit(benchmark::kMillisecond);

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The shapes of difficulty XLA's benchmark modules have, at their size (fixed seed):
constexpr int kDifficultEntry = 30000;   // ENTRY instructions
constexpr int kDifficultParams = 3000;   // long-lived parameters, three sizes
constexpr int kCalledComputations = 4;   // each called from ENTRY kCallsEach times
constexpr int kCallsEach = 5;
constexpr int kCalledInstructions = 300;  // instructions of each called computation
constexpr int kEarlyReads = 300;          // parameters read in the first 70 %; the rest later
// Operands reach this far back, so many same-size buffers are live at once.
constexpr int kReachBack = 200;

const char* const kAct = "f32[128,512]{1,0}";

// A called computation: (activation, weight) -> activation, a chain of layer-like blocks.
std::string called_computation(int c) {
  std::string t =
      fmt::format("%block_{} (a: f32[128,512], w: f32[512,512]) -> f32[128,512] {{\n", c);
  t += fmt::format("  %a = {} parameter(0)\n  %w = f32[512,512]{{1,0}} parameter(1)\n", kAct);
  std::string last = "a";
  for (int i = 0; i + 2 < kCalledInstructions; i += 3) {
    t += fmt::format(
        "  %d{} = {} dot(%{}, %w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}\n", i,
        kAct, last);
    t += fmt::format("  %m{} = {} multiply(%d{}, %{})\n", i, kAct, i, last);
    last = fmt::format("x{}", i);
    t += fmt::format("  %{} = {} maximum(%m{}, %d{})\n", last, kAct, i, i);
  }
  t += fmt::format("  ROOT %out = {} copy(%{})\n}}\n\n", kAct, last);
  return t;
}

const std::string& difficult_module() {
  static const std::string text = [] {
    std::mt19937 rng(46);
    // Parameters: kind 0 f32[128,512] (added), 1 f32[512,512] (a dot's weight), 2 bf16[128,512]
    // (converted, then added). Parameter 1 is the called computations' shared weight.
    const char* const kinds[] = {"f32[128,512]{1,0}", "f32[512,512]{1,0}", "bf16[128,512]{1,0}"};
    std::vector<int> kind(kDifficultParams);
    for (int p = 0; p < kDifficultParams; ++p) kind[p] = p == 1 ? 1 : static_cast<int>(rng() % 3);
    const int calls = kCalledComputations * kCallsEach;
    // Each parameter read costs one instruction (two for bf16); the rest are fillers.
    int reads = 0;
    for (int p = 2; p < kDifficultParams; ++p) reads += kind[p] == 2 ? 2 : 1;
    const int steps = kDifficultEntry - kDifficultParams - reads - calls - 1;
    // The step after which each parameter is read: a few early, most in the last 30 %.
    std::vector<std::vector<int>> reads_at(static_cast<std::size_t>(steps));
    for (int p = 2; p < kDifficultParams; ++p) {
      const int from = p < 2 + kEarlyReads ? 0 : steps * 7 / 10;
      const auto span = static_cast<unsigned>(steps - from);
      reads_at[static_cast<std::size_t>(from + static_cast<int>(rng() % span))].push_back(p);
    }
    std::string t = "HloModule jit_difficult_step\n\n";
    for (int c = 0; c < kCalledComputations; ++c) t += called_computation(c);
    t += "ENTRY %main () -> f32[128,512] {\n";
    for (int p = 0; p < kDifficultParams; ++p)
      t += fmt::format("  %p{} = {} parameter({})\n", p, kinds[kind[p]], p);
    std::vector<std::string> values{"p0"};
    int n = 0;
    auto emit = [&](const std::string& rhs) {
      values.push_back(fmt::format("v{}", n++));
      t += fmt::format("  %{} = {} {}\n", values.back(), kAct, rhs);
    };
    auto earlier = [&] {
      const std::size_t back = 1 + rng() % std::min<std::size_t>(kReachBack, values.size());
      return values[values.size() - back];
    };
    const char* const ops[] = {"add", "multiply", "maximum", "subtract"};
    const int call_every = steps / (calls + 1);
    for (int s = 0; s < steps; ++s) {
      emit(fmt::format("{}(%{}, %{})", ops[rng() % 4], values.back(), earlier()));
      if (s % call_every == call_every - 1 && s / call_every < calls)
        emit(fmt::format("call(%{}, %p1), to_apply=%block_{}", values.back(),
                         (s / call_every) % kCalledComputations));
      for (int p : reads_at[static_cast<std::size_t>(s)]) {
        if (kind[p] == 1) {
          emit(fmt::format("dot(%{}, %p{}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}",
                           values.back(), p));
        } else if (kind[p] == 2) {
          emit(fmt::format("convert(%p{})", p));
          emit(fmt::format("add(%{}, %{})", values.back(), values[values.size() - 2]));
        } else {
          emit(fmt::format("add(%{}, %p{})", values.back(), p));
        }
      }
    }
    t += fmt::format("  ROOT %out = {} copy(%{})\n}}\n", kAct, values.back());
    return t;
  }();
  return text;
}

// Reads `text` and runs the liveness of each schedule, each phase timed into the state's counters
// (read_s, text_s, dfs_s, list_s); returns the module and the memory-minimizing schedule's buffers,
// which the policies place (as "best" usually picks). The module outlives the buffers it describes.
std::pair<hlo::Module, hlo::BufferSet> timed_read_and_liveness(benchmark::State& state, const std::string& text,
                                                                const char* source, const hlo::SizeOptions& sizes) {
  auto start = std::chrono::steady_clock::now();
  std::pair<hlo::Module, hlo::BufferSet> out{hlo::parse_hlo(text, source), hlo::BufferSet{}};
  const hlo::Module& m = out.first;
  state.counters["read_s"] = seconds_since(start);
  state.counters["instructions"] = static_cast<double>(m.instruction_count());
  for (const char* name : {"text", "dfs", "list"}) {
    start = std::chrono::steady_clock::now();
    const hlo::Schedule schedule = name == std::string("text") ? hlo::text_schedule(m)
                                   : name == std::string("dfs") ? hlo::dfs_schedule(m, sizes)
                                                                : hlo::list_schedule(m, sizes);
    hlo::BufferSet set = hlo::live_buffers(m, schedule, sizes);
    state.counters[fmt::format("{}_s", name)] = seconds_since(start);
    if (name == std::string("list")) out.second = std::move(set);
  }
  return out;
}

// Each phase once, alone: a planner search is bounded by its timeout, not by the iterations.
void BM_DifficultHlo(benchmark::State& state) {
  const std::string& text = difficult_module();
  hlo::SizeOptions sizes;
  hlo::PlacementOptions placement;
  placement.planner_timeout_seconds = 2;
  for (auto _ : state) {
    auto [m, list_buffers] = timed_read_and_liveness(state, text, "difficult.hlo", sizes);
    auto start = std::chrono::steady_clock::now();
    // Placement on the memory-minimizing schedule's buffers, as "best" usually picks.
    for (const std::string& policy : hlo::placement_policy_names()) {
      start = std::chrono::steady_clock::now();
      const hlo::Placement p = hlo::place(policy, list_buffers, placement);
      state.counters[policy + "_s"] = seconds_since(start);
      if (p.failure && !p.timed_out) state.SkipWithError(("placement failed: " + policy).c_str());
      if (policy == "planner") state.counters["planner_timed_out"] = p.timed_out ? 1 : 0;
    }
  }
}
BENCHMARK(BM_DifficultHlo)->Unit(benchmark::kSecond)->Iterations(1);

// A training step with XLA's statistics (fixed seed): the weights are parameters, live
// throughout; a forward pass of kTrainLayers transformer-like layers (norm, three projections, a
// gated product, an output projection, a residual, an MLP of 1024 or 2048 units) saves its
// activations, which the backward pass reads again in reverse layer order, so their lifetimes nest
// like parentheses; the backward pass produces one gradient per weight, all returned in the ROOT
// tuple (live from their creation to the end). Each projection's weight is f32 or bf16 at random
// (a bf16 weight's input is converted and saved in bf16, its gradient converted back), and a few
// elementwise fillers per pass make short-lived temporaries.
constexpr int kTrainLayers = 363;
constexpr int kTrainRows = 256;
constexpr int kTrainModel = 512;

const std::string& training_step_module() {
  static const std::string text = [] {
    std::mt19937 rng(47);
    const auto shape = [](bool bf16, int rows, int cols) {
      return fmt::format("{}[{},{}]{{1,0}}", bf16 ? "bf16" : "f32", rows, cols);
    };
    const auto vector = [](int n) { return fmt::format("f32[{}]{{0}}", n); };
    std::string params, body;
    int next_param = 0, next_value = 0;
    std::vector<std::string> output_shapes, outputs;
    const auto param = [&](const std::string& s, const char* what, int layer) {
      const std::string name = fmt::format("{}.{}", what, layer);
      params += fmt::format("  %{} = {} parameter({})\n", name, s, next_param++);
      return name;
    };
    const auto emit = [&](const std::string& s, const std::string& rhs) {
      const std::string name = fmt::format("v.{}", next_value++);
      body += fmt::format("  %{} = {} {}\n", name, s, rhs);
      return name;
    };
    const std::string act = shape(false, kTrainRows, kTrainModel);
    // A projection's weight w [in, out], f32 or bf16.
    struct Dense {
      std::string w;
      bool bf16;
      int in, out;
    };
    // The operand of x @ w, which the backward pass reads again for w's gradient: x itself, or
    // its bf16 conversion.
    const auto dense_input = [&](const Dense& d, const std::string& x) {
      return d.bf16 ? emit(shape(true, kTrainRows, d.in), fmt::format("convert(%{})", x)) : x;
    };
    const auto dot = [&](const std::string& s, const std::string& a, const std::string& b, int lhs, int rhs) {
      return emit(s, fmt::format("dot(%{}, %{}), lhs_contracting_dims={{{}}}, rhs_contracting_dims={{{}}}", a, b, lhs, rhs));
    };
    const auto output = [&](const std::string& s, const std::string& v) {
      output_shapes.push_back(s);
      outputs.push_back("%" + v);
    };
    // dL/dw = input^T @ dy, converted to the weight's type: an output.
    const auto weight_gradient = [&](const Dense& d, const std::string& input, const std::string& dy) {
      std::string g = dot(shape(false, d.in, d.out), input, dy, 0, 0);
      if (d.bf16) g = emit(shape(true, d.in, d.out), fmt::format("convert(%{})", g));
      output(shape(d.bf16, d.in, d.out), g);
    };
    const char* const fillers[] = {"tanh", "negate", "exponential"};
    // A few elementwise temporaries on x that are folded back into it.
    const auto filler = [&](std::string x) {
      for (int k = static_cast<int>(rng() % 4); k > 0; --k) {
        const std::string t = emit(act, fmt::format("{}(%{})", fillers[rng() % 3], x));
        x = emit(act, fmt::format("add(%{}, %{})", x, t));
      }
      return x;
    };

    struct Layer {
      std::string ln1, ln2, b_in, b_out;
      Dense q, k, v, o, in, out;
      int wide;
      // Saved by the forward pass for the backward one.
      std::string x, n1, n1_q, n1_k, n1_v, q_, k_, v_, e, a_o, h, n2_in, ub, zeros, g_out;
    };
    std::vector<Layer> layers(kTrainLayers);
    for (int l = 0; l < kTrainLayers; ++l) {
      Layer& L = layers[static_cast<std::size_t>(l)];
      L.wide = rng() % 2 == 0 ? 1024 : 2048;
      const auto projection = [&](const char* what, int in, int out) {
        const bool bf16 = rng() % 2 == 0;
        return Dense{param(shape(bf16, in, out), what, l), bf16, in, out};
      };
      L.ln1 = param(vector(kTrainModel), "ln1", l);
      L.q = projection("wq", kTrainModel, kTrainModel);
      L.k = projection("wk", kTrainModel, kTrainModel);
      L.v = projection("wv", kTrainModel, kTrainModel);
      L.o = projection("wo", kTrainModel, kTrainModel);
      L.ln2 = param(vector(kTrainModel), "ln2", l);
      L.in = projection("w_in", kTrainModel, L.wide);
      L.b_in = param(vector(L.wide), "b_in", l);
      L.out = projection("w_out", L.wide, kTrainModel);
      L.b_out = param(vector(kTrainModel), "b_out", l);
    }
    std::string x = param(act, "x", 0);
    body += "  %zero = f32[] constant(0)\n";

    // Forward.
    for (Layer& L : layers) {
      L.x = x;
      const std::string bc1 = emit(act, fmt::format("broadcast(%{}), dimensions={{1}}", L.ln1));
      L.n1 = emit(act, fmt::format("multiply(%{}, %{})", x, bc1));
      L.n1_q = dense_input(L.q, L.n1);
      L.q_ = dot(act, L.n1_q, L.q.w, 1, 0);
      L.n1_k = dense_input(L.k, L.n1);
      L.k_ = dot(act, L.n1_k, L.k.w, 1, 0);
      L.n1_v = dense_input(L.v, L.n1);
      L.v_ = dot(act, L.n1_v, L.v.w, 1, 0);
      const std::string s = emit(act, fmt::format("multiply(%{}, %{})", L.q_, L.k_));
      L.e = emit(act, fmt::format("exponential(%{})", s));
      const std::string a = emit(act, fmt::format("multiply(%{}, %{})", L.e, L.v_));
      L.a_o = dense_input(L.o, a);
      const std::string o = dot(act, L.a_o, L.o.w, 1, 0);
      L.h = filler(emit(act, fmt::format("add(%{}, %{})", x, o)));
      const std::string bc2 = emit(act, fmt::format("broadcast(%{}), dimensions={{1}}", L.ln2));
      const std::string n2 = emit(act, fmt::format("multiply(%{}, %{})", L.h, bc2));
      L.n2_in = dense_input(L.in, n2);
      const std::string wide = shape(false, kTrainRows, L.wide);
      const std::string u = dot(wide, L.n2_in, L.in.w, 1, 0);
      const std::string bci = emit(wide, fmt::format("broadcast(%{}), dimensions={{1}}", L.b_in));
      L.ub = emit(wide, fmt::format("add(%{}, %{})", u, bci));
      L.zeros = emit(wide, "broadcast(%zero), dimensions={}");
      const std::string g = emit(wide, fmt::format("maximum(%{}, %{})", L.ub, L.zeros));
      L.g_out = dense_input(L.out, g);
      const std::string d = dot(act, L.g_out, L.out.w, 1, 0);
      const std::string bco = emit(act, fmt::format("broadcast(%{}), dimensions={{1}}", L.b_out));
      const std::string d2 = emit(act, fmt::format("add(%{}, %{})", d, bco));
      x = filler(emit(act, fmt::format("add(%{}, %{})", L.h, d2)));
    }
    const std::string square = emit(act, fmt::format("multiply(%{}, %{})", x, x));
    const std::string loss = emit("f32[]", fmt::format("reduce(%{}, %zero), dimensions={{0,1}}, to_apply=%sum", square));
    output("f32[]", loss);
    std::string gy = emit(act, fmt::format("add(%{}, %{})", x, x));

    // Backward, last layer first.
    const auto bias_gradient = [&](const std::string& dy, int n) {
      output(vector(n), emit(vector(n), fmt::format("reduce(%{}, %zero), dimensions={{0}}, to_apply=%sum", dy)));
    };
    for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
      const Layer& L = *it;
      const std::string wide = shape(false, kTrainRows, L.wide);
      bias_gradient(gy, kTrainModel);
      weight_gradient(L.out, L.g_out, gy);
      const std::string gg = dot(wide, gy, L.out.w, 1, 1);
      const std::string mask = emit(fmt::format("pred[{},{}]{{1,0}}", kTrainRows, L.wide),
                                    fmt::format("compare(%{}, %{}), direction=GT", L.ub, L.zeros));
      const std::string gub = emit(wide, fmt::format("select(%{}, %{}, %{})", mask, gg, L.zeros));
      bias_gradient(gub, L.wide);
      weight_gradient(L.in, L.n2_in, gub);
      const std::string gn2 = dot(act, gub, L.in.w, 1, 1);
      const std::string p2 = emit(act, fmt::format("multiply(%{}, %{})", gn2, L.h));
      bias_gradient(p2, kTrainModel);  // the norm's scale
      const std::string bc2 = emit(act, fmt::format("broadcast(%{}), dimensions={{1}}", L.ln2));
      const std::string t2 = emit(act, fmt::format("multiply(%{}, %{})", gn2, bc2));
      const std::string gh = filler(emit(act, fmt::format("add(%{}, %{})", gy, t2)));
      weight_gradient(L.o, L.a_o, gh);
      const std::string ga = dot(act, gh, L.o.w, 1, 1);
      const std::string ge = emit(act, fmt::format("multiply(%{}, %{})", ga, L.v_));
      const std::string gv = emit(act, fmt::format("multiply(%{}, %{})", ga, L.e));
      const std::string gs = emit(act, fmt::format("multiply(%{}, %{})", ge, L.e));
      const std::string gq = emit(act, fmt::format("multiply(%{}, %{})", gs, L.k_));
      const std::string gk = emit(act, fmt::format("multiply(%{}, %{})", gs, L.q_));
      weight_gradient(L.q, L.n1_q, gq);
      weight_gradient(L.k, L.n1_k, gk);
      weight_gradient(L.v, L.n1_v, gv);
      const std::string dq = dot(act, gq, L.q.w, 1, 1);
      const std::string dk = dot(act, gk, L.k.w, 1, 1);
      const std::string dv = dot(act, gv, L.v.w, 1, 1);
      const std::string gn1 = emit(act, fmt::format("add(%{}, %{})", emit(act, fmt::format("add(%{}, %{})", dq, dk)), dv));
      const std::string p1 = emit(act, fmt::format("multiply(%{}, %{})", gn1, L.x));
      bias_gradient(p1, kTrainModel);
      const std::string bc1 = emit(act, fmt::format("broadcast(%{}), dimensions={{1}}", L.ln1));
      const std::string t1 = emit(act, fmt::format("multiply(%{}, %{})", gn1, bc1));
      gy = filler(emit(act, fmt::format("add(%{}, %{})", gh, t1)));
    }
    output(act, gy);  // the input's gradient

    const std::string result = fmt::format("({})", fmt::join(output_shapes, ", "));
    std::string t = "HloModule jit_train_step\n\n";
    t += "%sum (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n";
    t += "  ROOT %s = f32[] add(%a, %b)\n}\n\n";
    t += fmt::format("ENTRY %train_step () -> {} {{\n", result);
    t += params;
    t += body;
    t += fmt::format("  ROOT %gradients = {} tuple({})\n}}\n", result, fmt::join(outputs, ", "));
    return t;
  }();
  return text;
}

// The training step, each phase once, the planner with its default timeout (10 s), as `tpuemu run`
// gives it. Counters: seconds per phase, whether the planner timed out, and each heap over the
// peak live bytes of the schedule placed.
void BM_TrainingStepHlo(benchmark::State& state) {
  const std::string& text = training_step_module();
  hlo::SizeOptions sizes;
  const hlo::PlacementOptions placement;
  for (auto _ : state) {
    auto [m, list_buffers] = timed_read_and_liveness(state, text, "training_step.hlo", sizes);
    auto start = std::chrono::steady_clock::now();
    state.counters["buffers"] = static_cast<double>(list_buffers.buffers.size());
    for (const std::string& policy : hlo::placement_policy_names()) {
      start = std::chrono::steady_clock::now();
      const hlo::Placement p = hlo::place(policy, list_buffers, placement);
      state.counters[policy + "_s"] = seconds_since(start);
      if (p.failure && !p.timed_out) state.SkipWithError(("placement failed: " + policy).c_str());
      state.counters[policy + "_heap/peak"] =
          static_cast<double>(p.heap_bytes) / static_cast<double>(std::max<std::uint64_t>(p.peak_live_bytes, 1));
      if (policy == "planner") state.counters["planner_timed_out"] = p.timed_out ? 1 : 0;
    }
  }
}
BENCHMARK(BM_TrainingStepHlo)->Unit(benchmark::kSecond)->Iterations(1);

// Resident memory, from /proc/self/status: the current set and its high-water mark.
std::uint64_t status_kib(const char* field) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  std::uint64_t kib = 0;
  const std::size_t n = std::strlen(field);
  while (std::fgets(line, sizeof line, f) != nullptr)
    if (std::strncmp(line, field, n) == 0) kib = std::strtoull(line + n + 1, nullptr, 10);
  std::fclose(f);
  return kib;
}
// Linux resets the high-water mark to the current set when 5 is written to clear_refs.
void reset_peak_resident() {
  if (std::FILE* f = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", f);
    std::fclose(f);
  }
}

// A chain of `n` adds on one tile, each reading the previous one: the shortest lines an HLO
// module has, so the most instructions (and buffers) per byte of text.
std::string chain_module(std::size_t n) {
  std::string t = "HloModule chain\n\nENTRY %main (p: f32[8,128]) -> f32[8,128] {\n";
  t += "  %p = f32[8,128]{1,0} parameter(0)\n  %add.0 = f32[8,128]{1,0} add(%p, %p)\n";
  for (std::size_t i = 1; i < n; ++i) t += fmt::format("  %add.{} = f32[8,128]{{1,0}} add(%add.{}, %p)\n", i, i - 1);
  t += fmt::format("  ROOT %out = f32[8,128]{{1,0}} copy(%add.{})\n}}\n", n - 1);
  return t;
}

// Reads and analyses a chain with the text schedule and the xla policy (what a user's `tpuemu
// run chain.hlo --schedule text --allocator xla` does), and prints the time and the peak memory
// per byte of text, the text itself included. False when a target is missed.
bool measure_chain(std::size_t instructions, double target_seconds) {
  std::string text = chain_module(instructions);
  const std::size_t size = text.size();
  const std::uint64_t before = status_kib("VmRSS:");
  reset_peak_resident();
  const auto start = std::chrono::steady_clock::now();
  const hlo::Module m = hlo::parse_hlo(std::move(text), "chain.hlo");  // the module keeps the text
  const double read = seconds_since(start);
  const std::uint64_t after_read = status_kib("VmHWM:");
  hlo::AnalysisOptions o;
  o.schedule = "text";
  o.policies = {"xla"};
  const hlo::Analysis a = hlo::analyze(m, o);
  const double total = seconds_since(start);
  const std::uint64_t peak = status_kib("VmHWM:");
  const double per_byte =
      (static_cast<double>(peak > before ? peak - before : 0) * 1024.0 + static_cast<double>(size)) /
      static_cast<double>(size);
  // About 10 bytes per byte is the bound; the chain's shortest lines are its worst case, at 11.4
  // (docs/hlo.md, "Memory"): past 12 is a regression.
  const bool met = total <= target_seconds && per_byte <= 12.0 && !a.placements.empty() && !a.placements[0].failure;
  const auto per_text_byte = [&](std::uint64_t kib) {
    return static_cast<double>(kib > before ? kib - before : 0) * 1024.0 / static_cast<double>(size);
  };
  std::printf("chain of %zu adds, %.0f MB: read %.2f s, analysis %.2f s (target %.0f s); %.1f bytes of memory per byte of text (target about 10, at most 12; the module %.1f, the text 1): %s\n",
              instructions, static_cast<double>(size) / 1e6, read, total - read, target_seconds, per_byte,
              per_text_byte(after_read), met ? "met" : "MISSED");
  return met;
}

}  // namespace

int main(int argc, char** argv) {
  // --write-modules DIR: the generated modules as files, to time `tpuemu run` on them.
  if (argc == 3 && std::string(argv[1]) == "--write-modules") {
    const std::string dir = argv[2];
    const std::pair<const char*, std::string> modules[] = {{"generated.hlo", generated_module()},
                                                           {"difficult.hlo", difficult_module()},
                                                           {"training_step.hlo", training_step_module()},
                                                           {"chain_10mb.hlo", chain_module(255000)}};
    for (const auto& [name, text] : modules) {
      std::FILE* f = std::fopen((dir + "/" + name).c_str(), "w");
      if (f == nullptr || std::fwrite(text.data(), 1, text.size(), f) != text.size()) return 1;
      std::fclose(f);
    }
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  // The target, measured once end to end as a user's `tpuemu run module.hlo` does it.
  const std::string& text = generated_module();
  const auto start = std::chrono::steady_clock::now();
  const hlo::Module m = hlo::parse_hlo(text, "generated.hlo");
  const double read = seconds_since(start);
  const hlo::Analysis a = hlo::analyze(m, analysis_options());
  const double total = seconds_since(start);
  bool valid = true;
  for (const hlo::Placement& p : a.placements) valid = valid && !p.failure && p.heap_bytes >= a.usage.arguments;
  std::printf("\nHLO module: %zu instructions, %.1f MB of text\n", m.instruction_count(), static_cast<double>(text.size()) / 1e6);
  std::printf("read:     %.3f s  (%.0f instructions/s)\n", read, static_cast<double>(m.instruction_count()) / read);
  std::printf("analysis: %.3f s  (%.0f instructions/s; schedules text, dfs, list; xla + 5 runtime policies)\n", total - read,
              static_cast<double>(m.instruction_count()) / (total - read));
  std::printf("read + analysis: %.3f s against a target of 2 s: %s\n", total, total < 2.0 ? "met" : "MISSED");
  if (!valid) std::printf("a placement failed\n");
  // The chains of docs/hlo.md, "Memory": 10 MB in 5 s, 100 MB in 60 s.
  bool chains = measure_chain(255000, 5.0);
  chains = measure_chain(1900000, 60.0) && chains;
  return total < 2.0 && valid && chains ? 0 : 1;
}
