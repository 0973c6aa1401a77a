#!/usr/bin/env bash
# Regenerate tests/peers/dialects/ranx/{tiefree,ties,tiefree_int,ties_int}.json from ranx
# itself, in its own environment outside the repository (ranx is never a dependency of receval).
#   bash tests/peers/dialects/ranx/make.sh [VENV]     (default VENV: /tmp/golden-ranx-dialects)
# Any VENV with exactly ranx 0.3.21, numba 0.68.1, numpy 2.4.6 gives the same files.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${1:-/tmp/golden-ranx-dialects}"
[ -x "$VENV/bin/python" ] || uv venv "$VENV" --python 3.11
# numba is pinned too: ranx's order of tied scores comes from numba's argsort.
uv pip install --python "$VENV/bin/python" ranx==0.3.21 numba==0.68.1 numpy==2.4.6
# ranx hashes item ids with Python's string hash: fix it so reruns are identical.
# run_ranx.py itself sets NUMBA_NUM_THREADS=1 (ranx's bpref depends on the thread count).
# ranx's numba functions use cache=True: keep their cache out of the venv's site-packages.
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/golden-ranx-dialects-numba-cache}"
PYTHONHASHSEED=0 "$VENV/bin/python" "$HERE/run_ranx.py" tiefree ties tiefree_int ties_int
