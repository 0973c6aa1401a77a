#!/usr/bin/env bash
# Regenerate tests/peers/ndeval/ndeval_golden.json from ndeval itself (pyndeval 0.0.8, through
# ir_measures' provider), in its own environment outside the repository (neither is ever a
# dependency of receval or of its tests).
#   bash tests/peers/ndeval/make.sh [VENV]      (default VENV: /tmp/ndeval)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${1:-/tmp/ndeval}"
[ -x "$VENV/bin/python" ] || uv venv "$VENV" --python 3.11
uv pip install --python "$VENV/bin/python" pyndeval==0.0.8 ir-measures==0.4.3
"$VENV/bin/python" "$HERE/make_data.py"
"$VENV/bin/python" "$HERE/run_ndeval.py"
