"""How a message names a setting, for the audience that set it.

`receval run` users set config keys (`predictions.columns.user`); Python API users pass
arguments (`prediction_columns['user']`); `receval convert` users pass options (`--user`).
A message names a setting through `setting(section, field...)`, structured as the config
nests it, and the audience in force words it: the API and `convert` set theirs with
`audience(...)` around their call. Nothing rewrites message text afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_AUDIENCE: ContextVar[str] = ContextVar("receval_audience", default="config")

# the Python API's keyword argument for each input's column mapping
_API_COLUMNS = {
    "predictions": "prediction_columns",
    "ground_truth": "truth_columns",
    "catalog": "catalog_columns",
    "interactions": "interaction_columns",
    "baseline": "baseline_columns",
}
_CONVERT_COLUMNS = "--score, --rank or --items"


@contextmanager
def audience(name: str) -> Iterator[None]:
    """Word settings for `name` ("config", "api" or "convert") inside the block."""
    token = _AUDIENCE.set(name)
    try:
        yield
    finally:
        _AUDIENCE.reset(token)


def current_audience() -> str:
    """Who set the settings being worded: "config", "api" or "convert"."""
    return _AUDIENCE.get()


def setting(section: str, *field: str) -> str:
    """The name of a setting: `section` is the input's config section ("predictions",
    "ground_truth", ...), `field` the keys below it (("columns", "user"), ("separator",))."""
    who = _AUDIENCE.get()
    if who == "api":
        if field[:1] == ("columns",) and section in _API_COLUMNS:
            columns = _API_COLUMNS[section]
            return f"{columns}['{field[1]}']" if len(field) > 1 else columns
        if field == ("list_separator",):
            return "list_separator"
    if who == "convert" and section == "predictions":
        if field[:1] == ("columns",):
            return f"--{field[1]}" if len(field) > 1 else _CONVERT_COLUMNS
        if field in (("format",), ("separator",)):
            return f"--{field[0]}"
        if field == ("path",):
            return "the SOURCE argument"
    return ".".join((section, *field))


def assigned(value: str, section: str, *field: str) -> str:
    """A setting given a value, for the audience that sets it: `ground_truth.columns.intent:
    iteration` in a config, `truth_columns['intent'] = 'iteration'` in the API."""
    named = setting(section, *field)
    return f"{named}: {value}" if _AUDIENCE.get() == "config" else f"{named} = '{value}'"


def missing_file_fix(section: str) -> str:
    """What to do when an input's file does not exist."""
    who = _AUDIENCE.get()
    if who == "api":
        return (
            f"Check the path given as {section} (a relative path is read from the current folder)."
        )
    if who == "convert":
        return "Check the path."
    return (
        f"Fix {section}.path in the config (relative paths are read from the config file's folder)."
    )


def regular_file_fix(section: str) -> str:
    """What to do when an input's path is a pipe, a device, a socket or a link loop."""
    where = f"as {section}" if _AUDIENCE.get() == "api" else f"at {setting(section, 'path')}"
    return f"Give a regular file {where} (save a pipe's or a device's data to a file first)."


def folder_fix(section: str) -> str:
    """What to do when an input's path is a folder."""
    if _AUDIENCE.get() == "api":
        return f"Give a file as {section}."
    return f"Point {setting(section, 'path')} at a file."


def possessive(name: str) -> str:
    """trec_eval's, ir_measures'."""
    return f"{name}'" if name.endswith("s") else f"{name}'s"
