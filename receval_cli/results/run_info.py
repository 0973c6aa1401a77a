"""What identifies a run in its report and in the history store: when it started (UTC), a
run id, a hash of the resolved config, and the user's --label and --tag pairs.

The run id sorts by time: `20261124T093012.123456Z-1a2b3c4d`, the start to the
microsecond and 8 random hex digits. With SOURCE_DATE_EPOCH set (the reproducible-builds
convention), the start is that time and the hex digits come from the config hash, label
and tags, so the same run gives the same report, byte for byte.

The config hash is the SHA-256 of the resolved config (metrics expanded, conventions
resolved, as the report's `config` states it) in canonical JSON, less what says where the
config was read from and where results go (source, output, history, tracking): two runs
measured the same way have the same hash.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from receval_cli.errors import UsageError

_NOT_HASHED = ("source", "output", "history", "tracking")


@dataclass(frozen=True)
class RunLabel:
    """What the user says of a run: --label TEXT (a git sha, a model version) and
    --tag KEY=VALUE pairs."""

    label: str | None = None
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RunInfo:
    id: str
    started_at: datetime.datetime  # UTC
    config_hash: str
    label: str | None = None
    tags: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "started_at": timestamp_text(self.started_at),
            "label": self.label,
            "tags": dict(self.tags),
            "config_hash": self.config_hash,
        }

    def describe(self) -> str:
        """One line: `run 2026-11-24 09:30:12 UTC (id ...), label v3, tags team=search`."""
        text = f"run {self.started_at:%Y-%m-%d %H:%M:%S} UTC (id {self.id})"
        if self.label is not None:
            text += f", label {self.label}"
        if self.tags:
            text += ", tags " + ", ".join(f"{k}={v}" for k, v in self.tags.items())
        return text


def timestamp_text(moment: datetime.datetime) -> str:
    """ISO 8601 in UTC with a Z: 2026-11-24T09:30:12.123456Z."""
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def start_time() -> datetime.datetime:
    """Now, in UTC; SOURCE_DATE_EPOCH (seconds since 1970) when it is set."""
    fixed = os.environ.get("SOURCE_DATE_EPOCH")
    if fixed:
        try:
            return datetime.datetime.fromtimestamp(int(fixed), datetime.UTC)
        except (ValueError, OverflowError, OSError):
            fix = "Set it to whole seconds since 1970-01-01 UTC, or unset it."
            raise UsageError(
                f"SOURCE_DATE_EPOCH={fixed!r} is not a time. {fix}",
                key="SOURCE_DATE_EPOCH",
                found=fixed,
                fix=fix,
            ) from None
    return datetime.datetime.now(datetime.UTC)


def config_hash(config: dict[str, Any], conventions: Mapping[str, Any]) -> str:
    hashed = {k: v for k, v in config.items() if k not in _NOT_HASHED}
    text = json.dumps(
        {"config": hashed, "conventions": conventions},
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def run_info(
    started_at: datetime.datetime,
    config: dict[str, Any],
    conventions: Mapping[str, Any],
    label: RunLabel | None = None,
) -> RunInfo:
    label = label or RunLabel()
    digest = config_hash(config, conventions)
    if os.environ.get("SOURCE_DATE_EPOCH"):
        seed = json.dumps([digest, label.label, sorted(label.tags.items())])
        suffix = hashlib.sha256(seed.encode("utf-8")).hexdigest()[:8]
    else:
        suffix = secrets.token_hex(4)
    run_id = f"{started_at:%Y%m%dT%H%M%S.%f}Z-{suffix}"
    return RunInfo(run_id, started_at, digest, label.label, dict(label.tags))


def parse_tags(pairs: list[str]) -> dict[str, str]:
    """--tag KEY=VALUE pairs, checked: a key once, not empty."""
    tags: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            fix = "Write it as KEY=VALUE, e.g. --tag model_version=3."
            raise UsageError(
                f"--tag {pair!r} is not a KEY=VALUE pair. {fix}", key="--tag", found=pair, fix=fix
            )
        if key in tags:
            fix = "Give each key once."
            raise UsageError(
                f"--tag {key} is given twice ({tags[key]!r} and {value!r}). {fix}",
                key="--tag",
                found=pair,
                fix=fix,
            )
        tags[key] = value
    return tags
