"""`receval validate` is `receval run` without the evaluation: every config or input that
`run` refuses with exit 2 (from the config, the inputs' shapes, the outputs the config
names, the planner's checks of engines, gates, segments, baseline reports and history
stores) `validate` refuses too, with the same message.

CASES is the matrix: one case per kind of refusal, each built on the hand case
(tests/support/cli_helpers.py) with one fault. Each case is first run (it must exit 2: a case
that `run` accepts is not a refusal, and fails here), then validated. The other lists of
run's refusals check `validate` too: every `fails()` of tests/inputs/test_bad_input.py and
tests/metrics/test_beyond_errors.py, every row of the bad-input matrix
(tests/robustness/test_matrix.py: its RUN_ONLY rows say why `validate` cannot refuse
them), and the engines' refusals of the feature matrix (tests/engines/test_feature_matrix.py).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import (
    PREDICTIONS_CSV,
    TRUTH_CSV,
    assert_user_error,
    assert_validate_refuses,
    hand_case,
    invoke,
    write,
)

from receval_cli.config.loading import load_config
from receval_cli.errors import ConfigError
from receval_cli.metrics.registry import REGISTRY

Case = Callable[[Path], tuple[Path, list[str]]]

CATALOG_CSV = "item,category\na,x\nb,x\nc,y\nd,y\ne,z\nf,z\n"
USERS_CSV = "user,country\nu1,DE\nu2,FR\n"
TWO_MODELS = {"models": {"a": "predictions.csv", "b": "predictions.csv"}}


def same_refusal(config: Path, *args: str) -> str:
    """Run CONFIG (exit 2, one error line), then validate it: exit 2, the same message."""
    message = assert_user_error(invoke("run", config, "-q", *args))
    assert_validate_refuses(config, message, *args)
    return message


def _case(**extra: Any) -> Case:
    """A case of the hand case with these config keys."""

    def build(folder: Path) -> tuple[Path, list[str]]:
        return hand_case(folder, **extra), []

    return build


def _with_files(files: dict[str, str], args: tuple[str, ...] = (), **extra: Any) -> Case:
    """A case with these files written beside the hand case (a `{folder}` in an argument
    is the case's folder)."""

    def build(folder: Path) -> tuple[Path, list[str]]:
        for name, text in files.items():
            write(folder / name, text)
        return hand_case(folder, **extra), [a.format(folder=folder) for a in args]

    return build


def _saved_report(folder: Path, **extra: Any) -> Path:
    """A report of the hand case saved by `run` (its own config, its own folder)."""
    saved = folder / "saved" / "report.json"
    config = hand_case(folder / "saved", **extra)
    result = invoke("run", config, "-q", "-o", saved)
    assert result.exit_code == 0, result.output
    return saved


def _against_saved(saved_extra: dict[str, Any], **extra: Any) -> Case:
    def build(folder: Path) -> tuple[Path, list[str]]:
        saved = _saved_report(folder, **saved_extra)
        return hand_case(folder, **extra), ["--baseline-report", str(saved)]

    return build


def _history_with(name: str, content: str, **extra: Any) -> Case:
    """A history store that holds a file (`name`) besides its runs."""

    def build(folder: Path) -> tuple[Path, list[str]]:
        write(folder / "store" / name, content)
        return hand_case(folder, history="store", **extra), []

    return build


CATALOG = {"path": "catalog.csv", "columns": {"category": "category"}}
SEGMENTS = {"segments": {"path": "users.csv"}, "segment_by": ["country"]}

CASES: dict[str, Case] = {
    # metrics undefined by definition at their cutoff
    "a pairwise metric at a cutoff of 1": _with_files(
        {"catalog.csv": CATALOG_CSV},
        catalog=CATALOG,
        metrics=["intra_list_diversity@1(feature=category)"],
    ),
    "a pairwise list measure at a cutoff of 1": _case(
        predictions=TWO_MODELS, comparison={"lists": ["kendall_tau@1"]}
    ),
    "an unknown metric": _case(metrics=["ndgc@2"]),
    # metrics that need an input the config lacks
    "a catalog metric without a catalog": _case(metrics=["catalog_coverage@2"]),
    "an item-group metric without item groups": _case(metrics=["rsp@2"]),
    # engines
    "a file-order convention on Spark": _case(
        engine="spark", conventions={"tie_break": "input_order"}
    ),
    "a TREC run on Spark": _with_files(
        {"run.txt": "u1 Q0 a 1 0.9 x\nu2 Q0 d 1 0.9 x\n"},
        predictions={"path": "run.txt", "format": "trec"},
        engine="spark",
    ),
    "list comparisons under tie_break expected": _case(
        predictions=TWO_MODELS,
        comparison={"lists": ["jaccard@2"]},
        conventions={"tie_break": "expected"},
    ),
    "list comparisons against a saved report": _against_saved(
        {}, comparison={"lists": ["jaccard@2"]}
    ),
    # gates
    "a gate against a baseline with one model": _case(gates={"ndcg@2": {"max_drop": 0.1}}),
    "a gate against the baseline on the baseline": _case(
        predictions=TWO_MODELS, gates={"ndcg@2": {"max_drop": 0.1, "model": "a"}}
    ),
    "a gate against the history without a store": _case(
        gates={"ndcg@2": {"max_drop": {"vs": "history", "relative": 0.1}}}
    ),
    "a gate on a segment the run does not have": _with_files(
        {"users.csv": USERS_CSV}, **SEGMENTS, gates={"ndcg@2": {"min": 0, "segment": "country=XX"}}
    ),
    "a gate against the baseline on a segment": _with_files(
        {"users.csv": USERS_CSV},
        **SEGMENTS,
        predictions=TWO_MODELS,
        gates={"ndcg@2": {"max_drop": 0.1, "segment": "country=DE"}},
    ),
    "no_significant_drop on a metric without per-user values": _with_files(
        {"catalog.csv": CATALOG_CSV},
        catalog=CATALOG,
        predictions=TWO_MODELS,
        metrics=["ndcg@2", "catalog_coverage@2"],
        gates={"catalog_coverage@2": {"no_significant_drop": True}},
    ),
    # a saved baseline report
    "a gate on a metric the baseline report lacks": _against_saved(
        {"metrics": ["ndcg@2"]}, gates={"precision@1": {"max_drop": 0.1}}
    ),
    "a baseline report under other conventions": _against_saved(
        {"conventions": {"relevance_threshold": 0.5}}
    ),
    # the outputs the config names
    "output.path in a missing folder": _case(output={"path": "missing/report.json"}),
    "output.path of an unknown format": _case(output={"path": "report.xyz"}),
    "output.path over an input": _case(output={"path": "truth.csv"}),
    "a history store that is a file": _with_files({"store": "not a folder"}, history="store"),
    "a history store in a missing folder": _case(history="missing/store"),
    "output.path inside the history store": _case(
        history="store", output={"path": "store/report.json"}
    ),
    "a history store holding a file that is not a run": _history_with(
        "notes.parquet", "not parquet"
    ),
    # the inputs' shapes
    "a predictions column that is not there": _case(
        predictions={"path": "predictions.csv", "columns": {"score": "points"}}
    ),
    "a ground truth file that is not there": _case(ground_truth={"path": "missing.csv"}),
    "a catalog without the column named": _with_files(
        {"catalog.csv": CATALOG_CSV},
        catalog={"path": "catalog.csv", "columns": {"category": "genre"}},
    ),
    "a segments file without the attribute": _with_files(
        {"users.csv": "user,region\nu1,DE\n"}, **SEGMENTS
    ),
    "a segments file that repeats a user": _with_files(
        {"users.csv": "user,country\nu1,DE\nu1,FR\n"}, **SEGMENTS
    ),
    "an interactions log without a user column": _with_files(
        {"log.csv": "who,item\nu1,a\n"}, interactions={"path": "log.csv"}
    ),
}

if importlib.util.find_spec("pyspark") is None:  # else the run would start Spark
    CASES["engine: spark without pyspark"] = _case(engine="spark")

# a few cases whose refusal is the config's alone (no polars query fails): the quick suite
QUICK = (
    "a pairwise metric at a cutoff of 1",
    "no_significant_drop on a metric without per-user values",
    "a history store holding a file that is not a run",
)


@pytest.mark.parametrize("name", QUICK)
def test_validate_refuses_what_run_refuses(tmp_path: Path, name: str) -> None:
    config, args = CASES[name](tmp_path)
    same_refusal(config, *args)


@pytest.mark.slow
@pytest.mark.own_process  # a polars query fails in some (tests/support/process_isolation.py)
@pytest.mark.parametrize("name", [name for name in CASES if name not in QUICK])
def test_validate_refuses_what_run_refuses_in_the_matrix(tmp_path: Path, name: str) -> None:
    config, args = CASES[name](tmp_path)
    same_refusal(config, *args)


@pytest.mark.parametrize("name", sorted(name for name, d in REGISTRY.items() if d.min_cutoff > 1))
def test_every_metric_below_its_minimum_cutoff_is_refused_as_read(
    tmp_path: Path, name: str
) -> None:
    """A metric of the registry undefined below a cutoff (a pairwise one at 1): refused
    by the config's reading, so by run, validate and the API alike, with the reason."""
    definition = REGISTRY[name]
    spec = f"{name}@{definition.min_cutoff - 1}"
    with pytest.raises(ConfigError) as caught:
        load_config(hand_case(tmp_path, metrics=[spec]))
    message = str(caught.value)
    assert f"metrics[0]: '{spec}': {name} is undefined at a cutoff of" in message
    assert definition.min_cutoff_reason in message
    assert f"Use a cutoff of at least {definition.min_cutoff}" in message


def test_the_api_refuses_a_pairwise_metric_at_a_cutoff_of_1(tmp_path: Path) -> None:
    """receval.evaluate reads its metrics as a config's: refused before any row is read,
    naming the metric, the cutoff and the fix."""
    from receval_cli import api

    write(tmp_path / "catalog.csv", CATALOG_CSV)
    predictions = write(tmp_path / "predictions.csv", PREDICTIONS_CSV)
    truth = write(tmp_path / "truth.csv", TRUTH_CSV)
    with pytest.raises(ConfigError) as caught:
        api.evaluate(
            predictions,
            truth,
            ["intra_list_diversity"],
            cutoffs=[1, 5],
            catalog=tmp_path / "catalog.csv",
        )
    message = str(caught.value)
    assert "'intra_list_diversity@1': intra_list_diversity is undefined at a cutoff of 1" in message
    assert "Use a cutoff of at least 2" in message
