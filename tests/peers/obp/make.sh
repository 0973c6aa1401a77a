#!/usr/bin/env bash
# obp's (Open Bandit Pipeline) off-policy estimates on the shared golden data, in a virtual
# environment of their own.
#
#   tests/peers/obp/make.sh
#
# obp 0.5.7 (the newest) declares Python >=3.8,<3.11 and hard-pins numpy 1.23.5, pandas 1.5.2,
# scikit-learn 1.1.3, scipy 1.9.3 and torch 1.12 (obp.ope imports torch through obp.utils); on
# Python 3.11 the resolver falls back to obp 0.5.5, whose PyYAML 5.4.1 pin does not build. So
# Python 3.9. seaborn 0.11.2 (obp's pin) does not import with matplotlib 3.9 (register_cmap
# is gone): pin matplotlib 3.8.4. PYTHON picks the interpreter (default: pyenv's 3.9 when
# there is one, else "3.9" for uv to find); the environment lives outside the repository (VENV
# overrides where); receval is not installed in it.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${VENV:-/tmp/golden-obp}"
if [ -z "${PYTHON:-}" ]; then
    PYTHON=3.9
    if command -v pyenv >/dev/null && prefix="$(pyenv prefix 3.9.18 2>/dev/null)"; then
        PYTHON="$prefix/bin/python3.9"
    fi
fi

if [ ! -x "$VENV/bin/python" ]; then
    uv venv "$VENV" --python "$PYTHON"
fi
uv pip install --python "$VENV/bin/python" "obp==0.5.7" "numpy==1.23.5" "scipy==1.9.3" \
    "scikit-learn==1.1.3" "pandas==1.5.2" "torch==1.12.0" "seaborn==0.11.2" \
    "matplotlib==3.8.4"

"$VENV/bin/python" "$HERE/run_obp.py"
