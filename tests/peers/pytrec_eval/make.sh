#!/usr/bin/env bash
# Regenerate tests/peers/pytrec_eval/points.json from pytrec_eval itself, in its own
# environment outside the repository.
#   bash tests/peers/pytrec_eval/make.sh [VENV]      (default VENV: /tmp/golden-pytrec)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${1:-/tmp/golden-pytrec}"
[ -x "$VENV/bin/python" ] || uv venv "$VENV" --python 3.11
uv pip install --python "$VENV/bin/python" pytrec-eval-terrier==0.5.11
"$VENV/bin/python" "$HERE/make_points.py"
