#!/usr/bin/env bash
# Microsoft Recommenders' environment for benchmarks/bench_diversity.py (--part peers),
# outside the repository.
#
#   benchmarks/peers/make_recommenders.sh      # VENV=/tmp/bench-recommenders unless given
#
# recommenders 1.2.1 pins pandas 2 and declares about 170 packages; its evaluation module
# needs only numpy, pandas and scikit-learn, so the package goes in without its declared
# dependencies and those three beside it (as tests/peers/recommenders/make.sh).
set -euo pipefail
VENV="${VENV:-/tmp/bench-recommenders}"
if [ ! -x "$VENV/bin/python" ]; then
    uv venv "$VENV" --python 3.11
fi
uv pip install --python "$VENV/bin/python" --no-deps "recommenders==1.2.1"
uv pip install --python "$VENV/bin/python" "pandas==2.3.3" "numpy==2.4.6" "scikit-learn==1.9.1"
"$VENV/bin/python" -c "import recommenders.evaluation.python_evaluation as e; print('recommenders ok')"
