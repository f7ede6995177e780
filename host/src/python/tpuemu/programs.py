# SPDX-License-Identifier: Apache-2.0
"""Programs for the device, built from Python (docs/python.md, "Programs"): the assembler, the
TPU tiled layout, the matmul compiler and the model compiler, each the C++ runtime's own code.

    mm = tpuemu.compile_matmul(64, 48, 40, preset="default")
    with tpuemu.open_device("tlm") as dev:
        mm.load(dev, a, b)                  # A and B packed into their tiles, the program loaded
        assert dev.run()["ok"]
        assert (mm.read_output(dev) == mm.reference(a, b)).all()
"""

import os
from typing import NamedTuple

import numpy as np

from . import _tpuemu
from .errors import Error

Layout = _tpuemu.Layout


class Tensor(NamedTuple):
    """A tensor in HBM: its name, its layout (pack/unpack between numpy and the device image) and
    its byte address."""

    name: str
    layout: Layout
    addr: int

    def write(self, dev, values):
        """Packs values (rows x cols, the layout's element type) into tiles and writes them."""
        dev.write_hbm(self.addr, self.layout.pack(np.asarray(values)))

    def read(self, dev):
        """Reads the tensor back as a rows x cols array (padding dropped)."""
        return self.layout.unpack(dev.read_hbm(self.addr, self.layout.nbytes))


def assemble(text, source="<asm>"):
    """Assembles the text format of docs/assembly.md into program bytes (32 per instruction).
    Errors name "source:line:" and the offending token."""
    return _tpuemu.assemble(text, source)


def disassemble(program):
    """Program bytes as assembly text, one instruction per line."""
    return _tpuemu.disassemble(bytes(program))


def check_program(program, preset="default", source="<asm>"):
    """The static checks of `tpuemu exec` against a preset: one message per problem (an address
    outside VMEM, a misaligned HBM address, no end, ...); empty when the program is fine. program
    is assembly text (messages then name its lines) or program bytes."""
    if isinstance(program, str):
        return _tpuemu.check_source(program, source, preset)
    return _tpuemu.check_program(bytes(program), preset)


def make_layout(rows, cols, dtype=np.int8, dim=128, tiled=True, name="tensor"):
    """The TPU tiled layout (or the untiled one) of a rows x cols array for a dim-lane MXU."""
    return _tpuemu.make_layout(rows, cols, np.dtype(dtype).itemsize, dim, tiled, name)


class Matmul:
    """C = A . B compiled for a preset: A (m x k int8), B (k x n int8) and C (m x n, int32 or int8
    when requantised) placed from `base`, then the program. Attributes: program (bytes, ending in
    END), program_addr, a, b, c (Tensor), plan (the compiler's blocking and buffers), hbm_end."""

    def __init__(self, compiled, spec):
        self.program = compiled["program"]
        self.program_addr = compiled["program_addr"]
        self.a, self.b, self.c = (Tensor(n, *compiled[n.lower()]) for n in ("A", "B", "C"))
        self.plan = compiled["plan"]
        self.hbm_end = compiled["hbm_end"]
        self._spec = spec

    def load(self, dev, a, b):
        """Writes A and B in their layouts and loads the program."""
        self.a.write(dev, a)
        b = np.asarray(b)
        # B's layout pads k to whole weight tiles: the extra rows are zeros.
        padded = np.zeros((self.b.layout.rows, self.b.layout.cols), dtype=b.dtype)
        if b.ndim == 2 and b.shape[0] <= padded.shape[0]:
            padded[:b.shape[0], :] = b
            b = padded
        self.b.write(dev, b)
        dev.load_program(self.program, self.program_addr)

    def read_output(self, dev):
        return self.c.read(dev)

    def reference(self, a, b):
        """C from the C++ reference model (compile/reference.h), what the device must equal."""
        s = self._spec
        return _tpuemu.matmul_reference(np.asarray(a), np.asarray(b), s["requantize"], s["scale"],
                                        s["shift"], s["relu"])


def compile_matmul(m, k, n, *, preset="default", buffers=2, requantize=False, scale=1, shift=0,
                   relu=False, tiled=True, base=0):
    """Compiles C = A . B (m x k by k x n, int8) for a preset with the given buffers per operand
    (1, 2 or 3); requantize=True gives an int8 C through the vector unit (scale, shift, relu)."""
    spec = dict(requantize=requantize, scale=scale, shift=shift, relu=relu)
    return Matmul(_tpuemu.compile_matmul(preset, m, k, n, requantize, scale, shift, relu, buffers,
                                         tiled, base), spec)


class Step(NamedTuple):
    """One layer's execution: its program (bytes, ending in END) at program_addr."""

    layer: str
    kind: str
    program: bytes
    program_addr: int
    plan: dict
    ideal_cycles: int


class Model:
    """A model compiled for one request, every tensor in its own HBM region from `base` (none
    reused, so each can be read back). Attributes: name, preset, batch, tensors (Tensor: the input,
    then each layer's output), steps (Step), writes ((addr, bytes): the input, weights, bias and
    zeros, as `tpuemu run` makes them from the model's seed), expected (every tensor from the C++
    reference model), hbm_end."""

    def __init__(self, compiled):
        self.name = compiled["name"]
        self.preset = compiled["preset"]
        self.batch = compiled["batch"]
        self.tensors = [Tensor(*t) for t in compiled["tensors"]]
        self.steps = [Step(s["layer"], s["kind"], s["program"], s["program_addr"], s["plan"],
                           s["ideal_cycles"]) for s in compiled["steps"]]
        self.writes = compiled["writes"]
        self.expected = compiled["expected"]
        self.hbm_end = compiled["hbm_end"]

    def load(self, dev):
        """Writes the input, weights, bias and zeros."""
        for addr, data in self.writes:
            dev.write_hbm(addr, np.frombuffer(data, dtype=np.uint8))

    def run(self, dev, max_cycles=100_000_000):
        """Runs every step in order (load its program, run); returns each step's result. A step
        that does not end cleanly raises Error naming the layer and the device's outcome."""
        results = []
        for step in self.steps:
            dev.load_program(step.program, step.program_addr)
            r = dev.run(max_cycles)
            if not r["ok"]:
                raise Error(f"model '{self.name}': layer '{step.layer}': {r['describe']}")
            results.append(r)
        return results

    def read_output(self, dev):
        return self.tensors[-1].read(dev)


def compile_model(model, *, preset=None, batch=None, buffers=None, tiled=True, base=0, seed=None):
    """Compiles a model JSON file (examples/*.json, docs/workloads.md) layer by layer, as
    `tpuemu run` does, with the model's preset, batch, buffers and seed unless given."""
    return Model(_tpuemu.compile_model(os.fspath(model), preset or "", batch or 0, buffers, tiled,
                                       base, seed))
