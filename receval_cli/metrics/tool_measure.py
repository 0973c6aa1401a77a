"""A tool's measure as receval computes it: the receval metric, labelled with the
tool's name, and the conventions it runs under (metrics/dialects.py reads the names)."""

from __future__ import annotations

from dataclasses import dataclass, field

from receval_cli.metrics.registry import SpecError, resolve
from receval_cli.metrics.spec import MetricSpec, SpecSyntaxError


@dataclass(frozen=True)
class ToolMeasure:
    """One tool's measure as receval computes it: `spec` is the receval metric, labelled
    with the tool's name (the report's key); `preset` and `settings` are the conventions it
    runs under (the tool's preset, and the settings that measure changes in it)."""

    tool: str
    name: str  # as the tool prints it (P_10, nDCG@10, ranx:ndcg@10): the report's key
    spec: MetricSpec
    preset: str
    settings: dict[str, object] = field(default_factory=dict)
    source: str = ""  # how the tool defines it, where that differs from the preset's rule


class DialectError(SpecSyntaxError):
    """A name in a tool's notation that the tool (or receval) does not define."""


def labelled(spec: str, label: str, tool: str) -> MetricSpec:
    parsed = MetricSpec.parse(spec)
    return checked_spec(MetricSpec(parsed.name, parsed.k, parsed.params, label, tool))


def checked_spec(spec: MetricSpec) -> MetricSpec:
    try:
        return resolve(spec)
    except SpecError as error:  # a parameter value out of the metric's range
        raise DialectError(str(error)) from None
