"""`receval compare`: saved JSON reports side by side, with deltas against a baseline.

Every input report is written by `receval run ... --format json --output`; the expected
values and deltas are computed here from the loaded JSON, independently of the command.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import (
    NDCG_2,
    PRECISION_1,
    assert_no_traceback,
    assert_user_error,
    hand_case,
    invoke,
    write,
    write_config,
)
from typer.testing import Result

ROOT = Path(__file__).parents[2]

# rankings of the hand case's items (truth u1: b; u2: d, f)
BETTER = "user,item,score\nu1,b,0.9\nu1,a,0.8\nu1,c,0.7\nu2,d,0.9\nu2,e,0.5\n"
WORSE = "user,item,score\nu1,c,0.9\nu1,a,0.8\nu1,b,0.7\nu2,e,0.9\nu2,d,0.5\n"


def saved(
    tmp_path: Path,
    name: str,
    predictions: str | None = None,
    *run_args: str,
    expect: int = 0,
    **extra: Any,
) -> Path:
    """The hand case (its predictions replaced, config keys added) saved as NAME.json."""
    folder = tmp_path / f"case-{name}"
    config = hand_case(folder, **extra)
    if predictions is not None:
        write(folder / "predictions.csv", predictions)
    report = tmp_path / "reports" / f"{name}.json"
    report.parent.mkdir(exist_ok=True)
    result = invoke("run", config, "--format", "json", "--output", report, "-q", *run_args)
    assert result.exit_code == expect, (result.stdout, result.stderr)
    return report


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def compare(*args: str | Path) -> Result:
    result = invoke("compare", *args)
    assert_no_traceback(result)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result


def compare_json(*args: str | Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(compare(*args, "--format", "json").stdout)
    return data


def row(table: str, metric: str) -> list[str]:
    """The cells of the table row of `metric` (the metric's name first)."""
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip("│┃ ").split("│")]
        if cells[0] == metric:
            return cells
    raise AssertionError(f"no row {metric} in\n{table}")


@pytest.fixture(scope="module")
def models_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """configs/compare.yaml (models `popular` and `model`) saved as models.json."""
    report = tmp_path_factory.mktemp("saved") / "models.json"
    result = invoke("run", ROOT / "configs/compare.yaml", "-f", "json", "-o", report, "-q")
    assert result.exit_code == 0, result.stderr
    return report


# ------------------------------------------------------------------- values and deltas


def test_values_and_deltas_equal_the_reports(tmp_path: Path) -> None:
    a, b, c = (saved(tmp_path, "a"), saved(tmp_path, "b", BETTER), saved(tmp_path, "c", WORSE))
    got = compare_json(a, b, c)
    assert got["baseline"] == "a"
    assert got["columns"] == ["a", "b", "c"]
    base = load(a)["models"]["model"]["metrics"]
    assert base == {"precision@1": PRECISION_1, "ndcg@2": pytest.approx(NDCG_2)}
    for name, path in (("b", b), ("c", c)):
        for metric, value in load(path)["models"]["model"]["metrics"].items():
            cell = got["metrics"][metric][name]
            assert cell["value"] == value
            assert cell["delta"] == pytest.approx(value - base[metric], abs=1e-15)
            expected = (value - base[metric]) / abs(base[metric])
            assert cell["relative_delta"] == pytest.approx(expected, abs=1e-15)
            assert cell["low"] is None
            assert cell["high"] is None
    for metric, value in base.items():  # the baseline: its value, no delta
        assert got["metrics"][metric]["a"] == {
            "value": value,
            "low": None,
            "high": None,
            "delta": None,
            "relative_delta": None,
        }
    assert got["conventions_differ"] == {}


def test_the_table_shows_values_deltas_and_the_best(tmp_path: Path) -> None:
    a, b, c = (saved(tmp_path, "a"), saved(tmp_path, "b", BETTER), saved(tmp_path, "c", WORSE))
    table = compare(a, b, c).stdout
    base, better, worse = (load(p)["models"]["model"]["metrics"] for p in (a, b, c))
    for metric in base:
        cells = row(table, metric)
        assert cells[1] == f"{base[metric]:.4f}"
        delta = better[metric] - base[metric]
        assert cells[2] == f"{better[metric]:.4f}*  {delta:+.4f} ({delta / base[metric]:+.1%})"
        delta = worse[metric] - base[metric]
        assert cells[3] == f"{worse[metric]:.4f}  {delta:+.4f} ({delta / base[metric]:+.1%})"
    assert row(table, "precision@1") == [
        "precision@1",
        "0.5000",
        "1.0000*  +0.5000 (+100.0%)",
        "0.0000  -0.5000 (-100.0%)",
    ]
    assert "baseline: a " in table
    assert "warning" not in table
    assert "±" not in table


def test_no_relative_change_against_a_zero_baseline(tmp_path: Path) -> None:
    zero, a = saved(tmp_path, "zero", WORSE), saved(tmp_path, "a")
    assert load(zero)["models"]["model"]["metrics"]["precision@1"] == 0.0
    got = compare_json(zero, a)["metrics"]["precision@1"]["a"]
    assert got["delta"] == PRECISION_1
    assert got["relative_delta"] is None
    assert row(compare(zero, a).stdout, "precision@1")[2] == "0.5000*  +0.5000"


def test_the_best_follows_the_metric_direction(tmp_path: Path) -> None:
    """Lower is better for an error: the smaller MAE is marked; the baseline can be best."""
    reports = []
    for name, predicted in (("close", "3.5"), ("far", "1.0")):
        folder = tmp_path / name
        write(folder / "p.csv", f"user,item,score\nu,a,{predicted}\nu,b,4.0\n")
        write(folder / "t.csv", "user,item,rating\nu,a,4\nu,b,4\n")
        config = write_config(
            folder,
            {
                "predictions": {"path": "p.csv"},
                "ground_truth": {"path": "t.csv", "columns": {"relevance": "rating"}},
                "metrics": ["mae"],
            },
        )
        reports.append(folder / f"{name}.json")
        result = invoke("run", config, "-f", "json", "-o", reports[-1], "-q")
        assert result.exit_code == 0, result.stderr
    close, far = (load(p)["models"]["model"]["metrics"]["mae"] for p in reports)
    assert close < far
    got = compare_json(*reports)
    assert got["best"] == {"mae": ["close"]}
    cells = row(compare(*reports).stdout, "mae")
    assert cells[1] == f"{close:.4f}*"
    assert cells[2].startswith(f"{far:.4f}  +")


def test_ties_are_all_best(tmp_path: Path) -> None:
    a, b = saved(tmp_path, "a"), saved(tmp_path, "b")
    got = compare_json(a, b)
    assert got["best"] == {"precision@1": ["a", "b"], "ndcg@2": ["a", "b"]}
    assert row(compare(a, b).stdout, "precision@1") == [
        "precision@1",
        "0.5000*",
        "0.5000*  +0.0000 (+0.0%)",
    ]


def test_intervals_show_as_half_widths(tmp_path: Path) -> None:
    a, b = saved(tmp_path, "a", None, "--ci"), saved(tmp_path, "b", BETTER, "--ci")
    intervals = load(b)["models"]["model"]["confidence"]["intervals"]
    got = compare_json(a, b)["metrics"]
    for metric, (low, high) in intervals.items():
        assert (got[metric]["b"]["low"], got[metric]["b"]["high"]) == (low, high)
    table = compare(a, b).stdout
    low, high = intervals["ndcg@2"]
    value = load(b)["models"]["model"]["metrics"]["ndcg@2"]
    assert row(table, "ndcg@2")[2].startswith(f"{value:.4f} ± {(high - low) / 2:.4f}*  +")
    assert "±: half-width of the confidence interval" in table


def test_a_report_whose_gates_failed_compares_with_exit_0(tmp_path: Path) -> None:
    failed = saved(tmp_path, "failed", expect=1, gates={"precision@1": {"min": 0.9}})
    assert load(failed)["gates"]["passed"] is False
    compare(failed, saved(tmp_path, "b", BETTER))


# ------------------------------------------------------------------------------ columns


def test_a_several_model_report_gives_a_column_per_model(
    tmp_path: Path, models_report: Path
) -> None:
    a = saved(tmp_path, "a")
    # configs/compare.yaml sets relevance_threshold 4, the hand case 1: allowed on purpose
    got = compare_json(models_report, a, "--allow-different-conventions")
    assert got["columns"] == ["models:popular", "models:model", "a"]
    assert got["baseline"] == "models:popular"
    models = load(models_report)["models"]
    popular, model = models["popular"], models["model"]
    for metric, value in model["metrics"].items():
        cell = got["metrics"][metric]["models:model"]
        assert cell["value"] == value
        assert cell["delta"] == pytest.approx(value - popular["metrics"][metric], abs=1e-15)
        assert [cell["low"], cell["high"]] == model["confidence"]["intervals"][metric]
        assert got["metrics"][metric]["a"] is None
    table = compare(models_report, a, "--allow-different-conventions").stdout
    assert "models:popular" in table
    assert "models:model" in table


def test_missing_metrics_show_a_dash(tmp_path: Path, models_report: Path) -> None:
    a = saved(tmp_path, "a")
    other = saved(tmp_path, "other", metrics=["precision@1", "map"])
    got = compare_json(a, other)
    assert list(got["metrics"]) == ["precision@1", "ndcg@2", "map"]  # first seen
    assert got["metrics"]["ndcg@2"]["other"] is None
    assert got["metrics"]["map"]["a"] is None
    assert got["metrics"]["map"]["other"]["delta"] is None  # no baseline value
    assert got["best"]["map"] == []  # one value: nothing to mark
    table = compare(a, other).stdout
    assert row(table, "ndcg@2")[2] == "—"
    assert row(table, "map") == [
        "map",
        "—",
        f"{load(other)['models']['model']['metrics']['map']:.4f}",
    ]
    shown = compare(models_report, a, "--allow-different-conventions").stdout
    assert row(shown, "precision@1")[1:3] == ["—", "—"]


def test_repeated_names_are_made_unique(tmp_path: Path) -> None:
    a = saved(tmp_path, "a")
    twin = tmp_path / "elsewhere" / "a.json"
    write(twin, a.read_text(encoding="utf-8"))
    got = compare_json(a, twin, a)
    assert got["columns"] == ["a", "a#2", "a#3"]
    assert got["metrics"]["precision@1"]["a#3"]["delta"] == 0.0
    assert compare_json(a, twin, "--baseline", "a#2")["baseline"] == "a#2"


# ------------------------------------------------------------------------------ options


def test_baseline_option(tmp_path: Path, models_report: Path) -> None:
    a, b = saved(tmp_path, "a"), saved(tmp_path, "b", BETTER)
    got = compare_json(a, b, "--baseline", "b")
    assert got["baseline"] == "b"
    base, other = load(b)["models"]["model"]["metrics"], load(a)["models"]["model"]["metrics"]
    for metric, value in other.items():
        assert got["metrics"][metric]["a"]["delta"] == pytest.approx(value - base[metric])
        assert got["metrics"][metric]["b"]["delta"] is None
    table = compare(a, b, "--baseline", "b").stdout
    assert "baseline: b " in table
    assert row(table, "precision@1") == ["precision@1", "0.5000  -0.5000 (-50.0%)", "1.0000*"]
    models = compare_json(
        models_report, a, "--baseline", "models:model", "--allow-different-conventions"
    )
    assert models["baseline"] == "models:model"
    assert models["metrics"]["ndcg@10"]["models:popular"]["delta"] < 0


def test_metric_filter(tmp_path: Path) -> None:
    a, b = saved(tmp_path, "a"), saved(tmp_path, "b", BETTER, metrics=["precision@1", "map"])
    got = compare_json(a, b, "--metric", "map", "--metric", "precision@1")
    assert list(got["metrics"]) == ["precision@1", "map"]  # the reports' order
    assert list(compare_json(a, b, "-m", "ndcg@2")["metrics"]) == ["ndcg@2"]
    table = compare(a, b, "--metric", "map").stdout
    assert row(table, "map")[0] == "map"
    assert "precision@1" not in table
    assert "ndcg@2" not in table


def test_different_conventions_are_refused_unless_allowed(tmp_path: Path) -> None:
    """Reports of different conventions are not compared (exit 2) unless
    --allow-different-conventions; then the warning names each difference."""
    a = saved(tmp_path, "a")
    b = saved(
        tmp_path, "b", conventions={"tie_break": "item_asc", "precision_denominator": "list_length"}
    )
    out = tmp_path / "comparison.json"
    refused = invoke("compare", a, b, "--output", out)
    words = ("different conventions", "tie_break: a=item_desc, b=item_asc", "--allow-different")
    assert_user_error(refused, *words)
    assert not out.exists()
    allow = "--allow-different-conventions"
    got = compare_json(a, b, allow)
    assert got["conventions_differ"] == {
        "tie_break": {"a": "item_desc", "b": "item_asc"},
        "precision_denominator": {"a": "k", "b": "list_length"},
    }
    assert len(got["warnings"]) == 1
    table = " ".join(compare(a, b, allow).stdout.split())  # the warning wraps at 120 columns
    assert "warning: the reports' conventions differ" in table
    assert "tie_break: a=item_desc, b=item_asc" in table
    assert "precision_denominator: a=k, b=list_length" in table
    assert "not comparable" in table
    # a format with no place for it warns on stderr
    result = compare(a, b, "--format", "csv", allow)
    assert "conventions differ" in result.stderr
    assert "conventions differ" not in result.stdout
    assert "conventions differ" in compare(a, b, "--format", "markdown", allow).stdout
    # the same conventions: no difference
    assert compare_json(a, saved(tmp_path, "c"))["conventions_differ"] == {}


# ------------------------------------------------------------------------------ formats


def test_csv_is_long_and_unrounded(tmp_path: Path) -> None:
    a, b = saved(tmp_path, "a", None, "--ci"), saved(tmp_path, "b", BETTER, metrics=["map"])
    text = compare(a, b, "--format", "csv").stdout
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == ["column", "metric", "value", "low", "high", "delta", "relative_delta"]
    by_key = {(r["column"], r["metric"]): r for r in rows}
    assert set(by_key) == {("a", "precision@1"), ("a", "ndcg@2"), ("b", "map")}
    for metric, value in load(a)["models"]["model"]["metrics"].items():
        line = by_key["a", metric]
        assert float(line["value"]) == value
        low, high = load(a)["models"]["model"]["confidence"]["intervals"][metric]
        assert (float(line["low"]), float(line["high"])) == (low, high)
        assert line["delta"] == line["relative_delta"] == ""
    assert float(by_key["b", "map"]["value"]) == load(b)["models"]["model"]["metrics"]["map"]
    assert by_key["b", "map"]["low"] == by_key["b", "map"]["delta"] == ""

    c = saved(tmp_path, "c", BETTER)
    rows = list(csv.DictReader(io.StringIO(compare(a, c, "-f", "csv").stdout)))
    ndcg = next(r for r in rows if r["column"] == "c" and r["metric"] == "ndcg@2")
    expected = (
        load(c)["models"]["model"]["metrics"]["ndcg@2"]
        - load(a)["models"]["model"]["metrics"]["ndcg@2"]
    )
    assert float(ndcg["delta"]) == pytest.approx(expected, abs=1e-15)
    relative = expected / load(a)["models"]["model"]["metrics"]["ndcg@2"]
    assert float(ndcg["relative_delta"]) == pytest.approx(relative, abs=1e-15)


def test_markdown_has_a_row_per_metric(tmp_path: Path) -> None:
    a, b = saved(tmp_path, "a"), saved(tmp_path, "b", BETTER)
    text = compare(a, b, "--format", "markdown").stdout
    lines = text.splitlines()
    assert "| metric | a | b |" in lines
    assert "|---|---:|---:|" in lines
    assert "| `precision@1` | 0.5000 | **1.0000** +0.5000 (+100.0%) |" in lines
    base, better = (
        load(a)["models"]["model"]["metrics"]["ndcg@2"],
        load(b)["models"]["model"]["metrics"]["ndcg@2"],
    )
    delta = better - base
    assert (
        f"| `ndcg@2` | {base:.4f} | **{better:.4f}** {delta:+.4f} ({delta / base:+.1%}) |" in lines
    )
    assert sum(line.startswith("| `") for line in lines) == 2
    assert "baseline: a " in text


def test_json_is_the_whole_comparison(tmp_path: Path) -> None:
    a, b = saved(tmp_path, "a"), saved(tmp_path, "b", BETTER)
    got = compare_json(a, b)
    assert set(got) == {"baseline", "columns", "metrics", "best", "conventions_differ", "warnings"}
    assert got["warnings"] == []  # the same conventions and ground truth
    assert set(got["metrics"]["ndcg@2"]["b"]) == {
        "value",
        "low",
        "high",
        "delta",
        "relative_delta",
    }
    assert got["best"] == {"precision@1": ["b"], "ndcg@2": ["b"]}


# ------------------------------------------------------------------------------- output


@pytest.mark.parametrize(("fmt", "suffix"), [("json", ".json"), ("csv", ".csv"), ("table", ".txt")])
def test_output_is_written_atomically(tmp_path: Path, fmt: str, suffix: str) -> None:
    a, b = saved(tmp_path, "a"), saved(tmp_path, "b", BETTER)
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / f"comparison{suffix}"
    write(target, "an earlier comparison")
    result = compare(a, b, "--format", fmt, "--output", target)
    assert "receval compare" in result.stdout  # the table, as `run` shows it
    assert os.listdir(folder) == [target.name]  # no temporary file left
    text = target.read_text(encoding="utf-8")
    if fmt == "json":
        assert json.loads(text) == compare_json(a, b)
    elif fmt == "csv":
        assert text == compare(a, b, "--format", "csv").stdout
    else:
        assert row(text, "precision@1") == row(result.stdout, "precision@1")
        assert "\x1b[" not in text  # no colour codes in the file
    assert compare(a, b, "--format", fmt, "--output", target, "--quiet").stdout == ""
    assert target.read_text(encoding="utf-8") == text


def test_output_format_from_the_extension(tmp_path: Path) -> None:
    a, b = saved(tmp_path, "a"), saved(tmp_path, "b", BETTER)
    target = tmp_path / "comparison.md"
    compare(a, b, "--output", target, "-q")
    assert "| metric | a | b |" in target.read_text(encoding="utf-8")


# ------------------------------------------------------------------------------- errors


def user_error(tmp_path: Path, *args: str | Path, words: tuple[str, ...]) -> str:
    """The command fails with exit 2, an `error:` message, no output, and no file."""
    target = tmp_path / "out" / "comparison.json"
    target.parent.mkdir(exist_ok=True)
    message = assert_user_error(invoke("compare", *args, "--output", target), *words)
    assert not target.exists()
    assert os.listdir(target.parent) == []
    return message


def test_error_missing_file(tmp_path: Path) -> None:
    a = saved(tmp_path, "a")
    user_error(tmp_path, a, tmp_path / "nope.json", words=("nope.json", "does not exist"))


def test_error_folder(tmp_path: Path) -> None:
    a = saved(tmp_path, "a")
    user_error(tmp_path, a, tmp_path / "reports", words=("reports", "is a folder"))


@pytest.mark.parametrize("content", ["not json {", "", b"\xff\xfe\x00binary"])
def test_error_not_json(tmp_path: Path, content: str | bytes) -> None:
    a, bad = saved(tmp_path, "a"), write(tmp_path / "bad.json", content)
    user_error(tmp_path, a, bad, words=("bad.json", "is not JSON", "receval run"))


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"results": {}}, ("no 'metrics' (nor 'models')", "not a receval JSON report")),
        ([1, 2], ("no 'metrics' (nor 'models')",)),
        ({"metrics": [0.5]}, ("metrics is missing or not a mapping",)),
        ({"metrics": {"ndcg@2": "high"}}, ("metrics.ndcg@2", "not a finite number")),
        ({"models": {}}, ("'models' holds no model",)),
        ({"models": {"x": {"users": {}}}}, ("models.x.metrics",)),
        (
            {"metrics": {"mrr": 0.5}, "confidence": {"intervals": {"mrr": [0.1]}}},
            ("confidence.intervals.mrr", "[low, high]"),
        ),
    ],
)
def test_error_not_a_report(tmp_path: Path, data: object, words: tuple[str, ...]) -> None:
    a, bad = saved(tmp_path, "a"), write(tmp_path / "bad.json", json.dumps(data))
    user_error(tmp_path, a, bad, words=("bad.json", *words, "receval run"))


def test_error_fewer_than_two_reports(tmp_path: Path) -> None:
    a = saved(tmp_path, "a")
    user_error(tmp_path, a, words=("at least two", "got 1", "a.json", "A.json B.json"))
    user_error(tmp_path, words=("at least two", "got 0"))


def test_error_unknown_baseline(tmp_path: Path, models_report: Path) -> None:
    a = saved(tmp_path, "a")
    message = user_error(
        tmp_path,
        a,
        models_report,
        "--baseline",
        "models:populr",
        words=("--baseline models:populr", "a, models:popular, models:model"),
    )
    assert "Did you mean 'models:popular'?" in message


def test_error_unknown_metric(tmp_path: Path) -> None:
    a, b = saved(tmp_path, "a"), saved(tmp_path, "b")
    message = user_error(
        tmp_path,
        a,
        b,
        "--metric",
        "ndcg@2",
        "--metric",
        "ndcg@3",
        words=("--metric ndcg@3", "no report has it", "precision@1, ndcg@2"),
    )
    assert "Did you mean 'ndcg@2'?" in message


def test_error_output_folder_missing(tmp_path: Path) -> None:
    a, b = saved(tmp_path, "a"), saved(tmp_path, "b")
    result = invoke("compare", a, b, "--output", tmp_path / "no" / "c.json")
    assert_user_error(result, "does not exist", "mkdir -p")


def test_no_nan_reaches_the_json(tmp_path: Path) -> None:
    """Python's json reads NaN; a report holding one is refused, not rendered."""
    a = saved(tmp_path, "a")
    bad = write(tmp_path / "nan.json", '{"metrics": {"precision@1": NaN}}')
    assert math.isnan(json.loads(bad.read_text())["metrics"]["precision@1"])
    user_error(tmp_path, a, bad, words=("nan.json", "precision@1", "not a finite number"))


@pytest.mark.parametrize(
    ("content", "key", "count"),
    [
        ('{"metrics": {"x": 0.5, "y": ' + "9" * 5000 + "}}", "metrics.y", "5,000"),
        (
            '{"models": {"m": {"metrics": {"x": [1, -' + "7" * 4301 + "]}}}}",
            "models.m.metrics.x[1]",
            "4,301",
        ),
    ],
)
def test_a_number_too_long_to_read_names_the_file_and_its_key(
    tmp_path: Path, content: str, key: str, count: str
) -> None:
    """An integer of thousands of digits: the file and the key holding it, in receval's
    words (it printed Python's advice, "use sys.set_int_max_str_digits()")."""
    bad = write(tmp_path / "bad.json", content)
    good = write(tmp_path / "good.json", '{"metrics": {"x": 0.5}}')
    message = assert_user_error(invoke("compare", bad, good))
    assert message == (
        f"error: report {bad}: {key} holds an integer of {count} digits, not a metric's "
        "value; it is not a receval JSON report. Write one with `receval run CONFIG "
        "--format json --output PATH`.\n"
    )
