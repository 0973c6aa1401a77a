"""The optional inputs of the beyond-accuracy metrics: catalog, interactions, baseline.

    catalog       (item[, category, tags, embedding, title]): every item that could be
                  recommended, the denominator of coverage, and the item features that
                  intra-list diversity compares.
    interactions  (user, item[, timestamp]): the training or historical log; it gives each
                  item's popularity and what each user already knew.
    baseline      an obvious recommender's lists (same layouts as the predictions); when
                  absent, serendipity and unexpectedness use the most popular items.

Each is read with the same readers (and the same errors) as the predictions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from receval_cli.config.loading import LoadedConfig, is_remote
from receval_cli.config.model import CatalogConfig, InteractionsConfig
from receval_cli.errors import InputError
from receval_cli.inputs.checks import (
    FILL_ROWS,
    DuplicatesFound,
    check_exprs,
    duplicates_error,
    find_duplicates,
    raise_for,
)
from receval_cli.inputs.column_checks import check_id, id_expr, require_column
from receval_cli.inputs.diagnosis import READ_ERRORS, first_line
from receval_cli.inputs.parquet_stats import footer_checks
from receval_cli.inputs.propensities import (
    propensity_checks,
    propensity_column,
    raise_for_propensities,
)
from receval_cli.inputs.readers import (
    Input,
    failing_input,
    list_items,
    read_predictions,
    user_column,
    with_row,
)
from receval_cli.inputs.scanning import detect_format, scan

FEATURES = ("category", "tags", "embedding")


@dataclass
class Sources:
    """The optional inputs, each mapped to canonical columns (or None when not given)."""

    catalog: Input | None = None
    interactions: Input | None = None
    baseline: Input | None = None
    embedding_dims: int = 0  # the catalog's embedding length, once checked
    # item popularity computed beforehand from the whole log (a partition's log holds
    # only its users); side_columns.item_popularity's columns
    popularity: pl.LazyFrame | None = None
    # True: `popularity` also holds the per-item columns the metrics ask of it (Stats.items,
    # e.g. long_tail_share's head), computed over the whole log, and only some items (a
    # Spark bucket's recommended ones), so they are not computed again
    popularity_rows: bool = False
    # the whole log's (rows, users), where `popularity` holds only some items' rows (a
    # Spark bucket's): its totals cannot be read from those rows
    log_totals: tuple[int, int] | None = None
    # what an engine whose buckets see part of the log or catalog (engine: spark) computed
    # beforehand over the whole of it: the item groups of the fairness metrics
    # (StateSides.item_groups), the catalog's number of items (accuracy, mcc), and the log's
    # (user, item) pairs of the items the bucket's co-occurrences read (cooccurrence_log)
    item_groups: dict[str, tuple[pl.LazyFrame, pl.LazyFrame]] | None = None
    catalog_items: int | None = None
    cooccurrence_log: pl.LazyFrame | None = None
    # inputs the config names that another engine reads (engine: spark's tables and URIs):
    # given, their contents unknown here, so checks that need them wait for that engine
    elsewhere: frozenset[str] = frozenset()
    # False: the report's item figures (the HTML report's exposure histogram and
    # popularity bias, evaluation/item_facts.py) are not computed, as no HTML report is
    # written: a catalog or log that no metric reads then costs no pass over the lists
    # or the log for them
    figures: bool = True

    def given(self) -> list[Input]:
        return [s for s in (self.catalog, self.interactions, self.baseline) if s is not None]

    def names(self, role: str) -> bool:
        """Whether the config gives this optional input (read here or elsewhere)."""
        return getattr(self, role) is not None or role in self.elsewhere

    def features(self) -> list[str]:
        """The item features the catalog carries."""
        return [] if self.catalog is None else [f for f in FEATURES if f in self.catalog.columns]


def read_sources(loaded: LoadedConfig, local_only: bool = False) -> Sources:
    """Read the optional inputs a config names (lazily: their schemas are checked, their
    rows not read). `local_only` leaves out a Spark table or URI (engine: spark reads it)."""
    config = loaded.config
    named: dict[str, Any] = {
        "catalog": config.catalog,
        "interactions": config.interactions,
        "baseline": config.baseline,
    }
    elsewhere = (
        frozenset(r for r, given in named.items() if given is not None and is_remote(given.path))
        if local_only
        else frozenset()
    )
    sources = Sources(elsewhere=elsewhere)
    if config.catalog is not None and "catalog" not in elsewhere:
        sources.catalog = read_catalog(config.catalog, loaded.resolve_path(config.catalog.path))
    if config.interactions is not None and "interactions" not in elsewhere:
        path = loaded.resolve_path(config.interactions.path)
        sources.interactions = read_interactions(config.interactions, path)
    if config.baseline is not None and "baseline" not in elsewhere:
        path = loaded.resolve_path(config.baseline.path)
        sources.baseline = read_predictions(config.baseline, path, role="baseline")
    return sources


def read_catalog(config: CatalogConfig, path: Path) -> Input:
    """Scan the catalog into (item[, category, tags, embedding, title])."""
    role = "catalog"
    cols = config.columns
    fmt = detect_format(path, config.format, role)
    raw = scan(path, fmt, config.separator, role, (cols.tags, cols.embedding), (cols.item,))
    source = map_catalog(raw, config, path, fmt)
    source.separator = config.separator
    return source


def map_catalog(raw: pl.LazyFrame, config: CatalogConfig, path: Path, fmt: str) -> Input:
    role = "catalog"
    cols = config.columns
    schema = raw.collect_schema()
    require_column(schema, cols.item, role, path, "item")
    check_id(raw, schema, cols.item, role, path)
    selected = {"item": id_expr(cols.item, schema)}
    mapping = {"item": cols.item}
    if cols.category is not None:
        require_column(schema, cols.category, role, path, "category")
        selected["category"] = pl.col(cols.category).cast(pl.String)
        mapping["category"] = cols.category
    if cols.tags is not None:
        require_column(schema, cols.tags, role, path, "tags")
        tags = list_items(raw, schema, cols.tags, config.list_separator, role, path)
        tags = tags.list.eval(pl.element().cast(pl.String).filter(pl.element() != "")).list.unique()
        no_tags = pl.lit([], dtype=pl.List(pl.String))  # an empty cell: an empty tag set
        selected["tags"] = tags.fill_null(no_tags)
        mapping["tags"] = cols.tags
    if cols.embedding is not None:
        require_column(schema, cols.embedding, role, path, "embedding")
        vector = list_items(raw, schema, cols.embedding, config.list_separator, role, path)
        if isinstance(schema[cols.embedding], pl.Array):
            vector = pl.col(cols.embedding).arr.to_list()
        vector = vector.list.eval(pl.element().cast(pl.Float64, strict=False))
        selected["embedding"] = vector
        mapping["embedding"] = cols.embedding
    if cols.propensity is not None:
        require_column(schema, cols.propensity, role, path, "propensity")
        selected["propensity"] = propensity_column(schema, cols.propensity, path)
        mapping["propensity"] = cols.propensity
    if cols.title is not None:
        require_column(schema, cols.title, role, path, "title")
        selected["title"] = pl.col(cols.title).cast(pl.String)
        mapping["title"] = cols.title
    frame = with_row(raw, selected)
    return Input(role, path, fmt, "catalog", mapping, frame, raw)


def read_interactions(config: InteractionsConfig, path: Path) -> Input:
    """Scan the interactions log into (user, item, row)."""
    role = "interactions"
    fmt = detect_format(path, config.format, role)
    cols = config.columns
    raw = scan(path, fmt, config.separator, role, id_columns=(cols.user, cols.item))
    source = map_interactions(raw, config, path, fmt)
    source.separator = config.separator
    return source


def map_interactions(raw: pl.LazyFrame, config: InteractionsConfig, path: Path, fmt: str) -> Input:
    role = "interactions"
    cols = config.columns
    schema, user = user_column(raw, cols.user, role, path)
    require_column(schema, cols.item, role, path, "item")
    check_id(raw, schema, cols.item, role, path)
    mapping = {"user": cols.user, "item": cols.item}
    if cols.timestamp is not None:
        require_column(schema, cols.timestamp, role, path, "timestamp")
        mapping["timestamp"] = cols.timestamp
    frame = with_row(raw, {"user": user, "item": id_expr(cols.item, schema)})
    return Input(role, path, fmt, "log", mapping, frame, raw)


@dataclass
class SourceChecks:
    """An optional input's checks over some of its rows: the counts of `check_query`, and
    the examples a failed check names (the smallest repeated catalog items, the baseline's
    repeated pairs). Adds up across parts of the rows that keep each key's rows together
    (the catalog by item, the baseline by user): Spark's partitions."""

    found: dict[str, Any]
    repeated_items: list[Any] = field(default_factory=list)
    duplicates: DuplicatesFound | None = None

    def __add__(self, other: SourceChecks) -> SourceChecks:
        found = dict(self.found)
        for key, value in other.found.items():
            old = found.get(key)
            if old is None or value is None:
                found[key] = value if old is None else old
            elif key in _SMALLEST:
                found[key] = min(old, value)
            elif key in _LARGEST:
                found[key] = max(old, value)
            else:
                found[key] = old + value
        items = sorted({*self.repeated_items, *other.repeated_items})[:_EXAMPLES]
        pairs = [d for d in (self.duplicates, other.duplicates) if d is not None]
        return SourceChecks(found, items, sum(pairs[1:], pairs[0]) if pairs else None)

    def to_json(self) -> dict[str, Any]:
        pairs = self.duplicates
        return {
            "found": self.found,
            "repeated_items": self.repeated_items,
            "duplicates": None if pairs is None else [pairs.pairs, pairs.examples],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SourceChecks:
        pairs = data["duplicates"]
        found = None if pairs is None else DuplicatesFound(pairs[0], [tuple(e) for e in pairs[1]])
        return cls(data["found"], data["repeated_items"], found)


_SMALLEST = ("shortest", "propensity_lowest")
_LARGEST = ("longest", "propensity_highest")
_EXAMPLES = 3


def check_query(source: Input) -> pl.LazyFrame:
    """One row of counts over an optional input's rows: rows, null ids; the baseline's
    null or NaN scores or ranks and repeated (user, item) pairs; the catalog's repeated
    items, null categories and its embeddings' lengths and bad values."""
    ids = [c for c in ("user", "item") if c in source.frame.collect_schema()]
    exprs = [pl.len().alias("rows"), *(pl.col(c).null_count().alias(c) for c in ids)]
    if source.role == "baseline":
        exprs += check_exprs("", source.value_column)
        pairs = pl.struct("user", "item").n_unique()
        exprs.append((pl.len() - pairs).alias("repeated_pairs"))
    if source.role == "catalog":
        exprs.append((pl.len() - pl.col("item").n_unique()).alias("repeated"))
        if "category" in source.columns:
            exprs.append(pl.col("category").null_count().alias("category"))
        if "propensity" in source.columns:
            exprs += propensity_checks()
        if "embedding" in source.columns:
            vector = pl.col("embedding")
            exprs += [
                vector.list.len().min().alias("shortest"),
                vector.list.len().max().alias("longest"),
                vector.null_count().alias("missing_vectors"),
                vector.list.eval(pl.element().is_null() | ~pl.element().is_finite())
                .list.any()
                .sum()
                .alias("bad_vectors"),
            ]
    return source.frame.select(exprs)


def checks_of(source: Input, found: dict[str, Any]) -> SourceChecks:
    """The SourceChecks of `check_query`'s row: the examples are looked for (in
    `source.frame`) only when a check failed."""
    repeated: list[Any] = []
    if found.get("repeated"):
        repeated = (
            source.frame.group_by("item")
            .len()
            .filter(pl.col("len") > 1)
            .sort("item")
            .head(_EXAMPLES)
            .collect()
            .get_column("item")
            .to_list()
        )
    duplicates = find_duplicates(source.frame) if found.get("repeated_pairs") else None
    return SourceChecks(found, repeated, duplicates)


def check_sources(sources: Sources, duplicates: str = "error") -> None:
    """Every optional input's rows: not empty, no null ids; the catalog lists each item
    once and its embeddings are finite vectors of one length; the baseline has no null or
    NaN score or rank, and no repeated (user, item) unless the `duplicates` convention
    says which row counts."""
    given = sources.given()
    counted = {id(source): footer_checks(source) for source in given}
    queried = [source for source in given if counted[id(source)] is None]
    try:
        results = pl.collect_all([check_query(source) for source in queried])
    except READ_ERRORS as error:
        raise _unreadable(given, error) from None
    for source, result in zip(queried, results, strict=True):
        counted[id(source)] = result.row(0, named=True)
    for source in given:
        found = counted[id(source)]
        assert found is not None
        raise_for_checks(sources, source, checks_of(source, found), duplicates)


def raise_for_checks(
    sources: Sources, source: Input, checks: SourceChecks, duplicates: str = "error"
) -> None:
    """Raise the first failed check of an optional input; else keep the catalog's
    embedding length in `sources`."""
    found = checks.found
    _raise_for(source, found, checks.repeated_items)
    if source.role == "baseline":
        raise_for(source, {"raw_rows": found["rows"], **found})
        if found["repeated_pairs"] and duplicates == "error":
            assert checks.duplicates is not None
            raise duplicates_error(source, "duplicates", checks.duplicates)
    if "longest" in found:
        sources.embedding_dims = int(found["longest"] or 0)


def _unreadable(given: list[Input], error: BaseException) -> InputError:
    """Which optional input failed to read, and where (each is read again, whole)."""
    found = failing_input(given)
    if found is not None:
        return found
    paths = ", ".join(str(source.path) for source in given)
    reason = first_line(error)
    return InputError(
        f"the optional inputs ({paths}) could not be read together: {reason}.",
        # one file: the file at fault; several: none alone (each was read on its own)
        path=given[0].path if len(given) == 1 else None,
        found={"paths": [str(source.path) for source in given], "reason": reason},
    )


def _raise_for(source: Input, found: dict[str, Any], examples: list[Any]) -> None:
    where = f"{source.role} file {source.path}"
    if found["rows"] == 0:
        fix = "Write the data first."
        raise InputError(
            f"{where} has no rows. {fix}", path=source.path, found={"rows": 0}, fix=fix
        )
    for column in ("user", "item", "category"):
        if found.get(column):
            named = source.source_column(column)
            nulls = f"{found[column]} null value(s)"
            raise InputError(
                f"{where}: column '{named}' has {nulls}; {FILL_ROWS}",
                path=source.path,
                column=named,
                found=nulls,
                fix=FILL_ROWS,
            )
    if found.get("repeated"):
        fix = "List each item once."
        raise InputError(
            f"{where}: {found['repeated']} row(s) repeat an item already listed (e.g. "
            f"{', '.join(map(repr, examples))}). {fix}",
            path=source.path,
            found={"rows": found["repeated"], "examples": examples},
            fix=fix,
        )
    if "propensity" in source.columns:
        raise_for_propensities(source, found)
    if "embedding" not in source.columns:
        return
    column = source.columns["embedding"]
    if found["missing_vectors"] or found["bad_vectors"]:
        bad = found["missing_vectors"] + found["bad_vectors"]
        fix = "fix those vectors."
        raise InputError(
            f"{where}: column '{column}' has {bad} embedding(s) that are missing or hold a "
            f"null, NaN, infinite or non-numeric value; {fix}",
            path=source.path,
            column=column,
            found={"embeddings": bad},
            fix=fix,
        )
    if found["shortest"] != found["longest"]:
        raise InputError(
            f"{where}: the embeddings in column '{column}' have different lengths (from "
            f"{found['shortest']} to {found['longest']}); cosine distance needs one length.",
            path=source.path,
            column=column,
            found={"shortest": found["shortest"], "longest": found["longest"]},
        )
