"""`receval inspect`'s output: the rich panels (one per user: the history, the top-k list
with its hits, the relevant items missed, the per-user metrics) and the JSON, from an
Inspection (results/inspection.py; analysis/inspect.py computes it).

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
from typing import Any

from rich.cells import cell_len
from rich.console import Group, JustifyMethod, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from receval_cli.console import plain_text, shown
from receval_cli.escaping import printable
from receval_cli.evaluation.metric_users import EVALUATED
from receval_cli.report.table import format_value
from receval_cli.results.inspection import Inspection

MISSED_SHOWN = 10  # the panel lists this many missed items; the JSON lists them all
_STATUS = {
    EVALUATED: "evaluated",
    "only_in_predictions": "not evaluated: only in the predictions",
    "no_relevant": "not evaluated: no relevant item (skipped by users_without_relevant)",
    "no_recommendations": "not evaluated: no recommendation (skipped by "
    "users_without_recommendations)",
}
SCORE_DIGITS = 4  # significant digits of a score in the panels; the JSON has every digit
PANEL_EDGES = 4  # a panel's borders and padding: its content is this much narrower
FLEX_MIN = 12  # the narrowest a title or features column gets beside the other columns
TITLE_MAX = 30  # a longer title wraps in its column
_PAD = 2  # each table column's padding, one space either side


def render_inspection_json(inspection: Inspection) -> str:
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


def panels_text(inspection: Inspection, width: int) -> str:
    """The panels as plain text, `width` columns wide (at most 120, as on a terminal)."""
    return plain_text(panels(inspection, min(width, 120)), width)
