#!/usr/bin/env bash
# Builds pyxclib (kunaldahiya/pyxclib at the commit below) in its own venv under /tmp and
# runs run_pyxclib.py, which writes this folder's inputs and golden.json. Needs network
# access (pip, git) and a C compiler; the tests read only the files written here.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
COMMIT=5d130862df91a06d03b296ad264c89b037c33db7
VENV=/tmp/golden-pyxclib
SRC=/tmp/golden-pyxclib-src
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q numpy scipy numba scikit-learn six cython setuptools
fi
if [ ! -d "$SRC" ]; then
  git clone -q https://github.com/kunaldahiya/pyxclib "$SRC"
  git -C "$SRC" checkout -q "$COMMIT"
  # only the Cython extension (xclib.utils._sparse) is built; setup.py's install_requires
  # (nmslib, fasttext) are not needed by xclib.evaluation
  (cd "$SRC" && "$VENV/bin/python" setup.py build_ext --inplace -q)
fi
PYTHONPATH="$SRC" "$VENV/bin/python" "$HERE/run_pyxclib.py"
