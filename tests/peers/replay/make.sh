#!/usr/bin/env bash
# Regenerate tests/peers/replay/{tiefree,ties}{,_int}.json and beyond.json (the beyond-accuracy
# metrics on tests/peers/peer_metrics_data) from RePlay itself, in its own
# environment outside the repository (RePlay pins pandas 2 and polars 1.44, which cannot
# live beside receval's polars).
#   bash tests/peers/replay/make.sh [VENV]    (default VENV: /tmp/golden-replay)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${1:-/tmp/golden-replay}"
[ -x "$VENV/bin/python" ] || uv venv "$VENV" --python 3.11
uv pip install --python "$VENV/bin/python" replay-rec==0.22.0 pandas==2.3.3 polars==1.44.2 \
    pyarrow==23.0.1
"$VENV/bin/python" "$HERE/run_replay.py" tiefree ties tiefree_int ties_int
"$VENV/bin/python" "$HERE/run_replay_beyond.py"
