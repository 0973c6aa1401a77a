"""Loading a config file: read, validate, expand the metrics (paths relative to its folder)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import (
    ValidationError,
)

from receval_cli.config.convention_groups import MetricGroup, metric_groups
from receval_cli.config.metric_lists import (
    canonical_gates,
    expand_metrics,
    fallback_notes,
    mixed_list_notes,
    sampled_notes,
)
from receval_cli.config.model import Config, Gate
from receval_cli.config.overrides import apply_settings, expand_variables
from receval_cli.config.validation_errors import validation_config_error
from receval_cli.config.yaml_file import found_value, read_yaml
from receval_cli.errors import ConfigError, InputError
from receval_cli.metrics import MetricSpec


@dataclass(frozen=True)
class LoadedConfig:
    """A validated config, its file, and its metric list expanded into specs."""

    config: Config
    path: Path
    specs: tuple[MetricSpec, ...]
    gates: dict[str, Gate]
    # what the run's report warns of the config itself (a metric in another tool's spelling)
    notes: tuple[str, ...] = ()
    # metrics that need other conventions than the config's (tools' names: P_10 ranks as
    # trec_eval does), grouped, one pass each; empty: one pass under config.conventions
    groups: tuple[MetricGroup, ...] = ()

    def passes(self) -> tuple[LoadedConfig, ...]:
        """The config once per group of metrics (its specs and conventions), the first under
        the config's conventions; the config alone when one pass computes everything."""
        if not self.groups:
            return (self,)
        return tuple(
            dataclasses.replace(
                self,
                config=self.config.model_copy(update={"conventions": group.conventions}),
                specs=group.specs,
                groups=(),
            )
            for group in self.groups
        )

    def resolve_path(self, path: str) -> Path:
        """A local path, resolved against the config's folder. A Spark table or a URI has
        no local path: engine: spark reads the predictions, the ground truth, the catalog,
        the interactions and the baseline there (location()); anything else read from one
        is refused, saying so."""
        if is_remote(path):
            kind = "a Spark table" if path.startswith("table:") else "a URI"
            fix = (
                "Use engine: spark for those inputs; the polars engines, segments and the "
                "outputs need a local path."
            )
            raise InputError(
                f"{self.path}: '{path}' is {kind}, which only engine: spark reads (as the "
                f"predictions, ground truth, catalog, interactions or baseline). {fix}",
                path=self.path,
                found=path,
                fix=fix,
            )
        if path.startswith("frame:"):  # a frame given in its place (inputs/scanning.py)
            return Path(path)
        candidate = Path(path).expanduser()
        return candidate if candidate.is_absolute() else self.path.parent / candidate

    def location(self, path: str) -> str:
        """Where an input is, as Spark is given it: a Spark table (`table:NAME`) or a URI
        with a scheme (`s3a://...`, `file:///...`) unchanged, a plain path resolved
        against the config's folder."""
        return path if is_remote(path) else str(self.resolve_path(path))


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:/")


def is_remote(path: str) -> bool:
    """A Spark table (`table:NAME`) or a URI with a scheme of two letters or more (so a
    Windows drive, C:/, is a path): engine: spark reads it as it is written."""
    return path.startswith("table:") or _SCHEME.match(path) is not None


def load_config(
    path: Path, preset: str | None = None, settings: Iterable[str] = ()
) -> LoadedConfig:
    """Read, validate and expand a config file; every problem raises ConfigError.

    `preset` (from the command line) replaces the config's conventions.preset; the other
    conventions the config gives still override single settings of the preset.
    `settings`: --set's KEY=VALUE, each set in the config before it is validated
    (config/overrides.py).
    """
    raw = read_yaml(path)
    if settings and isinstance(raw, dict):
        raw = apply_settings(raw, settings, path)
    return config_from_mapping(raw, path, preset)


def config_from_mapping(raw: Any, path: Path, preset: str | None = None) -> LoadedConfig:
    """load_config's validation and expansion of a config already read (the Python API's
    `receval.run` gives a mapping): `path` names it in messages, and relative paths are
    read from its folder."""
    if not isinstance(raw, dict):
        found = "an empty file" if raw is None else f"a {type(raw).__name__}"
        fix = "Start from configs/quickstart.yaml."
        raise ConfigError(
            f"{path}: the config must be a mapping with at least predictions, ground_truth "
            f"and metrics; found {found}. {fix}",
            path=path,
            found=found,
            fix=fix,
        )
    if preset is not None:
        conventions = raw.get("conventions") or {}
        if not isinstance(conventions, dict):
            key = "conventions"
            raise ConfigError(
                f"{path}: {key} must be a mapping, found {conventions!r}.",
                path=path,
                key=key,
                found=found_value(conventions),
            )
        raw["conventions"] = {**conventions, "preset": preset}
    raw = expand_variables(raw, path)  # ${NAME}: the environment's variables
    try:
        config = Config.model_validate(raw)
    except ValidationError as error:
        raise validation_config_error(path, error) from None
    specs = expand_metrics(path, config)
    gates = canonical_gates(path, config, specs)
    groups = metric_groups(config.conventions, specs)
    if len(groups) == 1:  # one pass: under its conventions (a tool's, for a tool's names)
        config = config.model_copy(update={"conventions": groups[0].conventions})
        groups = ()
    notes = fallback_notes(config.metrics) + mixed_list_notes(config.metrics)
    notes += sampled_notes(specs)
    return LoadedConfig(config, path, specs, gates, notes, groups)
