"""Item-fairness metrics: how evenly the top-k lists treat groups of items.

Each is std over groups / mean over groups (population std, numpy's np.std) of a
per-group probability, from the mergeable state of metrics/fairness_state.py (its item
groups are described there): lower is fairer, 0 when every group gets the same. A group
whose denominator is 0 has no probability and is left out (Elliot gives nan); when no
group is left, or every probability is 0, the metric has no value (null, with a
warning).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import polars as pl

from receval_cli.metrics.fairness_state import (
    FAIR_PARAMS,
    POOL,
    RANKED,
    fairness_state,
)
from receval_cli.metrics.registry import Params, Universe, register_global
from receval_cli.metrics.spec import MetricSpec


def _split(state: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The merged state's ranked rows and pool rows."""
    kind = pl.col("kind")
    return state.filter(kind == RANKED), state.filter(kind == POOL)


def spread(shares: dict[str, float]) -> float | None:
    """std / mean of the groups' values (population std, as numpy's np.std); None when
    no group has a value or every value is 0 (0 / 0)."""
    values = [shares[g] for g in sorted(shares)]
    mean = math.fsum(values) / len(values) if values else 0.0
    if mean == 0:
        return None
    if min(values) == max(values):
        return 0.0  # exactly (the rounded mean may differ from the equal values)
    variance = math.fsum((v - mean) ** 2 for v in values) / len(values)
    return math.sqrt(variance) / mean


NO_VALUE = (
    "no item group has a non-zero probability (no grouped item recommended, or for reo "
    "no relevant grouped item found), so std / mean over the groups is 0 / 0"
)


def ratios(
    numerators: pl.DataFrame, denominators: pl.DataFrame, num: str, den: str
) -> dict[str, float]:
    """Per group with a non-zero denominator: its numerator / denominator."""
    tops = dict(numerators.group_by("group").agg(pl.col(num).sum()).iter_rows())
    out: dict[str, float] = {}
    for group, total in denominators.select("group", den).iter_rows():
        if total > 0:
            out[str(group)] = int(tops.get(group, 0)) / int(total)
    return out


def rsp_probabilities(ranked: pl.DataFrame, pool: pl.DataFrame) -> dict[str, float]:
    """P(R@k | g): the group's recommended pairs / its pairs outside the users' logs."""
    unseen = pool.select("group", (pl.col("size") - pl.col("known")).alias("unseen"))
    return ratios(ranked, unseen, "placed", "unseen")


def reo_probabilities(ranked: pl.DataFrame, pool: pl.DataFrame) -> dict[str, float]:
    """P(R@k | g, y=1): the group's relevant recommended pairs / its relevant pairs
    outside the users' logs."""
    return ratios(ranked, pool, "hits", "relevant")


def exposure_means(ranked: pl.DataFrame, pool: pl.DataFrame) -> dict[str, float]:
    """Per group: its position-weighted exposure sum 1/log2(1+rank) over its placed pairs
    (added in rank order), divided by the group's (user, item) pairs."""
    sizes = dict(pool.select("group", "size").iter_rows())
    out = {}
    for group, size in sizes.items():
        rows = ranked.filter(pl.col("group") == group).sort("rank")
        weights: Sequence[float] = [
            int(n) / math.log2(1 + int(r)) for r, n in rows.select("rank", "placed").iter_rows()
        ]
        if size > 0:
            out[str(group)] = math.fsum(weights) / int(size)
    return out


@register_global(
    "rsp",
    summary="Ranking-based statistical parity of item groups: std / mean over groups of the "
    "chance that a group's unseen item is in a top-k list (Zhu et al. SIGIR 2020; Elliot's "
    "RSP).",
    formula="std_g P(R@k|g) / mean_g P(R@k|g), P(R@k|g) = sum_u |L_u@k ∩ g| / sum_u |g \\ log_u|",
    state=fairness_state,
    params=FAIR_PARAMS,
    upper_bound=None,
    higher_is_better=False,
    no_value=NO_VALUE,
)
def rsp(state: pl.DataFrame, universe: Universe, k: int | None, p: Params) -> float | None:
    """Elliot's RSP (elliot/evaluation/metrics/fairness/rsp/rsp.py, and PopRSP for
    groups=popularity): over the users with a non-empty list, the numerator counts every
    top-k item of the group, the denominator the group's items not in the user's log.
    Example: two groups, P = 2/8 and 1/8: std 1/16, mean 3/16, RSP 1/3."""
    ranked, pool = _split(state)
    return spread(rsp_probabilities(ranked, pool))


@register_global(
    "reo",
    summary="Ranking-based equal opportunity of item groups: std / mean over groups of the "
    "chance that a group's relevant item is in the top k (Zhu et al. SIGIR 2020; Elliot's "
    "REO).",
    formula="std_g P(R@k|g,y=1) / mean_g P(R@k|g,y=1), P(R@k|g,y=1) = sum_u |L_u@k ∩ g ∩ "
    "rel_u| / sum_u |g ∩ rel_u \\ log_u|",
    state=fairness_state,
    params=FAIR_PARAMS,
    upper_bound=None,
    higher_is_better=False,
    no_value=NO_VALUE,
)
def reo(state: pl.DataFrame, universe: Universe, k: int | None, p: Params) -> float | None:
    """Elliot's REO (elliot/evaluation/metrics/fairness/reo/reo.py, and PopREO): the
    numerator counts the relevant top-k items of the group (in the log or not, as
    Elliot), the denominator the user's relevant items of the group not in its log.
    Example: two groups with 2 of 4 and 1 of 4 relevant items found: P = 1/2, 1/4, REO
    1/3."""
    ranked, pool = _split(state)
    return spread(reo_probabilities(ranked, pool))


@register_global(
    "exposure_disparity",
    summary="Disparity of exposure between item groups: std / mean over groups of the mean "
    "position-weighted exposure 1/log2(1+rank) of a group's items (Singh and Joachims, KDD "
    "2018: demographic parity of exposure).",
    formula="std_g E_g / mean_g E_g, E_g = sum_u sum_{i in L_u@k ∩ g} 1/log2(1+rank_u(i)) / "
    "(|users| |g|)",
    state=fairness_state,
    params=FAIR_PARAMS,
    upper_bound=None,
    higher_is_better=False,
    no_value=NO_VALUE,
)
def exposure_disparity(
    state: pl.DataFrame, universe: Universe, k: int | None, p: Params
) -> float | None:
    """0 when every group's items receive the same exposure on average (Singh and
    Joachims' demographic parity constraint, Exposure(G0)/|G0| = Exposure(G1)/|G1|),
    over the users with a non-empty list. Example: one user, groups a = {1, 2} and b =
    {3, 4}, list [1, 3]: E_a = 1/2, E_b = (1/log2 3)/2, disparity (1 - 1/log2 3) / (1 +
    1/log2 3) = 0.2263."""
    ranked, pool = _split(state)
    return spread(exposure_means(ranked, pool))


_PROBABILITIES = {
    "rsp": rsp_probabilities,
    "reo": reo_probabilities,
    "exposure_disparity": exposure_means,
}


def one_group_notes(
    specs: Sequence[MetricSpec],
    values: Mapping[str, float | None],
    states: Mapping[str, pl.DataFrame] | None,
    params_of: Callable[[MetricSpec], Params],
) -> list[str]:
    """A warning for each item-fairness metric whose groups come down to one (one group
    has a probability): std / mean over one value is 0 by construction, so its 0 (the
    formula's, and Elliot's) compares no groups."""
    notes = []
    for spec in specs:
        probabilities = _PROBABILITIES.get(spec.name)
        if probabilities is None or values.get(str(spec)) != 0.0:
            continue
        table = (states or {}).get(fairness_state(spec.k, params_of(spec)).name)
        if table is None:
            continue
        found = probabilities(*_split(table))
        if len(found) != 1:
            continue
        fix = (
            "Give the items two groups or more (groups=category: the catalog's category "
            "column; groups=popularity: a pop_ratio that leaves the log a long tail)."
        )
        notes.append(
            f"{spec} is 0 by construction: one item group ({next(iter(found))}) has a "
            f"value, and std / mean over one group is 0, so it compares no groups. {fix}"
        )
    return notes
