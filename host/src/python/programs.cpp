// SPDX-License-Identifier: Apache-2.0
// Building programs from Python (docs/python.md, "Programs"): the assembler and its checks, the
// TPU tiled layout as pack/unpack of numpy arrays, the matmul compiler and the model compiler with
// the HBM images and the reference outputs a test compares the device's against. Everything here
// is the C++ runtime's own code; the Python layer (tpuemu/programs.py) only names and groups it.
#include "bindings.h"

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "tpuemu/compile/compile.h"
#include "tpuemu/compile/model.h"
#include "tpuemu/compile/model_compiler.h"
#include "tpuemu/compile/model_reference.h"
#include "tpuemu/compile/reference.h"
#include "tpuemu/config/config.h"
#include "tpuemu/fw/csr.h"
#include "tpuemu/layout/layout.h"
#include "tpuemu/program/program.h"

namespace tpuemu::python {
namespace {

// Tensors and programs are placed one after another from a base address, each aligned to this:
// a page, more than any DMA or program alignment the device asks for.
constexpr std::uint64_t kPlacementAlign = 4096;
static_assert(kPlacementAlign % FW_PROG_ALIGN == 0);

py::bytes to_bytes(const std::vector<std::uint8_t>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size()};
}

std::span<const std::uint8_t> byte_view(const py::bytes& b) {
  const std::string_view s = b;  // pybind11 views the bytes object's buffer, no copy
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

template <class T>
py::array_t<T> to_array(const std::vector<T>& v, std::size_t rows, std::size_t cols) {
  py::array_t<T> out({rows, cols});
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

// A numpy array of exactly the layout's element type and size, C-contiguous: refused otherwise,
// never converted (a float array packed as int8 would be a silent bug in a test).
template <class T>
std::span<const T> values_of(const py::array& a, const TiledLayout& layout, std::string_view what) {
  if (!py::isinstance<py::array_t<T>>(a)) {  // numpy's equivalent types: little-endian int8 / int32
    throw Error(fmt::format("{} '{}': an array of {} where {} values are needed", what, layout.name,
                            py::str(a.dtype()).cast<std::string>(), sizeof(T) == 1 ? "int8" : "int32"));
  }
  if (static_cast<std::size_t>(a.size()) != layout.rows * layout.cols) {
    throw Error(fmt::format("{} '{}': {} values where the tensor is {} x {} = {}", what, layout.name, a.size(),
                            layout.rows, layout.cols, layout.rows * layout.cols));
  }
  if (!(a.flags() & py::array::c_style)) {
    throw Error(fmt::format("{} '{}': the array is not C-contiguous (numpy.ascontiguousarray makes it so)", what,
                            layout.name));
  }
  return {static_cast<const T*>(a.data()), static_cast<std::size_t>(a.size())};
}

py::array_t<std::uint8_t> pack_array(const TiledLayout& layout, const py::array& a) {
  const std::vector<std::uint8_t> image = layout.elem_bytes == 4 ? pack(layout, values_of<std::int32_t>(a, layout, "pack"))
                                                                 : pack(layout, values_of<std::int8_t>(a, layout, "pack"));
  py::array_t<std::uint8_t> out(image.size());
  std::copy(image.begin(), image.end(), out.mutable_data());
  return out;
}

py::array unpack_array(const TiledLayout& layout, const py::buffer& raw) {
  const py::buffer_info b = raw.request();
  const auto size = static_cast<std::size_t>(b.size * b.itemsize);
  if (size != layout.bytes()) {
    throw Error(fmt::format("unpack '{}': {} bytes where its layout holds {}", layout.name, size, layout.bytes()));
  }
  const std::span<const std::uint8_t> bytes(static_cast<const std::uint8_t*>(b.ptr), size);
  if (layout.elem_bytes == 4) return to_array(unpack<std::int32_t>(layout, bytes), layout.rows, layout.cols);
  return to_array(unpack<std::int8_t>(layout, bytes), layout.rows, layout.cols);
}

// Hands out aligned HBM addresses one after another.
class Bump {
 public:
  explicit Bump(std::uint64_t base) : next_(base) {
    if (base % kPlacementAlign != 0)
      throw Error(fmt::format("base=0x{:x}: not a multiple of {} bytes", base, kPlacementAlign));
  }
  std::uint64_t take(std::uint64_t bytes) {
    const std::uint64_t at = next_;
    next_ += (bytes + kPlacementAlign - 1) / kPlacementAlign * kPlacementAlign;
    return at;
  }
  std::uint64_t end() const { return next_; }

 private:
  std::uint64_t next_;
};

py::dict plan_to_dict(const MatmulPlan& p) {
  py::dict d;
  d["block_m"] = p.block_m;
  d["block_n_tiles"] = p.block_n_tiles;
  d["k_tiles"] = p.k_tiles;
  d["m_blocks"] = p.m_blocks;
  d["n_blocks"] = p.n_blocks;
  d["steps"] = p.steps;
  d["a_resident"] = p.a_resident;
  d["a_slots"] = p.a_slots;
  d["b_slots"] = p.b_slots;
  d["out_slots"] = p.out_slots;
  d["vmem_rows_used"] = p.vmem_rows_used;
  d["acc_rows_used"] = p.acc_rows_used;
  d["vmem_placement"] = p.vmem_placement;
  d["bytes_a"] = p.bytes_a;
  d["bytes_b"] = p.bytes_b;
  d["bytes_out"] = p.bytes_out;
  d["bytes_a_reused"] = p.bytes_a_reused;
  d["instructions"] = p.instructions;
  return d;
}

py::tuple tensor(const TiledLayout& layout, std::uint64_t addr) { return py::make_tuple(layout, addr); }

struct MatmulArgs {
  std::string preset = "default";
  std::size_t m = 0, k = 0, n = 0;
  bool requantize = false;
  std::int32_t scale = 1;
  unsigned shift = 0;
  bool relu = false;
  unsigned buffers = 2;
  bool tiled = true;
  std::uint64_t base = 0;
};

py::dict compile_matmul_dict(const MatmulArgs& a) {
  const Preset preset = load_preset(a.preset);
  if (a.buffers < 1 || a.buffers > 3) throw Error(fmt::format("buffers={}: 1, 2 or 3", a.buffers));
  const MatmulSpec spec{a.m, a.k, a.n, a.requantize, a.scale, a.shift, a.relu};
  Bump hbm(a.base);
  const TiledLayout la = matmul_a_layout(spec, preset.dim, a.tiled);
  const TiledLayout lb = matmul_b_layout(spec, preset.dim, a.tiled);
  const TiledLayout lc = matmul_c_layout(spec, preset.dim, a.tiled);
  const HbmTensor ta{la, hbm.take(la.bytes())}, tb{lb, hbm.take(lb.bytes())}, tc{lc, hbm.take(lc.bytes())};
  Program program;
  CompileOptions options;
  options.buffers = {a.buffers, a.buffers, a.buffers};
  const MatmulPlan plan = compile_matmul(preset, spec, ta, tb, tc, options, program);
  program.push_back(Instruction{isa::End{}, std::nullopt, std::nullopt});
  const std::vector<std::uint8_t> bytes = program.to_bytes();
  const std::uint64_t program_addr = hbm.take(bytes.size());
  py::dict d;
  d["program"] = to_bytes(bytes);
  d["program_addr"] = program_addr;
  d["a"] = tensor(la, ta.addr);
  d["b"] = tensor(lb, tb.addr);
  d["c"] = tensor(lc, tc.addr);
  d["plan"] = plan_to_dict(plan);
  d["hbm_end"] = hbm.end();
  return d;
}

struct ModelArgs {
  std::string path;
  std::string preset;  // empty: the model's own, else "default"
  std::size_t batch = 0;  // 0: the model's
  std::optional<unsigned> buffers;
  bool tiled = true;
  std::uint64_t base = 0;
  std::optional<std::uint64_t> seed;
};

// The model compiled for one request with every tensor in its own region (no reuse, so a test
// can read any intermediate tensor), the HBM images the runner would write (weights and bias from
// the model's seed, zeros for gathers, the input of request 0) and every tensor's reference.
py::dict compile_model_dict(const ModelArgs& a) {
  Model model = load_model(a.path);
  if (a.seed) model.seed = *a.seed;
  const Preset preset = a.preset.empty() ? load_model_preset(model) : load_preset(a.preset);
  const std::size_t batch = a.batch == 0 ? model.batch : a.batch;
  const unsigned all = a.buffers.value_or(model.buffers.value_or(2));
  if (all < 1 || all > 3) throw Error(fmt::format("buffers={}: 1, 2 or 3", all));
  CompileOptions options;
  options.buffers = {all, all, all};
  ModelCompiler compiler(preset, model, batch, options, a.tiled, std::nullopt);

  Bump hbm(a.base);
  std::vector<std::uint64_t> tensor_addr;
  py::list tensors;
  for (std::size_t t = 0; t <= model.layers.size(); ++t) {
    tensor_addr.push_back(hbm.take(compiler.layout(t).bytes()));
    tensors.append(py::make_tuple(model.tensor_name(t), compiler.layout(t), tensor_addr.back()));
  }
  std::vector<LayerParams> params;
  for (std::size_t i = 0; i < model.layers.size(); ++i) params.push_back(random_layer_params(model.layers[i], model.seed, i));
  const std::vector<std::int8_t> input = random_input(model.rows(0, batch) * model.input.channels, model.seed, 0);

  py::list writes;
  writes.append(py::make_tuple(tensor_addr[0], to_bytes(compiler.input_image(input))));
  std::uint64_t zeros = 0;
  if (compiler.needs_zeros()) {
    zeros = hbm.take(compiler.zeros_bytes());
    writes.append(py::make_tuple(zeros, to_bytes(std::vector<std::uint8_t>(compiler.zeros_bytes(), 0))));
  }
  py::list steps;
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const ModelLayer& layer = model.layers[i];
    StepAddresses at;
    for (std::size_t t : layer.inputs) at.inputs.push_back(tensor_addr[t]);
    at.output = tensor_addr[i + 1];
    at.zeros = zeros;
    if (has_weights(layer.kind)) {
      const auto w = compiler.weight_image(i, params[i]);
      at.weights = hbm.take(w.size());
      writes.append(py::make_tuple(at.weights, to_bytes(w)));
      if (compiler.bias_bytes(i) > 0) {
        const auto b = compiler.bias_image(i, params[i]);
        at.bias = hbm.take(b.size());
        writes.append(py::make_tuple(at.bias, to_bytes(b)));
      }
    }
    Program program;
    const StepPlan sp = compiler.compile_step(i, at, program);
    const std::vector<std::uint8_t> bytes = program.to_bytes();
    py::dict step;
    step["layer"] = layer.name;
    step["kind"] = std::string(layer_kind_name(layer.kind));
    step["program"] = to_bytes(bytes);
    step["program_addr"] = hbm.take(bytes.size());
    step["plan"] = plan_to_dict(sp.plan);
    step["ideal_cycles"] = sp.ideal_cycles;
    steps.append(step);
  }

  py::list expected;
  const auto reference = model_reference(model, batch, input, params);
  for (std::size_t t = 0; t < reference.size(); ++t) {
    const std::size_t rows = model.rows(t, batch), cols = model.shape_of(t).channels;
    expected.append(reference[t].int32.empty() ? py::array(to_array(reference[t].int8, rows, cols))
                                               : py::array(to_array(reference[t].int32, rows, cols)));
  }
  py::dict d;
  d["name"] = model.name;
  d["preset"] = preset.name;
  d["batch"] = batch;
  d["tensors"] = tensors;
  d["writes"] = writes;
  d["steps"] = steps;
  d["expected"] = expected;
  d["hbm_end"] = hbm.end();
  return d;
}

// A reference of the device's arithmetic over numpy arrays: C = A . B in int32, optionally
// requantised to int8 (compile/reference.h).
py::array matmul_reference(const py::array& a, const py::array& b, bool requantize_output, std::int32_t scale,
                           unsigned shift, bool relu) {
  if (a.ndim() != 2 || b.ndim() != 2 || a.shape(1) != b.shape(0)) {
    throw Error("matmul_reference: A (m x k) and B (k x n) must be 2-d with A's columns equal to B's rows");
  }
  const auto m = static_cast<std::size_t>(a.shape(0)), k = static_cast<std::size_t>(a.shape(1)),
             n = static_cast<std::size_t>(b.shape(1));
  TiledLayout la, lb;
  la.name = "A", la.rows = m, la.cols = k;
  lb.name = "B", lb.rows = k, lb.cols = n;
  const auto c = matmul_int8(values_of<std::int8_t>(a, la, "matmul_reference"),
                             values_of<std::int8_t>(b, lb, "matmul_reference"), m, k, n);
  if (requantize_output) return to_array(requantize(c, scale, shift, relu), m, n);
  return to_array(c, m, n);
}

}  // namespace

void bind_programs(py::module_& m) {
  py::class_<TiledLayout>(m, "Layout")
      .def_readonly("name", &TiledLayout::name)
      .def_readonly("rows", &TiledLayout::rows)
      .def_readonly("cols", &TiledLayout::cols)
      .def_readonly("elem_bytes", &TiledLayout::elem_bytes)
      .def_readonly("tile_rows", &TiledLayout::tile_rows)
      .def_readonly("tile_cols", &TiledLayout::tile_cols)
      .def_readonly("padded_rows", &TiledLayout::padded_rows)
      .def_readonly("padded_cols", &TiledLayout::padded_cols)
      .def_property_readonly("tiled", &TiledLayout::tiled)
      .def_property_readonly("nbytes", &TiledLayout::bytes)
      .def("pack", &pack_array)
      .def("unpack", &unpack_array)
      .def("__repr__", [](const TiledLayout& l) {
        return fmt::format("<Layout {} {}x{} int{} {} tiles of {}x{}, {} bytes>", l.name, l.rows, l.cols,
                           8 * l.elem_bytes, l.tiled() ? "tiled" : "untiled", l.tile_rows, l.tile_cols, l.bytes());
      });
  m.def("make_layout", [](std::int64_t rows, std::int64_t cols, std::size_t elem_bytes, std::uint32_t dim, bool tiled,
                          const std::string& name) { return make_layout(tiled, rows, cols, elem_bytes, dim, name); });
  m.def("assemble", [](const std::string& text, const std::string& source) {
    return to_bytes(assemble(text, source).to_bytes());
  });
  m.def("disassemble", [](const py::bytes& program) { return disassemble(Program::from_bytes(byte_view(program))); });
  m.def("check_program", [](const py::bytes& program, const std::string& preset) {
    return check_program(Program::from_bytes(byte_view(program)), load_preset(preset));
  });
  m.def("check_source", [](const std::string& text, const std::string& source, const std::string& preset) {
    return check_program(assemble_source(text, source), load_preset(preset));
  });
  m.def("compile_matmul", [](std::string preset, std::size_t mm, std::size_t k, std::size_t n, bool requantize,
                             std::int32_t scale, unsigned shift, bool relu, unsigned buffers, bool tiled,
                             std::uint64_t base) {
    return compile_matmul_dict(MatmulArgs{std::move(preset), mm, k, n, requantize, scale, shift, relu, buffers, tiled, base});
  });
  m.def("compile_model", [](std::string path, std::string preset, std::size_t batch, std::optional<unsigned> buffers,
                            bool tiled, std::uint64_t base, std::optional<std::uint64_t> seed) {
    return compile_model_dict(ModelArgs{std::move(path), std::move(preset), batch, buffers, tiled, base, seed});
  });
  m.def("matmul_reference", &matmul_reference);
}

}  // namespace tpuemu::python
