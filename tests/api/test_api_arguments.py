"""The Python API's arguments of the wrong type: every argument of `evaluate`,
`relstrings`, `run` and `compare` is named with what was found and what it takes, as
receval's UsageError (a TypeError too), never Python's bare `'int' object is not
iterable` (config/arguments.py)."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import receval
from receval_cli.config.arguments import ARGUMENTS
from receval_cli.errors import ArgumentTypeError, ConfigError, UsageError

PREDICTIONS = pl.DataFrame({"user": [1, 1], "item": [10, 11], "score": [0.9, 0.8]})
TRUTH = pl.DataFrame({"user": [1], "item": [11]})
FUNCTIONS = ("evaluate", "relstrings", "run", "compare")


class Wrong:
    """A value of a type no argument takes."""

    def __repr__(self) -> str:
        return "<wrong>"


def valid_arguments(function: str, tmp_path: Path) -> dict[str, Any]:
    """Arguments each function runs with (the required ones)."""
    if function in ("evaluate", "relstrings"):
        given: dict[str, Any] = {"predictions": PREDICTIONS, "ground_truth": TRUTH}
        return {**given, "metrics": ["ndcg@2"]} if function == "evaluate" else given
    if function == "run":
        return {"config": tmp_path / "config.yaml"}
    return {"reports": (tmp_path / "a.json", tmp_path / "b.json")}


def call(function: str, arguments: dict[str, Any]) -> Any:
    reports = arguments.pop("reports", ())
    return getattr(receval, function)(*reports, **arguments)


def test_every_argument_of_every_function_is_in_the_table() -> None:
    for function in FUNCTIONS:
        parameters = inspect.signature(getattr(receval, function)).parameters
        assert list(ARGUMENTS[function]) == list(parameters), function


@pytest.mark.parametrize(
    ("function", "name"),
    [(function, name) for function in FUNCTIONS for name in ARGUMENTS[function]],
)
def test_an_argument_of_the_wrong_type_is_named(tmp_path: Path, function: str, name: str) -> None:
    arguments = valid_arguments(function, tmp_path)
    arguments[name] = (Wrong(),) if name == "reports" else Wrong()
    with pytest.raises(ArgumentTypeError) as caught:
        call(function, arguments)
    error = caught.value
    key = "reports[0]" if name == "reports" else name
    expected = ARGUMENTS[function][name]
    assert str(error).startswith(f"{key} is a Wrong; give {expected.takes}, e.g. "), error
    assert error.fields == {"key": key, "found": "Wrong", "fix": str(error).split("; ", 1)[1]}
    assert isinstance(error, UsageError)
    assert isinstance(error, TypeError)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            {"metrics": 123},
            "metrics is 123 (an int); give a metric's name or a list of names (strings) and "
            "mappings with parameters, e.g. metrics=['ndcg@10', {'name': 'recall', 'k': 5}].",
        ),
        (
            {"metrics": [None]},
            "metrics[0] is None; give a metric's name or a list of names (strings) and "
            "mappings with parameters, e.g. metrics=['ndcg@10', {'name': 'recall', 'k': 5}].",
        ),
        (
            {"conventions": 5},
            "conventions is 5 (an int); give a preset's name or a mapping of conventions, "
            "e.g. conventions='trec_eval' or conventions={'relevance_threshold': 2}.",
        ),
        (
            {"metrics": ["ndcg"], "cutoffs": "10"},
            "cutoffs is '10' (a str); give None or a list of positive integers, e.g. "
            "cutoffs=[5, 10].",
        ),
        (
            {"cutoffs": [5, 2.5]},
            "cutoffs[1] is 2.5 (a float); give None or a list of positive integers, e.g. "
            "cutoffs=[5, 10].",
        ),
        (
            {"prediction_columns": ["user"]},
            "prediction_columns is ['user'] (a list); give a mapping of receval's column "
            "names to the input's (strings), e.g. prediction_columns={'user': 'user_id'}.",
        ),
        (
            {"truth_columns": {"user": 3}},
            "truth_columns['user'] is 3 (an int); give a mapping of receval's column names "
            "to the input's (strings), e.g. truth_columns={'user': 'user_id'}.",
        ),
    ],
)
def test_the_reported_cases(given: dict[str, Any], message: str) -> None:
    """Each raised a bare TypeError naming no argument ('int' object is not iterable,
    'NoneType' object is not iterable, '<=' not supported between 'str' and 'int',
    'list' object is not a mapping)."""
    arguments = {"metrics": ["ndcg@2"], **given}
    with pytest.raises(ArgumentTypeError) as caught:
        receval.evaluate(PREDICTIONS, TRUTH, **arguments)
    assert str(caught.value) == message


def test_an_input_of_the_wrong_type_is_named() -> None:
    with pytest.raises(ArgumentTypeError) as caught:
        receval.evaluate(PREDICTIONS, [(1, 2, 0.5)], metrics=["ndcg@2"])
    assert str(caught.value) == (
        "ground_truth is [(1, 2, 0.5)] (a list); give a path (str or Path), a polars "
        "DataFrame or LazyFrame, or a pandas DataFrame, e.g. ground_truth='truth.csv'."
    )


def test_values_of_the_right_types_pass_the_check(tmp_path: Path) -> None:
    """Paths as Path, a metric's name alone, a tuple of cutoffs, a LazyFrame."""
    report = receval.evaluate(
        PREDICTIONS.lazy(), TRUTH, metrics="ndcg", cutoffs=(1, 2), conventions="trec_eval"
    )
    assert set(report.metrics) == {"ndcg@1", "ndcg@2"}


def test_compare_takes_one_metric_s_name(tmp_path: Path) -> None:
    """A name alone is one metric (it was read as its letters before)."""
    for name, value in (("a", 0.5), ("b", 0.7)):
        (tmp_path / f"{name}.json").write_text(f'{{"metrics": {{"ndcg@2": {value}, "mrr": 1}}}}')
    compared = receval.compare(tmp_path / "a.json", tmp_path / "b.json", metrics="ndcg@2")
    assert list(compared.metrics) == ["ndcg@2"]


def test_the_api_exports_the_argument_error() -> None:
    assert receval.ArgumentTypeError is ArgumentTypeError
    assert "ArgumentTypeError" in receval.__all__


@pytest.mark.parametrize("function", ["evaluate", "relstrings"])
def test_a_wrong_value_names_the_function_called(function: str, tmp_path: Path) -> None:
    """relstrings' invalid conventions or columns were headed "evaluate(): ..."."""
    for wrong in ({"conventions": {"tie_break": "nope"}}, {"prediction_columns": {"bogus": "x"}}):
        with pytest.raises(ConfigError) as caught:
            call(function, {**valid_arguments(function, tmp_path), **wrong})
        assert str(caught.value).startswith(f"{function}(): the arguments are not valid:")
