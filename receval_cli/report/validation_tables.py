"""`receval validate`'s output: the health summary (analysis/validate.py computes it) as
rich tables: the files, their numbers (rows, users, items, nulls, duplicates, id types,
list lengths, grades), the segments, the users in both files, Spark's health, and the
warnings; and as JSON.
"""

from __future__ import annotations

import json
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from receval_cli.console import plain_text, shown


def _counted(found: dict[str, Any]) -> str:
    """A count, with example ids when there are some."""
    if not found["count"]:
        return "0"
    more = ", ..." if found["count"] > len(found["examples"]) else ""
    return f"{found['count']} (e.g. {', '.join(map(repr, found['examples']))}{more})"


def _grades(relevance: dict[str, Any] | str) -> str:
    if isinstance(relevance, str):
        return relevance
    shown = ", ".join(f"{grade}: {n}" for grade, n in relevance["counts"].items())
    hidden = relevance["distinct"] - len(relevance["counts"])
    return shown + (f", ... ({hidden} more grades)" if hidden else "")


def _render_spark_health(health: dict[str, Any]) -> RenderableType:
    """The Spark job's summary: each input (where, how mapped, rows and users where
    counted), the users of both files, the unknown items, the warnings."""
    (model,) = health["models"].values()
    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")
    for role, block in model["inputs"].items():
        columns = ", ".join(f"{key}={name}" for key, name in block["columns"].items())
        counted = [f"{block[k]:,} {k}" for k in ("rows", "users") if block.get(k) is not None]
        where = f"{block['path']}\n{block['format']}, {block['layout']}: {columns}"
        table.add_row(
            role.replace("_", " "), where + (f"\n{', '.join(counted)}" if counted else "")
        )
    users = model["users"]
    overlap = (
        f"users: {users.get('in_both', 0):,} in both files, {users.get('evaluated', 0):,} evaluated"
    )
    parts: list[RenderableType] = [
        shown(f"receval validate {health['config']} (engine: spark)"),
        table,
        Text(""),
        Text(overlap),
    ]
    found = model.get("unknown_items")
    if found is not None:
        parts.append(
            Text(
                f"recommended items unknown to the {found['reference']}: {found['unknown']:,} "
                f"of {found['recommended']:,}"
            )
        )
    parts.append(Text(""))
    for warning in health["warnings"]:
        parts.append(Text("warning: ", style="bold yellow") + shown(warning))
    parts.append(Text("ok: receval run can evaluate this config", style="bold green"))
    return Group(*parts)


def _inputs(health: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every input's block by its label: predictions (one per model), ground truth, optional."""
    several = len(health["models"]) > 1
    found = {
        f"predictions: {name}" if several else "predictions": model["predictions"]
        for name, model in health["models"].items()
    }
    return {**found, "ground truth": health["ground_truth"], **health["optional"]}


def _files(inputs: dict[str, dict[str, Any]]) -> Table:
    """Each input's path, format, layout and mapped columns."""
    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")  # a path is never cut short
    for label, block in inputs.items():
        columns = ", ".join(f"{key}={name}" for key, name in block["columns"].items())
        table.add_row(label, f"{block['path']}\n{block['format']}, {block['layout']}: {columns}")
    return table


def _numbers_table(inputs: dict[str, dict[str, Any]]) -> Table:
    """Rows, users, items, id types, nulls and duplicates of every input, side by side."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("")
    for label in inputs:
        table.add_column(label, justify="right")

    def cell(block: dict[str, Any], key: str) -> str:
        if key == "nulls":
            found = [f"{c} {n}" for c, n in block["nulls"].items() if n]
            return ", ".join(found) or "none"
        if key in ("user", "item"):
            return str(block["id_types"].get(key, ""))
        if key == "list_length":
            if key not in block:
                return ""
            x = block[key]
            return f"{x['min']} / {x['median']:g} / {x['max']}"
        return str(block.get(key, ""))

    rows = {
        "rows": "rows",
        "users": "users",
        "items": "items",
        "user": "user id type",
        "item": "item id type",
        "nulls": "nulls",
        "duplicate_rows": "repeated (user, item) rows",
        "list_length": "list length min / median / max",
    }
    for key, label in rows.items():
        table.add_row(label, *(cell(block, key) for block in inputs.values()))
    return table


def _overlap_table(health: dict[str, Any]) -> Table:
    """Per model: the users in both files or in one, the ids' types, the items."""
    models = health["models"]
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("predictions vs ground truth")
    for name in models:
        table.add_column(name if len(models) > 1 else "")
    first = next(iter(models.values()))
    threshold = first["users"]["no_relevant"]["relevance_threshold"]
    depth = first["items"]["depth"]
    rows: dict[str, list[str]] = {}
    for model in models.values():
        users, items = model["users"], model["items"]
        found = {
            "users in both": str(users["in_both"]),
            "only in predictions": _counted(users["only_in_predictions"]),
            "only in ground truth": _counted(users["only_in_ground_truth"]),
            f"no item with relevance >= {threshold:g}": _counted(users["no_relevant"]),
            "users evaluated": str(users["evaluated"]),
            "user ids compared as": _compared(model["ids"]["user"]),
            "item ids compared as": _compared(model["ids"]["item"]),
            f"items recommended ({'whole lists' if depth is None else f'top {depth}'})": str(
                items["recommended"]
            ),
            "  in no user's ground truth": _counted(items["not_in_ground_truth"]),
        }
        if "outside_universe" in items:
            outside = items["outside_universe"]
            found[f"  not in the {outside['universe']}"] = _counted(outside)
        for label, value in found.items():
            rows.setdefault(label, []).append(value)
    for label, values in rows.items():
        table.add_row(label, *values)
    return table


def _compared(ids: dict[str, Any]) -> str:
    types = sorted(set(ids["types"].values()))
    return f"{ids['compared_as']} ({' and '.join(types)})"


def _segments_line(health: dict[str, Any]) -> list[RenderableType]:
    """segment_by's segments, as the run reports them (none without segment_by)."""
    found = health.get("segments")
    if found is None:
        return []
    where = f"segment_by {', '.join(found['by'])}, from the {found['from']}"
    return [shown(f"segments ({where}): {', '.join(found['segments'])}")]


def render_health(health: dict[str, Any]) -> RenderableType:
    """The summary: the files, their numbers side by side, the overlap, the warnings."""
    if "engine" in health:
        return _render_spark_health(health)
    inputs = _inputs(health)
    parts: list[RenderableType] = [
        shown(f"receval validate {health['config']}"),
        _files(inputs),
        Text(""),
        _numbers_table(inputs),
        Text(f"relevance (ground truth): {_grades(health['ground_truth']['relevance'])}"),
        *_segments_line(health),
        Text(""),
        _overlap_table(health),
        Text(""),
    ]
    for warning in health["warnings"]:
        parts.append(Text("warning: ", style="bold yellow") + shown(warning))
    count = len(health["warnings"])
    verdict = "ok: receval run can evaluate this config"
    if count:
        verdict += f" ({count} warning{'s' if count > 1 else ''})"
    parts.append(Text(verdict, style="bold green"))
    return Group(*parts)


def health_text(health: dict[str, Any], width: int) -> str:
    """The summary as plain text, `width` columns wide (the terminal shows it in colour)."""
    return plain_text(render_health(health), width)


def health_json(health: dict[str, Any]) -> str:
    return json.dumps(health, indent=2, allow_nan=False) + "\n"
