"""The Report and the ModelsReport: results as data (and their JSON form).

Values are never rounded in the Report; only the table rounds, when printing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl

from receval_cli.analysis.gates import GateResult
from receval_cli.version import __version__

if TYPE_CHECKING:
    from receval_cli.analysis.intervals import Comparison


@dataclass(frozen=True)
class Report:
    metrics: dict[str, float]
    config: dict[str, Any]
    conventions: dict[str, Any]
    inputs: dict[str, dict[str, Any]]
    users: dict[str, Any]
    gates: list[GateResult] = field(default_factory=list)
    elapsed_seconds: float = 0.0
    per_user: pl.DataFrame | None = field(default=None, repr=False)
    # per user and per-user metric: True when the user is in that metric's mean
    counted: pl.DataFrame | None = field(default=None, repr=False)
    # the --per-user table (user, status, per-user metrics, null where the user is not in
    # the metric's mean), sorted by user: in memory for one bucket, else the buckets' files
    per_user_rows: pl.LazyFrame | None = field(default=None, repr=False)
    per_user_files: Any = field(default=None, repr=False)  # keeps per_user_rows' files
    # confidence intervals: {"level", "method", ..., "intervals": {metric: [low, high]}}
    confidence: dict[str, Any] | None = None
    # segment_by: each segment's own Report, and the segments that could not be evaluated
    segments: dict[str, Report] = field(default_factory=dict)
    segments_skipped: dict[str, str] = field(default_factory=dict)
    attributes: pl.DataFrame | None = field(default=None, repr=False)  # user -> segment
    pairs: dict[str, Any] | None = None  # rating metrics: the (user, item) pairs scored
    logged: dict[str, Any] | None = None  # ctr: recommendations matched in the log
    items: dict[str, Any] | None = None  # beyond accuracy: the catalog and the lists' items
    # beyond accuracy: (item, lists, in_universe): how many capped lists hold each item,
    # the universe's items never recommended included (lists 0); in_universe null without one
    exposure: pl.DataFrame | None = field(default=None, repr=False)
    # the recommended items the catalog (or log, or ground truth) lacks: evaluation/unknown_items.py
    unknown_items: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    version: str = __version__

    @property
    def passed(self) -> bool:
        return all(g.passed for g in self.gates)

    def to_dict(self) -> dict[str, Any]:
        return {
            "receval_version": self.version,
            "metrics": self.metrics,
            "gates": {
                "passed": self.passed,
                "results": [g.to_dict() for g in self.gates],
            },
            **({"confidence": self.confidence} if self.confidence is not None else {}),
            "users": self.users,
            **({"pairs": self.pairs} if self.pairs is not None else {}),
            **({"logged": self.logged} if self.logged is not None else {}),
            **({"items": self.items} if self.items is not None else {}),
            **({"unknown_items": self.unknown_items} if self.unknown_items is not None else {}),
            "warnings": self.warnings,
            **(
                {"segments": self.segments_dict()} if self.segments or self.segments_skipped else {}
            ),
            "conventions": self.conventions,
            "inputs": self.inputs,
            "config": self.config,
            "elapsed_seconds": self.elapsed_seconds,
        }

    def segments_dict(self) -> dict[str, Any]:
        """Per segment: its users evaluated, metrics and intervals (or why it was not)."""
        found: dict[str, Any] = {}
        for name, part in self.segments.items():
            found[name] = {"users": part.users["evaluated"], "metrics": part.metrics}
            if part.confidence is not None:
                found[name]["intervals"] = part.confidence["intervals"]
        for name, reason in self.segments_skipped.items():
            found[name] = {"users": 0, "not_evaluated": reason}
        return found


# a model's report keys that the several-model report states once, for the whole run
_RUN_WIDE = ("receval_version", "gates", "warnings", "conventions", "config", "elapsed_seconds")


@dataclass(frozen=True)
class ModelsReport:
    """Several models' Reports, their comparisons with the baseline, and the gates."""

    models: dict[str, Report]
    baseline: str | None
    comparisons: list[Comparison]
    comparison: dict[str, Any] | None  # the comparison settings (test, correction, ...)
    gates: list[GateResult]
    config: dict[str, Any]
    conventions: dict[str, Any]
    elapsed_seconds: float = 0.0
    baseline_report: str | None = None  # the saved report compared with, if any
    version: str = __version__
    best: dict[str, list[str]] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(g.passed for g in self.gates)

    @property
    def warnings(self) -> list[str]:
        """Every model's warnings (each names its model)."""
        return [w for report in self.models.values() for w in report.warnings]

    def to_dict(self) -> dict[str, Any]:
        models = {}
        for name, report in self.models.items():
            data = report.to_dict()
            for key in _RUN_WIDE:
                data.pop(key, None)
            models[name] = data
        comparisons = None
        if self.comparison is not None:
            comparisons = {
                **self.comparison,
                "baseline": self.baseline,
                "baseline_report": self.baseline_report,
                "results": [c.to_dict() for c in self.comparisons],
            }
        return {
            "receval_version": self.version,
            "models": models,
            "best": self.best,
            **({"comparisons": comparisons} if comparisons is not None else {}),
            "gates": {"passed": self.passed, "results": [g.to_dict() for g in self.gates]},
            "warnings": self.warnings,
            "conventions": self.conventions,
            "config": self.config,
            "elapsed_seconds": self.elapsed_seconds,
        }
