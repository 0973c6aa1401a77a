"""Off-policy metrics over logged data: the recommendations matched against a click log.

The ground truth is the log (user, item, click[, propensity]); every recommendation (each
user's first max_depth, when that convention is set) is left-joined to it, with its
position in the user's list for ctr@k (see metrics/ctr.py for the estimators). The log is
validated first: clicks must be 0 or 1 and propensities in (0, 1]. The estimates are
computed from exact sums over buckets of users (evaluation/click_parts.py).
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
from receval_cli.inputs.propensities import LEAST
from receval_cli.inputs.readers import Input
from receval_cli.metrics import MetricSpec
from receval_cli.wording import setting

_KEY = ["user", "item"]
EXAMPLES = 3  # rows a failed check names


def dedupe_log(log: pl.LazyFrame, policy: str, has_propensity: bool) -> pl.LazyFrame:
    """Apply truth_duplicates to the log (`error` is checked with the ground truth)."""
    if policy == "first":
        return keep_first(log)
    if policy == "max":
        kept = [pl.col("rel").max(), pl.col("row").min()]
        if has_propensity:
            # among the rows of the highest click, the highest propensity: the same row
            # whatever the rows' order (Spark has none)
            best = pl.col("propensity").sort_by(["rel", "propensity"], descending=True)
            kept.append(best.first())
        return log.group_by(_KEY).agg(kept)
    return log


def _rules(has_propensity: bool) -> dict[str, tuple[pl.Expr, str, str]]:
    """Each check of the log: the rows failing it, the column, and what it needs."""
    rules = {"bad_clicks": (~pl.col("rel").is_in([0.0, 1.0]), "rel", "0 or 1")}
    if has_propensity:
        p = pl.col("propensity")
        # at least LEAST (about 5.56e-309): below it the weight 1/p is infinite
        need = f"in (0, 1] and at least {LEAST!r} (1/p finite)"
        rules["bad_propensities"] = (p.is_nan() | (p < LEAST) | (p > 1), "propensity", need)
    return rules


def log_problems(log: pl.LazyFrame, has_propensity: bool) -> pl.LazyFrame:
    rules = _rules(has_propensity)
    return log.select(failing.sum().alias(key) for key, (failing, _, _) in rules.items())


def failing_rows(log: pl.LazyFrame, key: str, has_propensity: bool) -> list[dict[str, Any]]:
    """The first rows (by row number) that fail the check `key`: row, user, item, value."""
    condition, column, _ = _rules(has_propensity)[key]
    rows = log.filter(condition).sort("row").head(EXAMPLES)
    found = rows.select("row", "user", "item", pl.col(column).alias("value")).collect()
    return list(found.iter_rows(named=True))


def bad_rows_error(
    truth: Input, key: str, count: int, examples: list[dict[str, Any]], numbered: bool = True
) -> InputError:
    """The error of a failed check of the log: `count` rows fail it, e.g. `examples`
    (named by their row number when `numbered`, else by user and item)."""
    _, column, need = _rules(True)[key]
    shown = "; ".join(
        (f"row {r['row'] + 1} " if numbered else "")
        + f"(user {r['user']!r}, item {r['item']!r}): {r['value']!r}"
        for r in examples
    )
    found = [
        {
            **({"row": r["row"] + 1} if numbered else {}),
            "user": r["user"],
            "item": r["item"],
            "value": _field(r["value"]),
        }
        for r in examples
    ]
    named = truth.source_column(column)
    fix = "Fix those rows."
    return InputError(
        f"{truth.role} file {truth.path}: ctr needs every {named} "
        f"{need}, and {count} row(s) are not, e.g. {shown}. {fix}",
        path=truth.path,
        column=named,
        found=found,
        fix=fix,
    )


def _raise_bad_rows(
    log: pl.LazyFrame, truth: Input, problems: dict[str, int], has_propensity: bool
) -> None:
    for key in _rules(has_propensity):
        if problems[key]:
            examples = failing_rows(log, key, has_propensity)
            raise bad_rows_error(truth, key, problems[key], examples)


def _field(value: Any) -> Any:
    """A value as an error's field: NaN and infinities (which JSON cannot hold) as text."""
    return str(value) if isinstance(value, float) and not math.isfinite(value) else value


def require_scores(predictions: Input) -> None:
    """The click metrics need the recommendations' scores (the predicted reward)."""
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


def checked_log(
    predictions: Input | None, truth: Input, conventions: Conventions
) -> tuple[pl.LazyFrame, bool, pl.DataFrame]:
    """The click log deduped and checked (the predictions have scores, clicks are 0 or 1,
    propensities in (0, 1]), whether it has propensities, and its size (rows, items)."""
    if predictions is not None:
        require_scores(predictions)
    has_propensity = "propensity" in truth.frame.collect_schema().names()
    log = dedupe_log(truth.frame, conventions.truth_duplicates, has_propensity)
    try:
        problems, sizes = pl.collect_all(
            [
                log_problems(log, has_propensity),
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


def joined_recommendations(
    predictions: Input,
    log: pl.LazyFrame,
    specs: tuple[MetricSpec, ...],
    conventions: Conventions,
    has_propensity: bool,
    n_items: int,
) -> pl.LazyFrame:
    """Each counted recommendation (user, item, score[, position]) left-joined to the
    deduped log: its click (null: not logged) and propensity (1 / n_items without a
    propensity column)."""
    scored = with_score_precision(predictions.frame, "score", conventions.score_precision)
    deduped = dedupe_predictions(scored, "score", conventions.duplicates)
    cutoffs = any(spec.k is not None for spec in specs)
    recommendations, positioned = first_of_lists(deduped, conventions, cutoffs)
    position = ["position"] if positioned else []
    propensity = pl.col("propensity") if has_propensity else pl.lit(1.0 / n_items)
    return recommendations.select(*_KEY, "score", *position).join(
        log.select(*_KEY, pl.col("rel").alias("click"), propensity.alias("propensity")),
        on=_KEY,
        how="left",
    )
