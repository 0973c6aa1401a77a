"""A pydantic validation error of the config, worded one line per problem with its key."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import (
    BaseModel,
    ValidationError,
)

from receval_cli.config.model import TAGGED, Config
from receval_cli.errors import did_you_mean
from receval_cli.wording import setting


def _loc(parts: tuple[int | str, ...]) -> str:
    """A config path as the audience names it (wording.setting; with list positions, as
    `a.b[0].c`)."""
    if parts and all(isinstance(part, str) for part in parts):
        return setting(*(str(part) for part in parts))
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def format_validation_error(
    path: Path | str,
    error: ValidationError,
    within: tuple[str, ...] = (),
    heading: str = "the config is not valid",
) -> str:
    """One line per problem. `within` is where the validated model sits in the config
    (e.g. ("conventions",) when a Conventions was validated alone)."""
    lines = []
    for item in error.errors():
        loc = within + tuple(p for p in item["loc"] if p not in ("str", "dict[str,any]"))
        where = _loc(tuple(p for p in loc if not str(p).startswith("<"))) or "(top level)"
        if item["type"] == "extra_forbidden":
            parent = _model_at(loc[:-1])
            valid = sorted(parent.model_fields) if parent else []
            key = str(loc[-1])
            lines.append(
                f"{where}: unknown key '{key}'.{did_you_mean(key, valid)} "
                f"Valid keys here: {', '.join(valid)}."
            )
        elif item["type"] == "missing":
            lines.append(f"{where}: required key is missing.")
        else:
            found = item.get("input")
            found_text = "" if isinstance(found, dict | list) else f" (found {found!r})"
            message = str(item["msg"]).removeprefix("Value error, ")
            end = "" if message.endswith((".", "?", "!")) and not found_text else "."
            lines.append(f"{where}: {message}{found_text}{end}")
    return f"{path}: {heading}:\n  " + "\n  ".join(lines)


def _model_at(loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The pydantic model at a YAML path, looking through dict values (e.g. gates.X)."""
    annotation: Any = Config
    for part in loc:
        if part in TAGGED:
            annotation = TAGGED[str(part)]
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = annotation.model_fields.get(str(part))
            if field is None:
                return None
            annotation = field.annotation
        elif get_origin(annotation) is dict:
            annotation = get_args(annotation)[1]
        else:
            return None
    return (
        annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
    )
