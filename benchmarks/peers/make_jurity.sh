#!/usr/bin/env bash
# Jurity's environment for benchmarks/bench_diversity.py (--part peers), outside the repository.
#
#   benchmarks/peers/make_jurity.sh            # VENV=/tmp/bench-jurity unless given
#
# Jurity 2.1.0 installs with pandas 3 but crashes when run: pin pandas 2.3 (the versions of
# tests/peers/jurity/make.sh). receval is not installed in it.
set -euo pipefail
VENV="${VENV:-/tmp/bench-jurity}"
if [ ! -x "$VENV/bin/python" ]; then
    uv venv "$VENV" --python 3.11
fi
uv pip install --python "$VENV/bin/python" "jurity==2.1.0" "pandas==2.3.3" "numpy==2.4.6" \
    "scikit-learn==1.9.1" "scipy==1.17.1"
"$VENV/bin/python" -c "import importlib.metadata as m, jurity.recommenders; print('jurity', m.version('jurity'))"
