"""Accuracy or beyond accuracy: which of the two a report's metric measures.

Accuracy metrics read the ground truth's relevance (ndcg, precision, auc, ...); beyond-
accuracy ones measure the lists themselves (coverage, novelty, diversity, popularity bias:
the families of metrics/beyond.py and metrics/exposure.py, and any per-user metric that
never reads relevance). A random model wins many of the latter, so the HTML report counts
"best" among accuracy metrics only and shows the two kinds apart.
"""

from __future__ import annotations

from collections.abc import Iterable

from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.dialects import spec_of
from receval_cli.metrics.registry import MetricDef

_BEYOND_FAMILIES = ("receval_cli.metrics.beyond", "receval_cli.metrics.exposure")
ACCURACY = "accuracy"
BEYOND = "beyond-accuracy"


def definition(metric: str) -> MetricDef:
    """The registry's entry of a report's metric name (e.g. ndcg@10, novelty@10(items=new))."""
    return lookup(spec_of(metric).name)


def is_beyond_accuracy(metric: str) -> bool:
    found = definition(metric)
    return found.function.__module__ in _BEYOND_FAMILIES or not found.reads_relevance


def kind_of(metric: str) -> str:
    return BEYOND if is_beyond_accuracy(metric) else ACCURACY


def split_kinds(metrics: Iterable[str]) -> dict[str, list[str]]:
    """The metrics by kind, accuracy first, each in the given order; a kind with no metric
    is left out."""
    found: dict[str, list[str]] = {ACCURACY: [], BEYOND: []}
    for metric in metrics:
        found[kind_of(metric)].append(metric)
    return {kind: members for kind, members in found.items() if members}


def family_of(metric: str) -> str:
    """The metric's family: its name and parameters, whatever the cutoff (ndcg@k)."""
    spec = spec_of(metric)
    params = str(MetricSpec(spec.name, None, spec.params)).removeprefix(spec.name)
    return f"{spec.name}@k{params}" if spec.k is not None else str(spec)
