"""Which tools define each metric, and under what name.

The presets (config/presets.py) map receval's metrics to their tools' measure names; this
table adds the tools receval has no preset for (ir_measures, RecTools, torchmetrics,
scikit-learn, ...) and the measures a preset's tool has beyond the preset's map. The key
is a registered metric's name; the value maps a tool to its own measure name.
`receval metrics --format json` lists both, merged, as the metric's `tools`.
"""

from __future__ import annotations

PEER_MEASURES: dict[str, dict[str, str]] = {
    "ndcg": {
        "ir_measures": "nDCG@k",
        "torchmetrics": "RetrievalNormalizedDCG",
        "rectools": "NDCG(k) (ideal=k_positions, gain=binary); "
        "NDCG(k, divide_by_achievable=True) (ideal=at_k, gain=binary)",
    },
    "precision": {"ir_measures": "P@k", "torchmetrics": "RetrievalPrecision"},
    "recall": {"ir_measures": "R@k", "torchmetrics": "RetrievalRecall"},
    "map": {
        "ir_measures": "AP@k",
        "torchmetrics": "RetrievalMAP",
        "rectools": "MAP(k) (denominator=relevant); MAP(k, divide_by_k=True) (denominator=k)",
    },
    "mrr": {"ir_measures": "RR", "torchmetrics": "RetrievalMRR"},
    "hit_rate": {"ir_measures": "Success@k", "torchmetrics": "RetrievalHitRate"},
    "r_precision": {"ir_measures": "Rprec", "torchmetrics": "RetrievalRPrecision"},
    "accuracy": {"rectools": "Accuracy(k) (denominator=k)"},
    "mcc": {"rectools": "MCC(k) (denominator=k)"},
    "fall_out": {
        "torchmetrics": "RetrievalFallOut(top_k=k, empty_target_action='neg') "
        "(no_negatives=zero; 'pos': one, 'skip': skip)"
    },
    "partial_auc": {"rectools": "PartialAUC(k)"},
    "pap": {"rectools": "PAP(k)"},
    "sufficient_reco": {"rectools": "SufficientReco(k) (measure=full; deep=True: share)"},
    "intersection": {
        "rectools": "Intersection(k, ref_k) (baseline_k=ref_k; the baseline file is ref_reco)"
    },
    "user_coverage": {"rectools": "CoveredUsers(k)"},
}
