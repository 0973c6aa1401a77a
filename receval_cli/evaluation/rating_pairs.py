"""Rating metrics over a bucket of users: the pair counts and the metrics' terms, as a
PairPartial that adds up across buckets; then the checks and the values from the merged
PairPartial (the rating half of the one assembly, evaluation/assembly.py).

A bucket's (user, item) pairs are the full join of its predictions' scores and its ground
truth's grades (evaluation/pair_join.py); every pair belongs to one user, so the buckets'
pairs are the whole run's pairs, each counted once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.errors import InputError
from receval_cli.evaluation.pair_join import describe_pairs, joined_pairs, pair_counts, scored_pairs
from receval_cli.evaluation.prepare import (
    dedupe_predictions,
    first_of_lists,
    index_truth,
    with_score_precision,
)
from receval_cli.evaluation.wire import from_ipc_text, ipc_text
from receval_cli.inputs.readers import Input
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.exact_sum import ExactSum, exact_sums
from receval_cli.metrics.registry import PairMetric, PairTotals, merge_states
from receval_cli.wording import setting

_KEY = ["user", "item"]
_EXAMPLES = 3
# the pairs counted by (predicted, actual), each to 3 significant digits: the HTML
# report's calibration and residual figures (an integer table, so it adds up exactly)
CALIBRATION = "calibration"
_CALIBRATION_KEYS = ("predicted", "actual")


@dataclass
class PairPartial:
    """A bucket's pairs: the counts of pairs.pair_counts, the smallest unpredicted pairs
    (user, item), the pairs scored, the exact sums of the metrics' terms and their keyed
    count tables (one list entry per bucket). `scored`, `sums` and `tables` are keyed by
    the cut of the pairs they were taken over (_cut: "" for every pair)."""

    counts: dict[str, int]
    unpredicted: list[tuple[Any, ...]]
    scored: dict[str, int]
    sums: dict[str, ExactSum]
    tables: dict[str, list[pl.DataFrame]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "counts": self.counts,
            "unpredicted": self.unpredicted,
            "scored": self.scored,
            "sums": {name: total.to_json() for name, total in self.sums.items()},
            "tables": {n: [ipc_text(t) for t in found] for n, found in self.tables.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PairPartial:
        return cls(
            {k: int(v) for k, v in data["counts"].items()},
            [tuple(e) for e in data["unpredicted"]],
            {k: int(v) for k, v in data["scored"].items()},
            {name: ExactSum.from_json(total) for name, total in data["sums"].items()},
            {n: [from_ipc_text(t) for t in found] for n, found in data["tables"].items()},
        )

    def __add__(self, other: PairPartial) -> PairPartial:
        tables = {name: list(found) for name, found in self.tables.items()}
        for name, found in other.tables.items():
            tables.setdefault(name, []).extend(found)
        sums = dict(self.sums)
        for name, total in other.sums.items():
            sums[name] = sums[name] + total if name in sums else total
        return PairPartial(
            {k: self.counts.get(k, 0) + v for k, v in other.counts.items()},
            sorted([*self.unpredicted, *other.unpredicted])[:_EXAMPLES],
            {k: self.scored.get(k, 0) + v for k, v in other.scored.items()},
            sums,
            tables,
        )


def compact_pairs(merged: PairPartial, specs: tuple[MetricSpec, ...], conventions: Any) -> None:
    """Reduce each count table's list to one table (summed per key, as finish_pairs does)."""
    if CALIBRATION in merged.tables:
        merged.tables[CALIBRATION] = [merge_states(merged.tables[CALIBRATION], _CALIBRATION_KEYS)]
    for spec in _tabled(specs):
        metric, key = _metric(spec), _table_key(spec)
        assert metric.table is not None
        if key in merged.tables:
            keys, _ = metric.table(conventions.metric_params(spec))
            merged.tables[key] = [merge_states(merged.tables[key], keys)]


def _metric(spec: MetricSpec) -> PairMetric:
    found = lookup(spec.name).pairs
    assert found is not None, spec
    return found


def _cut(k: int | None) -> str:
    """The label of the pairs a cutoff scores: "" every pair, "@k" those among each user's
    first k predictions."""
    return "" if k is None else f"@{k}"


def _cutoffs(specs: tuple[MetricSpec, ...]) -> list[int | None]:
    """The distinct cutoffs of the specs, the whole list first (a fixed order: the
    queries of pair_queries come back in it)."""
    found = {spec.k for spec in specs}
    return sorted(found, key=lambda k: -1 if k is None else k)


def pair_join(
    predictions: Input, truth: Input, specs: tuple[MetricSpec, ...], conventions: Conventions
) -> pl.LazyFrame:
    """The (user, item) pairs the rating metrics score (`specs`); the predictions need scores.

    With max_depth, only each user's first max_depth predictions (by score, then the
    tie_break) take part, as if the file held no others; with a cutoff in the specs each
    pair carries its prediction's `position` in the user's list."""
    if predictions.value_column != "score":
        key = setting("predictions", "columns", "score")
        fix = f"Name the predicted rating as {key}."
        raise InputError(
            f"predictions file {predictions.path}: rating metrics ({', '.join(map(str, specs))}) "
            "compare predicted ratings with actual ones, and this file has no score column "
            f"(its layout is {predictions.layout}). {fix}",
            key=key,
            path=predictions.path,
            found=predictions.layout,
            fix=fix,
        )
    scored = with_score_precision(predictions.frame, "score", conventions.score_precision)
    deduped = dedupe_predictions(scored, "score", conventions.duplicates)
    listed, positioned = first_of_lists(deduped, conventions, _cutoffs(specs) != [None])
    return joined_pairs(listed, index_truth(truth.frame, conventions), positioned)


def check_queries(joined: pl.LazyFrame) -> list[pl.LazyFrame]:
    """The pair counts and the smallest unpredicted pairs."""
    unpredicted = joined.filter(pl.col("predicted").is_null()).select(_KEY)
    return [pair_counts(joined), unpredicted.sort(_KEY).head(_EXAMPLES)]


def _among_first(scored: pl.LazyFrame, k: int | None) -> pl.LazyFrame:
    """The pairs a cutoff scores: those whose prediction is among the user's first k (a
    pair with no prediction, scored under unpredicted: default, is in no list)."""
    return scored if k is None else scored.filter(pl.col("position") <= k)


def pair_queries(
    joined: pl.LazyFrame, specs: tuple[MetricSpec, ...], conventions: Conventions
) -> list[pl.LazyFrame]:
    """Every query a bucket's PairPartial is built from, in `pair_partial`'s order: the
    checks, then per cutoff the pairs and the terms' sums, then the count tables."""
    scored = scored_pairs(joined, conventions)
    queries = check_queries(joined)
    for k in _cutoffs(specs):
        terms: dict[str, pl.Expr] = {}
        for spec in specs:
            if spec.k == k:
                found = _metric(spec).sums(conventions.metric_params(spec))
                terms.update({name + _cut(k): expr for name, expr in found.items()})
        among = _among_first(scored, k)
        queries.append(among.select(pl.len().alias("pairs"), *terms_exprs(terms)))
    for spec in _tabled(specs):
        table = _metric(spec).table
        assert table is not None
        keys, aggregations = table(conventions.metric_params(spec))
        queries.append(_among_first(scored, spec.k).group_by(keys).agg(**aggregations))
    rounded = [pl.col(c).cast(pl.Float64).round_sig_figs(3) for c in _CALIBRATION_KEYS]
    queries.append(scored.group_by(rounded).agg(pairs=pl.len().cast(pl.Int64)))
    return queries


def _tabled(specs: tuple[MetricSpec, ...]) -> list[MetricSpec]:
    """The specs whose metric keeps a count table, one per metric name and cutoff (its
    table key, _table_key)."""
    found: dict[str, MetricSpec] = {}
    for spec in specs:
        if _metric(spec).table is not None:
            found.setdefault(_table_key(spec), spec)
    return list(found.values())


def _table_key(spec: MetricSpec) -> str:
    return spec.name + _cut(spec.k)


def terms_exprs(terms: dict[str, pl.Expr]) -> list[pl.Expr]:
    """The terms as list columns (one row holds every pair's term)."""
    return [expr.cast(pl.Float64).implode().alias(name) for name, expr in terms.items()]


def pair_partial(found: list[pl.DataFrame], specs: tuple[MetricSpec, ...]) -> PairPartial:
    """The PairPartial from the collected `pair_queries`."""
    counts, unpredicted, *rest, calibration = found
    cutoffs = _cutoffs(specs)
    per_cut, tables = rest[: len(cutoffs)], rest[len(cutoffs) :]
    scored: dict[str, int] = {}
    sums: dict[str, ExactSum] = {}
    for k, terms in zip(cutoffs, per_cut, strict=True):
        names = [name for name in terms.columns if name != "pairs"]
        totals = exact_sums([terms.get_column(name)[0] for name in names])
        sums.update(zip(names, totals, strict=True))
        scored[_cut(k)] = int(terms.item(0, "pairs"))
    return PairPartial(
        {k: int(v) for k, v in counts.row(0, named=True).items()},
        [tuple(row) for row in unpredicted.iter_rows()],
        scored,
        sums,
        {
            **{_table_key(spec): [t] for spec, t in zip(_tabled(specs), tables, strict=True)},
            CALIBRATION: [calibration],
        },
    )


def predicted_actual_counts(merged: PairPartial) -> pl.DataFrame | None:
    """The scored pairs counted by (predicted, actual), each to 3 significant digits,
    sorted; None when the run kept no such table."""
    found = merged.tables.get(CALIBRATION)
    if not found:
        return None
    return merge_states(found, _CALIBRATION_KEYS).sort(list(_CALIBRATION_KEYS))


def _sums_at(sums: dict[str, ExactSum], cut: str) -> dict[str, ExactSum]:
    """The sums taken over one cut's pairs, by the term's own name (term names hold no
    "@": pair_queries appends the cut to them)."""
    return {
        name.partition("@")[0]: total
        for name, total in sums.items()
        if ("@" + name.partition("@")[2] if "@" in name else "") == cut
    }


def finish_pairs(
    merged: PairPartial,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    predictions: Input,
    truth: Input,
) -> tuple[dict[str, float | None], dict[str, Any]]:
    """The rating metrics' values (None: no value, auc with one class) and the report's
    `pairs` block; raises for a rating without a prediction (unpredicted: error) and for no
    pair to score."""
    described = checked_pairs(merged.counts, merged.unpredicted, predictions, truth, conventions)
    values: dict[str, float | None] = {}
    for spec in specs:
        metric, cut = _metric(spec), _cut(spec.k)
        tables = {}
        if metric.table is not None:
            keys, _ = metric.table(conventions.metric_params(spec))
            tables[spec.name] = merge_states(merged.tables[_table_key(spec)], keys)
        totals = PairTotals(merged.scored[cut], _sums_at(merged.sums, cut), tables)
        values[str(spec)] = metric.finish(totals, conventions.metric_params(spec))
    return values, described


def checked_pairs(
    counts: dict[str, int],
    unpredicted: list[tuple[Any, ...]],
    predictions: Input,
    truth: Input,
    conventions: Conventions,
) -> dict[str, Any]:
    """The report's `pairs` block from the pair counts; raises for a rating without a
    prediction (unpredicted: error) and for no pair to score."""
    if counts["unpredicted"] and conventions.unpredicted == "error":
        shown = "; ".join(f"user {user!r}, item {item!r}" for user, item in unpredicted)
        fix = (
            "set conventions.unpredicted to ignore (score only the predicted pairs) or to "
            "default (with default_prediction)."
        )
        raise InputError(
            f"{truth.role} file {truth.path}: {counts['unpredicted']} rated (user, item) "
            f"pair(s) have no prediction, e.g. {shown}. Rating metrics need a prediction "
            f"for every rating: {fix}",
            key="conventions.unpredicted",
            path=truth.path,
            found=[{"user": user, "item": item} for user, item in unpredicted],
            fix=fix,
        )
    described = describe_pairs(counts, conventions)
    if described["used"] == 0:
        fix = "Check the ids, or set conventions.unrated / unpredicted to default."
        raise InputError(
            f"no (user, item) pair is both predicted in {predictions.path} and rated in "
            f"{truth.path}, so the rating metrics have nothing to score. {fix}",
            path=predictions.path,
            found=0,
            fix=fix,
        )
    return described


def bucket_pairs(
    predictions: Input,
    truth: Input,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    engine: Any = "auto",
) -> PairPartial:
    """The PairPartial of inputs in memory (a segment's users), collected on its own."""
    joined = pair_join(predictions, truth, specs, conventions)
    found = pl.collect_all(pair_queries(joined, specs, conventions), engine=engine)
    return pair_partial(found, specs)
