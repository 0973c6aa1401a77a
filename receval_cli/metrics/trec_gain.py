"""trec_eval's experimental gain measures: G, binG, ndcg_rel and Rndcg (m_G.c, m_binG.c,
m_ndcg_rel.c, m_Rndcg.c of trec_eval 10), per user, averaged over the evaluated users.

Notation: for one user, g_i is the gain of the item at rank i (as ndcg's `gain`,
`below_threshold` and `gains` say; 0 for an item not in the ground truth), N the list
length (after max_depth), P_1 >= P_2 >= ... >= P_n the positive gains of the user's
ground truth sorted descending (the ideal list, n = its length), IDCG_j the DCG of its
first j entries, DCG_i the DCG of the list down to rank i.

Each is a sum over the recommended items that are in the ground truth (the hits table),
whose rows read the user's ideal list (joined in from the truth table), plus per-user
terms: no loop over users in Python.
"""

from __future__ import annotations

import polars as pl

from receval_cli.metrics.ranking import BELOW_THRESHOLD, DISCOUNT, GAIN, GAINS, metric_gain_kind
from receval_cli.metrics.registry import Params, register
from receval_cli.metrics.stats import Stats, discount, gain, safe_div

_rank = pl.col("rank")
_rel = pl.col("rel")


def _ideal_gains(kind: str) -> pl.Expr:
    """The user's positive gains, descending (inside the truth table's aggregation)."""
    gains = gain(_rel, kind)
    return gains.filter(gains > 0).sort(descending=True)


def _ideal_dcg_list(s: Stats, kind: str, discount_kind: str) -> pl.Expr:
    """IDCG_1, ..., IDCG_n as a list per user (on the truth table)."""
    ideal = _ideal_gains(kind)
    positions = pl.int_range(1, ideal.len() + 1, dtype=pl.UInt32)
    return s.truth.agg(
        f"ideal_dcg_positive[{kind},{discount_kind}]",
        (ideal * discount(positions, discount_kind)).cum_sum().implode(),
    )


def _n_ideal(s: Stats, kind: str) -> pl.Expr:
    """n: the user's ground-truth items with a positive gain."""
    gains = gain(_rel, kind)
    return s.truth.agg(f"n_positive[{kind}]", (gains > 0).sum()).fill_null(0)


def _at_position(values: pl.Expr, position: pl.Expr) -> pl.Expr:
    """values[min(position, len) - 1] of a per-user list (null for an empty list)."""
    index = pl.min_horizontal(position.cast(pl.Int64), values.list.len().cast(pl.Int64)) - 1
    return values.list.get(index, null_on_oob=True)


def _rank_ordered_sum(s: Stats, name: str, term: pl.Expr) -> pl.Expr:
    """The sum of a per-row term over the user's hits, added in rank order."""
    value = term.sort_by(_rank).cum_sum().last()
    return s.hits.agg(name, value).fill_null(0.0)


@register(
    "g",
    summary="trec_eval's G: gains discounted by how far the list has fallen behind the ideal.",
    formula="sum_i g_i / log2(2 + C_i - S_i) / sum_j P_j   (C_i = sum_{j<=i} max(P_j, 1), "
    "P_j = 0 past n; S_i = sum_{j<=i} g_j)",
    takes_cutoff=False,
    params=(GAIN, BELOW_THRESHOLD, GAINS),
)
def g_measure(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """G (trec_eval m_G.c): an item at rank i with gain g_i != 0 adds
    g_i / log2(2 + C_i - S_i), where C_i (the ideal's cost) sums max(P_j, 1) over
    j <= i (P_j = 0 past the ideal list) and S_i the list's gains down to i; the sum is
    divided by the ideal's total gain sum_j P_j.

    Empty cases: no positive gain in the ground truth: 0; empty list: 0.
    Example: gains (0, 1) with one relevant item: C_2 = 1 + 1, S_2 = 1,
    G = 1/log2(3) = 0.631.
    """
    kind = metric_gain_kind(p)
    ideal = _ideal_gains(kind)
    excess = s.truth.agg(
        f"ideal_excess[{kind}]", (ideal.clip(lower_bound=1.0) - 1.0).cum_sum().implode()
    )
    total = s.truth.agg(f"ideal_total[{kind}]", ideal.sum()).fill_null(0.0)
    s.truth_on_hits(str(excess.meta.output_name()))
    gains = gain(_rel, kind)
    so_far = s.hits.row(f"gain_so_far[{kind}]", gains.cum_sum().over("user", order_by=_rank))
    cost = _rank.cast(pl.Float64) + _at_position(excess, _rank).fill_null(0.0)
    term = pl.when(gains != 0).then(gains / (2.0 + cost - so_far).log(2)).otherwise(0.0)
    return safe_div(_rank_ordered_sum(s, f"g_sum[{kind}]", term), total)


@register(
    "bing",
    summary="trec_eval's binG: relevant items discounted by the non-relevant ones above them.",
    formula="sum over relevant i in the list of 1/log2(2 + non-relevant above i) / |R|",
    takes_cutoff=False,
)
def bing(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """binG (trec_eval m_binG.c): each relevant item adds 1/log2(2 + m), m the items
    above it that are not relevant (unjudged ones included); divided by |R|.

    Empty cases: no relevant item: 0; empty list: 0.
    Example: relevant at ranks 1 and 3 of a list, |R| = 2: (1/log2(2) + 1/log2(3)) / 2.
    """
    relevant = pl.col("relevant")
    hits_so_far = s.hits.row(
        "hits_so_far", relevant.cast(pl.UInt32).cum_sum().over("user", order_by=_rank)
    )
    above = (_rank - hits_so_far).cast(pl.Float64)
    term = pl.when(relevant).then(1.0 / (2.0 + above).log(2)).otherwise(0.0)
    return safe_div(_rank_ordered_sum(s, "bing_sum", term), s.n_relevant())


@register(
    "ndcg_rel",
    summary="trec_eval's ndcg_rel: NDCG averaged at each item of positive gain.",
    formula="(sum over hits i with g_i > 0 of DCG_i / IDCG_min(i,n) "
    "+ (n - those hits) * DCG_N / IDCG_n) / n",
    takes_cutoff=False,
    params=(GAIN, BELOW_THRESHOLD, GAINS, DISCOUNT),
)
def ndcg_rel(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """ndcg_rel (trec_eval m_ndcg_rel.c): the NDCG read at each ideal item, where a
    recommended one of positive gain at rank i reads DCG_i / IDCG_min(i, n) and one not
    recommended reads the whole list's DCG_N / IDCG_n; the mean of those n values.

    Empty cases: no positive gain in the ground truth (n = 0): 0; a sum <= 0: 0 (as
    trec_eval); empty list: 0.
    """
    kind, discount_kind = metric_gain_kind(p), str(p["discount"])
    ideal = _ideal_dcg_list(s, kind, discount_kind)
    s.truth_on_hits(str(ideal.meta.output_name()))
    n = _n_ideal(s, kind)
    gains = gain(_rel, kind)
    running = s.running_dcg(kind, discount_kind)
    term = pl.when(gains > 0).then(running / _at_position(ideal, _rank)).otherwise(0.0)
    found = _rank_ordered_sum(s, f"ndcg_rel_sum[{kind},{discount_kind}]", term)
    positive = s.hits.agg(f"positive_hits[{kind}]", (gains > 0).sum()).fill_null(0)
    ideal_all = ideal.list.last()
    rest = (n - positive).cast(pl.Float64) * s.dcg(None, kind, discount_kind) / ideal_all
    total = found + rest
    return pl.when((n > 0) & (total > 0)).then(total / n.cast(pl.Float64)).otherwise(0.0)


@register(
    "rndcg",
    summary="trec_eval's Rndcg: NDCG averaged at the ranks where the ideal gain drops.",
    formula="mean of DCG_min(b,N) / IDCG_b over the ranks b where P_b > P_(b+1) "
    "(P_(n+1) = 0), and DCG_N / IDCG_n when N >= n + 2",
    takes_cutoff=False,
    params=(GAIN, BELOW_THRESHOLD, GAINS, DISCOUNT),
    aliases=("r_ndcg",),
)
def rndcg(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Rndcg (trec_eval m_Rndcg.c): NDCG read at each R level, the rank b where the
    ideal gain falls to a lower level (P_b > P_(b+1), the last at b = n), as
    DCG_min(b, N) / IDCG_b, and once more at the end of the list (DCG_N / IDCG_n) when
    the list is at least two items longer than the ideal one (trec_eval's loop); the mean
    of these values. Computed as sum over hits i of gain_i * discount(i) * W_i with
    W_i = sum over levels b >= i of 1/IDCG_b.

    Empty cases: no relevant item (|R| = 0) or no positive gain: 0; empty list: 0.
    """
    kind, discount_kind = metric_gain_kind(p), str(p["discount"])
    ideal = _ideal_gains(kind)
    positions = pl.int_range(1, ideal.len() + 1, dtype=pl.UInt32)
    idcg = (ideal * discount(positions, discount_kind)).cum_sum()
    level_end = ideal != ideal.shift(-1, fill_value=0.0)
    weights = s.truth.agg(
        f"rndcg_weights[{kind},{discount_kind}]",
        pl.when(level_end).then(1.0 / idcg).otherwise(0.0).reverse().cum_sum().reverse().implode(),
    )
    levels = s.truth.agg(f"ideal_levels[{kind}]", level_end.sum()).fill_null(0)
    s.truth_on_hits(str(weights.meta.output_name()))
    terms = gain(_rel, kind) * discount(_rank, discount_kind)
    weight = pl.when(_rank <= weights.list.len()).then(_at_position(weights, _rank)).otherwise(0.0)
    at_levels = _rank_ordered_sum(s, f"rndcg_sum[{kind},{discount_kind}]", terms * weight)
    n = _n_ideal(s, kind)
    ideal_all = _ideal_dcg_list(s, kind, discount_kind).list.last()
    tail = pl.col("list_length").cast(pl.Int64) >= n.cast(pl.Int64) + 2
    end = pl.when(tail).then(s.dcg(None, kind, discount_kind) / ideal_all).otherwise(0.0)
    points = levels.cast(pl.Float64) + tail.cast(pl.Float64)
    value = (at_levels + end) / points
    return pl.when((s.n_relevant() > 0) & (n > 0)).then(value).otherwise(0.0)
