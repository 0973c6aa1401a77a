#!/usr/bin/env bash
# Regenerate tests/peers/elliot/ (data_<seed>/ and elliot.json) from Elliot's own code,
# outside the repository (Elliot is not on PyPI and is no dependency of receval):
#   bash tests/peers/elliot/make.sh [ELLIOT_SRC] [VENV]
# ELLIOT_SRC: a checkout of github.com/sisinflab/elliot (made at commit
# fc27efedaddf4a57294db14b4bcaa5553a0015d2, default /tmp/elliot-src); VENV: a virtual
# environment with numpy, pandas and scipy (default /tmp/peer-elliot).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
SRC="${1:-/tmp/elliot-src}"
VENV="${2:-/tmp/peer-elliot}"
[ -x "$VENV/bin/python" ] || uv venv "$VENV" --python 3.11
uv pip install --python "$VENV/bin/python" numpy pandas scipy
"$VENV/bin/python" "$HERE/run_elliot.py" "$SRC"
