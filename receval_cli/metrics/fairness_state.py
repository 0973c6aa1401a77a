"""The mergeable state of the item-fairness metrics (metrics/fairness.py): the item
groups, and what each group counts over the users with a non-empty list (the users
Elliot iterates: those of the recommendations).

The item groups are the catalog's `category` (groups=category; items without one, or not
in the catalog, belong to no group) or the interactions log's short head and long tail
(groups=popularity, Elliot's ItemPopularity split: the log's items by their number of
distinct users, descending, ties by the tie_break convention; the head takes items until
their users add up to pop_ratio of the log's distinct (user, item) pairs, the item that
crosses the bar included; every other log item is the tail).

One state, keyed by (kind, group, rank, a, b), its rows of four kinds (the other keys 0):

    ranked   rank r: placed, the (user, item of g) pairs at rank r of a top-k list; hits,
             those whose item is relevant to the user
    pool     size, sum over users of |g|; known, sum of |g ∩ log_u|; relevant, sum of
             |g ∩ rel_u \\ log_u|; users, the users counted
    rsp      a = |L_u@k ∩ g|, b = |g \\ log_u|: users, how many users have that pair
    reo      a = |L_u@k ∩ g ∩ rel_u|, b = |g ∩ rel_u \\ log_u|: users, likewise

The last two give the per-user spread of the group's ratios (their intervals, in the
report's fairness block). Every count is an integer summed per key, so buckets of users
merge (registry.State).
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from receval_cli.errors import InputError
from receval_cli.metrics.registry import Param, Params, State, StateInputs
from receval_cli.metrics.stats import cutoff_label

GROUPS = Param(
    "groups",
    "the item groups: popularity (the log's short head and long tail, Elliot's "
    "ItemPopularity) or category (the catalog's category column)",
    choices=("popularity", "category"),
    default="popularity",
)
POP_RATIO = Param(
    "pop_ratio",
    "groups=popularity: the short head's share of the log's distinct (user, item) pairs "
    "(Elliot's pop_ratio)",
    default=0.8,
    share=True,
)
FAIR_PARAMS = (GROUPS, POP_RATIO)
# the metrics that group the items over the whole log or catalog (engine: spark computes
# the groups once and sends each bucket those of its items: engines/spark_global_states.py)
ITEM_GROUP_METRICS = ("rsp", "reo", "exposure_disparity")


def require_item_groups(groups: Mapping[str, object], category: bool, log: bool) -> None:
    """The item-group metrics (`groups`: each spec's text and its groups parameter) have
    their groups' input in the config (`category`: the catalog has a category column;
    `log`: an interactions log): checked before any row is read."""
    lacking = [spec for spec, g in groups.items() if g == "category" and not category]
    if lacking:
        fix = "Add a catalog with a category column (catalog.columns.category)."
        raise InputError(
            f"{', '.join(lacking)} group(s) the items by the catalog's category, and the "
            f"config gives no catalog category. {fix}",
            key="catalog.columns.category",
            found=lacking,
            fix=fix,
        )
    lacking = [spec for spec, g in groups.items() if g == "popularity" and not log]
    if lacking:
        fix = "Add interactions.path (the training log), or use groups=category."
        raise InputError(
            f"{', '.join(lacking)} split(s) the items into the interactions log's short "
            f"head and long tail (groups=popularity), and the config gives no log. {fix}",
            key="interactions.path",
            found=lacking,
            fix=fix,
        )


def group_label(p: Params) -> str:
    """The grouping the parameters name: "category", or "popularity,RATIO"."""
    if p["groups"] == "category":
        return "category"
    return f"popularity,{p['pop_ratio']}"


def item_groups(inputs: StateInputs, p: Params, name: str) -> pl.LazyFrame:
    """(item, group): each grouped item's group, from the catalog or the whole log."""
    sides = inputs.sides
    if p["groups"] == "category":
        if sides.catalog is None or "category" not in sides.catalog.collect_schema():
            fix = "Add a catalog with a category column (catalog.columns.category)."
            raise InputError(
                f"{name} groups the items by the catalog's category, and the config gives "
                f"no catalog category. {fix}",
                key="catalog.columns.category",
                found=None,
                fix=fix,
            )
        frame = sides.catalog.select("item", pl.col("category").alias("group"))
        return frame.drop_nulls("group").unique("item", keep="first")
    if sides.popularity is None:
        fix = "Add interactions.path (the training log), or use groups=category."
        raise InputError(
            f"{name} splits the items into the log's short head and long tail, and the "
            f"config gives no interactions log. {fix}",
            key="interactions.path",
            found=None,
            fix=fix,
        )
    return popularity_groups(sides.popularity, float(p["pop_ratio"]))


def popularity_groups(popularity: pl.LazyFrame, pop_ratio: float) -> pl.LazyFrame:
    """(item, group): "head" for the log's most popular items (StateSides.popularity's
    order) while the users counted before the item are under pop_ratio of the distinct
    (user, item) pairs, "tail" for the others (Elliot's get_short_head)."""
    ranked = popularity.sort("place")
    before = pl.col("users").cum_sum() - pl.col("users")
    bar = pl.col("users").sum().cast(pl.Float64) * pop_ratio
    head = before.cast(pl.Float64) < bar
    label = pl.when(head).then(pl.lit("head")).otherwise(pl.lit("tail"))
    return ranked.select("item", label.alias("group"))


def _listed_users(inputs: StateInputs) -> pl.LazyFrame:
    """(*by, user): the users with a non-empty list."""
    lists = inputs.lists.filter(pl.col("items").list.len() > 0)
    return lists.select(*inputs.by, "user")


def _relevant_pairs(inputs: StateInputs, name: str) -> pl.LazyFrame:
    """(user, item): the ground truth's relevant pairs."""
    truth = inputs.sides.truth
    if truth is None:
        raise InputError(f"{name} needs the ground truth, which this engine does not pass on.")
    return truth.filter(pl.col("relevant")).select("user", "item").unique()


def _marked(inputs: StateInputs, k: int | None, groups: pl.LazyFrame, name: str) -> pl.LazyFrame:
    """(*by, user, item, group, rank, hit): the lists' grouped items in their top k, hit
    when the item is relevant to the user."""
    items = pl.col("items")
    rows = inputs.lists.select(
        *inputs.by,
        "user",
        items.alias("item"),
        pl.int_ranges(1, items.list.len() + 1, dtype=pl.UInt32).alias("rank"),
    ).explode("item", "rank")
    rows = rows.drop_nulls("item")
    if k is not None:
        rows = rows.filter(pl.col("rank") <= k)
    grouped = rows.join(groups, on="item", how="inner")
    relevant = _relevant_pairs(inputs, name).with_columns(pl.lit(True).alias("hit"))
    marked = grouped.join(relevant, on=["user", "item"], how="left")
    return marked.with_columns(pl.col("hit").fill_null(False))


def _per_user(
    inputs: StateInputs, marked: pl.LazyFrame, groups: pl.LazyFrame, name: str
) -> pl.LazyFrame:
    """(*by, user, group, placed, hits, known, relevant): per listed user and group with
    one of them non-zero, its top-k items of the group, those relevant, its logged items
    of the group, and its relevant items of the group outside its log."""
    by = inputs.by
    keys = [*by, "user", "group"]
    users = _listed_users(inputs)
    top = marked.group_by(*keys).agg(
        pl.len().cast(pl.Int64).alias("placed"), pl.col("hit").sum().cast(pl.Int64).alias("hits")
    )
    relevant = users.join(_relevant_pairs(inputs, name), on="user", how="inner")
    log = inputs.sides.log
    parts = [top]
    if log is not None:
        known_pairs = log.select("user", "item").unique()
        mine = users.join(known_pairs, on="user", how="inner").join(groups, on="item")
        parts.append(mine.group_by(*keys).agg(pl.len().cast(pl.Int64).alias("known")))
        relevant = relevant.join(known_pairs, on=["user", "item"], how="anti")
    found = relevant.join(groups, on="item").group_by(*keys)
    parts.append(found.agg(pl.len().cast(pl.Int64).alias("relevant")))
    joined = parts[0]
    for part in parts[1:]:
        joined = joined.join(part, on=keys, how="full", coalesce=True)
    counts = ("placed", "hits", "known", "relevant")
    missing = [pl.lit(0, pl.Int64).alias(c) for c in counts if c not in ("placed", "hits")]
    if log is None:
        joined = joined.with_columns(missing[0])
    return joined.with_columns(pl.col(c).fill_null(0) for c in counts)


_COUNTS = ("placed", "hits", "size", "known", "relevant", "users")
_KEYS = ("kind", "group", "rank", "a", "b")
RANKED, POOL, RSP_USERS, REO_USERS = 0, 1, 2, 3  # the rows' kinds
FAIRNESS_STATE = "fairness@"  # how the state's name begins (item_facts keeps these states)


def fairness_state(k: int | None, p: Params) -> State:
    """One state for the three metrics and the report's per-group intervals: rows of four
    kinds (the module's docstring), each with the others' counts 0, one table to merge."""
    label = group_label(p)
    name = f"{FAIRNESS_STATE}{cutoff_label(k)}[{label}]"

    def build(inputs: StateInputs) -> pl.LazyFrame:
        by = inputs.by
        given = inputs.sides.item_groups or {}
        if label in given:  # computed beforehand: the bucket's items' groups, the sizes
            groups, sizes = given[label]
        else:
            groups = item_groups(inputs, p, name)
            sizes = groups.group_by("group").agg(pl.len().cast(pl.Int64).alias("items"))
        marked = _marked(inputs, k, groups, name)
        per_user = _per_user(inputs, marked, groups, name)
        users = _listed_users(inputs)
        counted = users.group_by(*by).agg(pl.len().cast(pl.Int64).alias("users"))
        if not by:
            counted = users.select(pl.len().cast(pl.Int64).alias("users"))
        base = counted.join(sizes, how="cross")
        keys = [*by, "group"]
        totals = per_user.group_by(*keys).agg(
            pl.col("known", "relevant").sum(), pl.len().cast(pl.Int64).alias("nonzero")
        )
        base = base.join(totals, on=keys, how="left").with_columns(
            pl.col("known", "relevant", "nonzero").fill_null(0)
        )
        ranked = marked.group_by(*by, "group", "rank").agg(
            pl.len().cast(pl.Int64).alias("placed"),
            pl.col("hit").sum().cast(pl.Int64).alias("hits"),
        )
        pool = base.select(
            *by,
            "group",
            (pl.col("users") * pl.col("items")).alias("size"),
            "known",
            "relevant",
            "users",
        )
        # users without a pair in the group: a = 0, and b = |g| (rsp) or 0 (reo)
        rest = base.select(*by, "group", "items", (pl.col("users") - pl.col("nonzero")).alias("n"))
        with_size = per_user.join(sizes, on="group")
        rsp_users = pl.concat(
            [
                with_size.select(*keys, a="placed", b=pl.col("items") - pl.col("known"), n=1),
                rest.select(*keys, a=0, b="items", n="n"),
            ],
            how="diagonal_relaxed",
        )
        reo_users = pl.concat(
            [
                per_user.select(*keys, a="hits", b="relevant", n=1),
                rest.select(*keys, a=0, b=0, n="n"),
            ],
            how="diagonal_relaxed",
        )
        frames = [
            _rows(ranked, by, RANKED, "placed", "hits"),
            _rows(pool.with_columns(rank=0), by, POOL, "size", "known", "relevant", "users"),
        ]
        for kind, rows in ((RSP_USERS, rsp_users), (REO_USERS, reo_users)):
            histogram = rows.filter(pl.col("n") > 0).group_by(*keys, "a", "b")
            counted_pairs = histogram.agg(pl.col("n").sum().alias("users"))
            frames.append(_rows(counted_pairs.with_columns(rank=0), by, kind, "users"))
        return pl.concat(frames)

    return State(name, _KEYS, build)


def _rows(frame: pl.LazyFrame, by: tuple[str, ...], kind: int, *counts: str) -> pl.LazyFrame:
    """The frame's rows in the state's columns: its kind, its keys (a and b 0 where it
    has none) and its counts (the others 0)."""
    names = frame.collect_schema().names()
    keys: list[str | pl.Expr] = [
        *by,
        pl.lit(kind, pl.UInt8).alias("kind"),
        pl.col("group").cast(pl.String),
        pl.col("rank").cast(pl.UInt32),
        *(pl.col(c).cast(pl.Int64) if c in names else pl.lit(0, pl.Int64).alias(c) for c in "ab"),
    ]
    values = [
        pl.col(c).cast(pl.Int64) if c in counts else pl.lit(0, pl.Int64).alias(c) for c in _COUNTS
    ]
    return frame.select(*keys, *values)
