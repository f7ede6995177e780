#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails when a program links a Verilated model or SystemC.

A program that opens only the fake backend (and remote:// clients) must not pull in the simulator
(host/src/device/CMakeLists.txt: one library per backend). The check reads the program's symbols
with nm (defined and undefined, demangled) and its dynamic section with readelf, and looks for
  - a Verilated model or the Verilator runtime: Vtpu_*, Vhbm_*, Verilated*,
  - SystemC: sc_core::, sc_dt::, or libsystemc among the needed shared libraries.

Usage: check-no-models.py [--expect-found] PROGRAM
Exit status: 0 nothing found (with --expect-found: something found, the check's self-test),
1 otherwise (one line per kind found, with examples), 2 the tools failed.
"""

import re
import subprocess
import sys

KINDS = [
    ("a Verilated core model", re.compile(r"\bVtpu_\w+")),
    ("a Verilated HBM model", re.compile(r"\bVhbm_\w+")),
    ("the Verilator runtime", re.compile(r"\bVerilated\w*")),
    ("SystemC", re.compile(r"\bsc_(?:core|dt)::\w+")),
]


def tool(args):
    try:
        return subprocess.run(args, check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        detail = e.stderr.strip() if isinstance(e, subprocess.CalledProcessError) else e.strerror
        print(f"check-no-models: {' '.join(args)} failed: {detail}", file=sys.stderr)
        sys.exit(2)


def findings(program):
    symbols = tool(["nm", "-C", program])
    if not symbols.strip():
        print(f"check-no-models: {program}: no symbols (stripped?)", file=sys.stderr)
        sys.exit(2)
    found = []
    for kind, pattern in KINDS:
        names = sorted(set(pattern.findall(symbols)))
        if names:
            found.append(f"{kind}: {len(names)} names, e.g. {', '.join(names[:3])}")
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", tool(["readelf", "-d", program]))
    systemc = [lib for lib in needed if lib.startswith("libsystemc")]
    if systemc:
        found.append(f"SystemC: needs {', '.join(systemc)}")
    return found


def main(argv):
    expect_found = "--expect-found" in argv
    args = [a for a in argv if a != "--expect-found"]
    if len(args) != 1:
        print(__doc__.strip().splitlines()[-4], file=sys.stderr)
        return 2
    program = args[0]
    found = findings(program)
    if expect_found:
        if found:
            print(f"{program}: links the simulator, as expected ({len(found)} kinds)")
            return 0
        print(f"{program}: no Verilated model or SystemC found, but the program links them: the check is blind")
        return 1
    for line in found:
        print(f"{program}: links {line}")
    if found:
        return 1
    print(f"{program}: no Verilated model, no SystemC")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
