"""A Partial: what the report needs from a bucket of users, in a form that adds up.

The one assembly (evaluation/assembly.py) evaluates each bucket of users into a Partial
(`table_partial` for its per-user table; assembly.bucket_partial adds the checks, the
global states and the rating pairs), adds the buckets' Partials up (`merge`, in any order
and grouping: counts are integers, metric sums exact, see metrics/exact_sum.py) and
finishes the merged one into the Report. With segment_by, a Partial also holds one
Partial per segment of its users (evaluation/segment_split.py), merged segment by segment.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.evaluation.click_parts import ClickParts
from receval_cli.evaluation.item_facts import ItemFacts, ItemTables, distinct_items
from receval_cli.evaluation.metric_users import (
    USER_TALLY,
    counted_expr,
    metric_users,
    user_tally,
)
from receval_cli.evaluation.rating_pairs import PairPartial, compact_pairs
from receval_cli.evaluation.wire import from_ipc_text, ipc_text
from receval_cli.inputs.checks import DuplicatesFound
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.exact_sum import ExactSum, exact_sums
from receval_cli.metrics.registry import mean_term, merge_states, over_column, ratio_of

SAMPLES = 3  # user ids named when no user is in both files
ROLES = ("predictions", "truth")


@dataclass
class MetricTotal:
    """A per-user metric over a bucket: the exact sum of its values over the users in its
    mean, how many those are, and how many users its user rules keep."""

    total: ExactSum
    counted: int
    users: int
    # a ratio spec (registry.Ratio): the exact sum of its denominators over the same users
    over: ExactSum | None = None

    def __add__(self, other: MetricTotal) -> MetricTotal:
        over = None
        if self.over is not None or other.over is not None:
            over = (self.over or ExactSum()) + (other.over or ExactSum())
        return MetricTotal(
            self.total + other.total,
            self.counted + other.counted,
            self.users + other.users,
            over,
        )

    def to_json(self) -> list[object]:
        found = [self.total.to_json(), self.counted, self.users]
        return found if self.over is None else [*found, self.over.to_json()]

    @classmethod
    def from_json(cls, data: list[Any]) -> MetricTotal:
        over = ExactSum.from_json(data[3]) if len(data) > 3 else None
        return cls(ExactSum.from_json(data[0]), int(data[1]), int(data[2]), over)


@dataclass
class Partial:
    """What the report needs from a bucket of users, in a form that adds up (`merge`).

    Tables are lists, one entry per bucket, merged by `finish`. `per_user` holds the
    bucket's per-user rows (user, status, one column per per-user metric, null where the
    user is not in that metric's mean) when the run keeps them; `values` and `counted`
    hold the whole per-user table (statistics, status, raw values) and the in-the-mean
    flags of a one-bucket run (the Python API, intervals, comparisons, segments and
    validate read them)."""

    rows: dict[str, dict[str, int]]  # per input: raw_rows (and raw_users, list layouts)
    checks: dict[str, dict[str, int]]  # per input: null / NaN / inf counts
    duplicates: dict[str, DuplicatesFound]  # per input, when some pair repeats
    tally: dict[str, int]  # users by status (metric_users.USER_TALLY)
    samples: dict[str, list[Any]]  # per input: its smallest user ids (messages)
    totals: dict[str, MetricTotal]  # per per-user metric
    states: dict[str, list[pl.DataFrame]]  # per global metric state
    recommended: list[pl.DataFrame]  # the distinct recommended items
    exposure: list[pl.DataFrame]  # (item, lists): lists holding the item in their top k
    pairs: PairPartial | None = None  # the rating metrics' pairs, when asked
    per_user: pl.DataFrame | None = None
    values: pl.DataFrame | None = field(default=None, repr=False)
    counted: pl.DataFrame | None = field(default=None, repr=False)
    extra: list[pl.DataFrame] = field(default_factory=list, repr=False)  # not merged
    # a one-bucket run's unknown-items count, collected with its queries (the reference's
    # scan shared with theirs); None once merged: finish counts the merged items then
    unknown: pl.DataFrame | None = field(default=None, repr=False)
    # the ground truth's content hash as two sums (fingerprints.truth_digest)
    digest: dict[str, int] = field(default_factory=dict)
    # segment_by: one Partial per segment of these users, by name (segment_split.py)
    segments: dict[str, Partial] = field(default_factory=dict)
    # the item-level results, once computed where the items are (a Spark executor): then
    # recommended, exposure and states are left empty (item_facts.py)
    facts: ItemFacts | None = None
    # the click metrics' sums over these users and log rows (click_parts.py)
    clicks: ClickParts | None = None
    # in place of `recommended`, where the buckets kept their items as flags: the table,
    # made when read (73M item ids at 1B rows; a run of ranking metrics never reads it)
    recommended_later: Callable[[], pl.DataFrame] | None = field(default=None, repr=False)

    def item_tables(self) -> ItemTables:
        return ItemTables(
            self.recommended, self.exposure, self.states, self.unknown, self.recommended_later
        )

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data (tables as base64 Arrow IPC), for Spark's executors."""
        return {
            "rows": self.rows,
            "checks": self.checks,
            "duplicates": {k: [d.pairs, d.examples] for k, d in self.duplicates.items()},
            "tally": self.tally,
            "samples": self.samples,
            "totals": {n: t.to_json() for n, t in self.totals.items()},
            "states": {n: [ipc_text(t) for t in tables] for n, tables in self.states.items()},
            "recommended": [ipc_text(t) for t in self.recommended],
            "exposure": [ipc_text(t) for t in self.exposure],
            "pairs": None if self.pairs is None else self.pairs.to_json(),
            "digest": self.digest,
            "segments": {name: part.to_json() for name, part in self.segments.items()},
            "facts": None if self.facts is None else self.facts.to_json(),
            "clicks": None if self.clicks is None else self.clicks.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Partial:
        return cls(
            rows=data["rows"],
            checks=data["checks"],
            duplicates={
                k: DuplicatesFound(int(p), [tuple(e) for e in examples])
                for k, (p, examples) in data["duplicates"].items()
            },
            tally=data["tally"],
            samples=data["samples"],
            totals={n: MetricTotal.from_json(t) for n, t in data["totals"].items()},
            states={n: [from_ipc_text(t) for t in tables] for n, tables in data["states"].items()},
            recommended=[from_ipc_text(t) for t in data["recommended"]],
            exposure=[from_ipc_text(t) for t in data["exposure"]],
            pairs=None if data["pairs"] is None else PairPartial.from_json(data["pairs"]),
            digest={k: int(v) for k, v in data["digest"].items()},
            segments={n: cls.from_json(part) for n, part in data.get("segments", {}).items()},
            facts=None if data.get("facts") is None else ItemFacts.from_json(data["facts"]),
            clicks=None if data.get("clicks") is None else ClickParts.from_json(data["clicks"]),
        )


def table_partial(
    per_user: pl.DataFrame,
    user_specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    keep: str = "none",
) -> Partial:
    """The Partial of a per-user table (statistics, status, per-user metrics): the users'
    tally, the smallest ids, and each metric's exact sum; no input checks, no state."""
    in_mean = per_user.select("user", *(counted_expr(s, conventions) for s in user_specs))
    kept_rows = None
    if keep == "rows":
        kept_rows = per_user_rows(per_user.lazy(), in_mean.lazy(), user_specs).collect()
    return Partial(
        rows={},
        checks={"predictions": {}, "truth": {}},
        duplicates={},
        tally={
            k: int(v)
            for k, v in per_user.select(**user_tally(per_user.columns)).row(0, named=True).items()
        },
        samples={
            "predictions": _smallest(per_user, pl.col("list_length") > 0),
            "truth": _smallest(per_user, pl.col("in_truth")),
        },
        totals=_metric_totals(per_user, user_specs, conventions, in_mean),
        states={},
        recommended=[],
        exposure=[],
        per_user=kept_rows,
        values=per_user if keep == "all" else None,
        counted=in_mean if keep == "all" else None,
    )


def per_user_rows(
    per_user: pl.LazyFrame, in_mean: pl.LazyFrame, user_specs: tuple[MetricSpec, ...]
) -> pl.LazyFrame:
    """The --per-user rows: user, status, each per-user metric (null where the user is not
    in its mean), from the per-user table and the in-the-mean flags."""
    names = [str(s) for s in user_specs]
    flags = in_mean.select(pl.col(names).name.suffix(":counted"))
    joined = pl.concat([per_user.select("user", "status", *names), flags], how="horizontal")
    return joined.select(
        "user", "status", *(pl.when(pl.col(f"{n}:counted")).then(pl.col(n)).alias(n) for n in names)
    )


def _smallest(per_user: pl.DataFrame, mask: pl.Expr) -> list[Any]:
    # the user column filtered alone: filtering the whole table copied every column
    users = pl.col("user").filter(mask).drop_nulls()
    return per_user.select(users.bottom_k(SAMPLES).sort()).to_series().to_list()


def _metric_totals(
    per_user: pl.DataFrame,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    in_mean: pl.DataFrame,
) -> dict[str, MetricTotal]:
    """Per metric: the exact sum of its values over the users in its mean (`in_mean`: a
    flag per metric), their number, and the users its user rules keep."""
    if not specs:
        return {}
    kept = per_user.select(
        metric_users(conventions.metric_params(s)).sum().alias(str(s)) for s in specs
    ).row(0, named=True)
    names = [str(spec) for spec in specs]
    # users outside a metric's mean add 0.0 (exactly nothing): no filtered copies
    flags = in_mean.select(pl.col(names).name.suffix(":in"))
    # a ratio spec's denominators, over the same users (registry.Ratio)
    ratios = [(str(s), over_column(s)) for s in specs if ratio_of(s) is not None]
    read = list(dict.fromkeys([*names, *(o for _, o in ratios)]))
    frame = pl.concat([per_user.select(read), flags], how="horizontal")  # no copy
    terms = [
        pl.when(pl.col(f"{n}:in")).then(mean_term(pl.col(n), s)).otherwise(0.0).alias(n)
        for n, s in zip(names, specs, strict=True)
    ]
    terms += [pl.when(pl.col(f"{n}:in")).then(pl.col(o)).otherwise(0.0).alias(o) for n, o in ratios]
    # made and summed a core's worth of columns at a time (exact_sums shares them among
    # threads): every metric's at once took 36 columns of the users' values beside the
    # per-user table (72 MiB for 250k users)
    step = max(1, os.cpu_count() or 1)
    sums: list[ExactSum] = []
    for at in range(0, len(terms), step):
        sums += exact_sums(frame.select(terms[at : at + step]).get_columns())
    overs = dict(zip([n for n, _ in ratios], sums[len(names) :], strict=True))
    return {
        name: MetricTotal(total, int(in_mean[name].sum()), int(kept[name]), overs.get(name))
        for name, total in zip(names, sums, strict=False)
    }


def merge(partials: Iterable[Partial]) -> Partial:
    """The Partials added up (integers and exact sums: the same whatever the order). The
    per-user tables of a single Partial stay; those of several are the caller's."""
    parts = list(partials)
    if len(parts) == 1:
        return parts[0]
    merged = Partial({}, {}, {}, {}, {}, {}, {}, [], [])
    segments: dict[str, list[Partial]] = {}
    for part in parts:
        assert part.facts is None, "a Partial whose item facts are computed is finished"
        for role, counts in part.rows.items():
            _add_counts(merged.rows.setdefault(role, {}), counts)
        for role, counts in part.checks.items():
            _add_counts(merged.checks.setdefault(role, {}), counts)
        for role, duplicates in part.duplicates.items():
            old = merged.duplicates.get(role)
            merged.duplicates[role] = duplicates if old is None else old + duplicates
        _add_counts(merged.tally, part.tally)
        for role, users in part.samples.items():
            merged.samples[role] = sorted([*merged.samples.get(role, []), *users])[:SAMPLES]
        for name, total in part.totals.items():
            old_total = merged.totals.get(name)
            merged.totals[name] = total if old_total is None else old_total + total
        for name, tables in part.states.items():
            merged.states.setdefault(name, []).extend(tables)
        merged.recommended.extend(part.recommended)
        merged.exposure.extend(part.exposure)
        if part.pairs is not None:
            merged.pairs = part.pairs if merged.pairs is None else merged.pairs + part.pairs
        _add_counts(merged.digest, part.digest)
        if part.clicks is not None:
            merged.clicks = part.clicks if merged.clicks is None else merged.clicks + part.clicks
        for name, segment in part.segments.items():
            segments.setdefault(name, []).append(segment)
    merged.segments = {name: merge(found) for name, found in segments.items()}
    return merged


def compact(merged: Partial, specs: tuple[MetricSpec, ...], conventions: Conventions) -> Partial:
    """Reduce each of the merged Partial's table lists (one entry per bucket merged) to one
    table, as finish does: the global states summed per key, the recommended items made
    distinct, the exposure summed per item, the rating metrics' count tables summed. The
    Partial then stays the size of one table per kind, whatever the number of buckets (a
    Spark executor merges the buckets with it); finish gives the same report from it."""
    for spec in specs:
        global_metric = lookup(spec.name).global_metric
        if global_metric is None:
            continue
        state = global_metric.state(spec.k, conventions.metric_params(spec))
        if state.name in merged.states:
            merged.states[state.name] = [merge_states(merged.states[state.name], state.keys)]
    if merged.recommended:
        merged.recommended = [distinct_items(merged.recommended, ordered=False)]
    if merged.exposure:
        summed = pl.concat(merged.exposure).group_by("item").agg(pl.col("lists").sum())
        merged.exposure = [summed.sort("item")]
    if merged.pairs is not None:
        pair_specs = tuple(s for s in specs if lookup(s.name).scope == "pairs")
        compact_pairs(merged.pairs, pair_specs, conventions)
    merged.segments = {
        name: compact(segment, specs, conventions) for name, segment in merged.segments.items()
    }
    return merged


def _add_counts(into: dict[str, int], counts: dict[str, int]) -> None:
    for key, value in counts.items():
        into[key] = into.get(key, 0) + value


def empty_partial() -> Partial:
    """The Partial of no user (a segment none of whose users is in the inputs)."""
    return Partial(
        rows={},
        checks={"predictions": {}, "truth": {}},
        duplicates={},
        tally=dict.fromkeys(USER_TALLY, 0),
        samples={"predictions": [], "truth": []},
        totals={},
        states={},
        recommended=[],
        exposure=[],
    )
