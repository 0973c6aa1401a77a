"""Who each mean counts: a metric's users (its user rules), the users by status, and each
mean's range (a value outside it is an input's overflow or a bug).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import polars as pl

from receval_cli.config.conventions import Conventions
from receval_cli.errors import InputError, InternalError
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.spec import ParamValue

EVALUATED = "evaluated"  # the status of a user in the means


def metric_users(params: Mapping[str, ParamValue]) -> pl.Expr:
    """The users one metric averages over: in the ground truth (or, for a metric that
    reads no relevance with prediction_only_users=evaluate, in either file), and not
    skipped by its users_without_relevant / users_without_recommendations parameters (a
    metric that does not read relevance has no users_without_relevant, one that does no
    prediction_only_users: MetricDef.reads_relevance)."""
    kept = pl.col("in_truth")
    if params.get("prediction_only_users") == "evaluate":
        kept = kept | (pl.col("list_length") > 0)
    if params.get("users_without_relevant") == "skip":
        kept = kept & (pl.col("n_relevant") > 0)
    if params["users_without_recommendations"] == "skip":
        kept = kept & (pl.col("list_length") > 0)
    return kept


def counted_expr(spec: MetricSpec, conventions: Conventions) -> pl.Expr:
    """True for the users in this metric's mean (kept by its user rules, and defined)."""
    name = str(spec)
    kept = metric_users(conventions.metric_params(spec)) & pl.col(name).is_not_null()
    return kept.alias(name)


# the users by status, as aggregations over a per-user table (or one segment's part of it)
USER_TALLY = {
    "in_ground_truth": pl.col("in_truth").sum(),
    "in_predictions": (pl.col("list_length") > 0).sum(),
    "in_both": (pl.col("in_truth") & (pl.col("list_length") > 0)).sum(),
    "evaluated": (pl.col("status") == EVALUATED).sum(),
    "zero_recs": ((pl.col("status") == EVALUATED) & (pl.col("list_length") == 0)).sum(),
    "zero_relevant": ((pl.col("status") == EVALUATED) & (pl.col("n_relevant") == 0)).sum(),
    "skipped_no_relevant": (pl.col("status") == "no_relevant").sum(),
    "skipped_no_recs": (pl.col("status") == "no_recommendations").sum(),
    "only_in_predictions": (pl.col("status") == "only_in_predictions").sum(),
}
# under tie_break expected: the positions within the cutoffs whose item shares its score
# (or rank) with another item of its list, the ties among them, the users with one
TIE_TALLY = {
    "tied_positions": pl.col("tied_positions").sum(),
    "tied_groups": pl.col("tied_groups").sum(),
    "users_with_ties": (pl.col("tied_positions") > 0).sum(),
}


def user_tally(columns: list[str]) -> dict[str, pl.Expr]:
    """What a per-user table with these columns tallies: USER_TALLY, and TIE_TALLY where
    the lists kept their ties (tie_break expected)."""
    return {**USER_TALLY, **(TIE_TALLY if "tied_positions" in columns else {})}


def guard_ranges(
    metrics: dict[str, float | None], specs: tuple[MetricSpec, ...], conventions: Conventions
) -> None:
    """Every value within its metric's range; an overflow the inputs caused is an input
    error (exit 2), anything else impossible a bug (exit 3). No value (None) is in range."""
    for spec in specs:
        value = metrics[str(spec)]
        if value is None:
            continue
        definition = lookup(spec.name)
        lower, upper = definition.lower_bound, definition.upper_bound
        gain = conventions.metric_params(spec).get("gain")
        if not math.isfinite(value) and gain == "exponential":
            fix = "Keep the grades at most 1023, or use gain=linear."
            raise InputError(
                f"{spec} is {value}: with gain=exponential a grade g gains 2^g - 1, which "
                f"overflows 64-bit floats for a grade above 1023. {fix}",
                key=str(spec),
                found=str(value),
                fix=fix,
            )
        if math.isinf(value) and (upper is None or lower is None):
            fix = "Scale the scores or grades down, then run again."
            raise InputError(
                f"{spec} is {value}: its sums overflow 64-bit floats, so the inputs hold "
                f"values too large to square or add (about 1e154 or more, or a huge gain). {fix}",
                key=str(spec),
                found=str(value),
                fix=fix,
            )
        below = lower is not None and value < lower
        if math.isnan(value) or below or (upper is not None and value > upper + 1e-9):
            raise InternalError(
                f"internal error: {spec} = {value}, outside its range [{lower}, {upper}]. This "
                "is a bug in receval; please report it with the config and a data sample.",
                key=str(spec),
                found=str(value),
            )
