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

FLAGS = 500  # the bits' end in these tests (BIT_IDS)
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
        patch.setattr(running, "BIT_IDS", FLAGS)
        for ids in tables:
            found.add(pl.DataFrame({"item": pl.Series(ids, dtype=pl.Int64)}))
    expected = sorted({i for ids in tables for i in ids})
    table = found.table()
    assert table.get_column("item").to_list() == expected
    assert table.schema["item"] == pl.Int64


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
@given(
    st.lists(st.one_of(st.lists(IDS, max_size=30), st.sets(st.integers(0, FLAGS - 1))), max_size=8)
)
def test_bits_added_as_they_are_join_the_tables(
    compiled: bool, added: list[list[int] | set[int]]
) -> None:
    """Bits handed over as they are (a set: the compiled core's bits, add_bits) and tables
    (a list) make one set; marked by the compiled module or by numpy alone."""
    import numpy as np

    found = ItemSet()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(running, "BIT_IDS", FLAGS)
        if not compiled:
            patch.setattr(running, "extension", lambda: None)
        for ids in added:
            if isinstance(ids, set):
                bits = np.zeros(max(ids, default=0) // 64 + 1, np.uint64)
                for i in ids:
                    bits[i // 64] |= np.uint64(1) << np.uint64(i % 64)
                found.add_bits(bits)
            else:
                found.add(pl.DataFrame({"item": pl.Series(ids, dtype=pl.Int64)}))
    expected = sorted({i for ids in added for i in ids})
    assert found.table().get_column("item").to_list() == expected
    assert found.held() == bool(added)


@given(st.lists(st.integers(0, 2**20), max_size=200), st.integers(1, 4))
def test_set_bits_reads_each_set_bit_back(ids: list[int], words: int) -> None:
    import numpy as np

    bits = np.zeros(2**20 // 64 + 1, np.uint64)
    for i in ids:
        bits[i // 64] |= np.uint64(1) << np.uint64(i % 64)
    assert running.set_bits(bits).tolist() == sorted(set(ids))
    assert running.set_bits(bits[:words]).tolist() == sorted(i for i in set(ids) if i < 64 * words)


@given(st.lists(st.lists(st.sampled_from(["9", "10", "100", "a", "b"]), max_size=8), min_size=1))
def test_text_ids_are_kept_as_text(tables: list[list[str]]) -> None:
    found = ItemSet()
    for ids in tables:
        found.add(pl.DataFrame({"item": pl.Series(ids, dtype=pl.String)}))
    assert found.table().get_column("item").to_list() == sorted({i for t in tables for i in t})


def test_ids_past_the_bits_are_made_distinct_as_they_grow(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ids the bits cannot hold are kept in tables made distinct when they pass twice what
    the last made distinct held: a thousand buckets of the same ten ids hold ten ids."""
    monkeypatch.setattr(running, "COMPACT_FROM", 20)
    found = ItemSet()
    for _ in range(1000):
        found.add(pl.DataFrame({"item": [2**40 + i for i in range(10)]}))
    assert found.others_rows <= 60
    assert found.table().height == 10


def test_bits_grow_with_the_largest_id_only() -> None:
    found = ItemSet()
    found.add(pl.DataFrame({"item": [3, 7]}))
    assert found.bits is not None
    assert len(found.bits) == 1
    found.add(pl.DataFrame({"item": [1000]}))
    assert len(found.bits) == 1000 // 64 + 1
    assert found.table().get_column("item").to_list() == [3, 7, 1000]


@given(
    st.lists(st.lists(IDS, max_size=30), min_size=1, max_size=6),
    st.lists(st.lists(IDS, max_size=30), max_size=6),
    st.integers(1, 9),
)
def test_missing_from_counts_as_the_unknown_items_query(
    recommended: list[list[int]], reference: list[list[int]], slice_words: int
) -> None:
    """ItemSet.missing_from gives unknown_items.unknown_query's row where both sets are
    bits alone (ids from 0 to the bits' end), compared a slice at a time; None where
    either holds other ids (the query counts them then)."""
    mine, known = ItemSet(), ItemSet()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(running, "BIT_IDS", FLAGS)
        patch.setattr(running, "_SLICE_WORDS", slice_words)
        for ids in recommended:
            mine.add(pl.DataFrame({"item": pl.Series(ids, dtype=pl.Int64)}))
        for ids in reference:
            known.add(pl.DataFrame({"item": pl.Series(ids, dtype=pl.Int64)}))
        found = mine.missing_from(known)
    flagged = [i for ids in recommended + reference for i in ids]
    if mine.bits is None or any(not 0 <= i < FLAGS for i in flagged):
        assert found is None
        return
    reference_frame = pl.LazyFrame({"item": pl.Series(flagged[:0], dtype=pl.Int64)})
    if reference:
        reference_frame = known.table().lazy()
    expected = unknown_query(mine.table().lazy(), reference_frame).collect()
    assert found is not None
    assert found.to_dicts() == expected.to_dicts()
    assert found.schema == expected.schema


def test_missing_from_with_the_reference_bits_longer() -> None:
    """The reference's bits end past the set's (a truth item above every recommended one):
    the set's own bits bound the comparison."""
    mine, known = ItemSet(), ItemSet()
    mine.add(pl.DataFrame({"item": [0]}))
    known.add(pl.DataFrame({"item": [1, 1000]}))
    assert len(known.bits) > len(mine.bits)
    found = mine.missing_from(known)
    assert found is not None
    assert found.to_dicts() == [{"recommended": 1, "unknown": 1, "examples": [0]}]


def test_missing_from_needs_one_id_type() -> None:
    mine, known = ItemSet(), ItemSet()
    mine.add(pl.DataFrame({"item": pl.Series([1, 2], dtype=pl.Int64)}))
    known.add(pl.DataFrame({"item": pl.Series([1], dtype=pl.Int32)}))
    assert mine.missing_from(known) is None
