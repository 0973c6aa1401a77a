"""Confidence intervals and paired comparisons over users.

A per-user metric is a mean (or, for the num_* counts, a sum) over its users, so its
uncertainty comes from which users happened to be sampled: the bootstrap resamples users
with replacement (all metrics with the same resample, vectorised: analysis/significance.py), the
normal method uses mean +- z sd / sqrt(n).

A comparison of a model with the baseline pairs their per-user values over the users both
count, d_u = model_u - baseline_u: the difference is mean(d) (times n for a sum), its
interval the same resampling of d, its p-value a paired test of mean(d) = 0 (t,
wilcoxon signed-rank, or sign-flip permutation). The p-values of every (model, metric) are
corrected together (Holm or Bonferroni). Global, pair and logged metrics have no per-user
values: they get no interval and no test, only the difference of the values; nor do
geometric means (mean=geometric).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

from receval_cli.analysis import power
from receval_cli.analysis import significance as stats_tests
from receval_cli.config.model import ComparisonConfig, ConfidenceConfig
from receval_cli.metrics import MetricDef, lookup
from receval_cli.metrics.dialects import spec_of
from receval_cli.metrics.registry import is_geometric, ratio_of
from receval_cli.results.comparison import Comparison
from receval_cli.results.report import Report

Floats = NDArray[np.float64]


def _per_user(report: Report) -> list[str]:
    """The report's per-user metrics (those with a value per user) whose value is an
    arithmetic mean (or a sum) of those: a geometric mean (mean=geometric) is not the mean
    these intervals and tests are about, so it gets none, only the difference; nor does a
    ratio of sums (registry.Ratio)."""
    if report.counted is None:
        return []
    return [
        name
        for name in report.metrics
        if name in report.counted.columns
        and not is_geometric(spec_of(name))
        and ratio_of(spec_of(name)) is None  # a ratio of sums: not a mean of the values
    ]


def _matrix(report: Report, names: list[str]) -> tuple[pl.Series, Floats]:
    """Users, and their values (users x metrics) with NaN where a user does not count."""
    assert report.per_user is not None
    assert report.counted is not None
    values = report.per_user.select(
        "user",
        *(
            pl.when(report.counted.get_column(n)).then(pl.col(n)).otherwise(None).alias(n)
            for n in names
        ),
    )
    matrix = values.select(names).to_numpy().astype(np.float64)
    return values.get_column("user"), np.where(np.isfinite(matrix), matrix, np.nan)


def _definition(name: str) -> MetricDef:
    return lookup(spec_of(name).name)


def _summed(names: list[str]) -> np.ndarray[Any, np.dtype[np.bool_]]:
    return np.array([_definition(n).aggregate == "sum" for n in names], dtype=np.bool_)


def _intervals(
    values: Floats,
    summed: np.ndarray[Any, Any],
    cfg: ConfidenceConfig,
    levels: Floats | None = None,
) -> Floats:
    """(metrics, 2): the interval of each column's mean (or sum), each at its own level
    (`levels`; default: the confidence's level for every column), from one resampling of
    the users (a column's interval depends only on the draws and its own values)."""
    counts = np.sum(~np.isnan(values), axis=0).astype(np.float64)
    column_levels = np.full(values.shape[1], cfg.level) if levels is None else levels
    samples = None
    if cfg.method == "bootstrap":
        samples = stats_tests.bootstrap_means(values, cfg.resamples, cfg.seed)
    low = np.full(values.shape[1], np.nan)
    high = np.full(values.shape[1], np.nan)
    for level in np.unique(column_levels):
        columns = column_levels == level
        if samples is None:
            part = stats_tests.normal_interval(values[:, columns], float(level))
        else:
            part = stats_tests.percentile_interval(samples[:, columns], float(level))
        low[columns], high[columns] = part
    scale = np.where(summed, counts, 1.0)
    return np.stack([low * scale, high * scale], axis=1)


def with_intervals(report: Report, cfg: ConfidenceConfig) -> Report:
    """The report with its confidence block: an interval for every per-user metric."""
    names = _per_user(report)
    intervals: dict[str, list[float]] = {}
    if names:
        _, values = _matrix(report, names)
        bounds = _intervals(values, _summed(names), cfg)
        intervals = {
            n: [float(lo), float(hi)]
            for n, (lo, hi) in zip(names, bounds, strict=True)
            if not (np.isnan(lo) or np.isnan(hi))  # fewer than 2 users: no interval
        }
    return dataclasses.replace(report, confidence={**cfg.model_dump(), "intervals": intervals})


def _p_value(differences: Floats, cfg: ComparisonConfig) -> float:
    if cfg.test == "wilcoxon":
        return stats_tests.wilcoxon_signed_rank(differences)
    if cfg.test == "permutation":
        return stats_tests.sign_flip_test(differences, cfg.resamples, cfg.seed)
    return stats_tests.paired_t_test(differences)


def _aligned(reports: Mapping[str, Report], names: Mapping[str, list[str]]) -> dict[str, Floats]:
    """Each report's per-user values (NaN where not counted) on one user index: the union
    of the reports' users, sorted, so row u is the same user in every matrix."""
    frames = []
    for report in reports.values():
        assert report.per_user is not None
        frames.append(report.per_user.select("user"))
    index = pl.concat(frames).unique().sort("user")
    aligned = {}
    for name, report in reports.items():
        users, values = _matrix(report, names[name])
        frame = pl.DataFrame({"user": users, "row": np.arange(users.len())})
        rows = index.join(frame, on="user", how="left").get_column("row").to_numpy()
        missing = np.isnan(rows.astype(np.float64))
        if values.shape[0] == 0:  # a report without per-user rows (only pair metrics)
            taken = np.full((index.height, values.shape[1]), np.nan)
        else:
            taken = values[np.where(missing, 0, rows).astype(np.int64)]
            taken[missing] = np.nan
        aligned[name] = taken
    return aligned


def _tested_metrics(
    report: Report, base_report: Report | None, base_metrics: Mapping[str, float | None]
) -> tuple[list[str], list[str]]:
    """The metrics both sides have, and those of them with per-user values to test (and a
    value on both sides)."""
    shared = [m for m in report.metrics if m in base_metrics]
    valued = [m for m in shared if report.metrics[m] is not None and base_metrics[m] is not None]
    per_user = [m for m in _per_user(report) if m in valued]
    if base_report is not None:
        per_user = [m for m in per_user if m in _per_user(base_report)]
    else:  # against fixed values, only a mean's difference is a mean of differences
        per_user = [m for m in per_user if _definition(m).aggregate == "mean"]
    return shared, per_user


def compare_with_baseline(
    models: Mapping[str, Report],
    baseline: str | None,
    baseline_values: Mapping[str, float | None] | None,
    cfg: ComparisonConfig,
    confidence: ConfidenceConfig,
) -> tuple[list[Comparison], dict[str, dict[str, Any]]]:
    """Every model (but the baseline) against the baseline model, or against the values of
    a saved report (`baseline_values`, taken as fixed), on every metric both have; and
    every model's confidence block (its intervals).

    All the intervals (each model's metrics, each model's differences) come from one
    resampling of the users, aligned across the models: the same draws serve every model
    and every difference (paired), and are made once. A model's intervals are at the
    confidence's level, the differences' at the comparison's (`cfg.level`, as `receval
    compare --level` draws them).
    """
    alpha = 1.0 - cfg.level
    base_report = models[baseline] if baseline is not None else None
    base_metrics: Mapping[str, float | None] = (
        base_report.metrics if base_report is not None else dict(baseline_values or {})
    )
    own = {name: _per_user(report) for name, report in models.items()}
    aligned = _aligned(models, own)
    blocks: list[tuple[str, str, list[str], Floats]] = []  # kind, model, metrics, values
    for name in models:
        blocks.append(("values", name, own[name], aligned[name]))
    plans: dict[str, tuple[list[str], list[str]]] = {}
    for name, report in models.items():
        if name == baseline:
            continue
        shared, tested = _tested_metrics(report, base_report, base_metrics)
        plans[name] = (shared, tested)
        columns = [own[name].index(m) for m in tested]
        mine = aligned[name][:, columns]
        if base_report is not None:
            theirs = aligned[baseline][:, [own[baseline].index(m) for m in tested]]  # type: ignore[index]
        else:
            fixed = [base_metrics[m] for m in tested]  # tested: a value on both sides
            theirs = np.array(fixed, dtype=np.float64)[None, :]
        blocks.append(("differences", name, tested, mine - theirs))
    levels = [confidence.level if b[0] == "values" else cfg.level for b in blocks]
    bounds = _intervals(
        np.concatenate([b[3] for b in blocks], axis=1),
        np.concatenate([_summed(b[2]) for b in blocks]),
        confidence,
        np.concatenate([np.full(len(b[2]), lv) for b, lv in zip(blocks, levels, strict=True)]),
    )
    offset = 0
    found: dict[tuple[str, str], Floats] = {}
    blocks_found: dict[str, dict[str, Any]] = {}
    for kind, name, metrics, values in blocks:
        part = bounds[offset : offset + len(metrics)]
        offset += len(metrics)
        if kind == "values":
            intervals = {
                m: [float(lo), float(hi)] for m, (lo, hi) in zip(metrics, part, strict=True)
            }
            blocks_found[name] = {**confidence.model_dump(), "intervals": intervals}
        else:
            found[(name, "low")], found[(name, "high")] = part[:, 0], part[:, 1]
            found[(name, "values")] = values
    rows: list[dict[str, Any]] = []
    for name, (shared, tested) in plans.items():
        for metric in shared:
            value, base = models[name].metrics[metric], base_metrics[metric]
            row: dict[str, Any] = {
                "model": name,
                "metric": metric,
                "value": value,
                "baseline": base,
                "difference": None if value is None or base is None else value - base,
            }
            if metric in tested:
                j = tested.index(metric)
                column = found[(name, "values")][:, j]
                column = column[~np.isnan(column)]
                scale = float(column.size) if _definition(metric).aggregate == "sum" else 1.0
                row.update(
                    users=int(column.size),
                    difference=float(column.mean()) * scale if column.size else 0.0,
                    low=float(found[(name, "low")][j]),
                    high=float(found[(name, "high")][j]),
                    p_value=_p_value(column, cfg) if column.size else 1.0,
                    **_detail(column, metric, scale, cfg),
                )
            rows.append(row)
    p = np.array([r["p_value"] for r in rows if "p_value" in r], dtype=np.float64)
    adjusted = iter(_correct(p, cfg.correction).tolist())
    results = []
    for row in rows:
        if "p_value" in row:
            row["p_adjusted"] = next(adjusted)
            row["verdict"] = _verdict(row, alpha)
        results.append(Comparison(alpha=alpha, **row))
    return results, blocks_found


def _detail(
    differences: Floats, metric: str, scale: float, cfg: ComparisonConfig
) -> dict[str, Any]:
    """Per user: wins, ties and losses of the model against the baseline (by the metric's
    direction); Cohen's d of the differences with its exact interval at the comparison's
    level; the minimum detectable difference at the configured power (in the metric's
    unit: a sum's scales with its users) and, for a mean, the users its target difference
    needs (analysis/power.py)."""
    higher = _definition(metric).higher_is_better
    found: dict[str, Any] = {
        "wins": int(np.sum(differences > 0 if higher else differences < 0)),
        "ties": int(np.sum(differences == 0)),
        "losses": int(np.sum(differences < 0 if higher else differences > 0)),
    }
    n = int(differences.size)
    if n < 2:
        return found
    alpha = 1.0 - cfg.level
    mean, sd = float(differences.mean()), float(np.std(differences, ddof=1))
    interval = power.effect_size_interval(mean, sd, n, cfg.level)
    if interval is not None:
        found.update(effect_size=mean / sd, effect_low=interval[0], effect_high=interval[1])
    detectable = power.detectable_difference(sd, n, alpha, cfg.power)
    found["detectable"] = None if detectable is None else detectable * scale
    if cfg.target_difference is not None and scale == 1.0:
        found["users_needed"] = power.users_needed(cfg.target_difference, sd, alpha, cfg.power)
    return found


def _correct(p: Floats, correction: str) -> Floats:
    if correction == "holm":
        return stats_tests.holm(p)
    if correction == "bonferroni":
        return stats_tests.bonferroni(p)
    return p


def _verdict(row: Mapping[str, Any], alpha: float) -> str:
    if row["p_adjusted"] >= alpha or row["difference"] == 0:
        return "tie"
    better = row["difference"] > 0
    if not _definition(row["metric"]).higher_is_better:
        better = not better
    return "win" if better else "loss"
