"""How alike two models' lists are, user by user: `comparison.lists` asks for
these between every model and the baseline model; each is averaged over the users with a
list in both predictions files (and a value: see each).

    jaccard@k         the items both top-k lists hold over the items either holds (as
                      sets); both lists empty: none
    rbo@k(p=0.9)      rank-biased overlap, extrapolated (Webber, Moffat and Zobel, "A
                      Similarity Measure for Indefinite Rankings", TOIS 2010, eq. 32: the
                      lists may differ in length); p the persistence; one list empty: 0,
                      both: none
    kendall_tau@k     Kendall's tau between the two lists' orders of the items both top-k
                      lists hold (no ties: positions are distinct); fewer than 2: none

Without a cutoff, the whole lists (up to max_depth). Here A is the model's list and B the
baseline's, each in receval's order (score, then the tie_break convention).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

LIST_MEASURES = ("jaccard", "rbo", "kendall_tau")
_SPEC = re.compile(r"(?P<name>[a-z_]+)(?:@(?P<k>\d+))?(?:\(p=(?P<p>[0-9.]+)\))?")


@dataclass(frozen=True)
class ListMeasure:
    """One list similarity at one cutoff (None: the whole lists)."""

    name: str
    k: int | None
    p: float = 0.9  # rbo's persistence

    def __str__(self) -> str:
        text = self.name if self.k is None else f"{self.name}@{self.k}"
        return f"{text}(p={self.p!r})" if self.name == "rbo" else text


def list_measure(text: str) -> ListMeasure:
    """`jaccard@10`, `rbo@20(p=0.8)`, `kendall_tau`; ValueError saying what is wrong."""
    match = _SPEC.fullmatch(text.strip())
    if match is None or match["name"] not in LIST_MEASURES:
        raise ValueError(
            f"'{text}' is not a list measure; write one of jaccard@k, rbo@k(p=0.9), "
            "kendall_tau@k (the cutoff optional)"
        )
    k = None if match["k"] is None else int(match["k"])
    if k == 0:
        raise ValueError(f"'{text}': the cutoff must be a positive integer")
    if k == 1 and match["name"] == "kendall_tau":
        raise ValueError(
            f"'{text}': kendall_tau is undefined at a cutoff of 1 (it compares the order of "
            "pairs of items, and a top-1 list has no pair). Use a cutoff of at least 2 "
            "(e.g. kendall_tau@10)"
        )
    if match["p"] is not None and match["name"] != "rbo":
        raise ValueError(f"'{text}': only rbo takes p (its persistence)")
    p = 0.9 if match["p"] is None else float(match["p"])
    if not 0 < p < 1:
        raise ValueError(f"'{text}': rbo's p must be between 0 and 1 (exclusive)")
    return ListMeasure(match["name"], k, p)


def per_user(pairs: pl.LazyFrame, measure: ListMeasure) -> pl.LazyFrame:
    """(user, value) from (user, a, b): the two lists of each user, in rank order; a
    null value where the measure is undefined for that user."""
    cut = pairs.select(
        "user",
        *(
            pl.col(side) if measure.k is None else pl.col(side).list.head(measure.k)
            for side in ("a", "b")
        ),
    )
    if measure.name == "jaccard":
        union = pl.col("a").list.set_union("b").list.len()
        common = pl.col("a").list.set_intersection("b").list.len()
        return cut.select("user", pl.when(union > 0).then(common / union).alias("value"))
    ranks = _common_ranks(cut)
    if measure.name == "kendall_tau":
        return _kendall_tau(cut, ranks)
    return _rbo(cut, ranks, measure.p)


def _common_ranks(cut: pl.LazyFrame) -> pl.LazyFrame:
    """(user, i, j): each item both lists hold, at rank i in A and j in B."""

    def ranked(side: str, rank: str) -> pl.LazyFrame:
        positions = pl.int_ranges(1, pl.col(side).list.len() + 1, dtype=pl.Int64)
        return (
            cut.select("user", pl.col(side).alias("item"), positions.alias(rank))
            .explode(["item", rank])
            .drop_nulls("item")
        )

    return ranked("a", "i").join(ranked("b", "j"), on=["user", "item"], how="inner")


def _kendall_tau(cut: pl.LazyFrame, ranks: pl.LazyFrame) -> pl.LazyFrame:
    """Over the pairs of common items: (concordant - discordant) / pairs, the orders in A
    (i) and in B (j); null below 2 common items."""
    left = ranks.rename({"item": "x", "i": "i1", "j": "j1"})
    right = ranks.rename({"item": "y", "i": "i2", "j": "j2"})
    pairs = left.join(right, on="user", how="inner").filter(pl.col("i1") < pl.col("i2"))
    sign = (pl.col("j2") - pl.col("j1")).sign()
    tau = pairs.group_by("user").agg((sign.sum() / pl.len()).alias("value"))
    return cut.select("user").join(tau, on="user", how="left")


def _rbo(cut: pl.LazyFrame, ranks: pl.LazyFrame, p: float) -> pl.LazyFrame:
    """Webber et al.'s RBO_ext for lists of lengths s <= l (eq. 32): with X_d the overlap
    of the two prefixes of depth d (an item both hold counts from depth max(i, j) on),

        (1-p)/p * (sum_{d=1..l} X_d/d p^d + sum_{d=s+1..l} X_s (d-s)/(s d) p^d)
          + ((X_l - X_s)/l + X_s/s) p^l,

    summed over the depths in order (polars' cumulative sums), p^d multiplied out depth
    after depth: each user's value depends on its two lists only, not on the other users
    the frame holds (a bucket's); 0 where a list is empty."""
    lengths = cut.select(
        "user",
        pl.min_horizontal(pl.col("a").list.len(), pl.col("b").list.len()).alias("s"),
        pl.max_horizontal(pl.col("a").list.len(), pl.col("b").list.len()).alias("l"),
    )
    first = ranks.group_by("user", pl.max_horizontal("i", "j").alias("d")).agg(
        pl.len().alias("new")
    )
    depths = (
        lengths.filter(pl.col("s") > 0)
        .select("user", "s", "l", pl.int_ranges(1, pl.col("l") + 1, dtype=pl.Int64).alias("d"))
        .explode("d")
        .join(first, on=["user", "d"], how="left")
        .sort("user", "d")
        .with_columns(
            pl.col("new").fill_null(0).cum_sum().over("user").alias("x"),
            # p^d as a running product, depth after depth: IEEE products, the same bits
            # on every machine and in a frame of any size (polars' pow takes another path
            # for a frame of one row)
            pl.lit(p, dtype=pl.Float64).alias("w"),
        )
        .with_columns(pl.col("w").cum_prod().over("user"))
    )
    d, s, x = pl.col("d").cast(pl.Float64), pl.col("s").cast(pl.Float64), pl.col("x")
    weight = pl.col("w")
    tail = pl.when(pl.col("d") > pl.col("s")).then((d - s) / (s * d) * weight).otherwise(0.0)
    # running sums too: a user's terms are added in one order whatever the other users of
    # the frame (a bucket of users, or all of them)
    running = depths.with_columns(
        (x / d * weight).cum_sum().over("user").alias("prefixes"),
        tail.cum_sum().over("user").alias("tail"),
    )
    at_s = pl.col("x").filter(pl.col("d") == pl.col("s")).first()
    at_l = pl.col("x").last()
    summed = running.group_by("user").agg(
        pl.col("prefixes").last(),
        pl.col("tail").last(),
        pl.col("w").last().alias("p_l"),  # p^l
        at_s.alias("x_s"),
        at_l.alias("x_l"),
        pl.col("s").first(),
        pl.col("l").first(),
    )
    shortest, longest = pl.col("s").cast(pl.Float64), pl.col("l").cast(pl.Float64)
    value = (1.0 - p) / p * (pl.col("prefixes") + pl.col("x_s") * pl.col("tail")) + (
        (pl.col("x_l") - pl.col("x_s")) / longest + pl.col("x_s") / shortest
    ) * pl.col("p_l")
    rbo = summed.select("user", value.alias("value"))
    sizes = (pl.col("a").list.len() > 0).cast(pl.Int8) + (pl.col("b").list.len() > 0).cast(pl.Int8)
    return (
        cut.select("user", sizes.alias("lists"))
        .join(rbo, on="user", how="left")
        .select(
            "user",
            pl.when(pl.col("lists") == 2)
            .then(pl.col("value"))
            .when(pl.col("lists") == 1)
            .then(0.0)  # nothing in common with an empty list
            .alias("value"),  # both empty: none
        )
    )
