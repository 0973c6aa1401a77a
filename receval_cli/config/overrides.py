"""What a config file holds, changed for one run: `--set KEY=VALUE` (a key of the config,
dotted, given a YAML value) and `${NAME}` in the config's text values (the environment
variable NAME): one config for a cron job's every model and day.

Both act on the mapping read from the YAML, before it is validated, so a value set or
expanded is checked as if the file held it, and a relative path is read from the config's
folder as the file's own are.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from receval_cli.errors import ConfigError, UsageError

_VARIABLE = re.compile(r"\$\$\{|\$\{([^}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def apply_settings(raw: dict[str, Any], settings: Iterable[str], path: Path) -> dict[str, Any]:
    """The config with each `KEY=VALUE` of `settings` set (KEY dotted: `a.b.c`; VALUE read
    as YAML: `4`, `[ndcg@10, map]`, `{min: 0.3}`, or text). Missing mappings on the way
    are made; a key under a value that is not a mapping is refused."""
    for setting in settings:
        key, equals, text = setting.partition("=")
        parts = key.strip().split(".")
        if not equals or not all(part.strip() for part in parts):
            fix = "write KEY=VALUE, the key dotted as in the config (e.g. conventions.gain=binary)."
            raise UsageError(f"--set {setting!r}: {fix}", key="--set", found=setting, fix=fix)
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as error:
            problem = " ".join(str(error).split())
            fix = "quote the value as YAML does, e.g. --set 'predictions.path=\"a: b.csv\"'."
            raise UsageError(
                f"--set {setting!r}: the value is not valid YAML ({problem}); {fix}",
                key="--set",
                found=setting,
                fix=fix,
            ) from None
        _set(raw, [part.strip() for part in parts], value, setting, path)
    return raw


def _set(raw: dict[str, Any], parts: list[str], value: Any, setting: str, path: Path) -> None:
    here: dict[str, Any] = raw
    for depth, part in enumerate(parts[:-1]):
        below = here.setdefault(part, {})
        if below is None:
            below = here[part] = {}
        if not isinstance(below, dict):
            where = ".".join(parts[: depth + 1])
            fix = f"set {where} itself, or give it a mapping in the config."
            raise ConfigError(
                f"{path}: --set {setting!r}: {where} is a {type(below).__name__} "
                f"({below!r}), not a mapping with keys; {fix}",
                path=path,
                key=where,
                found=repr(below),
                fix=fix,
            )
        here = below
    here[parts[-1]] = value


def expand_variables(raw: Any, path: Path, key: str = "") -> Any:
    """The config with `${NAME}` in each text value replaced by the environment variable
    NAME (`$${` is a literal `${`); a variable that is not set is refused, naming the
    key that uses it."""
    if isinstance(raw, dict):
        return {k: expand_variables(v, path, _joined(key, str(k))) for k, v in raw.items()}
    if isinstance(raw, list):
        return [expand_variables(v, path, f"{key}[{i}]") for i, v in enumerate(raw)]
    if not isinstance(raw, str) or "$" not in raw:
        return raw

    def value_of(match: re.Match[str]) -> str:
        if match.group(0) == "$${":
            return "${"
        name = match.group(1)
        if not _NAME.fullmatch(name):
            fix = (
                "write ${NAME} with a variable's name (letters, digits, _), or $${ for the text ${."
            )
            raise ConfigError(
                f"{path}: {key} holds ${{{name}}}, which names no variable; {fix}",
                path=path,
                key=key,
                found=raw,
                fix=fix,
            )
        found = os.environ.get(name)
        if found is None:
            fix = f"set it (export {name}=...), or write $${{{name}}} for the text itself."
            raise ConfigError(
                f"{path}: {key} uses ${{{name}}}, and the environment has no {name}; {fix}",
                path=path,
                key=key,
                found=raw,
                fix=fix,
            )
        return found

    return _VARIABLE.sub(value_of, raw)


def _joined(key: str, part: str) -> str:
    return f"{key}.{part}" if key else part
