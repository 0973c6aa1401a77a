"""`receval validate CONFIG`: check a config and its inputs without computing a metric.
Over 400 lines: still computes and renders (issue #36 item 2: the checks and counts vs
the rich tables), to be split.

It reads every input with `run`'s readers, aligns the ids and runs `run`'s checks (the
same queries that ride along with the metrics, here collected alone), so it fails with
`run`'s message wherever `run` would fail on the inputs. The metric expressions are
built (that is where a metric that needs a missing input fails) but never collected.
What passes is summed up: rows, users, items, nulls, duplicates, id types, list lengths,
the relevance grades, the users in both files, and warnings for what `run` accepts but
looks wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from receval_cli import console
from receval_cli.config.conventions import Conventions
from receval_cli.config.loading import LoadedConfig, is_remote
from receval_cli.config.model import UnknownItemsConfig
from receval_cli.console import shown
from receval_cli.engines.run_plan import ModelInputs, RunPlan, plan_run
from receval_cli.evaluation import unknown_items
from receval_cli.evaluation.assembly import FinishContext, bucket_partial, raise_checks
from receval_cli.evaluation.clicks import checked_log
from receval_cli.evaluation.global_metrics import (
    outside_universe,
    require_universe,
    universe_of,
)
from receval_cli.evaluation.item_facts import item_facts
from receval_cli.evaluation.plan import (
    exposure_depth,
    max_depth,
    per_user_frame,
)
from receval_cli.evaluation.rating import check_queries, checked_pairs, pair_join
from receval_cli.inputs.readers import Input
from receval_cli.metrics import lookup

EXAMPLES = 3
TINY_OVERLAP = 0.1  # users in both files, as a share of the ground truth's users
RELEVANCE_VALUES = 20  # grades listed in the relevance distribution (the smallest)


def validate_config(loaded: LoadedConfig, baseline_report: Path | None = None) -> dict[str, Any]:
    """The health summary of a config's inputs; raises what `run` raises on them: the
    run's plan (engines/run_plan.py: the engine's refusals, the gates, the baseline
    report) and each model's inputs as the run reads them, without the metrics."""
    config = loaded.config
    # conventions of a --baseline-report are compared when the run is made (it may allow them)
    plan = plan_run(loaded, None, baseline_report, allow_different_conventions=True)
    if plan.engine.spark and any(is_remote(path) for path in _input_paths(loaded)):
        return _spark_health(plan)
    plan.segments()  # read, and the gates on segments checked, as the run does
    health: dict[str, Any] = {
        "config": str(loaded.path),
        "models": {},
        "ground_truth": {},
        "optional": {},
        "warnings": [],
    }
    for index, name in enumerate(plan.models):
        with console.stage(f"check model {name}"):
            found = plan.inputs(name)
            model, others = _check_model(loaded, found, describe_all=index == 0)
        health["models"][name] = model
        if others:
            health["ground_truth"] = others.pop("ground truth")
            health["optional"] = others
        several = name if len(plan.models) > 1 else None
        health["warnings"] += _warnings(several, model, config.unknown_items)
    return health


def _input_paths(loaded: LoadedConfig) -> list[str]:
    """Every input's path as the config writes it."""
    config = loaded.config
    sections = (
        config.ground_truth,
        config.catalog,
        config.interactions,
        config.baseline,
        config.segments,
    )
    paths = [f.path for f in config.model_files().values()]
    return paths + [s.path for s in sections if s is not None]


def _spark_health(plan: RunPlan) -> dict[str, Any]:
    """engine: spark with a table or URI among the inputs: the Spark job's reading, mapping
    and checks (the polars readers cannot open a table), so its errors are run's. The
    checks ride along with the metrics' pass over the buckets, so the job computes them
    too (and they are left out); the summary is what that pass counts."""
    from receval_cli.engines.spark import evaluate_planned

    loaded = plan.loaded
    report = evaluate_planned(plan, next(iter(plan.models)))
    inputs = {k: v for k, v in report.inputs.items() if k != "engine"}
    model: dict[str, Any] = {"inputs": inputs, "users": report.users}
    warnings = []
    found = report.unknown_items
    if found is not None:
        model["unknown_items"] = found
        warning = unknown_items.warning(found, loaded.config.unknown_items, None)
        warnings += [] if warning is None else [warning]
    return {
        "config": str(loaded.path),
        "engine": report.inputs["engine"],
        "models": {"model": model},
        "warnings": warnings,
    }


def _check_model(
    loaded: LoadedConfig, found: ModelInputs, describe_all: bool
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """One model's checks, in `run`'s order, and its part of the summary; with
    `describe_all`, also the summary of the ground truth and the optional inputs."""
    conventions = loaded.config.conventions
    predictions, truth, sources, engine = found.parts()
    types = found.id_types
    scopes = {
        scope: tuple(s for s in loaded.specs if lookup(s.name).scope == scope)
        for scope in ("user", "pairs", "logged", "global")
    }
    user_specs, global_specs = scopes["user"], scopes["global"]
    universe = universe_of(sources)
    require_universe(global_specs, universe)
    # built for the errors of planning the metrics (an input they need, ...); never collected
    per_user_frame(predictions, truth, user_specs, conventions, sources, global_specs)
    # the same checks, lists and user statuses as run, without a metric column; the lists
    # as deep as run ranks them (whole, for rating and click metrics only)
    listed = (*user_specs, *global_specs) or loaded.specs
    depth = max_depth(listed, conventions.max_depth)
    profiled = [predictions, truth, *sources.given()] if describe_all else [predictions]
    reference = unknown_items.reference_of(truth, sources)
    extra = [truth.frame.select("item").unique(), truth.frame.group_by("rel").len().sort("rel")]
    for source in profiled:
        extra += _profile(source)
    partial = bucket_partial(
        predictions,
        truth,
        (),
        conventions,
        sources,
        engine,
        check_unknown=True,
        count_rows="raw",
        keep="all",
        list_specs=listed,
        extra=tuple(extra),
        reference=reference[1],
    )
    run = FinishContext(predictions, truth, loaded.specs, conventions, sources, reference)
    tables = partial.item_tables()
    checks = item_facts(tables, loaded.specs, conventions, sources, universe, None, False)
    raise_checks(partial, run, checks)
    known, grades, *profiles = partial.extra
    per_user = partial.values
    assert per_user is not None
    tally = partial.tally
    (recommended,) = partial.recommended
    unknown = partial.unknown
    assert unknown is not None
    outside = outside_universe(recommended, universe)
    if scopes["pairs"]:
        joined = pair_join(predictions, truth, scopes["pairs"], conventions)
        counts, unpredicted = pl.collect_all(check_queries(joined), engine=engine)
        examples = [tuple(row) for row in unpredicted.iter_rows()]
        checked_pairs(counts.row(0, named=True), examples, predictions, truth, conventions)
    if scopes["logged"]:
        checked_log(predictions, truth, conventions)
    blocks = {
        source.role: _block(source, types[source.role], profiles[2 * i], profiles[2 * i + 1])
        for i, source in enumerate(profiled)
    }
    if "ground truth" in blocks:
        blocks["ground truth"] = _users_and_repeats(
            blocks["ground truth"], tally["in_ground_truth"], per_user, "truth_items"
        )
        blocks["ground truth"]["relevance"] = _relevance(truth, grades)
    blocks["predictions"] = _users_and_repeats(
        blocks["predictions"], tally["in_predictions"], per_user, "list_rows"
    )
    for role in blocks.keys() - {"predictions", "ground truth"}:
        del blocks[role]["pairs"]  # the rows of a catalog or a log
    model = {
        "predictions": {
            **blocks.pop("predictions"),
            "list_length": _list_lengths(per_user, exposure_depth(loaded.specs)),
        },
        "ids": _alignment(types),
        "users": _users(per_user, tally, conventions),
        "items": _items(recommended, known, depth, universe.source, outside),
        "unknown_items": unknown_items.describe(unknown, reference[0]),
    }
    return model, blocks


def _profile(source: Input) -> list[pl.LazyFrame]:
    """Two queries: the file's rows and the nulls of each column the config maps; the
    mapped (user, item) rows and the distinct items (and users, for an optional input:
    the predictions' and ground truth's users are counted in the per-user table)."""
    mapped = list(dict.fromkeys(source.columns.values()))
    nulls = pl.struct(pl.col(c).null_count() for c in mapped)  # a column may be named rows
    raw = source.raw.select(pl.len().alias("rows"), nulls.alias("nulls"))
    names = source.frame.collect_schema().names()
    counted = ("item",) if source.role in ("predictions", "ground truth") else ("user", "item")
    exprs = [pl.col(c).n_unique().alias(f"{c}s") for c in counted if c in names]
    return [raw, source.frame.select(pl.len().alias("pairs"), *exprs)]


def _block(
    source: Input, types: dict[str, pl.DataType], raw: pl.DataFrame, mapped: pl.DataFrame
) -> dict[str, Any]:
    """One input's part of the summary."""
    found = raw.row(0, named=True)
    nulls = {k: int(v) for k, v in found["nulls"].items()}
    rows = found["rows"]
    return {
        **source.describe(),
        "rows": rows,
        **{k: int(v) for k, v in mapped.row(0, named=True).items()},
        "nulls": nulls,
        "id_types": {column: str(dtype) for column, dtype in types.items()},
    }


def _users_and_repeats(
    block: dict[str, Any], users: int, per_user: pl.DataFrame, length: str
) -> dict[str, Any]:
    """The predictions' or ground truth's block with its users and the mapped rows that
    repeat a (user, item): the rows less the distinct pairs, which the per-user table
    counts (list_distinct / truth_distinct under an `error` policy; else `length`, the
    rows dedupe left)."""
    distinct = {"list_rows": "list_distinct", "truth_items": "truth_distinct"}[length]
    column = distinct if distinct in per_user.columns else length
    repeated = block["pairs"] - int(per_user.get_column(column).sum())
    described = {k: block[k] for k in ("path", "format", "layout", "columns", "rows")}
    numbers = {"users": users, "items": block["items"], "duplicate_rows": repeated}
    return {**described, **numbers, "nulls": block["nulls"], "id_types": block["id_types"]}


def _relevance(truth: Input, grades: pl.DataFrame) -> dict[str, Any] | str:
    """How many ground-truth items have each grade (the smallest grades), or "binary"."""
    if not ({"relevance", "relevances"} & set(truth.columns)):
        return "binary"
    shown = grades.head(RELEVANCE_VALUES).iter_rows()
    return {"distinct": grades.height, "counts": {f"{v:g}": int(n) for v, n in shown}}


def _list_lengths(per_user: pl.DataFrame, cutoff: int | None) -> dict[str, Any]:
    """Rows per user with recommendations (min, median, max), and how many users in both
    files have fewer than the largest cutoff."""
    lengths = per_user.get_column("list_rows").drop_nulls()
    short = per_user.filter(pl.col("in_truth") & (pl.col("list_rows") < (cutoff or 0)))
    return {
        "min": int(lengths.min()),  # type: ignore[arg-type]
        "median": float(lengths.median()),  # type: ignore[arg-type]
        "max": int(lengths.max()),  # type: ignore[arg-type]
        "largest_cutoff": cutoff,
        "shorter_than_cutoff": short.height,
    }


def _alignment(types: dict[str, dict[str, pl.DataType]]) -> dict[str, Any]:
    """Per id column: its type in each file, and what align_ids compares them as."""
    block = {}
    for column in ("user", "item"):
        found = {role: t[column] for role, t in types.items() if column in t}
        integers = [d.is_integer() for d in found.values()]
        block[column] = {
            "types": {role: str(d) for role, d in found.items()},
            "compared_as": "integer" if all(integers) else "text",
            "mixed": any(integers) and not all(integers),
        }
    return block


def _examples(per_user: pl.DataFrame, mask: pl.Expr) -> dict[str, Any]:
    users = per_user.filter(mask).get_column("user").sort()
    return {"count": users.len(), "examples": users.head(EXAMPLES).to_list()}


def _users(
    per_user: pl.DataFrame, tally: dict[str, int], conventions: Conventions
) -> dict[str, Any]:
    recommended = pl.col("list_length") > 0
    in_truth = pl.col("in_truth")
    return {
        "in_ground_truth": tally["in_ground_truth"],
        "in_predictions": tally["in_predictions"],
        "in_both": tally["in_both"],
        "only_in_predictions": _examples(per_user, recommended & ~in_truth),
        "only_in_ground_truth": _examples(per_user, in_truth & ~recommended),
        "no_relevant": {
            **_examples(per_user, in_truth & (pl.col("n_relevant") == 0)),
            "relevance_threshold": conventions.relevance_threshold,
            "rule": conventions.users_without_relevant,
        },
        "evaluated": tally["evaluated"],
    }


def _items(
    recommended: pl.DataFrame,
    known: pl.DataFrame,
    depth: int | None,
    universe: str,
    outside: pl.DataFrame | None,
) -> dict[str, Any]:
    """The distinct items in the lists (to the depth `run` ranks them); those in no user's
    ground truth, and those outside the catalog (or the interactions log)."""
    absent = recommended.join(known, on="item", how="anti").get_column("item").sort()
    block: dict[str, Any] = {
        "depth": depth,
        "recommended": recommended.height,
        "not_in_ground_truth": {"count": absent.len(), "examples": absent.head(EXAMPLES).to_list()},
    }
    if outside is not None:
        items = outside.get_column("item").sort()
        block["outside_universe"] = {
            "universe": universe,
            "count": items.len(),
            "examples": items.head(EXAMPLES).to_list(),
        }
    return block


def _warnings(model: str | None, health: dict[str, Any], settings: UnknownItemsConfig) -> list[str]:
    """What `run` accepts but looks wrong."""
    where = f"model {model}: " if model else ""
    found = []
    for column, ids in health["ids"].items():
        if ids["mixed"]:
            types = ", ".join(f"{role} {dtype}" for role, dtype in ids["types"].items())
            found.append(
                f"{where}the {column} ids are integers in one file and text in another "
                f'({types}); run compares them as text, so 7 matches "7" but not "07". '
                "Check that every file writes the ids the same way."
            )
    users = health["users"]
    if users["in_both"] < TINY_OVERLAP * users["in_ground_truth"]:
        found.append(
            f"{where}only {users['in_both']} of the {users['in_ground_truth']} users in the "
            "ground truth have recommendations. Check predictions.columns.user and "
            "ground_truth.columns.user, and that both files hold the same users."
        )
    unknown = unknown_items.warning(health["unknown_items"], settings, model)
    if unknown is not None:
        found.append(unknown)
    lengths = health["predictions"]["list_length"]
    if lengths["shorter_than_cutoff"]:
        found.append(
            f"{where}{lengths['shorter_than_cutoff']} of the {users['in_both']} users in both "
            f"files have fewer than {lengths['largest_cutoff']} recommendations, the largest "
            "cutoff. Check how many items the model was asked for."
        )
    return found


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
