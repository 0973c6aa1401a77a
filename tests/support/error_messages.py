"""Every message the error matrices produce, collected for tests/messages/test_message_words.py.

- the config's: every key of the config's models (found by walking them, so a key added
  later is in), each set to values of the wrong type or range, read as `receval run`
  reads a config;
- the Python API's: every argument of `evaluate`, `relstrings`, `run` and `compare`,
  each given values of the wrong type;
(an exception that is not receval's is collected as "Traceback: ...", what a user sees);
- the bad-input matrix's: the exact message of each row of tests/robustness/test_matrix.py
  (which checks that `receval run` prints exactly that).
"""

from __future__ import annotations

import copy
import importlib
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

import polars as pl
from pydantic import BaseModel

import receval
from receval_cli.config.arguments import ARGUMENTS
from receval_cli.config.loading import config_from_mapping
from receval_cli.config.model import Config, PredictionsConfig
from receval_cli.errors import RecEvalError

BASE: dict[str, Any] = {
    "predictions": {"path": "predictions.csv"},
    "ground_truth": {"path": "truth.csv"},
    "metrics": ["precision@1", "ndcg@2"],
}
WRONG: tuple[Any, ...] = ("abc", -1, 0, [1], {"zz": 1}, True, 0.5, None, float("inf"))
# a valid value under which a key's siblings are checked (a gate needs a bound)
INSIDE = {
    ("gates", "ndcg@2"): {"min": 0.1},
    ("gates", "ndcg@2", "max_drop"): {"vs": "history", "relative": 0.1},
}


def _members(annotation: Any) -> list[Any]:
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, types.UnionType):
        return [m for arg in get_args(annotation) if arg is not type(None) for m in _members(arg)]
    return [annotation]


def _models(annotation: Any) -> Iterator[tuple[tuple[str, ...], type[BaseModel]]]:
    """The models a field holds: itself, a dict's values (under a sample key)."""
    for member in _members(annotation):
        if isinstance(member, type) and issubclass(member, BaseModel):
            yield (), member
        elif get_origin(member) is dict:
            for model in _members(get_args(member)[1]):
                if isinstance(model, type) and issubclass(model, BaseModel):
                    yield ("ndcg@2",), model


def config_keys(
    model: type[BaseModel] = Config, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[str, ...]]:
    """Every key of the config, as a path (("gates", "ndcg@2", "max_drop", "runs"))."""
    for name, field in model.model_fields.items():
        key = (*prefix, name)
        yield key
        annotation = PredictionsConfig if key == ("predictions",) else field.annotation
        for below, inner in _models(annotation):
            yield from config_keys(inner, (*key, *below))


def _with(config: dict[str, Any], key: tuple[str, ...], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(config)
    place = changed
    for depth, part in enumerate(key[:-1]):
        inside = INSIDE.get(key[: depth + 1], {})
        if not isinstance(place.get(part), dict):
            place[part] = copy.deepcopy(inside)
        place = place[part]
    place[key[-1]] = value
    return changed


def config_messages(folder: Path) -> Iterator[tuple[str, str]]:
    """(the case, the message) of every config key set to each wrong value."""
    (folder / "predictions.csv").write_text("user,item,score\nu1,a,0.9\n", encoding="utf-8")
    (folder / "truth.csv").write_text("user,item\nu1,a\n", encoding="utf-8")
    for key in config_keys():
        for value in WRONG:
            try:
                config_from_mapping(_with(BASE, key, value), folder / "config.yaml")
            except RecEvalError as error:
                yield f"{'.'.join(key)}={value!r}", str(error)
            except Exception as error:  # what a user would see: a traceback
                yield f"{'.'.join(key)}={value!r}", f"Traceback: {type(error).__name__}: {error}"


class _Wrong:
    def __repr__(self) -> str:
        return "<wrong>"


def api_messages(folder: Path) -> Iterator[tuple[str, str]]:
    """(the case, the message) of every API argument given each wrong value."""
    frames = {
        "predictions": pl.DataFrame({"user": [1], "item": [2], "score": [0.5]}),
        "ground_truth": pl.DataFrame({"user": [1], "item": [2]}),
    }
    required: dict[str, dict[str, Any]] = {
        "evaluate": {**frames, "metrics": ["ndcg@2"]},
        "relstrings": dict(frames),
        "run": {"config": folder / "config.yaml"},
        "compare": {"reports": (folder / "a.json", folder / "b.json")},
    }
    for function, arguments in ARGUMENTS.items():
        for name in arguments:
            for value in (_Wrong(), 123, [None], "x", {"x": 1}, None):
                given = {**required[function], name: (value,) if name == "reports" else value}
                reports = given.pop("reports", ())
                try:
                    getattr(receval, function)(*reports, **given)
                except RecEvalError as error:
                    yield f"{function}({name}={value!r})", str(error)
                except Exception as error:  # what a user would see: a traceback
                    escaped = f"Traceback: {type(error).__name__}: {error}"
                    yield f"{function}({name}={value!r})", escaped


def matrix_messages() -> Iterator[tuple[str, str]]:
    """(the row, its message) of the bad-input matrix (tests/robustness/test_matrix.py)."""
    matrix = importlib.import_module("bad_input_matrix")
    for row in matrix.BAD:
        yield row.id, row.message
    for row, message in matrix.SPARK_REFUSES.items():
        yield f"{row} (spark)", message
