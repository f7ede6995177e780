#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/check-layers.py must reject every layering violation of tests/data/layers-bad (with the
real layer table host/layers.txt), name each as "file:line: layer X includes layer Y (not below
it)" or "file:line: layer X opens namespace tpuemu::Y (layer Y's)", accept the includes and
namespaces there that are fine, and reject malformed tables.

Usage: check_layers_test.py <repository root>
"""

import subprocess
import sys
from pathlib import Path

BAD = "tests/data/layers-bad"
EXPECTED_VIOLATIONS = [
    f"{BAD}/src/widgets: folder of sources is not a layer of the table",
    f"{BAD}/src/config/preset_loader.cpp:4: layer config includes layer device (not below it)",
    f"{BAD}/src/plan/plan_helpers.cpp:3: layer plan includes layer run (not below it)",
    f"{BAD}/src/plan/plan_helpers.cpp:7: layer plan opens namespace tpuemu::alloc (layer alloc's)",
    f"{BAD}/include/tpuemu/layout/layout.h:4: layer layout includes layer compile (not below it)",
]
EXPECTED_TABLE_ERRORS = {
    "table-upward.txt": f"check-layers: {BAD}/table-upward.txt:3: layer config builds on device, "
                        f"which is not a layer listed above it",
    "table-redundant.txt": f"check-layers: {BAD}/table-redundant.txt:3: layer plan lists base, "
                           f"which is already below alloc",
}


def check_layers(root, *args):
    result = subprocess.run([sys.executable, str(root / "scripts/check-layers.py"), *args],
                            cwd=root, capture_output=True, text=True)
    return result.returncode, result.stderr.splitlines()


def main():
    root = Path(sys.argv[1]).resolve()
    failures = []

    code, lines = check_layers(root, "--host", BAD, "--layers", "host/layers.txt")
    if code != 1:
        failures.append(f"violating tree: exit {code}, expected 1")
    reported = [line for line in lines if not line.startswith("check-layers:")]
    if sorted(reported) != sorted(EXPECTED_VIOLATIONS):
        failures.append("violating tree: reported\n  " + "\n  ".join(reported) +
                        "\nexpected\n  " + "\n  ".join(EXPECTED_VIOLATIONS))

    for table, message in EXPECTED_TABLE_ERRORS.items():
        code, lines = check_layers(root, "--host", BAD, "--layers", f"{BAD}/{table}")
        if code != 2 or lines != [message]:
            failures.append(f"{table}: exit {code}, stderr {lines}; expected exit 2, [{message!r}]")

    for failure in failures:
        print(f"FAIL {failure}")
    if not failures:
        print(f"ok   {len(EXPECTED_VIOLATIONS)} violations and "
              f"{len(EXPECTED_TABLE_ERRORS)} malformed tables rejected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
