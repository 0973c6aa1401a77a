#!/usr/bin/env bash
# recmetrics' numbers on the beyond-accuracy data (tests/peers/beyond_data), in a virtual
# environment of its own.
#
#   tests/peers/recmetrics/make.sh
#
# recmetrics 0.1.5 declares pandas < 2 (and jupyter, plotly, seaborn, ...); its metrics
# module needs numpy < 2 (pandas 1.5 is built against numpy 1) and its plots module, which
# `import recmetrics` loads, matplotlib < 3.9 (seaborn 0.11 uses the removed colormap
# registry). The environment lives outside the repository (VENV overrides where); receval
# is not installed in it.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${VENV:-/tmp/golden-recmetrics}"

if [ ! -x "$VENV/bin/python" ]; then
    uv venv "$VENV" --python 3.11
fi
uv pip install --python "$VENV/bin/python" "recmetrics==0.1.5" "numpy==1.26.4" \
    "matplotlib==3.8.4" "pandas==1.5.3" "scikit-learn==1.9.1" "scipy==1.17.1"

"$VENV/bin/python" "$HERE/run_recmetrics.py" "$HERE/equal.json"
