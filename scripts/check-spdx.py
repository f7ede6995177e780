#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that every source file of the repository names its licence in an SPDX line.

A source file is code in one of the project's languages (C/C++, SystemVerilog, Python, shell,
CMake, JavaScript, protobuf, linker scripts, assembly of the firmware, Verilator file lists and
configurations). Inputs the tools read as data are not source: test fixtures (tests/data,
tests/fuzz/corpus) and example programs (examples/programs), whose line numbers tests pin.

  check-spdx.py [ROOT]         lists each file without the line; exit 1 if any
  check-spdx.py --fix [ROOT]   adds the line where it is missing, in the file's comment syntax
"""
import os
import sys

LICENSE = "Apache-2.0"
TAG = "SPDX-License-Identifier: " + LICENSE
SKIP_DIRS = {".git", "node_modules", "__pycache__"}
SKIP_PREFIXES = ("build", "tests/data", "tests/fuzz/corpus", "examples/programs")

LINE_COMMENT = {".cpp": "//", ".h": "//", ".c": "//", ".inc": "//", ".sv": "//", ".svh": "//",
                ".proto": "//", ".mjs": "//", ".js": "//", ".vlt": "//", ".f": "//",
                ".py": "#", ".sh": "#", ".cmake": "#", ".in": "#"}
BLOCK_COMMENT = {".ld", ".S"}
NAMED = {"CMakeLists.txt": "#", "run": "#"}  # run: .ci/run


def comment_line(path):
    name = os.path.basename(path)
    ext = os.path.splitext(name)[1]
    if name in NAMED:
        return f"{NAMED[name]} {TAG}\n"
    if ext in LINE_COMMENT:
        return f"{LINE_COMMENT[ext]} {TAG}\n"
    if ext in BLOCK_COMMENT:
        return f"/* {TAG} */\n"
    return None


def source_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not
                             (rel_dir == "." and d.startswith("build")) and not
                             any(f"{rel_dir}/{d}".lstrip("./").startswith(p)
                                 for p in SKIP_PREFIXES if "/" in p))
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if comment_line(path) is not None and (name != "run" or rel_dir == ".ci"):
                yield path


def has_tag(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        head = [f.readline() for _ in range(3)]
    return any(TAG in line for line in head)


def add_tag(path):
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    at = 1 if lines and lines[0].startswith("#!") else 0
    lines.insert(at, comment_line(path))
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(lines)


def main(argv):
    fix = "--fix" in argv
    args = [a for a in argv if a != "--fix"]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    missing = [p for p in source_files(root) if not has_tag(p)]
    for path in missing:
        if fix:
            add_tag(path)
        else:
            print(f"{os.path.relpath(path, root)}:1: no '{TAG}' line in the first three lines")
    if missing and not fix:
        print(f"{len(missing)} source files without an SPDX line")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
