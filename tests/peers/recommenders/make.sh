#!/usr/bin/env bash
# Microsoft Recommenders' numbers on the shared golden data, in a virtual environment of
# their own.
#
#   tests/peers/recommenders/make.sh
#
# recommenders 1.2.1 pins pandas 2 and declares about 170 packages (cornac, lightgbm,
# transformers, notebook, ...: 1.1 GB). Its evaluation module needs only numpy, pandas and
# scikit-learn, so the package goes in without its dependencies and those three beside it
# (FULL=1 installs the declared set instead; the numbers are the same). The environment
# lives outside the repository (VENV overrides where); receval is not installed in it.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${VENV:-/tmp/golden-recommenders}"

if [ ! -x "$VENV/bin/python" ]; then
    uv venv "$VENV" --python 3.11
fi
if [ "${FULL:-0}" = 1 ]; then
    uv pip install --python "$VENV/bin/python" "recommenders==1.2.1" "pandas==2.3.3" "numpy==2.4.6"
else
    uv pip install --python "$VENV/bin/python" --no-deps "recommenders==1.2.1"
    uv pip install --python "$VENV/bin/python" "pandas==2.3.3" "numpy==2.4.6" "scikit-learn==1.9.1"
fi

for dataset in tiefree ties tiefree_int ties_int; do
    "$VENV/bin/python" "$HERE/run_recommenders.py" "$dataset" "$HERE/$dataset.json"
done
"$VENV/bin/python" "$HERE/run_recommenders_beyond.py" "$HERE/beyond.json"
"$VENV/bin/python" "$HERE/run_recommenders_probability.py" "$HERE/probability.json"
"$VENV/bin/python" "$HERE/run_recommenders_cooccurrence.py" "$HERE/cooccurrence.json"
