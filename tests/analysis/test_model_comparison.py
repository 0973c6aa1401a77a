"""Several models, confidence intervals, paired comparisons, relative gates and the
pipeline outputs (markdown, csv, junit, several --output files, --per-user)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from cli_helpers import assert_user_error, invoke, run_json, write
from markdown_it import MarkdownIt
from model_comparisons import (
    METRICS,
    SAMPLE,
    SCHEMA,
    holm_by_hand,
    paired,
    per_user,
    single,
    stats,
    two_models,
    xmlschema,
)


def test_each_model_equals_its_own_run(tmp_path: Path) -> None:
    both = run_json(two_models(tmp_path))
    assert set(both["models"]) == {"popular", "model"}
    for name, file in (("popular", "popular_predictions.csv"), ("model", "predictions.csv")):
        alone = run_json(single(tmp_path, file))
        assert both["models"][name]["metrics"] == alone["models"]["model"]["metrics"]
        assert both["models"][name]["users"] == alone["models"]["model"]["users"]
    assert both["best"] == {m: ["model"] for m in METRICS}
    assert "metrics" not in both  # the several-model report nests them


def test_a_list_of_models_is_named_by_file_stem(tmp_path: Path) -> None:
    config = two_models(tmp_path)
    text = config.read_text(encoding="utf-8")
    listed = text.replace("popular: ", "- ").replace("model: ", "- ")
    config.write_text(listed, encoding="utf-8")
    report = run_json(config)
    assert list(report["models"]) == ["popular_predictions", "predictions"]


def test_two_models_with_one_name(tmp_path: Path) -> None:
    config = two_models(tmp_path)
    text = config.read_text(encoding="utf-8")
    text = text.replace("popular: ", "- ").replace("model: ", "- ")
    text = text.replace("popular_predictions.csv", "predictions.csv")
    config.write_text(text, encoding="utf-8")
    assert_user_error(invoke("run", config), "two models are named 'predictions'")


def test_unknown_baseline_model(tmp_path: Path) -> None:
    config = two_models(tmp_path, comparison={"baseline": "populr"})
    assert_user_error(
        invoke("run", config), "comparison.baseline 'populr' is not a model", "popular, model"
    )


def test_table_puts_models_side_by_side(tmp_path: Path) -> None:
    result = invoke("run", two_models(tmp_path))
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    header = next(line for line in lines if "metric" in line)
    assert header.index("popular") < header.index("model")
    ndcg = next(line for line in lines if "ndcg@10" in line)
    assert "*" in ndcg  # the best marked
    assert "▲" in ndcg  # a significant win over the baseline
    assert "paired t test, holm correction over 4 comparisons" in result.stdout


def test_normal_intervals_match_the_formula(tmp_path: Path) -> None:
    confidence = {"method": "normal", "level": 0.9}
    config = single(tmp_path, "predictions.csv", confidence=confidence)
    report = run_json(config)
    values = per_user(tmp_path, config)
    z = stats.norm.ppf(0.95)
    for metric in METRICS:
        column = values.get_column(metric).drop_nulls().to_numpy()
        half = z * column.std(ddof=1) / np.sqrt(column.size)
        low, high = report["models"]["model"]["confidence"]["intervals"][metric]
        assert low == pytest.approx(column.mean() - half, abs=1e-12)
        assert high == pytest.approx(column.mean() + half, abs=1e-12)


def test_bootstrap_intervals_are_seeded_and_bracket_the_value(tmp_path: Path) -> None:
    config = single(tmp_path, "predictions.csv")
    first = run_json(config, "--ci")
    again = run_json(config, "--ci")
    assert first["models"]["model"]["confidence"] == again["models"]["model"]["confidence"]
    assert first["models"]["model"]["confidence"]["method"] == "bootstrap"
    assert first["models"]["model"]["confidence"]["resamples"] == 1000
    for metric, (low, high) in first["models"]["model"]["confidence"]["intervals"].items():
        assert low < first["models"]["model"]["metrics"][metric] < high
    other_seed = single(tmp_path, "predictions.csv", confidence={"seed": 99})
    assert (
        run_json(other_seed)["models"]["model"]["confidence"]["intervals"]
        != first["models"]["model"]["confidence"]["intervals"]
    )


def test_table_shows_value_plus_minus_half_width(tmp_path: Path) -> None:
    config = single(tmp_path, "predictions.csv", confidence={"method": "normal"})
    report = run_json(config)
    result = invoke("run", config)
    low, high = report["models"]["model"]["confidence"]["intervals"]["ndcg@10"]
    expected = f"{report['models']['model']['metrics']['ndcg@10']:.4f} ± {(high - low) / 2:.4f}"
    assert expected in result.stdout
    assert "half-width of the 95% confidence interval (normal approximation)" in result.stdout


@pytest.mark.parametrize(
    ("test", "reference"),
    [
        ("t", lambda a, b: stats.ttest_rel(a, b).pvalue),
        ("wilcoxon", lambda a, b: stats.wilcoxon(a - b).pvalue),
    ],
)
def test_p_values_match_scipy_and_holm(tmp_path: Path, test: str, reference: Any) -> None:
    config = two_models(tmp_path, comparison={"baseline": "popular", "test": test})
    report = run_json(config)
    results = {r["metric"]: r for r in report["comparisons"]["results"]}
    pairs = paired(tmp_path, config)
    raw = [float(reference(*pairs[m])) for m in METRICS]
    for metric, expected in zip(METRICS, raw, strict=True):
        a, b = pairs[metric]
        assert results[metric]["p_value"] == pytest.approx(expected, rel=1e-9, abs=1e-300)
        assert results[metric]["difference"] == pytest.approx(float(np.mean(a - b)), abs=1e-12)
        assert results[metric]["users"] == a.size
    adjusted = holm_by_hand(raw)
    for metric, expected in zip(METRICS, adjusted, strict=True):
        assert results[metric]["p_adjusted"] == pytest.approx(expected, rel=1e-9, abs=1e-300)
        assert results[metric]["verdict"] == ("win" if expected < 0.05 else "tie")


def test_a_model_against_itself_is_a_tie(tmp_path: Path) -> None:
    config = two_models(tmp_path)
    text = config.read_text(encoding="utf-8").replace("popular_predictions.csv", "predictions.csv")
    config.write_text(text, encoding="utf-8")
    report = run_json(config)
    for result in report["comparisons"]["results"]:
        assert result["difference"] == 0.0
        assert result["p_value"] == 1.0
        assert result["verdict"] == "tie"


def test_no_significant_drop_fails_for_a_worse_model(tmp_path: Path) -> None:
    # the popular model against the real one as the baseline: a significant loss
    gates = {"ndcg@10": {"no_significant_drop": True}}
    config = two_models(tmp_path, comparison={"baseline": "model"}, gates=gates)
    result = invoke("run", config)
    assert result.exit_code == 1
    assert "gate failed: popular: ndcg@10:" in result.stdout
    assert "interval [" in result.stdout
    assert "adjusted p = " in result.stdout
    assert "a significant drop" in result.stdout
    passing = two_models(tmp_path, comparison={"baseline": "popular"}, gates=gates)
    assert invoke("run", passing).exit_code == 0


@pytest.mark.parametrize(
    ("gate", "passes"),
    [
        ({"max_drop": 0.5}, True),  # popular is 0.45 below model on ndcg@10
        ({"max_drop": 0.4}, False),
        ({"max_relative_drop": 0.9}, True),  # 0.45 / 0.53 = 85%
        ({"max_relative_drop": 0.8}, False),
    ],
)
def test_drop_gates(tmp_path: Path, gate: dict[str, float], passes: bool) -> None:
    config = two_models(tmp_path, comparison={"baseline": "model"}, gates={"ndcg@10": gate})
    report = run_json(config, expect=0 if passes else 1)
    (result,) = report["gates"]["results"]
    values = {n: m["metrics"]["ndcg@10"] for n, m in report["models"].items()}
    drop = values["model"] - values["popular"]
    expected = drop if "max_drop" in gate else drop / values["model"]
    assert result["model"] == "popular"
    assert result["value"] == pytest.approx(expected, abs=1e-12)
    assert result["passed"] is passes


def test_absolute_gates_skip_the_baseline_unless_named(tmp_path: Path) -> None:
    gates = {"precision@10": {"min": 0.2}}
    config = two_models(tmp_path, comparison={"baseline": "popular"}, gates=gates)
    report = run_json(config)
    assert [g["model"] for g in report["gates"]["results"]] == ["model"]
    named = two_models(tmp_path, gates={"precision@10": {"min": 0.2, "model": "popular"}})
    report = run_json(named, expect=1)
    assert [(g["model"], g["passed"]) for g in report["gates"]["results"]] == [("popular", False)]


def test_relative_gate_needs_a_baseline(tmp_path: Path) -> None:
    config = single(tmp_path, "predictions.csv", gates={"ndcg@10": {"max_drop": 0.01}})
    assert_user_error(
        invoke("run", config), "gates.ndcg@10 compares with a baseline", "--baseline-report"
    )


def test_baseline_report_instead_of_a_baseline_model(tmp_path: Path) -> None:
    old = single(tmp_path, "popular_predictions.csv", name="old.yaml")
    saved = tmp_path / "old.json"
    assert invoke("run", old, "--format", "json", "--output", saved).exit_code == 0
    gates = {"ndcg@10": {"no_significant_drop": True, "max_drop": 0.0}}
    new = single(tmp_path, "predictions.csv", name="new.yaml", gates=gates)
    report = run_json(new, "--baseline-report", saved)
    old_values = json.loads(saved.read_text(encoding="utf-8"))["models"]["model"]["metrics"]
    results = {r["metric"]: r for r in report["comparisons"]["results"]}
    assert report["comparisons"]["baseline_report"] == str(saved)
    frame = per_user(tmp_path, new, "--baseline-report", str(saved))
    for metric in METRICS:
        assert results[metric]["baseline"] == old_values[metric]
        column = frame.get_column(metric).drop_nulls().to_numpy()
        expected = stats.ttest_1samp(column - old_values[metric], 0.0).pvalue
        assert results[metric]["p_value"] == pytest.approx(expected, rel=1e-9, abs=1e-300)
    assert report["gates"]["passed"] is True
    # and the other way round: the popular model fails against the better saved report
    better = tmp_path / "better.json"
    plain = single(tmp_path, "predictions.csv", name="plain.yaml")
    assert invoke("run", plain, "--format", "json", "--output", better).exit_code == 0
    worse = single(tmp_path, "popular_predictions.csv", name="worse.yaml", gates=gates)
    assert run_json(worse, "--baseline-report", better, expect=1)["gates"]["passed"] is False


def test_baseline_report_that_is_not_a_report(tmp_path: Path) -> None:
    write(tmp_path / "bad.json", '{"hello": 1}')
    config = single(tmp_path, "predictions.csv")
    assert_user_error(
        invoke("run", config, "--baseline-report", tmp_path / "bad.json"),
        "bad.json has no 'metrics'",
        "--format json --output PATH",
    )


def test_several_outputs_in_one_run(tmp_path: Path) -> None:
    gates = {"ndcg@10": {"no_significant_drop": True}, "precision@10": {"min": 0.9}}
    config = two_models(tmp_path, gates=gates)
    paths = [tmp_path / name for name in ("r.json", "s.md", "r.csv", "junit.xml", "r.txt")]
    args = [arg for path in paths for arg in ("--output", str(path))]
    result = invoke("run", config, *args)
    assert result.exit_code == 1  # precision@10 >= 0.9 fails
    report = json.loads(paths[0].read_text(encoding="utf-8"))
    # markdown: a verdict and a table row per metric, rendered as HTML
    html = MarkdownIt("commonmark").enable("table").render(paths[1].read_text(encoding="utf-8"))
    assert "<table>" in html
    for metric in METRICS:
        assert f"<code>{metric}</code>" in html
    assert "1 of 2 gates failed" in html
    # csv: one line per (model, metric), values unrounded
    rows = list(csv.DictReader(paths[2].open(encoding="utf-8")))
    assert len(rows) == 2 * len(METRICS)
    for row in rows:
        assert float(row["value"]) == report["models"][row["model"]]["metrics"][row["metric"]]
    # junit: valid against the schema, one test case per gate, the failure marked
    xmlschema.XMLSchema(SCHEMA).validate(paths[3])
    text = paths[3].read_text(encoding="utf-8")
    assert text.count("<testcase ") == len(report["gates"]["results"])
    assert text.count("<failure ") == 1
    assert "ndcg@10" in paths[4].read_text(encoding="utf-8")


def test_junit_for_a_single_model_is_valid(tmp_path: Path) -> None:
    config = single(tmp_path, "predictions.csv", gates={"ndcg@10": {"min": 0.3}})
    result = invoke("run", config, "--format", "junit")
    assert result.exit_code == 0, result.stderr
    write(tmp_path / "out.xml", result.stdout)
    xmlschema.XMLSchema(SCHEMA).validate(tmp_path / "out.xml")
    assert 'tests="1" failures="0"' in result.stdout


def test_several_outputs_need_known_extensions(tmp_path: Path) -> None:
    config = single(tmp_path, "predictions.csv")
    result = invoke("run", config, "-o", tmp_path / "a.json", "-o", tmp_path / "b.out")
    assert_user_error(result, "b.out", "does not know the extension '.out'", ".md")
    assert not (tmp_path / "a.json").exists()


def test_per_user_output(tmp_path: Path) -> None:
    config = two_models(tmp_path)
    frame = per_user(tmp_path, config)
    assert frame.columns[:3] == ["model", "user", "status"]
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    for name in ("popular", "model"):
        rows = frame.filter(pl.col("model") == name)
        for metric in METRICS:
            mean = rows.get_column(metric).drop_nulls().mean()
            assert mean == pytest.approx(report["models"][name]["metrics"][metric], abs=1e-12)


def test_baseline_report_missing(tmp_path: Path) -> None:
    config = single(tmp_path, "predictions.csv")
    result = invoke("run", config, "--baseline-report", tmp_path / "nowhere.json")
    assert_user_error(result, "nowhere.json does not exist. Check the path.")


def test_baseline_report_without_the_model(tmp_path: Path) -> None:
    saved = tmp_path / "two.json"
    assert invoke("run", two_models(tmp_path), "--format", "json", "-o", saved).exit_code == 0
    config = single(tmp_path, "predictions.csv", comparison={"baseline": "other"})
    assert_user_error(
        invoke("run", config, "--baseline-report", saved),
        "has no model 'other'",
        "popular, model",
    )


def test_significance_gate_on_a_global_metric(tmp_path: Path) -> None:
    config = two_models(tmp_path, gates={"user_coverage": {"no_significant_drop": True}})
    text = config.read_text(encoding="utf-8").replace("- mrr@10", "- mrr@10\n- user_coverage")
    config.write_text(text, encoding="utf-8")
    assert_user_error(
        invoke("run", config),
        "gates.user_coverage: no_significant_drop needs per-user values",
        "max_drop",
    )


def test_relative_gate_on_a_segment(tmp_path: Path) -> None:
    truth = pl.read_parquet(SAMPLE / "ground_truth.parquet")
    truth.with_columns(group=pl.lit("a")).write_parquet(tmp_path / "truth.parquet")
    config = two_models(
        tmp_path,
        segment_by=["group"],
        gates={"ndcg@10": {"max_drop": 0.1, "segment": "group=a"}},
    )
    text = config.read_text(encoding="utf-8").replace(
        str(SAMPLE / "ground_truth.parquet"), str(tmp_path / "truth.parquet")
    )
    config.write_text(text, encoding="utf-8")
    assert_user_error(invoke("run", config), "a gate on a segment takes min or max")


def test_the_footer_counts_only_the_tested_comparisons(tmp_path: Path) -> None:
    """A global metric (user_coverage, one value over all users) gets a difference but no
    test; the correction is over the tested ones, and the table, the Markdown and the JSON
    count them apart."""
    config = two_models(tmp_path, metrics=[*METRICS, "user_coverage"])
    report = run_json(config)
    results = report["comparisons"]["results"]
    assert len(results) == len(METRICS) + 1
    assert report["comparisons"]["tested"] == len(METRICS)
    assert report["comparisons"]["design"] == "paired"
    (untested,) = [r for r in results if r["p_value"] is None]
    assert untested["metric"] == "user_coverage"
    assert untested["verdict"] == "untested"
    expected = f"paired t test, holm correction over {len(METRICS)} comparisons (1 more untested"
    table = invoke("run", config)
    assert table.exit_code == 0, table.stderr
    assert expected in " ".join(table.stdout.split())  # the table wraps at 120 columns
    markdown = invoke("run", config, "--format", "markdown")
    assert expected in markdown.stdout


def test_a_saved_baseline_is_a_one_sample_test(tmp_path: Path) -> None:
    """Against a saved report the baseline's values are fixed numbers: the test is named
    one-sample, not paired."""
    saved = tmp_path / "saved.json"
    alone = single(tmp_path, "popular_predictions.csv")
    assert invoke("run", alone, "--format", "json", "--output", saved).exit_code == 0
    new = single(tmp_path, "predictions.csv", name="new.yaml")
    report = run_json(new, "--baseline-report", saved)
    assert report["comparisons"]["design"] == "one-sample"
    table = invoke("run", new, "--baseline-report", saved)
    assert "one-sample t test, holm correction over" in " ".join(table.stdout.split())
    assert "paired" not in table.stdout
