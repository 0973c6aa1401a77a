"""`receval validate CONFIG`: check a config and its inputs without computing a metric
(report/validation_tables.py renders what it finds).

It is `run` without the evaluation: it plans the run with run's planner (the engine's
refusals, the gates, the baseline report), reads the history store as the run reads it,
makes a Spark run's checks before Spark starts, reads every input with `run`'s readers,
aligns the ids and runs `run`'s checks (the same queries that ride along with the
metrics, here collected alone), so it fails with `run`'s message wherever `run` would
fail on the config or the inputs' shapes. The metric expressions are built (that is
where a metric that needs a missing input fails) but never collected. What passes is
summed up: rows, users, items, nulls, duplicates, id types, list lengths, the relevance
grades, the segments, the users in both files, and warnings for what `run` accepts but
looks wrong. (The outputs the config names are checked by cli/run_outputs.py, which
`receval validate` calls first, as `run` does.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from receval_cli import console
from receval_cli.analysis.validate_segments import segments_block, segments_file_block
from receval_cli.config.conventions import Conventions
from receval_cli.config.loading import LoadedConfig, is_remote
from receval_cli.config.model import UnknownItemsConfig
from receval_cli.engines.run_plan import ModelInputs, RunPlan, history_path, plan_run
from receval_cli.evaluation import unknown_items
from receval_cli.evaluation.assembly import BucketTask, FinishContext, bucket_partial, raise_checks
from receval_cli.evaluation.clicks import checked_log
from receval_cli.evaluation.global_metrics import (
    outside_universe,
    require_universe,
    universe_of,
)
from receval_cli.evaluation.item_exposure import exposure_depth
from receval_cli.evaluation.item_facts import item_facts
from receval_cli.evaluation.plan import max_depth, per_user_frame
from receval_cli.evaluation.rating_pairs import check_queries, checked_pairs, pair_join
from receval_cli.history.store import read_store
from receval_cli.inputs.readers import Input
from receval_cli.metrics import lookup

EXAMPLES = 3
TINY_OVERLAP = 0.1  # users in both files, as a share of the ground truth's users
RELEVANCE_VALUES = 20  # grades listed in the relevance distribution (the smallest)


def validate_config(
    loaded: LoadedConfig, baseline_report: Path | None = None, allow_different: bool = False
) -> dict[str, Any]:
    """The health summary of a config's inputs; raises what `run` raises on them: the
    run's plan (engines/run_plan.py: the engine's refusals, the gates, the baseline
    report, under other conventions unless `allow_different`), the history store, and
    each model's inputs as the run reads them, without the metrics."""
    config = loaded.config
    plan = plan_run(loaded, None, baseline_report, allow_different)
    store = history_path(loaded)
    if store is not None:
        read_store(store)  # every file of the store a run's, as the run reads them
    if plan.engine.spark and any(is_remote(path) for path in _input_paths(loaded)):
        return _spark_health(plan)
    keys = plan.segments()  # read, and the gates on segments checked, as the run does
    if plan.engine.spark:  # what the Spark run refuses before Spark starts
        from receval_cli.engines.spark import preflight

        for name in plan.models:
            preflight(plan, name)
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
    if keys is not None:
        health["segments"] = segments_block(loaded, *keys)
        if config.segments is not None:
            health["optional"]["segments"] = segments_file_block(loaded, keys[0])
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
    task = BucketTask(
        engine,
        check_unknown=True,
        count_rows="raw",
        keep="all",
        list_specs=listed,
        extra=tuple(extra),
        reference=reference[1],
    )
    partial = bucket_partial(predictions, truth, (), conventions, sources, task)
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
