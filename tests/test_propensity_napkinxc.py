"""psp and psndcg against napkinXC 0.7.2 (napkinxc.metrics: psprecision_at_k,
psndcg_at_k), golden values made by tests/golden/napkinxc/make.py, which runs napkinXC
itself: with normalize=False napkinXC averages the paper's per-instance psP@k and psnDCG@k
(receval's default, normalize=none); with normalize=True it divides the dataset's sum by
the sum of the users' best values, which is receval's normalize=none mean over its mean on
the best lists (each user's relevant items by 1/p descending)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

from receval_cli.api import evaluate

GOLDEN = json.loads((Path(__file__).parent / "golden/napkinxc/golden.json").read_text())
K = GOLDEN["k"]
SPECS = [f"{name}@{k}(propensity=catalog)" for name in ("psp", "psndcg") for k in range(1, K + 1)]


def catalog() -> pl.DataFrame:
    return pl.DataFrame(GOLDEN["propensity"], schema=["item", "propensity"], orient="row")


def means(predictions: list[list[object]]) -> dict[str, float]:
    report = evaluate(
        pl.DataFrame(predictions, schema=["user", "item", "score"], orient="row"),
        pl.DataFrame(GOLDEN["truth"], schema=["user", "item", "relevance"], orient="row"),
        SPECS,
        catalog=catalog(),
        catalog_columns={"item": "item", "propensity": "propensity"},
        # napkinXC averages over the instances it is given: the users of the predictions
        conventions={"users_without_relevant": "zero"},
    )
    return report.metrics


def napkinxc(normalize: bool) -> dict[str, float]:
    values = GOLDEN["values"][f"normalize={normalize}"]
    return {
        f"{name}@{k}(propensity=catalog)": values[name][k - 1]
        for name in ("psp", "psndcg")
        for k in range(1, K + 1)
    }


def users_in_both() -> set[object]:
    return {row[0] for row in GOLDEN["predictions"]} & {row[0] for row in GOLDEN["truth"]}


def test_the_default_is_napkinxcs_per_instance_mean() -> None:
    assert users_in_both() == {row[0] for row in GOLDEN["predictions"]}
    got = means(GOLDEN["predictions"])
    for spec, want in napkinxc(False).items():
        assert math.isclose(got[spec], want, rel_tol=1e-12), (spec, got[spec], want)


def test_napkinxcs_normalized_value_is_the_ratio_of_the_means() -> None:
    """normalize=True: mean over the users of psP@k, over its mean on each user's best
    list (the relevant items by 1/p descending, ties as receval breaks them)."""
    weight = {item: 1.0 / p for item, p in GOLDEN["propensity"]}
    best = [[u, i, weight.get(i, 1.0)] for u, i, _ in GOLDEN["truth"] if u in users_in_both()]
    found, ideal = means(GOLDEN["predictions"]), means(best)
    for spec, want in napkinxc(True).items():
        assert found[spec] / ideal[spec] == pytest.approx(want, rel=1e-12), spec
