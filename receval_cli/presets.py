"""Named presets: the conventions under which receval reproduces a well-known tool.

A preset is a set of convention values. In the config, `conventions: {preset: NAME}` applies
it, and any other key beside it overrides that one setting; `--preset NAME` on the command
line does the same. `metrics` maps receval's metric names to the tool's own measure names.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Preset:
    name: str
    summary: str
    checked_against: str
    conventions: dict[str, object]
    metrics: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    # metric name -> parameter defaults that differ for that metric (e.g. which users count)
    per_metric: dict[str, dict[str, object]] = field(default_factory=dict)

    def overrides(self, metric: str, conventions: dict[str, object]) -> dict[str, object]:
        """This preset's parameter defaults for `metric`, where the conventions still hold
        the preset's own value (a convention the user changed applies to every metric)."""
        return {
            name: value
            for name, value in self.per_metric.get(metric, {}).items()
            if name not in self.conventions or conventions.get(name) == self.conventions[name]
        }


PRESETS: dict[str, Preset] = {
    "trec_eval": Preset(
        name="trec_eval",
        summary="NIST trec_eval 10 (and pytrec_eval): the reference of IR evaluation.",
        checked_against=(
            "trec_eval 10.0 conformance outputs (tests/conformance/trec_eval), "
            "pytrec-eval-terrier 0.5.11"
        ),
        conventions={
            "relevance_threshold": 1,
            "tie_break": "item_desc",
            "users_without_recommendations": "skip",
            "users_without_relevant": "zero",
            "precision_denominator": "k",
            "ap_denominator": "relevant",
            "ideal_dcg": "at_k",
            "gain": "linear",
            "discount": "log2",
            "score_precision": "float32",
            "duplicates": "error",
            "truth_duplicates": "error",
            "max_depth": None,
        },
        metrics={
            "precision@k": "P_k",
            "recall@k": "recall_k",
            "ndcg": "ndcg",
            "ndcg@k": "ndcg_cut_k",
            "map": "map",
            "map@k": "map_cut_k",
            "mrr": "recip_rank",
            "hit_rate@k": "success_k",
            "r_precision": "Rprec",
            "num_rel": "num_rel",
            "num_ret": "num_ret",
            "num_rel_ret": "num_rel_ret",
        },
        notes=(
            "Only users in both files are evaluated; users_without_recommendations: zero "
            "is trec_eval -c.",
            "max_depth: N is trec_eval -M N; relevance_threshold: L is -l L (graded "
            "measures still use the grades).",
            "Ids are compared as text (TREC files are read as text), so ties break by docno "
            "in descending byte order, as trec_eval does.",
            "Scores are rounded to float32 before ranking, as trec_eval keeps them.",
        ),
    ),
    "ranx": Preset(
        name="ranx",
        summary="ranx 0.3.21 (ranx.evaluate with make_comparable=True).",
        checked_against="ranx 0.3.21 golden files (tests/golden/ranx), per user and means",
        conventions={
            "relevance_threshold": 1,
            "tie_break": "input_order",
            "users_without_recommendations": "zero",
            "users_without_relevant": "zero",
            "precision_denominator": "k",
            "ap_denominator": "relevant",
            "ideal_dcg": "at_k",
            "gain": "linear",
            "discount": "log2",
            "score_precision": "float64",
            "duplicates": "error",
            "truth_duplicates": "error",
            "max_depth": None,
        },
        metrics={
            "precision@k": "precision@k",
            "recall@k": "recall@k",
            "f1@k": "f1@k",
            "hit_rate@k": "hit_rate@k",
            "mrr@k": "mrr@k",
            "map@k": "map@k",
            "ndcg@k": "ndcg@k",
            "ndcg@k(gain=exponential)": "ndcg_burges@k",
            "precision": "precision",
            "recall": "recall",
            "f1": "f1",
            "hit_rate": "hit_rate",
            "mrr": "mrr",
            "map": "map",
            "ndcg": "ndcg",
            "ndcg(gain=exponential)": "ndcg_burges",
        },
        notes=(
            "Every ground-truth user is evaluated (ranx.evaluate(..., make_comparable=True)): "
            "users with no recommendation or with only non-relevant judgments count 0.",
            "Ties: ranx sorts with numba's argsort, which keeps input order for lists of at "
            "most 15 items (tie_break input_order); for longer lists with tied scores ranx's "
            "order follows no simple rule and may differ.",
            "ndcg_burges is ndcg with gain exponential.",
            "Only at relevance_threshold 1: ranx's -lN also zeroes the gain of grades below N "
            "in ndcg, where receval keeps them.",
        ),
    ),
    "replay": Preset(
        name="replay",
        summary="RePlay 0.22.0 (replay.metrics, DataFrame input): binary metrics.",
        checked_against="replay-rec 0.22.0 golden files (tests/golden/replay), per user and means",
        conventions={
            "relevance_threshold": 1,
            "tie_break": "item_desc",
            "users_without_recommendations": "zero",
            "users_without_relevant": "skip",
            "precision_denominator": "k",
            "ap_denominator": "min_k_relevant",
            "ideal_dcg": "at_k",
            "gain": "binary",
            "discount": "log2",
            "score_precision": "float64",
            "duplicates": "error",
            "truth_duplicates": "error",
            "max_depth": None,
        },
        metrics={
            "precision@k": "Precision@k",
            "recall@k": "Recall@k",
            "hit_rate@k": "HitRate@k",
            "mrr@k": "MRR@k",
            "map@k": "MAP@k",
            "ndcg@k": "NDCG@k",
        },
        notes=(
            "RePlay's ground truth is the rows with relevance >= relevance_threshold (it takes "
            "no grade): users with none are not evaluated; users in it with no "
            "recommendation count 0.",
            "Ties: score, then item, both descending (its DataFrame paths); with dict input "
            "RePlay keeps input order (tie_break input_order).",
            "NDCG is binary, with the ideal over min(k, relevant) items.",
        ),
    ),
}
