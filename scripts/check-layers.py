#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails when a host layer includes a layer that is not below it.

The layer table is host/layers.txt (the only copy of it; CMake links the layer libraries from the
same file). Each line is "<layer>: <layers it builds on>", bottom up. A layer may include the
public headers tpuemu/<layer>/... of its own layer and of every layer below it, that is, every
layer it builds on, directly or through another layer.

Scanned: every file under <host>/src/<layer>/ and <host>/include/tpuemu/<layer>/. Each folder
there must be a layer of the table, so that new code cannot sit outside the layering. Includes of
other tpuemu/ namespaces (the simulator's tpuemu/sim/, the firmware's tpuemu/fw/, the contract's
tpuemu/spec/) are libraries outside host/ and are not checked here; the CMake link lines decide
their use.

A layer's names live in its own namespace: a file of layer X may open `namespace tpuemu` or
`namespace tpuemu::X[::...]`, never `namespace tpuemu::Y` of another layer Y, so that the
qualified name of anything says which library and which folder hold it.

Usage: check-layers.py [--host DIR] [--layers FILE] [--stamp FILE]
Exit status: 0 no violation (the stamp file is written), 1 violations (one line each on stderr,
"file:line: layer X includes layer Y (not below it)" or "file:line: layer X opens namespace
tpuemu::Y (layer Y's)"), 2 an unreadable or malformed table.
"""

import argparse
import os
import re
import sys
from pathlib import Path

SOURCE_SUFFIXES = {".h", ".hpp", ".hh", ".ipp", ".inc", ".c", ".cc", ".cpp", ".cxx"}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
NAMESPACE_RE = re.compile(r'^\s*namespace\s+tpuemu::([a-z][a-z0-9_]*)\b')


class TableError(Exception):
    pass


def read_layer_table(path):
    """Returns {layer: set of layers below it}, in table order. Raises TableError."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise TableError(f"{shown(path)}: cannot read the layer table: {e.strerror}") from e
    below = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, colon, rest = line.partition(":")
        name = name.strip()
        if not colon or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            raise TableError(f"{shown(path)}:{number}: expected '<layer>: <layers below it>'")
        if name in below:
            raise TableError(f"{shown(path)}:{number}: layer {name} is listed twice")
        deps = rest.split()
        reachable = set()
        for dep in deps:
            # Requiring every dependency to be listed earlier keeps the table bottom up and acyclic.
            if dep not in below:
                raise TableError(f"{shown(path)}:{number}: layer {name} builds on {dep}, "
                                 f"which is not a layer listed above it")
            reachable |= {dep} | below[dep]
        for dep in deps:
            # Only the layers immediately below: anything else is implied and would drift.
            through = [other for other in deps if dep in below[other]]
            if through:
                raise TableError(f"{shown(path)}:{number}: layer {name} lists {dep}, which is "
                                 f"already below {through[0]}")
        below[name] = reachable
    if not below:
        raise TableError(f"{shown(path)}: the layer table lists no layer")
    return below


def shown(path):
    """The path relative to the working directory when inside it (clickable in a build log)."""
    path = Path(os.path.abspath(path))
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def layer_roots(host):
    """(folder holding one folder per layer, what its files are) for sources and public headers."""
    return [(host / "src", "sources"), (host / "include" / "tpuemu", "public headers")]


def layer_of(path, host):
    """The layer whose folder holds path, or None."""
    for root, _ in layer_roots(host):
        try:
            parts = path.relative_to(root).parts
        except ValueError:
            continue
        if len(parts) > 1:
            return parts[0]
    return None


def check_placement(host, below):
    """Folders and files that are outside any layer folder."""
    problems = []
    for root, kind in layer_roots(host):
        if not root.is_dir():
            continue
        for entry in sorted(root.iterdir()):
            if entry.is_dir() and entry.name not in below:
                problems.append(f"{shown(entry)}: folder of {kind} is not a layer of the table")
            elif entry.is_file() and entry.suffix in SOURCE_SUFFIXES:
                problems.append(f"{shown(entry)}: file is in no layer folder "
                                f"(expected {shown(root)}/<layer>/)")
    return problems


def included_layer(include, quote, including_file, host, below):
    """The host layer an include line refers to, or None when it names no host layer."""
    parts = include.split("/")
    if parts[0] == "tpuemu" and len(parts) > 2 and parts[1] in below:
        return parts[1]
    if quote == '"' and ".." in parts:
        # A relative path out of the including file's folder may reach into another layer.
        return layer_of(Path(os.path.normpath(including_file.parent / include)), host)
    return None


def check_includes(host, below):
    violations = []
    for root, _ in layer_roots(host):
        if not root.is_dir():
            continue
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            if path.suffix not in SOURCE_SUFFIXES:
                continue
            layer = layer_of(path, host)
            if layer not in below:
                continue  # reported by check_placement
            text = path.read_text(encoding="utf-8", errors="replace")
            for number, line in enumerate(text.splitlines(), start=1):
                match = INCLUDE_RE.match(line)
                if match:
                    target = included_layer(match.group(2), match.group(1), path, host, below)
                    if target is not None and target != layer and target not in below[layer]:
                        violations.append(f"{shown(path)}:{number}: layer {layer} includes layer "
                                          f"{target} (not below it)")
                match = NAMESPACE_RE.match(line)
                if match and match.group(1) in below and match.group(1) != layer:
                    violations.append(f"{shown(path)}:{number}: layer {layer} opens namespace "
                                      f"tpuemu::{match.group(1)} (layer {match.group(1)}'s)")
    return violations


def main():
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", type=Path, default=here.parent / "host",
                        help="the host/ folder to check (default: the one next to scripts/)")
    parser.add_argument("--layers", type=Path,
                        help="the layer table (default: <host>/layers.txt)")
    parser.add_argument("--stamp", type=Path, help="file touched when there is no violation")
    args = parser.parse_args()

    host = Path(os.path.abspath(args.host))
    try:
        below = read_layer_table(args.layers or host / "layers.txt")
    except TableError as e:
        print(f"check-layers: {e}", file=sys.stderr)
        return 2
    if not host.is_dir():
        print(f"check-layers: {shown(host)}: no such folder", file=sys.stderr)
        return 2

    problems = check_placement(host, below) + check_includes(host, below)
    if problems:
        if args.stamp:
            args.stamp.unlink(missing_ok=True)
        for problem in problems:
            print(problem, file=sys.stderr)
        print(f"check-layers: {len(problems)} layering violation(s); the layer table is "
              f"{shown(args.layers or host / 'layers.txt')}", file=sys.stderr)
        return 1
    if args.stamp:
        args.stamp.parent.mkdir(parents=True, exist_ok=True)
        args.stamp.write_text("layering checked\n", encoding="utf-8")
    print(f"check-layers: {len(below)} layers, no violation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
