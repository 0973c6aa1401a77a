"""tie_break: expected: each metric's expected value over every order of the tied items.

McSherry and Najork, "Computing Information Retrieval Performance Measures Efficiently in
the Presence of Tied Scores", ECIR 2008: where a list holds items with equal scores (or
equal ranks), any order of them is as likely as any other, and the metric's value is its
mean over those orders. For the metrics below it has a closed form, computed here from
each ranked row's tie: the first rank its tied items hold, a, and how many they are, n
(`tie_first`, `tie_size`: evaluation/prepare.ranked_items); b = a + n - 1 is the last. K is
the cutoff (and never past max_depth); m = min(b, K), the last position of the tie within
it. An item of a tie lies at each of its n positions with probability 1/n, so:

    hits@k, judged@k (counts of the top k)  sum over the rows counted of (m - a + 1)/n
    CG@k                                    sum over the rows of gain * (m - a + 1)/n
    DCG@k                                   sum over the rows of gain * W/n,
                                            W = sum_{p=a}^{m} discount(p)
    AP's sum of P@i                         sum over the relevant rows of (1/n) *
                                            sum_{p=a}^{m} (1 + c + (r-1)(p-a)/(n-1)) / p
    RR@k                                    sum_{j: a + j - 1 <= K} P(X = j) / (a + j - 1)
    hit_rate@k                              1 - P(X > K - a + 1)

with, for AP, r the relevant items of the row's tie and c those ranked before it (given
the item at p, the other r - 1 lie before it in (p - a) of the n - 1 other positions, on
average); for RR and hit_rate, the first tie holding a relevant item: its r relevant items
lie at random among its n positions, so the first of them is at its j-th with probability
P(X = j) = C(n - j, r - 1) / C(n, r), and P(X > j) = prod_{t<j} (n - r - t) / (n - t).
Precision, recall, F (linear in hits@k for a given k and |R|: F_beta = (1 + beta^2) hits
/ (beta^2 |R| + k)), nDCG (IDCG does not depend on the order), R-precision and the other
ratios of these statistics to order-free denominators follow from them. A metric whose
value is not linear in these (ERR, bpref, the beyond-accuracy metrics at a cutoff, ...)
has no such form here: tie_break expected refuses it by name (`order_dependent`).

Without ties (n = 1 everywhere) every value is the plain metric's, bit for bit: each term
is the plain term, and the sums are added in the same rank order.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from receval_cli.metrics.registry import lookup
from receval_cli.metrics.spec import MetricSpec, ParamValue
from receval_cli.metrics.stats import (
    OrderDependent,
    Stats,
    cutoff_label,
    depth,
    discount,
    gain,
    ordered_sum,
)

_rank = pl.col("rank")
_relevant = pl.col("relevant")
_first = pl.col("tie_first").cast(pl.Int64)
_size = pl.col("tie_size").cast(pl.Int64)
_TIE = ["user", "tie_first"]

# what a metric's `ties` says (MetricDef.ties)
EXPECTED = "expected"  # its expected value over the tied orders, in closed form (above)
ORDER_FREE = "order_free"  # its value does not depend on the order of the list
WHOLE_LIST = "whole_list"  # a global or pair metric: order-free without a cutoff

# what `receval metrics NAME` says of each kind
TIES_TEXT = {
    EXPECTED: "tie_break expected gives its mean over every order of tied items (closed form)",
    ORDER_FREE: "its value does not depend on the order of tied items",
    WHOLE_LIST: "without a cutoff its value does not depend on the order of tied items; "
    "tie_break expected refuses it at a cutoff",
    "order": "its value depends on the order of tied items: tie_break expected refuses it",
}


def order_dependent(spec: MetricSpec, params: Mapping[str, ParamValue]) -> str | None:
    """Why tie_break expected cannot compute `spec` (None: it can): the metric's value
    depends on the order of the tied items and has no closed form here."""
    definition = lookup(spec.name)
    if definition.ties == ORDER_FREE:
        return None
    if definition.ties == WHOLE_LIST:
        return None if spec.k is None else "which items are in its top k depends on that order"
    if definition.ties != EXPECTED:
        return "its value depends on the order of tied items"
    try:
        definition.expr(ExpectedStats(), spec.k, params)
    except OrderDependent as error:
        return str(error)
    return None


class ExpectedStats(Stats):
    """The per-user statistics as expected values over the orders of tied items (see the
    module's docstring); a statistic without one raises OrderDependent."""

    expected_ties = True

    def __init__(
        self, features: tuple[str, ...] = (), embedding_dims: int = 0, limit: int | None = None
    ) -> None:
        super().__init__(features, embedding_dims)
        self.limit = limit  # the max_depth convention: no position past it counts

    def _cut(self, k: int | pl.Expr | None) -> pl.Expr:
        """K: the cutoff (a number, or a per-user expression), never past max_depth."""
        cut = pl.lit(depth(k), pl.Int64) if not isinstance(k, pl.Expr) else k.cast(pl.Int64)
        return cut if self.limit is None else pl.min_horizontal(cut, pl.lit(self.limit, pl.Int64))

    def _last(self, k: int | pl.Expr | None) -> pl.Expr:
        """m = min(b, K): the last position of the row's tie within the top K (< a: none)."""
        return pl.min_horizontal(_first + _size - 1, self._cut(k))

    def _share(self, k: int | pl.Expr | None) -> pl.Expr:
        """(m - a + 1)/n: the chance that the row's item is in the top K."""
        slots = (self._last(k) - _first + 1).clip(lower_bound=0)
        return slots.cast(pl.Float64) / _size.cast(pl.Float64)

    def _total(self, name: str, term: pl.Expr) -> pl.Expr:
        """The per-user sum of a per-row term over the hits, added in rank order."""
        return self.hits.agg(name, ordered_sum(term.sort_by(_rank))).fill_null(0.0)

    def _count(self, name: str, condition: pl.Expr, k: int | pl.Expr | None) -> pl.Expr:
        term = pl.when(condition).then(self._share(k)).otherwise(0.0)
        return self._total(f"expected[{name}]", term)

    def hits_at(self, k: int | None) -> pl.Expr:
        return self._count(f"hits@{cutoff_label(k)}", _relevant, k)

    def hits_count(self, name: str, condition: pl.Expr, k: int | None) -> pl.Expr:
        return self._count(f"{name}@{cutoff_label(k)}", condition, k)

    def hits_at_r(self) -> pl.Expr:
        self.needs_n_relevant_on_hits = True
        return self._count("hits@R", _relevant, pl.col("n_relevant"))

    def hits_at_depth_of_r(self, name: str, depth_of_r: pl.Expr) -> pl.Expr:
        self.needs_n_relevant_on_hits = True
        return self._count(f"hits@{name}", _relevant, depth_of_r)

    def cg(self, k: int | None, gain_kind: str) -> pl.Expr:
        term = gain(pl.col("rel"), gain_kind) * self._share(k)
        return self._total(f"expected[cg@{cutoff_label(k)}[{gain_kind}]]", term)

    def dcg(self, k: int | None, gain_kind: str, discount_kind: str) -> pl.Expr:
        positions = pl.int_ranges(_first, self._last(k) + 1)
        weight = positions.list.eval(discount(pl.element(), discount_kind)).list.sum()
        term = gain(pl.col("rel"), gain_kind) * weight / _size.cast(pl.Float64)
        name = f"expected[dcg@{cutoff_label(k)}[{gain_kind},{discount_kind}]]"
        return self._total(name, term)

    def _tie_relevant(self) -> pl.Expr:
        """r: the relevant items of the row's tie."""
        return self.hits.row("tie_relevant", _relevant.cast(pl.Int64).sum().over(_TIE))

    def precision_sum(self, k: int | None) -> pl.Expr:
        r = self._tie_relevant()
        before = self.hits.row(
            "relevant_before_tie",
            _relevant.cast(pl.Int64).cum_sum().over("user", order_by=_rank)
            - _relevant.cast(pl.Int64).cum_sum().over(_TIE, order_by=_rank),
        )
        n = _size.cast(pl.Float64)
        spread = pl.when(_size > 1).then((r - 1).cast(pl.Float64) / (n - 1.0)).otherwise(0.0)
        positions = pl.int_ranges(_first, self._last(k) + 1)
        precisions = (1.0 + before.cast(pl.Float64) + spread * (positions - _first)) / positions
        term = pl.when(_relevant).then(precisions.list.sum() / n).otherwise(0.0)
        return self._total(f"expected[precision_sum@{cutoff_label(k)}]", term)

    def _first_relevant_tie(self) -> pl.Expr:
        """On the rows of the first tie holding a relevant item: its first relevant row."""
        first_tie = pl.when(_relevant).then(_first).min().over("user")
        first_row = pl.when(_relevant).then(_rank).min().over(_TIE)
        return _relevant & (_first == first_tie) & (_rank == first_row)

    def _misses(self, longest: pl.Expr, k: int | None) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
        """For the tie's positions t = 0 .. L - 1 (L = min(longest, K - a + 1)): the list
        of t, of (n - r - t) / (n - t) (the chance that its (t + 1)-th position misses,
        given the first t did), and L."""
        r, n = self._tie_relevant(), _size
        count = pl.min_horizontal(longest, self._cut(k) - _first + 1).clip(lower_bound=0)
        t = pl.int_ranges(0, count)
        ratio = (n - r - t).cast(pl.List(pl.Float64)) / (n - t).cast(pl.List(pl.Float64))
        return t, ratio, count

    def _first_tie_total(self, name: str, value: pl.Expr) -> pl.Expr:
        """The per-user value read on the first tie holding a relevant item."""
        term = pl.when(self._first_relevant_tie()).then(value).otherwise(0.0)
        return self._total(name, term)

    def reciprocal_rank(self, k: int | None) -> pl.Expr:
        # j - 1 = t = 0 .. L - 1, L = min(n - r + 1, K - a + 1): P(X = t + 1) is
        # P(X > t) * r / (n - t), P(X > t) the product of (n - r - u)/(n - u) over u < t
        r, n = self._tie_relevant(), _size
        t, ratio, _ = self._misses(n - r + 1, k)
        survival = ratio.list.eval(pl.element().cum_prod().shift(1).fill_null(1.0))
        chance = survival * r.cast(pl.Float64) / (n - t).cast(pl.List(pl.Float64))
        value = (chance / (_first + t).cast(pl.List(pl.Float64))).list.sum()
        return self._first_tie_total(f"expected[rr@{cutoff_label(k)}]", value)

    def any_hit(self, k: int | None) -> pl.Expr:
        """P(hits@k > 0) = 1 - P(X > K - a + 1) for the first tie holding a relevant item."""
        _, ratio, count = self._misses(_size, k)
        missed = ratio.list.eval(pl.element().product()).list.first()
        value = pl.when(count > 0).then(1.0 - missed).otherwise(0.0)
        return self._first_tie_total(f"expected[any_hit@{cutoff_label(k)}]", value)

    # the statistics without a closed form here: refused by name (order_dependent)
    def _refused(self, what: str) -> OrderDependent:
        return OrderDependent(f"{what} depends on the order of tied items")

    def side(self, name: str) -> pl.Expr:
        raise self._refused(f"the recommended items' {name} within a cutoff")

    def negatives_before(self) -> pl.Expr:
        raise self._refused("the count of non-relevant items ranked above each relevant one")

    def partial_auc_sum(self, k: int, top_positives: bool) -> pl.Expr:
        raise self._refused("partial AUC")

    def rec_count(self, name: str, condition: pl.Expr, k: int | None) -> pl.Expr:
        raise self._refused(f"the recommended items within a cutoff ({name})")

    def rec_distinct(self, name: str, values: pl.Expr, k: int | None) -> pl.Expr:
        raise self._refused(f"the recommended items within a cutoff ({name})")

    def rec_total(self, name: str, term: pl.Expr, k: int | None) -> pl.Expr:
        raise self._refused(f"the recommended items within a cutoff ({name})")

    def rec_sum(self, name: str, term: pl.Expr, k: int | None) -> pl.Expr:
        raise self._refused(f"the recommended items within a cutoff ({name})")

    def similar_pairs(self, feature: str, k: int | None) -> pl.Expr:
        raise self._refused("the pairs of items within a cutoff")

    def hits_running_count(self, name: str, condition: pl.Expr) -> pl.Expr:
        raise self._refused(f"a running count down the list ({name})")

    def hits_sum(self, name: str, term: pl.Expr, k: int | None) -> pl.Expr:
        raise self._refused(f"a sum down the list ({name})")

    def running_dcg(self, gain_kind: str, discount_kind: str) -> pl.Expr:
        raise self._refused("the DCG down to each rank")

    def above(self, threshold: float) -> pl.Expr:
        raise self._refused("retrieval by a score threshold within a cutoff")

    def interpolated_precision(self, level: float, k: int | None, rounding: str) -> pl.Expr:
        raise self._refused("interpolated precision")
