#!/usr/bin/env bash
# RecTools' environment for benchmarks/bench_diversity.py (--part peers), outside the
# repository.
#
#   benchmarks/peers/make_rectools.sh          # VENV=/tmp/bench-rectools unless given
set -euo pipefail
VENV="${VENV:-/tmp/bench-rectools}"
if [ ! -x "$VENV/bin/python" ]; then
    uv venv "$VENV" --python 3.11
fi
uv pip install --python "$VENV/bin/python" "rectools==0.19.0"
"$VENV/bin/python" -c "import rectools; print('rectools', rectools.__version__)"
