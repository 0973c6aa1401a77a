"""The `fairness` block of a model's report (a config's `fairness:` block, FairnessConfig).

items     per item group (metrics/fairness.py's groups, at k): its items and their share
          of the grouped items, its share of the top-k slots and of the position-weighted
          exposure 1/log2(1 + rank) (Singh and Joachims), P(R@k | g) (RSP's: the chance
          that an item of g the user has not interacted with is recommended), and its
          relevant pairs outside the users' logs with the share of them found in the top k
          (P(R@k | g, y=1), REO's: the group's recall), each ratio with its interval
          over users (ratio_interval: the delta method); with rsp, reo and
          exposure_disparity, the disparities over these groups.
segments  per segment_by attribute and per compared per-user metric: each segment's
          value and users, its gap to the best segment with a Welch interval (the
          difference of two independent means, Welch's standard error, Student's t at
          the Welch-Satterthwaite degrees of freedom), the largest gap (max - min); for
          hit_rate@k, each segment's miss rate 1 - hit_rate and RecList's miss-rate
          equality difference, the mean over the segments of |miss rate of the
          segment - miss rate of all users| (RecList's
          EvalRS `miss_rate_equality_difference`, here not negated: lower is fairer).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any

import polars as pl

from receval_cli.analysis.power import t_quantile
from receval_cli.config.fairness_specs import item_group_specs, segment_specs
from receval_cli.config.model import FairnessConfig
from receval_cli.evaluation.segment_split import segment_value
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.exact_sum import exact_sum
from receval_cli.metrics.fairness import (
    exposure_means,
    reo_probabilities,
    rsp_probabilities,
)
from receval_cli.metrics.fairness_state import (
    POOL,
    RANKED,
    REO_USERS,
    RSP_USERS,
    fairness_state,
)
from receval_cli.results.report import Report


def with_fairness(report: Report, fairness: FairnessConfig, path: Any) -> Report:
    """The report with its `fairness` block."""
    block = {
        "k": fairness.k,
        "groups": fairness.groups,
        **({"pop_ratio": fairness.pop_ratio} if fairness.groups == "popularity" else {}),
        "level": fairness.level,
        "items": item_block(report, fairness),
        "segments": segment_block(report, segment_specs(path, fairness), fairness.level),
    }
    return dataclasses.replace(report, fairness=block)


def item_block(report: Report, fairness: FairnessConfig) -> dict[str, Any] | None:
    """The disparity metrics' values and the per-group table (None without the state)."""
    params = {"groups": fairness.groups, "pop_ratio": fairness.pop_ratio}
    name = fairness_state(fairness.k, params).name
    state = (report.fairness_states or {}).get(name)
    if state is None:
        return None
    specs = item_group_specs(fairness)
    return {
        "disparity": {str(s): report.metrics.get(str(s)) for s in specs},
        "groups": group_rows(state, fairness.level),
    }


def group_rows(state: pl.DataFrame, level: float) -> list[dict[str, Any]]:
    """One row per item group of the merged fairness state, in the groups' order; the
    ratios' intervals at `level` (ratio_interval)."""
    kind = pl.col("kind")
    ranked, pool = state.filter(kind == RANKED), state.filter(kind == POOL)
    recommended = rsp_probabilities(ranked, pool)
    found = reo_probabilities(ranked, pool)
    exposure = exposure_means(ranked, pool)
    placed = dict(ranked.group_by("group").agg(pl.col("placed").sum()).iter_rows())
    hits = dict(ranked.group_by("group").agg(pl.col("hits").sum()).iter_rows())
    rows = []
    for group, size, relevant, users in (
        pool.sort("group").select("group", "size", "relevant", "users").iter_rows()
    ):
        mine = state.filter(pl.col("group") == group)
        items = int(size) // int(users) if users else None
        weighted = exposure.get(str(group), 0.0) * int(size)  # the group's exposure sum
        rows.append(
            {
                "group": group,
                "items": items,
                "slots": int(placed.get(group, 0)),
                "exposure": weighted,
                "recommended": recommended.get(str(group)),
                "recommended_interval": ratio_interval(mine.filter(kind == RSP_USERS), level),
                "relevant": int(relevant),
                "found": int(hits.get(group, 0)),
                "recall": found.get(str(group)),
                "recall_interval": ratio_interval(mine.filter(kind == REO_USERS), level),
            }
        )
    _shares(rows, "items", "item_share")
    _shares(rows, "slots", "slot_share")
    _shares(rows, "exposure", "exposure_share")
    for row in rows:
        del row["exposure"]
    return rows


def ratio_interval(histogram: pl.DataFrame, level: float) -> list[float] | None:
    """The interval of a ratio of sums over users, R = sum a_u / sum b_u, by the delta
    method (the ratio estimator's variance: sum_u (a_u - R b_u)^2 n / ((n - 1) (sum b)^2),
    Deng et al., "Applying the Delta Method in Metric Analytics", KDD 2018): R +- z sd.
    `histogram` holds the users' pairs (a, b) and how many users have each (users).
    None when sum b is 0 or fewer than 2 users count."""
    pairs = sorted(histogram.select("a", "b", "users").iter_rows())
    n = sum(int(c) for _, _, c in pairs)
    total_a = sum(int(a) * int(c) for a, _, c in pairs)
    total_b = sum(int(b) * int(c) for _, b, c in pairs)
    if total_b == 0 or n < 2:
        return None
    ratio = total_a / total_b
    squares = math.fsum(int(c) * (int(a) - ratio * int(b)) ** 2 for a, b, c in pairs)
    deviation = math.sqrt(squares * n / ((n - 1) * total_b**2))
    z = NormalDist().inv_cdf(0.5 + level / 2)
    return [ratio - z * deviation, ratio + z * deviation]


def _shares(rows: list[dict[str, Any]], column: str, share: str) -> None:
    total = math.fsum(float(r[column] or 0) for r in rows)
    for row in rows:
        row[share] = float(row[column] or 0) / total if total else None


def segment_block(
    report: Report, specs: tuple[MetricSpec, ...], level: float
) -> dict[str, Any] | None:
    """Per segment_by attribute, per compared metric: the segments' values and gaps."""
    if not report.segments:
        return None
    attributes: dict[str, dict[str, Report]] = {}
    for name, part in report.segments.items():
        attribute, _ = segment_value(name)
        attributes.setdefault(attribute, {})[name] = part
    block: dict[str, Any] = {}
    for attribute, parts in attributes.items():
        block[attribute] = {
            str(spec): compared(report, parts, spec, level)
            for spec in specs
            if str(spec) in report.metrics
        }
    return block


def _values(part: Report, name: str) -> pl.Series | None:
    """The segment's per-user values of the metric, where its users count (None when the
    report holds no per-user values)."""
    if part.per_user is None or part.counted is None or name not in part.per_user.columns:
        return None
    return part.per_user.get_column(name).filter(part.counted.get_column(name))


def compared(
    report: Report, parts: dict[str, Report], spec: MetricSpec, level: float
) -> dict[str, Any]:
    """The segments' values of one metric, their gaps to the best with Welch intervals,
    the largest gap, and for hit_rate the miss rates and RecList's MRED."""
    name = str(spec)
    higher = lookup(spec.name).higher_is_better
    valued: dict[str, float] = {}
    for segment, part in parts.items():
        value = part.metrics.get(name)
        if value is not None:
            valued[segment] = value
    if not valued:
        return {"segments": {}}
    best = (max if higher else min)(valued, key=lambda s: valued[s])
    best_values = _values(parts[best], name)
    rows: dict[str, Any] = {}
    for segment, value in valued.items():
        gap = (valued[best] - value) if higher else (value - valued[best])
        mine = _values(parts[segment], name)
        row: dict[str, Any] = {"value": value, "users": _count(mine), "gap": gap}
        row["interval"] = welch(best_values, mine, gap, level) if segment != best else None
        rows[segment] = row
    worst = max(rows, key=lambda s: rows[s]["gap"])
    result: dict[str, Any] = {
        "best": best,
        "worst": worst,
        "max_min": rows[worst]["gap"],
        "interval": rows[worst]["interval"],
        "segments": rows,
    }
    if spec.name == "hit_rate" and report.metrics.get(name) is not None:
        overall = 1 - float(report.metrics[name] or 0.0)
        for row in rows.values():
            row["miss_rate"] = 1 - row["value"]
        gaps = [abs(row["miss_rate"] - overall) for row in rows.values()]
        result["miss_rate"] = overall
        result["miss_rate_equality_difference"] = math.fsum(gaps) / len(gaps)
    return result


def _count(values: pl.Series | None) -> int | None:
    return None if values is None else len(values)


def welch(
    first: Sequence[float] | pl.Series | None,
    second: Sequence[float] | pl.Series | None,
    gap: float,
    level: float,
) -> list[float] | None:
    """Welch's interval of a difference of two independent means: gap +- t sqrt(a + b),
    a = s1^2 / n1, b = s2^2 / n2 (sample variances), t Student's at `level` with the
    Welch-Satterthwaite degrees of freedom (a + b)^2 / (a^2 / (n1 - 1) + b^2 / (n2 - 1));
    None with fewer than 2 values on a side, the gap itself when both sides are constant."""
    if first is None or second is None or len(first) < 2 or len(second) < 2:
        return None
    a, b = _variance(first) / len(first), _variance(second) / len(second)
    if a + b == 0:
        return [gap, gap]
    freedom = (a + b) ** 2 / (a * a / (len(first) - 1) + b * b / (len(second) - 1))
    error = math.sqrt(a + b) * t_quantile(1.0 - level, freedom)
    return [gap - error, gap + error]


def _variance(values: Sequence[float] | pl.Series) -> float:
    """The sample variance (n - 1) of the users' values, from exact sums (the mean, then
    the squared deviations from it, metrics/exact_sum.py): the same bits whatever order
    the values come in, so every engine's buckets give the in-memory run's interval."""
    series = pl.Series(values, dtype=pl.Float64)
    mean = exact_sum(series).mean(len(series))
    deviations = series - mean
    return exact_sum(deviations * deviations).mean(len(series) - 1)
