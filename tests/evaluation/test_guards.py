"""A metric value outside its documented range, or NaN, is an internal error (exit 3) that
names the metric; it is never printed or written as a result.

The bug is simulated by narrowing a metric's documented range in the registry (the value
itself is right), or by making the averaging step return NaN.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import PRECISION_1, assert_no_traceback, hand_case, invoke

from receval_cli.errors import InternalError
from receval_cli.evaluation import assembly
from receval_cli.metrics.registry import REGISTRY


def _narrow(monkeypatch: pytest.MonkeyPatch, name: str, upper: float) -> None:
    monkeypatch.setitem(REGISTRY, name, dataclasses.replace(REGISTRY[name], upper_bound=upper))


@pytest.mark.parametrize("extra", [{}, {"partitions": 2}], ids=["one pass", "partitions"])
def test_a_value_above_its_range_is_an_internal_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: dict[str, Any]
) -> None:
    _narrow(monkeypatch, "precision", 0.25)  # precision@1 is 0.5 on the hand case
    out = tmp_path / "report.json"
    result = invoke("run", hand_case(tmp_path, **extra), "--output", out)
    assert result.exit_code == 3
    assert_no_traceback(result)
    assert result.stdout == ""
    assert result.stderr == (
        f"error: internal error: precision@1 = {PRECISION_1}, outside its range [0.0, 0.25]. "
        "This is a bug in receval; please report it with the config and a data sample.\n"
    )
    assert not out.exists()


def test_nan_is_an_internal_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = assembly._means

    def with_nan(*args: Any) -> dict[str, float]:
        return {**real(*args), "ndcg@2": math.nan}

    monkeypatch.setattr(assembly, "_means", with_nan)
    result = invoke("run", hand_case(tmp_path), "--format", "json")
    assert result.exit_code == 3
    assert result.stdout == ""
    assert result.stderr.startswith("error: internal error: ndcg@2 = nan, outside its range")


def test_a_value_below_its_range_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the Python API: the error is a RecEvalError with exit code 3."""
    import receval_cli

    definition = REGISTRY["mrr"]
    monkeypatch.setitem(REGISTRY, "mrr", dataclasses.replace(definition, lower_bound=0.9))
    predictions = pl.DataFrame({"user": [1, 1], "item": [10, 11], "score": [0.9, 0.8]})
    truth = pl.DataFrame({"user": [1], "item": [11]})
    with pytest.raises(InternalError, match=r"mrr = 0.5, outside its range \[0.9, 1.0\]"):
        receval_cli.evaluate(predictions, truth, metrics=["mrr"])
    assert InternalError.exit_code == 3
