#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A PNG of the top of a run's report.html (the summary and the memory maps), as headless Chromium
# draws it:
#   scripts/screenshot-report.sh DIR OUT.png [WIDTHxHEIGHT]
# DIR is what `tpuemu run -o DIR` wrote; the window is 1400x1280 unless given (taller shows the
# fragmentation curves and the engine timeline too). docs/images/memory-map-mlp.png is made with:
#   ./build/tpuemu run examples/mlp.json --preset small --allocator all -q -o mlp-shot
#   scripts/screenshot-report.sh mlp-shot docs/images/memory-map-mlp.png
set -euo pipefail
if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 DIR OUT.png [WIDTHxHEIGHT]" >&2
  exit 2
fi
dir=$1 out=$2 size=${3:-1400x1280}
[[ $size =~ ^[0-9]+x[0-9]+$ ]] || { echo "$0: window size '$size' is not WIDTHxHEIGHT" >&2; exit 2; }
[[ -f $dir/report.html ]] || { echo "$0: $dir/report.html: no such file (tpuemu run -o $dir, or tpuemu report $dir)" >&2; exit 1; }
command -v chromium >/dev/null || { echo "$0: chromium is not installed (scripts/setup.sh)" >&2; exit 1; }
page=$(realpath "$dir/report.html")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Chromium as root needs --no-sandbox; a profile of its own leaves the user's alone. The picture
# goes to a scratch file first, so that a failure leaves no partial OUT.png.
timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$scratch/profile" \
  --window-size="${size/x/,}" --screenshot="$scratch/shot.png" "file://$page" >/dev/null 2>"$scratch/log" ||
  { echo "$0: chromium failed: $(tail -1 "$scratch/log")" >&2; exit 1; }
[[ -s $scratch/shot.png ]] || { echo "$0: chromium wrote no screenshot" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
mv "$scratch/shot.png" "$out"
echo "$out"
