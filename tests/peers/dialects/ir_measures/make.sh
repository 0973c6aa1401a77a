#!/usr/bin/env bash
# Regenerate tests/peers/dialects/ir_measures/*.json from ir_measures 0.4.3 itself, in its own
# environment outside the repository (ir_measures is never a dependency of receval or its tests).
#   bash tests/peers/dialects/ir_measures/make.sh [VENV]      (default VENV: /tmp/irmvenv)
# gdeval (ERR, nDCG(dcg='exp-log2')) runs perl: perl must be on PATH. It takes numeric query
# ids only, so run_ir_measures.py runs those measures on the _int datasets only.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${1:-/tmp/irmvenv}"
[ -x "$VENV/bin/python" ] || uv venv "$VENV" --python 3.11
uv pip install --python "$VENV/bin/python" ir-measures==0.4.3 pyndeval==0.0.8 cwl-eval==1.0.12 pytrec-eval-terrier==0.5.11
cd "$HERE"
"$VENV/bin/python" run_ir_measures.py tiefree ties tiefree_int ties_int
