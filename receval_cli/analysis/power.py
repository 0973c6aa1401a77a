"""Power of a comparison: how large a difference this test set can see, and how many users
a target difference needs.

For a model against the baseline on a per-user metric, the paired differences
d_u = model_u - baseline_u have a standard deviation sd over the n users both count. The
two-sided paired t-test at level alpha rejects mean(d) = 0 with probability (its power)

    power(delta) = P(|T| > t_c),  T ~ noncentral t(n - 1, delta sqrt(n) / sd),
    t_c the (1 - alpha/2) quantile of Student's t with n - 1 degrees of freedom,

when the true mean difference is delta (statsmodels' TTestPower, scipy's nct). The
minimum detectable difference (MDE) is the delta at which the power reaches the target
(0.8 by default); the users needed for a target difference are the smallest n whose
power reaches it, sd taken as measured. The noncentral t's distribution is computed
exactly up to quadrature: P(T <= t) = E[Phi(t S - lambda)], S = sqrt(V / nu) with V
chi-squared with nu degrees of freedom, integrated by Gauss-Legendre over S's range
(relative error below 1e-10 against scipy). The power is that of the paired t-test
whatever the comparison's test (Wilcoxon's and the permutation test's are close to it for
the sample sizes of recommender test sets, and have no closed form); alpha is a single
test's, before the correction for several comparisons. numpy only.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
from numpy.typing import NDArray

from receval_cli.analysis.significance import student_t_two_sided

Floats = NDArray[np.float64]

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(64)
_PHI = np.frompyfunc(lambda x: 0.5 * math.erfc(-x / math.sqrt(2.0)), 1, 1)
_SPREAD = 14.0  # S's range: its mean plus or minus this many standard deviations


def _range_of_s(nu: float) -> tuple[float, float]:
    """Where S = sqrt(V / nu) has its mass (V chi-squared with nu degrees of freedom)."""
    if nu > 2:
        sd = math.sqrt(1.0 / (2.0 * nu))
        return max(0.0, 1.0 - _SPREAD * sd), 1.0 + _SPREAD * sd
    return 0.0, 60.0  # a long right tail: chi(1) or chi(2) over sqrt(nu)


def _log_density(s: Floats, nu: float) -> Floats:
    return (
        math.log(2.0)
        + (nu / 2.0) * math.log(nu / 2.0)
        - math.lgamma(nu / 2.0)
        + (nu - 1.0) * np.log(np.maximum(s, 1e-300))
        - nu * s * s / 2.0
    )


def noncentral_t_cdf(t: float, nu: float, noncentrality: float) -> float:
    """P(T <= t) for T ~ noncentral t with nu degrees of freedom: E[Phi(t S - lambda)]
    by Gauss-Legendre over S's range, split where Phi(t s - lambda) turns from 0 to 1
    (around s = lambda / t, over a width of a few 1 / |t|) so that the turn is resolved."""
    low, high = _range_of_s(nu)
    cuts = {low, high}
    if t != 0:
        turn = noncentrality / t
        for width in (-12.0, -3.0, -0.5, 0.5, 3.0, 12.0):
            cuts.add(min(high, max(low, turn + width / abs(t))))
    for fraction in (0.25, 0.5, 0.75):  # the density's own shape
        cuts.add(low + fraction * (high - low))
    edges = sorted(cuts)
    total = 0.0
    for a, b in itertools.pairwise(edges):
        if b <= a:
            continue
        s = 0.5 * (b - a) * _NODES + 0.5 * (b + a)
        weights = 0.5 * (b - a) * _WEIGHTS * np.exp(_log_density(s, nu))
        total += float(np.sum(weights * _PHI(t * s - noncentrality).astype(np.float64)))
    return total


def t_quantile(p: float, nu: float) -> float:
    """The upper two-sided critical value: t with P(|T_nu| >= t) = p (bisection)."""
    low, high = 0.0, 1.0
    while student_t_two_sided(high, nu) > p:
        high *= 2.0
    for _ in range(200):
        middle = 0.5 * (low + high)
        if student_t_two_sided(middle, nu) > p:
            low = middle
        else:
            high = middle
        if high - low <= 1e-15 * high:
            break
    return 0.5 * (low + high)


def power(noncentrality: float, n: int, alpha: float) -> float:
    """The two-sided paired t-test's power at this noncentrality (delta sqrt(n) / sd)."""
    nu = n - 1.0
    critical = t_quantile(alpha, nu)
    inside = noncentral_t_cdf(critical, nu, noncentrality) - noncentral_t_cdf(
        -critical, nu, noncentrality
    )
    return 1.0 - inside


@functools.cache
def _noncentrality_for(target: float, n: int, alpha: float) -> float:
    """The noncentrality at which the power reaches `target` (bisection; monotone)."""
    low, high = 0.0, 1.0
    while power(high, n, alpha) < target:
        high *= 2.0
    for _ in range(100):
        middle = 0.5 * (low + high)
        if power(middle, n, alpha) < target:
            low = middle
        else:
            high = middle
        if high - low <= 1e-12 * high:
            break
    return high


def detectable_difference(sd: float, n: int, alpha: float, target: float) -> float | None:
    """The smallest mean difference the paired t-test detects with probability `target`
    over n users whose differences have this sd; None below 2 users."""
    if n < 2:
        return None
    return _noncentrality_for(target, n, alpha) * sd / math.sqrt(n)


def users_needed(difference: float, sd: float, alpha: float, target: float) -> int | None:
    """The fewest users (at least 2) with which the paired t-test detects a mean
    difference of `difference` with probability `target`, the differences' sd as given;
    None for a zero difference (never detected) or a zero sd (2 users suffice)."""
    if difference == 0:
        return None
    if sd == 0:
        return 2

    def enough(n: int) -> bool:
        return power(abs(difference) * math.sqrt(n) / sd, n, alpha) >= target

    high = 2
    while not enough(high):
        high *= 2
        if high > 2**40:
            return None
    low = high // 2
    while high - low > 1:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle
    return high


def effect_size_interval(
    mean: float, sd: float, n: int, level: float
) -> tuple[float, float] | None:
    """Cohen's d of paired differences (d_z = mean / sd) and its exact confidence interval
    at `level` (Steiger and Fouladi): the noncentralities at which the observed t is the
    interval's upper and lower quantile of the noncentral t, over sqrt(n). None below 2
    users or for a zero sd (every difference equal: no spread to scale by)."""
    if n < 2 or sd == 0:
        return None
    nu = n - 1.0
    observed = mean / (sd / math.sqrt(n))
    tail = (1.0 - level) / 2.0

    def solve(probability: float) -> float:
        """The noncentrality lambda with P(T <= observed; lambda) = probability: the
        CDF falls as lambda grows (bisection)."""
        low, high = observed - 10.0, observed + 10.0
        while noncentral_t_cdf(observed, nu, low) < probability:
            low -= 10.0 + abs(low)
        while noncentral_t_cdf(observed, nu, high) > probability:
            high += 10.0 + abs(high)
        for _ in range(200):
            middle = 0.5 * (low + high)
            if noncentral_t_cdf(observed, nu, middle) > probability:
                low = middle
            else:
                high = middle
            if high - low <= 1e-12 * max(1.0, abs(high)):
                break
        return 0.5 * (low + high)

    root = math.sqrt(n)
    return solve(1.0 - tail) / root, solve(tail) / root
