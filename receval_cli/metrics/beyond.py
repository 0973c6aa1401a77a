"""Beyond-accuracy metrics computed per user, then averaged like the ranking metrics.

Notation: for one user, L@k is the list cut at k and n = |L@k| = min(k, list length).
pop(i) is the number of rows of item i in the interactions log (0 when absent), and
the baseline list B@k is the baseline file's list for the user, or else the k most
popular items of the log (ties broken by the tie_break convention). Every metric here
reads the `recs` table (every recommended item; see stats.py), so users with an empty
list score 0, or are skipped by users_without_recommendations=skip. All but serendipity
never read relevance (reads_relevance=False): users_without_relevant does not apply to
them, so they average over every ground-truth user with a list, as the peers do.
"""

from __future__ import annotations

import operator
from functools import reduce

import polars as pl

from receval_cli.errors import ConfigError, InputError
from receval_cli.metrics.ranking import PRECISION_DENOMINATOR
from receval_cli.metrics.registry import Param, Params, register
from receval_cli.metrics.stats import (
    EMBEDDING_SIMILARITY,
    Stats,
    cutoff_label,
    per_user_constant,
    row_constant,
    safe_div,
)

SHARE = Param(
    "share",
    "popularity share of an item: interactions (its rows / all rows) or users (its users / "
    "all users of the log)",
    choices=("interactions", "users"),
    default="interactions",
)
NEW_ONLY = Param(
    "items",
    "all: every recommended item; new: items the user already has in the log count 0",
    choices=("all", "new"),
    default="all",
)
UNSEEN = Param(
    "unseen",
    "items absent from the log: skip (left out), zero (count 0: MS Recommenders) or one "
    "(as one row, or user: RePlay)",
    choices=("skip", "zero", "one"),
    default="skip",
)
NORMALIZE = Param(
    "normalize",
    "none: in bits; max: divided by log2 of the log's rows (or users), so in [0, 1] (RePlay)",
    choices=("none", "max"),
    default="none",
)
PER_ITEM_DENOMINATOR = Param(
    "denominator",
    "list_length: divide by the items counted (n); k: by k (RePlay)",
    choices=("list_length", "k"),
    default="list_length",
)
EXPECTED = Param(
    "expected",
    "baseline: the baseline's top k; history: the user's items in the log (RePlay's Novelty)",
    choices=("baseline", "history"),
    default="baseline",
)
UNEXPECTED = Param(
    "unexpected",
    "baseline: not in the baseline's top k; history: 1 - mean co-occurrence similarity to "
    "the user's log (MS Recommenders)",
    choices=("baseline", "history"),
    default="baseline",
)
RELEVANCE = Param(
    "relevance",
    "required: only relevant items count; ignored: every item counts (MS Recommenders' default)",
    choices=("required", "ignored"),
    default="required",
)
HEAD = Param(
    "head",
    "the popular head: the top share of the log's items by popularity (ties included)",
    default=0.2,
    share=True,
)
FEATURE = Param(
    "feature",
    "compared: category (0/1), tags (Jaccard), embedding (cosine), cooccurrence (in the "
    "log); default: the catalog's only feature",
    choices=("category", "tags", "embedding", "cooccurrence"),
    optional=True,
)


def _in_baseline(s: Stats, k: int | None) -> pl.Expr:
    """The item is in the baseline's top k for this user."""
    return s.in_baseline(k)


def self_information(s: Stats, share: object) -> pl.Expr:
    """-log2 of the item's popularity share (null for an item absent from the log)."""
    s.side("popularity")
    # the log's totals are one value on every row: row_constant makes each a true division
    # (over the log's items, whose count is never null)
    rows = pl.col("count")
    if share == "users":
        ratio = pl.col("holders") / row_constant(pl.col("log_users"), rows)
    else:
        ratio = pl.col("count") / row_constant(pl.col("log_rows"), rows)
    return s.items.row(f"self_information[{share}]", -ratio.log(2))


@register(
    "novelty",
    summary="Mean self-information -log2(popularity share) of the recommended items.",
    formula="sum over i in L@k of -log2(pop(i) / |log|) / n",
    params=(SHARE, NEW_ONLY, UNSEEN, NORMALIZE, PER_ITEM_DENOMINATOR),
    upper_bound=None,
    reads_relevance=False,
)
def novelty(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Needs `interactions`. share=interactions divides by the log's rows (MS
    Recommenders' novelty, Castells' item choice model); share=users by the log's users
    (recmetrics, Zhou et al.). items=new gives 0 to items the user already interacted with
    (novelty to this user). Items absent from the log: unseen=skip leaves them out of n,
    zero counts them 0, one gives them the self-information of an item with one row (or
    user), log2 |log|. normalize=max divides every item's self-information by log2 |log|
    (its largest value; 0 when the log has one row or user), and denominator=k divides
    the sum by k instead of n: novelty@k(share=users, unseen=one, normalize=max,
    denominator=k) is RePlay's Surprisal@k. An empty list scores 0.
    Example: a log of 4 rows, item a in 2 and b in 1: the list [a, b] has novelty
    (-log2(2/4) - log2(1/4)) / 2 = (1 + 2) / 2 = 1.5."""
    share, unseen, normalize = p["share"], p["unseen"], p["normalize"]
    info = self_information(s, share)
    counted = info.is_not_null() if unseen == "skip" else pl.lit(True)
    # log2 of the log's rows or users: the self-information of an item with one of them
    total = row_constant(pl.col("log_users" if share == "users" else "log_rows"), pl.col("rank"))
    largest = total.log(2)
    if unseen == "one":
        info = info.fill_null(largest)
    if normalize == "max":
        info = pl.when(largest > 0).then(info / largest).otherwise(0.0)
    term = info.fill_null(0.0)
    if p["items"] == "new":
        term = pl.when(s.side("known")).then(0.0).otherwise(term)
    name = f"novelty[{share},{p['items']},{unseen},{normalize}]"
    total = s.rec_sum(name, term, k)
    if p["denominator"] == "k" and k is not None:
        return pl.when(s.retrieved(k) > 0).then(total / per_user_constant(k)).otherwise(0.0)
    return safe_div(total, s.rec_count(f"{name}:n", counted, k))


@register(
    "arp",
    summary="Average recommendation popularity: mean log count of the recommended items.",
    formula="sum over i in L@k of pop(i) / n",
    upper_bound=None,
    higher_is_better=False,
    reads_relevance=False,
)
def arp(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Needs `interactions` (Abdollahpouri et al.). Items absent from the log count 0.
    Example: pop(a) = 2, pop(b) = 1: the list [a, b] has ARP 1.5."""
    count = s.side("popularity").fill_null(0)
    total = s.rec_total("popularity", count, k)
    return safe_div(total.fill_null(0), s.retrieved(k))


@register(
    "long_tail_share",
    summary="Share of the recommended items outside the popular head of the log.",
    formula="|{i in L@k : i not in head}| / n",
    params=(HEAD,),
    reads_relevance=False,
)
def long_tail_share(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Needs `interactions`. The head is the top `head` share of the log's items by
    popularity, with every item tied with the last one; items absent from the log are in
    the tail. Example: 10 logged items, head=0.2: the 2 most popular (and their ties)."""
    share = float(p["head"])
    s.side("popularity")
    count = pl.col("count")
    position = (pl.len() * share - 1e-9).ceil().clip(lower_bound=1).cast(pl.UInt32) - 1
    head = s.items.row(f"in_head[{share!r}]", count >= count.sort(descending=True).get(position))
    return safe_div(s.rec_count(f"tail[{share!r}]", ~head.fill_null(False), k), s.retrieved(k))


@register(
    "unexpectedness",
    summary="Share of the recommended items that are not expected (not in the baseline's list).",
    formula="1 - |L@k ∩ B@k| / n   (denominator=k: / k; expected=history: B = the user's log)",
    params=(EXPECTED, PER_ITEM_DENOMINATOR),
    reads_relevance=False,
)
def unexpectedness(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Needs `baseline` or `interactions` (the popularity baseline); expected=history
    needs `interactions`, and an item is then expected when the user already has it in
    the log (RePlay's Novelty@k, the share of the top k new to the user). With
    denominator=k the overlap is divided by k, so the slots a short list leaves empty
    count as unexpected (RePlay's Unexpectedness@k: 1 - |L@k ∩ B@k| / k). An empty list
    scores 0; a user the baseline file has no list for finds every item unexpected.
    Example: L@3 = [a, b, c] and B@3 = [a, x, y]: 1 - 1/3 = 2/3; L@3 = [a, b], k = 3: 1 -
    1/2 (n), or 1 - 1/3 (denominator=k)."""
    history = p["expected"] == "history"
    expected = s.side("known").fill_null(False) if history else _in_baseline(s, k)
    suffix = "[history]" if history else ""
    if p["denominator"] == "k" and k is not None:
        overlap = s.rec_count(f"expected{suffix}", expected, k).cast(pl.Float64)
        return pl.when(s.retrieved(k) > 0).then(1.0 - overlap / per_user_constant(k)).otherwise(0.0)
    return safe_div(s.rec_count(f"unexpected{suffix}", ~expected, k), s.retrieved(k))


BASELINE_K = Param(
    "baseline_k",
    "the depth of the baseline's lists compared (default: k, or the whole list without one)",
    positive_number=True,
    optional=True,
)


def _whole(value: object) -> int:
    """A positive whole number (baseline_k), else a config error."""
    number = float(str(value))
    if not number.is_integer():
        fix = "Write e.g. intersection@10(baseline_k=20)."
        raise ConfigError(
            f"baseline_k is {value}; it must be a whole number of items. {fix}",
            key="baseline_k",
            found=str(value),
            fix=fix,
        )
    return int(number)


@register(
    "intersection",
    summary="Share of the recommended items also in the baseline's (reference) list.",
    formula="|L@k ∩ B@baseline_k| / n   (baseline_k defaults to k)",
    params=(BASELINE_K,),
    reads_relevance=False,
)
def intersection(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """RecTools' Intersection(k, ref_k) with the `baseline` file as the reference
    recommendations (or the popularity baseline of `interactions`). Example: L@3 = [a, b,
    c], B@3 = [a, x, b]: 2/3; with baseline_k=1 (B@1 = [a]): 1/3. An empty list gives 0
    (RecTools leaves such users out: users_without_recommendations=skip); a user with no
    baseline list has nothing in common with it: 0."""
    baseline_k = k if "baseline_k" not in p else _whole(p["baseline_k"])
    common = s.rec_count(f"in_baseline@{cutoff_label(baseline_k)}", s.in_baseline(baseline_k), k)
    return safe_div(common, s.retrieved(k))


@register(
    "serendipity",
    summary="Share of the top k that is both relevant and unexpected (not in the baseline).",
    formula="sum over relevant i in L@k of u(i) / k, u(i) = [i not in B@k] or 1 - "
    "history similarity",
    params=(PRECISION_DENOMINATOR, UNEXPECTED, RELEVANCE),
)
def serendipity(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Ge et al. (2010): precision counting only the unexpected relevant items. Needs
    `baseline` or `interactions`. unexpected=history (Zhang et al.'s Auralist, MS
    Recommenders' serendipity): an item's unexpectedness is 1 - its mean co-occurrence
    similarity (see intra_list_diversity's cooccurrence) to the items the user has in the
    `interactions` log; a user absent from the log has no history to surprise and is left
    out of the mean. relevance=ignored counts every item as relevant (MS Recommenders
    without col_relevance): with unexpected=history, denominator=list_length that is MS
    Recommenders' user_serendipity. The sum is divided by k, or by n with
    denominator=list_length. An empty list scores 0.
    Example: L@3 = [a, b, c], a and b relevant, B@3 = [a, x, y]: 1/3."""
    relevant = s.side("relevant").fill_null(False) if p["relevance"] == "required" else pl.lit(True)
    by_k = p["denominator"] == "k"
    denominator = per_user_constant(k) if k is not None and by_k else s.retrieved(k)
    if p["unexpected"] == "history":
        similarity = s.side("history_similarity")
        term = pl.when(relevant).then(1.0 - similarity).otherwise(0.0).fill_null(0.0)
        total = s.rec_sum(f"serendipity[history,{p['relevance']}]", term, k)
        known = s.rec_count("with_history", similarity.is_not_null(), k)
        value = safe_div(total, denominator)
        return pl.when(s.retrieved(k) == 0).then(0.0).when(known > 0).then(value)
    suffix = "" if p["relevance"] == "required" else "[every item relevant]"
    wanted = relevant & ~_in_baseline(s, k)
    return safe_div(s.rec_count(f"serendipitous{suffix}", wanted, k), denominator)


def similarity_to_earlier(dims: int) -> pl.Expr:
    """For each recommended item, the sum of the cosine similarities of its embedding to
    those of the items ranked above it, without pairs: running vector sums, (S_d - x_d) x_d
    with S_d the running sum of dimension d down to the item, added dimension after
    dimension from 0.0 (the compiled walk, _list_sums.c's similar_earlier, adds the same
    way)."""
    rank = pl.col("rank")
    units = [pl.col(f"unit_{d}") for d in range(dims)]
    dots = [(x.cum_sum().over("user", order_by=rank) - x) * x for x in units]
    # added dimension after dimension, in their order: pl.sum_horizontal adds them in an
    # order that differs between the in-memory and the streaming engine (the last bit)
    return reduce(operator.add, dots, pl.lit(0.0))


def _only_feature(s: Stats) -> str:
    if len(s.features) == 1:
        return s.features[0]
    found = ", ".join(s.features) if s.features else "none"
    fix = (
        "Name one in catalog.columns (category, tags or embedding) and, when there are "
        "several, choose with intra_list_diversity@k(feature=...)."
    )
    raise InputError(
        "intra_list_diversity compares items by a catalog feature; the catalog's features "
        f"are: {found}. {fix}",
        key="catalog.columns",
        found=list(s.features),
        fix=fix,
    )


@register(
    "intra_list_diversity",
    summary="Mean pairwise distance between the items of each list (catalog features).",
    formula="1 - sum over pairs i < j in L@k of sim(i, j) / (n (n - 1) / 2)",
    params=(FEATURE,),
    upper_bound=2.0,
    reads_relevance=False,
    min_cutoff=(
        2,
        "it averages over the pairs of items in each top-k list, and 1 item has no pair",
    ),
)
def intra_list_diversity(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Needs a `catalog` with a feature, or (feature=cooccurrence) `interactions`.
    Distances: category 0 if equal else 1; tags the Jaccard distance (two empty sets: 0, as
    scipy); embedding the cosine distance (a zero vector has similarity 0 to all), up to 2
    for opposite vectors; cooccurrence 1 - c(i, j) / sqrt(h(i) h(j)), with c the log's
    users who have both items and h an item's users (the cosine of their user vectors:
    MS Recommenders' default diversity, item_cooccurrence_count; 1 for an item absent
    from the log). A list with fewer than 2 items has no pair: the user is left out of the
    mean. Example: categories [x, x, y] have pairs (same, different, different): 2/3."""
    feature = str(p.get("feature") or _only_feature(s))
    if feature == "embedding":
        s.side("embedding")
        similarity = similarity_to_earlier(s.embedding_dims)
        similar = s.rec_sum(EMBEDDING_SIMILARITY, similarity, k)
    else:  # category: 1 for a pair sharing it, else 0; tags: Jaccard
        similar = s.similar_pairs(feature, k).cast(pl.Float64)
    n = s.retrieved(k).cast(pl.Float64)
    pairs = n * (n - 1.0) / 2.0
    # clipped to [0, 2] like scikit-learn's cosine distances: identical unit vectors can
    # have a dot product of 1 + 1e-16
    return pl.when(pairs > 0).then((1.0 - similar / pairs).clip(0.0, 2.0))


@register(
    "categorical_diversity",
    summary="Distinct catalog categories among the recommended items, divided by k.",
    formula="|{category(i) : i in L@k}| / k   (denominator=list_length: / n)",
    params=(PRECISION_DENOMINATOR,),
    reads_relevance=False,
)
def categorical_diversity(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Needs a `catalog` with a `category` column (every recommended item in it, as for
    intra_list_diversity). RePlay's CategoricalDiversity@k divides by k; with
    denominator=list_length (or without a cutoff) it divides by n = |L@k|. An empty list
    scores 0. Example: categories [x, x, y] in the top 3: 2/3; at k = 5: 2/5."""
    categories = s.rec_distinct("categories", s.side("category"), k)
    by_k = p["denominator"] == "k"
    denominator = per_user_constant(k) if k is not None and by_k else s.retrieved(k)
    return safe_div(categories, denominator)
