"""Calibration: how well the genre mix of a list matches that of the user's history.

Harald Steck, "Calibrated Recommendations", RecSys 2018, section 2 (eq. 1-4): the
miscalibration C_KL(p, q) of a list is the Kullback-Leibler divergence from the genre
distribution p(g|u) of the items the user interacted with (the `interactions` log) to
that of the recommended top k, q(g|u), smoothed as q~ = (1 - alpha) q + alpha p so that a
genre of the history missing from the list gives a finite value. The per-user table is
evaluation/calibration_per_user.py.
"""

from __future__ import annotations

import polars as pl

from receval_cli.errors import InputError
from receval_cli.metrics.registry import Param, Params, register
from receval_cli.metrics.stats import Stats

GENRES = ("tags", "category")

FEATURE = Param(
    "feature",
    "the catalog feature that gives an item's genres: tags (each of its tags 1/|tags|) or "
    "category (its category 1); default: the one of the two the catalog has",
    choices=GENRES,
    optional=True,
)
ALPHA = Param(
    "alpha",
    "the smoothing of the list's distribution, q~ = (1 - alpha) q + alpha p (Steck: 0.01); "
    "the value is at most ln(1 / alpha)",
    default=0.01,
    share=True,
    below_one=True,
)
WEIGHTS = Param(
    "weights",
    "the weight of a listed item by its rank r in q: uniform (Steck's experiments), "
    "reciprocal 1/r (RADio's rank-aware calibration), log2 1/log2(r + 1)",
    choices=("uniform", "reciprocal", "log2"),
    default="uniform",
)


def genre_feature(s: Stats) -> str:
    """The catalog's one genre feature (tags or category), else an error naming them."""
    found = [f for f in GENRES if f in s.features]
    if len(found) == 1:
        return found[0]
    listed = ", ".join(found) if found else "none"
    fix = (
        "Name one in catalog.columns (tags or category) and, when it has both, choose with "
        "miscalibration@k(feature=tags) or (feature=category)."
    )
    raise InputError(
        f"miscalibration compares the genres of the items (catalog tags or category); the "
        f"catalog's are: {listed}. {fix}",
        key="catalog.columns",
        found=found,
        fix=fix,
    )


@register(
    "miscalibration",
    summary="Steck's miscalibration (RecSys 2018): KL divergence from the genre mix of the "
    "user's history (interactions log) to that of the list (catalog tags or category).",
    formula="sum over g of p(g|u) ln(p(g|u) / ((1 - alpha) q(g|u) + alpha p(g|u))); p: the "
    "log's items, q: L@k, p(g|i) = 1/|genres(i)|",
    params=(FEATURE, ALPHA, WEIGHTS),
    upper_bound=None,
    higher_is_better=False,
    reads_relevance=False,
    no_value="no evaluated user has an item with a genre (catalog tags or category) in the "
    "interactions log",
)
def miscalibration(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Needs `interactions` (the history H(u): the user's distinct logged items) and a
    `catalog` with tags or a category. p(g|u) = sum over i in H(u) of p(g|i) / |H(u)| and
    q(g|u) = sum over i in L@k of w(r(i)) p(g|i) / sum of w(r(i)), with p(g|i) =
    1/|tags(i)| for each tag of i (or 1 for its category); items without a genre (no tag,
    or a logged item the catalog lacks) count in neither. Lower is
    better: 0 when the list's genre mix is the history's, ln(1 / alpha) (4.6 for alpha =
    0.01) when the list holds none of the history's genres, or no item with a genre (an
    empty list: users_without_recommendations=skip leaves those out). A user with no item
    with a genre in the log has no calibration to miss: no value, left out of the mean.
    Natural logarithm, as Steck; LibRec and RADio report bits (divide by ln 2).
    Example: history [romance, romance, action] and list [romance, romance]: p = (2/3,
    1/3), q = (1, 0), q~ = (0.99 + 0.01 * 2/3, 0.01/3), C_KL = 2/3 ln(2/3 / 0.99667) + 1/3
    ln(1/3 / 0.00333) = 1.2670."""
    feature = str(p.get("feature") or genre_feature(s))
    return s.miscalibration(feature, str(p["weights"]), float(p["alpha"]), k)
