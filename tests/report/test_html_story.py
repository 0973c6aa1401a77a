"""The HTML report's summary and story: what the page says first, checked
against the JSON report of the same run and numbers computed here."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import PREDICTIONS_CSV, hand_case, invoke, write

pytestmark = pytest.mark.slow  # left out of `uv run pytest`; .ci/run runs it

ROOT = Path(__file__).parents[2]
WORSE = "user,item,score\nu1,c,0.9\nu1,a,0.8\nu1,b,0.7\nu2,e,0.9\nu2,d,0.5\n"
REPRODUCIBLE: dict[str, str | None] = {"SOURCE_DATE_EPOCH": "1764000000"}


def page_and_report(
    config: Path, *args: str | Path, expect: int = 0, env: dict[str, str | None] | None = None
) -> tuple[str, dict[str, Any]]:
    """The run's page and JSON report (two runs; SOURCE_DATE_EPOCH unless `env`)."""
    env = REPRODUCIBLE if env is None else env
    page = invoke("run", config, "-f", "html", *args, env=env)
    report = invoke("run", config, "-f", "json", *args, env=env)
    assert page.exit_code == expect, page.stderr
    assert report.exit_code == expect, report.stderr
    return page.stdout, json.loads(report.stdout)


def summary(page: str) -> str:
    found = re.search(r'<section id="summary">(.*?)</section>', page, re.S)
    assert found, "the page has no summary"
    return found.group(1)


def text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def test_the_summary_names_the_best_model_and_the_largest_differences() -> None:
    """compare.yaml (accuracy metrics only): the model best on the most metrics, and the
    three strongest differences from the baseline: significant first, then the most
    half-widths of their interval (tests/report/test_html_scales.py: several kinds of metric)."""
    page, report = page_and_report(ROOT / "configs" / "compare.yaml")
    shown = summary(page)
    counts = dict.fromkeys(report["models"], 0)
    for winners in report["best"].values():
        if len(winners) == 1:  # a tie is named apart
            counts[winners[0]] += 1
    leader = max(counts, key=lambda name: counts[name])
    assert (
        f"Best on accuracy: {leader}, on {counts[leader]} of {len(report['best'])} "
        "accuracy metrics" in text(shown)
    )
    results = report["comparisons"]["results"]

    def strength(r: dict[str, Any]) -> tuple[bool, float]:
        half = (r["high"] - r["low"]) / 2
        return r["verdict"] not in ("win", "loss"), -abs(r["difference"]) / half

    ranked = sorted(results, key=strength)[:3]
    lines = re.findall(r"<li>(model: <code>[^<]+</code>.*?)</li>", shown)
    assert [re.search(r"<code>([^<]+)</code>", line).group(1) for line in lines] == [  # type: ignore[union-attr]
        r["metric"] for r in ranked
    ]
    first = text(lines[0])
    top = ranked[0]
    assert f"{top['value']:.4f} against {top['baseline']:.4f}" in first
    assert f"{top['difference']:+.4f}, {top['difference'] / abs(top['baseline']):+.1%}" in first
    half = (top["high"] - top["low"]) / 2
    assert f"{abs(top['difference']) / half:.1f} half-widths of its interval" in first
    assert "significant" in first


def test_the_summary_lists_each_failed_gate_with_its_margin(tmp_path: Path) -> None:
    config = hand_case(tmp_path, gates={"ndcg@2": {"min": 0.9}, "precision@1": {"max": 0.2}})
    page, report = page_and_report(config, expect=1)
    shown = text(summary(page))
    assert "2 of 2 gates failed" in shown
    for gate in report["gates"]["results"]:
        assert f"FAILED by {abs(gate['margin']):.6g}" in shown


def test_the_summary_shows_the_changes_against_the_history(tmp_path: Path) -> None:
    config = hand_case(tmp_path)
    store = tmp_path / "history"
    first, _ = page_and_report(config, "--history", store, env={})
    assert "no past run to compare with yet" in text(summary(first))
    write(tmp_path / "predictions.csv", WORSE)
    invoke("run", config, "-q", "--history", store)  # the store's second run
    write(tmp_path / "predictions.csv", PREDICTIONS_CSV)
    page, report = page_and_report(config, "--history", store, env={})
    history = report["history"]
    # the store before this JSON run: two runs of the hand case (page and JSON), WORSE,
    # and this call's page run
    assert history["past_runs"] == 4
    series = {s["metric"]: s for s in history["series"]}
    precision = series["precision@1"]
    # precision@1 in those runs: 0.5, 0.5, 0.0, 0.5: the median 0.5
    assert precision["previous"] == 0.5
    assert precision["median"] == 0.5
    assert precision["change_median"] == 0.0
    shown = text(summary(page))
    assert "Largest changes against the history" not in shown  # nothing moved
    write(tmp_path / "predictions.csv", WORSE)
    page, report = page_and_report(config, "--history", store, env={})
    shown = text(summary(page))
    assert "Largest changes against the history" in shown
    assert "precision@1 0.0000 against 0.5000 (the median of the last 5 runs): -0.5000" in shown


@pytest.mark.parametrize("name", ["quickstart", "compare", "segments"])
def test_every_unit_metric_is_drawn_on_zero_to_one(name: str) -> None:
    """The bars and small multiples: values in [0, 1] on an axis from 0 to 1 (matplotlib
    writes the limits' ticks); anything else states its span. The cutoff curves fit
    their values and state the span (tests/report/test_html_scales.py)."""
    page, _ = page_and_report(ROOT / "configs" / f"{name}.yaml")
    for kind in ("curve", "bars", "segment"):
        for body in re.findall(rf'data-kind="{kind}".*?</figure>', page, re.S):
            assert "axis " not in body or re.search(r"\(axis [-\d.e]+ to [-\d.e]+\)", body)
            if "axis " not in body:
                assert ">1.0<" in body.replace(" ", "")


SAMPLE = ROOT / "sample_data"


def _report(config: Path, **changes: Any) -> Any:
    from receval_cli.analysis.runs import evaluate_config
    from receval_cli.config.loading import load_config

    loaded = load_config(config)
    if changes:
        import dataclasses

        loaded = dataclasses.replace(loaded, config=loaded.config.model_copy(update=changes))
    return evaluate_config(loaded).models["model"]


@pytest.mark.parametrize("changes", [{}, {"partitions": 3}, {"engine": "streaming"}])
def test_the_calibration_table_counts_every_scored_pair(changes: dict[str, Any]) -> None:
    """ratings.yaml: the (predicted, actual) counts against plain polars over the sample
    files (every rated pair is predicted; unrated predictions are ignored)."""
    import polars as pl

    report = _report(ROOT / "configs" / "ratings.yaml", **changes)
    predictions = pl.read_csv(SAMPLE / "rating_predictions.csv")
    truth = pl.read_parquet(SAMPLE / "ground_truth.parquet")
    expected = (
        predictions.join(truth, on=["user_id", "item_id"], how="inner")
        .group_by(
            predicted=pl.col("predicted_rating").cast(pl.Float64).round_sig_figs(3),
            actual=pl.col("rating").cast(pl.Float64).round_sig_figs(3),
        )
        .agg(pairs=pl.len().cast(pl.Int64))
        .sort("predicted", "actual")
    )
    assert report.calibration.equals(expected)
    assert report.calibration["pairs"].sum() == report.pairs["used"]


def test_the_weights_table_counts_the_matched_recommendations() -> None:
    import polars as pl

    report = _report(ROOT / "configs" / "ctr.yaml")
    log = pl.read_csv(SAMPLE / "logged_clicks.csv")
    recommended = pl.read_csv(SAMPLE / "click_predictions.csv")
    matched = recommended.join(log, on=["user_id", "item_id"], how="inner")
    expected = (
        matched.group_by(weight=(1 / pl.col("propensity")).round_sig_figs(3))
        .agg(recommendations=pl.len().cast(pl.Int64))
        .sort("weight")
    )
    assert report.weights.equals(expected)
    assert report.weights["recommendations"].sum() == report.logged["matched"]


@pytest.mark.parametrize("changes", [{}, {"partitions": 3}])
def test_the_popularity_groups_split_the_log(changes: dict[str, Any]) -> None:
    """beyond.yaml: ten groups of 12 of the log's 120 items; each group's log rows are
    the sum of the next 12 largest item counts (whatever the ties), and the groups hold
    every recommended slot of the top-10 lists."""
    import polars as pl

    report = _report(ROOT / "configs" / "beyond.yaml", **changes)
    bias = report.popularity_bias
    counts = sorted(
        pl.read_csv(SAMPLE / "interactions.csv").group_by("item_id").len()["len"].to_list(),
        reverse=True,
    )
    assert len(counts) == 120
    assert bias["group"].to_list() == list(range(1, 11))
    assert bias["items"].to_list() == [12] * 10
    assert bias["log_rows"].to_list() == [sum(counts[i : i + 12]) for i in range(0, 120, 12)]
    lists = pl.read_csv(SAMPLE / "predictions.csv").group_by("user_id").len()
    assert (
        bias["recommendations"].sum()
        == lists.select(pl.col("len").clip(upper_bound=10)).sum().item()
    )


@pytest.mark.parametrize(
    ("name", "kinds"),
    [
        ("ratings", {"calibration", "residuals"}),
        ("ctr", {"weights"}),
        ("beyond", {"popularity", "long_tail", "lorenz"}),
    ],
)
def test_the_story_figures_are_drawn(name: str, kinds: set[str], tmp_path: Path) -> None:
    page, _ = page_and_report(ROOT / "configs" / f"{name}.yaml")
    drawn = set(re.findall(r'<figure class="plot" data-kind="(\w+)"', page))
    assert kinds <= drawn
    from html_pages import CHROMIUM, render_in_chromium

    if CHROMIUM is not None:
        path = write(tmp_path / f"{name}.html", page)
        assert render_in_chromium(path, tmp_path / f"{name}.png", tmp_path / "profile") == []


def test_spark_counts_the_same_calibration_table(spark_installed: None) -> None:
    expected = _report(ROOT / "configs" / "ratings.yaml").calibration
    assert _report(ROOT / "configs" / "ratings.yaml", engine="spark").calibration.equals(expected)
