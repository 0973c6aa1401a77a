"""Significance for comparing recommender models user by user: numpy only, no scipy.
Over 400 lines: one job, numpy-only statistics (bootstraps, intervals, paired tests,
corrections); the normal, t and beta functions written out in place of scipy's take most
of it.

Conventions shared by every function:

- A per-user value of NaN means "this user does not count" (for that metric): bootstraps,
  intervals and the paired tests leave such entries out (the paired tests drop them, like
  scipy's ``nan_policy='omit'``).
- Paired tests take the per-user differences ``d_i = metric_A(user i) - metric_B(user i)``
  and return a two-sided p-value as a Python float.
- Resampling is seeded (``np.random.default_rng(seed)``) so results are reproducible, and
  vectorised: the only Python loops run over chunks of resamples (bounded memory) or over at
  most 50 ranks (the exact Wilcoxon distribution), never over users or single resamples.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

Floats = NDArray[np.float64]

# Wilcoxon: scipy's method='auto' uses the exact null distribution up to this many
# observations (zeros included) ...
_WILCOXON_EXACT_MAX_N = 50
# ... and, when there are ties or zeros, an exact sign-flip permutation test up to this many.
_WILCOXON_PERMUTATION_MAX_N = 13
# Elements of one chunk's sign matrix in the sign-flip test (bounded memory).
_SIGN_FLIP_CHUNK_ELEMENTS = 1 << 22
# Relative tolerance for "as extreme as observed" in the sign-flip test.
_SIGN_FLIP_RTOL = 1e-12
# Continued fraction of the incomplete beta function.
_CF_MAX_ITERATIONS = 100_000
_CF_EPS = 1e-16
_CF_TINY = 1e-300


# --------------------------------------------------------------------------------------
# Bootstrap
# --------------------------------------------------------------------------------------


def _check_bootstrap_args(values: Floats, resamples: int, chunk: int) -> None:
    if values.ndim != 2:
        raise ValueError(f"values must be 2-D (n_users, n_metrics), got shape {values.shape}")
    if resamples < 0:
        raise ValueError(f"resamples must be >= 0, got {resamples}")
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")


def _bootstrap_totals(
    values: Floats, resamples: int, seed: int, chunk: int
) -> tuple[Floats, Floats]:
    """Per resample and metric: (sum of the resampled non-NaN values, how many there are).

    Resample ``b`` draws ``n_users`` users with replacement: ``n_users`` uniform indices
    from ``rng.integers`` (``rng = np.random.default_rng(seed)``, a chunk of resamples per
    call), and ``counts[b, u]`` is how often user ``u`` was drawn (one ``np.bincount`` per
    chunk). This is the classic bootstrap's multinomial, about ten times faster than
    ``rng.multinomial``; the draws do not depend on ``chunk`` (numpy draws the indices one
    after the other). Then

        total[b, m] = sum_u counts[b, u] * (0 if isnan(values[u, m]) else values[u, m])
        number[b, m] = sum_u counts[b, u] * (not isnan(values[u, m]))

    computed as one matrix product per chunk, so memory is O(chunk * n_users).
    """
    _check_bootstrap_args(values, resamples, chunk)
    n_users, n_metrics = values.shape
    if n_users == 0:
        nothing = np.zeros((resamples, n_metrics), dtype=np.float64)
        return nothing, nothing.copy()
    missing = np.isnan(values)
    # [filled values | validity mask]: both totals from one product.
    both = np.concatenate([np.where(missing, 0.0, values), (~missing).astype(np.float64)], 1)
    rng = np.random.default_rng(seed)
    out = np.empty((resamples, 2 * n_metrics), dtype=np.float64)
    for start in range(0, resamples, chunk):
        stop = min(start + chunk, resamples)
        rows = stop - start
        drawn = rng.integers(0, n_users, size=(rows, n_users))
        drawn += np.arange(rows, dtype=drawn.dtype)[:, None] * n_users  # one block per row
        counts = np.bincount(drawn.ravel(), minlength=rows * n_users).reshape(rows, n_users)
        out[start:stop] = counts.astype(np.float64) @ both
    return out[:, :n_metrics], out[:, n_metrics:]


def bootstrap_means(values: Floats, resamples: int, seed: int, chunk: int = 64) -> Floats:
    """Bootstrap distribution of each metric's mean over users.

    ``values`` is (n_users, n_metrics), NaN where a user does not count for a metric. Each
    resample draws users with replacement, the same draw for every metric (so metrics, and
    models evaluated on the same users, stay paired); with ``counts[b, u]`` the times user
    ``u`` is drawn in resample ``b`` (multinomial, see ``_bootstrap_totals``):

        mean[b, m] = sum_u counts[b, u] * values[u, m] / sum_u counts[b, u]

    over the users with a non-NaN ``values[u, m]``; NaN when resample ``b`` drew none of them.
    Returns (resamples, n_metrics). Memory is bounded by ``chunk * n_users``.
    """
    total, number = _bootstrap_totals(values, resamples, seed, chunk)
    means = np.full_like(total, np.nan)
    np.divide(total, number, out=means, where=number > 0)
    return means


def bootstrap_sums(values: Floats, resamples: int, seed: int, chunk: int = 64) -> Floats:
    """Bootstrap distribution of each metric's sum over users (count metrics).

    As ``bootstrap_means`` (same draws for the same seed), but each resample's sum
    ``sum_u counts[b, u] * values[u, m]`` over the non-NaN entries; NaN when resample ``b``
    drew no user with a non-NaN value (the metric is undefined there, as it would be on data
    where no user counts). Returns (resamples, n_metrics).
    """
    total, number = _bootstrap_totals(values, resamples, seed, chunk)
    return np.where(number > 0, total, np.nan)


# --------------------------------------------------------------------------------------
# Confidence intervals
# --------------------------------------------------------------------------------------


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")


def percentile_interval(samples: Floats, level: float) -> tuple[Floats, Floats]:
    """Percentile bootstrap interval per column of ``samples`` (resamples, k).

    Lower and upper bounds are the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of
    each column's non-NaN entries, with numpy's default (linear) interpolation: for sorted
    ``x_0 <= ... <= x_{n-1}`` and ``h = (n - 1) q``, ``x_floor(h) + (h - floor(h)) *
    (x_floor(h)+1 - x_floor(h))`` (``np.nanquantile``). A column with no non-NaN entry gives
    NaN bounds.
    """
    _check_level(level)
    if samples.ndim != 2:
        raise ValueError(f"samples must be 2-D (resamples, k), got shape {samples.shape}")
    lower = np.full(samples.shape[1], np.nan)
    upper = np.full(samples.shape[1], np.nan)
    some = ~np.all(np.isnan(samples), axis=0)  # np.nanquantile warns on all-NaN columns
    if np.any(some):
        q = np.array([(1.0 - level) / 2.0, (1.0 + level) / 2.0])
        bounds = np.nanquantile(samples[:, some], q, axis=0)
        lower[some], upper[some] = bounds[0], bounds[1]
    return lower, upper


def normal_interval(values: Floats, level: float) -> tuple[Floats, Floats]:
    """Normal (Wald) interval for each column's mean; NaN entries do not count.

    With ``n`` the column's non-NaN count, ``mean`` their mean and ``sd`` their standard
    deviation with ``ddof=1``: ``mean -/+ z * sd / sqrt(n)`` where ``z = Phi^-1((1 + level)
    / 2)`` is the standard normal quantile (``_norm_ppf``). NaN bounds when ``n < 2``.
    ``values`` may be (n,) or (n, k); bounds have shape () or (k,) accordingly.
    """
    _check_level(level)
    valid = ~np.isnan(values)
    n = valid.sum(axis=0).astype(np.float64)
    filled = np.where(valid, values, 0.0)
    enough = n >= 2
    safe_n = np.where(enough, n, 2.0)
    mean = filled.sum(axis=0) / safe_n
    squares = np.where(valid, (values - mean) ** 2, 0.0).sum(axis=0)
    half = _norm_ppf((1.0 + level) / 2.0) * np.sqrt(squares / (safe_n - 1.0) / safe_n)
    lower = np.where(enough, mean - half, np.nan)
    upper = np.where(enough, mean + half, np.nan)
    return lower, upper


# Acklam's rational approximation of the inverse normal CDF (relative error < 1.15e-9).
_ACKLAM_A = (
    -3.969683028665376e01,
    2.209460984245205e02,
    -2.759285104469687e02,
    1.383577518672690e02,
    -3.066479806614716e01,
    2.506628277459239e00,
)
_ACKLAM_B = (
    -5.447609879822406e01,
    1.615858368580409e02,
    -1.556989798598866e02,
    6.680131188771972e01,
    -1.328068155288572e01,
)
_ACKLAM_C = (
    -7.784894002430293e-03,
    -3.223964580411365e-01,
    -2.400758277161838e00,
    -2.549732539343734e00,
    4.374664141464968e00,
    2.938163982698783e00,
)
_ACKLAM_D = (
    7.784695709041462e-03,
    3.224671290700398e-01,
    2.445134137142996e00,
    3.754408661907416e00,
)
_ACKLAM_P_LOW = 0.02425


def _polynomial(coefficients: tuple[float, ...], x: float) -> float:
    """Horner: ``c_0 x^(k-1) + c_1 x^(k-2) + ... + c_(k-1)``."""
    result = 0.0
    for c in coefficients:
        result = result * x + c
    return result


def _norm_ppf_lower(p: float) -> float:
    """Acklam's approximation of ``Phi^-1(p)`` for ``0 < p <= 0.5``, then one Halley step.

    Halley on ``f(x) = Phi(x) - p``: ``e = Phi(x) - p`` (``Phi(x) = erfc(-x / sqrt 2) / 2``,
    accurate in the lower tail), ``u = e / phi(x) = e sqrt(2 pi) exp(x^2 / 2)``,
    ``x <- x - u / (1 + x u / 2)``; the cubic convergence takes 1e-9 to machine precision.
    """
    if p < _ACKLAM_P_LOW:
        q = math.sqrt(-2.0 * math.log(p))
        x = _polynomial(_ACKLAM_C, q) / (_polynomial(_ACKLAM_D, q) * q + 1.0)
    else:
        q = p - 0.5
        r = q * q
        x = _polynomial(_ACKLAM_A, r) * q / (_polynomial(_ACKLAM_B, r) * r + 1.0)
    e = 0.5 * math.erfc(-x / math.sqrt(2.0)) - p
    u = e * math.sqrt(2.0 * math.pi) * math.exp(0.5 * x * x)
    return x - u / (1.0 + 0.5 * x * u)


def _norm_ppf(p: float) -> float:
    """Standard normal quantile ``Phi^-1(p)`` (``-inf``/``inf`` at 0/1), by symmetry
    ``Phi^-1(p) = -Phi^-1(1 - p)`` from the lower half, where ``1 - p`` is exact."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"probability must be in [0, 1], got {p}")
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    if p > 0.5:
        return -_norm_ppf_lower(1.0 - p)
    return _norm_ppf_lower(p)


# --------------------------------------------------------------------------------------
# Paired t test (Student t tail via the regularized incomplete beta function)
# --------------------------------------------------------------------------------------


def _lgamma_stirling_tail(x: float) -> float:
    """``log Gamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2)``, Stirling series, x >= 30."""
    x2 = x * x
    return (
        1.0
        / x
        * (1 / 12 - 1 / x2 * (1 / 360 - 1 / x2 * (1 / 1260 - 1 / x2 * (1 / 1680 - 1 / x2 / 1188))))
    )


def _log_beta(a: float, b: float) -> float:
    """``log B(a, b) = log Gamma(a) + log Gamma(b) - log Gamma(a + b)``.

    With ``big = max(a, b) >= 30`` the difference ``log Gamma(big) - log Gamma(big + s)``
    (``s = min(a, b)``) is taken from Stirling's series to avoid cancelling large values:
    ``-(big - 1/2) log1p(s / big) - s log(big + s) + s + delta(big) - delta(big + s)``.
    """
    small, big = min(a, b), max(a, b)
    if big < 30.0:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    ratio = (
        -(big - 0.5) * math.log1p(small / big)
        - small * math.log(big + small)
        + small
        + _lgamma_stirling_tail(big)
        - _lgamma_stirling_tail(big + small)
    )
    return math.lgamma(small) + ratio


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """Continued fraction of ``I_x(a, b)`` (modified Lentz), fast for x < (a+1)/(a+b+2).

    ``I_x(a, b) = x^a (1-x)^b / (a B(a, b)) * 1 / (1 + d_1 / (1 + d_2 / (1 + ...)))`` with
    ``d_(2m+1) = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1))`` and
    ``d_(2m) = m (b-m) x / ((a+2m-1)(a+2m))``; returns the fraction's value.
    """
    c = 1.0
    d = 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _CF_TINY else _CF_TINY)
    h = d
    for m in range(1, _CF_MAX_ITERATIONS + 1):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1.0) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1.0)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _CF_TINY else _CF_TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _CF_TINY else _CF_TINY
            h *= d * c
        if abs(d * c - 1.0) < _CF_EPS:
            return h
    raise ArithmeticError(f"incomplete beta continued fraction did not converge ({a}, {b}, {x})")


def _log(x: float, one_minus_x: float) -> float:
    """``log x``, from ``log1p(-(1 - x))`` when x is close to 1 (accurate when ``1 - x`` is)."""
    return math.log1p(-one_minus_x) if x > 0.5 else math.log(x)


def _betainc(a: float, b: float, x: float, y: float) -> float:
    """Regularized incomplete beta ``I_x(a, b)``, given ``x`` and ``y = 1 - x`` (both
    accurate, so that tails close to x = 1 keep their relative precision).

    Uses the continued fraction where it converges fast and the symmetry
    ``I_x(a, b) = 1 - I_(1-x)(b, a)`` elsewhere (Numerical Recipes, 6.4).
    """
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - _betainc(b, a, y, x)
    log_front = a * _log(x, y) + b * _log(y, x) - _log_beta(a, b) - math.log(a)
    return math.exp(log_front) * _beta_continued_fraction(a, b, x)


def student_t_two_sided(t: float, df: float) -> float:
    """``P(|T| >= |t|)`` for Student's t with ``df`` degrees of freedom:
    ``I_(df / (df + t^2))(df / 2, 1 / 2)``."""
    if math.isinf(t):
        return 0.0
    t2 = t * t
    return _betainc(df / 2.0, 0.5, df / (df + t2), t2 / (df + t2))


def _finite(differences: Floats) -> Floats:
    """The differences as a 1-D float array, NaN (users that do not count) dropped."""
    d = np.asarray(differences, dtype=np.float64).ravel()
    return d[~np.isnan(d)]


def paired_t_test(differences: Floats) -> float:
    """Two-sided p-value of the paired (one-sample) t test of ``mean(d) == 0``.

    ``t = mean(d) / (sd(d) / sqrt(n))`` (sd with ddof=1), ``p = P(|T_(n-1)| >= |t|)``, as
    ``scipy.stats.ttest_1samp(d, 0)``; the t tail comes from our own incomplete beta
    function (relative error about 1e-13). NaN differences are dropped. Conventions where
    scipy gives NaN: ``n < 2`` or every difference 0 -> 1.0; every difference equal and
    nonzero (sd 0, ``|t|`` infinite) -> 0.0.
    """
    d = _finite(differences)
    n = d.size
    if n < 2 or not np.any(d):
        return 1.0
    if np.all(d == d[0]):
        return 0.0
    mean = float(d.mean())
    variance = float(np.sum((d - mean) ** 2)) / (n - 1)
    t = mean / math.sqrt(variance / n)
    return student_t_two_sided(t, n - 1.0)


# --------------------------------------------------------------------------------------
# Wilcoxon signed-rank test
# --------------------------------------------------------------------------------------


def _doubled_ranks(magnitudes: Floats) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Twice the average ranks (1-based, ties averaged) of ``magnitudes``, in input order,
    and the sizes of the tie groups. A group at sorted positions ``i..j`` (0-based) has
    average rank ``(i + j) / 2 + 1``, doubled ``i + j + 2`` (an integer)."""
    order = np.argsort(magnitudes, kind="stable")
    ordered = magnitudes[order]
    starts = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]]))
    sizes = np.diff(np.append(starts, magnitudes.size))
    doubled_sorted = np.repeat(2 * starts + sizes + 1, sizes)
    doubled = np.empty(magnitudes.size, dtype=np.int64)
    doubled[order] = doubled_sorted
    return doubled, sizes.astype(np.int64)


def _subset_sum_counts(weights: NDArray[np.int64]) -> NDArray[np.int64]:
    """``counts[s]`` = how many of the ``2^n`` sign patterns give positive-part sum ``s``:
    the number of subsets of ``weights`` summing to ``s`` (dynamic programming, one step
    per weight: ``counts'[s] = counts[s] + counts[s - w]``). Exact in int64 for n <= 50
    (at most 2^50 patterns)."""
    counts = np.zeros(int(weights.sum()) + 1, dtype=np.int64)
    counts[0] = 1
    for w in weights.tolist():  # one step per rank (n <= 50); ranks are >= 1
        counts[w:] = counts[w:] + counts[:-w]
    return counts


def _wilcoxon_exact_p(doubled: NDArray[np.int64], doubled_r_plus: int) -> float:
    """Two-sided p of the sign-flip null distribution of ``R+`` (exact: all ``2^n``
    patterns): ``min(1, 2 min(P(R+ <= r), P(R+ >= r)))`` with ``r`` the observed value.

    Summing the lower tail only keeps small p-values precise: by symmetry
    ``P(R+ >= r) = P(R+ <= total - r)``. Without ties this is scipy's exact method, with
    ties or zeros scipy's exact permutation test (it flips the zeros too, which changes
    nothing: both counts double per zero)."""
    counts = _subset_sum_counts(doubled)
    total = counts.size - 1
    tail = int(counts[: min(doubled_r_plus, total - doubled_r_plus) + 1].sum())
    return min(1.0, 2.0 * tail / 2.0**doubled.size)


def _wilcoxon_normal_p(doubled: NDArray[np.int64], doubled_r_plus: int, ties: Floats) -> float:
    """Two-sided p of the normal approximation, without continuity correction:
    ``z = (R+ - n(n+1)/4) / sqrt((n(n+1)(2n+1) - sum(t^3 - t)/2) / 24)`` with ``t`` the tie
    group sizes; ``p = 2 Phi(-|z|) = erfc(|z| / sqrt 2)``."""
    n = float(doubled.size)
    variance = (n * (n + 1.0) * (2.0 * n + 1.0) - float(np.sum(ties**3 - ties)) / 2.0) / 24.0
    z = (doubled_r_plus / 2.0 - n * (n + 1.0) / 4.0) / math.sqrt(variance)
    return math.erfc(abs(z) / math.sqrt(2.0))


def wilcoxon_signed_rank(differences: Floats) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test, as ``scipy.stats.wilcoxon(d)``
    (scipy 1.17 defaults: zero_method='wilcox', correction=False, method='auto').

    Zeros are dropped; the ``n`` nonzero ``|d|`` are ranked (ties get average ranks) and
    ``R+`` is the sum of the ranks of the positive differences (scipy reports
    ``min(R+, R-)`` as the statistic; the two-sided p is the same). scipy's 'auto' rule,
    where ``N`` counts the differences *including* zeros:

    - ``N <= 50``, no zeros and no ties: the exact null distribution of ``R+``;
    - ``N <= 13`` with zeros or ties: the exact sign-flip permutation distribution of
      ``R+`` (scipy enumerates all ``2^N`` patterns there);
    - otherwise the normal approximation with the tie-corrected variance.

    The exact branches use ``min(1, 2 min(P(R+ <= r), P(R+ >= r)))``. NaN differences are
    dropped; every difference 0 (or none left) -> 1.0.
    """
    d = _finite(differences)
    nonzero = d[d != 0]
    if nonzero.size == 0:
        return 1.0
    doubled, ties = _doubled_ranks(np.abs(nonzero))
    doubled_r_plus = int(doubled[nonzero > 0].sum())
    has_ties = bool(np.any(ties > 1))
    has_zeros = nonzero.size < d.size
    if d.size <= _WILCOXON_EXACT_MAX_N and not (has_ties or has_zeros):
        return _wilcoxon_exact_p(doubled, doubled_r_plus)
    if d.size <= _WILCOXON_PERMUTATION_MAX_N:
        return _wilcoxon_exact_p(doubled, doubled_r_plus)
    return _wilcoxon_normal_p(doubled, doubled_r_plus, ties.astype(np.float64))


# --------------------------------------------------------------------------------------
# Sign-flip permutation test
# --------------------------------------------------------------------------------------


def _count_as_extreme(signs: Floats, d: Floats, threshold: float) -> int:
    """How many rows ``s`` of ``signs`` give ``|s . d| >= threshold``."""
    return int(np.count_nonzero(np.abs(signs @ d) >= threshold))


def _all_sign_patterns(start: int, stop: int, n: int) -> Floats:
    """Sign patterns ``start..stop-1`` of the ``2^n``: bit ``j`` of the pattern's index set
    means observation ``j`` is flipped."""
    index = np.arange(start, stop, dtype=np.int64)[:, None]
    bits = (index >> np.arange(n, dtype=np.int64)) & 1
    return 1.0 - 2.0 * bits.astype(np.float64)


def _random_sign_patterns(rng: np.random.Generator, size: int, n: int) -> Floats:
    """``size`` uniform patterns in ``{-1, 1}^n``: the bits of random bytes
    (``rng.integers(0, 256, dtype=uint8)``, ``ceil(n / 8)`` per pattern), bit 1 = flipped."""
    packed = rng.integers(0, 256, size=(size, (n + 7) // 8), dtype=np.uint8)
    return 1.0 - 2.0 * np.unpackbits(packed, axis=1, count=n).astype(np.float64)


def sign_flip_test(differences: Floats, resamples: int, seed: int) -> float:
    """Two-sided paired permutation test of ``mean(d) == 0`` by random sign flips.

    Under the null each ``d_i`` is as likely as ``-d_i``. With ``n`` differences (NaN
    dropped), a pattern ``s`` in ``{-1, 1}^n`` counts as extreme when
    ``|mean(s * d)| >= |mean(d)| - 1e-12 * mean(|d|)`` (``mean(|d|)`` bounds the statistic;
    the tolerance absorbs rounding of theoretically equal means).

    - ``2^n <= resamples``: all ``2^n`` patterns are enumerated and ``p = #extreme / 2^n``,
      as ``scipy.stats.permutation_test(..., permutation_type='samples')`` when it
      enumerates (its ``2 min(p_less, p_greater)`` equals this count since the null
      distribution is symmetric).
    - otherwise ``resamples`` patterns are drawn uniformly (random bits from
      ``rng = np.random.default_rng(seed)``, in chunks of resamples) and
      ``p = (1 + #extreme) / (resamples + 1)``.

    ``n == 0`` -> 1.0.
    """
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    d = _finite(differences)
    n = d.size
    if n == 0:
        return 1.0
    # Sums instead of means: the same comparison multiplied by n.
    threshold = abs(float(d.sum())) - _SIGN_FLIP_RTOL * float(np.abs(d).sum())
    chunk = max(1, _SIGN_FLIP_CHUNK_ELEMENTS // n)
    if n < 63 and 1 << n <= resamples:
        patterns = 1 << n
        extreme = sum(
            _count_as_extreme(
                _all_sign_patterns(start, min(start + chunk, patterns), n), d, threshold
            )
            for start in range(0, patterns, chunk)
        )
        return extreme / patterns
    rng = np.random.default_rng(seed)
    extreme = 0
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        extreme += _count_as_extreme(_random_sign_patterns(rng, size, n), d, threshold)
    return (1 + extreme) / (resamples + 1)


# --------------------------------------------------------------------------------------
# Multiple comparisons
# --------------------------------------------------------------------------------------


def holm(p_values: Floats) -> Floats:
    """Holm-Bonferroni (step-down) adjusted p-values, in the input's order.

    With the ``m`` non-NaN p-values sorted ``p_(1) <= ... <= p_(m)``:
    ``adj_(i) = min(1, max_(j <= i) (m - j + 1) p_(j))`` (the running maximum makes them
    monotone). Rejecting ``adj <= alpha`` is Holm's procedure at level ``alpha``. NaN stays
    NaN and does not count in ``m``.
    """
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    m = valid.size
    order = valid[np.argsort(p[valid], kind="stable")]
    scaled = (m - np.arange(m)) * p[order]
    out[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return out


def bonferroni(p_values: Floats) -> Floats:
    """Bonferroni adjusted p-values ``min(1, p * m)``, ``m`` the number of non-NaN p-values
    (NaN stays NaN)."""
    p = np.asarray(p_values, dtype=np.float64)
    m = int(np.count_nonzero(~np.isnan(p)))
    return np.minimum(1.0, p * m)
