"""`receval inspect`: look at a few users' history, top-k list, misses and metrics.
Over 400 lines: still computes and renders (issue #36 item 2: the sample and its lists
vs the rich panels), to be split.

The users are a seeded sample of the evaluated users (their ids sorted, then drawn with
`random.Random(seed)`, so the sample does not depend on the row order of the files), or
one user named with --user. The lists are ranked by the evaluation's own functions
(evaluation/prepare.py) under the config's conventions, and the metrics are the per-user values of a
run of the chosen model over the whole files (only the per-user metrics), exactly what
`receval run --per-user` writes.

The panels are as wide as the terminal, at most 120 columns, and stay readable at 80: a
score shows to 4 significant digits (SCORE_DIGITS), trailing zeros kept so the column
lines up (0.123456789 -> 0.1235, 2.9099 -> 2.910, 1.5e-06 -> 1.500e-06, 123456.7 ->
123457, an integer score whole), or, where two different scores of a table would then
look equal, every score of that table to as many more digits as tells them apart;
`--format json` keeps every digit. The rank, item, score, rel (the grade), hit, seen and
timestamp columns are never cut nor wrapped (only an item id wider than the whole panel
folds); the titles and features wrap in their columns, or, when the other columns leave
them too little room (long item ids), go on a line of their own under each item. No
value is ever cut with an ellipsis.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from rich.cells import cell_len
from rich.console import Group, JustifyMethod, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from receval_cli.choices import INSPECTED_USERS
from receval_cli.config.conventions import Conventions
from receval_cli.config.loading import LoadedConfig
from receval_cli.console import shown
from receval_cli.engines.run_plan import plan_reading
from receval_cli.errors import InputError, InternalError, UsageError, did_you_mean
from receval_cli.escaping import printable
from receval_cli.evaluation.assembly import evaluate_aligned
from receval_cli.evaluation.plan import EVALUATED
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
from receval_cli.report.table import format_value

MISSED_SHOWN = 10  # the panel lists this many missed items; the JSON lists them all
_KEY = ["user", "item"]
_STATUS = {
    EVALUATED: "evaluated",
    "only_in_predictions": "not evaluated: only in the predictions",
    "no_relevant": "not evaluated: no relevant item (skipped by users_without_relevant)",
    "no_recommendations": "not evaluated: no recommendation (skipped by "
    "users_without_recommendations)",
}


@dataclass
class Inspection:
    """Everything `inspect` shows: the run's context and one record per user."""

    config: Path
    model: str
    k: int
    seed: int | None
    evaluated: int  # users evaluated in the whole run
    relevance_threshold: float
    max_depth: int | None  # the lists are cut there (conventions.max_depth)
    has_history: bool
    has_score: bool
    users: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "config": str(self.config),
            "model": self.model,
            "k": self.k,
            "seed": self.seed,
            "users": self.users,
        }


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
    # the whole files: the users' statuses, the input checks, and every user's values
    report = evaluate_aligned(
        predictions, truth, specs, conventions, sources=sources, engine=engine, check_unknown=False
    )
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
    judged = index_truth(truth.frame.filter(chosen_users), conventions).rename({"rel": "relevance"})
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


# --- rendering -------------------------------------------------------------------------

SCORE_DIGITS = 4  # significant digits of a score in the panels; the JSON has every digit
PANEL_EDGES = 4  # a panel's borders and padding: its content is this much narrower
FLEX_MIN = 12  # the narrowest a title or features column gets beside the other columns
TITLE_MAX = 30  # a longer title wraps in its column
_PAD = 2  # each table column's padding, one space either side


def render_json(inspection: Inspection) -> str:
    return json.dumps(inspection.to_dict(), indent=2, allow_nan=False, default=str) + "\n"


def panels(inspection: Inspection, width: int) -> RenderableType:
    """One panel per user under a line saying which users and model these are."""
    if inspection.seed is None:
        chosen = "1 user"
    else:
        chosen = (
            f"{len(inspection.users)} of {inspection.evaluated} evaluated users "
            f"(seed {inspection.seed})"
        )
    heading = shown(
        f"receval inspect {inspection.config}: model '{inspection.model}', {chosen}, top "
        f"{inspection.k}; hit: relevance >= {inspection.relevance_threshold:g}"
    )
    parts: list[RenderableType] = [heading]
    parts += [_panel(inspection, record, width) for record in inspection.users]
    return Group(*parts)


def _panel(inspection: Inspection, record: dict[str, Any], width: int) -> Panel:
    k = inspection.k
    inner = width - PANEL_EDGES
    summary = (
        f"{_STATUS.get(record['status'], record['status'])}; {record['recommended']} "
        f"recommended, {record['relevant']} relevant in the ground truth"
    )
    parts: list[RenderableType] = [Text(summary)]
    label = f"user {_text(record['user'])}"
    if cell_len(label) > inner - 2:  # too long for the border, where it would be cut
        parts.insert(0, Text(_text(record["user"]), overflow="fold"))
        label = "user"
    if inspection.has_history:
        shown = record["history"]
        title = f"history, most recent first: {len(shown)} of {record['history_total']}"
        parts.append(_items_table(title, [], shown, ["item", "timestamp"], inner))
    recs = record["recommendations"]
    if recs:
        title = f"top {k}: {len(recs)} of {record['recommended']} recommended"
        columns = ["rank", "item", *(["score"] if inspection.has_score else []), "rel", "hit"]
        notes = []
        if "seen" in recs[0]:
            columns.append("seen")
            notes.append("seen: in the user's interactions")
        parts.append(_items_table(title, notes, recs, columns, inner))
    else:
        parts.append(Text("no recommendation"))
    missed = record["missed"]
    if missed:
        title = f"relevant, not in the top {k}: {len(missed)}"
        if len(missed) > MISSED_SHOWN:
            title += f" ({MISSED_SHOWN} shown)"
        if inspection.max_depth is None:
            notes = ["rank: in the whole list", "-: not recommended"]
        else:
            notes = ["rank: in the list", f"-: not in its first {inspection.max_depth}, max_depth"]
        shown = missed[:MISSED_SHOWN]
        parts.append(_items_table(title, notes, shown, ["item", "rel", "rank"], inner))
    elif record["relevant"]:
        parts.append(Text(f"every relevant item is in the top {k}"))
    if record["metrics"]:
        parts.append(_metrics_grid(record["metrics"], inner))
    return Panel(Group(*parts), title=Text(label), title_align="left", width=width)


def _items_table(
    title: str, notes: list[str], rows: list[dict[str, Any]], columns: list[str], width: int
) -> Group:
    """A heading (the title, then the notes in parentheses), then rows of items: the given
    columns, then the title and features when the catalog has them, in `width` characters.

    The given columns (rank, item, score, rel, hit, seen, timestamp) are never cut nor
    wrapped: each is as wide as its longest value (only an item id wider than all the
    room left folds). The title and features wrap in columns of their own when those get
    FLEX_MIN characters each (or all they need); else they go under each item's row, on
    the whole width."""
    scores = _score_texts([r.get("score") for r in rows])
    cells = [
        [score if column == "score" else _cell(column, row) for column in columns]
        for row, score in zip(rows, scores, strict=True)
    ]
    flex = [
        name
        for name, shown in (
            ("title", any(r.get("title") is not None for r in rows)),
            ("features", any(r.get("category") is not None or r.get("tags") for r in rows)),
        )
        if shown
    ]
    extras = [
        [_text(row.get("title")) if name == "title" else _features(row) for name in flex]
        for row in rows
    ]
    widths = [_widest(column, [line[i] for line in cells]) for i, column in enumerate(columns)]
    wanted = [_widest(name, [line[i] for line in extras]) for i, name in enumerate(flex)]
    wanted = [min(w, TITLE_MAX) if n == "title" else w for n, w in zip(flex, wanted, strict=True)]
    item = columns.index("item")
    item_room = width - sum(widths) - _PAD * len(columns) + widths[item]
    room = width - sum(widths) - _PAD * (len(columns) + len(flex))  # for title and features
    beside = widths[item] <= item_room and room >= sum(min(w, FLEX_MIN) for w in wanted)
    widths[item] = max(1, min(widths[item], item_room))

    def table(header: bool) -> Table:
        grid = Table(box=None, padding=(0, 1), show_edge=False, show_header=header)
        for column, wide in zip(columns, widths, strict=True):
            justify: JustifyMethod = "right" if column in ("rank", "score", "rel") else "left"
            grid.add_column(column, justify=justify, overflow="fold", width=wide)
        return grid

    if beside:
        whole = table(header=True)
        for name in flex:
            limit = TITLE_MAX if name == "title" else None
            whole.add_column(name, overflow="fold", max_width=limit)
        for row, line, extra in zip(rows, cells, extras, strict=True):
            style = "green" if row.get("hit") else None
            whole.add_row(*(Text(cell) for cell in [*line, *extra]), style=style)
        parts: list[RenderableType] = [whole]
    else:  # one table a row, each with the same widths, the title and features under it
        parts = [table(header=True)]
        indent = min(sum(widths[:item]) + _PAD * item + 3, width // 2)  # under the item id
        for row, line, extra in zip(rows, cells, extras, strict=True):
            style = "green" if row.get("hit") else None
            one = table(header=False)
            one.add_row(*(Text(cell) for cell in line), style=style)
            parts.append(one)
            details = " — ".join(cell for cell in extra if cell)
            if details:
                parts.append(Padding(Text(details, style=style or ""), (0, 0, 0, indent)))
        if flex:
            notes = [*notes, f"under each item: its {' — '.join(flex)}"]
    if notes:
        title += f" ({'; '.join(notes)})"
    return Group(Text(title, style="bold"), *parts)


def _widest(header: str, values: list[str]) -> int:
    return max(cell_len(text) for text in [header, *values])


def _cell(column: str, row: dict[str, Any]) -> str:
    if column in ("hit", "seen"):
        return "✓" if row[column] else ""
    if column == "rel":
        value = row.get("relevance")
        return "" if value is None else f"{value:g}"
    if column == "rank":
        value = row.get("rank")
        return "-" if value is None else str(value)
    return _text(row.get(column))


def _score_texts(values: list[Any]) -> list[str]:
    """The scores of a table rounded to SCORE_DIGITS significant digits, or all to more
    where two different scores would otherwise print the same ("" for no score)."""
    distinct = {value for value in values if value is not None and value == value}  # no NaN
    for digits in range(SCORE_DIGITS, 17):
        if len({_rounded(value, digits) for value in distinct}) == len(distinct):
            return ["" if value is None else _rounded(value, digits) for value in values]
    return ["" if value is None else repr(value) for value in values]  # the shortest exact


def _rounded(value: Any, digits: int) -> str:
    """A float to `digits` significant digits, trailing zeros kept so that a column of
    scores lines up: 0.123456789 -> 0.1235, 2.9099 -> 2.910, 1.5e-06 -> 1.500e-06; from
    10**4 to 10**15 without an exponent (123456.7 -> 123457). An integer score whole."""
    if not isinstance(value, float):
        return str(value)
    text = f"{value:#.{digits}g}".replace(".e", "e").removesuffix(".")
    if "e+" in text and abs(value) < 1e15:
        return f"{value:.0f}"
    return text


def _text(value: Any) -> str:
    """A value from the data as text safe for a terminal (control characters escaped)."""
    return "" if value is None else printable(value)


def _features(row: dict[str, Any]) -> str:
    parts = [_text(row["category"])] if row.get("category") is not None else []
    if row.get("tags"):
        parts.append(", ".join(_text(tag) for tag in row["tags"]))
    return " · ".join(parts)


def _metrics_grid(metrics: dict[str, float | None], width: int) -> Group:
    """metric value pairs, as many per row as `width` holds (at most 3); '-' where the
    user is not in that metric's mean. A name too long for the width folds."""
    cells = [
        (name, "-" if value is None else format_value(value)) for name, value in metrics.items()
    ]
    pair = max(cell_len(name) for name, _ in cells) + max(cell_len(v) for _, v in cells)
    per_row = max(1, min(3, width // (pair + 2 * _PAD)))
    grid = Table(box=None, show_header=False)
    for _ in range(per_row):
        grid.add_column(overflow="fold")
        grid.add_column(justify="right", overflow="fold")
    for start in range(0, len(cells), per_row):
        chunk = cells[start : start + per_row]
        chunk += [("", "")] * (per_row - len(chunk))
        grid.add_row(*(text for pair in chunk for text in pair))
    return Group(Text("metrics (-: the user is not in that metric's mean)", style="bold"), grid)


# --- the command -----------------------------------------------------------------------
