#!/usr/bin/env bash
# Regenerate tests/peers/rectools/{str,int}.json from RecTools itself, in its own
# environment outside the repository (RecTools pins pandas < 3 and numpy < 2), on the
# data of make_data.py (rerun that first only to change the data).
#   bash tests/peers/rectools/make.sh [VENV]    (default VENV: /tmp/golden-rectools)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${1:-/tmp/golden-rectools}"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q rectools==0.19.0 pandas==2.3.3
"$VENV/bin/python" "$HERE/run_rectools.py" str int
