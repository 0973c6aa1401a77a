"""Hand-computed values of the cascade metrics (rbp, rbp_resid, err, nerr), hits, the
trec_eval gain measures (g, bing, ndcg_rel, rndcg) and the `gains` map of the DCG family.

Each case is one user: a ranked list (item ids, best first) and its judgments; the value is
worked out by hand in the comment beside it.
"""

from __future__ import annotations

import math

import polars as pl
import pytest

import receval_cli
from receval_cli.metrics import MetricSpec
from receval_cli.metrics.registry import SpecError, resolve

LOG3 = math.log2(3)


def value(listed: list[str], judged: dict[str, float], spec: str, **conventions: object) -> float:
    """The metric for one user ("u") whose list is `listed` and whose judgments `judged`."""
    scores = [float(len(listed) - n) for n in range(len(listed))]
    predictions = pl.DataFrame({"user": ["u"] * len(listed), "item": listed, "score": scores})
    truth = pl.DataFrame(
        {"user": ["u"] * len(judged), "item": list(judged), "rel": list(judged.values())},
        schema={"user": pl.String, "item": pl.String, "rel": pl.Float64},
    )
    report = receval_cli.evaluate(
        predictions,
        truth,
        [spec],
        conventions={"users_without_relevant": "zero", **conventions},
        truth_columns={"relevance": "rel"},
    )
    got = report.per_user.row(0, named=True)[str(MetricSpec.parse(spec))]
    assert isinstance(got, float)
    return got


CASES = [
    # rbp: relevant at ranks 1 and 3, binary gain, p = 0.5: 0.5 * (1 + 0.25)
    (["a", "x", "b"], {"a": 1, "b": 1}, "rbp(p=0.5,gain=binary)", 0.625),
    # rbp@2 keeps ranks 1-2: 0.5 * 1
    (["a", "x", "b"], {"a": 1, "b": 1}, "rbp@2(p=0.5,gain=binary)", 0.5),
    # graded, scale=unit: the user's grades reach 4, so gains are grade / 4: 0.5 * (0.5 + 0.5)
    (["a", "b"], {"a": 2, "b": 4}, "rbp(p=0.5)", 0.5),
    # scale=none: 0.5 * (2 + 4 * 0.5)
    (["a", "b"], {"a": 2, "b": 4}, "rbp(p=0.5,scale=none)", 2.0),
    # gains within [0, 1] are not rescaled: grade 1 at rank 2 of 2: 0.5 * 0.5
    (["x", "a"], {"a": 1, "b": 0}, "rbp(p=0.5)", 0.25),
    # a mapped gain widens the range: gains 1 -> 3, the range [0, 3]: 0.5 * (3/3)
    (["a"], {"a": 1}, "rbp(p=0.5,gains=1:3)", 0.5),
    # rbp_resid: x unjudged at rank 2 of 3: p^3 + (1 - p) p = 0.125 + 0.25
    (["a", "x", "b"], {"a": 1, "b": 0}, "rbp_resid(p=0.5)", 0.375),
    # a negative grade is unjudged too (trec_eval's pool without judgment)
    (["a", "x", "b"], {"a": 1, "b": 0, "x": -1}, "rbp_resid(p=0.5)", 0.375),
    # every listed item judged: 0, as trec_eval (the ranks past the list are not counted)
    (["a", "b"], {"a": 1, "b": 0}, "rbp_resid(p=0.5)", 0.0),
    # err: grades (0, 1), max_grade 4: R_2 = 1/16, ERR = (1/16) / 2
    (["x", "a"], {"a": 1}, "err@10", 1 / 32),
    # grades (4, 4): R = 15/16; 15/16 + (1/16)(15/16)/2
    (["a", "b"], {"a": 4, "b": 4}, "err", 15 / 16 + (1 / 16) * (15 / 16) / 2),
    # a grade above max_grade counts as max_grade: 2^2 - 1 over 2^2
    (["a"], {"a": 5}, "err(max_grade=2)", 3 / 4),
    # err@1 cuts the second item off
    (["x", "a"], {"a": 4}, "err@1", 0.0),
    # nerr, binary with R = 1/2: list (non-relevant, relevant): 0.25; ideal 0.5
    (["x", "a"], {"a": 1, "x": 0}, "nerr(grades=binary,max_grade=1)", 0.5),
    # graded: list (1, 2) against the ideal (2, 1), max_grade 2: R(1) = 1/4, R(2) = 3/4
    (
        ["a", "b"],
        {"a": 1, "b": 2},
        "nerr(max_grade=2)",
        (1 / 4 + (3 / 4) * (3 / 4) / 2) / (3 / 4 + (1 / 4) * (1 / 4) / 2),
    ),
    # no relevant item: 0
    (["a"], {"a": 0}, "nerr", 0.0),
    # hits: relevant at ranks 1 and 3
    (["a", "x", "b"], {"a": 1, "b": 2}, "hits@2", 1.0),
    (["a", "x", "b"], {"a": 1, "b": 2}, "hits", 2.0),
    (["a", "x", "b"], {"a": 1, "b": 2}, "hits@30", 2.0),
    # bing: relevant at 1 (no non-relevant above) and 3 (one above), |R| = 3
    (["a", "x", "b"], {"a": 1, "b": 1, "c": 1}, "bing", (1 + 1 / LOG3) / 3),
    # g: x not judged, a of grade 1 at rank 2: C_2 = 1 + 1, S_2 = 1: 1/log2(3), over 1
    (["x", "a"], {"a": 1}, "g", 1 / LOG3),
    # g, graded: a (1) then b (2); ideal (2, 1): C_1 = 2, S_1 = 1: 1/log2(3);
    # C_2 = 3, S_2 = 3: 2/log2(2); over 3
    (["a", "b"], {"a": 1, "b": 2}, "g", (1 / LOG3 + 2 / 1) / 3),
    # ndcg_rel: ideal (1, 1); a found at rank 1: DCG_1/IDCG_1 = 1; b not found: DCG_2/IDCG_2
    (["a", "x"], {"a": 1, "b": 1}, "ndcg_rel", (1 + 1 / (1 + 1 / LOG3)) / 2),
    # rndcg: ideal (2, 1), levels end at 1 and 2; list b, a, x, y (4 >= 2 + 2: a last point)
    (
        ["b", "a", "x", "y"],
        {"a": 2, "b": 1},
        "rndcg",
        (1 / 2 + 2 * (1 + 2 / LOG3) / (2 + 1 / LOG3)) / 3,
    ),
    # the same with 3 items: no last point
    (["b", "a", "x"], {"a": 2, "b": 1}, "rndcg", (1 / 2 + (1 + 2 / LOG3) / (2 + 1 / LOG3)) / 2),
    # no relevant item: 0
    (["a"], {"a": 0}, "rndcg", 0.0),
    # gains: grade 1 -> 3, 2 -> 9: DCG = 3 + 9/log2(3), IDCG = 9 + 3/log2(3)
    (["a", "b"], {"a": 1, "b": 2}, "ndcg(gains=1:3;2:9)", (3 + 9 / LOG3) / (9 + 3 / LOG3)),
    # a grade not in the map gains its grade: 2 -> 2, 1 -> 5
    (["b", "a"], {"a": 1, "b": 2}, "dcg(gains=1:5)", 2 + 5 / LOG3),
    # a grade mapped to 0 leaves the ideal list: b (2) alone, at rank 2 of the list
    (["a", "b"], {"a": 1, "b": 2}, "ndcg(gains=1:0)", (2 / LOG3) / 2),
    # cg with exponential gain and a map: 2^2 - 1 for b, 0.5 for a
    (["a", "b"], {"a": 1, "b": 2}, "cg(gain=exponential,gains=1:0.5)", 3.5),
]


@pytest.mark.parametrize(("listed", "judged", "spec", "expected"), CASES, ids=[c[2] for c in CASES])
def test_hand_computed(
    listed: list[str], judged: dict[str, float], spec: str, expected: float
) -> None:
    assert value(listed, judged, spec) == pytest.approx(expected, abs=1e-12)


def test_an_empty_list_scores_zero() -> None:
    predictions = pl.DataFrame({"user": ["v"], "item": ["a"], "score": [1.0]})
    truth = pl.DataFrame({"user": ["u", "v"], "item": ["a", "b"], "rel": [1, 1]})
    specs = ["rbp", "rbp_resid", "err@5", "nerr@5", "hits@5", "g", "bing", "ndcg_rel", "rndcg"]
    report = receval_cli.evaluate(predictions, truth, specs, truth_columns={"relevance": "rel"})
    row = report.per_user.filter(pl.col("user") == "u").row(0, named=True)
    assert {s: row[s] for s in specs} == dict.fromkeys(specs, 0.0)


def test_a_gain_map_round_trips_in_the_spec() -> None:
    spec = resolve(MetricSpec.parse("ndcg@10(gains=1:3;2:9;4:4.5)"))
    assert str(spec) == "ndcg@10(gains=1:3;2:9;4:4.5)"
    assert spec.param_dict() == {"gains": "1:3;2:9;4:4.5"}


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("ndcg(gains=1=3)", "is not grade:gain"),
        ("ndcg(gains=-1:3)", "is not grade:gain"),
        ("ndcg(gains=1:3;1:4)", "given twice"),
        ("dcg(gains=a:b)", "is not grade:gain"),
        ("ndcg(gains=1:-1)", "gains must be >= 0"),
    ],
)
def test_a_bad_gain_map_is_refused(text: str, why: str) -> None:
    with pytest.raises(SpecError, match=why):
        resolve(MetricSpec.parse(text))


@pytest.mark.parametrize("spec", ["rbp(p=1)", "rbp_resid(p=1.5)", "rbp(p=0)"])
def test_persistence_must_lie_strictly_between_0_and_1(spec: str) -> None:
    with pytest.raises(SpecError, match=r"between 0 and 1|share in"):
        resolve(MetricSpec.parse(spec))
