# SPDX-License-Identifier: Apache-2.0
"""Ctrl-C stops the long calls of the module within a second (docs/python.md): an HLO analysis
whose planner searches for many seconds, and the planner itself, end with KeyboardInterrupt
soon after SIGINT, and the module works afterwards. The inputs are the signal tests' own
(tests/cli/gen_hard_inputs.py, fixed seeds); the calls need no device, so every backend's run of
the suite checks the same thing."""

import csv
import importlib.util
import io
import os
import signal
import threading
import time

import pytest

import tpuemu

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("gen_hard_inputs", os.path.join(ROOT, "tests", "cli", "gen_hard_inputs.py"))
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)

# The house's bound is 1 s; the slack covers a loaded two-core CI machine.
LIMIT = 1.5


def interrupted_after(seconds, call):
    """Sends SIGINT to this process after `seconds`; returns how long `call` ran on after it."""
    sent = []

    def send():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(seconds, send)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            call()
    finally:
        timer.cancel()
        timer.join()
    assert sent, "the call ended before the signal: the input is too small"
    return time.monotonic() - sent[0]


def test_ctrl_c_stops_an_hlo_analysis():
    text = gen.hard_hlo()
    took = interrupted_after(1.0, lambda: tpuemu.analyze_hlo(text, allocator="planner", schedule="text"))
    assert took <= LIMIT, f"analyze_hlo ran {took:.3f} s after SIGINT"
    assert tpuemu.analyze_hlo(text, allocator="xla", schedule="text")["program"]["module"] == "hard"


def test_ctrl_c_stops_the_planner():
    rows = [(r["id"], int(r["lower"]), int(r["upper"]), int(r["size"]))
            for r in csv.DictReader(io.StringIO(gen.hard_csv()))]
    took = interrupted_after(1.0, lambda: tpuemu.plan(rows, 2420000, timeout=600))
    assert took <= LIMIT, f"plan ran {took:.3f} s after SIGINT"
    assert tpuemu.plan(rows, 1 << 30)["status"] == "solved"
