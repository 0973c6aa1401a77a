"""receval_cli.analysis.significance against scipy (a dev-only dependency), hand-computed values,
explicit loop implementations, and coverage by simulation. Every random input is seeded.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from lazy_modules import lazy
from numpy.typing import NDArray

from receval_cli.analysis.significance import (
    Floats,
    _norm_ppf,
    bonferroni,
    bootstrap_means,
    bootstrap_sums,
    holm,
    normal_interval,
    paired_t_test,
    percentile_interval,
    sign_flip_test,
    wilcoxon_signed_rank,
)

stats = lazy("scipy.stats")  # loaded by the first test that reads it (lazy_modules.py)

REL = 1e-9
ABS = 1e-12  # near 0 relative agreement is meaningless


def close(actual: float, expected: float) -> bool:
    return actual == pytest.approx(expected, rel=REL, abs=ABS)


def random_differences(rng: np.random.Generator, n: int, kind: int) -> Floats:
    """Per-user metric differences of several kinds: recommender-like discrete values
    (ties, zeros), rounded continuous values (ties), continuous values, shifted or not."""
    shift = float(rng.choice([0.0, 0.1, 0.3]))
    if kind == 0:
        values = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
        weights = np.array([1.0, 2.0, 4.0, 2.0, 1.0]) + shift * np.array([0, 0, 0, 1, 2])
        return rng.choice(values, size=n, p=weights / weights.sum())
    if kind == 1:
        return np.round(rng.normal(shift, 1.0, size=n), 1)
    if kind == 2:
        return rng.normal(shift, 1.0, size=n)
    return rng.exponential(1.0, size=n) - 1.0 + shift  # skewed, continuous


def difference_vectors(count: int, seed: int, sizes: tuple[int, int]) -> list[Floats]:
    rng = np.random.default_rng(seed)
    return [
        random_differences(rng, int(rng.integers(sizes[0], sizes[1] + 1)), i % 4)
        for i in range(count)
    ]


# --------------------------------------------------------------------------------------
# Paired t test
# --------------------------------------------------------------------------------------


def test_t_test_matches_scipy() -> None:
    checked = 0
    for d in difference_vectors(600, seed=1, sizes=(2, 200)):
        if np.all(d == d[0]):  # scipy: NaN or a rounding-noise t; our conventions below
            continue
        expected = float(stats.ttest_1samp(d, 0.0).pvalue)
        assert close(paired_t_test(d), expected), (d.tolist(), expected)
        checked += 1
    assert checked > 500


@pytest.mark.parametrize(
    ("shift", "n"), [(0.0, 100_000), (0.004, 100_000), (0.03, 100_000), (0.5, 40), (3.0, 30)]
)
def test_t_test_large_samples_and_tiny_p_values(shift: float, n: int) -> None:
    d = np.random.default_rng(2).normal(shift, 1.0, size=n)
    expected = float(stats.ttest_1samp(d, 0.0).pvalue)
    assert paired_t_test(d) == pytest.approx(expected, rel=REL, abs=1e-300)


def test_t_test_conventions() -> None:
    assert paired_t_test(np.array([])) == 1.0
    assert paired_t_test(np.array([0.7])) == 1.0
    assert paired_t_test(np.zeros(10)) == 1.0
    assert paired_t_test(np.full(10, 0.1)) == 0.0
    assert paired_t_test(np.full(2, -0.5)) == 0.0
    d = np.array([0.5, np.nan, -1.0, 1.0, 0.5, np.nan, 0.0, 1.0])
    expected = float(stats.ttest_1samp(d, 0.0, nan_policy="omit").pvalue)
    assert close(paired_t_test(d), expected)


# --------------------------------------------------------------------------------------
# Wilcoxon signed-rank test
# --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_wilcoxon_matches_scipy() -> None:
    checked = 0
    # 300 vectors: scipy's permutation branch (N <= 13 with ties or zeros) is slow.
    for d in difference_vectors(300, seed=3, sizes=(2, 200)):
        if not np.any(d):
            continue
        expected = float(stats.wilcoxon(d).pvalue)
        assert close(wilcoxon_signed_rank(d), expected), (d.tolist(), expected)
        checked += 1
    assert checked > 250


def scipy_wilcoxon(d: Floats, method: str) -> float:
    return float(stats.wilcoxon(d, method=method).pvalue)


# Each branch of scipy's method='auto': our p equals scipy's p with that method named.
# N counts the differences including zeros.
BRANCHES: list[tuple[str, Callable[[np.random.Generator], Floats], str]] = [
    # N <= 50, no ties, no zeros: exact null distribution
    ("exact small", lambda rng: rng.normal(0.4, 1.0, size=8), "exact"),
    ("exact n=50", lambda rng: rng.normal(0.4, 1.0, size=50), "exact"),
    ("exact tiny p", lambda rng: rng.normal(3.0, 1.0, size=40), "exact"),
    ("exact p=1", lambda _: np.array([1.0, -2.0, -3.0, 4.0]), "exact"),
    # N <= 13 with ties or zeros: exact permutation test
    ("ties n=13", lambda rng: rng.choice([-1.0, -0.5, 0.5, 1.0], size=13), "permutation"),
    ("zeros n=10", lambda rng: rng.choice([-1.0, 0.0, 0.5, 1.0, 2.0], size=10), "permutation"),
    ("one zero", lambda rng: np.append(rng.normal(0.5, 1.0, size=7), 0.0), "permutation"),
    ("half ranks", lambda _: np.array([1.0, 1.0, -2.0, 3.0, 3.0, 3.0, 0.0]), "permutation"),
    # N > 50 (ties or not), or ties/zeros with N > 13: normal approximation
    ("continuous n=51", lambda rng: rng.normal(0.3, 1.0, size=51), "asymptotic"),
    ("ties n=14", lambda rng: rng.choice([-1.0, -0.5, 0.5, 1.0], size=14), "asymptotic"),
    ("one zero n=20", lambda rng: np.append(rng.normal(0.5, 1.0, size=19), 0), "asymptotic"),
    (
        "discrete n=5000",
        lambda rng: rng.choice(
            [-1.0, -0.5, 0.0, 0.5, 1.0], size=5000, p=[0.1, 0.2, 0.35, 0.2, 0.15]
        ),
        "asymptotic",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "make", "method"), BRANCHES, ids=[b[0] for b in BRANCHES])
def test_wilcoxon_branches(
    name: str, make: Callable[[np.random.Generator], Floats], method: str
) -> None:
    d = make(np.random.default_rng(4))
    ours = wilcoxon_signed_rank(d)
    assert close(ours, scipy_wilcoxon(d, "auto")), name
    # scipy's permutation branch is slow (about 2 s at N = 13: its statistic is not
    # vectorised), so it is identified by elimination: it matches 'auto' and neither other.
    if method != "permutation":
        assert close(ours, scipy_wilcoxon(d, method)), name
    if d.size <= 60:  # scipy's exact distribution is slow for large N
        others = {"exact", "asymptotic"} - {method}
        differs = any(not close(ours, scipy_wilcoxon(d, m)) for m in others)
        assert differs or ours == 1.0, f"{name}: the branches agree here, this proves nothing"


def test_wilcoxon_exact_upper_tail_is_precise() -> None:
    # All 20 differences positive: R+ = 210, p = 2 / 2^20 exactly. (scipy computes this
    # upper tail as 1 - cdf and is only accurate to about 1e-16 in absolute terms.)
    d = np.arange(1.0, 21.0)
    assert wilcoxon_signed_rank(d) == 2.0 / 2**20
    assert wilcoxon_signed_rank(-d) == 2.0 / 2**20
    assert wilcoxon_signed_rank(d) == pytest.approx(scipy_wilcoxon(d, "auto"), abs=1e-15)


def test_wilcoxon_conventions() -> None:
    assert wilcoxon_signed_rank(np.zeros(5)) == 1.0
    assert wilcoxon_signed_rank(np.zeros(60)) == 1.0
    assert wilcoxon_signed_rank(np.array([])) == 1.0
    d = np.array([0.5, np.nan, -1.0, 1.0, 0.25, np.nan, 2.0, 1.5])
    assert close(wilcoxon_signed_rank(d), scipy_wilcoxon(d[~np.isnan(d)], "auto"))


# --------------------------------------------------------------------------------------
# Sign-flip permutation test
# --------------------------------------------------------------------------------------


def scipy_exact_sign_flip(d: Floats) -> float:
    result = stats.permutation_test(
        (d,),
        lambda x, axis: np.mean(x, axis=axis),
        permutation_type="samples",
        alternative="two-sided",
        n_resamples=np.inf,
        vectorized=True,
    )
    return float(result.pvalue)


def test_sign_flip_exact_matches_scipy() -> None:
    rng = np.random.default_rng(5)
    for i in range(80):
        n = 2 + i % 11  # scipy needs two observations
        d = random_differences(rng, n, i % 4)
        ours = sign_flip_test(d, resamples=2**n, seed=0)
        assert ours == pytest.approx(scipy_exact_sign_flip(d), abs=1e-15), d.tolist()
        # Any resamples >= 2^n enumerates: the seed plays no part.
        assert sign_flip_test(d, resamples=10**6, seed=1) == ours


def exact_sign_flip_integers(d: NDArray[np.int64]) -> float:
    """Independent reference for integer differences: the null distribution of
    sum(s_i d_i) by convolving the two-point distributions {-|d_i|, +|d_i|}."""
    total = int(np.abs(d).sum())
    counts = np.zeros(2 * total + 1, dtype=np.int64)  # index = sum + total
    counts[total] = 1
    for value in np.abs(d).tolist():
        counts = np.roll(counts, value) + np.roll(counts, -value)
    sums = np.arange(-total, total + 1)
    extreme = counts[np.abs(sums) >= abs(int(d.sum()))].sum()
    return float(extreme / 2.0 ** len(d))


def test_sign_flip_monte_carlo_within_three_standard_errors() -> None:
    rng = np.random.default_rng(6)
    resamples = 4000
    for trial in range(12):
        n = 20 + trial
        d = rng.choice([-2, -1, 0, 1, 2, 3], size=n, p=[0.15, 0.2, 0.25, 0.2, 0.15, 0.05])
        exact = exact_sign_flip_integers(d)
        if n == 20:  # the enumeration agrees with the independent reference
            assert sign_flip_test(d.astype(np.float64), 2**20, seed=0) == pytest.approx(exact)
        p = sign_flip_test(d.astype(np.float64), resamples, seed=trial)
        standard_error = math.sqrt(exact * (1 - exact) / resamples)
        assert abs(p - exact) <= 3 * standard_error + 1 / (resamples + 1), (trial, p, exact)


def test_sign_flip_conventions() -> None:
    assert sign_flip_test(np.array([]), 100, seed=0) == 1.0
    assert sign_flip_test(np.zeros(30), 100, seed=0) == 1.0  # every pattern is as extreme
    assert sign_flip_test(np.full(3, 0.2), 8, seed=0) == 2 / 8  # all +, all -
    assert sign_flip_test(np.full(40, 0.2), 999, seed=0) == 1 / 1000
    d = np.array([0.5, np.nan, -1.0, 1.0, 0.5])
    assert sign_flip_test(d, 16, seed=0) == scipy_exact_sign_flip(d[~np.isnan(d)])
    assert sign_flip_test(d, 15, seed=3) == sign_flip_test(d, 15, seed=3)
    with pytest.raises(ValueError, match="resamples"):
        sign_flip_test(d, 0, seed=0)


# --------------------------------------------------------------------------------------
# Multiple comparisons
# --------------------------------------------------------------------------------------


def test_holm_hand_example() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # Sorted: 0.005 ([3]), 0.01 ([0]), 0.03 ([2]), 0.04 ([1]); multipliers m - j + 1 = 4, 3, 2, 1:
    # 4 * 0.005 = 0.02, 3 * 0.01 = 0.03, 2 * 0.03 = 0.06, 1 * 0.04 = 0.04;
    # running maximum: 0.02, 0.03, 0.06, 0.06 (0.04 raised to 0.06: monotone);
    # back in input order: [0] -> 0.03, [1] -> 0.06, [2] -> 0.06, [3] -> 0.02.
    np.testing.assert_allclose(holm(p), [0.03, 0.06, 0.06, 0.02], rtol=1e-15)
    # Capped at 1: sorted 0.4, 0.7 -> 2 * 0.4 = 0.8, max(0.8, 0.7) = 0.8; and 0.6 -> 1.2 -> 1.
    np.testing.assert_allclose(holm(np.array([0.7, 0.4])), [0.8, 0.8], rtol=1e-15)
    np.testing.assert_allclose(holm(np.array([0.6, 0.9])), [1.0, 1.0], rtol=1e-15)
    # NaN stays NaN and does not count: m = 2 -> 2 * 0.01 = 0.02, max(0.02, 0.03) = 0.03.
    np.testing.assert_allclose(holm(np.array([0.03, np.nan, 0.01])), [0.03, np.nan, 0.02])
    assert holm(np.array([])).shape == (0,)


def holm_rejections(p: Floats, alpha: float) -> NDArray[np.bool_]:
    """Holm's step-down procedure itself: walk the sorted p-values, reject H_(j) while
    p_(j) <= alpha / (m - j + 1), stop at the first that is not."""
    order = np.argsort(p, kind="stable")
    rejected = np.zeros(p.size, dtype=bool)
    for j, index in enumerate(order):
        if p[index] > alpha / (p.size - j):
            break
        rejected[index] = True
    return rejected


def test_holm_adjusted_p_values_reproduce_the_procedure() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        m = int(rng.integers(1, 30))
        p = np.concatenate([rng.uniform(0, 1, size=m), rng.uniform(0, 0.01, size=m // 2)])
        p = rng.permutation(np.round(p, int(rng.integers(2, 6))))  # rounding makes ties
        adjusted = holm(p)
        assert np.all(adjusted >= p)
        assert np.all(adjusted <= 1.0)
        order = np.argsort(p, kind="stable")
        assert np.all(np.diff(adjusted[order]) >= 0)  # monotone in p
        for alpha in rng.uniform(0, 0.3, size=20):
            np.testing.assert_array_equal(adjusted <= alpha, holm_rejections(p, alpha))


def test_bonferroni() -> None:
    np.testing.assert_allclose(
        bonferroni(np.array([0.01, 0.2, 0.5, 0.001])), [0.04, 0.8, 1.0, 0.004], rtol=1e-15
    )
    np.testing.assert_allclose(bonferroni(np.array([0.01, np.nan])), [0.01, np.nan])
    p = np.random.default_rng(8).uniform(size=25)
    assert np.all(bonferroni(p) >= holm(p))  # Holm is uniformly more powerful


# --------------------------------------------------------------------------------------
# Bootstrap
# --------------------------------------------------------------------------------------


def loop_bootstrap(values: Floats, resamples: int, seed: int, chunk: int, mean: bool) -> Floats:
    """Explicit reference: the same draws of user indices, then each resample's users
    listed one by one (with repetition), NaN skipped, averaged or summed."""
    rng = np.random.default_rng(seed)
    n_users, n_metrics = values.shape
    rows = []
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        for indices in rng.integers(0, n_users, size=(size, n_users)):
            row = []
            for m in range(n_metrics):
                drawn = [
                    float(values[u, m]) for u in indices.tolist() if not math.isnan(values[u, m])
                ]
                if not drawn:
                    row.append(math.nan)
                else:
                    row.append(sum(drawn) / len(drawn) if mean else sum(drawn))
            rows.append(row)
    return np.array(rows, dtype=np.float64).reshape(resamples, n_metrics)


def small_values() -> Floats:
    rng = np.random.default_rng(9)
    values = rng.choice([0.0, 0.25, 0.5, 1.0], size=(7, 4))
    values[[0, 3], 0] = np.nan
    values[:, 2] = np.nan  # no user counts
    values[1:, 3] = np.nan  # only user 0 counts: resamples without user 0 are NaN
    return values


@pytest.mark.parametrize("chunk", [1, 3, 64])
@pytest.mark.parametrize("mean", [True, False])
def test_bootstrap_equals_explicit_loop(chunk: int, mean: bool) -> None:
    values = small_values()
    function = bootstrap_means if mean else bootstrap_sums
    result = function(values, 25, seed=11, chunk=chunk)
    expected = loop_bootstrap(values, 25, seed=11, chunk=chunk, mean=mean)
    assert result.shape == (25, 4)
    np.testing.assert_allclose(result, expected, rtol=1e-13, atol=0)  # NaN at the same places
    assert np.all(np.isnan(result[:, 2]))
    assert 0 < np.isnan(result[:, 3]).sum() < 25
    assert np.all((result[:, 3] == values[0, 3]) | np.isnan(result[:, 3])) or not mean


def test_bootstrap_draws_do_not_depend_on_chunk_and_follow_the_seed() -> None:
    values = np.random.default_rng(12).normal(size=(50, 3))
    a = bootstrap_means(values, 100, seed=1, chunk=7)
    np.testing.assert_allclose(a, bootstrap_means(values, 100, seed=1), rtol=1e-13)
    assert not np.allclose(a, bootstrap_means(values, 100, seed=2))
    # The same user draw for every metric: a metric and its copy give identical columns.
    b = bootstrap_means(np.column_stack([values[:, 0], values[:, 0]]), 30, seed=3)
    np.testing.assert_array_equal(b[:, 0], b[:, 1])
    # Sums are means times the users drawn (all of them when there is no NaN).
    np.testing.assert_allclose(bootstrap_sums(values, 100, seed=1), a * 50, rtol=1e-12)


def test_bootstrap_shapes_and_arguments() -> None:
    assert bootstrap_means(np.ones((5, 2)), 0, seed=0).shape == (0, 2)
    assert np.all(np.isnan(bootstrap_means(np.ones((0, 2)), 3, seed=0)))
    np.testing.assert_array_equal(bootstrap_means(np.ones((5, 2)), 3, seed=0), np.ones((3, 2)))
    with pytest.raises(ValueError, match="2-D"):
        bootstrap_means(np.ones(5), 3, seed=0)
    with pytest.raises(ValueError, match="chunk"):
        bootstrap_sums(np.ones((5, 2)), 3, seed=0, chunk=0)


# --------------------------------------------------------------------------------------
# Intervals
# --------------------------------------------------------------------------------------


def test_percentile_interval_equals_nanquantile() -> None:
    rng = np.random.default_rng(13)
    samples = rng.normal(size=(401, 5))
    samples[rng.uniform(size=samples.shape) < 0.1] = np.nan
    samples[:, 4] = np.nan
    for level in (0.5, 0.9, 0.95, 0.99):
        lower, upper = percentile_interval(samples, level)
        expected = np.nanquantile(samples[:, :4], [(1 - level) / 2, (1 + level) / 2], axis=0)
        np.testing.assert_array_equal(lower[:4], expected[0])
        np.testing.assert_array_equal(upper[:4], expected[1])
        assert np.isnan(lower[4])
        assert np.isnan(upper[4])
    with pytest.raises(ValueError, match="level"):
        percentile_interval(samples, 1.0)


def test_normal_interval_against_scipy_norm_ppf() -> None:
    rng = np.random.default_rng(14)
    values = rng.beta(2, 5, size=(300, 4))
    values[rng.uniform(size=values.shape) < 0.2] = np.nan
    values[1:, 3] = np.nan  # a single value: no sd
    for level in (0.5, 0.8, 0.95, 0.999):
        lower, upper = normal_interval(values, level)
        for m in range(3):
            x = values[~np.isnan(values[:, m]), m]
            half = stats.norm.ppf((1 + level) / 2) * np.std(x, ddof=1) / math.sqrt(x.size)
            assert lower[m] == pytest.approx(x.mean() - half, rel=1e-12)
            assert upper[m] == pytest.approx(x.mean() + half, rel=1e-12)
        assert np.isnan(lower[3])
        assert np.isnan(upper[3])


def test_inverse_normal_cdf_accuracy() -> None:
    probabilities = np.concatenate(
        [
            [1e-300, 1e-100, 1e-20, 1e-10, 0.02425, 0.5, 1 - 1e-10],
            np.random.default_rng(15).uniform(size=500),
            np.linspace(1e-6, 1 - 1e-6, 501),
        ]
    )
    for p in probabilities:
        assert _norm_ppf(float(p)) == pytest.approx(stats.norm.ppf(p), rel=1e-13, abs=1e-15)
    assert _norm_ppf(0.0) == -math.inf
    assert _norm_ppf(1.0) == math.inf


def coverage(
    draw: Callable[[np.random.Generator], Floats], true_mean: float, seed: int
) -> tuple[float, float]:
    """Share of 200 synthetic datasets (300 users) whose 95% percentile-bootstrap interval
    (400 resamples) and normal interval cover the true mean."""
    rng = np.random.default_rng(seed)
    bootstrap_hits = normal_hits = 0
    datasets = 200
    for index in range(datasets):
        values = draw(rng)[:, None]
        lower, upper = percentile_interval(bootstrap_means(values, 400, seed=index), 0.95)
        bootstrap_hits += bool(lower[0] <= true_mean <= upper[0])
        lower, upper = normal_interval(values, 0.95)
        normal_hits += bool(lower[0] <= true_mean <= upper[0])
    return bootstrap_hits / datasets, normal_hits / datasets


@pytest.mark.parametrize(
    ("name", "draw", "true_mean"),
    [
        ("Bernoulli(0.3)", lambda rng: rng.binomial(1, 0.3, size=300).astype(float), 0.3),
        ("Beta(2, 5)", lambda rng: rng.beta(2.0, 5.0, size=300), 2.0 / 7.0),
    ],
)
def test_interval_coverage_by_simulation(
    name: str, draw: Callable[[np.random.Generator], Floats], true_mean: float
) -> None:
    bootstrap_share, normal_share = coverage(draw, true_mean, seed=16)
    assert 0.91 <= bootstrap_share <= 0.99, name
    assert 0.91 <= normal_share <= 0.99, name
