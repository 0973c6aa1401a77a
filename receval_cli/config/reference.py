"""Every config key as a Markdown table, read from the config's pydantic models.

The descriptions live in one place (config/model.py: field docstrings and descriptions);
docs/configuration.md's key reference is this table, and a test checks that they are equal. Print it
with `python -m receval_cli.config.reference`.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from receval_cli.config.model import Config, PredictionsConfig, PredictionSet, document_fields

# sections documented by a table of their own elsewhere in docs/
_ELSEWHERE = {"conventions": "every convention: see [conventions.md](conventions.md)"}


def _unwrapped(annotation: Any) -> Any:
    """The annotation without Annotated[...] and without None in a union."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return _unwrapped(members[0])
    return annotation


def _model(annotation: Any) -> type[BaseModel] | None:
    found = _unwrapped(annotation)
    return found if isinstance(found, type) and issubclass(found, BaseModel) else None


def _type_name(annotation: Any) -> str:
    """A short, readable name of a field's type."""
    found = _unwrapped(annotation)
    origin = typing.get_origin(found)
    if origin is Literal:
        return ", ".join(str(value) for value in typing.get_args(found))
    if origin in (typing.Union, types.UnionType):
        members = [m for m in typing.get_args(found) if m is not type(None)]
        names = dict.fromkeys(_type_name(member) for member in members)
        return " or ".join(names)
    if origin is list:
        (inner,) = typing.get_args(found)
        return f"list of {_type_name(inner)}"
    if origin is dict:
        return "mapping"
    if _model(found) is not None:
        return "mapping"
    name = getattr(found, "__name__", str(found))
    return {"str": "text", "float": "number", "int": "integer", "bool": "true/false"}.get(
        name, name.lower()
    )


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.default
    if value is PydanticUndefined or value is None:
        return ""
    if isinstance(value, BaseModel) or value in ({}, []):
        return ""
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def _rows(model: type[BaseModel], prefix: str) -> Iterator[tuple[str, str, str, str]]:
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        description = " ".join((field.description or "").split())
        if key in _ELSEWHERE:
            yield key, "mapping", "", _ELSEWHERE[key]
            continue
        nested = _model(field.annotation)
        inner = _unwrapped(field.annotation)
        if typing.get_origin(inner) is dict:
            value = typing.get_args(inner)[1]
            if _model(value) is not None:
                yield key, "mapping", "", description
                yield from _rows(_model(value), f"{key}.NAME.")  # type: ignore[arg-type]
                continue
        yield key, _type_name(field.annotation), _default(field), description
        if nested is not None:
            yield from _rows(nested, f"{key}.")


def rows() -> list[tuple[str, str, str, str]]:
    """(key, type, default, meaning) for every key of the config, in the models' order.
    `predictions` is one file, or several models under `predictions.models` (whose
    `format`, `separator`, `list_separator` and `columns` are the one file's keys, there
    the models' defaults: listed once)."""
    document_fields()
    found: list[tuple[str, str, str, str]] = []
    for row in _rows(Config, ""):
        found.append(row)
        if row[0] == "predictions":
            found += _rows(PredictionsConfig, "predictions.")
            listed = {key for key, *_ in found}
            found += [r for r in _rows(PredictionSet, "predictions.") if r[0] not in listed]
    return found


def markdown() -> str:
    """The key reference as a Markdown table."""
    lines = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for row in rows():
        key, kind, default, meaning = (cell.replace("|", "\\|") for cell in row)
        lines.append(f"| `{key}` | {kind} | {default} | {meaning} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
