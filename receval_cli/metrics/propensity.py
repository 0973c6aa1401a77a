"""Propensity-scored ranking metrics (Jain, Prabhu and Varma, "Extreme Multi-label Loss
Functions for Recommendation, Tagging, Ranking & Other Missing Label Applications", KDD
2016): each relevant item counts 1/p_l, the inverse of the chance p_l that it was observed
at all, so that a rare relevant item found weighs more than a popular one.

For one user with relevant items R (rel >= relevance_threshold; binary relevance, as in
the paper and pyxclib), ranked list L and cutoff k:

    psP@k    = (1/k) sum over the items l of L@k that are in R of 1/p_l
    psDCG@k  = sum over the ranks r <= k whose item l_r is in R of 1/p_l / log2(r + 1)
    psnDCG@k = psDCG@k / sum_{r=1}^{min(k, |R|)} 1/log2(r + 1)          (the paper's)

normalize=none (the default) is the paper's definition, above (napkinXC's and pyxclib's
functions with normalize=False give its mean). normalize=ideal divides psP@k and psDCG@k
instead by their best value for
the user: the same sum over R's items sorted by 1/p_l descending, the first k
(psP*@k, psDCG*@k), so each lies in [0, 1]. pyxclib (xclib/evaluation/xc_metrics.py:
psprecision, psndcg) and the Extreme Classification Repository divide the dataset's means
instead: mean_u psP@k / mean_u psP*@k, and for psnDCG mean_u (psDCG@k / IDCG_u@k) /
mean_u (psDCG*@k / IDCG_u@k) with IDCG_u@k = sum_{r<=min(k,|R|)} 1/log2(r+1); receval's
per-user means of normalize=ideal equal those when every user's best value is the same,
and mean(normalize=none) / mean(normalize=none on the ideal lists) always.

Propensities (`propensity`):

    model    Jain et al.'s model from the interactions log, as pyxclib's
             compute_inv_propesity computes it: 1/p_l = 1 + C (N_l + B)^(-A) with
             C = (ln N - 1)(B + 1)^A, N the distinct users of the log, N_l the distinct
             users with item l (0 for an item absent from the log), A = a, B = b
             (0.55 and 1.5 by default; the paper: 0.5, 0.4 for Wikipedia, 0.6, 2.6 for
             Amazon). With N < e (one or two users) C <= 0 and weights fall below 1.
    catalog  the catalog's `propensity` column (catalog.columns.propensity), each value
             in (0, 1] (checked when the catalog is read); an item the catalog does not
             list counts with propensity 1 (weight 1, no boost).
"""

from __future__ import annotations

import polars as pl

from receval_cli.metrics.registry import Param, Params, Ratio, register
from receval_cli.metrics.stats import Stats, discount, per_user_constant, power_of, safe_div

PROPENSITY = Param(
    "propensity",
    "where p_l comes from: model (Jain et al.'s model over the interactions log) or catalog "
    "(the catalog's propensity column; an item it lacks: p = 1)",
    choices=("model", "catalog"),
    default="model",
)
A = Param(
    "a",
    "the model's A (propensity=model): 0.55, or 0.5 for Wikipedia, 0.6 for Amazon",
    default=0.55,
    positive_number=True,
    largest=100.0,  # with b <= 1000, (b + 1)^a stays below 1e301
)
B = Param(
    "b",
    "the model's B (propensity=model): 1.5, or 0.4 for Wikipedia, 2.6 for Amazon",
    default=1.5,
    positive_number=True,
    largest=1000.0,
)
NORMALIZE = Param(
    "normalize",
    "none: the paper's psP@k / psnDCG@k, averaged over the users; dataset: their sum over "
    "the sum of the users' best values (pyxclib's and napkinXC's normalised number, the "
    "Extreme Classification Repository's); ideal: each user's divided by its best value "
    "(R's items sorted by 1/p, the first k), in [0, 1], averaged",
    choices=("none", "dataset", "ideal"),
    default="none",
)


def inverse_propensity(s: Stats, p: Params) -> tuple[str, pl.Expr]:
    """The weight 1/p_l of an item's row (of the recs table, and of the ground truth's
    relevant rows for the ideal), and its name."""
    if p["propensity"] == "catalog":
        given = s.side("propensity").cast(pl.Float64).fill_null(1.0)
        return "catalog", 1.0 / given
    a, b = float(p["a"]), float(p["b"])
    s.side("popularity")
    users = pl.col("log_users").cast(pl.Float64)
    c = (users.log() - 1.0) * (b + 1.0) ** a
    holders = pl.col("holders").fill_null(0).cast(pl.Float64)
    return f"model,{a!r},{b!r}", 1.0 + c * power_of(holders + b, -a)


def _scored(
    s: Stats, k: int | None, p: Params, discount_kind: str | None
) -> tuple[pl.Expr, pl.Expr]:
    """(the list's sum of 1/p_l [times the discount] over its relevant items in the top k,
    the best such sum over R)."""
    source, weight = inverse_propensity(s, p)
    relevant = s.side("relevant").fill_null(False)
    term = weight if discount_kind is None else weight * discount(pl.col("rank"), discount_kind)
    name = f"ps[{source},{discount_kind or 'flat'}]"
    found = s.rec_sum(name, pl.when(relevant).then(term).otherwise(0.0), k)
    return found, s.ideal_sum(name, weight, discount_kind, k)


def _psp_best(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """psP*@k: the user's best psP@k (normalize=dataset's denominator)."""
    assert k is not None  # needs_cutoff
    return _scored(s, k, p, None)[1] / per_user_constant(k)


def _psndcg_best(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """psDCG*@k / IDCG@k: the user's best psnDCG@k (normalize=dataset's denominator)."""
    return safe_div(_scored(s, k, p, "log2")[1], s.idcg(k, "binary", "log2"))


@register(
    "psp",
    summary="Propensity-scored precision@k (Jain et al. KDD 2016; pyxclib's psprecision): "
    "relevant items in the top k weighted by 1/propensity.",
    formula="(1/k) sum over l in L@k ∩ R of 1/p_l; psP* the same over R's k items of largest "
    "1/p_l: normalize=dataset: sum_u psP / sum_u psP*, ideal: psP / psP* per user. p_l = 1 / "
    "(1 + C (N_l + B)^-A), C = (ln N - 1)(B + 1)^A (propensity=model: N the log's users, N_l "
    "item l's), or the catalog's",
    params=(PROPENSITY, A, B, NORMALIZE),
    upper_bound=None,
    needs_cutoff=True,
    ratio=Ratio("normalize", "dataset", _psp_best),
)
def psp(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Source: Jain, Prabhu and Varma, KDD 2016; pyxclib's psprecision. Binary relevance.
    propensity=model (needs `interactions`): Jain et al.'s model as pyxclib's
    compute_inv_propesity computes it, N the log's distinct users, N_l the distinct users
    with item l (0 when absent from the log). propensity=catalog: the catalog's
    `propensity` column (catalog.columns.propensity, each value in (0, 1]); an item the
    catalog does not list counts p = 1. normalize=none is the paper's psP@k (it can exceed
    1). normalize=ideal divides by the user's best value, so it lies in [0, 1]: pyxclib
    and the Extreme Classification Repository divide the dataset's means instead (mean
    psP@k / mean psP*@k), which is the mean of normalize=none over the mean of the same on
    the best lists (docs/metrics.md). An empty list, or a user without relevant items,
    scores 0. Example (normalize=none, k=2): a, b relevant with p = 0.5 and 0.25, the list
    [a, x]: (1/2)(1/0.5) = 1; normalize=ideal divides by (1/2)(1/0.25 + 1/0.5) = 3: 1/3."""
    found, best = _scored(s, k, p, None)
    if p["normalize"] == "ideal":
        return safe_div(found, best)
    assert k is not None  # needs_cutoff
    return found / per_user_constant(k)


@register(
    "psdcg",
    summary="Propensity-scored DCG@k (Jain et al. KDD 2016): binary gains weighted by "
    "1/propensity, log2 discount.",
    formula="sum over ranks r <= k with l_r in R of 1/p_{l_r} / log2(r + 1), p_l as psp's",
    params=(PROPENSITY, A, B),
    upper_bound=None,
)
def psdcg(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Source: Jain, Prabhu and Varma, KDD 2016. The propensities as psp's (`receval
    metrics psp`): propensity=model needs `interactions`, propensity=catalog the catalog's
    propensity column. Example: a relevant item with p = 0.5 at rank 3: 2 / log2(4) = 1."""
    return _scored(s, k, p, "log2")[0]


@register(
    "psndcg",
    summary="Propensity-scored nDCG@k (Jain et al. KDD 2016; pyxclib's psndcg): psDCG@k "
    "normalised.",
    formula="psDCG@k / sum_{r=1}^{min(k,|R|)} 1/log2(r + 1); psnDCG* the same of R sorted by "
    "1/p_l: normalize=dataset: sum_u psnDCG / sum_u psnDCG*, ideal: psDCG@k / psDCG*@k per user",
    params=(PROPENSITY, A, B, NORMALIZE),
    upper_bound=None,
    ratio=Ratio("normalize", "dataset", _psndcg_best),
)
def psndcg(s: Stats, k: int | None, p: Params) -> pl.Expr:
    """Source: Jain, Prabhu and Varma, KDD 2016; pyxclib's psndcg. The propensities as
    psp's (`receval metrics psp`). normalize=none is the paper's psnDCG@k, which can exceed 1;
    normalize=ideal lies in [0, 1] and is 1 for a list whose top k is R's items by 1/p_l
    descending; normalize=dataset is pyxclib's and napkinXC's ratio of the sums of
    psnDCG@k and of the best psnDCG@k over the users (see psp). A user without
    relevant items scores 0. Example: R = {a (p = 0.5), b (p = 0.25)}, the list [a, b],
    k = 2: psDCG = 2 + 4/log2(3); ideal: 4 + 2/log2(3)."""
    found, best = _scored(s, k, p, "log2")
    if p["normalize"] == "ideal":
        return safe_div(found, best)
    return safe_div(found, s.idcg(k, "binary", "log2"))
