"""A pydantic validation error of the config, worded one line per problem with its key."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

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
    place = _place(within + tuple(item["loc"]))
    named = _loc(place.keys)
    where = named or "(top level)"
    if item["type"] == "extra_forbidden":
        parent = _model(_place(within + tuple(item["loc"][:-1])).annotation)
        valid = sorted(parent.model_fields) if parent else []
        key = str(place.keys[-1])
        fix = f"{did_you_mean(key, valid)} Valid keys here: {', '.join(valid)}.".lstrip()
        return _Problem(f"{where}: unknown key '{key}'. {fix}", named or None, key, fix)
    if item["type"] == "missing":
        return _Problem(f"{where}: required key is missing.", named or None)
    found = item.get("input")
    message = str(item["msg"]).removeprefix("Value error, ")
    if item["type"] in _NOT_A_MAPPING:  # pydantic names the model's class: the YAML's word
        message = "Input should be a mapping"
    return _worded(item, where, named, message, found)


def _worded(item: Any, where: str, named: str, message: str, found: object) -> _Problem:
    found_text = "" if isinstance(found, dict | list) else f" (found {found!r})"
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


def _problems(error: ValidationError, within: tuple[str, ...]) -> list[_Problem]:
    """One problem per error, but one per value a union refused: pydantic reports every
    member it tried (`x.constrained-float: ...`, `x.function-after[...]: ...`). Where the
    value has a member's type (a mapping for a model), that member's errors are kept; where
    it has none's, one line says what each member takes."""
    items = error.errors()
    places = [_place(within + tuple(item["loc"])) for item in items]
    by_union: dict[tuple[int | str, ...], list[int]] = {}
    for index, place in enumerate(places):
        if place.union is not None:
            by_union.setdefault(place.union, []).append(index)
    problems: list[_Problem] = []
    for index, item in enumerate(items):
        union = places[index].union
        if union is None:
            problems.append(_problem(item, within))
            continue
        tried = by_union[union]
        fitting = [i for i in tried if not _type_refused(items[i], places[i])]
        if fitting and index in fitting:
            problems.append(_problem(item, within))
        elif not fitting and index == tried[0]:
            problems.append(_none_fits(union, [places[i] for i in tried], item.get("input")))
    return problems


def _none_fits(keys: tuple[int | str, ...], tried: list[_Place], found: object) -> _Problem:
    """A value of no member's type: what each takes (`a number or a mapping ...`)."""
    named = _loc(keys)
    kinds = list(dict.fromkeys(_kind(place.member) for place in tried))
    message = f"Input should be {' or '.join(kinds)}"
    return _worded({}, named or "(top level)", named, message, found)


def _type_refused(item: Any, place: _Place) -> bool:
    """The union's member refused the value's type (not a key or a bound inside it)."""
    return place.keys == place.union and item["type"] in _TYPE_REFUSALS


# what pydantic calls a value that is not a mapping where a model is
_NOT_A_MAPPING = {"model_type", "model_attributes_type", "dict_type"}
# a member of a union that refused the value's type
_TYPE_REFUSALS = _NOT_A_MAPPING | {
    "float_type",
    "float_parsing",
    "int_type",
    "int_parsing",
    "int_from_float",
    "string_type",
    "bool_type",
    "bool_parsing",
    "list_type",
    "literal_error",
    "is_instance_of",
    "enum",
}


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
    return _text(path, _problems(error, within), heading)


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
    problems = _problems(error, within)
    first = problems[0]
    return ConfigError(
        _text(path, problems, heading),
        path=path if file else None,
        key=first.key,
        found=first.found,
        fix=first.fix,
    )


@dataclass(frozen=True)
class _Place:
    """Where an error's loc points in the config: the keys (the YAML's), the first union
    on the way (its keys) and the member pydantic tried there, and the type reached."""

    keys: tuple[int | str, ...]
    union: tuple[int | str, ...] | None
    member: Any
    annotation: Any


def _place(loc: tuple[int | str, ...]) -> _Place:
    """Walk a loc through the config's types: a union's member (pydantic's label of the
    member it tried: `constrained-float`, `function-after[_one_limit(), HistoryDrop]`,
    `str`) and a tagged union's tag (`<file>`) are not keys."""
    annotation: Any = Config
    keys: list[int | str] = []
    union: tuple[int | str, ...] | None = None
    member: Any = None
    for part in loc:
        if isinstance(part, str) and part in TAGGED:
            annotation = TAGGED[part]
            continue
        members = _members(annotation)
        if len(members) > 1:
            chosen = _member(members, str(part))
            if union is None:
                union, member = tuple(keys), chosen
            annotation = chosen
            continue
        if isinstance(part, str) and part.startswith("<"):
            continue
        keys.append(part)
        annotation = _inner(members[0], part)
    return _Place(tuple(keys), union, member, annotation)


def _members(annotation: Any) -> list[Any]:
    """A type's members: a union's, `X | None` as X, Annotated[X, ...] as X."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, UnionType):
        found = [a for arg in get_args(annotation) if arg is not type(None) for a in _members(arg)]
        return found
    return [annotation]


def _inner(annotation: Any, part: int | str) -> Any:
    """The type at key `part` of a model, a mapping or a list (None where unknown)."""
    model = _model(annotation)
    if model is not None:
        field = model.model_fields.get(str(part))
        return None if field is None else field.annotation
    if get_origin(annotation) is dict:
        return get_args(annotation)[1]
    if get_origin(annotation) in (list, tuple) and get_args(annotation):
        return get_args(annotation)[0]
    return None


def _member(members: list[Any], label: str) -> Any:
    """The union's member pydantic's label names: a model by its class's name, else by
    the type's name (`constrained-float` is a float, `dict[str,any]` a dict)."""
    for member in members:
        model = _model(member)
        if model is not None and re.search(rf"\b{model.__name__}\b", label):
            return member
    name = label.split("[")[0].rsplit("-", 1)[-1]
    for member in members:
        origin = get_origin(member) or member
        if getattr(origin, "__name__", str(origin)).lower() == name or (
            origin is Literal and name == "literal"
        ):
            return member
    return None


def _kind(member: Any) -> str:
    """What a union's member takes, in the YAML's words."""
    model = _model(member)
    if model is not None:
        return f"a mapping with the keys {', '.join(model.model_fields)}"
    if get_origin(member) is Literal:
        return " or ".join(repr(value) for value in get_args(member))
    origin = get_origin(member) or member
    return {
        float: "a number",
        int: "an integer",
        str: "a string",
        bool: "true or false",
        list: "a list",
        dict: "a mapping",
    }.get(origin, "another value")


def _model(annotation: Any) -> type[BaseModel] | None:
    members = _members(annotation)
    if len(members) == 1 and isinstance(members[0], type) and issubclass(members[0], BaseModel):
        return members[0]
    return None
