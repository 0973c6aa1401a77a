"""`import receval` and the notebook conveniences: the package under the
distribution's name, the Report's tables and HTML, misspelt keywords, guessed columns,
and the README's and docs/python-api.md's Python examples run as written."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import golden_files
import polars as pl
import pytest
from cli_helpers import invoke, run_json
from engine_parity import POLARS_ENGINES

import receval
import receval_cli

ROOT = Path(__file__).resolve().parents[2]

PREDICTIONS = pl.DataFrame(
    {
        "user": [9, 9, 9, 10, 10, 100],
        "item": [10, 100, 9, 9, 10, 1000],
        "score": [0.9, 0.8, 0.8, 0.5, 0.4, 0.3],
    }
)
TRUTH = pl.DataFrame(
    {"user": [9, 9, 10, 100], "item": [100, 9, 10, 7], "relevance": [2.0, 1.0, 1.0, 3.0]}
)
METRICS = ["ndcg@2", "precision@1", "map", "recall@3", "mrr", "hit_rate@1"]


def test_import_receval_is_the_api() -> None:
    assert receval.evaluate is receval_cli.evaluate
    assert receval.relstrings is receval_cli.relstrings
    assert receval.Report is receval_cli.results.report.Report
    assert issubclass(receval.InputError, receval.RecEvalError)
    assert receval.__version__ == receval_cli.__version__
    assert set(receval.__all__) <= set(dir(receval))
    with pytest.raises(AttributeError, match="no attribute 'evalute'"):
        receval.evalute  # noqa: B018


def test_import_receval_loads_nothing_heavy() -> None:
    """The names come on first use: importing the package alone loads no polars."""
    code = "import sys, receval; print('polars' in sys.modules, 'receval_cli.api' in sys.modules)"
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert found.stdout.split() == ["False", "False"]


def test_both_packages_are_typed() -> None:
    """PEP 561 markers, shipped as package data."""
    for package in ("receval", "receval_cli"):
        assert (ROOT / package / "py.typed").is_file()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'receval = ["py.typed"]' in pyproject
    assert '"receval"]' in pyproject  # found by setuptools


def report() -> receval.Report:
    return receval.evaluate(PREDICTIONS, TRUTH, METRICS)


def test_the_report_is_one_short_line() -> None:
    text = repr(report())
    assert len(text) < 200
    assert text.startswith("Report(ndcg@2=")
    assert "... 2 more" in text
    assert text.endswith("; 3 users evaluated)")


def test_to_polars_and_to_pandas_hold_every_metric() -> None:
    found = report()
    table = found.to_polars()
    assert table.columns == ["metric", "value"]
    assert dict(table.iter_rows()) == found.metrics
    frame = found.to_pandas()
    assert dict(zip(frame["metric"], frame["value"], strict=True)) == found.metrics


def test_to_polars_has_the_intervals_where_the_report_holds_them() -> None:
    found = report()
    intervals = {name: [value - 0.1, value + 0.1] for name, value in found.metrics.items() if value}
    with_them = dataclasses.replace(found, confidence={"intervals": intervals})
    table = with_them.to_polars()
    assert table.columns == ["metric", "value", "low", "high"]
    for metric, value, low, high in table.iter_rows():
        if metric in intervals:
            assert [low, high] == intervals[metric]
        else:
            assert (low, high) == (None, None), value


def test_a_notebook_shows_the_html_reports_tables() -> None:
    found = report()
    html = found._repr_html_()
    assert html.count("<table>") == 1
    for metric, value in found.metrics.items():
        assert f"<code>{metric}</code>" in html
        assert f'title="{value!r}"' in html
    assert "<p>users: 3 evaluated</p>" in html  # the users line


@pytest.mark.parametrize(
    ("function", "wrong", "near"),
    [
        (receval.evaluate, "metric", "metrics"),
        (receval.evaluate, "cutofs", "cutoffs"),
        (receval.evaluate, "prediction_column", "prediction_columns"),
        (receval.relstrings, "lenght", "length"),
    ],
)
def test_a_misspelt_keyword_names_the_nearest(function: Any, wrong: str, near: str) -> None:
    arguments: dict[str, Any] = {wrong: 1}
    if function is receval.evaluate and wrong != "metric":
        arguments["metrics"] = ["mrr"]
    with pytest.raises(
        TypeError, match=rf"unexpected keyword argument '{wrong}'\. Did you mean '{near}'\?"
    ):
        function(PREDICTIONS, TRUTH, **arguments)


def test_a_keyword_nothing_like_any_lists_them_all() -> None:
    with pytest.raises(TypeError, match="Its arguments: predictions, ground_truth, metrics, "):
        receval.evaluate(PREDICTIONS, TRUTH, ["mrr"], zzz=1)


RENAMED = {"user": "user_id", "item": "item_id", "score": "prediction"}


def renamed() -> tuple[pl.DataFrame, pl.DataFrame]:
    predictions = PREDICTIONS.rename(RENAMED)
    truth = TRUTH.rename({"user": "user_id", "item": "item_id", "relevance": "rating"})
    return predictions, truth


def test_columns_are_guessed_as_init_guesses_them() -> None:
    """user_id, item_id, prediction and rating: the values of the usual names, and a
    warning for each input that says what was chosen and how to choose it."""
    predictions, truth = renamed()
    with pytest.warns(UserWarning, match="columns guessed") as seen:
        guessed = receval.evaluate(predictions, truth, METRICS)
    assert guessed.metrics == report().metrics
    assert {w.filename for w in seen} == {__file__}  # the caller's line, not receval's
    texts = [str(w.message) for w in seen]
    assert texts[0].startswith(
        "prediction_columns guessed: user <- user_id, item <- item_id, score <- prediction."
    )
    assert texts[0].endswith(
        "Give prediction_columns={'user': 'user_id', 'item': 'item_id', 'score': 'prediction'} "
        "to choose them."
    )
    assert texts[1].startswith(
        "truth_columns guessed: user <- user_id, item <- item_id, relevance <- rating."
    )
    assert "Check: grades from 1 to 3" in texts[1]


def test_columns_are_guessed_from_a_file_and_a_pandas_frame(tmp_path: Path) -> None:
    predictions, truth = renamed()
    path = tmp_path / "truth.parquet"
    truth.write_parquet(path)
    with pytest.warns(UserWarning, match="columns guessed") as seen:
        found = receval.evaluate(predictions.to_pandas(), path, METRICS)
    assert [str(w.message).split(":")[0] for w in seen] == [
        "prediction_columns guessed",
        "truth_columns guessed",
    ]
    assert found.metrics == report().metrics


def test_the_usual_names_or_a_mapping_given_are_not_guessed() -> None:
    predictions, truth = renamed()
    mapping = {"user": "user_id", "item": "item_id", "relevance": "rating"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails
        assert receval.evaluate(PREDICTIONS, TRUTH, METRICS).metrics == report().metrics
        given = receval.evaluate(
            predictions, truth, METRICS, prediction_columns=RENAMED, truth_columns=mapping
        )
    assert given.metrics == report().metrics


def test_the_truths_guess_prefers_the_predictions_names() -> None:
    """A truth with both `user_id` and `uid`: the predictions' choice wins."""
    predictions, truth = renamed()
    truth = truth.with_columns(uid=pl.lit(1))
    with pytest.warns(UserWarning, match="columns guessed") as seen:
        receval.evaluate(predictions, truth, METRICS)
    assert "user <- user_id" in str(seen[1].message)


def test_an_input_that_cannot_be_read_gets_the_readers_error(tmp_path: Path) -> None:
    with pytest.raises(receval.InputError, match="Check the path given as predictions"):
        receval.evaluate(tmp_path / "missing.csv", TRUTH, METRICS)


def python_blocks(path: Path, after: str | None = None) -> list[str]:
    """The ```python blocks of a Markdown file (from the heading `after` on)."""
    text = path.read_text(encoding="utf-8")
    if after is not None:
        text = text[text.index(after) :]
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


def test_the_readmes_example_runs_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's Python block, from the checkout's root (its paths are the sample
    data's), and the line its comment shows. (docs/python-api.md's blocks: test_docs.py.)"""
    blocks = python_blocks(ROOT / "README.md", "### In Python: `import receval`")
    assert blocks
    monkeypatch.chdir(ROOT)
    namespace: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the guesses the README tells of
        for block in blocks:
            exec(compile(block, "README.md example", "exec"), namespace)
    found = namespace["report"]
    assert isinstance(found, receval.Report)
    line = repr(found)
    assert line.startswith("Report(ndcg@5=0.5526, ndcg@10=0.5348, precision@5=0.516, ")
    assert line.endswith("; 200 users evaluated)")
    assert namespace["table"].height == 6


# --- receval.run: a config as `receval run` runs it ------------------------------------

COMPARE = ROOT / "configs" / "compare.yaml"


def without_timing(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in ("elapsed_seconds", "run")}


def test_run_gives_the_clis_report() -> None:
    """Two models, bootstrap intervals, paired tests and gates: the same JSON as the CLI
    (every value, the comparisons' p-values, the gates), writing nothing."""
    result = receval.run(COMPARE)
    assert isinstance(result, receval.RunReport)
    assert without_timing(result.to_dict()) == without_timing(run_json(COMPARE))


def test_run_takes_the_config_as_a_mapping(monkeypatch: pytest.MonkeyPatch) -> None:
    """The YAML's keys; relative paths from the working directory; --preset's override."""
    monkeypatch.chdir(ROOT)
    config = {
        "predictions": {
            "path": "sample_data/predictions.csv",
            "columns": {"user": "user_id", "item": "item_id"},
        },
        "ground_truth": {
            "path": "sample_data/ground_truth.parquet",
            "columns": {"user": "user_id", "item": "item_id", "relevance": "rating"},
        },
        "metrics": ["ndcg@10", "map@10"],
        "gates": {"ndcg@10": {"min": 0.99}},
    }
    result = receval.run(config)
    assert not result.passed
    assert repr(result) == "RunReport(models model; gates 1 failed)"
    direct = receval.evaluate(
        "sample_data/predictions.csv",
        "sample_data/ground_truth.parquet",
        ["ndcg@10", "map@10"],
        prediction_columns={"user": "user_id", "item": "item_id"},
        truth_columns={"user": "user_id", "item": "item_id", "relevance": "rating"},
    )
    assert result.models["model"].metrics == direct.metrics
    trec = receval.run(config, preset="trec_eval")
    assert trec.conventions["preset"] == "trec_eval"
    assert config["metrics"] == ["ndcg@10", "map@10"]  # the mapping is not changed


def test_a_runs_tables() -> None:
    result = receval.run(COMPARE)
    table = result.to_polars()
    assert table.columns == ["model", "metric", "value", "low", "high"]
    assert table.height == 12
    for name, report in result.models.items():
        mine = table.filter(pl.col("model") == name)
        assert dict(mine.select("metric", "value").iter_rows()) == report.metrics
    assert result.to_pandas().shape == (12, 5)
    html = result._repr_html_()
    assert html is not None
    assert "<th>popular</th>" in html  # a column per model
    assert html.count("<table>") >= 3  # metrics, gates, comparisons


def test_a_bad_config_names_its_key() -> None:
    with pytest.raises(receval.ConfigError, match="metrics"):
        receval.run({"predictions": {"path": "p.csv"}, "ground_truth": {"path": "t.csv"}})
    with pytest.raises(TypeError, match="Did you mean 'preset'"):
        receval.run(COMPARE, presets="trec_eval")


def test_the_documented_run_example_runs_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/python-api.md's `receval.run` block, from the checkout's root."""
    blocks = python_blocks(ROOT / "docs" / "python-api.md")
    (block,) = [b for b in blocks if 'receval.run("configs/compare.yaml")' in b]
    monkeypatch.chdir(ROOT)
    namespace: dict[str, Any] = {"receval": receval}
    exec(compile(block, "docs/python-api.md example", "exec"), namespace)
    result = namespace["result"]
    assert result.passed  # as the block's comment says
    assert result.to_polars().columns == ["model", "metric", "value", "low", "high"]


# --- receval.compare: saved reports side by side ---------------------------------------


def test_compare_gives_the_clis_comparison(tmp_path: Path) -> None:
    saved = []
    for config in (ROOT / "configs" / "quickstart.yaml", COMPARE):
        path = tmp_path / f"{config.stem}.json"
        result = invoke("run", config, "-q", "--format", "json", "--output", path)
        assert result.exit_code == 0, result.stderr
        saved.append(path)
    found = receval.compare(*saved, metrics=["ndcg@10", "map@10"])
    cli = invoke(
        "compare", *saved, "--metric", "ndcg@10", "--metric", "map@10", "--format", "json"
    )  # fmt: skip
    assert cli.exit_code == 0, cli.stderr
    assert found.to_dict() == json.loads(cli.stdout)
    assert repr(found) == (
        "ReportComparison(2 metrics; columns quickstart, compare:popular, compare:model; "
        "baseline quickstart)"
    )
    table = found.to_polars()
    assert table.height == 6
    row = table.filter(pl.col("column") == "compare:popular", pl.col("metric") == "ndcg@10")
    cell = found.metrics["ndcg@10"]["compare:popular"]
    assert cell is not None
    assert row.row(0)[2:] == (cell.value, cell.low, cell.high, cell.delta, cell.relative_delta)
    assert "<table" in found._repr_html_()
    assert found.to_pandas().shape == (6, 7)
    other = tmp_path / "trec.json"
    config = ROOT / "configs" / "quickstart.yaml"
    result = invoke("run", config, "-q", "--preset", "trec_eval", "--output", other)
    assert result.exit_code == 0, result.stderr
    with pytest.raises(receval.RecEvalError, match="conventions"):
        receval.compare(saved[0], other)  # refused as the CLI refuses it
    both = receval.compare(saved[0], other, allow_different_conventions=True)
    assert both.conventions_differ


def frames_config(folder: Path) -> dict[str, Any]:
    """configs/segments.yaml (two models, segments, intervals, paired tests, gates) with
    every input a frame: polars, pandas and lazy, all read from the sample files."""
    sample = ROOT / "sample_data"
    return {
        "predictions": {
            "columns": {"user": "user_id", "item": "item_id", "score": "score"},
            "models": {
                "popular": pl.read_csv(sample / "popular_predictions.csv"),
                "model": pl.read_csv(sample / "predictions.csv").to_pandas(),
            },
        },
        "ground_truth": {
            "path": pl.scan_parquet(sample / "ground_truth.parquet"),
            "columns": {"user": "user_id", "item": "item_id", "relevance": "rating"},
        },
        "segments": {"path": pl.read_csv(sample / "users.csv"), "columns": {"user": "user_id"}},
        "segment_by": ["country", "new_user"],
        "cutoffs": [10],
        "metrics": ["ndcg", "recall", "mrr"],
        "conventions": {"relevance_threshold": 4},
        "confidence": {"level": 0.95, "method": "bootstrap", "resamples": 200, "seed": 7},
        "comparison": {"baseline": "popular", "test": "t", "correction": "holm"},
        "gates": {
            "ndcg@10": {"min": 0.3},
            "recall@10": {"min": 0.3, "segment": "country=FR"},
        },
    }


def test_run_reads_frames_in_place_of_files(tmp_path: Path) -> None:
    """The same run from frames and from the files: every value, interval, segment,
    comparison and gate equal; the inputs' blocks name the frames."""
    from_frames = receval.run(frames_config(tmp_path)).to_dict()
    config = (ROOT / "configs" / "segments.yaml").read_text(encoding="utf-8")
    config = config.replace("resamples: 1000", "resamples: 200")
    path = tmp_path / "segments.yaml"
    path.write_text(config.replace("../sample_data/", f"{ROOT / 'sample_data'}/"), encoding="utf-8")
    from_files = run_json(path)
    for name, model in from_files["models"].items():
        mine = from_frames["models"][name]
        for block in ("metrics", "confidence", "segments", "users"):
            assert mine[block] == model[block], (name, block)
        assert mine["inputs"]["predictions"]["path"] == f"frame:predictions.models.{name}"
        assert mine["inputs"]["predictions"]["format"] == "frame"
    assert from_frames["comparisons"] == from_files["comparisons"]
    assert from_frames["gates"] == from_files["gates"]


def test_frames_and_engine_spark_are_refused() -> None:
    config = frames_config(ROOT) | {"engine": "spark"}
    with pytest.raises(receval.UsageError, match="engine: spark reads files and tables"):
        receval.run(config)


@pytest.mark.parametrize("settings", list(POLARS_ENGINES.values()), ids=list(POLARS_ENGINES))
def test_frames_run_on_every_polars_engine(tmp_path: Path, settings: dict[str, Any]) -> None:
    """Frames in place of files, on each polars engine and partitioning (engine parity's
    own list): the same report as the auto engine's, never an internal error."""
    blocks = ("metrics", "confidence", "segments", "users")
    reference = receval.run(frames_config(tmp_path)).to_dict()
    found = receval.run(frames_config(tmp_path) | settings).to_dict()
    for name, model in reference["models"].items():
        assert {b: found["models"][name][b] for b in blocks} == {b: model[b] for b in blocks}
    assert found["comparisons"] == reference["comparisons"]


@pytest.mark.parametrize("missing", ["pandas", "pyarrow"])
@pytest.mark.parametrize("make", [report, lambda: receval.run(COMPARE)])
def test_to_pandas_without_pandas_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, make: Any, missing: str
) -> None:
    """polars converts to pandas with pyarrow, which pandas does not bring: either one
    missing is said up front, with both to install."""
    import importlib.util

    found = make()
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == missing else real(name, *a)
    )
    owner = type(found).__name__
    said = rf"{owner}\.to_pandas\(\) needs pandas and pyarrow; install them \(pip install pandas"
    with pytest.raises(ImportError, match=said):
        found.to_pandas()


def test_the_typed_blocks_name_every_key_a_report_holds(tmp_path: Path) -> None:
    """Report.users, .inputs and .conventions are TypedDicts (results/blocks.py): every key
    a run's report holds is declared there, and the required ones are always present,
    whatever the engine (a partitioned run adds inputs.engine) and with tools' names."""
    from receval_cli.results.blocks import (
        ConventionsBlock,
        InputBlock,
        ToolMeasureBlock,
        UserReasons,
        UsersBlock,
    )

    predictions, truth = golden_files.frames("ties_int")
    for extra in ({}, {"partitions": 3}):
        config = {
            "predictions": {"path": predictions},
            "ground_truth": {"path": truth, "columns": {"relevance": "relevance"}},
            "metrics": ["ndcg@10", "P_5", "novelty@5"],
            "interactions": {"path": truth},
            **extra,
        }
        run = receval.run(config)
        report = run.models["model"]
        users = report.users
        assert UsersBlock.__required_keys__ <= set(users) <= set(UsersBlock.__annotations__)
        for reason in ("counted_as_zero", "skipped"):
            assert set(users[reason]) == set(UserReasons.__annotations__)  # type: ignore[literal-required]
        for block in report.inputs.values():
            assert set(block) <= set(InputBlock.__annotations__), set(block)
        assert set(report.conventions) <= set(ConventionsBlock.__annotations__)
        assert set(run.conventions) <= set(ConventionsBlock.__annotations__)
        for about in run.conventions["by_metric"].values():
            assert ToolMeasureBlock.__required_keys__ <= set(about)
            assert set(about) <= set(ToolMeasureBlock.__annotations__)
