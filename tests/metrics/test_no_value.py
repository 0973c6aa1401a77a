"""A metric with no value is null, never 0: auc and gauc with one class of
pairs, r2 beyond float64's range. The value is null in every output, the run warns, a gate
on it fails saying why, and comparisons and the best model leave it out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import invoke, write, write_config

import receval_cli


def one_class(folder: Path, extra: dict[str, Any] | None = None) -> Path:
    """Every scored pair is clicked (relevance 1): no AUC. ndcg@2 has a value."""
    write(folder / "p.csv", "user,item,score\n9,10,0.9\n9,100,0.4\n10,9,0.7\n")
    write(folder / "t.csv", "user,item,relevance\n9,10,1\n9,100,1\n10,9,1\n")
    config = {
        "predictions": {"path": "p.csv"},
        "ground_truth": {"path": "t.csv"},
        "metrics": ["auc", "auc@1", "gauc", "ndcg@2"],
        **(extra or {}),
    }
    return write_config(folder, config)


def test_json_has_null_and_a_warning(tmp_path: Path) -> None:
    result = invoke("run", one_class(tmp_path), "--format", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    metrics = report["models"]["model"]["metrics"]
    assert metrics["auc"] is None
    assert metrics["auc@1"] is None
    assert metrics["gauc"] is None
    assert metrics["ndcg@2"] == 1.0
    assert report["best"]["auc"] == []  # no value: no best
    assert report["best"]["ndcg@2"] == ["model"]
    warned = [w for w in report["warnings"] if "has no value" in w]
    assert [w.split(" ")[0] for w in warned] == ["auc", "auc@1", "gauc"]
    assert "all clicked or all unclicked" in warned[0]
    assert "relevance_threshold" in warned[0]
    assert warned[0].endswith("A gate on it fails.")


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "junit", "github", "html"])
def test_every_format_shows_no_value(fmt: str, tmp_path: Path) -> None:
    out = tmp_path / f"report.{fmt}"
    result = invoke("run", one_class(tmp_path), "--format", fmt, "--output", out)
    assert result.exit_code == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    assert "0.0000" not in text.split("ndcg@2")[0]  # no zero stands in for the null auc
    if fmt in ("table", "markdown"):
        assert "null" in text
    if fmt == "csv":
        rows = list(pl.read_csv(out).iter_rows(named=True))
        auc = next(r for r in rows if r["metric"] == "auc")
        assert auc["value"] is None


def test_a_gate_on_no_value_fails_clearly(tmp_path: Path) -> None:
    config = one_class(tmp_path, {"gates": {"auc": {"min": 0.5}, "ndcg@2": {"min": 0.5}}})
    result = invoke("run", config, "--quiet")
    assert result.exit_code == 1
    assert "auc has no value (null" in result.stderr
    assert "required >= 0.5: FAILED, a gate needs a value" in result.stderr
    assert "ndcg@2" not in result.stderr  # that gate passed
    report = json.loads(invoke("run", config, "--format", "json").stdout)
    gate = next(g for g in report["gates"]["results"] if g["metric"] == "auc")
    assert gate["value"] is None
    assert gate["margin"] is None
    assert gate["passed"] is False


def test_a_max_gate_on_no_value_fails_too(tmp_path: Path) -> None:
    config = one_class(tmp_path, {"gates": {"gauc": {"max": 0.99}}})
    assert invoke("run", config).exit_code == 1


def test_compare_and_baseline_report_leave_no_value_out(tmp_path: Path) -> None:
    """A saved report with a null auc reads back; the comparison of a null has no
    difference, and a relative gate on it fails."""
    config = one_class(tmp_path)
    saved = tmp_path / "saved.json"
    assert invoke("run", config, "--format", "json", "--output", saved).exit_code == 0
    compared = invoke("compare", saved, saved, "--format", "json")
    assert compared.exit_code == 0, compared.stderr
    gated = one_class(tmp_path, {"gates": {"auc": {"max_drop": 0.1}}})
    result = invoke("run", gated, "--baseline-report", saved, "--format", "json")
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    rows = report["comparisons"]["results"]
    auc = next(r for r in rows if r["metric"] == "auc")
    assert auc["value"] is None
    assert auc["baseline"] is None
    assert auc["difference"] is None
    ndcg = next(r for r in rows if r["metric"] == "ndcg@2")
    assert ndcg["difference"] == 0.0
    gate = next(g for g in report["gates"]["results"] if g["metric"] == "auc")
    assert gate["passed"] is False
    assert gate["value"] is None


def test_two_models_best_skips_no_value(tmp_path: Path) -> None:
    write(tmp_path / "a.csv", "user,item,score\nu,a,0.9\nu,b,0.1\n")
    write(tmp_path / "b.csv", "user,item,score\nu,a,0.9\n")
    write(tmp_path / "t.csv", "user,item,relevance\nu,a,1\nu,b,0\n")
    config = write_config(
        tmp_path,
        {
            "predictions": {"models": {"A": "a.csv", "B": "b.csv"}},
            "ground_truth": {"path": "t.csv"},
            "conventions": {"unpredicted": "ignore"},
            "metrics": ["auc"],
        },
    )
    result = invoke("run", config, "--format", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["models"]["A"]["metrics"]["auc"] == 1.0
    assert report["models"]["B"]["metrics"]["auc"] is None  # only the clicked pair
    assert report["best"]["auc"] == ["A"]
    assert any(w.startswith("model B: auc has no value") for w in report["warnings"])
    table = invoke("run", config)
    assert table.exit_code == 0
    assert "null" in table.stdout


def test_r2_of_nearly_constant_ratings() -> None:
    """Ratings equal: r2 is 0 exactly, however small they are (each square is held exactly;
    1e-148 gave -inf and a false overflow error); ratings 0 and 1e-167: R^2 is below
    -1.8e308, so there is no value."""
    predictions = pl.DataFrame({"user": ["u", "u"], "item": ["a", "b"], "score": [1.0, 0.5]})
    tiny = pl.DataFrame({"user": ["u", "u"], "item": ["a", "b"], "rel": [1.2e-148, 1.2e-148]})
    report = receval_cli.evaluate(predictions, tiny, ["r2"], truth_columns={"relevance": "rel"})
    assert report.metrics["r2"] == 0.0
    spread = tiny.with_columns(rel=pl.Series([0.0, 1e-167]))
    report = receval_cli.evaluate(predictions, spread, ["r2"], truth_columns={"relevance": "rel"})
    assert report.metrics["r2"] is None
    assert report.warnings[0].startswith("r2 has no value (null): the actual ratings vary")


def test_r2_is_exact_on_values_one_ulp_apart() -> None:
    """r = (1, 1 + 2^-52), p = (0.5, 0.5): SS_tot = 2^-105 exactly, SS_res = 0.25 +
    (0.5 + 2^-52)^2, so R^2 = 1 - SS_res * 2^105 (scikit-learn's rounded mean halves it)."""
    from fractions import Fraction

    ulp = 2.0**-52
    predictions = pl.DataFrame({"user": ["u", "u"], "item": ["a", "b"], "score": [0.5, 0.5]})
    truth = pl.DataFrame({"user": ["u", "u"], "item": ["a", "b"], "rel": [1.0, 1.0 + ulp]})
    report = receval_cli.evaluate(predictions, truth, ["r2"], truth_columns={"relevance": "rel"})
    residual = Fraction(1, 4) + (Fraction(1, 2) + Fraction(ulp)) ** 2
    assert report.metrics["r2"] == float(1 - residual / Fraction(2) ** -105)
