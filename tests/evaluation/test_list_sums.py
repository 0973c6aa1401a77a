"""The compiled walk of the beyond-accuracy sums (evaluation/list_sums.py,
receval_cli/_list_sums.c) gives the polars form's values bit for bit.

Each case runs twice on the same inputs, once with RECEVAL_CORE=polars (the running sums
over windows, the join on tags), and compares every value by its bits: the whole registry
matrix's metrics that read these sums, through the CLI on two engines, and the functions
alone on the shapes the CLI cannot make (missing terms, a term of -0.0, ranks with a gap,
rows in no order, a missing tag). Hand-computed values check the walk itself.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from engine_parity import comparable, differences, registry_data, run_cli

from receval_cli.evaluation import kernel_core, list_sums, list_walk
from receval_cli.evaluation.list_walk import WALK
from receval_cli.evaluation.side_columns import category_pairs, tag_pairs
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.beyond import similarity_to_earlier
from receval_cli.metrics.stats import EMBEDDING_SIMILARITY, Stats

pytestmark = pytest.mark.skipif(
    list_sums.compiled_list_walk() is None, reason="the compiled walk is not built here"
)

# the metrics whose values come from the walk: rec_sum terms, embedding and tag pairs
WALKED = ("novelty", "serendipity", "intra_list_diversity")


def bits(frame: pl.DataFrame) -> dict[str, Any]:
    """Every column's values, floats by their bits and nulls where they are."""
    found: dict[str, Any] = {}
    for name in frame.columns:
        column = frame.get_column(name)
        if column.dtype == pl.Float64:
            mask = column.is_null().to_numpy()
            raw = column.fill_null(0.0).to_numpy().view(np.uint64)
            found[name] = (mask.tolist(), np.where(mask, 0, raw).tolist())
        else:
            found[name] = column.to_list()
    return found


def counting_kernel(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Record whether each call of the compiled core took the run and kept the ranked rows
    for the recs table (kernel_core.KernelTables.ranked)."""
    taken: list[bool] = []
    for name in ("evaluate_compiled", "evaluate_batches"):
        original = getattr(kernel_core, name)

        def counted(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            found = _original(*args, **kwargs)
            tables = isinstance(found, kernel_core.KernelTables)
            taken.append(tables and found.ranked is not None)
            return found

        monkeypatch.setattr(kernel_core, name, counted)
    return taken


def counting_walks(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Record whether each call of the walk computed its table (else the polars form did)."""
    walked: list[bool] = []
    for name in ("walk_sums", "walk_tags", "walk_categories"):
        original = getattr(list_walk, name)

        def counted(*args: Any, _original: Any = original) -> Any:
            found = _original(*args)
            walked.append(found is not None)
            return found

        monkeypatch.setattr(list_walk, name, counted)
    return walked


@pytest.mark.parametrize(
    ("engine", "batches"), [("in_memory", False), ("streaming", False), ("in_memory", True)]
)
def test_every_walked_metric_of_the_registry_gives_the_polars_forms_bits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str, batches: bool
) -> None:
    """The registry matrix's novelty, serendipity and intra-list diversity specs (every
    parameter, cutoff and feature) and its global metrics, with the classic ranking
    metrics, on data with ties, short and long lists, a zero and opposite embeddings and
    empty tag sets: the report and the per-user file are the same as the polars core's;
    the compiled core ranked the lists for both, and the walk ran for the sums and the tag
    pairs. `batches`: the predictions grouped by user, read in batches of 37 rows (a
    user's rows across two batches), so the ranked rows are the batches' (their users,
    the items the kernel wrote, the lists' lengths filled from their ranks)."""
    graded = registry_data(tmp_path, seed=5)["graded"]
    if batches:
        predictions = tmp_path / graded["predictions"]["path"]
        grouped = pl.read_parquet(predictions).sort("user", maintain_order=True)
        grouped.write_parquet(predictions)
        monkeypatch.setattr(kernel_core, "BATCH_ROWS", 37)
        calls: list[str] = []
        original = kernel_core.evaluate_batches

        def watched(*args: Any, **kwargs: Any) -> Any:
            found = original(*args, **kwargs)
            calls.append("batches" if isinstance(found, kernel_core.KernelTables) else "whole")
            return found

        monkeypatch.setattr(kernel_core, "evaluate_batches", watched)
    specs = [s for s in graded["metrics"] if MetricSpec.parse(s).name in WALKED]
    # the global metrics read the lists the compiled core ranked (plan.ranked_lists)
    specs += [s for s in graded["metrics"] if lookup(MetricSpec.parse(s).name).scope == "global"]
    assert any("feature=tags" in s for s in specs)
    assert any("feature=embedding" in s for s in specs)
    classic = ["ndcg@10", "precision@5", "recall@20", "map@10", "mrr", "hit_rate@3"]
    config = {**graded, "metrics": [*classic, *specs], "engine": engine}
    walked = counting_walks(monkeypatch)
    kernel = counting_kernel(monkeypatch)
    code, stderr = run_cli(tmp_path, config, "walked")
    assert code == 0, stderr
    assert walked.count(True) == 3, walked  # the sums table, the tag and category pairs
    assert kernel == [True], kernel  # the ranking metrics and the recs table's rows
    if batches:
        assert calls == ["batches"]
    monkeypatch.setenv("RECEVAL_CORE", "polars")
    code, stderr = run_cli(tmp_path, config, "polars")
    assert code == 0, stderr
    assert len(walked) == 3  # the polars form alone
    assert len(kernel) == 1  # and the polars core
    import json

    reports = [json.loads((tmp_path / f"{n}.json").read_text()) for n in ("walked", "polars")]
    assert differences(*(comparable(r) for r in reports)) == []
    per_user = [pl.read_parquet(tmp_path / f"{n}.parquet") for n in ("walked", "polars")]
    assert bits(per_user[0]) == bits(per_user[1])


def numbered(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows as the recs table hands them on (side_columns.recs_aggregates): each with
    its place in the ranked rows (WALK: by user, then rank), in the order they came, where
    it is not given already."""
    if list_sums.WALK in frame.columns:
        return frame
    places = frame.select("user", "rank").sort("user", "rank").with_row_index(list_sums.WALK)
    return frame.join(places, on=["user", "rank"], how="left", maintain_order="left")


def stats_for(names: dict[str, pl.Expr], cutoffs: list[int | None], dims: int = 0) -> Stats:
    stats = Stats(embedding_dims=dims)
    for name, term in names.items():
        for k in cutoffs:
            stats.rec_sum(name, term, k)
    return stats


def both_sums(
    monkeypatch: pytest.MonkeyPatch,
    frame: pl.DataFrame,
    stats: Stats,
    units: pl.DataFrame | None = None,
) -> tuple[Any, ...]:
    walked = counting_walks(monkeypatch)
    vectors = None if units is None else units.lazy()
    frame = numbered(frame)
    (compiled,) = list_sums.walked_tables(frame.lazy(), stats, vectors, None, {})
    compiled = compiled.collect().sort("user")
    monkeypatch.setenv("RECEVAL_CORE", "polars")
    (reference,) = list_sums.walked_tables(frame.lazy(), stats, vectors, None, {})
    reference = reference.collect().sort("user")
    monkeypatch.delenv("RECEVAL_CORE")
    return compiled, reference, walked


def rows(seed: int, users: int = 40, dims: int = 3) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(user, rank, item, t) in no order: lists of 1 to 40 items of 60, ids 9, 10, 100,
    ..., terms with ties, fractions, negatives, -0.0 and missing values; and the items'
    (item, unit_0 ..): zero, negative and fractional parts."""
    rng = random.Random(seed)
    items = [9, 10, 100, *range(11, 68)]
    found = []
    for user in [9, 10, 100, *range(1000, 1000 + users)]:
        chosen = rng.sample(items, rng.choice([1, 2, 5, 16, 40]))
        for rank, item in enumerate(chosen, start=1):
            term = rng.choice([None, -0.0, 0.1, 0.1, -2.5, rng.random(), 1e-300, 3.0])
            found.append((user, rank, item, term))
    rng.shuffle(found)
    frame = pl.DataFrame(found, schema=["user", "rank", "item", "t"], orient="row")
    parts = [0.0, -0.0, 0.5, -1.0, 0.25]
    vectors = [[rng.choice([*parts, rng.uniform(-1, 1)]) for _ in range(dims)] for _ in items]
    vectors[0] = [0.0] * dims  # a zero vector, two equal ones, two opposite ones
    vectors[2] = vectors[1]
    vectors[4] = [-v for v in vectors[3]]
    units = pl.DataFrame(
        {"item": items, **{f"unit_{d}": [v[d] for v in vectors] for d in range(dims)}}
    )
    return frame.with_columns(pl.col("rank").cast(pl.UInt32)), units


@pytest.mark.parametrize("text", [False, True], ids=["integer users", "text users"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sums_give_the_polars_forms_bits(
    monkeypatch: pytest.MonkeyPatch, seed: int, text: bool
) -> None:
    """Missing terms (one at a cutoff's item reads 0), -0.0, rows in no order, cutoffs
    past the list and the whole list, an embedding with zero and negative parts; user ids
    as integers and as text (whose order differs: "10" < "9")."""
    frame, units = rows(seed)
    if text:
        frame = frame.with_columns(pl.col("user").cast(pl.String))
    stats = stats_for({"t": pl.col("t"), "t2": pl.col("t") * 3.0}, [1, 3, 20, None], dims=3)
    stats.rec_sum(EMBEDDING_SIMILARITY, similarity_to_earlier(3), 5)
    compiled, reference, walked = both_sums(monkeypatch, frame, stats, units)
    assert walked == [True]
    assert bits(compiled) == bits(reference)
    assert compiled.height == frame["user"].n_unique()


def test_a_missing_term_at_the_cutoff_reads_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    """As the running sum is read: the item at the cutoff has no term, so the value is
    missing (Stats.rec_sum reads it as 0), not the sum above it; -0.0 alone gives 0.0
    (polars' running sum starts at 0.0)."""
    frame = pl.DataFrame(
        {"user": [1, 1, 1, 2], "rank": [1, 2, 3, 1], "t": [0.5, None, 0.25, -0.0]},
        schema_overrides={"rank": pl.UInt32},
    )
    compiled, reference, _ = both_sums(monkeypatch, frame, stats_for({"t": pl.col("t")}, [1, 2, 3]))
    assert bits(compiled) == bits(reference)
    values = compiled.sort("user").rows()
    assert values[0] == (1, 0.5, None, 0.75)
    assert str(values[1][1]) == "0.0"


def test_ranks_with_a_gap_go_to_the_polars_form(monkeypatch: pytest.MonkeyPatch) -> None:
    frame = pl.DataFrame(
        {"user": [1, 1, 2], "rank": [1, 3, 1], "t": [0.5, 0.25, 1.0]},
        schema_overrides={"rank": pl.UInt32},
    )
    compiled, reference, walked = both_sums(monkeypatch, frame, stats_for({"t": pl.col("t")}, [2]))
    assert walked == [False]
    assert bits(compiled) == bits(reference)


def test_the_embedding_walk_by_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unit vectors (1, 0), (0, 1), (1, 0): the third is identical to the first, so the
    similarities to the items above are 0, 0, 1 and their sums at 2 and 3 are 0 and 1."""
    frame = pl.DataFrame(
        {"user": [7] * 3, "rank": [3, 1, 2], "item": [30, 10, 20]},
        schema_overrides={"rank": pl.UInt32},
    )
    units = pl.DataFrame(
        {"item": [10, 20, 30], "unit_0": [1.0, 0.0, 1.0], "unit_1": [0.0, 1.0, 0.0]}
    )
    stats = Stats(embedding_dims=2)
    for k in (2, 3):
        stats.rec_sum(EMBEDDING_SIMILARITY, similarity_to_earlier(2), k)
    compiled, reference, walked = both_sums(monkeypatch, frame, stats, units)
    assert walked == [True]
    assert compiled.rows() == [(7, 0.0, 1.0)]
    assert bits(compiled) == bits(reference)


def both_pairs(
    monkeypatch: pytest.MonkeyPatch,
    recs: pl.DataFrame,
    catalog: pl.DataFrame,
    cutoffs: set[Any],
    feature: str = "tags",
) -> tuple[pl.DataFrame, pl.DataFrame, list[bool]]:
    walked = counting_walks(monkeypatch)
    recs = numbered(recs)
    pairs = tag_pairs if feature == "tags" else category_pairs
    wanted = {feature: (cutoffs, pairs)}
    (compiled,) = list_sums.walked_tables(recs.lazy(), Stats(), None, catalog.lazy(), wanted)
    monkeypatch.setenv("RECEVAL_CORE", "polars")
    (reference,) = list_sums.walked_tables(recs.lazy(), Stats(), None, catalog.lazy(), wanted)
    monkeypatch.delenv("RECEVAL_CORE")
    found = [t.collect().sort("user") for t in (compiled, reference)]
    return found[0], found[1], walked


def test_the_tag_pairs_by_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tags {a, b}, {b}, {c}, {}, {}: one pair shares b, Jaccard 1 / 2; the two empty
    sets count 1 (scipy's distance 0). At 1: 0; at 2: 0.5; at 5: 1.5."""
    catalog = pl.DataFrame(
        {"item": [1, 2, 3, 4, 5], "tags": [["a", "b"], ["b"], ["c"], [], []]},
        schema_overrides={"tags": pl.List(pl.String)},
    )
    recs = pl.DataFrame(
        {"user": [9] * 5, "item": [1, 2, 3, 4, 5], "rank": [1, 2, 3, 4, 5]},
        schema_overrides={"rank": pl.UInt32},
    )
    compiled, reference, walked = both_pairs(monkeypatch, recs, catalog, {1, 2, None})
    assert walked == [True]
    assert compiled.rows() == [(9, 0.0, 0.5, 1.5)]
    assert bits(compiled) == bits(reference)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("vocabulary", [8, 64, 65, 256, 257, 1000])
def test_tag_pairs_give_the_polars_forms_bits(
    monkeypatch: pytest.MonkeyPatch, seed: int, vocabulary: int
) -> None:
    """Tag sets of 0 to 6 tags (sets, as the catalog reader makes them), most of 8 common
    tags, the others of the rest of the vocabulary; lists of 1 to 150 items (the walk's
    bit sets over a list's rows: one word, two, three) in no order, read at 1, 3, 20, 64
    and the whole list. The walk takes a vocabulary of up to 64 tags as
    one-word bit sets, up to 256 as four, and more through each tag's postings: each size
    at its edges."""
    rng = random.Random(seed)
    words = [f"t{i}" for i in range(vocabulary)]
    items = [9, 10, 100, *range(11, 100), *range(101, 161)]
    tags = []
    for _ in items:
        common = rng.sample(words[:8], rng.choice([0, 0, 1, 2, 3, 5]))
        tags.append(common + rng.sample(words[8:], min(vocabulary - 8, rng.choice([0, 1]))))
    if vocabulary > 8:  # the whole vocabulary held by some item: the walk's codes reach it
        tags[-1] = words[8:]
    catalog = pl.DataFrame(
        {"item": items, "tags": tags}, schema_overrides={"tags": pl.List(pl.String)}
    )
    found = []
    for user in [9, 10, 100, *range(1000, 1030)]:
        chosen = rng.sample(items, rng.choice([1, 2, 5, 16, 40, 64, 65, 150]))
        found += [(user, item, rank) for rank, item in enumerate(chosen, start=1)]
    rng.shuffle(found)
    recs = pl.DataFrame(found, schema=["user", "item", "rank"], orient="row")
    recs = recs.with_columns(pl.col("rank").cast(pl.UInt32))
    compiled, reference, walked = both_pairs(monkeypatch, recs, catalog, {1, 3, 20, 64, None})
    assert walked == [True]
    assert bits(compiled) == bits(reference)


def test_a_missing_tag_goes_to_the_polars_form(monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = pl.DataFrame(
        {"item": [1, 2, 3], "tags": [["a", None], ["a"], None]},
        schema_overrides={"tags": pl.List(pl.String)},
    )
    recs = pl.DataFrame(
        {"user": [1, 1, 1], "item": [1, 2, 3], "rank": [1, 2, 3]},
        schema_overrides={"rank": pl.UInt32},
    )
    compiled, reference, walked = both_pairs(monkeypatch, recs, catalog, {3})
    assert walked == [False]
    assert bits(compiled) == bits(reference)


def test_the_walk_is_off_with_the_polars_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECEVAL_CORE", "polars")
    assert list_sums.compiled_list_walk() is None


def test_rows_numbered_otherwise_go_to_the_polars_form(monkeypatch: pytest.MonkeyPatch) -> None:
    """A WALK that does not number the rows 0, 1, 2, ... (a place missing, one held twice)
    is not an order the walk can restore: the polars form runs, with the same values."""
    for places in ([0, 2, 3], [0, 1, 1]):
        frame = pl.DataFrame(
            {"user": [1, 1, 2], "rank": [1, 2, 1], "t": [0.5, 0.25, 1.0], "walk": places},
            schema_overrides={"rank": pl.UInt32, "walk": pl.UInt32},
        )
        stats = stats_for({"t": pl.col("t")}, [2])
        compiled, reference, walked = both_sums(monkeypatch, frame, stats)
        assert walked == [False], places
        assert bits(compiled) == bits(reference)


def category_case(seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A catalog of 60 items in 4 categories and a missing one (a category of its own, as
    polars groups it), lists of 1 to 40 items in no order."""
    rng = random.Random(seed)
    items = [9, 10, 100, *range(11, 68)]
    categories = [rng.choice(["a", "b", "c", "d", None]) for _ in items]
    catalog = pl.DataFrame({"item": items, "category": categories})
    found = []
    for user in [9, 10, 100, *range(1000, 1030)]:
        chosen = rng.sample(items, rng.choice([1, 2, 5, 16, 40]))
        found += [(user, item, rank) for rank, item in enumerate(chosen, start=1)]
    rng.shuffle(found)
    recs = pl.DataFrame(found, schema=["user", "item", "rank"], orient="row")
    return recs.with_columns(pl.col("rank").cast(pl.UInt32)), catalog


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_category_pairs_give_the_polars_forms_values(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    recs, catalog = category_case(seed)
    compiled, reference, walked = both_pairs(
        monkeypatch, recs, catalog, {1, 3, 20, None}, "category"
    )
    assert walked == [True]
    assert compiled.schema == reference.schema
    assert compiled.equals(reference)


def test_the_category_pairs_by_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    """Categories x, x, y, x, missing, missing: at 2, one pair (x, x); at 4, three (the x
    items pair three ways); at 6, four (the two missing ones pair too, as polars groups a
    missing value)."""
    catalog = pl.DataFrame(
        {"item": [1, 2, 3, 4, 5, 6], "category": ["x", "x", "y", "x", None, None]}
    )
    recs = pl.DataFrame(
        {"user": [5] * 6, "item": [6, 5, 4, 3, 2, 1], "rank": [6, 5, 4, 3, 2, 1]},
        schema_overrides={"rank": pl.UInt32},
    )
    compiled, reference, walked = both_pairs(monkeypatch, recs, catalog, {2, 4, 6}, "category")
    assert walked == [True]
    assert compiled.rows() == [(5, 1, 3, 4)]
    assert compiled.equals(reference)


def test_an_item_outside_the_catalog_goes_to_the_polars_form(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    catalog = pl.DataFrame({"item": [1, 2], "category": ["x", "x"]})
    recs = pl.DataFrame(
        {"user": [1, 1, 1], "item": [1, 2, 3], "rank": [1, 2, 3]},
        schema_overrides={"rank": pl.UInt32},
    )
    compiled, reference, walked = both_pairs(monkeypatch, recs, catalog, {3}, "category")
    assert walked == [False]
    assert compiled.equals(reference)


def naive_places(items: list[Any], catalog: list[Any]) -> list[int] | None:
    if len(set(catalog)) < len(catalog):
        return None
    where = {item: place for place, item in enumerate(catalog)}
    return [where[item] for item in items] if all(i in where for i in items) else None


@pytest.mark.parametrize(
    ("catalog", "dtype"),
    [
        ([100, 9, 10, -3, 0, 55], pl.Int64),  # a table over -3 .. 100
        ([10**12, 9, 10, -(10**15)], pl.Int64),  # too wide for a table: the join
        ([-(2**63), 2**63 - 1, 0], pl.Int64),  # the whole int64 range: the join
        ([2**64 - 1, 2**63, 9, 10], pl.UInt64),  # above int64: by their bits
        ([9, 10, 100], pl.Int16),
        (["9", "10", "100"], pl.String),  # text ids: the join
    ],
)
def test_each_rows_place_in_the_catalog(catalog: list[Any], dtype: pl.DataType) -> None:
    """Each row's place among the catalog's items, by the table over the ids' range or by
    the join, is a plain lookup's; an item outside the catalog, or a catalog holding an item
    twice, gives None (the polars form then runs)."""
    module = list_sums.compiled_list_walk()
    rng = random.Random(7)
    items = [rng.choice(catalog) for _ in range(50)]
    rows = pl.DataFrame({"item": pl.Series(items, dtype=dtype)})
    found = list_walk.Places(module, rows).among(
        pl.DataFrame({"item": pl.Series(catalog, dtype=dtype)})
    )
    assert found is not None
    assert found.tolist() == naive_places(items, catalog)
    for other in ([*catalog, catalog[0]], catalog[1:]):  # one twice; one missing
        frame = pl.DataFrame({"item": pl.Series(other, dtype=dtype)})
        assert naive_places(items, other) is None
        assert list_walk.Places(module, rows).among(frame) is None


@pytest.mark.parametrize("ids", [[9, 10, 100], [2**64 - 1, 9, 2**63], ["9", "10", "100"]])
def test_the_walks_order_and_users(ids: list[Any]) -> None:
    """grouped: the rows put in rank order by WALK, the users' offsets and ids; None where
    WALK is not each place once, ranks do not run 1, 2, 3 per user, a user's rows hold two
    ids, or one user's rows are in two places."""
    module = list_sums.compiled_list_walk()
    a, b, c = ids
    dtype = pl.UInt64 if isinstance(a, int) and a >= 2**63 else None

    def frame(users: list[Any], ranks: list[int], walk: list[int]) -> pl.DataFrame:
        return pl.DataFrame(
            {"user": pl.Series(users, dtype=dtype), "rank": ranks, WALK: walk},
            schema_overrides={"rank": pl.UInt32, WALK: pl.UInt32},
        )

    # the walk's order: a1 a2 a3 b1 c1 c2; the rows come shuffled
    good = frame([c, a, b, a, c, a], [2, 3, 1, 1, 1, 2], [5, 2, 3, 0, 4, 1])
    found = list_walk.grouped(module, good)
    assert found is not None
    order, offsets, users = found
    assert order.tolist() == [3, 5, 1, 2, 4, 0]
    assert offsets.tolist() == [0, 3, 4, 6]
    assert users.to_list() == [a, b, c]
    assert users.dtype == good.get_column("user").dtype
    bad = [
        frame([a, a, b], [1, 2, 1], [0, 0, 2]),  # a place twice
        frame([a, a, b], [1, 2, 1], [0, 1, 3]),  # a place outside
        frame([a, a, b], [1, 3, 1], [0, 1, 2]),  # a rank gap
        frame([a, b, b], [1, 2, 1], [0, 1, 2]),  # a user's rows with two ids
        frame([a, b, a], [1, 1, 1], [0, 1, 2]),  # one user's rows in two places
    ]
    for rows in bad:
        assert list_walk.grouped(module, rows) is None, rows


@pytest.mark.parametrize(
    ("users", "dtype"),
    [
        ([9, 10, 100, -3], pl.Int64),
        ([2**64 - 1, 2**64 - 5, 2**64 - 100], pl.UInt64),  # above int64: by their bits
        ([9, 10, 100], pl.Int32),
    ],
)
def test_each_ranked_rows_known_flag(users: list[int], dtype: pl.DataType) -> None:
    """known_flags: True where the log holds the row's (user, item), missing otherwise,
    as the join with the log's pairs gives it: users without a log row, log rows of users
    not ranked, repeated log rows, items whose text and number orders differ, users
    with 40 and 60 logged items (each user's table grows with its log)."""
    module = list_sums.compiled_list_walk()
    rng = random.Random(5)
    items = [9, 10, 100, 1000, 7, *range(200, 260)]
    ranked_rows = [(u, i) for u in users for i in rng.sample(items, rng.choice([1, 5, 20]))]
    counts = [40, 0, 3, 60, 10]  # logs from none to more than the smallest table holds
    log_rows = [
        (u, rng.choice(items)) for u, n in zip([*users, 55], counts, strict=False) for _ in range(n)
    ]
    log_rows += rng.sample(ranked_rows, 5)  # pairs the ranked rows hold
    log_rows += log_rows[:5]  # repeated
    rng.shuffle(log_rows)
    ranked = pl.DataFrame(ranked_rows, schema={"user": dtype, "item": pl.Int64}, orient="row")
    log = pl.DataFrame(log_rows, schema={"user": dtype, "item": pl.Int64}, orient="row")
    found = list_walk.known_flags(module, ranked, log, 2)
    assert found is not None
    expected = ranked.join(
        log.unique().with_columns(known=pl.lit(True)),
        on=["user", "item"],
        how="left",
        maintain_order="left",
    )
    assert found.to_list() == expected.get_column("known").to_list()
    assert found.to_list().count(True) > 0
    assert found.null_count() > 0


def test_known_flags_it_does_not_take() -> None:
    """None (the join runs): a user's rows in two places, users too far apart for a
    table, text ids, ids of two types."""
    module = list_sums.compiled_list_walk()

    def flags(users: list[Any], log_users: list[Any], dtype: Any = pl.Int64) -> Any:
        ranked = pl.DataFrame({"user": pl.Series(users, dtype=dtype), "item": [1] * len(users)})
        log = pl.DataFrame(
            {"user": pl.Series(log_users, dtype=dtype), "item": [1] * len(log_users)}
        )
        return list_walk.known_flags(module, ranked, log, 1)

    assert flags([1, 1, 2], [1]) is not None
    assert flags([1, 2, 1], [1]) is None
    assert flags([0, 10**12], [0]) is None
    assert flags([-(2**63), 2**63 - 1], [0]) is None
    assert flags(["a", "b"], ["a"], pl.String) is None
    ranked = pl.DataFrame({"user": [1], "item": [1]})
    log = pl.DataFrame({"user": pl.Series([1], dtype=pl.Int32), "item": [1]})
    assert list_walk.known_flags(module, ranked, log, 1) is None
