#!/usr/bin/env bash
# Regenerate tests/peers/ranx/{tiefree,ties}{,_int}.json from ranx itself, in its own environment
# outside the repository (ranx is never a dependency of receval or of its tests).
#   bash tests/peers/ranx/make.sh [VENV]      (default VENV: /tmp/golden-ranx)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${1:-/tmp/golden-ranx}"
[ -x "$VENV/bin/python" ] || uv venv "$VENV" --python 3.11
# numba is pinned too: ranx's order of tied scores comes from numba's argsort.
uv pip install --python "$VENV/bin/python" ranx==0.3.21 numba==0.68.1 numpy==2.4.6
# ranx hashes item ids with Python's string hash: fix it so reruns are identical.
PYTHONHASHSEED=0 "$VENV/bin/python" "$HERE/run_ranx.py" tiefree ties tiefree_int ties_int
