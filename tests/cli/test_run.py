"""`receval` end to end through the Typer app: output formats, files, gates, layouts.

Every expected number is computed by hand; see the case in cli_helpers.py.
"""

from __future__ import annotations

import importlib.metadata
import json
import math
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import (
    INV_LOG2_3,
    MAP_ALL,
    NDCG_2,
    PRECISION_1,
    PREDICTIONS_CSV,
    TRUTH_CSV,
    assert_no_traceback,
    assert_user_error,
    hand_case,
    invoke,
    run_json,
    write,
    write_config,
)

from receval_cli import __version__
from receval_cli.config.conventions import Conventions
from receval_cli.metrics import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "configs" / "quickstart.yaml"
DEFAULT_CONVENTIONS = Conventions().model_dump()

# Graded variant of the hand case: u1 grades b=3, c=1; u2 grades d=1, f=2 (all relevant).
GRADED_TRUTH_CSV = "user,item,grade\nu1,b,3\nu1,c,1\nu2,d,1\nu2,f,2\n"
# linear gains: u1 DCG@2 = 3/log2 3, IDCG@2 = 3 + 1/log2 3; u2 DCG@2 = 1, IDCG@2 = 2 + 1/log2 3
GRADED_NDCG_2 = (3 * INV_LOG2_3 / (3 + INV_LOG2_3) + 1 / (2 + INV_LOG2_3)) / 2
# exponential gains (2^g - 1): b=7, c=1, d=1, f=3
GRADED_NDCG_2_EXP = (7 * INV_LOG2_3 / (7 + INV_LOG2_3) + 1 / (3 + INV_LOG2_3)) / 2
GRADED_NDCG_1_EXP = (0 / 7 + 1 / 3) / 2


def leftovers(folder: Path) -> list[str]:
    """Temporary files an atomic write could leave behind."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# --- the table -------------------------------------------------------------------------


def test_table_exact_text(tmp_path: Path) -> None:
    config = hand_case(tmp_path, gates={"precision@1": {"min": 0.5}, "ndcg@2": {"max": 0.9}})
    result = invoke("run", config)
    assert_no_traceback(result)
    assert result.exit_code == 0
    expected = (
        "receval                             \n"
        "┏━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━┓\n"
        "┃ metric      ┃  value ┃ gate      ┃\n"
        "┡━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━┩\n"
        "│ precision@1 │ 0.5000 │ ok >= 0.5 │\n"
        "│ ndcg@2      │ 0.6220 │ ok <= 0.9 │\n"
        "└─────────────┴────────┴───────────┘\n"
        "users: 2 evaluated\n"
        "conventions: relevance_threshold=1.0, tie_break=item_desc, "
        "users_without_recommendations=zero, \n"
        "users_without_relevant=skip, prediction_only_users=skip, precision_denominator=k, "
        "ap_denominator=min_k_relevant, \n"
        "ideal_dcg=at_k, gain=linear, gain_below_threshold=grade, fractional_grades=keep, "
        "discount=log2, score_precision=float64,\n"
        "duplicates=error, truth_duplicates=error, max_depth=none, unrated=ignore, "
        "default_rating=none, unpredicted=error, \n"
        "default_prediction=none, prediction_threshold=none\n"
    )
    assert result.stdout == expected
    assert result.stderr == ""


def test_table_without_gates_has_no_gate_column(tmp_path: Path) -> None:
    result = invoke("run", hand_case(tmp_path))
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[2] == "┃ metric      ┃  value ┃"
    assert lines[4] == "│ precision@1 │ 0.5000 │"
    assert lines[5] == "│ ndcg@2      │ 0.6220 │"
    assert "gate" not in result.stdout


def test_table_fits_a_narrow_terminal(tmp_path: Path) -> None:
    result = invoke("run", hand_case(tmp_path), env={"COLUMNS": "60"})
    assert result.exit_code == 0
    assert max(len(line) for line in result.stdout.splitlines()) <= 60
    assert "\x1b[" not in result.stdout


# --- the JSON report -------------------------------------------------------------------


def test_json_report_structure_and_values(tmp_path: Path) -> None:
    config = hand_case(tmp_path, gates={"ndcg@2": {"min": 0.6}})
    result = invoke("run", config, "--format", "json")
    assert result.exit_code == 0
    assert result.stderr == ""
    report = json.loads(result.stdout)  # stdout holds the JSON and nothing else
    # one shape whatever the number of models: a one-file config's model is "model"
    assert list(report) == [
        "receval_version",
        "run",
        "models",
        "best",
        "gates",
        "warnings",
        "conventions",
        "config",
        "elapsed_seconds",
    ]
    assert list(report["models"]) == ["model"]
    assert list(report["models"]["model"]) == ["metrics", "users", "unknown_items", "inputs"]
    assert report["best"] == {"precision@1": ["model"], "ndcg@2": ["model"]}
    # the lists as deep as the metrics look (ndcg@2): a, b and d, e; the ground truth knows
    # b and d (and f)
    assert report["models"]["model"]["unknown_items"] == {
        "reference": "ground truth",
        "recommended": 4,
        "unknown": 2,
        "share": 0.5,
        "examples": ["a", "e"],
    }
    assert report["warnings"] == []  # 0.5 is under the default unknown_items.warn, 0.9
    assert report["receval_version"] == __version__
    assert list(report["models"]["model"]["metrics"]) == ["precision@1", "ndcg@2"]
    assert report["models"]["model"]["metrics"]["precision@1"] == pytest.approx(
        PRECISION_1, abs=1e-12
    )
    assert report["models"]["model"]["metrics"]["ndcg@2"] == pytest.approx(NDCG_2, abs=1e-12)
    assert report["gates"]["passed"] is True
    [gate] = report["gates"]["results"]
    assert gate["metric"] == "ndcg@2"
    assert gate["bound"] == "min"
    assert gate["threshold"] == 0.6
    assert gate["passed"] is True
    assert gate["value"] == pytest.approx(NDCG_2)
    assert gate["margin"] == pytest.approx(NDCG_2 - 0.6)
    assert report["models"]["model"]["users"] == {
        "in_ground_truth": 2,
        "in_predictions": 2,
        "in_both": 2,
        "evaluated": 2,
        "counted_as_zero": {"no_recommendations": 0, "no_relevant": 0},
        "skipped": {"no_relevant": 0, "no_recommendations": 0},
        "only_in_predictions": 0,
    }
    assert report["conventions"] == DEFAULT_CONVENTIONS
    predictions, truth = (
        report["models"]["model"]["inputs"]["predictions"],
        report["models"]["model"]["inputs"]["ground_truth"],
    )
    assert predictions["rows"] == 5
    assert truth["rows"] == 3
    assert Path(predictions["path"]) == tmp_path / "predictions.csv"
    assert Path(truth["path"]) == tmp_path / "truth.csv"
    assert predictions["format"] == truth["format"] == "csv"
    assert predictions["layout"] == "score"
    assert truth["layout"] == "binary"
    assert predictions["columns"] == {"user": "user", "item": "item", "score": "score"}
    assert truth["columns"] == {"user": "user", "item": "item"}
    assert report["config"]["metrics"] == ["precision@1", "ndcg@2"]
    assert Path(report["config"]["source"]) == config
    assert report["config"]["predictions"]["path"] == "predictions.csv"
    assert isinstance(report["elapsed_seconds"], float)
    assert 0 <= report["elapsed_seconds"] < 60


# --- --output and output: --------------------------------------------------------------


def test_output_json_file(tmp_path: Path) -> None:
    config = hand_case(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    result = invoke("run", config, "--format", "json", "--output", out / "report.json")
    assert result.exit_code == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["models"]["model"]["metrics"]["ndcg@2"] == pytest.approx(NDCG_2)
    assert report["models"]["model"]["inputs"]["predictions"]["rows"] == 5
    assert "precision@1" in result.stdout  # the table is still shown ...
    assert not result.stdout.lstrip().startswith("{")  # ... not the JSON
    assert leftovers(out) == []


def test_output_quiet_prints_nothing(tmp_path: Path) -> None:
    config = hand_case(tmp_path)
    target = tmp_path / "report.json"
    result = invoke("run", config, "-f", "json", "-o", target, "--quiet")
    assert result.exit_code == 0
    assert result.stdout == ""
    assert result.stderr == ""
    assert (
        json.loads(target.read_text(encoding="utf-8"))["models"]["model"]["metrics"]["precision@1"]
        == 0.5
    )


def test_output_table_file(tmp_path: Path) -> None:
    config = hand_case(tmp_path, gates={"precision@1": {"min": 0.5}})
    target = tmp_path / "report.txt"
    result = invoke("run", config, "--output", target, "--quiet")
    assert result.exit_code == 0
    assert result.stdout == ""
    text = target.read_text(encoding="utf-8")
    assert "\x1b[" not in text  # no colour codes in a file
    assert "│ precision@1 │ 0.5000 │ ok >= 0.5 │" in text
    assert "│ ndcg@2      │ 0.6220 │           │" in text
    assert "users: 2 evaluated" in text
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "tie_break=item_desc" in text


def test_output_replaces_an_earlier_report(tmp_path: Path) -> None:
    config = hand_case(tmp_path / "in")
    out = tmp_path / "out"
    target = write(out / "report.json", "an earlier report\n")
    result = invoke("run", config, "-f", "json", "-o", target, "-q")
    assert result.exit_code == 0
    assert (
        json.loads(target.read_text(encoding="utf-8"))["models"]["model"]["metrics"]["precision@1"]
        == 0.5
    )
    assert sorted(p.name for p in out.iterdir()) == ["report.json"]


def test_output_section_of_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "project"
    (folder / "reports").mkdir(parents=True)
    config = hand_case(folder, output={"format": "json", "path": "reports/latest.json"})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # output.path is relative to the config's folder
    result = invoke("run", config)
    assert result.exit_code == 0
    report = json.loads((folder / "reports" / "latest.json").read_text(encoding="utf-8"))
    assert report["models"]["model"]["metrics"]["ndcg@2"] == pytest.approx(NDCG_2)
    assert report["config"]["output"] == {"format": "json", "path": "reports/latest.json"}
    assert list(elsewhere.iterdir()) == []


def test_output_format_json_in_config_prints_json(tmp_path: Path) -> None:
    result = invoke("run", hand_case(tmp_path, output={"format": "json"}))
    assert result.exit_code == 0
    assert json.loads(result.stdout)["models"]["model"]["metrics"]["precision@1"] == 0.5


def test_command_line_overrides_the_output_section(tmp_path: Path) -> None:
    config = hand_case(tmp_path, output={"format": "json", "path": "from_config.json"})
    result = invoke("run", config, "--format", "table", "--output", tmp_path / "cli.txt", "-q")
    assert result.exit_code == 0
    assert not (tmp_path / "from_config.json").exists()
    assert "│ precision@1 │ 0.5000 │" in (tmp_path / "cli.txt").read_text(encoding="utf-8")


# --- gates -----------------------------------------------------------------------------


def test_failing_gate_exits_1_and_the_table_says_by_how_much(tmp_path: Path) -> None:
    config = hand_case(tmp_path, gates={"precision@1": {"min": 0.6}, "ndcg@2": {"min": 0.1}})
    result = invoke("run", config)
    assert_no_traceback(result)
    assert result.exit_code == 1
    assert "│ precision@1 │ 0.5000 │ FAIL >= 0.6 │" in result.stdout
    assert "│ ndcg@2      │ 0.6220 │ ok >= 0.1   │" in result.stdout
    assert "gate failed: precision@1 = 0.5, required >= 0.6: FAILED by 0.1" in result.stdout
    assert "gate failed: ndcg@2" not in result.stdout


def test_failing_gate_with_json_reports_on_stderr(tmp_path: Path) -> None:
    config = hand_case(tmp_path, gates={"ndcg@2": {"max": 0.5}})
    result = invoke("run", config, "--format", "json")
    assert result.exit_code == 1
    failed_by = NDCG_2 - 0.5
    assert result.stderr == (
        f"gate failed: ndcg@2 = {NDCG_2:.6g}, required <= 0.5: FAILED by {failed_by:.6g}\n"
    )
    assert "FAILED by 0.122038" in result.stderr
    report = json.loads(result.stdout)
    assert report["gates"]["passed"] is False
    [gate] = report["gates"]["results"]
    assert (gate["metric"], gate["bound"], gate["passed"]) == ("ndcg@2", "max", False)
    assert gate["margin"] == pytest.approx(-failed_by)


def test_failing_gate_still_writes_the_report(tmp_path: Path) -> None:
    config = hand_case(tmp_path, gates={"precision@1": {"min": 0.75}})
    target = tmp_path / "report.json"
    result = invoke("run", config, "-f", "json", "-o", target, "--quiet")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "gate failed: precision@1 = 0.5, required >= 0.75: FAILED by 0.25" in result.stderr
    assert json.loads(target.read_text(encoding="utf-8"))["gates"]["passed"] is False


def test_gate_with_min_and_max(tmp_path: Path) -> None:
    config = hand_case(tmp_path, gates={"precision@1": {"min": 0.4, "max": 0.45}})
    report = run_json(config, expect=1)
    results = {(g["bound"], g["passed"]) for g in report["gates"]["results"]}
    assert results == {("min", True), ("max", False)}


@pytest.mark.parametrize(
    ("gate", "canonical"),
    [("ap@10", "map@10"), ("AP@10", "map@10"), ("hr@1", "hit_rate@1"), ("rr@2", "mrr@2")],
)
def test_gate_written_with_an_alias(tmp_path: Path, gate: str, canonical: str) -> None:
    config = hand_case(
        tmp_path, metrics=["map@10", "hit_rate@1", "mrr@2"], gates={gate: {"min": 0.99}}
    )
    report = run_json(config, expect=1)  # every value here is below 0.99
    [result] = report["gates"]["results"]
    assert result["metric"] == canonical
    assert result["value"] == report["models"]["model"]["metrics"][canonical]


def test_metric_written_with_an_alias_is_reported_by_its_name(tmp_path: Path) -> None:
    report = run_json(hand_case(tmp_path, metrics=["ap", "hr@1", "rprec"]))
    assert list(report["models"]["model"]["metrics"]) == ["map", "hit_rate@1", "r_precision"]
    assert report["models"]["model"]["metrics"]["map"] == pytest.approx(MAP_ALL)


# --- other commands --------------------------------------------------------------------


def test_metrics_command_lists_every_metric() -> None:
    result = invoke("metrics", env={"COLUMNS": "1000"})  # wide enough for no cell to wrap
    assert result.exit_code == 0
    names = re.findall(r"^│ (\w+(?:@k)?) ", result.stdout, flags=re.MULTILINE)
    expected = [d.name + ("@k" if d.takes_cutoff else "") for d in REGISTRY.values()]
    assert names == expected
    for definition in REGISTRY.values():
        assert definition.summary in result.stdout
        for alias in definition.aliases:
            assert alias in result.stdout
        for param in definition.params:
            assert f"{param.name}: {param.doc}" in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize("name", list(REGISTRY))
def test_metrics_command_shows_each_formula(name: str) -> None:
    result = invoke("metrics", env={"COLUMNS": "1000"})  # wide enough for no cell to wrap
    assert result.exit_code == 0
    assert REGISTRY[name].formula in result.stdout


def test_version() -> None:
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout == f"receval {__version__}\n"
    assert __version__ == importlib.metadata.version("receval")


# --- the quickstart --------------------------------------------------------------------


def test_quickstart_config_exits_0(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # its paths are relative to its own folder, not the cwd
    report = run_json(QUICKSTART)
    assert report["gates"]["passed"] is True
    assert [g["metric"] for g in report["gates"]["results"]] == ["ndcg@10", "precision@5"]
    assert report["models"]["model"]["metrics"]["ndcg@10(gain=exponential)"] > 0
    assert (
        len(report["models"]["model"]["metrics"]) == 6 * 3 + 2
    )  # six metrics at 5, 10, 20; r_precision; one
    assert report["models"]["model"]["users"]["evaluated"] == 200
    assert report["models"]["model"]["users"]["only_in_predictions"] == 10
    assert report["models"]["model"]["users"]["counted_as_zero"]["no_recommendations"] == 5
    assert report["conventions"]["relevance_threshold"] == 4.0
    table = invoke("run", QUICKSTART)
    assert table.exit_code == 0
    assert "ndcg@10(gain=exponential)" in table.stdout


def test_sample_lists_file_gives_the_quickstart_numbers(tmp_path: Path) -> None:
    """predictions_lists.jsonl is predictions.csv as one ranked list per user."""
    truth = {
        "path": str(ROOT / "sample_data" / "ground_truth.parquet"),
        "columns": {"user": "user_id", "item": "item_id", "relevance": "rating"},
    }
    common = {"ground_truth": truth, "metrics": ["ndcg", "map", "recall"], "cutoffs": [5, 20]}
    by_score = write_config(
        tmp_path,
        {
            "predictions": {
                "path": str(ROOT / "sample_data" / "predictions.csv"),
                "columns": {"user": "user_id", "item": "item_id", "score": "score"},
            },
            **common,
        },
        "scores.yaml",
    )
    by_list = write_config(
        tmp_path,
        {
            "predictions": {
                "path": str(ROOT / "sample_data" / "predictions_lists.jsonl"),
                "columns": {"user": "user_id", "items": "items"},
            },
            **common,
        },
        "lists.yaml",
    )
    scores, lists = run_json(by_score), run_json(by_list)
    assert lists["models"]["model"]["inputs"]["predictions"]["layout"] == "items"
    assert lists["models"]["model"]["metrics"] == pytest.approx(
        scores["models"]["model"]["metrics"], abs=1e-12
    )
    assert lists["models"]["model"]["users"] == scores["models"]["model"]["users"]


# --- metric lists ----------------------------------------------------------------------


def test_cutoffs_shorthand_expands_metrics(tmp_path: Path) -> None:
    config = hand_case(
        tmp_path, cutoffs=[1, 2], metrics=["precision", "ndcg", "r_precision", "map@all", "mrr@3"]
    )
    report = run_json(config)
    assert list(report["models"]["model"]["metrics"]) == [
        "precision@1",
        "precision@2",
        "ndcg@1",
        "ndcg@2",
        "r_precision",  # takes no cutoff
        "map",  # map@all: the whole list, not expanded
        "mrr@3",  # an explicit cutoff wins
    ]
    expected = {
        "precision@1": 0.5,
        "precision@2": (1 / 2 + 1 / 2) / 2,
        "ndcg@1": (0 + 1) / 2,
        "ndcg@2": NDCG_2,
        "r_precision": (0 / 1 + 1 / 2) / 2,
        "map": MAP_ALL,
        "mrr@3": (1 / 2 + 1) / 2,
    }
    assert report["models"]["model"]["metrics"] == pytest.approx(expected, abs=1e-12)
    assert report["config"]["metrics"] == list(expected)


def test_metric_mapping_entries(tmp_path: Path) -> None:
    write(tmp_path / "predictions.csv", PREDICTIONS_CSV)
    write(tmp_path / "truth.csv", GRADED_TRUTH_CSV)
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": "predictions.csv"},
            "ground_truth": {"path": "truth.csv", "columns": {"relevance": "grade"}},
            "cutoffs": [5],
            "metrics": [
                "ndcg@2",
                {"name": "ndcg", "cutoffs": [1, 2], "gain": "exponential"},
                {"name": "precision", "k": 1},
                {"name": "mrr"},  # no cutoff of its own: takes the shorthand
            ],
        },
    )
    report = run_json(config)
    assert report["models"]["model"]["metrics"] == pytest.approx(
        {
            "ndcg@2": GRADED_NDCG_2,
            "ndcg@1(gain=exponential)": GRADED_NDCG_1_EXP,
            "ndcg@2(gain=exponential)": GRADED_NDCG_2_EXP,
            "precision@1": 0.5,
            "mrr@5": (1 / 2 + 1) / 2,
        },
        abs=1e-12,
    )
    assert list(report["models"]["model"]["metrics"])[1] == "ndcg@1(gain=exponential)"


def test_spec_string_with_parameters_equals_the_mapping(tmp_path: Path) -> None:
    write(tmp_path / "predictions.csv", PREDICTIONS_CSV)
    write(tmp_path / "truth.csv", GRADED_TRUTH_CSV)
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": "predictions.csv"},
            "ground_truth": {"path": "truth.csv", "columns": {"relevance": "grade"}},
            "metrics": [
                "ndcg@2(gain=exponential)",
                {"name": "ndcg", "k": 2, "gain": "exponential"},  # the same metric, once
            ],
        },
    )
    report = run_json(config)
    assert report["models"]["model"]["metrics"] == pytest.approx(
        {"ndcg@2(gain=exponential)": GRADED_NDCG_2_EXP}
    )


# --- layouts and ids -------------------------------------------------------------------


def _write_frame(frame: pl.DataFrame, path: Path) -> None:
    if path.suffix == ".parquet":
        frame.write_parquet(path)
    elif path.suffix == ".jsonl":
        frame.write_ndjson(path)
    else:
        frame.write_csv(path)


RANK_CSV = "user,item,rank\nu1,c,3\nu1,a,1\nu1,b,2\nu2,e,2\nu2,d,1\n"
LISTS = pl.DataFrame({"user": ["u1", "u2"], "items": [["a", "b", "c"], ["d", "e"]]})


@pytest.mark.parametrize(
    ("name", "columns", "layout"),
    [
        ("scores.csv", {"score": "score"}, "score"),
        ("scores_default_names.csv", {}, "score"),
        ("ranks.csv", {"rank": "rank"}, "rank"),
        ("lists.jsonl", {"items": "items"}, "items"),
        ("lists.parquet", {"items": "items"}, "items"),
        ("lists.csv", {"items": "items"}, "items"),
    ],
)
def test_prediction_layouts(
    tmp_path: Path, name: str, columns: dict[str, str], layout: str
) -> None:
    path = tmp_path / name
    if layout == "score":
        write(path, PREDICTIONS_CSV)
    elif layout == "rank":
        write(path, RANK_CSV)
    elif path.suffix == ".csv":
        write(path, "user,items\nu1,a|b|c\nu2, d | e \n")
    else:
        _write_frame(LISTS, path)
    write(tmp_path / "truth.csv", TRUTH_CSV)
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": name, "columns": columns},
            "ground_truth": {"path": "truth.csv"},
            "metrics": ["precision@1", "ndcg@2", "map"],
        },
    )
    report = run_json(config)
    assert report["models"]["model"]["inputs"]["predictions"]["layout"] == layout
    assert report["models"]["model"]["metrics"] == pytest.approx(
        {"precision@1": PRECISION_1, "ndcg@2": NDCG_2, "map": MAP_ALL}, abs=1e-12
    )
    assert report["models"]["model"]["users"]["evaluated"] == 2


GRADED_LISTS = pl.DataFrame(
    {"user": ["u1", "u2"], "items": [["b", "c"], ["d", "f"]], "grades": [[3, 1], [1, 2]]}
)


# binary lists u1 {b, c}, u2 {d, f}: the ideal lists have two items each
BINARY_LISTS_NDCG_2 = (INV_LOG2_3 / (1 + INV_LOG2_3) + 1 / (1 + INV_LOG2_3)) / 2


@pytest.mark.parametrize(
    ("name", "content", "columns", "layout", "rows", "ndcg"),
    [
        ("truth.csv", TRUTH_CSV, {}, "binary", 3, NDCG_2),
        ("truth.csv", GRADED_TRUTH_CSV, {"relevance": "grade"}, "graded", 4, GRADED_NDCG_2),
        (
            "truth.csv",
            GRADED_TRUTH_CSV.replace("grade", "relevance"),
            {},  # a column named relevance is used without being named
            "graded",
            4,
            GRADED_NDCG_2,
        ),
        (
            "truth.parquet",
            GRADED_LISTS.drop("grades"),
            {"items": "items"},
            "items",
            2,
            BINARY_LISTS_NDCG_2,
        ),
        (
            "truth.jsonl",
            GRADED_LISTS,
            {"items": "items", "relevances": "grades"},
            "items",
            2,
            GRADED_NDCG_2,
        ),
        (
            "truth.csv",
            "user,items,grades\nu1,b|c,3|1\nu2,d|f,1|2\n",
            {"items": "items", "relevances": "grades"},
            "items",
            2,
            GRADED_NDCG_2,
        ),
    ],
)
def test_ground_truth_layouts(
    tmp_path: Path,
    name: str,
    content: str | pl.DataFrame,
    columns: dict[str, str],
    layout: str,
    rows: int,
    ndcg: float,
) -> None:
    write(tmp_path / "predictions.csv", PREDICTIONS_CSV)
    path = tmp_path / name
    if isinstance(content, str):
        write(path, content)
    else:
        _write_frame(content, path)
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": "predictions.csv"},
            "ground_truth": {"path": name, "columns": columns},
            "metrics": ["precision@1", "ndcg@2"],
        },
    )
    report = run_json(config)
    assert report["models"]["model"]["inputs"]["ground_truth"]["layout"] == layout
    assert report["models"]["model"]["inputs"]["ground_truth"]["rows"] == rows
    assert report["models"]["model"]["metrics"]["precision@1"] == pytest.approx(0.5)
    assert report["models"]["model"]["metrics"]["ndcg@2"] == pytest.approx(ndcg, abs=1e-12)


def test_integer_ids(tmp_path: Path) -> None:
    write(
        tmp_path / "predictions.csv",
        "user,item,score\n1,10,0.9\n1,11,0.8\n1,12,0.7\n2,13,0.9\n2,14,0.5\n",
    )
    truth = pl.DataFrame({"user": [1, 2, 2], "item": [11, 13, 15]})
    truth.write_parquet(tmp_path / "truth.parquet")
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": "predictions.csv"},
            "ground_truth": {"path": "truth.parquet"},
            "metrics": ["precision@1", "ndcg@2"],
        },
    )
    report = run_json(config)
    assert report["models"]["model"]["metrics"] == pytest.approx(
        {"precision@1": PRECISION_1, "ndcg@2": NDCG_2}
    )


def test_integer_ids_match_the_same_ids_written_as_text(tmp_path: Path) -> None:
    write(tmp_path / "predictions.csv", "user,item,score\n1,10,0.9\n1,11,0.8\n2,13,0.9\n")
    write(
        tmp_path / "truth.jsonl",
        '{"user": "1", "item": "11"}\n{"user": "2", "item": "13"}\n{"user": "2", "item": "15"}\n',
    )
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": "predictions.csv"},
            "ground_truth": {"path": "truth.jsonl"},
            "metrics": ["precision@1", "ndcg@2"],
        },
    )
    report = run_json(config)
    assert report["models"]["model"]["users"]["in_both"] == 2
    assert report["models"]["model"]["metrics"] == pytest.approx(
        {"precision@1": PRECISION_1, "ndcg@2": NDCG_2}
    )


def test_string_ids_keep_leading_zeros(tmp_path: Path) -> None:
    write(tmp_path / "predictions.jsonl", '{"user": "007", "item": "a", "score": 1.0}\n')
    write(tmp_path / "truth.jsonl", '{"user": "007", "item": "a"}\n{"user": "7", "item": "a"}\n')
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": "predictions.jsonl"},
            "ground_truth": {"path": "truth.jsonl"},
            "metrics": ["precision@1"],
        },
    )
    report = run_json(config)
    # "007" and "7" are different users: one hit, one user with no recommendation
    assert report["models"]["model"]["users"]["in_ground_truth"] == 2
    assert report["models"]["model"]["users"]["counted_as_zero"]["no_recommendations"] == 1
    assert report["models"]["model"]["metrics"]["precision@1"] == pytest.approx(0.5)


# --- users -----------------------------------------------------------------------------


def test_users_only_in_predictions_are_counted_not_evaluated(tmp_path: Path) -> None:
    write(tmp_path / "predictions.csv", PREDICTIONS_CSV + "u3,b,0.9\nu3,d,0.8\n")
    write(tmp_path / "truth.csv", TRUTH_CSV + "u4,a\n")
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": "predictions.csv"},
            "ground_truth": {"path": "truth.csv"},
            "metrics": ["precision@1", "ndcg@2"],
        },
    )
    report = run_json(config)
    assert report["models"]["model"]["users"] == {
        "in_ground_truth": 3,
        "in_predictions": 3,
        "in_both": 2,
        "evaluated": 3,
        "counted_as_zero": {"no_recommendations": 1, "no_relevant": 0},
        "skipped": {"no_relevant": 0, "no_recommendations": 0},
        "only_in_predictions": 1,
    }
    # u4 counts 0 (no recommendation); u3 is not in the mean
    assert report["models"]["model"]["metrics"] == pytest.approx(
        {"precision@1": (0 + 1 + 0) / 3, "ndcg@2": NDCG_2 * 2 / 3}, abs=1e-12
    )
    assert report["models"]["model"]["inputs"]["predictions"]["rows"] == 7
    table = invoke("run", config).stdout
    assert (
        "users: 3 evaluated (1 with no recommendation, counted as 0); "
        "1 only in predictions (not evaluated)"
    ) in table


# --- conventions -----------------------------------------------------------------------


def test_conventions_are_echoed(tmp_path: Path) -> None:
    chosen: dict[str, Any] = {
        "relevance_threshold": 2,
        "tie_break": "item_asc",
        "gain": "exponential",
        "users_without_relevant": "zero",
        "duplicates": "first",
    }
    write(tmp_path / "predictions.csv", PREDICTIONS_CSV)
    write(tmp_path / "truth.csv", GRADED_TRUTH_CSV)
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": "predictions.csv"},
            "ground_truth": {"path": "truth.csv", "columns": {"relevance": "grade"}},
            "metrics": ["precision@1", "ndcg@2"],
            "conventions": chosen,
        },
    )
    report = run_json(config)
    expected = {**DEFAULT_CONVENTIONS, **chosen, "relevance_threshold": 2.0}
    assert report["conventions"] == expected
    assert report["config"]["conventions"] == expected
    # threshold 2: u1 relevant {b}, u2 relevant {f}; both kept (users_without_relevant=zero)
    assert report["models"]["model"]["metrics"]["precision@1"] == 0.0
    assert report["models"]["model"]["metrics"]["ndcg@2"] == pytest.approx(
        GRADED_NDCG_2_EXP, abs=1e-12
    )
    table = invoke("run", config).stdout
    assert "relevance_threshold=2.0, tie_break=item_asc" in table
    assert "gain=exponential" in table
    assert "duplicates=first" in table


def test_conventions_change_the_numbers(tmp_path: Path) -> None:
    """A relevance threshold above u2's grades leaves u2 out of the mean (skip)."""
    write(tmp_path / "predictions.csv", PREDICTIONS_CSV)
    write(tmp_path / "truth.csv", GRADED_TRUTH_CSV)
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": "predictions.csv"},
            "ground_truth": {"path": "truth.csv", "columns": {"relevance": "grade"}},
            "metrics": ["precision@2", "mrr"],
            "conventions": {"relevance_threshold": 3},
        },
    )
    report = run_json(config)
    assert report["models"]["model"]["users"]["evaluated"] == 1
    assert report["models"]["model"]["users"]["skipped"]["no_relevant"] == 1
    assert report["models"]["model"]["metrics"] == pytest.approx({"precision@2": 0.5, "mrr": 0.5})
    assert math.isclose(report["conventions"]["relevance_threshold"], 3.0)


def test_metrics_command_shows_one_metric_in_full() -> None:
    result = invoke("metrics", "ap")  # an alias names the metric too
    assert result.exit_code == 0, result.stderr
    out = " ".join(result.stdout.split())
    assert out.startswith("map Average precision")
    assert "better: higher" in out
    assert "(1/1 + 2/4 + 3/5) / 3 = 0.7" in out  # the docstring's worked example
    assert "denominator" in out
    assert "min_k_relevant" in out
    assert "conventions.ap_denominator" in out
    # how each preset defines it
    assert "trec_eval" in out
    assert "map_cut_k" in out
    assert "denominator=relevant" in out


def test_metrics_command_marks_counts_and_direction() -> None:
    out = invoke("metrics").stdout
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if line.count("│") > 3}
    assert "count" in rows["num_rel"]
    assert "higher" in rows["ndcg@k"]
    assert "trec_eval: ndcg_cut_k" in rows["ndcg@k"]  # how each preset's tool names it


def test_metrics_command_unknown_metric() -> None:
    result = invoke("metrics", "ndgc")
    assert_user_error(result, "unknown metric 'ndgc'", "Did you mean 'ndcg'")


def test_python_dash_m_runs_the_cli() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "receval_cli", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0
    assert done.stdout.strip() == f"receval {__version__}"
