"""The Python API's arguments checked for their types before anything is read.

Each argument of `evaluate`, `relstrings`, `run` and `compare` has an entry in ARGUMENTS:
what it takes, in words and as an example. A value of another type (`metrics=123`,
`metrics=[None]`, `cutoffs="10"`, `prediction_columns=["user"]`) raises
`ArgumentTypeError` (a UsageError and a TypeError) naming the argument, what was found
and what it takes, where Python's own error names no argument (`'int' object is not
iterable`). The values themselves (a metric's name, a column's) are checked later, by
the same checks as the config's keys.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from receval_cli.errors import ArgumentTypeError


@dataclass(frozen=True)
class Expected:
    """What an argument takes: `fault(value)` is None when the value fits, else the
    part at fault (`""` the whole value, `"[0]"` its first item) and that part."""

    takes: str
    example: str
    fault: Callable[[Any], tuple[str, Any] | None]


def _whole(fits: Callable[[Any], bool]) -> Callable[[Any], tuple[str, Any] | None]:
    return lambda value: None if fits(value) else ("", value)


def _items(
    fits: Callable[[Any], bool], alone: Callable[[Any], bool] = lambda value: False
) -> Callable[[Any], tuple[str, Any] | None]:
    """A list (any iterable but a string or a mapping) whose items fit; or a value that
    fits `alone` (a metric's name for `metrics`)."""

    def fault(value: Any) -> tuple[str, Any] | None:
        if alone(value):
            return None
        if not _listed(value):
            return "", value
        for index, item in enumerate(value):
            if not fits(item):
                return f"[{index}]", item
        return None

    return fault


def _listed(value: Any) -> bool:
    return isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping)


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _path(value: Any) -> bool:
    return isinstance(value, str | os.PathLike)


def _data(value: Any) -> bool:
    """A path, a polars DataFrame or LazyFrame, or a pandas DataFrame."""
    kinds = [(kind.__module__.split(".")[0], kind.__name__) for kind in type(value).__mro__]
    polars_frame = ("polars", "DataFrame") in kinds or ("polars", "LazyFrame") in kinds
    pandas_frame = kinds[0][0] == "pandas" and hasattr(value, "columns")  # as api._frame
    return _path(value) or polars_frame or pandas_frame


def _names(value: Any) -> tuple[str, Any] | None:
    """A mapping of strings to strings (a columns mapping)."""
    if not isinstance(value, Mapping):
        return "", value
    for key, item in value.items():
        if not _text(key):
            return "", value
        if not _text(item):
            return f"[{key!r}]", item
    return None


def _optional(
    fault: Callable[[Any], tuple[str, Any] | None],
) -> Callable[[Any], tuple[str, Any] | None]:
    return lambda value: None if value is None else fault(value)


DATA = "a path (str or Path), a polars DataFrame or LazyFrame, or a pandas DataFrame"


def _input(example: str, optional: bool = False) -> Expected:
    """An input: a path or a frame (None too where it is optional)."""
    if optional:
        return Expected(f"None or {DATA}", example, _optional(_whole(_data)))
    return Expected(DATA, example, _whole(_data))


_COLUMNS = Expected(
    "a mapping of receval's column names to the input's (strings)",
    "{'user': 'user_id'}",
    _optional(_names),
)
_CONVENTIONS = Expected(
    "a preset's name or a mapping of conventions",
    "'trec_eval' or conventions={'relevance_threshold': 2}",
    _optional(
        lambda value: (
            None
            if _text(value) or (isinstance(value, Mapping) and all(map(_text, value)))
            else ("", value)
        )
    ),
)
_SEPARATOR = Expected("a string", "'|'", _whole(_text))

# every argument of the API's functions, by function and name (a test checks that each
# function's signature has exactly these)
ARGUMENTS: dict[str, dict[str, Expected]] = {
    "evaluate": {
        "predictions": _input("'predictions.csv'"),
        "ground_truth": _input("'truth.csv'"),
        "metrics": Expected(
            "a metric's name or a list of names (strings) and mappings with parameters",
            "['ndcg@10', {'name': 'recall', 'k': 5}]",
            _items(lambda item: _text(item) or isinstance(item, Mapping), alone=_text),
        ),
        "cutoffs": Expected(
            "None or a list of positive integers", "[5, 10]", _optional(_items(_integer))
        ),
        "conventions": _CONVENTIONS,
        "prediction_columns": _COLUMNS,
        "truth_columns": _COLUMNS,
        "list_separator": _SEPARATOR,
        "catalog": _input("'catalog.jsonl'", optional=True),
        "catalog_columns": _COLUMNS,
        "interactions": _input("'interactions.csv'", optional=True),
        "interaction_columns": _COLUMNS,
        "baseline": _input("'popular.csv'", optional=True),
        "baseline_columns": _COLUMNS,
    },
    "relstrings": {
        "predictions": _input("'predictions.csv'"),
        "ground_truth": _input("'truth.csv'"),
        "length": Expected("a positive integer", "10", _whole(_integer)),
        "conventions": _CONVENTIONS,
        "prediction_columns": _COLUMNS,
        "truth_columns": _COLUMNS,
        "list_separator": _SEPARATOR,
    },
    "run": {
        "config": Expected(
            "a config file's path (str or Path) or the config as a mapping",
            "'config.yaml'",
            _whole(lambda value: _path(value) or isinstance(value, Mapping)),
        ),
        "preset": Expected("None or a preset's name", "'trec_eval'", _optional(_whole(_text))),
    },
    "compare": {
        "reports": Expected(
            "saved JSON reports' paths (str or Path)", "'a.json', 'b.json'", _items(_path)
        ),
        "baseline": Expected("None or a column's name (str)", "'a'", _optional(_whole(_text))),
        "metrics": Expected(
            "a metric's name or a list of names (strings)", "['ndcg@10']", _items(_text, _text)
        ),
        "allow_different_conventions": Expected(
            "True or False", "True", _whole(lambda value: isinstance(value, bool))
        ),
    },
}


def check_arguments(function: str, given: Mapping[str, Any]) -> None:
    """Raise ArgumentTypeError for the first argument in `given` (name -> value, as
    bound) whose value `function` cannot take."""
    for name, value in given.items():
        expected = ARGUMENTS[function][name]
        fault = expected.fault(value)
        if fault is None:
            continue
        where, found = fault
        fix = f"give {expected.takes}, e.g. {name}={expected.example}."
        if function == "compare" and name == "reports":
            fix = f"give {expected.takes}, e.g. compare({expected.example})."
        raise ArgumentTypeError(
            f"{name}{where} is {_shown(found)}; {fix}",
            key=f"{name}{where}",
            found=_field(found),
            fix=fix,
        )


def _shown(value: Any) -> str:
    """A value as a message shows it: a short repr and its type, or only its type."""
    if value is None:
        return "None"
    kind = type(value).__name__
    article = "an" if kind[:1].lower() in "aeiou" else "a"
    if isinstance(value, bool | int | float | str | list | tuple | dict | set):
        text = repr(value)
        text = text if len(text) <= 40 else f"{text[:36]}...{text[-1]}"
        return f"{text} ({article} {kind})"
    return f"{article} {kind}"


def _field(value: Any) -> object:
    """A value as the error's `found` field: itself where JSON holds it, else its type."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return type(value).__name__
