# SPDX-License-Identifier: Apache-2.0
"""tpuemu from Python: runs and reports as dicts, a device for hardware-in-the-loop suites.

    import tpuemu
    tpuemu.info()                                    # what `tpuemu info --json` prints
    tpuemu.analyze_hlo(open("model.hlo").read())     # `tpuemu analyze model.hlo --json`
    tpuemu.run_hlo("mlp.hlo", backend="fake")        # `tpuemu run mlp.hlo --json`
    report = tpuemu.run(matmul="64x64x64", backend="tlm")   # `tpuemu run --json`
    with tpuemu.open_device("fake", preset="default") as dev:
        dev.write_hbm(0, numpy.arange(64, dtype=numpy.int8))
        dev.read_hbm(0, 64, dtype=numpy.int8)
    mm = tpuemu.compile_matmul(64, 48, 40)            # programs: assemble, compile_matmul,
                                                     # compile_model, make_layout (programs.py)

docs/python.md describes every call. Errors raise tpuemu.Error with the CLI's one-line message;
a workload that does not fit in HBM raises tpuemu.OutOfMemory.
"""

import json
import operator
import os

import numpy as np

from . import _tpuemu
from .errors import Error, OutOfMemory
from .programs import (Layout, Matmul, Model, Step, Tensor, assemble, check_program, compile_matmul,
                       compile_model, disassemble, make_layout)

_tpuemu._set_exceptions(Error, OutOfMemory)

# The element types the device computes with: int8 operands, int32 accumulators and results;
# uint8 for raw bytes.
DTYPES = (np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.int32))


def info():
    """The presets, backends, HBM timing sets, allocators, layer kinds and built cores, as
    `tpuemu info --json` prints them. A preset file that does not load is listed with its error."""
    return json.loads(_tpuemu.info_json())


def run(model=None, *, matmul=None, preset=None, backend="rtl", buffers=None, seed=None,
        allocator="bfc", max_cycles=4_000_000_000, hbm_capacity=None, batch=None, requests=1):
    """Runs a model JSON file (or `matmul="MxKxN"`) as `tpuemu run --json` does and returns its
    report. The same defaults as the CLI: backend "rtl", the model's preset or "default";
    hbm_capacity in bytes (--hbm-capacity), batch and requests (--batch, --requests). Out of HBM
    raises OutOfMemory."""
    if (model is None) == (matmul is None):
        raise Error("run: give a model file or matmul=\"MxKxN\", not both or neither")
    path = "" if model is None else os.fspath(model)
    return json.loads(_tpuemu.run_json(path, matmul or "", preset or "", backend, buffers, seed,
                                       allocator, max_cycles, hbm_capacity, batch, requests))


def _raise_if_out_of_memory(report, failure):
    """report: a dict, or the JSON text of one."""
    if isinstance(report, str):
        report = json.loads(report)
    if failure is not None:
        error = OutOfMemory(failure)
        error.report = report
        raise error
    return report


def _hlo_text_and_path(text_or_path):
    """(text, path) for the extension: bytes-like objects are module text, never a path; a str is
    text when it starts as the reader reads a module (the CLI's one sniffing: a byte order mark,
    whitespace, // and /* */ comments, then HloModule), otherwise a path, like an os.PathLike."""
    if isinstance(text_or_path, (bytes, bytearray, memoryview)):
        return bytes(text_or_path), ""
    if isinstance(text_or_path, str) and _tpuemu.looks_like_hlo_text(text_or_path):
        return text_or_path, ""
    return "", os.fspath(text_or_path)


def analyze_hlo(text_or_path, *, preset="tpu-v4-like", hbm_capacity=None, schedule="", allocator=None,
                tiled=True, placements=False):
    """The memory analysis of a JAX/XLA program as `tpuemu analyze FILE.hlo --json` prints it: HLO text
    (bytes, or a str starting with `HloModule` after comments) or a path. preset gives the lanes
    and VMEM (the CLI's default tpu-v4-like), schedule one of text, dfs, list, best, allocator one
    policy (default: every one). A program that does not fit raises OutOfMemory carrying the
    analysis as .report.

    placements=True adds report["placements"]: "positions" (the schedule's length), "buffers" (the
    HBM buffers as columns: name, kind, op_name lists; bytes, unpadded, start, end numpy arrays,
    live over positions start..end) and "offsets" ({policy: numpy array of each buffer's offset},
    for every policy that placed them all) - a memory map over time to plot."""
    text, path = _hlo_text_and_path(text_or_path)
    report_json, failure, where = _tpuemu.analyze_hlo_json(text, path, preset, hbm_capacity, schedule or "",
                                                           allocator or "", bool(tiled), bool(placements))
    report = json.loads(report_json)
    if where is not None:
        report["placements"] = where
    return _raise_if_out_of_memory(report, failure)


def run_hlo(text_or_path, *, preset=None, backend="rtl", buffers=None, seed=None, allocator="bfc",
            max_cycles=4_000_000_000, hbm_capacity=None, requests=1):
    """Runs a JAX/XLA program of dense and convolution layers on a device, int8-quantised, as
    `tpuemu run FILE.hlo --json` does, and returns its report, with report["hlo"] = {"executed":
    "int8", "original_dtypes": [...]}. text_or_path as for analyze_hlo; the other arguments as
    run()'s (the program's shapes fix its batch). A program the device cannot run raises Error at
    its first instruction that cannot (file:line:col, the opcode); analyze_hlo reads every program.
    Out of HBM raises OutOfMemory."""
    text, path = _hlo_text_and_path(text_or_path)
    return json.loads(_tpuemu.run_hlo_json(text, path, preset or "", backend, buffers, seed, allocator, max_cycles,
                                           hbm_capacity, requests))


def plan(buffers, capacity, *, timeout=10.0):
    """The offline planner (`tpuemu plan`): fixed offsets for buffers with known lifetimes.
    buffers: (id, lower, upper, size[, alignment]) tuples or dicts with those keys. Returns the
    status ("solved" or "timeout"), the offsets in input order (a numpy uint64 array), the peak
    live bytes, the height and the search's figures. Infeasible raises OutOfMemory. The buffers
    and the timeout are checked as `tpuemu plan` checks its CSV and --timeout (the same checks):
    ids given once, 0 <= lower < upper, size > 0, alignment a power of two, timeout 0..1e6 s."""
    rows = []
    for i, b in enumerate(buffers):
        if isinstance(b, dict):
            b = (b["id"], b["lower"], b["upper"], b["size"], b.get("alignment", 1))
        b = tuple(b)
        if len(b) == 4:
            b = b + (1,)
        if len(b) != 5:
            raise Error(f"plan: buffer {b!r}: give (id, lower, upper, size[, alignment])")
        rows.append((str(b[0]), _integer(f"buffers[{i}].lower", b[1], (1 << 63) - 1, -(1 << 63)),
                     _integer(f"buffers[{i}].upper", b[2], (1 << 63) - 1, -(1 << 63)),
                     _integer(f"buffers[{i}].size", b[3]), _integer(f"buffers[{i}].alignment", b[4])))
    try:
        timeout = float(timeout)
    except (TypeError, ValueError):
        raise Error(f"timeout={timeout!r}: not a number") from None
    result = json.loads(_tpuemu.plan_json(rows, _integer("capacity", capacity), timeout))
    if result["status"] == "infeasible":
        raise OutOfMemory(f"plan: infeasible: {result['reason']}")
    result["offsets"] = np.asarray(result["offsets"], dtype=np.uint64)
    return result


def replay(trace, capacities, *, allocator="bfc", granularity=256):
    """An allocation trace (CSV, `tpuemu run --alloc-trace`) through allocation policies, as
    `tpuemu replay --json` prints it. capacities: bytes for every space, or {space: bytes} ("" for
    every other space). allocator: a name, a list of names, or "all". A policy that runs out of
    memory raises OutOfMemory (its first failure) carrying the whole comparison as .report."""
    if isinstance(capacities, dict):
        given = [str(v) if k == "" else f"{k}={v}" for k, v in capacities.items()]
    else:
        given = [str(capacities)]
    if allocator == "all":
        policies = list(info()["allocators"])
    elif isinstance(allocator, str):
        policies = [allocator]
    else:
        policies = list(allocator)
    return _raise_if_out_of_memory(*_tpuemu.replay_json(os.fspath(trace), given, policies,
                                                        _integer("granularity", granularity)))


def _integer(name, value, limit=(1 << 64) - 1, least=0):
    """value as a Python int in least..limit, else Error naming it as name=value (the C++ layer
    takes fixed-width integers, whose conversion errors would name neither)."""
    try:
        v = operator.index(value)
    except TypeError:
        raise Error(f"{name}={value!r}: not an integer") from None
    if not least <= v <= limit:
        raise Error(f"{name}={v}: must be in {least}..{limit}")
    return v


_U32 = (1 << 32) - 1


def _bytes_or_array(name, data):
    """bytes, bytearray and memoryview as the uint8 array of their bytes; anything else as an
    array of its own values."""
    if isinstance(data, str):
        raise Error(f"{name}: a str; give bytes or a numpy array")
    if isinstance(data, (bytes, bytearray, memoryview)):
        return np.frombuffer(data, dtype=np.uint8)
    return np.asarray(data)


def _dtype(dtype):
    try:
        d = np.dtype(dtype)
    except TypeError as e:
        raise Error(f"dtype {dtype!r}: {e}") from None
    if d.newbyteorder("=") not in DTYPES:
        raise Error(f"dtype {d}: the device holds int8, uint8 and int32 only")
    return d.newbyteorder("<") if d.itemsize > 1 else d


class Device:
    """A device on a backend ("rtl", "tlm", "fake", "remote://host:port"); a context manager."""

    def __init__(self, backend, preset="default"):
        self._dev = _tpuemu.Device(backend, preset)

    @property
    def backend(self):
        return self._dev.backend

    @property
    def dim(self):
        return self._dev.dim

    @property
    def hbm_capacity(self):
        return self._dev.hbm_capacity

    @property
    def smem_words(self):
        return self._dev.smem_words

    def write_hbm(self, addr, array):
        """Writes a numpy array of int8, uint8 or int32 (little-endian, as the device stores it), or
        the bytes of a bytes-like object, at byte address addr. Another dtype, or a range outside
        HBM, raises Error and writes nothing."""
        a = _bytes_or_array("write_hbm", array)
        if a.ndim == 0:
            raise Error(f"write_hbm: a single {a.dtype} value; give an array of values or bytes")
        d = _dtype(a.dtype)
        self._dev.write_hbm(_integer("addr", addr), np.ascontiguousarray(a, dtype=d))

    def read_hbm(self, addr, count=None, dtype=None, out=None):
        """Reads count values of dtype (int8, uint8, int32; default uint8) from byte address addr
        into a new array; or, given out (a C-contiguous, writable array of one of those dtypes, and
        of dtype when both are given), fills out and returns it, which spares a large read the new
        array's first-touch page faults."""
        addr = _integer("addr", addr)
        if out is None:
            if count is None:
                raise Error("read_hbm: give count (and dtype) or out")
            out = np.empty(_integer("count", count), dtype=_dtype(np.uint8 if dtype is None else dtype))
        else:
            if not isinstance(out, np.ndarray):
                raise Error(f"read_hbm: out is a {type(out).__name__}, not a numpy array")
            if _dtype(out.dtype) != out.dtype:
                raise Error(f"read_hbm: out is {out.dtype}; the device stores little-endian values")
            if dtype is not None and _dtype(dtype) != out.dtype:
                raise Error(f"read_hbm: dtype {_dtype(dtype)} differs from out's {out.dtype}")
            if not out.flags.writeable:
                raise Error("read_hbm: out is read-only")
            if count is not None and _integer("count", count) != out.size:
                raise Error(f"read_hbm: count {count} differs from out's {out.size} values")
        self._dev.read_hbm_into(addr, out)
        return out

    def load_program(self, program, addr=0):
        """Writes a program (32 bytes per instruction: bytes or a uint8 array) at addr."""
        p = _bytes_or_array("load_program", program)
        if p.dtype != np.uint8 or p.ndim != 1:
            raise Error(f"load_program: a {p.dtype} array of shape {p.shape}; give bytes or a 1-d uint8 array "
                        "(tpuemu.assemble makes one)")
        self._dev.load_program(_integer("addr", addr), p.tobytes())

    def run(self, max_cycles=100_000_000, check_every=1 << 20):
        """Runs the loaded program; returns its status ("done", ...), cycles and counters. Every
        check_every cycles the run looks for Ctrl-C: then the device is reset and
        KeyboardInterrupt raised."""
        return json.loads(self._dev.run(_integer("max_cycles", max_cycles), _integer("check_every", check_every)))

    def state(self):
        """The core's state now: status ("idle", "busy", "done", ...), pc, queues, semaphores."""
        return json.loads(self._dev.state())

    def ping(self, payload=b""):
        """Echoes payload (bytes) through the firmware: the link works."""
        if isinstance(payload, str):
            raise Error("ping: payload is a str; give bytes")
        return self._dev.ping(bytes(payload))

    def write_smem(self, word, values):
        """Writes 32-bit words (uint32 or int32 values) into SMEM from word index word. A range
        past SMEM's end (smem_words) raises Error and writes nothing."""
        a = np.asarray(values)
        if a.dtype.kind not in "iu" or a.dtype.itemsize != 4 or a.ndim != 1:
            raise Error(f"write_smem: a 1-d array of uint32 or int32, not {a.dtype} of shape {a.shape}")
        self._dev.write_smem(_integer("word", word, _U32),
                             np.ascontiguousarray(a.astype("<i4", copy=False).view("<u4")))

    def read_smem(self, word, count):
        """count SMEM words from word index word, as uint32."""
        return self._dev.read_smem(_integer("word", word, _U32), _integer("count", count, _U32))

    def set_semaphore(self, index, value):
        """Sets semaphore index (0-31) to value (0-65535) before a run."""
        self._dev.set_semaphore(_integer("index", index, _U32), _integer("value", value, _U32))

    def reset(self):
        """Soft reset: queues, semaphores, status and counters cleared, work in flight dropped,
        memory kept."""
        self._dev.reset()

    def close(self):
        self._dev.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def open_device(backend, preset="default"):
    return Device(backend, preset)
