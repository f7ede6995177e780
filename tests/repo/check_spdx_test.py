#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/check-spdx.py fails on a tree with a source file lacking the SPDX line, naming it,
passes on the same tree once --fix has added the line, and leaves test fixtures alone."""
import pathlib
import subprocess
import sys
import tempfile

root = pathlib.Path(sys.argv[1])
checker = root / "scripts/check-spdx.py"
failures = 0


def expect(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


with tempfile.TemporaryDirectory() as tmp:
    t = pathlib.Path(tmp)
    (t / "src").mkdir()
    (t / "src/ok.cpp").write_text("// SPDX-License-Identifier: Apache-2.0\nint a;\n")
    (t / "src/missing.sv").write_text("module m; endmodule\n")
    (t / "tool.sh").write_text("#!/bin/sh\necho hi\n")
    (t / "tests/data").mkdir(parents=True)
    (t / "tests/data/fixture.cpp").write_text("int pinned_line_numbers;\n")
    run = subprocess.run([sys.executable, checker, t], capture_output=True, text=True)
    expect(run.returncode == 1, f"exit {run.returncode} on a tree with missing lines")
    expect("src/missing.sv:1:" in run.stdout, "missing.sv not named: " + run.stdout)
    expect("tool.sh:1:" in run.stdout, "tool.sh not named: " + run.stdout)
    expect("ok.cpp" not in run.stdout and "fixture" not in run.stdout, "false positive: " + run.stdout)
    subprocess.run([sys.executable, checker, "--fix", t], check=True)
    expect((t / "tool.sh").read_text().splitlines()[:2] ==
           ["#!/bin/sh", "# SPDX-License-Identifier: Apache-2.0"], "shebang not kept first")
    expect((t / "src/missing.sv").read_text().startswith("// SPDX-License-Identifier"), "sv line")
    expect(subprocess.run([sys.executable, checker, t]).returncode == 0, "fixed tree still fails")

print(f"{failures} failures")
sys.exit(1 if failures else 0)
