"""psp and psndcg against napkinXC 0.7.2 (napkinxc.metrics: psprecision_at_k,
psndcg_at_k), golden values made by tests/peers/napkinxc/make.py, which runs napkinXC
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
from receval_cli.metrics import MetricSpec
from receval_cli.metrics.registry import resolve

GOLDEN = json.loads((Path(__file__).parent / "golden.json").read_text())
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


def test_the_default_is_napkinxcs_per_instance_mean() -> None:
    listed = {row[0] for row in GOLDEN["predictions"]}
    judged = {row[0] for row in GOLDEN["truth"]}
    assert judged - listed  # users without a list: psP 0, their best still counts
    assert listed - judged  # a user only in the predictions: not evaluated
    got = means(GOLDEN["predictions"])
    for spec, want in napkinxc(False).items():
        assert math.isclose(got[spec], want, rel_tol=1e-12), (spec, got[spec], want)


def test_napkinxcs_normalized_value_is_the_ratio_of_the_means() -> None:
    """normalize=True: mean over the users of psP@k, over its mean on each user's best
    list (the relevant items by 1/p descending, ties as receval breaks them)."""
    weight = {item: 1.0 / p for item, p in GOLDEN["propensity"]}
    best = [[u, i, weight.get(i, 1.0)] for u, i, _ in GOLDEN["truth"]]
    found, ideal = means(GOLDEN["predictions"]), means(best)
    for spec, want in napkinxc(True).items():
        assert found[spec] / ideal[spec] == pytest.approx(want, rel=1e-12), spec


def test_normalize_dataset_is_napkinxcs_normalized_value() -> None:
    """normalize=dataset gives napkinXC's (and pyxclib's) normalised number in one run."""
    specs = [s.replace("(", "(normalize=dataset,") for s in SPECS]
    report = evaluate(
        pl.DataFrame(GOLDEN["predictions"], schema=["user", "item", "score"], orient="row"),
        pl.DataFrame(GOLDEN["truth"], schema=["user", "item", "relevance"], orient="row"),
        specs,
        catalog=catalog(),
        catalog_columns={"item": "item", "propensity": "propensity"},
        conventions={"users_without_relevant": "zero"},
    )
    for spec, (plain, want) in zip(specs, napkinxc(True).items(), strict=True):
        got = report.metrics[str(resolve(MetricSpec.parse(spec)))]
        assert got == pytest.approx(want, rel=1e-12), (spec, plain)


def test_a_ratio_of_sums_gets_no_interval_and_no_per_user_test(tmp_path: Path) -> None:
    """Its users' values (psP@k) do not average to it: the report gives it no confidence
    interval, and comparisons only its difference; a mean beside it gets both."""
    from cli_helpers import invoke, write_config

    frame = pl.DataFrame(GOLDEN["predictions"], schema=["user", "item", "score"], orient="row")
    frame.write_csv(tmp_path / "a.csv")
    frame.with_columns(score=-pl.col("score")).write_csv(tmp_path / "b.csv")
    pl.DataFrame(GOLDEN["truth"], schema=["user", "item", "relevance"], orient="row").write_csv(
        tmp_path / "truth.csv"
    )
    catalog().write_csv(tmp_path / "catalog.csv")
    ratio, mean = "psp@3(normalize=dataset,propensity=catalog)", "psp@3(propensity=catalog)"
    config = {
        "predictions": {"models": {"a": "a.csv", "b": "b.csv"}},
        "ground_truth": {"path": "truth.csv"},
        "catalog": {"path": "catalog.csv", "columns": {"propensity": "propensity"}},
        "metrics": [ratio, mean],
        "confidence": {"method": "bootstrap", "resamples": 50},
        "comparison": {"baseline": "a"},
    }
    out = tmp_path / "report.json"
    result = invoke("run", write_config(tmp_path, config), "-q", "-o", out)
    assert result.exit_code == 0, result.stderr
    report = json.loads(out.read_text())
    for model in ("a", "b"):
        assert list(report["models"][model]["confidence"]["intervals"]) == [mean]
    rows = {row["metric"]: row for row in report["comparisons"]["results"]}
    values = {m: report["models"][m]["metrics"] for m in ("a", "b")}
    assert rows[ratio]["p_value"] is None
    assert rows[ratio]["difference"] == pytest.approx(values["b"][ratio] - values["a"][ratio])
    assert rows[mean]["p_value"] is not None


def test_a_ratio_total_survives_its_json_form() -> None:
    """A bucket's ratio total goes through JSON (Spark's executors send it so)."""
    from receval_cli.evaluation.partial import MetricTotal
    from receval_cli.metrics.exact_sum import exact_sum

    total = MetricTotal(exact_sum(pl.Series([0.1, 0.2])), 2, 3, exact_sum(pl.Series([0.3])))
    assert MetricTotal.from_json(json.loads(json.dumps(total.to_json()))) == total
    plain = MetricTotal(exact_sum(pl.Series([0.5])), 1, 1)
    assert MetricTotal.from_json(json.loads(json.dumps(plain.to_json()))) == plain
    assert (plain + total).over == total.over
