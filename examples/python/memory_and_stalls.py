#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where a JAX program's memory goes, and where a model's cycles go: a notebook as a script.

Each `# %%` block is a cell (VS Code and Jupyter's jupytext open the file as a notebook); as a
script it prints the tables and saves the figure docs/python.md shows:

    python3 examples/python/memory_and_stalls.py --out docs/images/python-example.png

1. Analyse an HLO module (examples/hlo/transformer_block.hlo, one transformer block as JAX lowers
   it) with every placement policy, and draw its HBM memory map over time under the TPU
   compiler's policy ("xla") and a runtime allocator's ("bfc").
2. Compare each policy's heap with the bytes live at the peak: the gap is fragmentation.
3. Run a model (examples/cnn.json) on the tlm backend with 1, 2 and 3 buffers and show where the
   MXU's cycles went: busy, idle with nothing queued, waiting on a semaphore (data not yet
   loaded), waiting for weights, VMEM bank conflicts.
4. Compile the same model layer by layer, run each layer's program on a device and show every
   layer's counters the same way, checking each tensor against the reference.
"""

# %%
import argparse
import os
import sys

import matplotlib
import numpy as np

import tpuemu

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
args = argparse.ArgumentParser(description=__doc__.split("\n")[0])
args.add_argument("--hlo", default=os.path.join(ROOT, "examples", "hlo", "transformer_block.hlo"))
args.add_argument("--model", default=os.path.join(ROOT, "examples", "cnn.json"))
args.add_argument("--backend", default="tlm")
args.add_argument("--out", default="python-example.png", help="where the figure is saved")
args.add_argument("--show", action="store_true", help="also open a window")
opts, _ = args.parse_known_args()  # known only: a notebook kernel passes its own arguments
if not opts.show:
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)

MIB = 1 << 20

# %% 1. The HLO module's memory, placed by every policy
analysis = tpuemu.analyze_hlo(opts.hlo, placements=True)
where = analysis["placements"]
buffers = where["buffers"]
print(f"{analysis['program']['module']}: {len(buffers['name'])} HBM buffers over "
      f"{where['positions']} schedule positions ({analysis['schedule']} schedule)")

KIND_COLOURS = {"parameter": "tab:blue", "output": "tab:green", "HLO temp": "tab:orange",
                "constant": "tab:gray"}


def draw_memory_map(ax, policy):
    """Each buffer a rectangle: live from its first to its last position, at its offset."""
    offsets = where["offsets"][policy]
    for i, kind in enumerate(buffers["kind"]):
        start, end = buffers["start"][i], buffers["end"][i]
        ax.add_patch(matplotlib.patches.Rectangle(
            (start, offsets[i] / MIB), end - start + 1, buffers["bytes"][i] / MIB,
            facecolor=KIND_COLOURS.get(kind, "tab:purple"), edgecolor="black", linewidth=0.3))
    heap = analysis["policies"][policy]["heap_bytes"]
    ax.axhline(heap / MIB, color="black", linestyle="--", linewidth=0.8)
    ax.set_xlim(0, where["positions"])
    ax.set_ylim(0, heap / MIB * 1.08)
    ax.set_xlabel("schedule position")
    ax.set_ylabel("HBM offset (MiB)")
    frag = analysis["policies"][policy]["fragmentation"]
    ax.set_title(f"{policy}: heap {heap / MIB:.2f} MiB, fragmentation {frag:.1%}")


# %% 2. Each policy's heap against the bytes live at the peak
policies = list(analysis["policies"])
print(f"{'policy':<10} {'heap MiB':>9} {'peak live MiB':>14} {'fragmentation':>14}")
for p in policies:
    r = analysis["policies"][p]
    print(f"{p:<10} {r['heap_bytes'] / MIB:9.2f} {r['peak_live_bytes'] / MIB:14.2f} {r['fragmentation']:14.1%}")


def draw_heaps(ax):
    heaps = [analysis["policies"][p]["heap_bytes"] / MIB for p in policies]
    live = [analysis["policies"][p]["peak_live_bytes"] / MIB for p in policies]
    x = np.arange(len(policies))
    ax.bar(x, heaps, color="tab:red", label="heap (fragmentation on top)")
    ax.bar(x, live, color="tab:blue", label="live at the peak")
    ax.set_xticks(x, policies, rotation=30)
    ax.set_ylabel("MiB")
    ax.set_ylim(min(live) * 0.9, max(heaps) * 1.03)
    ax.set_title("each policy's heap")
    ax.legend(loc="lower right", fontsize="small")


# %% 3. The model on tlm with 1, 2 and 3 buffers: where the MXU's cycles go
MXU_PARTS = [("mxu_busy", "busy", "tab:green"), ("mxu_idle_empty", "idle: queue empty", "tab:gray"),
             ("mxu_stall_semaphore", "waits for data (semaphore)", "tab:orange"),
             ("mxu_stall_weights", "waits for weights", "tab:red"),
             ("mxu_stall_bank_conflict", "VMEM bank conflict", "tab:purple")]
runs = {}
for buffers_per_operand in (1, 2, 3):
    report = tpuemu.run(opts.model, backend=opts.backend, buffers=buffers_per_operand)
    if not report["result"]["bit_exact"]:
        sys.exit(f"{opts.model}: buffers {buffers_per_operand}: the result is not bit-exact")
    runs[buffers_per_operand] = dict(cycles=report["counters"]["cycles"], counters=report["counters"])
    c = report["counters"]
    print(f"buffers {buffers_per_operand}: {c['cycles']} cycles, MXU busy {c['mxu_busy'] / c['cycles']:.1%}, "
          f"MXU utilisation {report['mxu_utilization']:.1%}")


def draw_counters(ax, labels, results, title):
    """Per bar group: the cycles (black outline) and each MXU counter beside it. The counters
    overlap - the array streams a matmul's rows while the next instruction already waits - so
    they are drawn side by side, not stacked."""
    x = np.arange(len(labels))
    width = 0.8 / (len(MXU_PARTS) + 1)
    cycles = np.array([r["cycles"] for r in results], dtype=float)
    ax.bar(x - 0.4 + width / 2, cycles, width, color="white", edgecolor="black", label="cycles")
    for i, (key, name, colour) in enumerate(MXU_PARTS, start=1):
        values = np.array([r["counters"][key] for r in results], dtype=float)
        ax.bar(x - 0.4 + width * (i + 0.5), values, width, color=colour, label=name)
    ax.set_xticks(x, labels)
    ax.set_ylabel("core cycles")
    ax.set_title(title)


# %% 4. The same model compiled layer by layer: each layer's cycles
model = tpuemu.compile_model(opts.model)
with tpuemu.open_device(opts.backend, preset=model.preset) as dev:
    model.load(dev)
    per_layer = model.run(dev)
    for tensor, want in zip(model.tensors, model.expected):
        if not np.array_equal(tensor.read(dev), want):
            sys.exit(f"{opts.model}: tensor '{tensor.name}' differs from the reference")
for step, r in zip(model.steps, per_layer):
    c = r["counters"]
    print(f"{step.layer:<12} {step.kind:<7} {r['cycles']:>8} cycles, MXU busy {c['mxu_busy'] / r['cycles']:6.1%}, "
          f"waits on semaphores {c['mxu_stall_semaphore']:>6}, for weights {c['mxu_stall_weights']:>5}")

# %% The figure
fig, axes = plt.subplots(2, 3, figsize=(17, 9.5), gridspec_kw={"width_ratios": [3, 3, 2]})
draw_memory_map(axes[0][0], "xla")
draw_memory_map(axes[0][1], "bfc")
draw_heaps(axes[0][2])
axes[0][0].legend(handles=[matplotlib.patches.Patch(color=c, label=k) for k, c in KIND_COLOURS.items()],
                  loc="upper right", fontsize="small")
draw_counters(axes[1][0], [s.layer for s in model.steps], per_layer,
              f"{model.name} on {opts.backend}, layer by layer (buffers {model.steps[0].plan['b_slots']})")
axes[1][0].tick_params(axis="x", rotation=30)
axes[1][0].legend(fontsize="small")
draw_counters(axes[1][1], [f"buffers {b}" for b in runs], list(runs.values()),
              f"{model.name} on {opts.backend}, whole run")
axes[1][2].axis("off")
axes[1][2].text(0, 1, "\n".join([
    f"HLO module: {analysis['program']['module']}",
    f"  {len(buffers['name'])} HBM buffers, {where['positions']} positions",
    f"  peak live {analysis['memory']['peak_live_bytes'] / MIB:.2f} MiB",
    "",
    f"model: {model.name} ({len(model.steps)} layers, preset {model.preset})",
    *(f"  buffers {b}: {r['counters']['cycles']:,} cycles" for b, r in runs.items()),
    "",
    "every run and layer checked bit-exact",
    "against the C++ reference",
]), va="top", family="monospace", fontsize=10)
fig.suptitle("tpuemu from Python: a JAX program's HBM by policy, and a model's MXU cycles")
fig.tight_layout()
fig.savefig(opts.out, dpi=80)
print(f"figure: {opts.out}")
if opts.show:
    plt.show()
