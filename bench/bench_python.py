#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Python module's costs, side by side in one run (docs/python.md, docs/benchmarks.md):

  run() overhead   tpuemu.run() of a 64^3 matmul on tlm against the same call without its Python
                   layer (the extension's run_json) and against the `tpuemu run --json` process;
                   the overhead is run() minus run_json, as a share of the CLI's time
  read_hbm         64 MiB read from an in-process device into a numpy array, GB/s (also into
                   a given array, the write, and numpy's own copy side by side)

Usage: PYTHONPATH=build/python python3 bench/bench_python.py --cli build/tpuemu [--repeat N]
Exits 1 when a check fails (a report that is not bit-exact, data that does not round-trip).
"""

import argparse
import statistics
import subprocess
import sys
import time

import numpy as np

import tpuemu
from tpuemu import _tpuemu


def median_seconds(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True, help="the tpuemu executable")
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()

    shape, backend = "64x64x64", "tlm"
    report = tpuemu.run(matmul=shape, backend=backend)
    if not report["result"]["bit_exact"]:
        print("bench_python: the matmul is not bit-exact", file=sys.stderr)
        return 1
    cli = [args.cli, "run", "--matmul", shape, "--backend", backend, "--json"]
    t_cli = median_seconds(lambda: subprocess.run(cli, check=True, capture_output=True), args.repeat)
    t_py = median_seconds(lambda: tpuemu.run(matmul=shape, backend=backend), args.repeat)
    t_ext = median_seconds(lambda: _tpuemu.run_json("", shape, "", backend, None, None, "bfc",
                                                    4_000_000_000, None, None, 1), args.repeat)
    overhead = max(t_py - t_ext, 0.0)
    share = overhead / t_cli
    print(f"run() of a {shape} matmul on {backend} (median of {args.repeat}):")
    print(f"  tpuemu run --json (process)  {t_cli * 1e3:8.2f} ms")
    print(f"  tpuemu.run()                 {t_py * 1e3:8.2f} ms  ({t_py / t_cli:.2f}x the CLI)")
    print(f"  extension alone (run_json)   {t_ext * 1e3:8.2f} ms")
    print(f"  Python layer overhead        {overhead * 1e3:8.3f} ms = {share * 100:.2f} % of the CLI's time"
          f"  (target < 5 %: {'met' if share < 0.05 else 'NOT MET'})")

    size = 64 << 20
    with tpuemu.open_device("fake", preset="default") as dev:
        data = np.random.default_rng(1).integers(0, 256, size=size, dtype=np.uint8)
        dev.write_hbm(0, data)
        repeat = max(5, args.repeat // 2)
        t_read = median_seconds(lambda: dev.read_hbm(0, size), repeat)
        out = np.empty(size, np.uint8)
        t_into = median_seconds(lambda: dev.read_hbm(0, out=out), repeat)
        t_write = median_seconds(lambda: dev.write_hbm(0, data), repeat)
        if not np.array_equal(dev.read_hbm(0, size), data):
            print("bench_python: 64 MiB did not round-trip", file=sys.stderr)
            return 1
    # What numpy itself reaches copying 64 MiB into a new array on this machine: the bound a read
    # into a new array cannot pass (its first-touch page faults are the same).
    t_numpy = median_seconds(lambda: data.copy(), repeat)
    gbps = size / t_read / 1e9
    print(f"64 MiB between HBM on fake (in process) and numpy (median of {repeat}):")
    print(f"  read_hbm, new array        {t_read * 1e3:7.1f} ms = {gbps:.2f} GB/s"
          f"  (target >= 1 GB/s: {'met' if gbps >= 1 else 'NOT MET'})")
    print(f"  read_hbm(out=...)          {t_into * 1e3:7.1f} ms = {size / t_into / 1e9:.2f} GB/s")
    print(f"  write_hbm                  {t_write * 1e3:7.1f} ms = {size / t_write / 1e9:.2f} GB/s")
    print(f"  numpy's own copy (bound)   {t_numpy * 1e3:7.1f} ms = {size / t_numpy / 1e9:.2f} GB/s;"
          f" read_hbm reaches {t_numpy / t_read:.2f}x of it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
