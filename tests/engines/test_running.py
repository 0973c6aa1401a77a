"""The buckets' Partials added up as they come (engines/running.py): the distinct
recommended items kept in a set whose memory does not grow with the buckets, read back as
the distinct ids sorted, whatever their type and range."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from receval_cli.engines import running
from receval_cli.engines.running import ItemSet
from receval_cli.evaluation.unknown_items import unknown_query

FLAGS = 500  # the flags' end in these tests (FLAG_IDS)
IDS = st.one_of(
    st.integers(0, 300),
    st.integers(-5, -1),
    st.integers(FLAGS - 3, FLAGS + 3),  # either side of the flags' end
    st.integers(2**40, 2**40 + 2),
)


@given(st.lists(st.lists(IDS, max_size=30), min_size=1, max_size=12))
def test_the_set_holds_the_distinct_ids_sorted(tables: list[list[int]]) -> None:
    found = ItemSet()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(running, "FLAG_IDS", FLAGS)
        for ids in tables:
            found.add(pl.DataFrame({"item": pl.Series(ids, dtype=pl.Int64)}))
    expected = sorted({i for ids in tables for i in ids})
    table = found.table()
    assert table.get_column("item").to_list() == expected
    assert table.schema["item"] == pl.Int64


@given(st.lists(st.lists(st.sampled_from(["9", "10", "100", "a", "b"]), max_size=8), min_size=1))
def test_text_ids_are_kept_as_text(tables: list[list[str]]) -> None:
    found = ItemSet()
    for ids in tables:
        found.add(pl.DataFrame({"item": pl.Series(ids, dtype=pl.String)}))
    assert found.table().get_column("item").to_list() == sorted({i for t in tables for i in t})


def test_ids_past_the_flags_are_made_distinct_as_they_grow(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ids the flags cannot hold are kept in tables made distinct when they pass twice what
    the last made distinct held: a thousand buckets of the same ten ids hold ten ids."""
    monkeypatch.setattr(running, "COMPACT_FROM", 20)
    found = ItemSet()
    for _ in range(1000):
        found.add(pl.DataFrame({"item": [2**40 + i for i in range(10)]}))
    assert found.others_rows <= 60
    assert found.table().height == 10


def test_flags_grow_with_the_largest_id_only() -> None:
    found = ItemSet()
    found.add(pl.DataFrame({"item": [3, 7]}))
    found.add(pl.DataFrame({"item": [1000]}))
    assert found.flags is not None
    assert 1001 <= len(found.flags) <= 2048
    assert found.table().get_column("item").to_list() == [3, 7, 1000]


@given(
    st.lists(st.lists(IDS, max_size=30), min_size=1, max_size=6),
    st.lists(st.lists(IDS, max_size=30), max_size=6),
    st.integers(1, 64),
)
def test_missing_from_counts_as_the_unknown_items_query(
    recommended: list[list[int]], reference: list[list[int]], slice_ids: int
) -> None:
    """ItemSet.missing_from gives unknown_items.unknown_query's row where both sets are
    flags alone (ids from 0 to the flags' end), compared a slice at a time; None where
    either holds other ids (the query counts them then)."""
    mine, known = ItemSet(), ItemSet()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(running, "FLAG_IDS", FLAGS)
        patch.setattr(running, "_SLICE_IDS", slice_ids)
        for ids in recommended:
            mine.add(pl.DataFrame({"item": pl.Series(ids, dtype=pl.Int64)}))
        for ids in reference:
            known.add(pl.DataFrame({"item": pl.Series(ids, dtype=pl.Int64)}))
        found = mine.missing_from(known)
    flagged = [i for ids in recommended + reference for i in ids]
    if mine.flags is None or any(not 0 <= i < FLAGS for i in flagged):
        assert found is None
        return
    reference_frame = pl.LazyFrame({"item": pl.Series(flagged[:0], dtype=pl.Int64)})
    if reference:
        reference_frame = known.table().lazy()
    expected = unknown_query(mine.table().lazy(), reference_frame).collect()
    assert found is not None
    assert found.to_dicts() == expected.to_dicts()
    assert found.schema == expected.schema


def test_missing_from_with_the_reference_flags_longer() -> None:
    """The reference's flags end past the set's (a truth item above every recommended one):
    the set's own flags bound the comparison."""
    mine, known = ItemSet(), ItemSet()
    mine.add(pl.DataFrame({"item": [0]}))
    known.add(pl.DataFrame({"item": [1]}))
    found = mine.missing_from(known)
    assert found is not None
    assert found.to_dicts() == [{"recommended": 1, "unknown": 1, "examples": [0]}]


def test_missing_from_needs_one_id_type() -> None:
    mine, known = ItemSet(), ItemSet()
    mine.add(pl.DataFrame({"item": pl.Series([1, 2], dtype=pl.Int64)}))
    known.add(pl.DataFrame({"item": pl.Series([1], dtype=pl.Int32)}))
    assert mine.missing_from(known) is None
