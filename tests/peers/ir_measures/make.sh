#!/usr/bin/env bash
# Regenerate tests/peers/ir_measures/judged_*.json from ir_measures itself, in its own
# environment outside the repository (ir_measures is never a dependency of receval or of its
# tests).
#   bash tests/peers/ir_measures/make.sh [VENV]      (default VENV: /tmp/golden-ir-measures)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${1:-/tmp/golden-ir-measures}"
[ -x "$VENV/bin/python" ] || uv venv "$VENV" --python 3.11
uv pip install --python "$VENV/bin/python" ir-measures==0.4.3
"$VENV/bin/python" "$HERE/run_ir_measures.py" tiefree ties tiefree_int ties_int
