"""A pydantic validation error of the config, worded one line per problem with its key."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import (
    BaseModel,
    ValidationError,
)

from receval_cli.config.conventions import SettingError
from receval_cli.config.model import TAGGED, Config
from receval_cli.config.yaml_file import found_value
from receval_cli.errors import ConfigError, did_you_mean
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


@dataclass(frozen=True)
class _Problem:
    """One line of the message, and what it is about (an error's fields)."""

    line: str
    key: str | None = None
    found: object = None
    fix: str | None = None


def _problem(item: Any, within: tuple[str, ...]) -> _Problem:
    loc = within + tuple(p for p in item["loc"] if p not in ("str", "dict[str,any]"))
    named = _loc(tuple(p for p in loc if not str(p).startswith("<")))
    where = named or "(top level)"
    if item["type"] == "extra_forbidden":
        parent = _model_at(loc[:-1])
        valid = sorted(parent.model_fields) if parent else []
        key = str(loc[-1])
        fix = f"{did_you_mean(key, valid)} Valid keys here: {', '.join(valid)}.".lstrip()
        return _Problem(f"{where}: unknown key '{key}'. {fix}", named or None, key, fix)
    if item["type"] == "missing":
        return _Problem(f"{where}: required key is missing.", named or None)
    found = item.get("input")
    found_text = "" if isinstance(found, dict | list) else f" (found {found!r})"
    message = str(item["msg"]).removeprefix("Value error, ")
    end = "" if message.endswith((".", "?", "!")) and not found_text else "."
    line = f"{where}: {message}{found_text}{end}"
    cause = item.get("ctx", {}).get("error")
    if isinstance(cause, SettingError):  # the validator says what it is about
        return _Problem(
            line,
            named or cause.key,
            found_value(found if cause.found is None else cause.found),
            cause.fix,
        )
    return _Problem(line, named or None, found_value(found))


def _text(path: Path | str, problems: list[_Problem], heading: str) -> str:
    return f"{path}: {heading}:\n  " + "\n  ".join(problem.line for problem in problems)


def format_validation_error(
    path: Path | str,
    error: ValidationError,
    within: tuple[str, ...] = (),
    heading: str = "the config is not valid",
) -> str:
    """One line per problem. `within` is where the validated model sits in the config
    (e.g. ("conventions",) when a Conventions was validated alone)."""
    return _text(path, [_problem(item, within) for item in error.errors()], heading)


def validation_config_error(
    path: Path | str,
    error: ValidationError,
    within: tuple[str, ...] = (),
    heading: str = "the config is not valid",
    *,
    file: bool = True,
) -> ConfigError:
    """The ConfigError of `format_validation_error`'s message, with the first problem's
    fields: its key, what was found there and the fix; `path` too, unless `file` is false
    (`path` then only names the caller, e.g. "evaluate()")."""
    problems = [_problem(item, within) for item in error.errors()]
    first = problems[0]
    return ConfigError(
        _text(path, problems, heading),
        path=path if file else None,
        key=first.key,
        found=first.found,
        fix=first.fix,
    )


def _model_at(loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The pydantic model at a YAML path, looking through dict values (e.g. gates.X)."""
    annotation: Any = Config
    for part in loc:
        annotation = _optional_removed(annotation)
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
    annotation = _optional_removed(annotation)
    return (
        annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
    )


def _optional_removed(annotation: Any) -> Any:
    """`X | None` as X (an optional section, e.g. confidence: ConfidenceConfig | None)."""
    if get_origin(annotation) in (Union, UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return members[0]
    return annotation
