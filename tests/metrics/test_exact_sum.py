"""exact_sum.py: sums equal to the exact rational sum, whatever the order and grouping."""

from __future__ import annotations

import math
import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval_cli.compiled import extension
from receval_cli.metrics import exact_sum as module
from receval_cli.metrics.exact_sum import (
    SCALE_BITS,
    ExactSum,
    exact_sum,
    exact_sums,
    grouped_exact_sums,
)

FINITE = st.floats(allow_nan=False, allow_infinity=False)


def rational(values: list[float]) -> Fraction:
    return sum((Fraction(v) for v in values), Fraction(0))


@contextmanager
def numpy_path() -> Iterator[None]:
    """The sums without the compiled core (RECEVAL_CORE=polars): numpy's bincounts."""
    saved = os.environ.get("RECEVAL_CORE")
    os.environ["RECEVAL_CORE"] = "polars"
    try:
        yield
    finally:
        if saved is None:
            del os.environ["RECEVAL_CORE"]
        else:
            os.environ["RECEVAL_CORE"] = saved


def both_paths(values: np.ndarray) -> list[ExactSum]:
    """The exact sum as this machine computes it (the compiled core where built) and as
    numpy does."""
    found = exact_sum(values)
    with numpy_path():
        return [found, exact_sum(values)]


@settings(max_examples=300)
@given(st.lists(FINITE, max_size=60))
def test_the_sum_is_exact(values: list[float]) -> None:
    """Any finite floats, subnormals and near-overflow values included, on both paths."""
    for found in both_paths(np.array(values, dtype=np.float64)):
        assert Fraction(found.scaled, 1 << SCALE_BITS) == rational(values)
        assert found.fraction() == rational(values)


@pytest.mark.skipif(extension() is None, reason="the compiled core is not built here")
def test_the_compiled_sum_is_numpys_on_every_kind_of_value() -> None:
    """Both paths give the same ExactSum: random bit patterns (NaN, infinities, subnormals
    of both signs), the largest values again and again (the lanes' carries), and more than
    2^20 values (the carries moved up during the pass, not only at its end)."""
    rng = np.random.default_rng(7)
    largest = np.finfo(np.float64).max
    columns = [
        rng.integers(-(2**63), 2**63, size=20_000, dtype=np.int64).view(np.float64),
        np.concatenate([np.full(5000, largest), np.full(3000, -largest), [5e-324, -0.0]]),
        rng.normal(size=3_000_000) * 10.0 ** rng.integers(-300, 300, size=3_000_000),
        np.full(2_500_000, largest),
        np.array([]),
    ]
    for column in columns:
        compiled, by_numpy = both_paths(column)
        assert compiled == by_numpy
    assert both_paths(np.full(2_500_000, largest))[0].fraction() == Fraction(largest) * 2_500_000


@settings(max_examples=200)
@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=60), st.integers(1, 7))
def test_parts_add_up_to_the_whole_and_the_mean_is_rounded_once(
    values: list[float], parts: int
) -> None:
    shuffled = values[:]
    random.Random(parts).shuffle(shuffled)
    split = [exact_sum(np.array(shuffled[i::parts])) for i in range(parts)]
    whole = exact_sum(np.array(values))
    assert sum(split, ExactSum()) == whole
    expected = rational(values) / len(values)
    assert whole.mean(len(values)) == float(expected)  # Fraction -> float rounds correctly


def test_long_inputs_take_every_path() -> None:
    """The split path in several chunks, the integer path (subnormals, huge values)."""
    rng = np.random.default_rng(11)
    columns = [
        rng.random(5000),
        rng.random(5000) * 2 - 1,
        np.concatenate([rng.random(100), [5e-324, -2.5e-310]]),
        np.concatenate([rng.normal(size=100) * 1e300, [1.7e308, -1.7e308]]),
        np.round(rng.random(3000), 2) / 7,
    ]
    saved = module._CHUNK
    try:
        module._CHUNK = 97
        chunked = exact_sums(list(columns))
    finally:
        module._CHUNK = saved
    for column, found in zip(columns, chunked, strict=True):
        assert found.fraction() == rational(column.tolist())
        assert found == exact_sum(column)


def test_non_finite_values_decide_as_ieee_addition_does() -> None:
    assert math.isnan(exact_sum(np.array([1.0, math.nan])).total())
    assert exact_sum(np.array([1.0, math.inf])).total() == math.inf
    assert exact_sum(np.array([-math.inf, 2.0])).total() == -math.inf
    assert math.isnan(exact_sum(np.array([math.inf, -math.inf])).total())
    assert exact_sum(np.array([1.7e308, 1.7e308])).total() == math.inf  # overflow
    assert exact_sum(np.array([1.7e308, 1.7e308])).mean(2) == 1.7e308


def test_series_nulls_are_left_out_and_json_round_trips() -> None:
    found = exact_sum(pl.Series([0.1, None, 0.2, 0.3]))
    assert found.fraction() == rational([0.1, 0.2, 0.3])
    assert found.mean(3) == float(rational([0.1, 0.2, 0.3]) / 3)
    assert ExactSum.from_json(found.to_json()) == found
    assert exact_sum(np.array([])).total() == 0.0


@pytest.mark.parametrize("values", [[0.1] * 10, [1e16, 1.0, -1e16], [3.0, 5.0]])
def test_hand_cases(values: list[float]) -> None:
    """0.1 ten times is 1.0000000000000000555...: its mean rounds to 0.1, not the 0.09999...
    of a float running sum; 1e16 + 1 - 1e16 is 1, not 0."""
    mean = exact_sum(np.array(values)).mean(len(values))
    assert mean == float(rational(values) / len(values))


@given(
    st.lists(
        st.tuples(FINITE | st.sampled_from([math.inf, -math.inf, math.nan]), st.integers(0, 4))
    ),
    st.integers(0, 3),
)
@settings(max_examples=200)
def test_grouped_sums_equal_each_groups_own_sum(pairs: list[tuple[float, int]], extra: int) -> None:
    """grouped_exact_sums (the segments of a bucket, one pass) gives each group what
    exact_sum gives it alone: the exact Fraction, whatever the exponents (subnormal, huge
    and non-finite values take the per-group path); groups without a value sum to 0."""
    count = 5 + extra
    values = np.array([v for v, _ in pairs], dtype=np.float64)
    codes = np.array([g for _, g in pairs], dtype=np.int64)
    found = grouped_exact_sums(values, codes, count)
    assert len(found) == count
    for group in range(count):
        mine = [v for v, g in pairs if g == group]
        assert found[group] == exact_sum(np.array(mine, dtype=np.float64)), group
        if mine and all(math.isfinite(v) for v in mine):
            assert found[group].fraction() == sum(map(Fraction, mine), Fraction(0))


def test_grouped_sums_of_many_small_groups() -> None:
    """Thousands of groups of normal values (the fast path: one bincount over (group,
    exponent) cells), checked against Fractions."""
    rng = random.Random(11)
    values = [rng.uniform(-1, 1) * 10 ** rng.randint(-8, 8) for _ in range(20_000)]
    codes = [rng.randrange(3_000) for _ in values]
    found = grouped_exact_sums(np.array(values), np.array(codes), 3_000)
    expected = [Fraction(0)] * 3_000
    for value, code in zip(values, codes, strict=True):
        expected[code] += Fraction(value)
    assert [s.fraction() for s in found] == expected
