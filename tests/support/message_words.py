"""Library-internal words no message of receval shows: pydantic's, Python's and polars'
names and advice, which tell a user nothing about their config, data or call.

`internal_words(message)` lists those a message holds; `assert_plain(message)` fails on
any. The error matrices' helpers (cli_helpers.assert_user_error, the bad-input matrix's
check, the error-field tests) run it on every message they read, and
tests/messages/test_message_words.py on every message tests/support/error_messages.py collects.
"""

from __future__ import annotations

import re

FORBIDDEN = (
    # pydantic's: its members' labels, its own keys and links, a model's class
    "constrained-",
    "function-after",
    "function-before",
    "function-wrap",
    "function-plain",
    "input_value",
    "input_type",
    "pydantic",
    "errors.pydantic.dev",
    "type=",
    "or instance of",
    # Python's: a traceback, its advice and its type errors
    "Traceback",
    "sys.set_int_max_str_digits",
    "object is not iterable",
    "object is not subscriptable",
    "object is not a mapping",
    "object has no attribute",
    "not supported between instances",
    "NoneType",
    # polars': its exceptions' names and raw casts (a dtype's name may be said where the
    # message is about a column's type: "Float64", "String")
    "ComputeError",
    "InvalidOperationError",
    "SchemaError",
    "ColumnNotFoundError",
    "ShapeError",
    "PanicException",
    "conversion from `",
    "i128",
)
_FORBIDDEN = re.compile("|".join(re.escape(word) for word in FORBIDDEN))


def internal_words(message: str) -> list[str]:
    """The forbidden words `message` holds, in order."""
    return _FORBIDDEN.findall(message)


def assert_plain(message: str) -> str:
    """`message`, after checking that it holds no library-internal word."""
    found = internal_words(message)
    assert not found, f"library-internal words {found} in: {message!r}"
    return message
