"""segment_by inside the one assembly: each bucket splits its users by segment.

A segment is the users whose `attribute` has one value (`attribute=value`), or who have
none (`attribute=(none)`, the null group). A value that could read as the null group's
name (the text `(none)`) or that starts with a double quote is written as a JSON string
(`attribute="(none)"`), so no value's segment ever collides with the null group
(segment_name, and its inverse segment_value).

A user's statistics and per-user values depend only on its own list and ground truth
(and on the optional inputs, which are whole), so a bucket builds its per-user table
once and splits it: each segment of the bucket's users becomes a Partial of its own
(`segment_partials`), as if those users were a bucket. The buckets' segment Partials are
merged segment by segment with the rest (partial.merge) and each is finished by the same
code as the run (assembly.finish), so a segment's numbers, checks and messages are a
run's on its users alone, on every engine. Only the metrics that are not means of
per-user values (global and rating metrics) are computed again per segment, from the
bucket's lists and rows already in memory.

Users are matched to their values by their id as text (`attributes` holds ids as text):
a segments file that writes `0042` does not name user 42.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from dataclasses import dataclass

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.evaluation.global_metrics import state_queries
from receval_cli.evaluation.metric_users import counted_expr, metric_users, user_tally
from receval_cli.evaluation.partial import SAMPLES, MetricTotal, Partial
from receval_cli.evaluation.rating_pairs import bucket_pairs
from receval_cli.inputs.readers import Input
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.exact_sum import ExactSum, grouped_exact_sums
from receval_cli.metrics.registry import (
    StateInputs,
    StateSides,
    mean_term,
    over_column,
    ratio_of,
)

NONE = "(none)"  # the null group's value in a segment's name: the users without a value
_CODE = "segment code"  # each user's segment of one attribute, as a number
_TEXT = "segment user"  # the user id as text, matched with the attributes' ids


@dataclass(frozen=True)
class Segment:
    """The users whose `attribute` is `value`; the complement (attribute=(none)): the
    users without a value."""

    name: str  # attribute=value
    attribute: str
    value: str | None = None  # None: the complement
    complement: bool = False


def segment_name(attribute: str, value: str | None) -> str:
    """The segment's name: attribute=value; attribute=(none) for the users without a
    value (None); a value `(none)` or one starting with `"` written as a JSON string
    (attribute="(none)"), so that names and groups are one to one."""
    if value is None:
        return f"{attribute}={NONE}"
    if value == NONE or value.startswith('"'):
        return f"{attribute}={json.dumps(value, ensure_ascii=False)}"
    return f"{attribute}={value}"


def segment_value(name: str) -> tuple[str, str | None]:
    """The attribute and the value (None: the null group) a segment_name names."""
    attribute, _, value = name.partition("=")
    if value == NONE:
        return attribute, None
    if value.startswith('"'):
        return attribute, str(json.loads(value))
    return attribute, value


def segments_of(values: dict[str, Iterable[str | None]]) -> list[Segment]:
    """Every attribute=value, in attribute order then value order, from each attribute's
    values; attribute=(none) holds the users without a value (a null, or no row), and is
    listed for every attribute (the run leaves it out when it holds no user)."""
    found = []
    for attribute, given in values.items():
        for value in sorted({v for v in given if v is not None}):
            found.append(Segment(segment_name(attribute, value), attribute, value))
        found.append(Segment(segment_name(attribute, None), attribute, complement=True))
    return found


@dataclass(frozen=True)
class SegmentKeys:
    """Each user's segment values: `attributes` has `user` (the id as text) and one text
    column per attribute of `by` (null: no value), one row per user."""

    attributes: pl.DataFrame
    by: tuple[str, ...]


def user_values(users: pl.DataFrame, keys: SegmentKeys) -> pl.DataFrame:
    """(user, one column per attribute) for the users of `users` (its `user` column, any
    id type), in its order; null where a user has no value."""
    values = keys.attributes.select(pl.col("user").alias(_TEXT), *keys.by)
    found = users.select("user", pl.col("user").cast(pl.String).alias(_TEXT))
    return found.join(values, on=_TEXT, how="left", maintain_order="left").drop(_TEXT)


def with_values(rows: pl.DataFrame, keys: SegmentKeys | None) -> pl.DataFrame:
    """The --per-user rows with each user's segment values as the last columns."""
    if keys is None:
        return rows
    values = keys.attributes.select(pl.col("user").alias(_TEXT), *keys.by)
    texts = rows.with_columns(pl.col("user").cast(pl.String).alias(_TEXT))
    return texts.join(values, on=_TEXT, how="left", maintain_order="left").drop(_TEXT)


def segment_partials(
    per_user: pl.DataFrame,
    keys: SegmentKeys,
    tables: dict[str, pl.DataFrame],
    predictions: Input,
    truth: Input,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    keep_all: bool = False,
    sides: StateSides | None = None,
) -> dict[str, Partial]:
    """One Partial per segment with users in this bucket, by segment name: what
    partial.table_partial gives for the segment's users alone, computed for all the
    segments of an attribute at once (group_by per segment, exact sums per segment in one
    pass: grouped_exact_sums), so many small segments cost little more than a few.

    `per_user` is the bucket's per-user table; `tables` its ranked lists and items
    ("lists", "items": the global metrics' states, built per segment in one query each)
    and its input rows ("predictions", "truth": the rating metrics' pairs, one segment at
    a time), when the run has such metrics. `keep_all` keeps each segment's per-user table
    (a one-bucket run: intervals need it). `sides`: what the states that read the truth,
    the log or the catalog get (StateSides)."""
    user_specs = tuple(s for s in specs if lookup(s.name).scope == "user")
    in_mean = per_user.select("user", *(counted_expr(s, conventions) for s in user_specs))
    values = user_values(per_user, keys)
    found: dict[str, Partial] = {}
    for attribute in keys.by:
        value = values.get_column(attribute)
        named = value.drop_nulls().unique().sort()
        # each user's segment as a number: its value's place, or the last one for no value
        codes = (value.rank("dense") - 1).fill_null(named.len()).cast(pl.Int64).alias(_CODE)
        segments = [segment_name(attribute, v) for v in [*named.to_list(), None]]
        partials = _grouped_partials(
            per_user, in_mean, codes, len(segments), user_specs, conventions
        )
        if keep_all:
            _keep_tables(partials, per_user, in_mean, codes)
        _add_states(partials, per_user, codes, tables, specs, conventions, sides)
        _add_pairs(partials, per_user, codes, tables, predictions, truth, specs, conventions)
        found.update((segments[code], partial) for code, partial in partials.items())
    return found


def _grouped_partials(
    per_user: pl.DataFrame,
    in_mean: pl.DataFrame,
    codes: pl.Series,
    count: int,
    user_specs: tuple[MetricSpec, ...],
    conventions: Conventions,
) -> dict[int, Partial]:
    """table_partial of each segment's users, by segment code, for the segments with users."""
    keyed = per_user.with_columns(codes)
    names = [str(spec) for spec in user_specs]
    tally = user_tally(per_user.columns)
    grouped = keyed.group_by(_CODE).agg(
        *(v.alias(k) for k, v in tally.items()),
        pl.col("user").filter(pl.col("list_length") > 0).bottom_k(SAMPLES).alias(":predictions"),
        pl.col("user").filter(pl.col("in_truth")).bottom_k(SAMPLES).alias(":truth"),
        *(
            metric_users(conventions.metric_params(s)).sum().alias(f"{n}:users")
            for s, n in zip(user_specs, names, strict=True)
        ),
    )
    flags = pl.concat([codes.to_frame(), in_mean.select(names)], how="horizontal")
    in_counts = flags.group_by(_CODE).agg(pl.col(names).sum())
    grouped = grouped.join(in_counts, on=_CODE, how="left")
    sums: dict[str, list[ExactSum]] = {}
    overs: dict[str, list[ExactSum]] = {}  # a ratio spec's denominators (registry.Ratio)
    if names:
        import numpy as np  # numpy: as for the run's own exact sums

        group = codes.to_numpy()
        for spec, name in zip(user_specs, names, strict=True):
            kept = per_user.select(mean_term(pl.col(name), spec)).to_series().to_numpy()
            inside = in_mean.get_column(name).to_numpy()
            sums[name] = grouped_exact_sums(np.where(inside, kept, 0.0), group, count)
            if ratio_of(spec) is not None:
                over = per_user.get_column(over_column(spec)).to_numpy()
                overs[name] = grouped_exact_sums(np.where(inside, over, 0.0), group, count)
    partials: dict[int, Partial] = {}
    for row in grouped.iter_rows(named=True):
        code = row[_CODE]
        partials[code] = Partial(
            rows={},
            checks={"predictions": {}, "truth": {}},
            duplicates={},
            tally={k: int(row[k]) for k in tally},
            samples={"predictions": sorted(row[":predictions"]), "truth": sorted(row[":truth"])},
            totals={
                n: MetricTotal(
                    sums[n][code],
                    int(row[n]),
                    int(row[f"{n}:users"]),
                    overs[n][code] if n in overs else None,
                )
                for n in names
            },
            states={},
            recommended=[],
            exposure=[],
        )
    return partials


def _keep_tables(
    partials: dict[int, Partial], per_user: pl.DataFrame, in_mean: pl.DataFrame, codes: pl.Series
) -> None:
    """Each segment's per-user table and in-the-mean flags (a one-bucket run keeps them)."""
    tables = per_user.with_columns(codes).partition_by(_CODE, as_dict=True, include_key=False)
    flags = in_mean.with_columns(codes).partition_by(_CODE, as_dict=True, include_key=False)
    for (code,), table in tables.items():
        partials[code].values = table
        partials[code].counted = flags[(code,)]


def _add_states(
    partials: dict[int, Partial],
    per_user: pl.DataFrame,
    codes: pl.Series,
    tables: dict[str, pl.DataFrame],
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    sides: StateSides | None = None,
) -> None:
    """Each segment's global-metric states, each state built for every segment in one
    query (StateInputs.by) and split by segment."""
    global_specs = tuple(s for s in specs if lookup(s.name).scope == "global")
    if not global_specs:
        return
    users = per_user.with_columns(codes)
    of_user = users.select("user", _CODE)
    lists = tables["lists"].join(of_user, on="user", how="left")
    items = tables["items"].join(of_user, on="user", how="left")
    inputs = StateInputs(
        lists.lazy(), items.lazy(), users.lazy(), by=(_CODE,), sides=sides or StateSides()
    )
    states = state_queries(global_specs, conventions, inputs)
    built = pl.collect_all([query for _, query in states.values()])
    for name, table in zip(states, built, strict=True):
        parts = table.partition_by(_CODE, as_dict=True, include_key=False)
        empty = table.drop(_CODE).clear()
        for code, partial in partials.items():
            partial.states[name] = [parts.get((code,), empty)]


def _add_pairs(
    partials: dict[int, Partial],
    per_user: pl.DataFrame,
    codes: pl.Series,
    tables: dict[str, pl.DataFrame],
    predictions: Input,
    truth: Input,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
) -> None:
    """Each segment's rating-metric pairs, from its users' rows (one segment at a time)."""
    pair_specs = tuple(s for s in specs if lookup(s.name).scope == "pairs")
    if not pair_specs:
        return
    of_user = per_user.select("user").with_columns(codes)
    split = {}
    for role in ("predictions", "truth"):
        keyed = tables[role].join(of_user, on="user", how="left", maintain_order="left")
        split[role] = keyed.partition_by(_CODE, as_dict=True, include_key=False)
    for code, partial in partials.items():
        rows = {role: split[role].get((code,), tables[role].clear()) for role in split}
        mine_p = dataclasses.replace(predictions, frame=rows["predictions"].lazy())
        mine_t = dataclasses.replace(truth, frame=rows["truth"].lazy())
        partial.pairs = bucket_pairs(mine_p, mine_t, pair_specs, conventions)


def users_of(segment: Segment, keys: SegmentKeys) -> pl.Expr:
    """A filter on a frame's `user` column that keeps the segment's users."""
    named = keys.attributes.filter(pl.col(segment.attribute).is_not_null())
    if segment.complement:
        return ~pl.col("user").cast(pl.String).is_in(named.get_column("user").implode())
    chosen = named.filter(pl.col(segment.attribute) == segment.value).get_column("user")
    return pl.col("user").cast(pl.String).is_in(chosen.implode())
