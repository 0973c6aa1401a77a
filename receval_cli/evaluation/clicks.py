"""Off-policy metrics over logged data: the recommendations matched against a click log.

The ground truth is the log (user, item, click[, propensity]); every recommendation (each
user's first max_depth, when that convention is set) is left-joined to it, with its
position in the user's list for ctr@k (see metrics/ctr.py for the estimators). The log is
validated first: clicks must be 0 or 1 and propensities in (0, 1].
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.errors import InputError
from receval_cli.evaluation.prepare import (
    dedupe_predictions,
    first_of_lists,
    keep_first,
    with_score_precision,
)
from receval_cli.inputs.readers import Input
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.ctr import effective_sample_size, in_top, variance
from receval_cli.metrics.stats import Stats
from receval_cli.wording import setting

_KEY = ["user", "item"]
_EXAMPLES = 3


def _dedupe_log(log: pl.LazyFrame, policy: str, has_propensity: bool) -> pl.LazyFrame:
    """Apply truth_duplicates to the log (`error` is checked with the ground truth)."""
    if policy == "first":
        return keep_first(log)
    if policy == "max":
        kept = [pl.col("rel").max(), pl.col("row").min()]
        if has_propensity:
            kept.append(pl.col("propensity").sort_by("rel", descending=True).first())
        return log.group_by(_KEY).agg(kept)
    return log


def _rules(has_propensity: bool) -> dict[str, tuple[pl.Expr, str, str]]:
    """Each check of the log: the rows failing it, the column, and what it needs."""
    rules = {"bad_clicks": (~pl.col("rel").is_in([0.0, 1.0]), "rel", "0 or 1")}
    if has_propensity:
        p = pl.col("propensity")
        rules["bad_propensities"] = (p.is_nan() | (p <= 0) | (p > 1), "propensity", "in (0, 1]")
    return rules


def _problems(log: pl.LazyFrame, has_propensity: bool) -> pl.LazyFrame:
    rules = _rules(has_propensity)
    return log.select(failing.sum().alias(key) for key, (failing, _, _) in rules.items())


def _raise_bad_rows(
    log: pl.LazyFrame, truth: Input, problems: dict[str, int], has_propensity: bool
) -> None:
    for key, (condition, column, need) in _rules(has_propensity).items():
        count = problems[key]
        if not count:
            continue
        rows = log.filter(condition).sort("row").head(_EXAMPLES).collect()
        examples = list(rows.iter_rows(named=True))
        shown = "; ".join(
            f"row {r['row'] + 1} (user {r['user']!r}, item {r['item']!r}): {r[column]!r}"
            for r in examples
        )
        found = [
            {"row": r["row"] + 1, "user": r["user"], "item": r["item"], "value": _field(r[column])}
            for r in examples
        ]
        named = truth.source_column(column)
        fix = "Fix those rows."
        raise InputError(
            f"{truth.role} file {truth.path}: ctr needs every {named} "
            f"{need}, and {count} row(s) are not, e.g. {shown}. {fix}",
            path=truth.path,
            column=named,
            found=found,
            fix=fix,
        )


def _field(value: Any) -> Any:
    """A value as an error's field: NaN and infinities (which JSON cannot hold) as text."""
    return str(value) if isinstance(value, float) and not math.isfinite(value) else value


def checked_log(
    predictions: Input, truth: Input, conventions: Conventions
) -> tuple[pl.LazyFrame, bool, pl.DataFrame]:
    """The click log deduped and checked (the predictions have scores, clicks are 0 or 1,
    propensities in (0, 1]), whether it has propensities, and its size (rows, items)."""
    if predictions.value_column != "score":
        key = setting("predictions", "columns", "score")
        fix = f"Name the score column as {key}."
        raise InputError(
            f"predictions file {predictions.path}: ctr needs the recommendations' scores (the "
            f"predicted reward); this file's layout is {predictions.layout}. {fix}",
            key=key,
            path=predictions.path,
            found=predictions.layout,
            fix=fix,
        )
    has_propensity = "propensity" in truth.frame.collect_schema().names()
    log = _dedupe_log(truth.frame, conventions.truth_duplicates, has_propensity)
    try:
        problems, sizes = pl.collect_all(
            [
                _problems(log, has_propensity),
                log.select(pl.len().alias("rows"), pl.col("item").n_unique().alias("items")),
            ]
        )
    except pl.exceptions.PolarsError as error:
        raise InputError(
            f"{truth.role} file {truth.path} could not be read: {error}",
            path=truth.path,
            found=str(error),
        ) from None
    _raise_bad_rows(log, truth, problems.row(0, named=True), has_propensity)
    return log, has_propensity, sizes


def logged_metrics(
    predictions: Input, truth: Input, specs: tuple[MetricSpec, ...], conventions: Conventions
) -> tuple[dict[str, float | None], dict[str, Any], pl.DataFrame]:
    """The ctr estimates (None: matching with no match), what the report says about the
    match, and the matched recommendations counted by their inverse propensity (to 3
    significant digits, unclipped: the HTML report's weight distribution)."""
    log, has_propensity, sizes = checked_log(predictions, truth, conventions)
    scored = with_score_precision(predictions.frame, "score", conventions.score_precision)
    deduped = dedupe_predictions(scored, "score", conventions.duplicates)
    cutoffs = any(spec.k is not None for spec in specs)
    recommendations, positioned = first_of_lists(deduped, conventions, cutoffs)
    position = ["position"] if positioned else []
    propensity = pl.col("propensity") if has_propensity else None
    n_items = sizes.item(0, "items")
    if propensity is None:
        propensity = pl.lit(1.0 / n_items)
    joined = recommendations.select(*_KEY, "score", *position).join(
        log.select(*_KEY, pl.col("rel").alias("click"), propensity.alias("propensity")),
        on=_KEY,
        how="left",
    )
    matched = pl.col("click").is_not_null()
    exprs, ess, variances = [], [], []
    for spec in specs:
        params = conventions.metric_params(spec)
        exprs.append(lookup(spec.name).expr(Stats(), spec.k, params).alias(str(spec)))
        ess.append(effective_sample_size(params, matched & in_top(spec.k)).alias(str(spec)))
        variances.append(variance(spec.k, params).alias(str(spec)))
    inverse = (1.0 / pl.col("propensity")).round_sig_figs(3).alias("weight")
    values, counts, sample_sizes, weights, spreads = pl.collect_all(
        [
            joined.sort(_KEY).select(exprs),
            joined.select(pl.len().alias("recommendations"), matched.sum().alias("matched")),
            joined.sort(_KEY).select(ess),
            joined.filter(matched)
            .group_by(inverse)
            .agg(recommendations=pl.len().cast(pl.Int64))
            .sort("weight"),
            joined.sort(_KEY).select(variances),
        ]
    )
    described = {
        **counts.row(0, named=True),
        "logged_rows": sizes.item(0, "rows"),
        "propensity": truth.source_column("propensity")
        if has_propensity
        else f"1 / {n_items} logged items",
        "effective_sample_size": {
            name: (None if value is None else float(value))
            for name, value in sample_sizes.row(0, named=True).items()
        },
        # each estimate's variance: its round terms' over their number (metrics/ctr.py)
        "variance": {
            name: (None if value is None else float(value))
            for name, value in spreads.row(0, named=True).items()
        },
    }
    found = values.row(0, named=True).items()
    return {n: None if v is None else float(v) for n, v in found}, described, weights
