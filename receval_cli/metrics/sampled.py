"""Sampled metrics, corrected: Krichene and Rendle, "On Sampled Metrics for
Item Recommendation", KDD 2020.

Sampled evaluation ranks each user's one relevant item among m sampled negatives (RecBole's
uni100: m = 100): the predictions hold each user's m + 1 candidates with their scores,
the ground truth the relevant one. receval's ranking metrics on those lists are the
sampled metrics, as RecBole computes them (ndcg@10, hit_rate@10, mrr@10). They are biased
estimates of the same metrics over the whole catalog of n items: a relevant item at rank
r̃ among m + 1 sampled candidates would be at a much deeper rank r among n.

`corrected@k(metric=..., negatives=m, items=n)` is Krichene and Rendle's corrected metric:
each sampled rank r̃ = 1..m+1 gets the value x(r̃) that makes E[x(r̃) | r] closest to the
full metric M(r) over the true ranks r = 1..n (uniform over them), where r̃ - 1, the
sampled negatives ranked above the relevant item, is hypergeometric (m negatives drawn
without replacement from the n - 1, r - 1 of them above it: RecBole's sampling) or, with
sampling=with_replacement, Binomial(m, (r - 1)/(n - 1)) (the paper's model). The
estimators (their section 5), with A[r, r̃] = P(r̃ | r):

    cls   least squares: min over x of sum_r (E[x | r] - M(r))^2, i.e. A'A x = A'M
    bv    bias and variance: min over x of sum_r (E[x | r] - M(r))^2 + gamma Var(x | r),
          i.e. ((1 - gamma) A'A + gamma diag(A'1)) x = A'M (gamma 0.01 by default)
 A user whose list holds other than m + 1 candidates, or other
than one relevant item, has no value (left out of the mean).
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

import polars as pl

from receval_cli.errors import ConfigError
from receval_cli.metrics.registry import Param, Params, register
from receval_cli.metrics.stats import Stats

if TYPE_CHECKING:  # numpy is imported where a correction is computed: not with the registry
    import numpy as np
    from numpy.typing import NDArray

    Floats = NDArray[np.float64]

FULL_METRIC = Param(
    "metric",
    "the full metric estimated: ndcg (1/log2(r+1) within k), hit_rate (r <= k) or mrr "
    "(1/r within k), for one relevant item at rank r",
    choices=("ndcg", "hit_rate", "mrr"),
    default="ndcg",
)
NEGATIVES = Param(
    "negatives", "m, the sampled negatives beside each relevant item", positive_number=True
)
SAMPLING = Param(
    "sampling",
    "how the negatives were drawn: without_replacement (RecBole) or with_replacement",
    choices=("without_replacement", "with_replacement"),
    default="without_replacement",
)
ITEMS = Param("items", "n, the items of the whole catalog", positive_number=True)
CORRECTION = Param(
    "estimator",
    "bv (bias and variance, gamma) or cls (least squares)",
    choices=("bv", "cls"),
    default="bv",
)
GAMMA = Param(
    "gamma",
    "bv: the weight of the variance against the squared bias, in (0, 1)",
    default=0.01,
    share=True,
    below_one=True,
)
_CHUNK = 65_536  # true ranks per block of A (A is n x (m + 1): never held whole)


def full_metric(metric: str, k: int | None, ranks: Floats) -> Floats:
    """M(r) for one relevant item at (1-based) rank r."""
    import numpy as np

    within = np.ones_like(ranks, dtype=bool) if k is None else ranks <= k
    if metric == "ndcg":
        values = 1.0 / np.log2(ranks + 1.0)
    elif metric == "mrr":
        values = 1.0 / ranks
    else:
        values = np.ones_like(ranks, dtype=np.float64)
    return np.where(within, values, 0.0)


def sampled_rank_probabilities(ranks: Floats, m: int, n: int, replace: bool) -> Floats:
    """A's rows: P(r̃ | r) for r̃ = 1..m+1. r̃ - 1, the sampled negatives above the
    relevant item, is Binomial(m, (r - 1)/(n - 1)) with replacement, else hypergeometric
    (m of the n - 1 negatives, r - 1 of them above it); both by their pmf's recurrence in
    logs (no underflow far in the tails)."""
    import numpy as np

    out = np.zeros((ranks.size, m + 1))
    above = ranks - 1.0
    if replace:
        q = above / (n - 1.0)
        inner = (q > 0) & (q < 1)
        out[q <= 0, 0] = 1.0
        out[q >= 1, m] = 1.0
        qi = q[inner]
        log_q, log_not = np.log(qi), np.log1p(-qi)
        log_pmf = m * log_not
        steps = [log_pmf]
        for j in range(m):
            log_pmf = log_pmf + math.log((m - j) / (j + 1)) + log_q - log_not
            steps.append(log_pmf)
        out[inner] = np.exp(np.stack(steps, axis=1))
        return out
    negatives = n - 1.0
    below = negatives - above
    # the support: j from max(0, m - below) to min(m, above); start at its first j
    first = np.maximum(0.0, m - below)
    log_start = (
        _log_choose(above, first)
        + _log_choose(below, m - first)
        - _log_choose(np.full_like(above, negatives), np.full_like(above, float(m)))
    )
    log_pmf = np.full((ranks.size, m + 1), -np.inf)
    current = log_start
    for j in range(m + 1):
        at = first == j
        current = np.where(at, log_start, current)
        live = j >= first
        log_pmf[live, j] = current[live]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = (above - j) * (m - j) / ((j + 1.0) * (below - m + j + 1.0))
            current = np.where(live & (ratio > 0), current + np.log(ratio), -np.inf)
    found: Floats = np.exp(log_pmf)
    return found


def _log_choose(a: Floats, b: Floats) -> Floats:
    """log C(a, b) for 0 <= b <= a, elementwise."""
    import numpy as np

    lgamma = np.frompyfunc(math.lgamma, 1, 1)
    terms = [np.asarray(lgamma(x), dtype=np.float64) for x in (a + 1.0, b + 1.0, a - b + 1.0)]
    found: Floats = terms[0] - terms[1] - terms[2]
    return found


@functools.cache
def correction(
    metric: str, k: int | None, m: int, n: int, estimator: str, gamma: float, replace: bool
) -> tuple[float, ...]:
    """x(r̃) for r̃ = 1..m+1: the normal equations of Krichene and Rendle's estimator,
    summed over the true ranks in blocks. cls: A'A x = A'M (least squares, solved by
    lstsq: A'A may be singular); bv: ((1 - gamma) A'A + gamma diag(A'1)) x = A'M."""
    import numpy as np

    gram = np.zeros((m + 1, m + 1))
    column_mass = np.zeros(m + 1)
    target = np.zeros(m + 1)
    for start in range(1, n + 1, _CHUNK):
        ranks = np.arange(start, min(start + _CHUNK, n + 1), dtype=np.float64)
        a = sampled_rank_probabilities(ranks, m, n, replace)
        gram += a.T @ a
        column_mass += a.sum(axis=0)
        target += a.T @ full_metric(metric, k, ranks)
    if estimator == "cls":
        x = np.linalg.lstsq(gram, target, rcond=None)[0]
    else:
        x = np.linalg.solve((1.0 - gamma) * gram + gamma * np.diag(column_mass), target)
    return tuple(float(v) for v in x)


def _whole(value: object, name: str) -> int:
    """A parameter that counts items (negatives, items), else a config error."""
    number = float(str(value))
    if not number.is_integer():
        fix = "Write e.g. corrected@10(negatives=100,items=20000)."
        raise ConfigError(
            f"{name} is {value}; it must be a whole number of items. {fix}",
            key=name,
            found=str(value),
            fix=fix,
        )
    return int(number)


@register(
    "corrected",
    summary="Krichene and Rendle's corrected estimate, from a sampled ranking, of a metric "
    "over the whole catalog.",
    formula="x(r̃): the value at the sampled rank r̃ whose expectation over the true ranks "
    "best fits the full metric M(r) (cls), with a variance penalty (bv)",
    params=(FULL_METRIC, NEGATIVES, ITEMS, CORRECTION, GAMMA, SAMPLING),
    upper_bound=None,
    lower_bound=None,
    no_value="no user's list holds negatives + 1 candidates with one relevant item among "
    "them (sampled evaluation's lists)",
    no_value_fix="Set negatives to the negatives sampled per user (each list: negatives + 1 "
    "candidates, one of them relevant).",
)
def corrected(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Krichene and Rendle (KDD 2020), section 5. Example: m = n - 1 (every negative
    sampled) leaves the ranking whole, r̃ = r, and cls gives back M itself: x(r̃) =
    1/log2(r̃ + 1) for ndcg. With m = 100 of n = 10,000 items a relevant item at sampled
    rank 1 is still at an expected true rank near n / m = 100: its corrected ndcg@10 is far below
    the sampled 1. Needs each user's m + 1 candidates and one relevant item among them;
    other users have no value. The estimate is unbiased only on average over users, and
    may leave [0, 1] for one user."""
    m, n = _whole(p["negatives"], "negatives"), _whole(p["items"], "items")
    if m >= n:
        fix = "Give the catalog's size as items, and the negatives sampled per user."
        raise ConfigError(
            f"corrected: negatives ({m}) must be fewer than the catalog's items ({n}). {fix}",
            key="negatives",
            found=m,
            fix=fix,
        )
    replace = p["sampling"] == "with_replacement"
    x = correction(str(p["metric"]), k, m, n, str(p["estimator"]), float(p["gamma"]), replace)
    rr = s.reciprocal_rank(None)
    rank = pl.when(rr > 0).then((1.0 / rr).round(0)).cast(pl.Int64, strict=False)
    value = rank.replace_strict(
        list(range(1, m + 2)), list(x), default=None, return_dtype=pl.Float64
    )
    valid = (s.retrieved(None) == m + 1) & (s.n_relevant() == 1) & (rr > 0)
    return pl.when(valid).then(value)
