"""Global beyond-accuracy metrics: one value over all the users' lists.

Each is a mergeable partial state (a table of keys and integer counts, see State in
registry.py) and a finish step. The states need no ground truth: they describe every
list in the predictions file, cut at k.

    exposure@k      (item, lists): how many top-k lists hold each item
    lengths@k       (length, item, lists): the same, split by the length of the list
    predicted       (item, rows): the items the model scored at all, in whole lists
    user_coverage   (truth_users, covered): ground-truth users, and those with a list

The universe U of coverage and Gini is the catalog, else the items of the interactions
log; recommended items outside U are left out (the report counts them).
"""

from __future__ import annotations

import math
from fractions import Fraction

import polars as pl

from receval_cli.errors import InputError
from receval_cli.metrics.registry import (
    Param,
    Params,
    State,
    StateInputs,
    Universe,
    register_global,
)
from receval_cli.metrics.stats import cutoff_label


def _in_top(inputs: StateInputs, k: int | None) -> pl.LazyFrame:
    """The lists' items in their top k, one per row (StateInputs.placed)."""
    placed = inputs.placed()
    return placed if k is None else placed.filter(pl.col("rank") <= k)


def exposure(k: int | None, p: Params) -> State:
    def build(inputs: StateInputs) -> pl.LazyFrame:
        by = inputs.by
        counts = inputs.top_counts(k)
        if counts is not None:
            return counts.group_by(*by, "item").agg(pl.col("lists").sum())
        items = _in_top(inputs, k)
        return items.group_by(*by, "item").agg(pl.len().cast(pl.Int64).alias("lists"))

    return State(f"exposure@{cutoff_label(k)}", ("item",), build)


def lengths(k: int | None, p: Params) -> State:
    def build(inputs: StateInputs) -> pl.LazyFrame:
        by = inputs.by
        length = pl.col("length").cast(pl.UInt32)  # the length of the list's top k
        if k is not None:
            length = pl.min_horizontal(length, pl.lit(k, pl.UInt32))
        counts = inputs.top_counts(k)
        if counts is not None:
            return counts.group_by(*by, length.alias("length"), "item").agg(pl.col("lists").sum())
        items = _in_top(inputs, k)
        counted = items.group_by(*by, length.alias("length"), "item")
        return counted.agg(pl.len().cast(pl.Int64).alias("lists"))

    return State(f"lengths@{cutoff_label(k)}", ("length", "item"), build)


def predicted(k: int | None, p: Params) -> State:
    def build(inputs: StateInputs) -> pl.LazyFrame:
        by = inputs.by
        return inputs.items.group_by(*by, "item").agg(pl.len().cast(pl.Int64).alias("rows"))

    return State("predicted", ("item",), build)


USERS = Param(
    "users",
    "the users counted: every user of the ground truth (truth), or those with a relevant "
    "item (relevant: RecTools' CoveredUsers, whose interactions are the relevant rows)",
    choices=("truth", "relevant"),
    default="truth",
)


def truth_users(k: int | None, p: Params) -> State:
    relevant_only = p["users"] == "relevant"

    def build(inputs: StateInputs) -> pl.LazyFrame:
        in_truth = pl.col("in_truth")
        if relevant_only:  # (a user of the ground truth has its count of relevant items)
            in_truth = in_truth & (pl.col("n_relevant").fill_null(0) > 0)
        counts = (
            in_truth.sum().cast(pl.Int64).alias("truth_users"),
            (in_truth & (pl.col("list_length") > 0)).sum().cast(pl.Int64).alias("covered"),
        )
        if inputs.by:
            return inputs.users.group_by(*inputs.by).agg(*counts)
        return inputs.users.select(*counts)

    return State(f"user_coverage[{p['users']}]", (), build)


def _universe_items(universe: Universe) -> pl.DataFrame:
    assert universe.items is not None, "checked before the finish step"
    return universe.items


def _covered(state: pl.DataFrame, universe: Universe) -> float:
    items = _universe_items(universe)
    inside = items.join(state.select("item"), on="item", how="semi").height
    return inside / items.height


@register_global(
    "catalog_coverage",
    summary="Share of the catalog's items that appear in at least one top-k list.",
    formula="|U ∩ union of L@k over users| / |U|",
    state=exposure,
    needs_universe=True,
)
def catalog_coverage(state: pl.DataFrame, universe: Universe, k: int | None, p: Params) -> float:
    """Needs a `catalog` (else the items of `interactions` are the catalog, as MS
    Recommenders' catalog_coverage). Example: a catalog of 4 items and lists [a, b], [b,
    c]: 3/4."""
    return _covered(state, universe)


@register_global(
    "prediction_coverage",
    summary="Share of the catalog's items the model scores for at least one user.",
    formula="|U ∩ items in the predictions| / |U|",
    state=predicted,
    takes_cutoff=False,
    needs_universe=True,
)
def prediction_coverage(state: pl.DataFrame, universe: Universe, k: int | None, p: Params) -> float:
    """Herlocker et al.: what share of the items can this recommender predict at all? The
    whole predictions file counts, not only the top k. Example: a catalog of 4 items, the
    file scores a, b, c for some user: 3/4."""
    return _covered(state, universe)


@register_global(
    "user_coverage",
    summary="Share of the ground truth's users who receive a non-empty list.",
    formula="|{u in truth : |L_u| > 0}| / |users in truth|   (users=relevant: those with a "
    "relevant item)",
    state=truth_users,
    takes_cutoff=False,
    params=(USERS,),
)
def user_coverage(state: pl.DataFrame, universe: Universe, k: int | None, p: Params) -> float:
    """Example: 4 users in the ground truth, 3 of them with recommendations: 3/4. With
    users=relevant, a user whose ground truth holds no relevant item is not counted."""
    row = state.row(0, named=True)
    return int(row["covered"]) / int(row["truth_users"]) if row["truth_users"] else 0.0


@register_global(
    "inter_list_diversity",
    summary="Mean cosine distance between the binary vectors of every pair of users' lists.",
    formula="1 - sum over user pairs u < v of |L_u ∩ L_v| / sqrt(|L_u| |L_v|) / (N (N-1) / 2)",
    state=lengths,
    aliases=("personalization",),
)
def inter_list_diversity(
    state: pl.DataFrame, universe: Universe, k: int | None, p: Params
) -> float:
    """Jurity's Inter-List Diversity and recmetrics' personalization, computed exactly
    without enumerating the user pairs. Two lists of lengths l and l' sharing s items have
    cosine similarity s / sqrt(l l'). With c(l, i) the lists of length l holding item i and
    S(l, l') = sum_i c(l, i) c(l', i), the similarities of all pairs sum to
    sum_l (S(l, l) - l N_l) / (2 l) + sum_{l < l'} S(l, l') / sqrt(l l'), where N_l is the
    number of lists of length l. The first sum is rational and is added exactly (fractions),
    so equal-length lists (the usual case) give a correctly rounded value. Users with an
    empty list are left out. Example: lists [a, b] and [a, c]: similarity 1/2, diversity
    1/2."""
    lists = state.group_by("length").agg(
        pl.col("lists").sum().alias("entries"), (pl.col("lists") ** 2).sum().alias("squares")
    )
    users = 0
    same_length = Fraction(0)
    for length, entries, squares in lists.sort("length").iter_rows():
        users += int(entries) // int(length)
        same_length += Fraction(int(squares) - int(entries), 2 * int(length))
    if users < 2:
        name = f"inter_list_diversity@{cutoff_label(k)}"
        fix = "Evaluate at least 2 users."
        raise InputError(
            f"{name} compares pairs of users' lists, and {users} user(s) have a non-empty "
            f"list. {fix}",
            key=name,
            found=users,
            fix=fix,
        )
    shared = (
        state.join(state, on="item", suffix="_other")
        .filter(pl.col("length") < pl.col("length_other"))
        .group_by("length", "length_other")
        .agg((pl.col("lists") * pl.col("lists_other")).sum().alias("shared"))
        .sort("length", "length_other")
    )
    mixed = sum(int(s) / math.sqrt(int(a) * int(b)) for a, b, s in shared.iter_rows())
    pairs = users * (users - 1) // 2
    return float(1 - same_length / pairs) - mixed / pairs


@register_global(
    "gini",
    summary="Gini index of the items' exposure in the top-k lists (0: even, 1: one item).",
    formula="sum_j (2j - |U| - 1) x_j / (|U| sum_j x_j), x the exposures of U ascending",
    state=exposure,
    needs_universe=True,
    higher_is_better=False,
)
def gini(state: pl.DataFrame, universe: Universe, k: int | None, p: Params) -> float:
    """Concentration of exposure over the catalog U (items never recommended count 0), as
    RecBole's GiniIndex. Example: a catalog of 4 items, exposures (0, 0, 1, 3): (-3·0 -
    1·0 + 1·1 + 3·3) / (4·4) = 10/16."""
    items = _universe_items(universe)
    counts = items.join(state, on="item", how="left").get_column("lists").fill_null(0)
    if counts.sum() == 0:
        name = f"gini@{cutoff_label(k)}"
        fix = "Check that the item ids match."
        raise InputError(
            f"{name}: no recommended item is in the {universe.source}, so there is no "
            f"exposure to measure. {fix}",
            key=name,
            found=0,
            fix=fix,
        )
    return gini_of(counts)


def gini_of_histogram(histogram: pl.DataFrame) -> float:
    """gini_of the counts a histogram holds (`lists`: a count, `items`: how many items
    have it; sum > 0), in Python integers: the same value, without expanding it."""
    rows = histogram.sort("lists").iter_rows()
    pairs = [(int(count), int(items)) for count, items in rows]
    n = sum(items for _, items in pairs)
    weighted, before, total = 0, 0, 0
    for count, items in pairs:  # the positions before+1 .. before+items hold `count`
        weighted += count * (items * (2 * before + items + 1) - items * (n + 1))
        total += count * items
        before += items
    return float(weighted) / (n * total)


def gini_of(counts: pl.Series) -> float:
    """sum_j (2j - n - 1) x_j / (n sum x) over the counts x in ascending order (sum > 0)."""
    ordered = counts.cast(pl.Int64).sort()
    n = ordered.len()
    weights = pl.int_range(1, n + 1, eager=True, dtype=pl.Int64) * 2 - n - 1
    return float((weights * ordered).sum()) / (n * int(ordered.sum()))


@register_global(
    "entropy",
    summary="Shannon entropy (bits) of the items' exposure in the top-k lists.",
    formula="-sum_i p_i log2 p_i, p_i = the item's share of all top-k recommendations",
    state=exposure,
    upper_bound=None,
)
def entropy(state: pl.DataFrame, universe: Universe, k: int | None, p: Params) -> float:
    """MS Recommenders' distributional_coverage. At most log2 of the number of items
    recommended. Example: exposures (1, 1, 2): 1.5 bits."""
    counts = state.sort("item").get_column("lists")
    total = int(counts.sum())
    shares = counts.cast(pl.Float64) / total
    return float(-(shares * shares.log(2)).sum()) + 0.0  # + 0.0: no -0.0 for one item
