#!/usr/bin/env bash
# Jurity's numbers on the shared golden data, in a virtual environment of their own.
#
#   tests/peers/jurity/make.sh
#
# Jurity 2.1.0 installs with pandas 3 but crashes when run: pin pandas 2.3. The environment
# lives outside the repository (VENV overrides where); receval is not installed in it.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${VENV:-/tmp/golden-jurity}"

if [ ! -x "$VENV/bin/python" ]; then
    uv venv "$VENV" --python 3.11
fi
uv pip install --python "$VENV/bin/python" "jurity==2.1.0" "pandas==2.3.3" "numpy==2.4.6" \
    "scikit-learn==1.9.1" "scipy==1.17.1"

# one process per dataset: Jurity memoizes get_sorted_clicks on the scores alone (NOTES.md)
for dataset in tiefree ties tiefree_int ties_int; do
    "$VENV/bin/python" "$HERE/run_jurity.py" "$dataset" "$HERE/$dataset.json"
done
"$VENV/bin/python" "$HERE/run_jurity_auc.py"
"$VENV/bin/python" "$HERE/run_jurity_ctr.py"
"$VENV/bin/python" "$HERE/run_jurity_beyond.py" "$HERE/beyond.json"
