"""Which tools define each metric, and under what name.

The presets (config/presets.py) map receval's metrics to their tools' measure names; this
table adds the tools receval has no preset for (ir_measures, torchmetrics,
scikit-learn, ...) and the measures a preset's tool has beyond the preset's map. The key
is a registered metric's name; the value maps a tool to its own measure name.
`receval metrics --format json` lists both, merged, as the metric's `tools`.
"""

from __future__ import annotations

PEER_MEASURES: dict[str, dict[str, str]] = {
    "ndcg": {"ir_measures": "nDCG@k", "torchmetrics": "RetrievalNormalizedDCG"},
    "precision": {"ir_measures": "P@k", "torchmetrics": "RetrievalPrecision"},
    "recall": {"ir_measures": "R@k", "torchmetrics": "RetrievalRecall"},
    "map": {"ir_measures": "AP@k", "torchmetrics": "RetrievalMAP"},
    "mrr": {"ir_measures": "RR", "torchmetrics": "RetrievalMRR"},
    "hit_rate": {"ir_measures": "Success@k", "torchmetrics": "RetrievalHitRate"},
    "r_precision": {"ir_measures": "Rprec", "torchmetrics": "RetrievalRPrecision"},
    "bpref": {"ir_measures": "Bpref"},
    "infap": {"ir_measures": "infAP"},
    "judged": {"ir_measures": "Judged@k (denominator=list_length, negative_grades=judged)"},
    "err": {"ir_measures": "ERR@k"},
    "nerr": {"ir_measures": "nERR_IA@k (nerr@k(grades=binary,max_grade=1))"},
    "rbp": {"ir_measures": "RBP(p=P,rel=L) (rbp(p=P,gain=binary), relevance_threshold L)"},
    "fall_out": {
        "torchmetrics": "RetrievalFallOut(top_k=k, empty_target_action='neg') "
        "(no_negatives=zero; 'pos': one, 'skip': skip)"
    },
    "iprec_at_recall": {"ir_measures": "IPrec@level"},
    "set_map": {"ir_measures": "SetAP"},
    "set_precision": {"ir_measures": "SetP"},
    "set_recall": {"ir_measures": "SetR"},
    "set_f1": {"ir_measures": "SetF"},
    "log_loss": {"scikit-learn": "log_loss"},
    "explained_variance": {"scikit-learn": "explained_variance_score"},
    # RecTools 0.19.0 (benchmarks/bench_diversity.py --part peers compares the values)
    "intra_list_diversity": {
        "rectools": "IntraListDiversity(distance_calculator=PairwiseHammingDistanceCalculator) "
        "(feature=category)"
    },
    "novelty": {"rectools": "MeanInvUserFreq (share=users)"},
    # the rating metrics: equal to scikit-learn's (tests/metrics/test_rating.py)
    "mae": {"scikit-learn": "mean_absolute_error"},
    "mse": {"scikit-learn": "mean_squared_error"},
    "rmse": {"scikit-learn": "root_mean_squared_error"},
    "r2": {"scikit-learn": "r2_score"},
    # RecBole's beyond-accuracy measures with the same definition
    "arp": {"RecBole": "AveragePopularity@k"},
    "long_tail_share": {"RecBole": "TailPercentage@k"},
    "gini": {"RecBole": "GiniIndex@k"},
    "dcg": {"ranx": "dcg@k"},
}


# ir_measures writes its measures in mixed case (nDCG@10, AP@100, RR): a config reads those
# names as ir_measures' (metrics/dialects.py); in lower case (p@10) they are receval's, and
# an unknown one is answered with the receval metric it means.
def _ir_measures_spellings() -> dict[str, str]:
    """ir_measures' measure name (as it writes it: `nDCG`, `AP`) -> receval's metric."""
    found = {}
    for metric, tools in PEER_MEASURES.items():
        written = tools.get("ir_measures")
        if written is not None:
            name = written.replace("(", "@").replace(" ", "@").split("@")[0]
            if name != name.lower():
                found[name] = metric
    return found


IR_MEASURES_SPELLINGS = _ir_measures_spellings()


def unknown_spelling(name: str) -> str | None:
    """For a metric name receval does not know: the receval metric an ir_measures name
    (compared case-blind: `P` for precision) means, or None."""
    by_lower = {written.lower(): metric for written, metric in IR_MEASURES_SPELLINGS.items()}
    metric = by_lower.get(name.lower())
    if metric is None or metric == name.lower():
        return None
    return metric
