"""The distinct recommended items of a run read in batches (evaluation/seen_items.py, over
_kernel.c's `mark` and `marked`): the distinct ids within depth of every batch, sorted,
whatever their range (ids past the bits and negative ids kept apart), whatever the batches."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from receval_cli.compiled import extension
from receval_cli.evaluation import seen_items, unknown_items
from receval_cli.evaluation.seen_items import SeenItems

MODULE = extension()
pytestmark = pytest.mark.skipif(MODULE is None, reason="the compiled core is not built here")
LIMIT = 300  # SEEN_IDS in these tests
IDS = st.one_of(st.integers(0, 200), st.integers(-3, -1), st.integers(LIMIT - 2, LIMIT + 2))
BATCH = st.lists(st.tuples(IDS, st.booleans()), max_size=40)


@given(st.lists(BATCH, min_size=1, max_size=8))
def test_the_distinct_ids_within_depth_sorted(batches: list[list[tuple[int, bool]]]) -> None:
    seen = SeenItems(MODULE)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(seen_items, "SEEN_IDS", LIMIT)
        for batch in batches:
            items = np.array([i for i, _ in batch], np.int64)
            mask = np.array([m for _, m in batch], np.uint8)
            distinct = np.unique(items[mask.astype(bool)])
            seen.add(items, mask, lambda distinct=distinct: distinct)
    found = seen.series()
    expected = sorted({i for batch in batches for i, kept in batch if kept})
    assert found.to_list() == expected
    assert found.is_sorted()
    if all(0 <= i < LIMIT for batch in batches for i, kept in batch if kept):
        assert not seen.others  # the bits held them all
        assert found.flags["SORTED_ASC"]


def test_mark_says_how_many_bits_an_id_needs() -> None:
    assert MODULE is not None
    bits = np.zeros(1, np.uint64)
    items = np.array([3, 70, 5], np.int64)
    mask = np.array([1, 1, 0], np.uint8)
    assert MODULE.mark(items, mask, bits) == 71  # 70 needs 71 bits; 3 is marked already
    assert MODULE.mark(np.array([-1], np.int64), np.array([1], np.uint8), bits) == -1
    bits = np.concatenate([bits, np.zeros(1, np.uint64)])
    assert MODULE.mark(items, mask, bits) == 0
    out = np.empty(5, np.int64)
    assert MODULE.marked(bits, out) == 2
    assert out[:2].tolist() == [3, 70]  # 5 is not within depth


@given(
    st.lists(st.integers(0, 400), max_size=60),
    st.lists(st.one_of(st.integers(-5, 450), st.none()), max_size=60),
)
def test_the_unknown_items_row_is_the_querys(recommended: list[int], reference: list[int]) -> None:
    """missing_from, on the bits, against unknown_items.unknown_query over the items'
    table: the same row (values and types); the bits read 128 ids a slice, the examples
    from windows of 64, 128, 256, ... ids."""
    seen = SeenItems(MODULE)
    items = np.array(recommended, np.int64)
    seen.add(items, np.ones(len(items), np.uint8), lambda: np.unique(items))
    known = pl.Series("item", reference, dtype=pl.Int64).unique()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(seen_items, "_SLICE", 128)
        patch.setattr(seen_items, "_FIRST_WINDOW", 64)
        found = seen.missing_from(known)
    assert found is not None
    query = unknown_items.unknown_query(seen.series().to_frame().lazy(), known.to_frame().lazy())
    expected = query.collect()
    assert found.schema == expected.schema
    assert found.drop("examples").rows() == expected.drop("examples").rows()
    outside = sorted(set(recommended) - set(reference))
    assert found.item(0, "unknown") == len(outside)
    assert found.item(0, "examples").to_list() == outside[:5]


def test_the_unknown_items_are_left_to_the_query_where_the_bits_do_not_hold_them() -> None:
    seen = SeenItems(MODULE)
    items = np.array([9, 10, -100], np.int64)
    seen.add(items, np.ones(3, np.uint8), lambda: np.unique(items))
    assert seen.missing_from(pl.Series("item", [9])) is None  # -100: not in the bits
    seen = SeenItems(MODULE)
    seen.add(items[:2], np.ones(2, np.uint8), lambda: np.unique(items[:2]))
    assert seen.missing_from(pl.Series("item", ["9"])) is None  # text ids
    found = seen.missing_from(pl.Series("item", [10, 100], dtype=pl.Int32))
    assert found is not None
    assert found.to_dicts() == [{"recommended": 2, "unknown": 1, "examples": [9]}]


def test_a_released_sets_bits_serve_the_next_set_cleared() -> None:
    """Ranges make a set each: the next takes the last one's bits, cleared, so a range
    neither finds the ids of the one before nor grows (and marks again) its bits."""
    first = SeenItems(MODULE)
    items = np.array([5, 700, 9], np.int64)
    first.add(items, np.ones(3, np.uint8), lambda: np.unique(items))
    bits = first.bits
    first.release()
    assert len(first.bits) == 0
    assert first.series().to_list() == []
    second = SeenItems(MODULE)
    assert second.bits is bits  # the same words, no new pages
    assert not second.bits.any()
    second.add(items[:1], np.ones(1, np.uint8), lambda: items[:1])
    assert second.series().to_list() == [5]
    assert second.bits is bits  # 5 fits: not grown
    assert SeenItems(MODULE).bits is not bits  # one set at a time holds them
