"""The benchmark scripts keep working: bench.py runs receval and the polars floor on tiny
data, reads receval's JSON report and finds both agree (the timing targets are not judged
on 300 users: bench.py's exit code says only whether they were met)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bench_runs_and_checks_the_values(tmp_path: Path) -> None:
    command = [sys.executable, str(ROOT / "benchmarks" / "bench.py"), "--users", "300"]
    command += ["--tools", "receval,polars", "--repeat", "1", "--no-warm-up"]
    command += ["--data-dir", str(tmp_path)]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # no __pycache__ in the checkout
    result = subprocess.run(
        command, capture_output=True, text=True, timeout=300, check=False, env=env
    )
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    assert "failed:" not in result.stdout, result.stdout  # no tool failed to run
    assert "vs receval on 18 metrics" in result.stdout
    assert "AGREE" in result.stdout, result.stdout
