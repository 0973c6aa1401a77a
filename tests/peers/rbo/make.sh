#!/usr/bin/env bash
# Regenerate tests/peers/rbo/cases.json from the rbo package, in its own environment.
#   bash tests/peers/rbo/make.sh [VENV]   (default /tmp/rbo-venv)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${1:-/tmp/rbo-venv}"
[ -x "$VENV/bin/python" ] || uv venv "$VENV" --python 3.11
uv pip install --python "$VENV/bin/python" "rbo==$(cat "$HERE/VERSION")" numpy
"$VENV/bin/python" "$HERE/run_rbo.py"
