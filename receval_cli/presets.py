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
}
