"""The numbers the HTML page (report/html.py) works out from a report, besides those the
report holds: the users' mean of a histogram as the metric takes it, how deep the lists
behind the exposure go, the metric families and the one cutoff drawn of each, a value's
interval.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from receval_cli.evaluation.item_exposure import exposure_depth
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.dialects import spec_of
from receval_cli.metrics.registry import GEOMETRIC_FLOOR
from receval_cli.results.report import Report


def representatives(metrics: list[str], gated: set[str]) -> dict[str, str]:
    """One metric per family (name and parameters, whatever the cutoff): the cutoff a
    gate names (`gated`), else the deepest one; in the order of the metrics."""
    chosen: dict[str, str] = {}
    for metric in metrics:
        spec = spec_of(metric)
        family = str(MetricSpec(spec.name, None, spec.params))
        current = chosen.get(family)
        deeper = current is not None and (spec_of(current).k or 0) < (spec.k or 0)
        if current is None or (current not in gated and (metric in gated or deeper)):
            chosen[family] = metric
    return chosen


def siblings(metrics: Iterable[str], family: str, metric: str) -> str:
    """The family's other cutoffs among `metrics`, as text (e.g. "also @5, @20")."""
    others = []
    for name in metrics:
        spec = spec_of(name)
        if name != metric and str(MetricSpec(spec.name, None, spec.params)) == family:
            others.append(f"@{spec.k}")
    return f"also {', '.join(others)}" if others else ""


def lists_depth(metrics: Iterable[str], max_depth: int | None) -> str:
    """How deep the lists behind the exposure go: top-K, or the whole lists."""
    specs = tuple(
        spec for spec in map(spec_of, metrics) if lookup(spec.name).scope in ("user", "global")
    )
    deepest = exposure_depth(specs)
    if max_depth is not None:
        deepest = max_depth if deepest is None else min(deepest, max_depth)
    return "whole" if deepest is None else f"top-{deepest}"


def segment_bar(
    part: Report | None, metric: str
) -> tuple[float | None, tuple[float, float] | None]:
    """A segment's value of the metric and its interval (None: not evaluated)."""
    if part is None:
        return None, None
    return part.metrics.get(metric), interval_of(part, metric)


def family_label(family: str) -> str:
    spec = spec_of(family)
    params = str(spec).removeprefix(spec.name)
    return f"{spec.name}@k{params}"


def users_mean(series: list[float], geometric: bool) -> float:
    """The users' mean as the metric takes it (mean=geometric: exp of the mean of
    log(max(value, 1e-5))); NaN without users."""
    if not series:
        return math.nan
    if geometric:
        logs = [math.log(max(v, GEOMETRIC_FLOOR)) for v in series]
        return math.exp(math.fsum(logs) / len(logs))
    return math.fsum(series) / len(series)


def interval_of(report: Report, metric: str) -> tuple[float, float] | None:
    found = (report.confidence or {}).get("intervals", {}).get(metric)
    return None if found is None else (float(found[0]), float(found[1]))


def exposed(histogram: list[tuple[int, int]]) -> bool:
    """Some item is in some list."""
    return any(count and items for count, items in histogram)
