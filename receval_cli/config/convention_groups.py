"""Which conventions each metric runs under: the config's, or its tool's for a name written
in a tool's notation (metrics/dialects.py: trec_eval's `P_10` ranks as trec_eval does).

The metrics are grouped by the conventions they need; a run evaluates each group in its
own pass and assembles one report (evaluation/metric_groups.py), so a config may mix
receval's names with trec_eval's, ir_measures' and ranx's, each meaning what it means.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import cast

from receval_cli.config.conventions import Conventions
from receval_cli.errors import ConfigError
from receval_cli.metrics import REGISTRY, MetricSpec
from receval_cli.metrics.dialects import ToolMeasure, measure_of
from receval_cli.metrics.tie_expectation import order_dependent
from receval_cli.results.blocks import ConventionsBlock, ToolMeasureBlock

# how the inputs are read, not what a metric means: a tool's measure keeps the config's
CARRIED = ("duplicates", "truth_duplicates")


@dataclass(frozen=True)
class MetricGroup:
    """Metrics that share their conventions: one pass of the run."""

    conventions: Conventions
    specs: tuple[MetricSpec, ...]


def tool_conventions(config: Conventions, measure: ToolMeasure) -> Conventions:
    """The conventions a tool's measure runs under: its tool's preset and the settings the
    measure itself changes (ir_measures' rel=2, ranx's -l2). Where the config's preset is
    that tool's, the settings written beside it apply too (trec_eval's -c, -M, -l); else
    only how the inputs are read (CARRIED) comes from the config."""
    if config.preset == measure.preset:
        written = {key: getattr(config, key) for key in config.given}
    else:
        written = {key: getattr(config, key) for key in CARRIED if key in config.given}
    return Conventions.model_validate({"preset": measure.preset, **written, **measure.settings})


def _key(conventions: Conventions) -> str:
    return json.dumps(conventions.to_wire(), sort_keys=True)


def metric_groups(config: Conventions, specs: tuple[MetricSpec, ...]) -> tuple[MetricGroup, ...]:
    """The specs grouped by their conventions, in the order of their first metric; the
    config's own conventions first where its own names are listed."""
    groups: dict[str, tuple[Conventions, list[MetricSpec]]] = {}
    own = _key(config)
    if any(measure_of(s) is None for s in specs):
        groups[own] = (config, [])
    for spec in specs:
        measure = measure_of(spec)
        conventions = config if measure is None else tool_conventions(config, measure)
        key = _key(conventions)
        groups.setdefault(key, (conventions, []))[1].append(spec)
    for conventions, group in groups.values():
        refuse_order_dependent(conventions, group)
    return tuple(MetricGroup(c, tuple(s)) for c, s in groups.values())


def refuse_order_dependent(conventions: Conventions, specs: list[MetricSpec]) -> None:
    """Under tie_break expected, refuse by name the metrics whose expected value over the
    orders of tied items has no closed form (metrics/tie_expectation.py), before anything
    is read."""
    if conventions.tie_break != "expected":
        return
    found = {}
    for spec in specs:
        why = order_dependent(spec, conventions.metric_params(spec))
        if why is not None:
            found[str(spec)] = why
    if not found:
        return
    named = ", ".join(f"{metric} ({why})" for metric, why in list(found.items())[:5])
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    fix = (
        "Evaluate them in a second config with another tie_break (item_desc, item_asc, ...), "
        "or leave them out; `receval metrics NAME` says what tie_break expected computes."
    )
    raise ConfigError(
        "conventions.tie_break is expected (each metric's mean over every order of the tied "
        f"items), which has no closed form for: {named}{more}. {fix}",
        key="conventions.tie_break",
        found=list(found),
        fix=fix,
    )


def conventions_block(run: Conventions, specs: tuple[MetricSpec, ...]) -> ConventionsBlock:
    """A report's `conventions`: the run's, and where tools' names are among the specs,
    each one's under `by_metric` (stated)."""
    block = cast(ConventionsBlock, run.model_dump())
    by_metric = stated(specs, run)
    if by_metric:
        block["by_metric"] = by_metric
    return block


def stated(specs: tuple[MetricSpec, ...], run: Conventions) -> dict[str, ToolMeasureBlock]:
    """The report's statement of each tool measure's conventions (the `by_metric` block):
    its tool, the receval metric, the preset, and where it differs from the run's
    conventions: the ranking's settings and the metric's own parameters."""
    block: dict[str, ToolMeasureBlock] = {}
    for spec in specs:
        measure = measure_of(spec)
        if measure is None:
            continue
        own = tool_conventions(run, measure)
        plain = MetricSpec(spec.name, spec.k, spec.params)
        mine, theirs = own.model_dump(), run.model_dump()
        differs = {
            key: value
            for key, value in mine.items()
            if key not in _PER_METRIC and key != "preset" and value != theirs[key]
        }
        run_params = run.metric_params(plain)
        differs |= {
            key: value
            for key, value in own.metric_params(spec).items()
            if run_params.get(key) != value and key not in spec.param_dict()
        }
        block[str(spec)] = {
            "tool": measure.tool,
            "metric": str(plain),
            "preset": measure.preset,
            "differs": differs,
        }
        if measure.source:  # ir_measures: which of its providers computes it
            block[str(spec)]["provider"] = measure.source
    return block


# the conventions that are a metric's parameters (stated per metric, where it takes them)
_PER_METRIC = frozenset(
    param.convention
    for definition in REGISTRY.values()
    for param in definition.all_params()
    if param.convention is not None
)
