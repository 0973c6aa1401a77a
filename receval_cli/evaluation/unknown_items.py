"""Recommended items that the reference does not know: a common join-key bug.

The reference is the catalog when the config gives one, else the interactions log, else
the ground truth (every user's items). Every report states how many of the distinct
recommended items it does not know; above `unknown_items.warn` (a share, default 0.9)
the report carries a warning, and above `unknown_items.max` (when set) a gate fails.

A sparse test set legitimately misses many recommended items, so the warning is a
prompt to look, not an error; ids that do not match at all (e.g. "00123" against 123)
show as a share near 1.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import polars as pl

from receval_cli.config.model import UnknownItemsConfig
from receval_cli.escaping import example
from receval_cli.inputs.optional import Sources
from receval_cli.inputs.readers import Input
from receval_cli.results.gates import GateResult
from receval_cli.results.report import Report
from receval_cli.wording import setting

METRIC = "unknown_items"
EXAMPLES = 5  # unknown ids named: the smallest


def reference_of(truth: Input, sources: Sources) -> tuple[str, pl.LazyFrame]:
    """The reference's name and its items (distinct, but for the catalog's: an anti join
    needs no distinct keys, and the catalog has each item once)."""
    name, source = _reference(truth, sources)
    if name == "catalog":  # each item once (inputs/optional.py checks it)
        return name, source.frame.select("item")
    # an expression's unique: faster than a one-column frame's (a row hash each)
    return name, source.frame.select(pl.col("item").drop_nulls().unique())


def reference_rows(truth: Input, sources: Sources) -> pl.LazyFrame:
    """reference_of's items row by row, repeats and nulls (which match no recommended
    item) and all: for a reader that gathers them as they pass (engines/running.py's
    ItemSet), a slice of the file at a time."""
    return _reference(truth, sources)[1].frame.select("item")


def _reference(truth: Input, sources: Sources) -> tuple[str, Input]:
    """The unknown-items reference: the catalog, else the interactions log, else the
    ground truth."""
    if sources.catalog is not None:
        return "catalog", sources.catalog
    if sources.interactions is not None:
        return "interactions log", sources.interactions
    return "ground truth", truth


def unknown_query(recommended: pl.LazyFrame, reference: pl.LazyFrame) -> pl.LazyFrame:
    """One row: the distinct recommended items, those the reference lacks, and examples."""
    unknown = recommended.join(reference, on="item", how="anti")
    return pl.concat(
        [
            recommended.select(pl.len().alias("recommended")),
            unknown.select(
                pl.len().alias("unknown"),
                # the smallest: no sort of every unknown item (millions with a large catalog)
                pl.col("item").bottom_k(EXAMPLES).sort().implode().alias("examples"),
            ),
        ],
        how="horizontal",
    )


def unknown_row(recommended: int, unknown: int, examples: pl.Series) -> pl.DataFrame:
    """unknown_query's row from counts made elsewhere (the buckets' item bits, the compiled
    core's bits): the same columns and types."""
    return pl.DataFrame(
        {
            "recommended": pl.Series([recommended], dtype=pl.UInt32),
            "unknown": pl.Series([unknown], dtype=pl.UInt32),
            "examples": [examples],
        }
    )


def describe(found: pl.DataFrame, reference: str) -> dict[str, Any]:
    """The report's `unknown_items` block."""
    recommended, unknown = found.item(0, "recommended"), found.item(0, "unknown")
    block: dict[str, Any] = {
        "reference": reference,
        "recommended": recommended,
        "unknown": unknown,
        "share": unknown / recommended if recommended else 0.0,
    }
    if unknown:
        block["examples"] = found.item(0, "examples").to_list()
    return block


def warning(block: dict[str, Any], settings: UnknownItemsConfig, model: str | None) -> str | None:
    """A warning when the share of unknown items is above `warn`."""
    if block["share"] <= settings.warn:
        return None
    who = f"model {model}: " if model is not None else ""
    examples = ", ".join(example(e) for e in block.get("examples", []))
    return (
        f"{who}{block['unknown']} of the {block['recommended']} recommended items "
        f"({block['share']:.0%}) are not in the {block['reference']} (e.g. {examples}). "
        "If that is unexpected, check that the item ids of both files match "
        f"({setting('predictions', 'columns', 'item')}, "
        f"{setting('ground_truth', 'columns', 'item')}, and their types); "
        "unknown_items.warn sets when this warning shows."
    )


def gate(
    block: dict[str, Any], settings: UnknownItemsConfig, model: str | None
) -> list[GateResult]:
    """The `unknown_items.max` gate, when set."""
    if settings.max is None:
        return []
    detail = {"reference": block["reference"], "unknown": block["unknown"]}
    return [GateResult(METRIC, "max", settings.max, block["share"], model, detail)]


def checked(
    report: Report, settings: UnknownItemsConfig, model: str | None = None
) -> tuple[Report, list[GateResult]]:
    """The report with its unknown-items warning (if any), and the gate (if set)."""
    block = report.unknown_items
    if block is None:
        return report, []
    found = warning(block, settings, model)
    if found is not None and found not in report.warnings:
        report = dataclasses.replace(report, warnings=[*report.warnings, found])
    return report, gate(block, settings, model)
