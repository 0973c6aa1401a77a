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

import polars as pl

from receval_cli.errors import InputError
from receval_cli.metrics.ranking import PRECISION_DENOMINATOR
from receval_cli.metrics.registry import Param, Params, register
from receval_cli.metrics.stats import Stats, depth, per_user_constant, safe_div

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
    "items absent from the log (no popularity): skip (left out of the mean) or zero "
    "(count 0 but stay in the denominator, as MS Recommenders)",
    choices=("skip", "zero"),
    default="skip",
)
HEAD = Param(
    "head",
    "the popular head: the top share of the log's items by popularity (ties included)",
    default=0.2,
    share=True,
)
FEATURE = Param(
    "feature",
    "catalog feature compared: category (0/1), tags (Jaccard), embedding (cosine); "
    "default: the catalog's only feature",
    choices=("category", "tags", "embedding"),
    optional=True,
)


def _in_baseline(s: Stats, k: int | None) -> pl.Expr:
    """The item is in the baseline's top k for this user."""
    return s.side("baseline").fill_null(depth(k) + 1) <= depth(k)


def self_information(s: Stats, share: object) -> pl.Expr:
    """-log2 of the item's popularity share (null for an item absent from the log)."""
    s.side("popularity")
    if share == "users":
        ratio = pl.col("holders") / pl.col("log_users")
    else:
        ratio = pl.col("count") / pl.col("log_rows")
    return s.items.row(f"self_information[{share}]", -ratio.log(2))


@register(
    "novelty",
    summary="Mean self-information -log2(popularity share) of the recommended items.",
    formula="sum over i in L@k of -log2(pop(i) / |log|) / n",
    params=(SHARE, NEW_ONLY, UNSEEN),
    upper_bound=None,
    reads_relevance=False,
)
def novelty(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Needs `interactions`. share=interactions divides by the log's rows (MS
    Recommenders' novelty, Castells' item choice model); share=users by the log's users
    (recmetrics, Zhou et al.). items=new gives 0 to items the user already interacted with
    (novelty to this user). Example: a log of 4 rows, item a in 2 and b in 1: the list
    [a, b] has novelty (-log2(2/4) - log2(1/4)) / 2 = (1 + 2) / 2 = 1.5."""
    info = self_information(s, p["share"])
    counted = pl.lit(True) if p["unseen"] == "zero" else info.is_not_null()
    term = info.fill_null(0.0)
    if p["items"] == "new":
        term = pl.when(s.side("known")).then(0.0).otherwise(term)
    name = f"novelty[{p['share']},{p['items']},{p['unseen']}]"
    return safe_div(s.rec_sum(name, term, k), s.rec_count(f"{name}:n", counted, k))


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
    summary="Share of the recommended items absent from the baseline's list.",
    formula="|L@k \\ B@k| / n",
    reads_relevance=False,
)
def unexpectedness(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Needs `baseline` or `interactions` (the popularity baseline). Example: L@3 = [a, b,
    c] and B@3 = [a, x, y]: 2/3."""
    return safe_div(s.rec_count("unexpected", ~_in_baseline(s, k), k), s.retrieved(k))


@register(
    "serendipity",
    summary="Share of the top k that is both relevant and unexpected (not in the baseline).",
    formula="|{i in L@k : relevant, i not in B@k}| / k   (denominator=list_length: / n)",
    params=(PRECISION_DENOMINATOR,),
)
def serendipity(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Ge et al. (2010): precision counting only the unexpected relevant items. Needs
    `baseline` or `interactions`. Example: L@3 = [a, b, c], a and b relevant, B@3 = [a, x,
    y]: 1/3."""
    wanted = s.side("relevant").fill_null(False) & ~_in_baseline(s, k)
    by_k = p["denominator"] == "k"
    denominator = per_user_constant(k) if k is not None and by_k else s.retrieved(k)
    return safe_div(s.rec_count("serendipitous", wanted, k), denominator)


def similarity_to_earlier(s: Stats) -> pl.Expr:
    """For each recommended item, the sum of the cosine similarities of its embedding to
    those of the items ranked above it, without pairs: running vector sums."""
    s.side("embedding")
    rank = pl.col("rank")
    dims = [pl.col(f"unit_{d}") for d in range(s.embedding_dims)]
    dots = [(x.cum_sum().over("user", order_by=rank) - x) * x for x in dims]
    summed = pl.sum_horizontal(dots) if dots else pl.lit(0.0)  # no dims: before the check
    return s.recs.row("similar_earlier[embedding]", summed)


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
)
def intra_list_diversity(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Needs a `catalog` with a feature. Distances: category 0 if equal else 1; tags the
    Jaccard distance (two empty sets: 0, as scipy); embedding the cosine distance (a zero
    vector has similarity 0 to all), up to 2 for opposite vectors. A list with fewer than
    2 items has no pair: the user is left out of the mean. Example: categories [x, x, y]
    have pairs (same, different, different): 2/3."""
    feature = str(p.get("feature") or _only_feature(s))
    if feature == "embedding":
        similar = s.rec_sum("similarity[embedding]", similarity_to_earlier(s), k)
    else:  # category: 1 for a pair sharing it, else 0; tags: Jaccard
        similar = s.similar_pairs(feature, k).cast(pl.Float64)
    n = s.retrieved(k).cast(pl.Float64)
    pairs = n * (n - 1.0) / 2.0
    # clipped to [0, 2] like scikit-learn's cosine distances: identical unit vectors can
    # have a dot product of 1 + 1e-16
    return pl.when(pairs > 0).then((1.0 - similar / pairs).clip(0.0, 2.0))
