#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails when a function defined in host/ is referred to by no object of the build.

Reads the objects the build compiled (the compile database, compile_commands.json, names each
object and its source) and builds nothing. A function is checked when an object compiled from a
source under the scope (host/ by default) defines it as a strong global C++ function; it is used
when any object of the build (libraries, the CLI, tests, benchmarks, examples, the Python module)
holds a relocation against it: a call, an address taken, a vtable slot, a registration table.

What is never reported, because symbols cannot see its uses:
- inline functions and template instantiations (weak or local symbols; the compiler drops them);
- functions with C linkage (entry points looked up by name: the Python module's init, hooks);
- operators (their uses do not name them);
- a function whose name appears in its own source file more than once: a call there may have been
  inlined away, leaving no relocation (the price is that such a function is never reported).
Deleting a reported function can make its callees unused in turn: run the check again.

Usage: check-unused.py --build DIR [--root DIR] [--scope DIR ...]
Exit status: 0 every function is used; 1 unused functions (one line each on stdout, "source:line:
'name' (signature) is defined but no object of the build refers to it"); 2 no compile database or
no readelf; 77 the build is incomplete (an object is missing: build every target first), which
ctest reports as skipped. Objects older than their source are named in a warning.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

class BuildIncomplete(Exception):
    pass


def objects_of(build):
    """[(object path, source path)] of every compile command of the build."""
    database = build / "compile_commands.json"
    entries = json.loads(database.read_text(encoding="utf-8"))
    objects = []
    for entry in entries:
        directory = Path(entry["directory"])
        if "output" in entry:
            output = entry["output"]
        else:
            words = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
            if "-o" not in words:
                continue
            output = words[words.index("-o") + 1]
        objects.append((Path(os.path.normpath(directory / output)),
                        Path(os.path.normpath(directory / entry["file"]))))
    return objects


def listed(problems):
    more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
    return "; ".join(problems[:5]) + more


def check_built(objects):
    """Raises BuildIncomplete naming the objects not built; warns of those older than their source
    (a use added there and not compiled yet would be missed: a finding may be stale)."""
    missing = [f"{obj}: not built" for obj, _ in objects if not obj.exists()]
    if missing:
        raise BuildIncomplete(listed(missing))
    stale = [f"{obj}: older than {source}" for obj, source in objects
             if source.exists() and source.stat().st_mtime > obj.stat().st_mtime]
    if stale:
        print(f"check-unused: warning: objects older than their source, findings may be stale: "
              f"{listed(stale)}", file=sys.stderr)


def read_elf(paths):
    """{object: (defined strong global functions, referred-to functions)}, names demangled."""
    result = {}
    # One readelf per batch of objects: a few hundred objects take well under a second. The text
    # is split rather than matched by regular expressions (most of it is relocations).
    batch = 200
    for start in range(0, len(paths), batch):
        chunk = [str(p) for p in paths[start:start + batch]]
        with subprocess.Popen(["readelf", "-W", "-C", "-s", "-r", *chunk], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL) as readelf:
            text = readelf.stdout.read().decode("utf-8", errors="replace")
        current = chunk[0]
        defined, referred = result.setdefault(current, (set(), set()))
        in_symbols = False
        for line in text.splitlines():
            if line.startswith("File: "):
                current = line[len("File: "):]
                defined, referred = result.setdefault(current, (set(), set()))
                in_symbols = False
            elif line.startswith("Symbol table"):
                in_symbols = True
            elif line.startswith("Relocation section"):
                in_symbols = False
            elif in_symbols:
                # "  12: 0000000000000040   123 FUNC    GLOBAL DEFAULT    5 name"
                parts = line.split(None, 7)
                if (len(parts) == 8 and parts[3] == "FUNC" and parts[4] == "GLOBAL"
                        and parts[6].isdigit()):
                    defined.add(parts[7])
            elif "(" in line:
                # "offset info type symbol-value name + addend" (functions' names hold a "(")
                parts = line.split(None, 4)
                if len(parts) == 5:
                    referred.add(parts[4].rsplit(" ", 2)[0])
    return result


def bare_name(signature):
    """'ns::Class::method(int) const' -> 'method'; 'ns::f<int>(int)' -> 'f'."""
    depth = 0
    end = len(signature)
    # The parameter list is the last top-level parenthesis group.
    for i in range(len(signature) - 1, -1, -1):
        c = signature[i]
        if c == ")":
            depth += 1
        elif c == "(":
            depth -= 1
            if depth == 0:
                end = i
                break
    name = signature[:end]
    # Drop template arguments at the end of the name, then keep the last scope component.
    while name.endswith(">"):
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            if name[i] == ">":
                depth += 1
            elif name[i] == "<":
                depth -= 1
                if depth == 0:
                    name = name[:i]
                    break
        else:
            break
    return name.rsplit("::", 1)[-1]


def unused_functions(build, root, scopes):
    """[(source, line, bare name, signature)] of the unused functions, sorted."""
    objects = objects_of(build)
    check_built(objects)
    symbols = read_elf([obj for obj, _ in objects])
    referred = set()
    for _, refs in symbols.values():
        referred |= refs
    scope_dirs = [Path(os.path.normpath(root / scope)) for scope in scopes]
    findings = {}
    source_text = {}
    for obj, source in objects:
        if not any(source.is_relative_to(scope) for scope in scope_dirs):
            continue
        defined, _ = symbols.get(str(obj), (set(), set()))
        for signature in defined - referred:
            name = bare_name(signature)
            if "(" not in signature or name.startswith("operator") or "thunk to" in signature:
                continue
            if source not in source_text:
                source_text[source] = source.read_text(encoding="utf-8", errors="replace")
            text = source_text[source]
            mentions = list(re.finditer(rf"(?<![\w~]){re.escape(name)}\b", text))
            if len(mentions) > 1:
                continue
            line = text.count("\n", 0, mentions[0].start()) + 1 if mentions else 0
            findings[(source, signature)] = (line, name)
    return sorted((source, line, name, signature)
                  for (source, signature), (line, name) in findings.items())


def shown(path, root):
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", required=True, type=Path,
                        help="the build tree (its compile_commands.json)")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the source tree (default: this script's repository)")
    parser.add_argument("--scope", action="append",
                        help="folder of the root whose functions are checked (default: host)")
    args = parser.parse_args()
    build, root = args.build.resolve(), args.root.resolve()
    if not shutil.which("readelf"):
        print("check-unused: readelf (binutils) is not installed", file=sys.stderr)
        return 2
    if not (build / "compile_commands.json").is_file():
        print(f"check-unused: {build}/compile_commands.json: no compile database (configure with "
              f"CMAKE_EXPORT_COMPILE_COMMANDS=ON)", file=sys.stderr)
        return 2
    try:
        findings = unused_functions(build, root, args.scope or ["host"])
    except BuildIncomplete as e:
        print(f"check-unused: skipped, the build is incomplete: {e}", file=sys.stderr)
        return 77
    for source, line, name, signature in findings:
        print(f"{shown(source, root)}:{line}: '{name}' ({signature}) is defined but no object of "
              f"the build refers to it")
    if findings:
        print(f"check-unused: {len(findings)} unused function(s): delete them, or use them",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
