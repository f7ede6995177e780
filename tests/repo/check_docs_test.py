#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/check-docs.py, run on the docs and sources of tests/data/docs-bad against the real
repository, reports exactly the findings listed here (each stale path, tracker reference and
reference outside the repository, each option a tpuemu command does not have (by the --help of
tests/data/docs-bad/tpuemu, a stand-in for the binary), each reference to a section a doc does not
have, and where a layer table differs from host/layers.txt; one line each) and exits 1; the good
tokens of the same files are not reported. On a tree whose README's layout table misses folders,
it names each.

Usage: check_docs_test.py <repository root>
"""
import subprocess
import sys
import tempfile
from pathlib import Path

BAD = "tests/data/docs-bad"
FILES = [f"{BAD}/README.md", f"{BAD}/docs/page.md", f"{BAD}/sample.cpp", f"{BAD}/sample.sh"]
EXPECTED = [
    f"{BAD}/docs/page.md:6: 'host/include/tpuemu/alloc/planner.h': no such file or folder",
    f"{BAD}/docs/page.md:6: 'docs/allocators.md': no such file or folder",
    f"{BAD}/docs/page.md:7: 'sim/src/hbm_bridge.*': no such file or folder",
    f"{BAD}/docs/page.md:7: 'sim/src/core_{{small,nosuch}}.cpp': no such file or folder",
    f"{BAD}/docs/page.md:8: 'planner.md': link to a file that does not exist",
    f"{BAD}/docs/page.md:8: '../docs/nowhere.md#section': link to a file that does not exist",
    f"{BAD}/docs/page.md:9: 'tpuemu/alloc/planner.h': no file has this include path",
    f"{BAD}/docs/page.md:9: 'hbm_trace.cpp': no file of this name",
    f"{BAD}/docs/page.md:10: 'issue 12': a tracker reference (say the decision itself)",
    f"{BAD}/docs/page.md:11: '/work/': a file outside the repository",
    f"{BAD}/docs/page.md:15: 'examples/nosuch.json': no such file or folder",
    f"{BAD}/docs/page.md:18: 'tpuemu run --no-such-option': no such option (tpuemu run --help)",
    f"{BAD}/docs/page.md:18: 'tpuemu plan --nope': no such option (tpuemu plan --help)",
    f"{BAD}/docs/page.md:19: 'docs/hbm.md, \"No such heading\"': no such section (heading or bold "
    f"lead)",
    f"{BAD}/docs/page.md:19: '../../../../docs/hlo.md#no-such-anchor': no such heading",
    f"{BAD}/docs/page.md:21: the layer table lists base, config; host/layers.txt has "
    + ", ".join(line.split(":")[0] for line in open(Path(sys.argv[1]) / "host/layers.txt")
                if line.strip() and not line.startswith("#")) + " (in this order)",
    f"{BAD}/docs/page.md:24: layer 'config' builds on layout in the table, on base in "
    f"host/layers.txt",
    f"{BAD}/sample.cpp:3: 'docs/planner.md': no such file or folder",
    f"{BAD}/sample.cpp:3: 'tpuemu/alloc/planner.h': no file has this include path",
    f"{BAD}/sample.cpp:4: 'issue 9': a tracker reference (say the decision itself)",
    f"{BAD}/sample.cpp:5: 'design.md': a file outside the repository",
    f"{BAD}/sample.sh:1: 'Issues 9': a tracker reference (say the decision itself)",
    f"{BAD}/sample.sh:2: '../shared': a file outside the repository",
    f"{BAD}/sample.sh:3: 'docs/sharding.md, \"Execution\"': no such section (heading or bold lead)",
    f"{BAD}/sample.sh:3: 'tpuemu plan --nope': no such option (tpuemu plan --help)",
]


def main():
    root = Path(sys.argv[1]).resolve()
    run = subprocess.run([sys.executable, str(root / "scripts/check-docs.py"), "--root", str(root),
                          "--tpuemu", str(root / BAD / "tpuemu"), *FILES], cwd=root,
                         capture_output=True, text=True)
    reported = [line for line in run.stdout.splitlines() if not line.startswith("check-docs:")]
    failures = []
    if run.returncode != 1:
        failures.append(f"exit {run.returncode}, expected 1 (stderr: {run.stderr.strip()})")
    if reported != EXPECTED:
        missing = [line for line in EXPECTED if line not in reported]
        extra = [line for line in reported if line not in EXPECTED]
        failures.append("findings differ\n  missing:\n    " + "\n    ".join(missing) +
                        "\n  unexpected:\n    " + "\n    ".join(extra))
    # The layout table: a tree with folders a/ (named), b/ (not), tests/x/ (not), c/d/ (a CMake
    # subproject, named relative to c/) and c/e/ (not one: no CMakeLists.txt).
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        for d in ["a", "b", "tests/x", "c/d", "c/e", "docs"]:
            (t / d).mkdir(parents=True)
        (t / "c/d/CMakeLists.txt").write_text("")
        (t / "README.md").write_text("# t\n\n## Layout\n\n| `a/` | a |\n| `c/` | `d/` |\n"
                                     "| `docs/` | |\n| `tests/` | |\n\n## Next\n`b/`\n")
        run = subprocess.run([sys.executable, str(root / "scripts/check-docs.py"), str(t)],
                             capture_output=True, text=True)
        expected = ["README.md:3: the layout table does not name 'b/'",
                    "README.md:3: the layout table does not name 'tests/x/'"]
        got = [line for line in run.stdout.splitlines() if not line.startswith("check-docs:")]
        if run.returncode != 1 or got != expected:
            failures.append(f"layout: exit {run.returncode}, reported {got}, expected {expected}")
    for failure in failures:
        print(f"FAIL {failure}")
    if not failures:
        print(f"ok   {len(EXPECTED)} findings in {len(FILES)} files, nothing else; the layout "
              f"table's missing folders")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
