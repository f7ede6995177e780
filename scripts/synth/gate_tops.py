#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prepares a gate-level netlist run of scripts/synth/gate_netlist.sh: copies the RTL named by the
manifests into WORK and writes the top Yosys flattens (gate_top.sv, module GATE_NAME). Prints one
line: the source files in compile order, '|', the module Yosys takes as the top, '|', its
parameters (Yosys's chparam -set; hierarchy -chparam trips an assertion of Yosys 0.55 here).

    gate_tops.py ROOT core PRESET.json WORK
    gate_tops.py ROOT hbm-channel TIMING_SET.json WORK QUEUE_DEPTH

core: tpu_top with the preset's core fields (the contract's core_params, as synth.sh), every
port kept, trace_o too (a wrapper: tpu_top's ports are stable). hbm-channel: hbm_channel_ctrl
itself with the parameters hbm_ctrl gives its channels for the timing set's geometry, QUEUE_DEPTH
slots (no wrapper, so that its ports are whatever the channel has). The netlist's ports are those
of the module it was made from, packed structs as plain vectors of the same width."""
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from synth_tops import copy_flat, core_top, fixed_fields, manifest  # noqa: E402


def core(root, preset_path, work):
    preset = json.loads(pathlib.Path(preset_path).read_text())
    files = copy_flat(manifest(root / "rtl/core.f", root / "rtl"), work)
    (work / "gate_top.sv").write_text(core_top(preset, fixed_fields(root), "tpu_top_gates", with_trace=True))
    return ["tpu_pkg.sv"] + files + ["gate_top.sv"], "tpu_top_gates", ""


def hbm_channel(root, tset_path, work, depth):
    g = json.loads(pathlib.Path(tset_path).read_text())["geometry"]
    files = copy_flat(manifest(root / "rtl/mem/hbm/hbm.f", root), work)
    params = {"NumChannels": g["channels"], "BankGroups": g["bank_groups"],
              "BanksPerGroup": g["banks_per_group"], "QueueDepth": depth}
    chparam = " ".join(f"-set {k} {v}" for k, v in params.items())
    return ["hbm_spec_pkg.sv"] + files, "hbm_channel_ctrl", chparam


def main():
    root, kind, src, work = sys.argv[1:5]
    root, work = pathlib.Path(root), pathlib.Path(work)
    if kind == "core":
        files, top, chparam = core(root, src, work)
    elif kind == "hbm-channel":
        files, top, chparam = hbm_channel(root, src, work, int(sys.argv[5]))
    else:
        sys.exit(f"gate_tops: unknown kind '{kind}'")
    print(" ".join(files), "|", top, "|", chparam)


if __name__ == "__main__":
    main()
