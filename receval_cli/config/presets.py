"""Named presets: the conventions under which receval reproduces a well-known tool.
Over 400 lines: a table of data, one Preset per reproduced tool (its conventions, measure
names and what docs/conventions.md says of them); split by tool it would scatter one table.

A preset is a set of convention values. In the config, `conventions: {preset: NAME}` applies
it, and any other key beside it overrides that one setting; `--preset NAME` on the command
line does the same. `metrics` maps receval's metric names to the tool's own measure names.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Preset:
    """One tool's conventions and measure names. docs/conventions.md's table of presets is
    written from these fields (config/preset_table.py): `checked_against`, `explanations`,
    `also` and `based_on` are there for that table."""

    name: str
    summary: str
    # Markdown: the tool's version, and the tests and golden files (paths in backquotes,
    # checked to exist) that compare receval with it
    checked_against: str
    conventions: dict[str, object]
    metrics: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    # convention -> why the tool's value is that, said beside the setting in the docs' table
    # (a convention explained there is listed even at receval's default)
    explanations: dict[str, str] = field(default_factory=dict)
    # Markdown: what else of the tool receval reproduces, outside `metrics`
    also: str = ""
    # the preset this one copies but for some conventions: the docs' row says only those
    based_on: str = ""
    # metric name -> parameter defaults that differ for that metric (e.g. which users count)
    per_metric: dict[str, dict[str, object]] = field(default_factory=dict)
    # metric name -> (its parameters that the tool prints in the measure's name, the
    # parameter defaults that differ when any of them is written): the tool treats the
    # measure otherwise under another name (trec_eval's utility_2,-1,0,0)
    when_named: dict[str, tuple[frozenset[str], dict[str, object]]] = field(default_factory=dict)

    def overrides(
        self, metric: str, given: frozenset[str], written: frozenset[str] = frozenset()
    ) -> dict[str, object]:
        """This preset's parameter defaults for `metric` written with the parameters
        `written`, except for the conventions the user wrote beside the preset (those apply
        to every metric)."""
        found = dict(self.per_metric.get(metric, {}))
        named, defaults = self.when_named.get(metric, (frozenset(), {}))
        if named & written:
            found.update(defaults)
        return {k: v for k, v in found.items() if k not in given}


PRESETS: dict[str, Preset] = {
    "trec_eval": Preset(
        name="trec_eval",
        summary="NIST trec_eval 10.0, the reference of IR evaluation (scores as doubles).",
        checked_against=(
            "trec_eval 10.0's own test outputs (`tests/peers/trec_eval/conformance/trec_eval/`) "
            "and its outputs on near ties that only doubles tell apart "
            "(`tests/peers/trec_eval/conformance/trec_eval_scores/`), every line "
            "(`tests/peers/trec_eval/test_trec_conformance.py`)"
        ),
        conventions={
            "relevance_threshold": 1,
            "tie_break": "item_text_desc",
            "users_without_recommendations": "skip",
            "users_without_relevant": "zero",
            "prediction_only_users": "skip",  # no metric of trec_eval reads no relevance
            "precision_denominator": "k",
            "ap_denominator": "relevant",
            "ideal_dcg": "at_k",
            "gain": "linear",
            "gain_below_threshold": "grade",
            "fractional_grades": "truncate",
            "discount": "log2",
            "score_precision": "float64",
            "duplicates": "error",
            "truth_duplicates": "error",
            "max_depth": None,
            "unrated": "ignore",
            "default_rating": None,
            "unpredicted": "error",
            "default_prediction": None,
            "prediction_threshold": None,
        },
        explanations={
            "tie_break": "ids as text, whatever their type",
            "fractional_grades": "qrels grades read with atol: 2.5 is 2",
            "score_precision": "trec_eval 10.0 keeps scores as doubles",
            "max_depth": "trec_eval without -M; -M N is max_depth N",
        },
        also="`receval_cli.relstrings` for relstring",
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
            "bpref": "bpref",
            "infap": "infAP",
            "unj@k": "unj_k",
            "num_nonrel_judged_ret": "num_nonrel_judged_ret",
            "ndcg(gains=1:3;2:9)": "ndcg.1=3,2=9 (a gain map)",
            "g": "G",
            "bing": "binG",
            "ndcg_rel": "ndcg_rel",
            "rndcg": "Rndcg",
            "rbp": "rbp",
            "rbp_resid": "rbp_resid",
            "map(mean=geometric)": "gm_map",
            "bpref(mean=geometric)": "gm_bpref",
            "set_map": "set_map",
            "utility": "utility",
            "utility(a=A,b=B,c=C,d=D)": "utility_A,B,C,D",
            "relative_precision@k": "relative_P_k",
            "relative_precision": "set_relative_P",
            "rprec_mult": "Rprec_mult",
            "rprec_mult(multiplier=M)": "Rprec_mult_M",
            "iprec_at_recall": "iprec_at_recall",
            "iprec_at_recall(level=L)": "iprec_at_recall_L",
            "iprec_avg": "11pt_avg",
            "iprec_avg(levels=A;B;C)": "11pt_avg_A,B,C",
            "set_precision": "set_P",
            "set_recall": "set_recall",
            "set_f1": "set_F",
            "set_fbeta": "set_F_x (x = beta^2)",
        },
        notes=(
            "Only users in both files are evaluated; users_without_recommendations: zero "
            "is trec_eval -c.",
            "gm_map is map(mean=geometric): exp of the mean of log(max(AP, 1e-5)); with -c "
            "a query without results counts log(1e-5).",
            "max_depth: N is trec_eval -M N; relevance_threshold: L is -l L (graded "
            "measures still use the grades).",
            "Tied scores break by docno compared as text in descending byte order, as "
            "trec_eval does, whatever the ids' type (tie_break item_text_desc: item 9 "
            "before 10 before 100, also for integer ids in CSV or Parquet).",
            "Scores are compared as doubles, as trec_eval 10.0 keeps them (0.5 and "
            "0.500000001 do not tie); trec_eval 9 and pytrec_eval kept floats: the "
            "pytrec_eval preset.",
            "Grades are read as integers, as trec_eval's atol reads qrels: 2.5 counts as 2 "
            "and 0.5 as 0 (fractional_grades: truncate).",
            "A negative grade (qrels relevance -1) marks an item in the pool but unjudged: "
            "bpref, infap, unj and num_nonrel_judged_ret treat it as trec_eval does.",
            "With users_without_recommendations: zero (-c) a user without a run is scored on "
            "an empty list, as trec_eval 10.0 scores every measure in its default form; "
            "utility and rbp_resid written with parameters (utility_a,b,c,d, rbp_resid_p=P) "
            "are scored, as trec_eval 10.0 does, on its one-document placeholder ranking "
            "(empty_list=placeholder: b + c |R| + d (N - 1 - |R|), and 1).",
        ),
        # trec_eval 10.0 -c scores a query without results on a one-document placeholder
        # ranking, then resets the measures "utility" and "rbp_resid" by their printed
        # name: written with parameters, they print another name and keep its value
        when_named={
            "utility": (frozenset("abcd"), {"empty_list": "placeholder"}),
            "rbp_resid": (frozenset({"p"}), {"empty_list": "placeholder"}),
        },
    ),
    "ranx": Preset(
        name="ranx",
        summary="ranx 0.3.21 (ranx.evaluate with make_comparable=True).",
        checked_against=(
            "ranx 0.3.21 golden files, per user and means, with and without ties "
            "(`tests/peers/ranx/test_preset_ranx.py`); hits and rbp on tie-free data "
            "(`tests/peers/test_cascade_peers.py`)"
        ),
        conventions={
            "relevance_threshold": 1,
            "tie_break": "input_order",
            "users_without_recommendations": "zero",
            "users_without_relevant": "zero",
            "prediction_only_users": "skip",
            "precision_denominator": "k",
            "ap_denominator": "relevant",
            "ideal_dcg": "at_k",
            "gain": "linear",
            "gain_below_threshold": "zero",
            "fractional_grades": "truncate",
            "discount": "log2",
            "score_precision": "float64",
            "duplicates": "error",
            "truth_duplicates": "error",
            "max_depth": None,
            "unrated": "ignore",
            "default_rating": None,
            "unpredicted": "error",
            "default_prediction": None,
            "prediction_threshold": None,
        },
        explanations={
            "tie_break": "ranx keeps file order among tied scores only in lists of at most 15 "
            "items: a longer list that holds any tie may come out in another order",
            "gain_below_threshold": "ranx's -l",
            "fractional_grades": "an integer array: 2.5 is 2",
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
            "hits@k": "hits@k",
            "hits": "hits",
            "rbp": "rbp.9 (rbp.95 is rbp(p=0.95))",
        },
        notes=(
            "Every ground-truth user is evaluated (ranx.evaluate(..., make_comparable=True)): "
            "users with no recommendation or with only non-relevant judgments count 0.",
            "Ties: ranx sorts with numba's argsort, which keeps input order for lists of at "
            "most 15 items (tie_break input_order); for longer lists with tied scores ranx's "
            "order follows no simple rule and may differ.",
            "ndcg_burges is ndcg with gain exponential.",
            "ranx's -lN also zeroes the gain of grades below N in ndcg: gain_below_threshold "
            "zero does the same at any relevance_threshold.",
            "Qrels grades are kept in an integer array: 2.5 counts as 2 and 0.5 as 0 "
            "(fractional_grades: truncate).",
            "ranx's rbp gains the grade itself, unscaled: the preset sets rbp's scale to none.",
        ),
        per_metric={"rbp": {"scale": "none"}},
    ),
    "replay": Preset(
        name="replay",
        summary="RePlay 0.22.0 (replay.metrics, DataFrame input): binary metrics.",
        checked_against=(
            "replay-rec 0.22.0 golden files, per user and means, with and without ties "
            "(`tests/peers/replay/test_preset_replay.py`); Surprisal, Novelty, Unexpectedness "
            "and CategoricalDiversity from its golden file `tests/peers/replay/beyond.json` "
            "(`tests/peers/test_recommender_metrics.py`)"
        ),
        conventions={
            "relevance_threshold": 1,
            "tie_break": "item_desc",
            "users_without_recommendations": "zero",
            "users_without_relevant": "skip",
            "prediction_only_users": "skip",  # Surprisal, Novelty: over the truth's users
            "precision_denominator": "k",
            "ap_denominator": "min_k_relevant",
            "ideal_dcg": "at_k",
            "gain": "binary",
            "gain_below_threshold": "grade",
            "fractional_grades": "keep",
            "discount": "log2",
            "score_precision": "float64",
            "duplicates": "error",
            "truth_duplicates": "error",
            "max_depth": None,
            "unrated": "ignore",
            "default_rating": None,
            "unpredicted": "error",
            "default_prediction": None,
            "prediction_threshold": None,
        },
        metrics={
            "precision@k": "Precision@k",
            "recall@k": "Recall@k",
            "hit_rate@k": "HitRate@k",
            "mrr@k": "MRR@k",
            "map@k": "MAP@k",
            "ndcg@k": "NDCG@k",
            "novelty@k(denominator=k,normalize=max,share=users,unseen=one)": "Surprisal@k",
            "unexpectedness@k(expected=history)": "Novelty@k (a user without "
            "recommendations scores 1 there)",
            "unexpectedness@k(denominator=k)": "Unexpectedness@k (a user without a baseline "
            "list scores 0 there)",
            "categorical_diversity@k": "CategoricalDiversity@k",
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
    "jurity": Preset(
        name="jurity",
        summary=(
            "Fidelity's Jurity 2.1 (jurity.recommenders): Precision, Recall, MAP, NDCG on clicks."
        ),
        checked_against=(
            "jurity 2.1.0 with pandas 2.3.3: golden files on the shared data, per user and "
            "means, on tie-free data (Jurity's unstable sort makes tied scores irreproducible) "
            "(`tests/peers/jurity/test_preset_jurity.py`); AUC with and without ties "
            "(`tests/peers/jurity/test_jurity_auc.py`); CTR, AUC(k) and CTR(k) on tie-free "
            "data (`tests/metrics/test_ctr.py`, from `tests/peers/jurity/ctr_*.json` and "
            "`tests/peers/jurity/*_k_*.json`); InterListDiversity and IntraListDiversity "
            "(`tests/peers/test_beyond_peers.py`)"
        ),
        conventions={
            "relevance_threshold": 1,  # Jurity's click: != 0
            "tie_break": "item_desc",
            "users_without_recommendations": "zero",  # Recall, NDCG; Precision, MAP: per_metric
            "users_without_relevant": "skip",
            "prediction_only_users": "evaluate",
            "precision_denominator": "list_length",
            "ap_denominator": "min_k_relevant",
            "ideal_dcg": "all_relevant",
            "gain": "binary",
            "gain_below_threshold": "grade",
            "fractional_grades": "keep",
            "discount": "log2",
            "score_precision": "float64",  # pandas compares the scores as float64
            "duplicates": "error",
            "truth_duplicates": "error",
            "max_depth": None,
            "unrated": "ignore",
            "default_rating": None,
            "unpredicted": "ignore",
            "default_prediction": None,
            "prediction_threshold": None,
        },
        explanations={
            "relevance_threshold": "a click",
            "tie_break": "Jurity orders equal scores with an unstable sort: no order to reproduce",
            "prediction_only_users": "its list metrics, such as IntraListDiversity, "
            "average over every user of the recommendations",
            "unpredicted": "AUC scores the pairs in both files",
        },
        per_metric={
            "precision": {"users_without_recommendations": "skip"},
            "map": {"users_without_recommendations": "skip"},
        },
        metrics={
            "precision@k": "Precision(click_column, k)",
            "recall@k": "Recall(click_column, k)",
            "map@k": "MAP(click_column, k)",
            "ndcg@k": "NDCG(click_column, k)",
            "auc": "AUC(click_column)",
            "auc@k": "AUC(click_column, k): ties in tie_break order (Jurity's sort: unstable)",
            "ctr": "CTR(click_column, estimation=matching|ips|dr)",
            "ctr@k": "CTR(click_column, k, estimation=matching|ips|dr): ties as for auc@k",
            "inter_list_diversity@k": "InterListDiversity(click_column, k, user_sample_size=None)",
            "intra_list_diversity@k": "IntraListDiversity(item_features, click_column, k, "
            "user_sample_size=None): cosine on the feature columns",
        },
        notes=(
            "Feed clicks as relevance 1 (or grades: relevance_threshold 1 makes grade >= 1 a "
            "click and the binary gain ignores the grade).",
            "Precision and MAP average over users with a click and a recommendation; Recall "
            "and NDCG over users with a click, a user without recommendations counting 0.",
            "Jurity breaks score ties with an unstable sort: its numbers on tied scores are "
            "not reproducible, by receval or by Jurity itself on other rows.",
        ),
    ),
    "recommenders": Preset(
        name="recommenders",
        summary=(
            "Microsoft Recommenders 1.2 (recommenders.evaluation.python_evaluation): "
            "precision_at_k, recall_at_k, map_at_k, map, ndcg_at_k."
        ),
        checked_against=(
            "recommenders 1.2.1 with pandas 2.3.3: golden files on the shared data, per user "
            "and means, with and without ties "
            "(`tests/peers/recommenders/test_preset_recommenders.py`); "
            "its `r_precision_at_k` mean skips users at 0 and is not reproduced (a strict "
            "xfail records it); catalog_coverage, novelty, distributional_coverage and "
            "diversity on feature vectors (`tests/peers/test_beyond_peers.py`); diversity on "
            "co-occurrence, serendipity, logloss and exp_var "
            "(`tests/peers/test_recommender_metrics.py`)"
        ),
        conventions={
            "relevance_threshold": 1,
            "tie_break": "input_order",
            "users_without_recommendations": "skip",  # ndcg: zero (per_metric)
            "users_without_relevant": "skip",
            "prediction_only_users": "evaluate",
            "precision_denominator": "k",
            "ap_denominator": "min_k_relevant",
            "ideal_dcg": "at_k",
            "gain": "binary",
            "gain_below_threshold": "zero",
            "fractional_grades": "keep",
            "discount": "log2",
            "score_precision": "float64",  # pandas compares the scores as float64
            "duplicates": "error",
            "truth_duplicates": "error",
            "max_depth": None,
            "unrated": "ignore",
            "default_rating": None,
            "unpredicted": "ignore",
            "default_prediction": None,
            "prediction_threshold": None,
        },
        explanations={
            "relevance_threshold": "rating_true is the rows at or above it",
            "tie_break": "a stable sort",
            "prediction_only_users": "its list metrics, such as novelty and diversity, "
            "average over every recommended list",
            "ap_denominator": "map_at_k; its map is `denominator=relevant`",
            "gain": "ndcg_at_k's default score_type",
            "gain_below_threshold": "rating_true holds only the relevant rows",
            "discount": "loge, its default discfun_type, gives the same NDCG",
            "unpredicted": "its rating metrics score the pairs in both frames: an inner merge",
        },
        per_metric={
            "ndcg": {"users_without_recommendations": "zero"},
            "novelty": {"unseen": "zero"},
        },
        metrics={
            "precision@k": "precision_at_k",
            "recall@k": "recall_at_k",
            "map@k": "map_at_k",
            "map@k(denominator=relevant)": "map",
            "ndcg@k": "ndcg_at_k (score_type='binary')",
            "ndcg@k(gain=linear)": "ndcg_at_k(score_type='raw')",
            "ndcg@k(gain=exponential)": "ndcg_at_k(score_type='exp')",
            "catalog_coverage@k": "catalog_coverage (the train items as the catalog)",
            "novelty@k": "novelty (a mean over all recommendations)",
            "entropy@k": "distributional_coverage",
            "intra_list_diversity@k": "diversity(item_sim_measure='item_feature_vector')",
            "intra_list_diversity@k(feature=cooccurrence)": "diversity (the default "
            "item_sim_measure='item_cooccurrence_count')",
            "serendipity@k(denominator=list_length,relevance=ignored,unexpected=history)": (
                "serendipity (item co-occurrence; col_relevance given: relevance=required)"
            ),
            "log_loss": "logloss",
            "explained_variance": "exp_var",
        },
        notes=(
            "rating_true holds only relevant rows: give the ground truth with its grades and "
            "relevance_threshold picks them (1: grade >= 1); a grade below the threshold "
            "then gains nothing in ndcg (gain_below_threshold: zero).",
            "precision, recall and map average over users in both files; ndcg_at_k over every "
            "user in the ground truth, a user without recommendations counting 0.",
            "Equal scores keep their file order (pandas' stable two-column sort).",
            "r_precision_at_k is not reproduced: its mean leaves out users whose R-precision "
            "is 0, and it cuts R at k.",
            "novelty and catalog_coverage agree when every user has k recommendations, all "
            "of them items of the training log (see tests/peers/recommenders/NOTES.md).",
            "Its rating metrics (logloss, exp_var, rmse, ...) score the pairs in both frames "
            "(an inner merge): unpredicted: ignore.",
        ),
    ),
    "rectools": Preset(
        name="rectools",
        summary="MTS RecTools 0.19 (rectools.metrics): binary metrics on positive interactions.",
        checked_against=(
            "rectools 0.19.0 golden files on fresh seeded data, per user and means, with ties "
            "(`tests/peers/rectools/test_rectools_metrics.py`)"
        ),
        conventions={
            "relevance_threshold": 1,
            "tie_break": "item_desc",
            "users_without_recommendations": "zero",  # list metrics: skip (per_metric)
            "users_without_relevant": "skip",
            "prediction_only_users": "evaluate",
            "precision_denominator": "k",
            "ap_denominator": "relevant",  # MAP(k); divide_by_k=True: denominator=k
            "ideal_dcg": "k_positions",  # NDCG(k); divide_by_achievable=True: ideal=at_k
            "gain": "binary",
            "gain_below_threshold": "grade",
            "fractional_grades": "keep",
            "discount": "log2",
            "score_precision": "float64",
            "duplicates": "error",
            "truth_duplicates": "error",
            "max_depth": None,
            "unrated": "ignore",
            "default_rating": None,
            "unpredicted": "error",
            "default_prediction": None,
            "prediction_threshold": None,
        },
        explanations={
            "relevance_threshold": "its interactions are the rows at or above it",
            "tie_break": "RecTools reads ranks: give them to rank as it was fed",
            "users_without_recommendations": "the users of the recommendations; neither reads "
            "relevance, so users_without_relevant does not apply",
            "users_without_relevant": "its users are the interactions' users",
            "prediction_only_users": "SufficientReco and Intersection average over every "
            "user of the recommendations",
            "precision_denominator": "also Accuracy's and MCC's k predicted positives",
            "discount": "NDCG's log_base=2, its default",
        },
        per_metric={
            "sufficient_reco": {"users_without_recommendations": "skip"},
            "intersection": {"users_without_recommendations": "skip"},
            "user_coverage": {"users": "relevant"},  # CoveredUsers: the interactions' users
        },
        metrics={
            "precision@k": "Precision(k)",
            "recall@k": "Recall(k)",
            "f1@k": "F1Beta(k)",
            "fbeta@k": "F1Beta(k, beta)",
            "hit_rate@k": "HitRate(k)",
            "mrr@k": "MRR(k)",
            "map@k": "MAP(k)",
            "map@k(denominator=k)": "MAP(k, divide_by_k=True)",
            "ndcg@k": "NDCG(k)",
            "ndcg@k(ideal=at_k)": "NDCG(k, divide_by_achievable=True)",
            "accuracy@k": "Accuracy(k) (needs catalog)",
            "mcc@k": "MCC(k) (needs catalog)",
            "partial_auc@k": "PartialAUC(k)",
            "pap@k": "PAP(k)",
            "sufficient_reco@k": "SufficientReco(k)",
            "sufficient_reco@k(measure=share)": "SufficientReco(k, deep=True)",
            "intersection@k": "Intersection(k) (the baseline file as ref_reco)",
            "intersection@k(baseline_k=N)": "Intersection(k, ref_k=N)",
            "user_coverage(users=relevant)": "CoveredUsers(k)",
        },
        notes=(
            "RecTools' interactions are all positive: it is fed the truth rows with "
            "relevance >= relevance_threshold, and its ranking metrics average over their "
            "users (a user without recommendations counting 0).",
            "SufficientReco and Intersection average over every user of the recommendations, "
            "users absent from the ground truth included (prediction_only_users: evaluate); "
            "CoveredUsers over the users with a relevant row (user_coverage's users=relevant).",
            "RecTools reads ranks, not scores: with a rank column receval ranks as it does; "
            "with scores, equal scores are ordered by item, descending.",
            "NDCG(k) divides by the DCG of k relevant items whatever the user's ground truth "
            "(ideal k_positions); without a cutoff receval uses the list's length.",
            "PartialAUC and PAP reproduce insufficient_handling='ignore' (the default).",
        ),
    ),
}
# pytrec_eval bundles trec_eval 9.0, which kept a run's scores as floats: trec_eval's
# conventions but for that one
PRESETS["pytrec_eval"] = dataclasses.replace(
    PRESETS["trec_eval"],
    name="pytrec_eval",
    summary="pytrec_eval (pytrec-eval-terrier 0.5.11: trec_eval 9.0 inside, scores as floats).",
    checked_against=(
        "pytrec-eval-terrier 0.5.11 (`tests/peers/pytrec_eval/test_pytrec_eval.py`, "
        "`tests/peers/pytrec_eval/test_preset_trec_eval.py`; the precision points, set "
        "measures and gm_map in `tests/peers/pytrec_eval/test_pytrec_eval_points.py`, live "
        "and from its golden file `tests/peers/pytrec_eval/points.json`); ir_measures 0.4.3, "
        "which runs pytrec_eval (`tests/peers/test_cascade_peers.py`)"
    ),
    conventions={**PRESETS["trec_eval"].conventions, "score_precision": "float32"},
    explanations={
        **PRESETS["trec_eval"].explanations,
        "score_precision": "pytrec_eval bundles trec_eval 9.0, which kept scores as floats: "
        "0.5 and 0.500000001 tie, then break by docno",
    },
    based_on="trec_eval",
    when_named={},  # trec_eval 9 has no placeholder ranking (it came in 10.0)
    notes=(
        *(
            n
            for n in PRESETS["trec_eval"].notes
            if not n.startswith(("Scores are compared", "With users_without_recommendations"))
        ),
        "Scores are rounded to float32 before ranking, as trec_eval 9 keeps them: 0.5 and "
        "0.500000001 tie, then break by docno (the trec_eval preset compares doubles, as "
        "trec_eval 10.0 does).",
    ),
)
