"""The polars engines give the same report, to the last bit; gpu fails loudly."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import assert_user_error, invoke, run_json

from receval_cli import engines

ROOT = Path(__file__).parent.parent


@pytest.mark.parametrize("config", ["quickstart", "beyond", "ratings", "ctr"])
def test_streaming_equals_in_memory(config: str) -> None:
    path = ROOT / "configs" / f"{config}.yaml"
    in_memory = run_json(path, "--engine", "in_memory")
    streaming = run_json(path, "--engine", "streaming")
    assert streaming["metrics"] == in_memory["metrics"]
    assert streaming["users"] == in_memory["users"]


def test_auto_streams_from_the_threshold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small = tmp_path / "p.csv"
    small.write_text("user,item,score\n1,a,0.5\n", encoding="utf-8")
    assert engines.polars_engine("auto", [small]) == "in-memory"
    monkeypatch.setattr(engines, "STREAMING_FROM", small.stat().st_size)
    assert engines.polars_engine("auto", [small]) == "streaming"


def test_gpu_fails_loudly_without_its_engine() -> None:
    result = invoke("run", ROOT / "configs" / "quickstart.yaml", "--engine", "gpu")
    assert_user_error(result, "engine: gpu needs polars' GPU engine", "cudf-polars")
