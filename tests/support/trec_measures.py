"""trec_eval's measures (pytrec_eval's names) and the receval metric each one is, for the
tests that compare the trec_eval preset with pytrec_eval."""

from __future__ import annotations

# measures without a cutoff -> receval metric
WHOLE_LIST = {
    "recip_rank": "mrr",
    "map": "map",
    "ndcg": "ndcg",
    "Rprec": "r_precision",
    # trec_eval's experimental gain measures (receval_cli/metrics/trec_gain.py)
    "G": "g",
    "binG": "bing",
    "ndcg_rel": "ndcg_rel",
    "Rndcg": "rndcg",
}
# the num_* counts: trec_eval's summary line sums them over queries (receval: aggregate sum)
COUNTS = {"num_rel": "num_rel", "num_ret": "num_ret", "num_rel_ret": "num_rel_ret"}
# measure family (pytrec_eval's request name, its result prefix) -> receval metric
AT_K = {
    ("P", "P"): "precision",
    ("recall", "recall"): "recall",
    ("ndcg_cut", "ndcg_cut"): "ndcg",
    ("map_cut", "map_cut"): "map",
    ("success", "success"): "hit_rate",
}


def pairs(cutoffs: tuple[int, ...], counts: bool = False) -> dict[str, str]:
    """Each trec_eval result name (P_5, ...) -> the receval metric (precision@5, ...)."""
    found = {**WHOLE_LIST, **(COUNTS if counts else {})}
    for k in cutoffs:
        found |= {f"{prefix}_{k}": f"{metric}@{k}" for (_, prefix), metric in AT_K.items()}
    return found


def measures(cutoffs: tuple[int, ...], counts: bool = False) -> set[str]:
    """The measures to ask pytrec_eval for (P.1,3,5 and so on)."""
    cuts = ",".join(map(str, cutoffs))
    return {
        *(f"{name}.{cuts}" for name, _ in AT_K),
        *WHOLE_LIST,
        *(COUNTS if counts else {}),
    }
