"""The benchmark scripts keep working: bench.py runs receval, the two polars floors and
DuckDB's SQL query on tiny data, reads receval's JSON report and finds them all agree
(the timing targets are not judged on 300 users: bench.py's exit code says only whether
they were met)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bench_runs_and_checks_the_values(tmp_path: Path) -> None:
    command = [sys.executable, str(ROOT / "benchmarks" / "bench.py"), "--users", "300"]
    command += ["--tools", "receval,polars,polars_rank,duckdb", "--repeat", "1", "--no-warm-up"]
    command += ["--data-dir", str(tmp_path)]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # no __pycache__ in the checkout
    result = subprocess.run(
        command, capture_output=True, text=True, timeout=300, check=False, env=env
    )
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    assert "failed:" not in result.stdout, result.stdout  # no tool failed to run
    for tool, shared in (("polars", 18), ("polars_rank", 18), ("duckdb", 36)):
        line = f"{tool:<12} vs receval on {shared} metrics"
        found = [row for row in result.stdout.splitlines() if line in row]
        assert len(found) == 1, result.stdout
        assert found[0].endswith("AGREE"), found[0]
