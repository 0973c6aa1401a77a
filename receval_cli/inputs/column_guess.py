"""The Python API's column guess (receval_cli/api.py): an input given without a column
mapping gets the one `receval init` would write for it (inputs/sniffing.py), told by a
warning where it is not the usual names."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from receval_cli.errors import RecEvalError
from receval_cli.inputs.diagnosis import READ_ERRORS
from receval_cli.inputs.sniffing import (
    SAMPLE_ROWS,
    Guess,
    Sniffed,
    guess_ground_truth,
    guess_predictions,
    sniff,
)

# an input: a path, or a LazyFrame (the API converts the other frames first)
Data = Any


def guessed_columns(
    predictions: Data,
    ground_truth: Data,
    prediction_columns: Mapping[str, str] | None,
    truth_columns: Mapping[str, str] | None,
) -> tuple[Mapping[str, str] | None, Mapping[str, str] | None]:
    """The column mappings, each one not given guessed as `receval init` guesses a
    config's (inputs/sniffing.py: `user_id`, `item_id`, `rating`, ...). A guess that is
    not the usual names (user, item, score, relevance) is told by a warning, with what to
    check; the usual names need no mapping and get none. An input that cannot be read
    (or a guess that finds no column for a role) gets no guess: reading it then raises
    the error that says why."""
    if prediction_columns is None:
        found = _guess(predictions, "predictions", {})
        prediction_columns = None if found is None else _told(found, "prediction_columns")
    if truth_columns is None:  # the truth's guess prefers the predictions' names
        names = {"user": "user", "item": "item", **(prediction_columns or {})}
        found = _guess(ground_truth, "ground truth", names)
        truth_columns = None if found is None else _told(found, "truth_columns")
    return prediction_columns, truth_columns


def _guess(data: Data, role: str, names: Mapping[str, str]) -> Guess | None:
    """init's guess of one input's columns (`names`: the predictions', for the truth)."""
    sniffed = _sniffed(data, role)
    if sniffed is None:
        return None
    try:
        if role == "predictions":
            return guess_predictions(sniffed)
        return guess_ground_truth(sniffed, Guess(sniffed, "score", dict(names)))
    except RecEvalError:  # no column for a role: the reader's own error says so
        return None


def _sniffed(data: Data, role: str) -> Sniffed | None:
    """A file's or a frame's schema and first rows, as `receval init` reads them (None
    where they cannot be read)."""
    try:
        if not isinstance(data, pl.LazyFrame):
            return sniff(Path(str(data)).expanduser(), role)
        sample = data.head(SAMPLE_ROWS).collect()
    except (RecEvalError, *READ_ERRORS):
        return None
    return Sniffed(role, Path(f"<{role} frame>"), "parquet", False, None, sample.schema, sample)


def _told(guess: Guess, argument: str) -> Mapping[str, str] | None:
    """The guessed mapping (None where it is the usual names), warned about."""
    if all(role == column for role, column in guess.columns.items()):
        return None
    chosen = ", ".join(f"{role} <- {column}" for role, column in guess.columns.items())
    notes = "".join(f" Check: {note}" for note in guess.notes)
    mapping = ", ".join(f"{role!r}: {column!r}" for role, column in guess.columns.items())
    warnings.warn(
        f"{argument} guessed: {chosen}.{notes} Give {argument}={{{mapping}}} to choose them.",
        stacklevel=5,  # the caller of receval.evaluate() or relstrings()
    )
    return dict(guess.columns)
