# SPDX-License-Identifier: Apache-2.0
"""The Python module against the CLI and the device: the same reports as `tpuemu ... --json`, exact
numpy round trips of HBM, bad input refused with tpuemu.Error and nothing written, Ctrl-C."""

import json
import os
import signal
import subprocess
import threading

import numpy as np
import pytest

import tpuemu

from helpers import ROOT, cli_error, cli_json, without_wall_clock


def test_info_is_the_clis(cli):
    assert tpuemu.info() == cli_json(cli, "info")


def test_run_is_the_clis(cli, backend):
    py = tpuemu.run(matmul="64x48x80", preset="default", backend=backend, buffers=3, seed=7, requests=2)
    ref = cli_json(cli, "run", "--matmul", "64x48x80", "--preset", "default", "--backend", backend,
                   "--buffers", "3", "--seed", "7", "--requests", "2")
    assert py["result"]["bit_exact"]
    assert without_wall_clock(py) == without_wall_clock(ref)


def test_run_of_a_model_file_is_the_clis(cli, backend):
    model = os.path.join(ROOT, "examples", "mlp.json")
    py = tpuemu.run(model, backend=backend)
    assert py["result"]["bit_exact"]
    assert without_wall_clock(py) == without_wall_clock(cli_json(cli, "run", model, "--backend", backend))


def test_errors_carry_the_clis_line(cli):
    with pytest.raises(tpuemu.Error) as e:
        tpuemu.run(matmul="64x64", backend="fake")
    assert str(e.value) == cli_error(cli, "run", "--matmul", "64x64", "--backend", "fake")
    with pytest.raises(tpuemu.Error, match="unknown backend 'nope'"):
        tpuemu.run(matmul="16x16x16", backend="nope")
    with pytest.raises(tpuemu.Error, match="hbm_capacity=4097: must be a multiple of 16"):
        tpuemu.run(matmul="16x16x16", backend="fake", hbm_capacity=4097)
    with pytest.raises(tpuemu.Error, match="not both or neither"):
        tpuemu.run()


def test_out_of_memory_carries_the_request(cli):
    with pytest.raises(tpuemu.OutOfMemory) as e:
        tpuemu.run(matmul="64x64x64", backend="fake", hbm_capacity=4096)
    assert isinstance(e.value, tpuemu.Error)
    assert e.value.requested > 0 and e.value.needed >= e.value.requested
    assert str(e.value) == cli_error(cli, "run", "--matmul", "64x64x64", "--backend", "fake",
                                     "--hbm-capacity", "4096")


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32])
def test_hbm_round_trips_are_exact(device, dtype):
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    values = rng.integers(info.min, info.max, size=(37, 29), endpoint=True, dtype=dtype)
    device.write_hbm(4096, values)
    back = device.read_hbm(4096, values.size, dtype=dtype)
    assert back.dtype == np.dtype(dtype)
    assert np.array_equal(back, values.ravel())
    out = np.zeros(values.shape, dtype=dtype)
    assert device.read_hbm(4096, out=out) is out
    assert np.array_equal(out, values)
    # A big-endian array is stored as the device's little-endian values.
    device.write_hbm(4096, values.astype(np.dtype(dtype).newbyteorder(">")))
    assert np.array_equal(device.read_hbm(4096, values.size, dtype=dtype), values.ravel())


def test_read_into_a_bad_out_is_refused(device):
    device.write_hbm(0, np.arange(16, dtype=np.uint8))
    out = np.full(16, 7, np.uint8)
    for bad, why in ((np.zeros(16, np.float32), "int8, uint8 and int32"),
                     (np.zeros(32, np.uint8)[::2], "C-contiguous"),
                     (np.zeros(4, ">i4"), "little-endian"),
                     ([0] * 16, "not a numpy array")):
        with pytest.raises(tpuemu.Error, match=why):
            device.read_hbm(0, out=bad)
    with pytest.raises(tpuemu.Error, match="differs"):
        device.read_hbm(0, 8, out=out)
    readonly = np.zeros(16, np.uint8)
    readonly.flags.writeable = False
    with pytest.raises(tpuemu.Error, match="read-only"):
        device.read_hbm(0, out=readonly)
    assert np.array_equal(out, np.full(16, 7, np.uint8))


def test_bad_arrays_are_refused_and_nothing_is_written(device):
    before = np.arange(64, dtype=np.uint8)
    device.write_hbm(0, before)
    for bad in (np.zeros(64, np.float32), np.zeros(64, np.int64), np.zeros(64, np.int16), np.int8(5)):
        with pytest.raises(tpuemu.Error):
            device.write_hbm(0, bad)
    with pytest.raises(tpuemu.Error, match="outside HBM"):
        device.write_hbm(device.hbm_capacity - 8, np.zeros(64, np.uint8))
    with pytest.raises(tpuemu.Error, match="outside HBM"):
        device.read_hbm(device.hbm_capacity - 8, 64)
    with pytest.raises(tpuemu.Error, match="int8, uint8 and int32"):
        device.read_hbm(0, 4, dtype=np.float64)
    assert np.array_equal(device.read_hbm(0, 64), before)


def test_smem_past_the_end_is_refused_and_nothing_is_written(device):
    words = device.smem_words
    device.write_smem(0, np.array([0xA0, 0xA1], np.uint32))
    device.write_smem(words - 1, np.array([0xAF], np.uint32))
    with pytest.raises(tpuemu.Error) as e:
        device.write_smem(words - 1, np.array([7, 8, 9], np.uint32))
    assert str(e.value) == f"device: write_smem: words [{words - 1}, {words + 2}) are outside SMEM ({words} words)"
    for word, count in ((0, 4096), (words - 6, 10), (words, 1)):
        with pytest.raises(tpuemu.Error, match="outside SMEM"):
            device.read_smem(word, count)
    assert device.read_smem(0, 2).tolist() == [0xA0, 0xA1]
    assert device.read_smem(words - 1, 1).tolist() == [0xAF]


def test_read_into_an_out_of_another_dtype_is_refused(device):
    device.write_hbm(0, np.arange(16, dtype=np.int8))
    out = np.zeros(4, np.int32)
    with pytest.raises(tpuemu.Error) as e:
        device.read_hbm(0, 16, dtype=np.int8, out=out)
    assert str(e.value) == "read_hbm: dtype int8 differs from out's int32"
    assert (out == 0).all()
    assert device.read_hbm(0, out=out) is out  # out's own dtype when none is given
    assert device.read_hbm(0, 4, dtype=np.int32, out=out) is out


@pytest.mark.parametrize("call, message", [
    (lambda d: d.write_hbm(-1, np.zeros(4, np.uint8)), "addr=-1: must be in 0..18446744073709551615"),
    (lambda d: d.read_hbm(-8, 4), "addr=-8: must be in 0..18446744073709551615"),
    (lambda d: d.read_hbm(0, -4), "count=-4: must be in 0..18446744073709551615"),
    (lambda d: d.read_hbm(0.5, 4), "addr=0.5: not an integer"),
    (lambda d: d.load_program(bytes(32), addr=-32), "addr=-32: must be in 0..18446744073709551615"),
    (lambda d: d.run(max_cycles=-1), "max_cycles=-1: must be in 0..18446744073709551615"),
    (lambda d: d.run(check_every=-5), "check_every=-5: must be in 0..18446744073709551615"),
    (lambda d: d.set_semaphore(-1, 0), "index=-1: must be in 0..4294967295"),
    (lambda d: d.set_semaphore(0, -1), "value=-1: must be in 0..4294967295"),
    (lambda d: d.write_smem(-1, np.zeros(1, np.uint32)), "word=-1: must be in 0..4294967295"),
    (lambda d: d.read_smem(2 ** 32, 1), "word=4294967296: must be in 0..4294967295"),
    (lambda d: d.load_program("abc"), "load_program: a str; give bytes or a numpy array"),
    (lambda d: d.load_program(np.zeros(32, np.float32)),
     "load_program: a float32 array of shape (32,); give bytes or a 1-d uint8 array (tpuemu.assemble makes one)"),
    (lambda d: d.write_hbm(0, np.int8(5)), "write_hbm: a single int8 value; give an array of values or bytes"),
])
def test_bad_arguments_name_themselves(device, call, message):
    with pytest.raises(tpuemu.Error) as e:
        call(device)
    assert str(e.value) == message


def test_bytes_are_written_as_bytes(device):
    device.write_hbm(64, b"abcd")
    device.write_hbm(68, bytearray(b"ef"))
    assert device.read_hbm(64, 6).tobytes() == b"abcdef"


def test_a_program_runs_and_reports(device):
    # Opcode 0xff does not exist: the core stops at the program's first instruction with the
    # contract's error; after a reset, an all-zero word (END, docs/isa.md) ends the run at once.
    device.load_program(bytes([0xFF]) + bytes(31), addr=8192)
    result = device.run()
    assert not result["ok"]
    assert (result["status"], result["error"], result["error_pc"]) == ("error", "illegal opcode", 0)
    device.reset()
    device.load_program(bytes(32), addr=8192)
    result = device.run()
    assert result["ok"] and result["status"] == "done"
    assert set(result["counters"]) >= {"cycles", "mxu_busy", "dma_stall_memory"}


def test_a_closed_device_says_so(backend):
    dev = tpuemu.open_device(backend, preset="default")
    dev.close()
    with pytest.raises(tpuemu.Error, match="closed"):
        dev.read_hbm(0, 4)


def test_ctrl_c_interrupts_a_run_and_the_next_run_works():
    # Twenty requests of the MLP on the Verilated core take about ten seconds, a step each of its
    # layers; SIGINT comes in the second of the first request's steps. Interrupted, the call
    # raises KeyboardInterrupt at the next step instead of running to the end.
    model = os.path.join(ROOT, "examples", "mlp.json")
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        tpuemu.run(model, backend="rtl", requests=20)
    timer.join()
    assert tpuemu.run(matmul="16x16x16", backend="fake")["result"]["bit_exact"]


HLO = os.path.join(ROOT, "examples", "hlo", "transformer_block.hlo")
TRACE = os.path.join(ROOT, "examples", "traces", "mlp-serving.csv")
PLAN = os.path.join(ROOT, "examples", "plan", "buffers.csv")


def cli_json_failing(cli, *args):
    """A command that ends in an error but prints its whole report first: (report, error line)."""
    out = subprocess.run([cli, *args, "--json"], capture_output=True, text=True)
    assert out.returncode == 1, out.stderr
    report, _ = json.JSONDecoder().raw_decode(out.stdout)  # an error object may follow it
    return report, out.stderr.removeprefix("tpuemu: error: ").strip()


def test_analyze_hlo_is_the_clis(cli):
    py = tpuemu.analyze_hlo(HLO, schedule="list", allocator="tlsf")
    assert py == cli_json(cli, "analyze", HLO, "--schedule", "list", "--allocator", "tlsf")
    # The same program as text: the same analysis but for where it came from.
    from_text = tpuemu.analyze_hlo(open(HLO).read(), schedule="list", allocator="tlsf")
    assert from_text["program"].pop("source") == "<text>"
    py["program"].pop("source")
    assert from_text == py


def test_analyze_hlo_memory_analysis_is_the_clis(cli):
    # JAX's compiled.memory_analysis() names, on a module that donates its arguments (alias > 0).
    donating = os.path.join(ROOT, "tests", "data", "hlo", "io_alias.hlo")
    keys = {"argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes", "temp_size_in_bytes"}
    for program in (HLO, donating):
        py = tpuemu.analyze_hlo(program)["memory_analysis"]
        assert set(py) == keys, program
        assert py == cli_json(cli, "analyze", program)["memory_analysis"], program
    assert tpuemu.analyze_hlo(donating)["memory_analysis"]["alias_size_in_bytes"] > 0


def test_analyze_hlo_text_as_bytes_or_str_sniffed_like_the_cli(cli):
    text = open(HLO).read()
    ref = tpuemu.analyze_hlo(HLO)
    ref["program"].pop("source")
    # Bytes are module text, never a path; a str is text when it starts as the reader reads a
    # module (a byte order mark, // and /* */ comments before HloModule), else a path.
    for given in (text.encode(), bytearray(text.encode()), memoryview(text.encode()),
                  b"\xef\xbb\xbf" + text.encode(), "\ufeff" + text, "// an XLA dump\n/* c */ " + text):
        got = tpuemu.analyze_hlo(given)
        assert got["program"].pop("source") == "<text>", type(given)
        assert got == ref, type(given)
    with pytest.raises(tpuemu.Error) as e:
        tpuemu.analyze_hlo(HLO.encode())  # the bytes of a path are text, not the path
    assert str(e.value) == "<text>:1:1: expected 'HloModule' at the start of an HLO module"
    with pytest.raises(tpuemu.Error) as e:
        tpuemu.analyze_hlo(b"HloModule m\nENTRY e {\n  ROOT p = f32[4,4]{0,0} parameter(0)\n}\n")
    assert str(e.value).startswith("<text>:3:23: malformed layout: dimension 0 appears twice")


def test_analyze_hlo_placements_are_each_policys_heap(cli):
    report = tpuemu.analyze_hlo(HLO, placements=True)
    where = report.pop("placements")
    assert report == cli_json(cli, "analyze", HLO)  # the rest is the CLI's analysis
    b = where["buffers"]
    n = len(b["name"])
    assert n > 10 and all(len(b[k]) == n for k in ("kind", "op_name", "bytes", "unpadded", "start", "end"))
    assert (b["start"] <= b["end"]).all() and (b["end"] < where["positions"]).all()
    assert set(where["offsets"]) == {p for p, r in report["policies"].items() if r["failure"] is None}
    for policy, offsets in where["offsets"].items():
        top = offsets + b["bytes"]
        assert top.max() == report["policies"][policy]["heap_bytes"], policy
        # No two buffers live at the same time share a byte.
        for i in range(n):
            live = (b["start"] <= b["end"][i]) & (b["end"] >= b["start"][i])
            apart = (top <= offsets[i]) | (offsets >= top[i])
            live[i] = False
            assert not (live & ~apart & (b["bytes"] > 0)).any(), (policy, b["name"][i])


def test_analyze_hlo_out_of_memory_carries_the_report(cli):
    report, line = cli_json_failing(cli, "analyze", HLO, "--hbm-capacity", "65536")
    with pytest.raises(tpuemu.OutOfMemory) as e:
        tpuemu.analyze_hlo(HLO, hbm_capacity=65536)
    assert str(e.value) == line
    assert e.value.report == report and report["out_of_memory"]


MLP3 = os.path.join(ROOT, "tests", "data", "hlo", "mlp3.hlo")


def test_run_hlo_is_the_clis(cli, backend):
    py = tpuemu.run_hlo(MLP3, preset="default", backend=backend, seed=7, buffers=1)
    ref = cli_json(cli, "run", MLP3, "--preset", "default", "--backend", backend, "--seed", "7", "--buffers", "1")
    assert without_wall_clock(py) == without_wall_clock(ref)
    assert py["result"]["bit_exact"] and py["result"]["checked_values"] > 0
    assert py["hlo"] == {"executed": "int8", "original_dtypes": ["f32"]}
    assert [layer["name"] for layer in py["layers"]] == ["dot.1", "dot.2", "dot.3"]
    # The same program as text: the same run.
    from_text = tpuemu.run_hlo(open(MLP3).read(), preset="default", backend=backend, seed=7, buffers=1)
    assert without_wall_clock(from_text) == without_wall_clock(py)


def test_run_hlo_refuses_what_the_device_cannot_run(cli):
    program = os.path.join(ROOT, "tests", "data", "hlo", "exponential.hlo")
    with pytest.raises(tpuemu.Error) as e:
        tpuemu.run_hlo(program, backend="fake")
    cause = "opcode 'exponential' is not supported on the device (supported: dot, convolution"
    assert str(e.value).startswith(f"{program}:9:8: {cause}")
    assert str(e.value).endswith("; tpuemu.analyze_hlo analyses its memory")
    # The CLI's line names the same place and cause, and `tpuemu analyze` for the rest.
    line = cli_error(cli, "run", program, "--backend", "fake")
    assert line.startswith(f"{program}:9:8: {cause}") and line.endswith(f"`tpuemu analyze {program}` analyses its memory")
    with pytest.raises(tpuemu.Error, match=r"^<text>:4:\d+: opcode 'exponential' is not supported"):
        tpuemu.run_hlo("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] exponential(x)\n}\n",
                       backend="fake")
    with pytest.raises(tpuemu.OutOfMemory):
        tpuemu.run_hlo(MLP3, backend="fake", hbm_capacity=4096)


def plan_rows(path):
    rows = []
    for line in open(path):
        if line.startswith("#") or line.startswith("id,"):
            continue
        i, lower, upper, size, alignment = line.strip().split(",")
        rows.append((i, int(lower), int(upper), int(size), int(alignment)))
    return rows


def test_plan_is_the_clis(cli, tmp_path):
    rows = plan_rows(PLAN)
    py = tpuemu.plan(rows, 1 << 20)
    ref = cli_json(cli, "plan", PLAN, "--capacity", str(1 << 20), "-o", str(tmp_path / "p.csv"))
    for key in ("status", "buffers", "capacity", "peak_live_bytes", "height", "greedy_height", "solved_by_greedy"):
        assert py[key] == ref[key], key
    written = [int(line.rsplit(",", 1)[1]) for line in open(tmp_path / "p.csv") if not line.startswith(("#", "id,"))]
    assert py["offsets"].dtype == np.uint64 and py["offsets"].tolist() == written
    # No two buffers alive at once share an address.
    for a, oa in zip(rows, py["offsets"]):
        for b, ob in zip(rows, py["offsets"]):
            if a is not b and a[1] < b[2] and b[1] < a[2]:
                assert oa + a[3] <= ob or ob + b[3] <= oa
    as_dicts = [dict(zip(("id", "lower", "upper", "size", "alignment"), r)) for r in rows]
    assert tpuemu.plan(as_dicts, 1 << 20)["offsets"].tolist() == written


def test_plan_infeasible_and_bad_buffers():
    with pytest.raises(tpuemu.OutOfMemory, match="infeasible"):
        tpuemu.plan(plan_rows(os.path.join(ROOT, "tests", "data", "plan_infeasible.csv")), 8)
    with pytest.raises(tpuemu.Error, match="give \\(id, lower, upper, size"):
        tpuemu.plan([("a", 0, 1)], 1024)
    with pytest.raises(tpuemu.Error):
        tpuemu.plan([("a", 3, 1, 16, 1)], 1024)  # upper <= lower


def test_replay_is_the_clis(cli):
    py = tpuemu.replay(TRACE, 1 << 20, allocator="all")
    assert py == cli_json(cli, "replay", TRACE, "--capacity", str(1 << 20), "--allocator", "all")
    per_space = tpuemu.replay(TRACE, {"hbm": 2 << 20, "": 1 << 20}, allocator=["bfc", "buddy"])
    assert per_space == cli_json(cli, "replay", TRACE, "--capacity", f"hbm={2 << 20}", "--capacity", str(1 << 20),
                                 "--allocator", "bfc,buddy")


def test_replay_out_of_memory_and_bad_capacities(cli):
    report, line = cli_json_failing(cli, "replay", TRACE, "--capacity", "16384")
    with pytest.raises(tpuemu.OutOfMemory) as e:
        tpuemu.replay(TRACE, 16384)
    assert line.startswith(str(e.value))
    assert e.value.report == report
    with pytest.raises(tpuemu.Error, match="capacities: the trace .* has no space 'acc'"):
        tpuemu.replay(TRACE, {"acc": 4096})
    with pytest.raises(tpuemu.Error, match="granularity=3 is not a power of two"):
        tpuemu.replay(TRACE, 1 << 20, granularity=3)
    with pytest.raises(tpuemu.Error, match="allocator: 'nope' is not one of bfc, "):
        tpuemu.replay(TRACE, 1 << 20, allocator="nope")


# plan() and replay() refuse what `tpuemu plan` and `tpuemu replay` refuse, with the same clause:
# both front ends call the library's checks.
@pytest.mark.parametrize("call, message, cli_args, cli_message", [
    (lambda: tpuemu.plan([("a", 0, 4, 16)], 1024, timeout=float("nan")),
     "timeout=nan is not a finite number of seconds",
     ["plan", PLAN, "--capacity", "1024", "--timeout", "nan"], "--timeout: 'nan' is not a finite number of seconds"),
    (lambda: tpuemu.plan([("a", 0, 4, 16)], 1024, timeout=-1),
     "timeout=-1 is not in [0, 1000000] seconds",
     ["plan", PLAN, "--capacity", "1024", "--timeout", "-1"], "--timeout: '-1' is not in [0, 1000000] seconds"),
    (lambda: tpuemu.plan([("a", -2, 4, 16)], 1024), "buffers[0]: lower -2 is negative", None, None),
    (lambda: tpuemu.plan([("a", 0, 4, 16), ("a", 1, 5, 8)], 1024),
     "buffers[1]: duplicate id 'a' (first at buffers[0])", None, None),
    (lambda: tpuemu.plan([("a", 0, 4, -16)], 1024), "buffers[0].size=-16: must be in 0..18446744073709551615", None, None),
    (lambda: tpuemu.plan([("a", 0, 4, 16)], -1), "capacity=-1: must be in 0..18446744073709551615", None, None),
    (lambda: tpuemu.replay(TRACE, 1 << 20, allocator=["bfc", "bfc"]), "allocator: 'bfc' is given twice",
     ["replay", TRACE, "--capacity", "1MiB", "--allocator", "bfc,bfc"], "--allocator: 'bfc' is given twice"),
    (lambda: tpuemu.replay(TRACE, 1 << 20, allocator=[]), "allocator: no policy", None, None),
    (lambda: tpuemu.replay(TRACE, 1 << 20, granularity=3), "granularity=3 is not a power of two",
     ["replay", TRACE, "--capacity", "1MiB", "--granularity", "3"], "--granularity: 3 is not a power of two"),
    (lambda: tpuemu.replay(TRACE, 1 << 20, granularity=-256), "granularity=-256: must be in 0..18446744073709551615",
     None, None),
])
def test_plan_and_replay_refuse_what_the_cli_refuses(cli, tmp_path, call, message, cli_args, cli_message):
    with pytest.raises(tpuemu.Error) as e:
        call()
    assert str(e.value) == message
    if cli_args:
        assert cli_error(cli, *cli_args, "-o", str(tmp_path / "out.csv")) == cli_message
