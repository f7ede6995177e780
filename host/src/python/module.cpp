// SPDX-License-Identifier: Apache-2.0
// The extension module tpuemu._tpuemu (docs/python.md): the runtime's calls with Python types.
// Reports cross as the CLI's JSON text, which the package's Python layer (tpuemu/__init__.py)
// parses, so a dict from Python is the CLI's --json output by construction. Every call that simulates
// releases the GIL; a run asks Python for pending signals between its steps, so Ctrl-C ends it
// with KeyboardInterrupt (the run's device is closed, nothing is half-written).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "signal_stop.h"
#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/alloc/allocator.h"
#include "tpuemu/alloc/memory_space.h"
#include "tpuemu/compile/model.h"
#include "tpuemu/compile/workload.h"
#include "tpuemu/config/config.h"
#include "tpuemu/device/device.h"
#include "tpuemu/hlo/analysis.h"
#include "tpuemu/hlo/hlo_parser.h"
#include "tpuemu/hlo_exec/hlo_model.h"
#include "tpuemu/plan/plan_input.h"
#include "tpuemu/plan/planner.h"
#include "tpuemu/run/installation.h"
#include "tpuemu/run/runner.h"

namespace tpuemu::python {
namespace {

// What run() takes; the Python layer names the same fields as `tpuemu run`'s options.
struct RunArgs {
  std::string model_path;  // a model JSON file, or empty with matmul
  std::string matmul;      // "MxKxN"
  std::string preset;      // empty: the model's, else "default"
  std::string backend = "rtl";
  std::optional<unsigned> buffers;
  std::optional<std::uint64_t> seed;
  std::string allocator = std::string(alloc::kDefaultAllocator);
  std::uint64_t max_cycles = 4'000'000'000;
  std::optional<std::uint64_t> hbm_capacity;
  std::optional<std::size_t> batch;
  std::size_t requests = 1;
};

// A model read or made by `load` (without the GIL: reading a program may take long) run as
// `tpuemu run --json` runs it; its report as JSON.
nlohmann::json run_model_json(const RunArgs& a, const std::function<Model()>& load) {
  Model model;
  Preset preset;
  RunSettings s;
  SignalStop signals;
  {
    py::gil_scoped_release unlocked;
    model = load();
    if (a.seed) model.seed = *a.seed;
    preset = a.preset.empty() ? load_model_preset(model) : load_preset(a.preset);
    s.backend = a.backend;
    const unsigned all = a.buffers.value_or(model.buffers.value_or(2));
    s.compile.buffers = {all, all, all};
    s.allocator = a.allocator;
    s.max_cycles = a.max_cycles;
    s.device.preset_argument = a.preset;
    if (a.hbm_capacity) {
      if (const auto problem = hbm_capacity_problem(preset, *a.hbm_capacity)) {
        throw Error(fmt::format("hbm_capacity={}", *a.hbm_capacity), *problem);
      }
      s.hbm_capacity = a.hbm_capacity;
    }
    s.batch = a.batch;
    s.requests = a.requests;
    s.interrupted = [token = signals.token()] { return token.requested(); };
    try {
      return report_to_json(run_model(preset, model, s));
    } catch (const Interrupted&) {
      if (!signals.signalled()) throw;
    }
  }
  signals.raise_if_signalled();
  throw Error("run: interrupted");  // not reached: only a signal interrupts
}

std::string run_json(const RunArgs& a) {
  return run_model_json(a, [&a] {
           return a.model_path.empty() ? model_from_workload(parse_matmul_shape(a.matmul, false, a.seed.value_or(1)))
                                       : load_model(a.model_path);
         }).dump();
}

// A JAX/XLA program of dense and convolution layers run on a device as `tpuemu run PROGRAM.hlo
// --json` runs it (docs/hlo.md, "Executing on the device"): text, or a path with the text empty.
// A program the device cannot run is refused at its first instruction that cannot.
std::string run_hlo_json(const std::string& text, const std::string& path, const RunArgs& a) {
  std::vector<std::string> original_dtypes;
  nlohmann::json j = run_model_json(a, [&] {
    const hlo::Module module = path.empty() ? hlo::parse_hlo(text, "<text>") : hlo::read_hlo_file(path);
    try {
      hlo_exec::HloModel program = hlo_exec::model_from_hlo(module);
      original_dtypes = std::move(program.original_dtypes);
      return std::move(program.model);
    } catch (const Error& e) {
      throw Error(e.place(), e.cause() + "; tpuemu.analyze_hlo analyses its memory");
    }
  });
  // What ran stands in for the program: its arrays in int8, its values from the seed (the CLI's).
  j["hlo"] = {{"executed", "int8"}, {"original_dtypes", original_dtypes}};
  return j.dump();
}

// An analysis or a replay: its JSON report, and when something did not fit, the one line the CLI
// prints for it (the Python layer raises OutOfMemory with the report). analyze_hlo adds the
// placements when asked.
using ReportAndFailure = std::tuple<std::string, std::optional<std::string>>;

struct HloArgs {
  std::string text;  // HLO text, or empty with path
  std::string path;
  std::string preset = "tpu-v4-like";  // the CLI's default for HLO programs
  std::optional<std::uint64_t> hbm_capacity;
  std::string schedule;
  std::string allocator;  // one policy, or empty / "all": every one
  bool tiled = true;
};

// The analysis with its module, which must outlive it: the buffers' descriptions are read from the
// module when asked (BufferSet::describe).
struct AnalysedHlo {
  std::unique_ptr<const hlo::Module> module;
  hlo::Analysis analysis;
};

AnalysedHlo analyze_hlo_unlocked(const HloArgs& a, const StopToken& stop) {
  hlo::AnalysisOptions options;
  options.stop = stop;
  options.schedule = a.schedule;
  if (!a.allocator.empty() && a.allocator != "all") options.policies = {a.allocator};
  options.sizes.tiled = a.tiled;
  const Preset preset = load_preset(a.preset);
  options.sizes.lanes = preset.dim;
  options.vmem_capacity = preset.vmem_bytes();
  options.hbm_capacity = a.hbm_capacity;
  AnalysedHlo out;
  out.module = std::make_unique<const hlo::Module>(a.path.empty() ? hlo::parse_hlo(a.text, "<text>")
                                                                  : hlo::read_hlo_file(a.path));
  out.analysis = hlo::analyze(*out.module, options);
  return out;
}

// Where each policy put the schedule's HBM buffers, for plots: the buffers as columns (numpy
// arrays of sizes and live ranges, lists of names) and, per policy that placed them all, the
// offsets in the same order.
py::dict placements_dict(const hlo::Analysis& a) {
  const hlo::BufferSet& set = a.schedule.buffers;
  const std::size_t n = set.buffers.size();
  py::array_t<std::uint64_t> bytes(n), unpadded(n);
  py::array_t<std::int64_t> start(n), end(n);
  py::list names, kinds, op_names;
  for (std::size_t i = 0; i < n; ++i) {
    const hlo::LiveBuffer& b = set.buffers[i];
    bytes.mutable_at(i) = b.bytes;
    unpadded.mutable_at(i) = b.unpadded;
    start.mutable_at(i) = b.start;
    end.mutable_at(i) = b.end;
    names.append(b.name);
    kinds.append(std::string(hlo::buffer_kind_name(b.kind)));
    op_names.append(set.describe(b).op_name);
  }
  py::dict buffers;
  buffers["name"] = names;
  buffers["kind"] = kinds;
  buffers["op_name"] = op_names;
  buffers["bytes"] = bytes;
  buffers["unpadded"] = unpadded;
  buffers["start"] = start;
  buffers["end"] = end;
  py::dict offsets;
  for (const hlo::Placement& p : a.placements) {
    if (p.failure || p.offsets.size() != n) continue;
    offsets[py::str(p.policy)] = py::array_t<std::uint64_t>(n, p.offsets.data());
  }
  py::dict d;
  d["positions"] = set.positions;
  d["buffers"] = buffers;
  d["offsets"] = offsets;
  return d;
}

std::tuple<std::string, std::optional<std::string>, py::object> analyze_hlo(const HloArgs& a, bool placements) {
  std::optional<AnalysedHlo> analysed;
  std::string report;
  std::optional<std::string> failure;
  SignalStop signals;
  try {
    py::gil_scoped_release unlocked;
    analysed = analyze_hlo_unlocked(a, signals.token());
    const hlo::Analysis& analysis = analysed->analysis;
    if (analysis.out_of_memory()) {
      const std::string oom = hlo::out_of_memory_report(analysis);
      failure = fmt::format("{}: {}", analysis.source, oom.substr(0, oom.find('\n')));
    }
    report = hlo::analysis_to_json(analysis).dump();
  } catch (const Interrupted&) {
    signals.raise_if_signalled();
    throw;
  }
  return {report, failure, placements ? py::object(placements_dict(analysed->analysis)) : py::object(py::none())};
}

// The planner's result: every figure of PlanResult, the offsets in input order.
std::string plan_json(const std::vector<std::tuple<std::string, std::int64_t, std::int64_t, std::uint64_t,
                                                   std::uint64_t>>& rows,
                      std::uint64_t capacity, double timeout_seconds) {
  // The CLI's rules, from the same checks: its CSV reader's and its --timeout's.
  std::vector<plan::PlanBuffer> buffers;
  buffers.reserve(rows.size());
  plan::PlanInputCheck check;
  for (const auto& [id, lower, upper, size, alignment] : rows) {
    const std::string at = fmt::format("buffers[{}]", buffers.size());
    buffers.push_back({id, lower, upper, size, alignment});
    if (const auto problem = check.add(buffers.back(), "at " + at))
      throw Error(at, problem->message);
  }
  if (buffers.empty()) throw Error("plan: no buffers");
  if (const auto problem = plan::timeout_problem(timeout_seconds))
    throw Error(fmt::format("timeout={} {}", timeout_seconds, *problem));
  plan::PlanOptions options;
  options.capacity = capacity;
  options.timeout_seconds = timeout_seconds;
  SignalStop signals;
  options.stop = signals.token();
  plan::PlanResult r;
  try {
    py::gil_scoped_release unlocked;
    r = plan::plan_buffers(buffers, options);
  } catch (const Interrupted&) {
    signals.raise_if_signalled();
    throw;
  }
  // Infeasible is a status like the others: the package raises OutOfMemory on it.
  nlohmann::json j = plan::plan_result_to_json(r);
  j["buffers"] = buffers.size();
  j["capacity"] = capacity;
  j["offsets"] = r.offsets;
  return j.dump();
}

ReportAndFailure replay(const std::string& trace_path, const std::vector<std::string>& capacities,
                        const std::vector<std::string>& policies, std::uint64_t granularity) {
  py::gil_scoped_release unlocked;
  const alloc::AllocTrace trace = alloc::read_alloc_trace(trace_path);
  alloc::ReplayOptions options;
  try {
    options.capacity = alloc::replay_capacities(capacities, trace);
  } catch (const Error& e) {
    throw Error("capacities", e.what());
  }
  // The CLI's rules, from the same functions.
  if (const auto problem = alloc::replay_granularity_problem(granularity))
    throw Error(fmt::format("granularity={} {}", granularity, *problem));
  options.granularity = granularity;
  if (const auto problem = alloc::replay_policies_problem(policies))
    throw Error("allocator", *problem);
  options.policies = policies;
  const alloc::ReplayResult result = alloc::replay_alloc_trace(trace, options);
  std::optional<std::string> failure;
  for (const auto& run : result.runs) {
    if (run.first_failure && !failure) failure = *run.first_failure;
  }
  return {alloc::replay_to_json(result).dump(), failure};
}

nlohmann::json counters_json(const Counters& c) {
  nlohmann::json j = nlohmann::json::object();
#define TPUEMU_COUNTER_JSON(index, counter_name, doc) j[#counter_name] = c.counter_name;
  TPUEMU_SPEC_COUNTERS(TPUEMU_COUNTER_JSON)
#undef TPUEMU_COUNTER_JSON
  return j;
}

nlohmann::json queue_json(const QueueInfo& q) {
  return {{"entries", q.entries}, {"head_waits", q.head_waits}, {"wait_sem", q.wait_sem}};
}

// A run record (RUN, GET_STATE) as the Python layer returns it.
nlohmann::json run_record_json(const RunResult& r) {
  return {{"status", std::string(to_string(r.status))},
          {"ok", r.ok()},
          {"cycles", r.cycles},
          {"error_code", r.error_code},
          {"error", std::string(error_code_name(r.error_code))},
          {"error_pc", r.error_pc},
          {"pc", r.pc},
          {"describe", r.describe()},
          {"semaphores", r.semaphores},
          {"queues", {{"dma", queue_json(r.queues.dma)}, {"mxu", queue_json(r.queues.mxu)},
                      {"vector", queue_json(r.queues.vector)}, {"fetch_stopped", r.queues.fetch_stopped}}}};
}

// A device for hardware-in-the-loop suites: HBM as bytes (the Python layer views them as numpy
// arrays of the device's dtypes), a program, a run, the counters.
class PyDevice {
 public:
  PyDevice(const std::string& backend, const std::string& preset_name) {
    const Preset preset = load_preset(preset_name);
    DeviceOptions o;
    o.preset_argument = preset_name;
    py::gil_scoped_release unlocked;
    device_ = open_device(backend, preset, o);
  }

  Device& device() {
    if (!device_) throw Error("device: closed");
    return *device_;
  }
  std::uint64_t hbm_capacity() { return device().info().hbm_capacity; }
  std::string backend() { return device().info().backend; }
  std::uint32_t dim() { return device().info().dim; }
  std::uint32_t smem_words() { return device().info().smem_words; }

  void write_hbm(std::uint64_t addr, const py::buffer& data) {
    const py::buffer_info b = data.request();
    if (!is_contiguous(b)) throw Error("device: write_hbm needs a C-contiguous array");
    const auto size = static_cast<std::uint64_t>(b.size * b.itemsize);
    const std::span<const std::uint8_t> bytes(static_cast<const std::uint8_t*>(b.ptr), size);
    py::gil_scoped_release unlocked;
    device().write_hbm(addr, bytes);
  }

  // Reads into a writable buffer the Python layer allocated (a numpy array): no copy in Python.
  void read_hbm_into(std::uint64_t addr, const py::buffer& out) {
    const py::buffer_info b = out.request(/*writable=*/true);
    if (!is_contiguous(b)) throw Error("device: read_hbm needs a C-contiguous array");
    const auto size = static_cast<std::uint64_t>(b.size * b.itemsize);
    const std::span<std::uint8_t> bytes(static_cast<std::uint8_t*>(b.ptr), size);
    py::gil_scoped_release unlocked;
    device().read_hbm(addr, bytes);
  }

  void load_program(std::uint64_t addr, const py::bytes& program) {
    const std::string p = program;
    py::gil_scoped_release unlocked;
    device().load_program(addr, std::span(reinterpret_cast<const std::uint8_t*>(p.data()), p.size()));
  }

  // The run's outcome and counters as JSON text: {"status", "cycles", "error_code", ..., "counters"}.
  // Runs in slices of check_every cycles, resuming the core after each (the protocol's RUN with
  // RESUME continues where the last one stopped), and asks Python for pending signals between
  // two: on Ctrl-C the device is reset and KeyboardInterrupt raised. The cycles are the slices'.
  std::string run(std::uint64_t max_cycles, std::uint64_t check_every) {
    if (max_cycles == 0) throw Error("device: run: max_cycles must be > 0");
    if (check_every == 0) throw Error("device: run: check_every must be > 0 cycles");
    RunResult r;
    Counters c;
    std::uint64_t cycles = 0;
    bool interrupted = false;
    {
      py::gil_scoped_release unlocked;
      RunOptions o;
      o.throw_on_failure = false;
      for (std::uint64_t budget = max_cycles; budget > 0;) {
        o.max_cycles = std::min(check_every, budget);
        budget -= o.max_cycles;
        r = device().run(o);
        o.resume = true;
        cycles += r.cycles;
        if (r.status != RunStatus::Timeout || budget == 0) break;
        py::gil_scoped_acquire locked;
        if (PyErr_CheckSignals() != 0) {
          PyErr_Clear();  // raised again below, once the device is reset
          interrupted = true;
          break;
        }
      }
      if (interrupted) {
        device().reset();
      } else {
        c = device().counters();
      }
    }
    if (interrupted) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
      throw py::error_already_set();
    }
    r.cycles = cycles;
    nlohmann::json j = run_record_json(r);
    j["counters"] = counters_json(c);
    return j.dump();
  }

  // The core's state now (GET_STATE): status, pc, queues, semaphores; no counters.
  std::string state() {
    RunResult r;
    {
      py::gil_scoped_release unlocked;
      r = device().state();
    }
    return run_record_json(r).dump();
  }

  py::bytes ping(const py::bytes& payload) {
    const std::string p = payload;
    std::vector<std::uint8_t> echo;
    {
      py::gil_scoped_release unlocked;
      echo = device().ping(std::span(reinterpret_cast<const std::uint8_t*>(p.data()), p.size()));
    }
    return {reinterpret_cast<const char*>(echo.data()), echo.size()};
  }

  void write_smem(std::uint32_t word, const py::array_t<std::uint32_t, py::array::c_style>& words) {
    const std::span<const std::uint32_t> w(words.data(), static_cast<std::size_t>(words.size()));
    py::gil_scoped_release unlocked;
    device().write_smem(word, w);
  }

  py::array_t<std::uint32_t> read_smem(std::uint32_t word, std::size_t count) {
    py::array_t<std::uint32_t> out(count);
    const std::span<std::uint32_t> w(out.mutable_data(), count);
    py::gil_scoped_release unlocked;
    device().read_smem(word, w);
    return out;
  }

  void set_semaphore(std::uint32_t index, std::uint32_t value) {
    py::gil_scoped_release unlocked;
    device().set_semaphore(index, value);
  }

  void reset() {
    py::gil_scoped_release unlocked;
    device().reset();
  }
  void close() {
    py::gil_scoped_release unlocked;
    device_.reset();
  }

 private:
  static bool is_contiguous(const py::buffer_info& b) {
    py::ssize_t stride = b.itemsize;
    for (py::ssize_t d = b.ndim; d-- > 0;) {
      if (b.shape[d] != 1 && b.strides[d] != stride) return false;
      stride *= b.shape[d];
    }
    return true;
  }

  std::unique_ptr<Device> device_;
};

}  // namespace
}  // namespace tpuemu::python

PYBIND11_MODULE(_tpuemu, m) {
  using namespace tpuemu;
  using tpuemu::python::PyDevice;
  using tpuemu::python::RunArgs;
  m.doc() = "tpuemu's runtime (the package tpuemu wraps it: import tpuemu)";
  // Exceptions: the package defines the classes (tpuemu.Error, tpuemu.OutOfMemory) and hands them
  // over before first use, so they are plain Python classes users can subclass and pickle.
  // Held for the interpreter's lifetime (a reference that is never dropped: no destructor runs
  // after the interpreter has gone).
  static py::handle error_class, oom_class;
  m.def("_set_exceptions", [](py::object error, py::object oom) {
    error_class = error.release();
    oom_class = oom.release();
  });
  py::register_exception_translator([](std::exception_ptr p) {
    if (!p) return;
    try {
      std::rethrow_exception(p);
    } catch (const alloc::OutOfMemory& e) {
      py::object exc = oom_class(e.what());
      exc.attr("requested") = e.requested();
      exc.attr("needed") = e.needed();
      exc.attr("fits_without_fragmentation") = e.fits_without_fragmentation();
      PyErr_SetObject(oom_class.ptr(), exc.ptr());
    } catch (const Error& e) {
      PyErr_SetString(error_class.ptr(), e.what());
    }
  });
  m.def("info_json", [] { return describe_installation().json.dump(); });
  m.def(
      "run_json",
      [](std::string model_path, std::string matmul, std::string preset, std::string backend,
         std::optional<unsigned> buffers, std::optional<std::uint64_t> seed, std::string allocator,
         std::uint64_t max_cycles, std::optional<std::uint64_t> hbm_capacity, std::optional<std::size_t> batch,
         std::size_t requests) {
        return python::run_json(RunArgs{std::move(model_path), std::move(matmul), std::move(preset), std::move(backend),
                                        buffers, seed, std::move(allocator), max_cycles, hbm_capacity, batch,
                                        requests});
      });
  m.def(
      "run_hlo_json",
      [](std::string text, std::string path, std::string preset, std::string backend, std::optional<unsigned> buffers,
         std::optional<std::uint64_t> seed, std::string allocator, std::uint64_t max_cycles,
         std::optional<std::uint64_t> hbm_capacity, std::size_t requests) {
        return python::run_hlo_json(text, path,
                                    RunArgs{"", "", std::move(preset), std::move(backend), buffers, seed,
                                            std::move(allocator), max_cycles, hbm_capacity, std::nullopt, requests});
      });
  m.def("analyze_hlo_json", [](std::string text, std::string path, std::string preset,
                               std::optional<std::uint64_t> hbm_capacity, std::string schedule, std::string allocator,
                               bool tiled, bool placements) {
    return python::analyze_hlo(python::HloArgs{std::move(text), std::move(path), std::move(preset), hbm_capacity,
                                               std::move(schedule), std::move(allocator), tiled},
                               placements);
  });
  // The one sniffing of HLO text (the CLI's): analyze_hlo takes a str that passes it as text.
  m.def("looks_like_hlo_text", [](const std::string& text) { return hlo::looks_like_hlo_text(text); });
  m.def("plan_json", &python::plan_json);
  m.def("replay_json", &python::replay);
  py::class_<PyDevice>(m, "Device")
      .def(py::init<const std::string&, const std::string&>())
      .def_property_readonly("hbm_capacity", &PyDevice::hbm_capacity)
      .def_property_readonly("backend", &PyDevice::backend)
      .def_property_readonly("dim", &PyDevice::dim)
      .def_property_readonly("smem_words", &PyDevice::smem_words)
      .def("write_hbm", &PyDevice::write_hbm)
      .def("read_hbm_into", &PyDevice::read_hbm_into)
      .def("load_program", &PyDevice::load_program)
      .def("run", &PyDevice::run)
      .def("state", &PyDevice::state)
      .def("ping", &PyDevice::ping)
      .def("write_smem", &PyDevice::write_smem)
      .def("read_smem", &PyDevice::read_smem)
      .def("set_semaphore", &PyDevice::set_semaphore)
      .def("reset", &PyDevice::reset)
      .def("close", &PyDevice::close);
  python::bind_programs(m);
}
