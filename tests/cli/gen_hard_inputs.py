#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Inputs that keep a command busy for many seconds, for the signal tests (tests/cli/signals_test.sh,
tests/python/test_signals.py): an HLO module whose buffers of random sizes live over random
stretches, and the same kind of buffers as a plan CSV, so that the planner searches a capacity just
above the peak until its timeout. Fixed seeds: the same files on every machine.

Usage: gen_hard_inputs.py DIR  ->  DIR/hard.hlo, DIR/hard.csv"""

import random
import sys


def hard_hlo(n=3000, reach=100, seed=7):
    rnd = random.Random(seed)
    sizes = [rnd.randint(1, 64) * 1024 + rnd.randint(0, 3) * 128 for _ in range(n)]
    lines = ["HloModule hard", "", "ENTRY main {", "  c = f32[] parameter(0)"]
    for i in range(n):
        lines.append(f"  t{i} = f32[{sizes[i]}]{{0}} broadcast(c), dimensions={{}}")
        j = i - rnd.randint(1, reach)  # t_j stays live until here
        if j >= 0:
            lines.append(f"  k{i} = f32[{sizes[j]}]{{0}} negate(t{j})")
    lines += [f"  ROOT r = f32[{sizes[-1]}]{{0}} negate(t{n - 1})", "}"]
    return "\n".join(lines) + "\n"


def hard_csv(n=3000, seed=3):
    rnd = random.Random(seed)
    rows = ["id,lower,upper,size"]
    for i in range(n):
        lower = rnd.randint(0, 3000)
        rows.append(f"b{i},{lower},{lower + rnd.randint(1, 100)},{rnd.randint(1, 64) * 1024 + rnd.randint(0, 3) * 128}")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    out = sys.argv[1]
    with open(f"{out}/hard.hlo", "w") as f:
        f.write(hard_hlo())
    with open(f"{out}/hard.csv", "w") as f:
        f.write(hard_csv())
