#!/usr/bin/env bash
# Regenerate tests/peers/cascade/*.json from ir_measures and ranx themselves, each in its own
# environment outside the repository (neither is a dependency of receval or of its tests).
#   bash tests/peers/cascade/make.sh [IRM_VENV] [RANX_VENV]   (default /tmp/peer-irm, /tmp/peer-ranx)
# ir_measures' ERR runs gdeval.pl: perl must be on PATH.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
IRM="${1:-/tmp/peer-irm}"
RANX="${2:-/tmp/peer-ranx}"
[ -x "$IRM/bin/python" ] || uv venv "$IRM" --python 3.11
uv pip install --python "$IRM/bin/python" ir-measures==0.4.3 pyndeval==0.0.8 cwl-eval==1.0.12 pytrec-eval-terrier==0.5.11
[ -x "$RANX/bin/python" ] || uv venv "$RANX" --python 3.11
uv pip install --python "$RANX/bin/python" ranx==0.3.21
cd "$HERE"
"$IRM/bin/python" run_ir_measures.py tiefree_int ties_int
PYTHONHASHSEED=0 "$RANX/bin/python" run_ranx.py tiefree tiefree_int
