#!/usr/bin/env bash
# Regenerate tests/peers/torchmetrics/fall_out_{str,int}.json from torchmetrics itself,
# in its own environment outside the repository, on the data of
# tests/peers/rectools/make_data.py. torch 2.13.0's CPU wheel comes from the local wheel
# folder that pip is configured with (uv does not look there), hence pip.
#   bash tests/peers/torchmetrics/make.sh [VENV]    (default VENV: /tmp/golden-torchmetrics)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${1:-/tmp/golden-torchmetrics}"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q torch==2.13.0 torchmetrics==1.9.0 pandas
"$VENV/bin/python" "$HERE/run_torchmetrics.py" str int
