# SPDX-License-Identifier: Apache-2.0
"""Programs built from Python and run on the device: the assembler against `tpuemu exec`, compiled
matmuls and models bit-exact against the C++ reference and numpy, layouts, bad input refused."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import tpuemu

from helpers import ROOT, cli_error, cli_json

MATMUL_8X8 = os.path.join(ROOT, "examples", "programs", "matmul-8x8.s")


def test_assemble_and_disassemble_round_trip():
    text = open(MATMUL_8X8).read()
    program = tpuemu.assemble(text, "matmul-8x8.s")
    assert isinstance(program, bytes) and len(program) % 32 == 0 and len(program) > 0
    listing = tpuemu.disassemble(program)
    assert len(listing.splitlines()) == len(program) // 32
    assert tpuemu.assemble(listing) == program
    assert tpuemu.check_program(program) == []


def test_assembler_errors_name_source_and_line():
    with pytest.raises(tpuemu.Error, match=r"^prog\.s:2: loadw: unknown field 'bnk=1'"):
        tpuemu.assemble("end\nloadw vmem=0 bnk=1\n", "prog.s")
    with pytest.raises(tpuemu.Error, match="32"):
        tpuemu.disassemble(b"\x00" * 31)


def test_exec_is_the_clis(cli, backend, device):
    program = tpuemu.assemble(open(MATMUL_8X8).read(), MATMUL_8X8)
    device.load_program(program, 0)  # where `tpuemu exec` loads it
    result = device.run()
    want = cli_json(cli, "exec", MATMUL_8X8, "--backend", backend)
    assert result["status"] == want["status"] == "done"
    assert result["cycles"] == want["cycles"]
    assert result["counters"] == want["counters"]


def test_check_program_is_the_clis(cli, tmp_path):
    bad = tmp_path / "bad.s"
    bad.write_text("nop.dma\nmatmul vmem=999999 acc=0 rows=4\n")
    found = tpuemu.check_program(bad.read_text(), source=str(bad))
    assert found and found[0].startswith(f"{bad}:2: ")
    assert found[0] == cli_error(cli, "exec", str(bad), "--backend", "fake")
    # Program bytes have no lines: the same finding without the source's place.
    from_bytes = tpuemu.check_program(tpuemu.assemble("nop.dma\n"))
    assert tpuemu.check_program("nop.dma\n") == [f"<asm>: {from_bytes[0]}"]


@pytest.mark.parametrize("m,k,n,buffers,requantize", [
    (64, 48, 40, 2, False), (37, 70, 19, 1, True), (200, 72, 300, 3, False), (130, 16, 64, 2, True)])
def test_a_compiled_matmul_is_bit_exact(device, m, k, n, buffers, requantize):
    rng = np.random.default_rng(m * 131 + k * 17 + n)
    a = rng.integers(-128, 128, (m, k), dtype=np.int8)
    b = rng.integers(-128, 128, (k, n), dtype=np.int8)
    mm = tpuemu.compile_matmul(m, k, n, buffers=buffers, requantize=requantize, scale=3, shift=9, relu=True)
    assert (mm.plan["a_slots"], mm.plan["b_slots"]) == (min(buffers, mm.plan["a_slots"]), buffers)
    assert mm.program_addr >= mm.c.addr + mm.c.layout.nbytes
    mm.load(device, a, b)
    result = device.run()
    assert result["ok"], result["describe"]
    c = mm.read_output(device)
    want = mm.reference(a, b)
    exact = a.astype(np.int32) @ b.astype(np.int32)
    assert c.shape == (m, n) and c.dtype == (np.int8 if requantize else np.int32)
    assert np.array_equal(c, want)
    if not requantize:
        assert np.array_equal(want, exact)  # the C++ reference is numpy's product
    # Every instruction the compiler counted was fetched.
    assert result["counters"]["instructions_fetched"] == mm.plan["instructions"]


def test_a_run_in_slices_is_one_run(backend):
    # Device.run resumes the core every check_every cycles (to look for Ctrl-C): on two fresh
    # devices (a device's memory keeps state from run to run: open rows, refresh), the cycles and
    # every counter are those of one uninterrupted run, and the budget still ends it.
    rng = np.random.default_rng(5)
    a = rng.integers(-128, 128, (96, 64), dtype=np.int8)
    b = rng.integers(-128, 128, (64, 80), dtype=np.int8)
    mm = tpuemu.compile_matmul(96, 64, 80)
    results = []
    for check_every in (1 << 20, 100):
        with tpuemu.open_device(backend) as dev:
            mm.load(dev, a, b)
            results.append(dev.run(check_every=check_every))
            assert results[-1]["ok"] and results[-1]["cycles"] > 1000
            assert np.array_equal(mm.read_output(dev), mm.reference(a, b))
            if check_every == 100:
                short = dev.run(max_cycles=1000, check_every=300)
                # (fake counts its cycles by instruction, so it may pass the budget a little)
                assert short["status"] == "watchdog timeout" and 0 < short["cycles"] < results[0]["cycles"]
                with pytest.raises(tpuemu.Error, match="check_every"):
                    dev.run(check_every=0)
    whole, sliced = results
    assert sliced["cycles"] == whole["cycles"] and sliced["counters"] == whole["counters"]


def test_reset_after_a_timeout_then_the_program_runs_bit_exact(device):
    # What a HIL suite does after a watchdog timeout: the core, left running with memory traffic
    # and rows in the MXU in flight, is reset, and the program runs again from the start.
    rng = np.random.default_rng(6)
    a = rng.integers(-128, 128, (128, 96), dtype=np.int8)
    b = rng.integers(-128, 128, (96, 112), dtype=np.int8)
    mm = tpuemu.compile_matmul(128, 96, 112)
    mm.load(device, a, b)
    for cut in (700, 2500, 5000):
        assert device.run(max_cycles=cut)["status"] == "watchdog timeout"
        device.reset()
        result = device.run()
        assert result["ok"], (cut, result["describe"])
        assert np.array_equal(mm.read_output(device), mm.reference(a, b)), cut


def test_ctrl_c_interrupts_a_device_run_and_resets_it():
    # About two million cycles on the Verilated core: seconds. SIGINT comes after 0.3 s; the run
    # returns to Python within check_every cycles, resets the device and raises.
    mm = tpuemu.compile_matmul(1024, 1024, 512)
    with tpuemu.open_device("rtl") as dev:
        mm.load(dev, np.ones((1024, 1024), np.int8), np.ones((1024, 512), np.int8))
        timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        began = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            dev.run(check_every=1 << 14)
        timer.join()
        assert time.monotonic() - began < 3
        small = tpuemu.compile_matmul(16, 16, 16, base=mm.hbm_end)
        small.load(dev, np.eye(16, dtype=np.int8), np.eye(16, dtype=np.int8))
        result = dev.run()
        assert result["ok"], result["describe"]
        assert np.array_equal(small.read_output(dev), np.eye(16, dtype=np.int32))


@pytest.mark.parametrize("model", ["mlp.json", "cnn.json", "ffn.json"])
def test_a_compiled_model_is_bit_exact_in_every_tensor(backend, model):
    compiled = tpuemu.compile_model(os.path.join(ROOT, "examples", model), batch=1)
    assert [s.layer for s in compiled.steps] == [t.name for t in compiled.tensors[1:]]
    with tpuemu.open_device(backend, preset=compiled.preset) as dev:
        compiled.load(dev)
        results = compiled.run(dev)
        assert len(results) == len(compiled.steps)
        for tensor, want in zip(compiled.tensors, compiled.expected):
            got = tensor.read(dev)
            assert got.dtype == want.dtype and np.array_equal(got, want), tensor.name


def test_layouts_pack_tiles_and_refuse_bad_arrays():
    layout = tpuemu.make_layout(40, 20, np.int8, dim=16, name="x")
    assert (layout.tile_rows, layout.tile_cols, layout.padded_rows, layout.padded_cols) == (32, 16, 64, 32)
    values = np.arange(800, dtype=np.int32).astype(np.int8).reshape(40, 20)
    image = layout.pack(values)
    assert image.dtype == np.uint8 and image.size == layout.nbytes == 64 * 32
    # Element (r, c) sits in tile (r // 32, c // 16), row-major inside its tile.
    r, c = 33, 17
    assert image[(1 * 2 + 1) * 32 * 16 + (r % 32) * 16 + c % 16] == values[r, c].view(np.uint8)
    assert np.array_equal(layout.unpack(image), values)
    for bad, why in ((values.astype(np.int32), "int8 values"), (values[:, :10], "400 values"),
                     (values.T.copy().T, "C-contiguous"), (values.astype(np.float32), "int8 values")):
        with pytest.raises(tpuemu.Error, match=why):
            layout.pack(bad)
    with pytest.raises(tpuemu.Error, match="bytes where its layout holds"):
        layout.unpack(image[:-1])


def test_compilers_refuse_bad_input(tmp_path):
    with pytest.raises(tpuemu.Error, match="buffers=4"):
        tpuemu.compile_matmul(8, 8, 8, buffers=4)
    with pytest.raises(tpuemu.Error, match="base=0x10"):
        tpuemu.compile_matmul(8, 8, 8, base=16)
    with pytest.raises(tpuemu.Error, match="no-such-preset"):
        tpuemu.compile_matmul(8, 8, 8, preset="no-such-preset")
    missing = tmp_path / "missing.json"
    with pytest.raises(tpuemu.Error, match="missing.json"):
        tpuemu.compile_model(missing)
    with pytest.raises(tpuemu.Error, match="A .m x k. and B .k x n."):
        tpuemu.compile_matmul(8, 8, 8).reference(np.zeros((8, 8), np.int8), np.zeros((9, 8), np.int8))
