"""No message of the error matrices shows a library-internal word (tests/support/message_words.py):
every config key set wrong, every API argument of the wrong type, every row of the
bad-input matrix (collected by tests/support/error_messages.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from error_messages import api_messages, config_keys, config_messages, matrix_messages
from message_words import internal_words


def test_no_message_of_the_error_matrices_shows_a_library_word(tmp_path: Path) -> None:
    messages = [
        *config_messages(tmp_path),
        *api_messages(tmp_path),
        *matrix_messages(),
    ]
    assert len(messages) > 1000
    found = {case: words for case, message in messages if (words := internal_words(message))}
    assert found == {}


def test_the_collection_reaches_nested_keys() -> None:
    keys = set(config_keys())
    assert {("gates", "ndcg@2", "max_drop", "runs"), ("conventions", "tie_break")} <= keys
    assert ("predictions", "columns", "user") in keys


@pytest.mark.parametrize(
    "message",
    [
        "gates.ndcg@5.max_drop.constrained-float: Input should be a valid number.",
        "gates.ndcg@5.max_drop.function-after[_one_limit(), HistoryDrop]: min_runs 50 is "
        "above runs 3.",
        "spark: Input should be a valid dictionary or instance of SparkConfig (found 1).",
        "'int' object is not iterable",
        "'NoneType' object is not iterable",
        "report b.json: Exceeds the limit (4300 digits) for integer string conversion: value "
        "has 5000 digits; use sys.set_int_max_str_digits() to increase the limit",
        "could not be read: conversion from `i128` to `i64` failed in column 'user'",
    ],
)
def test_the_words_are_found_in_the_messages_of_before(message: str) -> None:
    """The reported messages: each holds a word the scan looks for."""
    assert internal_words(message)
