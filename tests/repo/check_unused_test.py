#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/check-unused.py on the tiny program of tests/data/unused-bad, compiled here into a build
folder of its own with its compile database: the check reports exactly the two unused functions of
its host/ and exits 1; compiled without them (-DWITHOUT_DEAD_CODE) it reports nothing and exits 0;
with an object missing it exits 77 (skipped: the build is incomplete).

Usage: check_unused_test.py <repository root> <C++ compiler>
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

FIXTURE = "tests/data/unused-bad"
SOURCES = ["host/lib.cpp", "host/square.cpp", "host/registry.cpp", "app/main.cpp",
           "tests/test.cpp"]
EXPECTED = [
    "host/lib.cpp:11: 'unused_function' (unused_function(int)) is defined but no object of the "
    "build refers to it",
    "host/lib.cpp:13: 'unused_method' (Widget::unused_method() const) is defined but no object of "
    "the build refers to it",
]


def compile_fixture(compiler, fixture, build, defines):
    """Compiles the fixture's sources into build/ and writes build/compile_commands.json."""
    build.mkdir()
    entries = []
    for source in SOURCES:
        obj = build / (source.replace("/", "_") + ".o")
        command = [compiler, "-std=c++20", "-O2", *defines, "-c", str(fixture / source), "-o",
                   str(obj)]
        subprocess.run(command, check=True)
        entries.append({"directory": str(build), "command": " ".join(command),
                        "file": str(fixture / source)})
    (build / "compile_commands.json").write_text(json.dumps(entries, indent=1))


def check(root, fixture, build):
    return subprocess.run([sys.executable, str(root / "scripts/check-unused.py"), "--build",
                           str(build), "--root", str(fixture), "--scope", "host"],
                          capture_output=True, text=True)


def main():
    root = Path(sys.argv[1]).resolve()
    compiler = sys.argv[2]
    fixture = root / FIXTURE
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        dead = Path(tmp) / "dead"
        compile_fixture(compiler, fixture, dead, [])
        run = check(root, fixture, dead)
        reported = run.stdout.splitlines()
        if run.returncode != 1:
            failures.append(f"dead code: exit {run.returncode}, expected 1 (stderr: "
                            f"{run.stderr.strip()})")
        if reported != EXPECTED:
            failures.append("dead code: findings differ\n  expected:\n    " +
                            "\n    ".join(EXPECTED) + "\n  reported:\n    " +
                            "\n    ".join(reported))

        clean = Path(tmp) / "clean"
        compile_fixture(compiler, fixture, clean, ["-DWITHOUT_DEAD_CODE"])
        run = check(root, fixture, clean)
        if run.returncode != 0 or run.stdout:
            failures.append(f"clean: exit {run.returncode}, expected 0 and no finding; reported "
                            f"{run.stdout.strip()!r} (stderr: {run.stderr.strip()})")

        (clean / "tests_test.cpp.o").unlink()
        run = check(root, fixture, clean)
        if run.returncode != 77 or "tests_test.cpp.o: not built" not in run.stderr:
            failures.append(f"incomplete build: exit {run.returncode}, expected 77 naming the "
                            f"missing object (stderr: {run.stderr.strip()})")
    for failure in failures:
        print(f"FAIL {failure}")
    if not failures:
        print(f"ok   the {len(EXPECTED)} unused functions and nothing else; a clean build passes; "
              f"an incomplete one is skipped")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
