"""Per-user statistics that the ranking metrics are built from.

The prepared `events` frame has one row per (user, item) that is recommended, in the
ground truth, or both:

    user         the user id
    rank         1-based position in the user's ranked list; NOT_RETRIEVED when the item
                 is only in the ground truth
    rel          the item's relevance grade; null when the item is not in the ground truth
    relevant     rel >= relevance_threshold (false when rel is null)
    ideal_rank   1-based position of the item in the user's ideal list (ground truth by
                 relevance, descending); null when the item is not in the ground truth

A `Stats` object hands out each statistic as a column reference and records the one
aggregation that computes it, so hits@10 is computed once however many metrics use it.
All of them run in a single `group_by(user).agg(...)`.
"""

from __future__ import annotations

import polars as pl

NOT_RETRIEVED = 2**32 - 1
ALL = NOT_RETRIEVED - 1  # the cutoff that stands for "the whole list"

_rank = pl.col("rank")
_rel = pl.col("rel")
_relevant = pl.col("relevant")
_ideal_rank = pl.col("ideal_rank")


def depth(k: int | None) -> int:
    """The rank cutoff for k, where None means the whole list."""
    return ALL if k is None else k


def cutoff_label(k: int | None) -> str:
    return "all" if k is None else str(k)


def gain(rel: pl.Expr, kind: str) -> pl.Expr:
    """linear: rel; exponential: 2^rel - 1. Missing and negative grades give no gain."""
    grade = rel.fill_null(0.0).clip(lower_bound=0.0)
    return grade if kind == "linear" else pl.lit(2.0).pow(grade) - 1.0


def discount(position: pl.Expr, kind: str) -> pl.Expr:
    """log2: 1/log2(i+1); jarvelin: 1 for i <= 2, else 1/log2(i)."""
    i = position.cast(pl.Float64)
    return 1.0 / (i + 1.0).log(2) if kind == "log2" else 1.0 / i.clip(lower_bound=2.0).log(2)


def safe_div(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    """numerator / denominator, and 0 where the denominator is 0."""
    return (
        pl.when(denominator > 0)
        .then(numerator.cast(pl.Float64) / denominator.cast(pl.Float64))
        .otherwise(0.0)
    )


class Stats:
    """Collects the per-user aggregations (and per-row helper columns) metrics ask for."""

    def __init__(self) -> None:
        self.row_columns: dict[str, pl.Expr] = {}
        self.aggregations: dict[str, pl.Expr] = {}
        for name, expr in (
            ("in_truth", _rel.is_not_null().any()),
            ("list_length", (_rank != NOT_RETRIEVED).sum()),
            ("n_relevant", _relevant.sum()),
        ):
            self._agg(name, expr)

    def _agg(self, name: str, expr: pl.Expr) -> pl.Expr:
        self.aggregations.setdefault(name, expr.alias(name))
        return pl.col(name)

    def _row(self, name: str, expr: pl.Expr) -> pl.Expr:
        self.row_columns.setdefault(name, expr.alias(name))
        return pl.col(name)

    def n_relevant(self) -> pl.Expr:
        """Relevant items in the ground truth (|R|)."""
        return pl.col("n_relevant")

    def list_length(self) -> pl.Expr:
        """Items recommended to the user."""
        return pl.col("list_length")

    def retrieved(self, k: int | None) -> pl.Expr:
        """Items in the top k: min(k, list length)."""
        return self._agg(f"retrieved@{cutoff_label(k)}", (_rank <= depth(k)).sum())

    def hits(self, k: int | None) -> pl.Expr:
        """Relevant items in the top k."""
        return self._agg(f"hits@{cutoff_label(k)}", (_relevant & (_rank <= depth(k))).sum())

    def hits_at_r(self) -> pl.Expr:
        """Relevant items in the top |R| positions."""
        return self._agg("hits@R", (_relevant & (_rank <= _relevant.sum())).sum())

    def reciprocal_rank(self, k: int | None) -> pl.Expr:
        """1/rank of the first relevant item in the top k; 0 when there is none."""
        first = _rank.filter(_relevant & (_rank <= depth(k))).min()
        return self._agg(f"rr@{cutoff_label(k)}", (1.0 / first.cast(pl.Float64)).fill_null(0.0))

    def precision_sum(self, k: int | None) -> pl.Expr:
        """Sum over relevant items at rank i <= k of precision@i (AP's numerator)."""
        hits_so_far = self._row(
            "hits_so_far", _relevant.cast(pl.UInt32).cum_sum().over("user", order_by="rank")
        )
        at = _relevant & (_rank <= depth(k))
        return self._agg(
            f"precision_sum@{cutoff_label(k)}",
            (hits_so_far.cast(pl.Float64) / _rank.cast(pl.Float64)).filter(at).sum(),
        )

    def cg(self, k: int | None, gain_kind: str) -> pl.Expr:
        """Sum of the gains of the top k items."""
        gains = self._row(f"gain_{gain_kind}", gain(_rel, gain_kind))
        return self._agg(
            f"cg@{cutoff_label(k)}[{gain_kind}]", gains.filter(_rank <= depth(k)).sum()
        )

    def dcg(self, k: int | None, gain_kind: str, discount_kind: str) -> pl.Expr:
        """Sum of gain(rel_i) * discount(i) over the top k positions i."""
        gains = self._row(f"gain_{gain_kind}", gain(_rel, gain_kind))
        discounts = self._row(f"discount_{discount_kind}", discount(_rank, discount_kind))
        return self._agg(
            f"dcg@{cutoff_label(k)}[{gain_kind},{discount_kind}]",
            (gains * discounts).filter(_rank <= depth(k)).sum(),
        )

    def idcg(self, k: int | None, gain_kind: str, discount_kind: str) -> pl.Expr:
        """DCG of the ideal list (ground truth sorted by relevance) truncated at k."""
        gains = self._row(f"gain_{gain_kind}", gain(_rel, gain_kind))
        discounts = self._row(
            f"ideal_discount_{discount_kind}", discount(_ideal_rank, discount_kind)
        )
        return self._agg(
            f"idcg@{cutoff_label(k)}[{gain_kind},{discount_kind}]",
            (gains * discounts).filter(_ideal_rank <= depth(k)).sum(),
        )
