# SPDX-License-Identifier: Apache-2.0
"""What the suite's modules share: the repository root and the CLI's JSON and error lines."""

import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cli_json(cli, *args):
    out = subprocess.run([cli, *args, "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def cli_error(cli, *args):
    out = subprocess.run([cli, *args], capture_output=True, text=True)
    assert out.returncode != 0
    prefix = "tpuemu: error: "
    assert out.stderr.startswith(prefix), out.stderr
    return out.stderr[len(prefix):].strip()


def without_wall_clock(report):
    report = dict(report)
    report.pop("simulation")  # wall seconds and simulated cycles per second
    return report
