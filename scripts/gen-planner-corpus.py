#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the planner corpus tests/data/planner/ (docs/allocation.md "Corpus and the published benchmark"): MiniMalloc-format
CSVs (id,lower,upper,size[,alignment]) and corpus.json, which gives each file its capacity and
whether a placement within it exists.

Feasible instances are built from a known packing whose height is the capacity, and every time
step of it is full, so peak live bytes == capacity and only a zero-waste placement fits:
  guillotine   a full rectangle cut recursively in time or memory (the shape of MiniMalloc's
               published challenging benchmarks);
  pinwheel     the same, but some rectangles are split into a pinwheel of five (four around a
               centre): no sequence of straight cuts gives such a packing;
  nested       ML-like: lifetimes nest like the activations of a network with skip
               connections; every time step is then topped up to the capacity by filler buffers;
  aligned      a guillotine packing whose buffers keep an alignment their known offset meets.
Infeasible instances are small random ones whose peak live bytes fit the capacity but that have
no placement, proved here by exhausting every offset (in units of the gcd of the sizes).

Fixed seeds: running it again writes the same files. Usage: scripts/gen-planner-corpus.py [OUT]
"""
import json
import math
import random
import sys
from pathlib import Path

UNIT = 1024  # bytes per memory unit of the feasible instances (the challenging set's KiB)


def cut(rects, rng, count, pinwheel):
    """Splits rectangles (t0, t1, m0, m1) until there are `count`."""
    while len(rects) < count:
        weights = [(r[1] - r[0]) * (r[3] - r[2]) if (r[1] - r[0] >= 2 or r[3] - r[2] >= 2) else 0 for r in rects]
        if not any(weights):
            break
        i = rng.choices(range(len(rects)), weights=weights)[0]
        t0, t1, m0, m1 = rects[i]
        w, h = t1 - t0, m1 - m0
        if pinwheel and w >= 3 and h >= 3 and rng.random() < 0.35 and len(rects) + 4 <= count:
            # four rectangles around a centre one, each touching the next at a corner offset
            ta, tb = sorted(rng.sample(range(t0 + 1, t1), 2))
            ma, mb = sorted(rng.sample(range(m0 + 1, m1), 2))
            rects[i] = (t0, tb, m0, ma)          # bottom left, wide
            rects.append((tb, t1, m0, mb))       # bottom right, tall
            rects.append((ta, t1, mb, m1))       # top right, wide
            rects.append((t0, ta, ma, m1))       # top left, tall
            rects.append((ta, tb, ma, mb))       # centre
            continue
        time_cut = rng.random() < (w * w) / (w * w + h * h * 0.25)
        if w < 2:
            time_cut = False
        if h < 2:
            time_cut = True
        if time_cut:
            at = rng.randint(t0 + 1, t1 - 1)
            rects[i] = (t0, at, m0, m1)
            rects.append((at, t1, m0, m1))
        else:
            at = rng.randint(m0 + 1, m1 - 1)
            rects[i] = (t0, t1, m0, at)
            rects.append((t0, t1, at, m1))
    return rects


def check_packing(rects, steps, units):
    """Every (time, unit) cell covered exactly once."""
    cover = {}
    for t0, t1, m0, m1 in rects:
        assert t0 < t1 and m0 < m1
        for t in range(t0, t1):
            cover[t] = cover.get(t, 0) + (m1 - m0)
    assert all(cover.get(t, 0) == units for t in range(steps)), "not a full packing"


def rect_instance(seed, count, steps, units, pinwheel):
    rng = random.Random(seed)
    rects = cut([(0, steps, 0, units)], rng, count, pinwheel)
    check_packing(rects, steps, units)
    rng.shuffle(rects)
    return [(f"b{i}", t0, t1, (m1 - m0) * UNIT, 1, m0 * UNIT) for i, (t0, t1, m0, m1) in enumerate(rects)], units * UNIT


def aligned_instance(seed, count, steps, units):
    rng = random.Random(seed)
    rows, capacity = rect_instance(seed, count, steps, units, False)
    out = []
    for id_, lo, hi, size, _, off in rows:
        al = 1
        if rng.random() < 0.4 and off > 0:
            al = off & -off  # the largest power of two dividing the offset
            al = min(al, 16 * UNIT)
        elif rng.random() < 0.4 and off == 0:
            al = 16 * UNIT
        out.append((id_, lo, hi, size, al, off))
    return out, capacity


def nested_instance(seed, layers, units):
    """Activations of a U-Net-like chain: layer i's output lives from i until its consumers end;
    skip connections make outputs of the way down live until the way up; then filler buffers top
    every time step up to the capacity in a stacked packing (each time step exactly full)."""
    rng = random.Random(seed)
    # A laminar (stack) packing: each interval sits on its parent. Build a random interval tree
    # over [0, T) with sizes, place each child on top of its parent, then fill the space above
    # with guillotine cuts of the free rectangles so every step is full.
    steps = 4 * layers
    rects = []

    def build(t0, t1, base, depth):
        # children: disjoint sub-intervals of [t0, t1)
        t = t0
        while t < t1 - 1 and depth < 6:
            if rng.random() < 0.35:
                t += 1
                continue
            length = rng.randint(1, max(1, (t1 - t) // 2))
            size = rng.randint(1, max(1, (units - base) // 4))
            if base + size > units:
                break
            rects.append((t, t + length, base, base + size))
            build(t, t + length, base + size, depth + 1)
            t += length
    build(0, steps, 0, 0)
    # fill every step up to `units`: the free space is a union of rectangles above the stack;
    # per maximal run of equal stack height, one filler rectangle, split in time or memory
    height = [0] * steps
    for t0, t1, m0, m1 in rects:
        for t in range(t0, t1):
            height[t] = max(height[t], m1)
    t = 0
    while t < steps:
        h = height[t]
        u = t
        while u < steps and height[u] == h:
            u += 1
        if h < units:
            free = cut([(t, u, h, units)], rng, rng.randint(1, 3), False)
            rects.extend(free)
        t = u
    check_packing(rects, steps, units)
    rng.shuffle(rects)
    return [(f"n{i}", t0, t1, (m1 - m0) * UNIT, 1, m0 * UNIT) for i, (t0, t1, m0, m1) in enumerate(rects)], units * UNIT


def peak(bufs):
    events = []
    for lo, hi, size, _ in bufs:
        events.append((lo, 1, size))
        events.append((hi, 0, size))
    live = best = 0
    for _, start, size in sorted(events):
        live += size if start else -size
        best = max(best, live)
    return best


def packable(bufs, capacity):
    """Exhaustive: a placement of (lower, upper, size, alignment) within capacity, or None."""
    order = sorted(range(len(bufs)), key=lambda i: (-bufs[i][2], bufs[i][0]))
    offsets = {}

    def ok(i, off):
        lo, hi, size, _ = bufs[i]
        for j, o in offsets.items():
            l2, h2, s2, _ = bufs[j]
            if lo < h2 and l2 < hi and off < o + s2 and o < off + size:
                return False
        return True

    def go(k):
        if k == len(order):
            return True
        i = order[k]
        _, _, size, al = bufs[i]
        for off in range(0, capacity - size + 1, al):
            if ok(i, off):
                offsets[i] = off
                if go(k + 1):
                    return True
                del offsets[i]
        return False

    return dict(offsets) if go(0) else None


def infeasible_instances(count, seed):
    """Small random instances (units of 1 byte) with peak live <= capacity and no placement."""
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        n = rng.randint(4, 7)
        steps = rng.randint(3, 6)
        bufs = []
        for _ in range(n):
            lo = rng.randint(0, steps - 1)
            hi = rng.randint(lo + 1, steps)
            size = rng.randint(1, 4)
            al = rng.choice([1, 1, 1, 2, 4])
            bufs.append((lo, hi, size, al))
        capacity = peak(bufs)
        if capacity > 9 or any(b[2] > capacity for b in bufs):
            continue
        if packable(bufs, capacity) is None:
            found.append((bufs, capacity))
    return found


def write_csv(path, rows, with_alignment):
    with open(path, "w") as f:
        f.write("id,lower,upper,size" + (",alignment" if with_alignment else "") + "\n")
        for r in rows:
            f.write(",".join(str(x) for x in r[: 5 if with_alignment else 4]) + "\n")


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "tests/data/planner"
    out.mkdir(parents=True, exist_ok=True)
    manifest = []

    def add(name, rows, capacity, feasible, structure, with_alignment=False):
        write_csv(out / name, rows, with_alignment)
        bufs = [(r[1], r[2], r[3], r[4]) for r in rows]
        assert peak(bufs) <= capacity
        manifest.append({"file": name, "capacity": capacity, "feasible": feasible, "structure": structure,
                         "buffers": len(rows), "peak_live": peak(bufs)})

    for n, seed in [(120, 1), (200, 2), (300, 3)]:
        rows, cap = rect_instance(seed, n, 1 << 20, 1024, False)
        add(f"guillotine-{n}-s{seed}.csv", rows, cap, True, "guillotine")
    for n, seed in [(60, 11), (120, 12), (200, 13), (300, 14)]:
        rows, cap = rect_instance(seed, n, 2 * n, 2 * n, True)
        add(f"pinwheel-{n}-s{seed}.csv", rows, cap, True, "pinwheel (non-guillotine)")
    for layers, seed in [(20, 21), (40, 22), (80, 23)]:
        rows, cap = nested_instance(seed, layers, 256)
        add(f"nested-{layers}-s{seed}.csv", rows, cap, True, "nested lifetimes (ML-like)")
    for n, seed in [(100, 31), (200, 32)]:
        rows, cap = aligned_instance(seed, n, 1 << 20, 1024)
        add(f"aligned-{n}-s{seed}.csv", rows, cap, True, "guillotine with alignment", with_alignment=True)
    for k, (bufs, cap) in enumerate(infeasible_instances(8, 41)):
        rows = [(f"x{i}", lo, hi, size, al, 0) for i, (lo, hi, size, al) in enumerate(bufs)]
        add(f"infeasible-{k}.csv", rows, cap, False, "infeasible (proved by exhaustion)", with_alignment=True)
    with open(out / "corpus.json", "w") as f:
        json.dump({"generator": "scripts/gen-planner-corpus.py", "instances": manifest}, f, indent=1)
        f.write("\n")
    print(f"wrote {len(manifest)} instances to {out}")


if __name__ == "__main__":
    main()
