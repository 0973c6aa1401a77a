"""`receval inspect`: look at a few users' history, top-k list, misses and metrics (the
Inspection, results/inspection.py; report/inspection_panels.py renders it).

The users are a seeded sample of the evaluated users (their ids sorted, then drawn with
`random.Random(seed)`, so the sample does not depend on the row order of the files), or
one user named with --user. The lists are ranked by the evaluation's own functions
(evaluation/prepare.py) under the config's conventions, and the metrics are the per-user values of a
run of the chosen model over the whole files (only the per-user metrics), exactly what
`receval run --per-user` writes.
"""

from __future__ import annotations

import random
from typing import Any

import polars as pl

from receval_cli.choices import INSPECTED_USERS
from receval_cli.config.conventions import Conventions
from receval_cli.config.loading import LoadedConfig
from receval_cli.engines.run_plan import plan_reading
from receval_cli.errors import InputError, InternalError, UsageError, did_you_mean
from receval_cli.evaluation.assembly import evaluate_aligned
from receval_cli.evaluation.intent_lists import split_intents
from receval_cli.evaluation.metric_groups import merged_report
from receval_cli.evaluation.metric_users import EVALUATED
from receval_cli.evaluation.prepare import (
    dedupe_predictions,
    index_truth,
    rank_lists,
    ranked_items,
    with_score_precision,
)
from receval_cli.inputs.optional import Sources
from receval_cli.inputs.readers import Input
from receval_cli.metrics import lookup
from receval_cli.results.inspection import Inspection

_KEY = ["user", "item"]


def inspect_config(
    loaded: LoadedConfig,
    model: str | None = None,
    users: int | None = None,
    user: str | None = None,
    k: int = 10,
    seed: int = 0,
    history: int = 10,
) -> Inspection:
    """The chosen users of one model of the config, with everything the panels show."""
    _check_options(users, user, k, history)
    name = choose_model(loaded, model)
    found = plan_reading(loaded).inputs(name)
    predictions, truth, sources = found.predictions, found.truth, found.sources
    conventions = loaded.config.conventions
    specs = tuple(s for s in loaded.specs if lookup(s.name).scope == "user")
    engine = found.engine
    # the whole files: the users' statuses, the input checks, and every user's values (one
    # pass per group of metrics with their own conventions: tools' names)
    parts = [
        evaluate_aligned(
            predictions,
            truth,
            tuple(s for s in part.specs if s in specs),
            part.config.conventions,
            sources=sources,
            engine=engine,
            check_unknown=False,
        )
        for part in loaded.passes()
    ]
    report = merged_report(parts, specs)
    if report.per_user_rows is None:  # a single pass keeps them
        raise InternalError("internal error: inspect's pass kept no per-user rows.")
    per_user = report.per_user_rows.collect()
    if user is not None:
        chosen = [find_user(per_user, user, predictions, truth)]
    else:
        chosen = sample_users(per_user, users or INSPECTED_USERS, seed)
    records = _gather(chosen, predictions, truth, sources, conventions, k, history)
    metrics = [str(s) for s in specs]
    for record in records:
        row = per_user.row(by_predicate=pl.col("user") == record["user"], named=True)
        record["status"] = row["status"]
        record["metrics"] = {m: row[m] for m in metrics}
    return Inspection(
        config=loaded.path,
        model=name,
        k=k,
        seed=seed if user is None else None,
        evaluated=int(report.users["evaluated"]),
        relevance_threshold=conventions.relevance_threshold,
        max_depth=conventions.max_depth,
        has_history=sources.interactions is not None and history > 0,
        has_score=predictions.layout == "score",
        users=records,
    )


def _check_options(users: int | None, user: str | None, k: int, history: int) -> None:
    if users is not None and user is not None:
        fix = "Pass only one of them."
        raise UsageError(
            "--users and --user were both given: --users N shows a sample of N users, "
            f"--user ID one user. {fix}",
            key="--users",
            found={"--users": users, "--user": user},
            fix=fix,
        )
    if users is not None and users < 1:
        raise UsageError(f"--users must be at least 1, found {users}.", key="--users", found=users)
    if k < 1:
        raise UsageError(f"--k must be at least 1, found {k}.", key="--k", found=k)
    if history < 0:
        raise UsageError(
            f"--history must be 0 (no history) or more, found {history}.",
            key="--history",
            found=history,
        )


def choose_model(loaded: LoadedConfig, model: str | None) -> str:
    """The model to inspect: the one named, else the comparison's baseline, else the first."""
    config = loaded.config
    names = list(config.model_files())
    if model is None:
        baseline = config.comparison.baseline if config.comparison is not None else None
        return baseline if baseline in names else names[0]
    if model not in names:
        raise UsageError(
            f"--model '{model}' is not a model of {loaded.path}; its models are: "
            f"{', '.join(names)}.{did_you_mean(model, names)}",
            key="--model",
            path=loaded.path,
            found=model,
        )
    return model


def sample_users(per_user: pl.DataFrame, count: int, seed: int) -> list[Any]:
    """`count` evaluated users drawn with a seeded generator from their sorted ids, sorted."""
    evaluated = sorted(per_user.filter(pl.col("status") == EVALUATED).get_column("user"))
    if not evaluated:
        fix = "Name one with --user ID."
        raise InputError(
            "no user is evaluated (every user is skipped by the conventions or missing from "
            f"the ground truth), so there is none to sample. {fix}",
            key="--user",
            found=0,
            fix=fix,
        )
    drawn = random.Random(seed).sample(evaluated, min(count, len(evaluated)))
    return sorted(drawn)


def find_user(per_user: pl.DataFrame, given: str, predictions: Input, truth: Input) -> Any:
    """The id given on the command line, as the files' user type (integer or text)."""
    ids = per_user.get_column("user")
    value: Any = given
    if ids.dtype.is_integer():
        try:
            value = int(given)
        except ValueError:
            value = None
    if value is None or not ids.is_in([value]).any():
        examples = per_user.filter(pl.col("status") == EVALUATED).get_column("user").head(3)
        kind = " (the user ids are integers)" if ids.dtype.is_integer() else ""
        raise UsageError(
            f"--user '{given}' is in neither the ground truth {truth.path} nor the "
            f"predictions {predictions.path}{kind}. User ids look like: "
            f"{', '.join(repr(u) for u in examples)}.",
            key="--user",
            path=predictions.path,
            found=given,
        )
    return value


def _gather(
    chosen: list[Any],
    predictions: Input,
    truth: Input,
    sources: Sources,
    conventions: Conventions,
    k: int,
    history: int,
) -> list[dict[str, Any]]:
    """Each chosen user's history, top-k list and missed relevant items, in one collect."""
    dtype = predictions.frame.collect_schema()["user"]
    chosen_users = pl.col("user").is_in(pl.Series(chosen, dtype=dtype).implode())
    by = predictions.value_column
    scored = with_score_precision(
        predictions.frame.filter(chosen_users), by, conventions.score_precision
    )
    deduped = dedupe_predictions(scored, by, conventions.duplicates)
    lists = rank_lists(deduped, by, conventions.tie_break, conventions.max_depth, [])
    ranked = ranked_items(lists)
    if by == "score":
        ranked = ranked.join(deduped.select(*_KEY, "score"), on=_KEY, how="left")
    items = split_intents(truth, conventions)[0]  # each item once, its highest grade
    judged = index_truth(items.frame.filter(chosen_users), conventions).rename({"rel": "relevance"})
    top = (
        ranked.filter(pl.col("rank") <= k)
        .join(judged, on=_KEY, how="left")
        .with_columns(hit=pl.col("relevant").fill_null(False))
        .drop("relevant")
    )
    missed = (
        judged.filter(pl.col("relevant"))
        .drop("relevant")
        .join(top, on=_KEY, how="anti")
        .join(ranked.select(*_KEY, "rank"), on=_KEY, how="left")
    )
    if sources.interactions is not None:  # recommended items the user already knew
        known = sources.interactions.frame.filter(chosen_users).select(_KEY).unique()
        top = top.join(known.with_columns(seen=pl.lit(True)), on=_KEY, how="left")
        top = top.with_columns(pl.col("seen").fill_null(False))
    features = _item_features(sources.catalog)
    if features is not None:
        top = top.join(features, on="item", how="left")
        missed = missed.join(features, on="item", how="left")
    queries = {
        "top": top.sort("user", "rank").select("user", "rank", pl.exclude("user", "rank")),
        "missed": missed.sort(["user", "relevance", "item"], descending=[False, True, False]),
        "lengths": ranked.group_by("user").agg(pl.len().alias("recommended")),
        "relevant": judged.group_by("user").agg(pl.col("relevant").sum()),
    }
    if sources.interactions is not None and history > 0:
        queries["history"] = _history(sources.interactions, chosen_users, features)
    tables = dict(zip(queries, pl.collect_all(list(queries.values())), strict=True))
    records = []
    for user in chosen:

        def rows(name: str, user: Any = user) -> list[dict[str, Any]]:
            frame = tables[name].filter(pl.col("user") == user).drop("user")
            return [_sorted_tags(r) for r in frame.iter_rows(named=True)]

        record: dict[str, Any] = {"user": user, "status": None}
        record["recommended"] = _count(tables["lengths"], user, "recommended")
        record["relevant"] = _count(tables["relevant"], user, "relevant")
        if "history" in tables:
            events = rows("history")
            record["history_total"] = len(events)
            record["history"] = events[:history]
        record["recommendations"] = rows("top")
        record["missed"] = rows("missed")
        record["metrics"] = {}
        records.append(record)
    return records


def _count(table: pl.DataFrame, user: Any, column: str) -> int:
    found = table.filter(pl.col("user") == user).get_column(column)
    return int(found.item()) if found.len() else 0


def _sorted_tags(row: dict[str, Any]) -> dict[str, Any]:
    """The catalog's tags are a set: sorted, so the output is the same every run."""
    if row.get("tags") is not None:
        row["tags"] = sorted(row["tags"])
    return row


def _item_features(catalog: Input | None) -> pl.LazyFrame | None:
    """(item, title, category, tags) from the catalog: the columns it has."""
    if catalog is None:
        return None
    shown = [c for c in ("title", "category", "tags") if c in catalog.columns]
    return catalog.frame.select("item", *shown)


def _history(log: Input, chosen_users: pl.Expr, features: pl.LazyFrame | None) -> pl.LazyFrame:
    """The chosen users' events, most recent first: by timestamp when the log has one
    (ties: later rows first), else later rows first."""
    events = log.frame.filter(chosen_users)
    order = ["row"]
    if "timestamp" in log.columns:
        stamps = log.raw.select(pl.col(log.columns["timestamp"]).alias("timestamp"))
        stamps = stamps.with_row_index("row")  # after the select: the log may have a `row`
        events = events.join(stamps, on="row", how="left")
        order = ["timestamp", "row"]
    events = events.sort(["user", *order], descending=[False, *(True for _ in order)])
    if features is not None:
        events = events.join(features, on="item", how="left", maintain_order="left")
    return events.drop("row")
