"""The recommender libraries' metrics receval reproduces with a parameter or a metric of its
own: hand-computed cases, then agreement with the libraries' golden files.

RePlay 0.22.0 (tests/peers/replay/beyond.json, run_replay_beyond.py):
    Surprisal@k             novelty@k(share=users, unseen=one, normalize=max, denominator=k)
    Novelty@k               unexpectedness@k(expected=history)
    Unexpectedness@k        unexpectedness@k(denominator=k)
    CategoricalDiversity@k  categorical_diversity@k

The hand case (checked line by line in the comments):

    lists    u1: a b c     u2: a c d     u3: e          (scores descending)
    truth    u1: b         u2: d         u3: x          (every user evaluated)
    catalog  a x, b x, c y, d y, e z, x z               (category)
    log      (1,a) (2,a) (3,a) (1,b) (4,c): a 3 rows, 3 users; b 1; c 1; 4 users
    baseline u1: a (0.9), z (0.5)      u2: x (0.9)      u3: none
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import receval_cli
from receval_cli.metrics import MetricSpec, resolve

GOLDEN = Path(__file__).parent
DATA = GOLDEN / "peer_metrics_data"
TOL = 1e-9
CUTOFFS = (1, 3, 5, 10, 30)

LISTS = {1: ["a", "b", "c"], 2: ["a", "c", "d"], 3: ["e"]}
PREDICTIONS = pl.DataFrame(
    {
        "user": [u for u, items in LISTS.items() for _ in items],
        "item": [i for items in LISTS.values() for i in items],
        "score": [0.9 - 0.1 * n for items in LISTS.values() for n in range(len(items))],
    }
)
TRUTH = pl.DataFrame({"user": [1, 2, 3], "item": ["b", "d", "x"], "relevance": [1, 1, 1]})
CATALOG = pl.DataFrame({"item": list("abcdex"), "category": list("xxyyzz")})
LOG = pl.DataFrame({"user": [1, 2, 3, 1, 4], "item": ["a", "a", "a", "b", "c"]})
BASELINE = pl.DataFrame({"user": [1, 1, 2], "item": ["a", "z", "x"], "score": [0.9, 0.5, 0.9]})

# surprisal of an item held by h of the log's 4 users: log2(4 / h) / log2(4); unseen: 1
_A = math.log2(4 / 3) / 2
HAND: dict[str, float] = {
    # u1 a b c: (a + 1 + 1) / 3; u2 a c d(unseen: 1): the same; u3 e(unseen): 1
    "novelty@3(share=users,unseen=one,normalize=max,denominator=k)": (2 * (_A + 2) / 3 + 1 / 3) / 3,
    # the same sums divided by 5
    "novelty@5(share=users,unseen=one,normalize=max,denominator=k)": (2 * (_A + 2) / 5 + 1 / 5) / 3,
    # normalize alone: unseen items skipped (u3 has none left: 0); u1 (a + 1 + 1) / 3, u2
    # (a + 1) / 2
    "novelty@3(share=users,normalize=max)": ((_A + 2) / 3 + (_A + 1) / 2 + 0) / 3,
    # unseen=one in bits, share of rows (5): a -log2(3/5), b, c log2 5, unseen log2 5
    "novelty@3(unseen=one)": (2 * (-math.log2(3 / 5) + 2 * math.log2(5)) / 3 + math.log2(5)) / 3,
    # popular baseline top 5: a, c, b. u1 overlap 3: 1 - 3/5; u2 a c: 1 - 2/5; u3 e: 1
    "unexpectedness@5(denominator=k)": ((1 - 3 / 5) + (1 - 2 / 5) + 1) / 3,
    # the same at k = 3 by list length: u1 0, u2 1/3, u3 1
    "unexpectedness@3": (0 + 1 / 3 + 1) / 3,
    # u1 knows a, b: c new (1/3); u2 knows a: c, d new (2/3); u3 knows a: e new (1)
    "unexpectedness@3(expected=history)": (1 / 3 + 2 / 3 + 1) / 3,
    # at k = 5, 1 - (known items in the top 5) / 5, the empty slots unexpected: u1 knows
    # a, b: 1 - 2/5; u2 knows a: 1 - 1/5; u3: 1 - 0
    "unexpectedness@5(expected=history,denominator=k)": ((1 - 2 / 5) + (1 - 1 / 5) + 1) / 3,
    # categories u1 x x y: 2; u2 x y y: 2; u3 z: 1; divided by k
    "categorical_diversity@3": (2 / 3 + 2 / 3 + 1 / 3) / 3,
    "categorical_diversity@5": (2 / 5 + 2 / 5 + 1 / 5) / 3,
    # by list length: 2/3, 2/3, 1/1
    "categorical_diversity@5(denominator=list_length)": (2 / 3 + 2 / 3 + 1) / 3,
    "categorical_diversity": (2 / 3 + 2 / 3 + 1) / 3,
    # top 1: one category each
    "categorical_diversity@1": 1.0,
    # co-occurrence: a has users 1, 2, 3; b user 1; c user 4 (d, e absent): sim(a, b) =
    # 1 / sqrt(3 * 1), every other pair 0. u1 a b c: 1 - (1/sqrt 3) / 3; u2 a c d: 1; u3
    # has no pair (left out)
    "intra_list_diversity@3(feature=cooccurrence)": ((1 - 1 / math.sqrt(3) / 3) + 1) / 2,
    "intra_list_diversity@2(feature=cooccurrence)": ((1 - 1 / math.sqrt(3)) + 1) / 2,
    # 1 - mean similarity to the user's log items (sim(i, i) = 1). u1 knows a, b: a and b
    # 1 - (1 + 1/sqrt 3) / 2 each, c 1; u2 knows a: a 0, c 1, d 1; u3 knows a: e 1
    "serendipity@3(unexpected=history,relevance=ignored,denominator=list_length)": (
        (2 * (1 - (1 + 1 / math.sqrt(3)) / 2) + 1) / 3 + 2 / 3 + 1
    )
    / 3,
    # relevant only (u1 b, u2 d, u3 x not listed), divided by k = 3
    "serendipity@3(unexpected=history)": ((1 - (1 + 1 / math.sqrt(3)) / 2) / 3 + 1 / 3 + 0) / 3,
    # relevance ignored, baseline a c b (popular): u1 none unexpected, u2 d, u3 e
    "serendipity@3(relevance=ignored)": (0 + 1 / 3 + 1 / 3) / 3,
}
# with the baseline file: u1's list a z, u2's x, u3 none (every item unexpected)
HAND_WITH_BASELINE: dict[str, float] = {
    # u1 a b c vs a z: overlap 1, 1 - 1/3; u2 a c d vs x: 1; u3: 1
    "unexpectedness@3(denominator=k)": ((1 - 1 / 3) + 1 + 1) / 3,
    "unexpectedness@5(denominator=k)": ((1 - 1 / 5) + 1 + 1) / 3,
}


def hand_report(metrics: list[str], **inputs: Any) -> Any:
    return receval_cli.evaluate(
        PREDICTIONS,
        TRUTH,
        metrics,
        catalog=CATALOG,
        catalog_columns={"category": "category"},
        interactions=LOG,
        **inputs,
    )


def test_hand_computed_values() -> None:
    report = hand_report(list(HAND))
    for name, want in HAND.items():
        got = report.metrics[str(resolve(MetricSpec.parse(name)))]
        assert got == pytest.approx(want, abs=1e-12), name
    report = hand_report(list(HAND_WITH_BASELINE), baseline=BASELINE)
    for name, want in HAND_WITH_BASELINE.items():
        got = report.metrics[str(resolve(MetricSpec.parse(name)))]
        assert got == pytest.approx(want, abs=1e-12), name


def test_empty_lists_score_zero() -> None:
    """A ground-truth user without recommendations scores 0 (users_without_recommendations
    zero), whatever the denominator."""
    truth = pl.concat([TRUTH, pl.DataFrame({"user": [5], "item": ["a"], "relevance": [1]})])
    metrics = [
        "novelty@3(share=users,unseen=one,normalize=max,denominator=k)",
        "unexpectedness@3(denominator=k)",
        "unexpectedness@3(expected=history)",
        "categorical_diversity@3",
    ]
    report = receval_cli.evaluate(
        PREDICTIONS,
        truth,
        metrics,
        catalog=CATALOG,
        catalog_columns={"category": "category"},
        interactions=LOG,
    )
    row = report.per_user.filter(pl.col("user") == 5).row(0, named=True)
    for metric in report.metrics:
        assert row[metric] == 0.0, metric


def test_serendipity_leaves_out_users_without_history() -> None:
    """unexpected=history: a user absent from the log has no history to be surprised
    against: left out of the mean (MS Recommenders has no row for it either)."""
    log = LOG.filter(pl.col("user") != 3)
    metric = "serendipity@3(unexpected=history,relevance=ignored)"
    report = receval_cli.evaluate(PREDICTIONS, TRUTH, [metric], interactions=log)
    values = dict(report.per_user.select("user", report.per_user.columns[-1]).iter_rows())
    assert values[3] is None
    assert values[2] == pytest.approx(2 / 3)
    assert report.users["evaluated_per_metric"] == {
        "serendipity@3(relevance=ignored,unexpected=history)": 2
    }


def test_a_log_of_one_user_normalizes_to_zero() -> None:
    """normalize=max divides by log2 of the log's users: with one user that is 0, and every
    value is 0 (RePlay divides 0 by 0 there)."""
    log = pl.DataFrame({"user": [1, 1], "item": ["a", "b"]})
    report = receval_cli.evaluate(
        PREDICTIONS,
        TRUTH,
        ["novelty@3(share=users,normalize=max,unseen=one)"],
        interactions=log,
    )
    assert list(report.metrics.values()) == [0.0]


# --- RePlay 0.22.0 ----------------------------------------------------------------------

# RePlay metric -> the receval spec that reproduces it (at @k)
REPLAY_TO_RECEVAL = {
    "Surprisal": "novelty@{k}(denominator=k,normalize=max,share=users,unseen=one)",
    "Novelty": "unexpectedness@{k}(expected=history)",
    "Unexpectedness": "unexpectedness@{k}(denominator=k)",
    "CategoricalDiversity": "categorical_diversity@{k}",
}


def read(name: str, **extra: type[pl.DataType]) -> pl.DataFrame:
    return pl.read_csv(DATA / name, schema={"user": pl.Int64, "item": pl.Int64, **extra})


@pytest.fixture(scope="module")
def replay() -> dict[str, Any]:
    golden = json.loads((GOLDEN / "replay" / "beyond.json").read_text())
    assert golden["library"] == "replay-rec"
    assert golden["version"] == "0.22.0"
    return golden


def replay_run(metric: str, users: list[int], **inputs: Any) -> Any:
    """receval under the replay preset with `users` as the ground truth's users (one
    relevant row each), so the users evaluated are RePlay's."""
    truth = pl.DataFrame({"user": users, "item": [-1] * len(users), "relevance": [1] * len(users)})
    specs = [REPLAY_TO_RECEVAL[metric].format(k=k) for k in CUTOFFS]
    return receval_cli.evaluate(
        read("predictions.csv", score=pl.Float64),
        truth,
        specs,
        conventions="replay",
        catalog=pl.read_csv(DATA / "catalog.csv", schema={"item": pl.Int64, "category": pl.String}),
        catalog_columns={"category": "category"},
        interactions=read("log.csv"),
        baseline=read("baseline.csv", score=pl.Float64),
        **inputs,
    )


def assert_agrees(
    report: Any, golden: dict[str, Any], metric: str, users: set[int] | None = None
) -> int:
    """Per user (on `users`, default all of RePlay's) and, when all, the mean; returns the
    number of values compared."""
    rows = {r["user"]: r for r in report.per_user.iter_rows(named=True)}
    compared = 0
    for k in CUTOFFS:
        spec = REPLAY_TO_RECEVAL[metric].format(k=k)
        entry = golden["metrics"][f"{metric}@{k}"]
        for user, want in zip(entry["users"], entry["per_user"], strict=True):
            if users is None or user in users:
                got = rows[user][spec]
                assert math.isclose(got, want, rel_tol=0, abs_tol=TOL), (metric, k, user, got)
                compared += 1
        if users is None:
            got, want = report.metrics[spec], entry["mean"]
            assert math.isclose(got, want, rel_tol=0, abs_tol=TOL), (metric, k, got, want)
            compared += 1
    return compared


@pytest.mark.parametrize("metric", ["Surprisal", "Unexpectedness", "CategoricalDiversity"])
def test_agrees_with_replay_over_the_recommended_users(replay: dict[str, Any], metric: str) -> None:
    """These three evaluate the users of the recommendations."""
    users = replay["metrics"][f"{metric}@1"]["users"]
    assert set(users) == set(read("predictions.csv", score=pl.Float64)["user"])
    if metric == "Unexpectedness":
        # RePlay gives 0 to a user without a baseline list; receval finds all unexpected
        listed = set(read("baseline.csv", score=pl.Float64)["user"])
        report = replay_run(metric, [u for u in users if u in listed])
        assert_agrees(report, replay, metric, users=listed)
        for k in CUTOFFS:
            entry = replay["metrics"][f"{metric}@{k}"]
            pairs = zip(entry["users"], entry["per_user"], strict=True)
            unlisted = [v for u, v in pairs if u not in listed]
            assert unlisted
            assert set(unlisted) == {0.0}
            spec = REPLAY_TO_RECEVAL[metric].format(k=k)
            total = report.metrics[spec] * report.users["evaluated"]
            assert math.isclose(total / len(users), entry["mean"], rel_tol=0, abs_tol=TOL)
        return
    compared = assert_agrees(replay_run(metric, users), replay, metric)
    assert compared == len(CUTOFFS) * (len(users) + 1)


def test_agrees_with_replay_novelty(replay: dict[str, Any]) -> None:
    """RePlay's Novelty evaluates the users of train (the log); a user without
    recommendations scores 1.0 there (receval: 0, or skipped). Over the log's users with
    recommendations, per user and mean."""
    entry = replay["metrics"]["Novelty[with recommendations]@1"]
    recommended = set(read("predictions.csv", score=pl.Float64)["user"])
    in_log = set(read("log.csv")["user"])
    assert set(entry["users"]) == in_log & recommended
    report = replay_run("Novelty", entry["users"])
    golden = {
        "metrics": {
            key.replace("Novelty[with recommendations]", "Novelty"): value
            for key, value in replay["metrics"].items()
            if key.startswith("Novelty[with recommendations]")
        }
    }
    assert_agrees(report, golden, "Novelty")
    for k in CUTOFFS:  # the whole log: the same values, and 1.0 for users without a list
        whole = replay["metrics"][f"Novelty@{k}"]
        assert set(whole["users"]) == in_log
        pairs = zip(whole["users"], whole["per_user"], strict=True)
        without = [v for u, v in pairs if u not in recommended]
        assert without
        assert set(without) == {1.0}
    assert_agrees(report, replay, "Novelty", users=recommended)


def test_ties_decide_some_replay_values(replay: dict[str, Any]) -> None:
    """The data's tied scores matter: in file order (tie_break input_order) receval no
    longer matches RePlay's Surprisal at some cutoff; RePlay breaks ties by item,
    descending, as numbers (tie_break item_desc, the replay preset's)."""
    users = replay["metrics"]["Surprisal@1"]["users"]
    report = replay_run("Surprisal", users)
    other = receval_cli.evaluate(
        read("predictions.csv", score=pl.Float64),
        pl.DataFrame({"user": users, "item": [-1] * len(users), "relevance": [1] * len(users)}),
        [REPLAY_TO_RECEVAL["Surprisal"].format(k=k) for k in CUTOFFS],
        conventions={"preset": "replay", "tie_break": "input_order"},
        interactions=read("log.csv"),
    )
    differ = [s for s in report.metrics if report.metrics[s] != other.metrics[s]]
    assert differ


def test_replay_data_cover_the_edge_cases() -> None:
    predictions = read("predictions.csv", score=pl.Float64)
    lengths = predictions.group_by("user").len()["len"]
    assert lengths.min() == 1
    assert lengths.max() > 15
    assert {9, 10, 100, 1000} <= set(predictions["item"])
    assert predictions.select(pl.struct("user", "score").is_duplicated().any()).item()
    truth = read("truth.csv", relevance=pl.Float64)
    assert set(truth["user"]) - set(predictions["user"])  # truth only
    assert set(predictions["user"]) - set(truth["user"])  # predictions only


def test_natural_truth_evaluates_receval_users(replay: dict[str, Any]) -> None:
    """With the data's own ground truth (users on either side only), receval evaluates the
    truth's users with a relevant item: those with recommendations match RePlay's values,
    those without score 0."""
    predictions = read("predictions.csv", score=pl.Float64)
    truth = read("truth.csv", relevance=pl.Float64)
    report = receval_cli.evaluate(
        predictions,
        truth,
        [REPLAY_TO_RECEVAL["Surprisal"].format(k=5)],
        conventions="replay",
        interactions=read("log.csv"),
    )
    evaluated = report.per_user.filter(pl.col("status") == "evaluated")
    entry = replay["metrics"]["Surprisal@5"]
    want = dict(zip(entry["users"], entry["per_user"], strict=True))
    spec = REPLAY_TO_RECEVAL["Surprisal"].format(k=5)
    missing = 0
    for row in evaluated.iter_rows(named=True):
        if row["user"] in want:
            assert math.isclose(row[spec], want[row["user"]], rel_tol=0, abs_tol=TOL)
        else:
            assert row[spec] == 0.0
            missing += 1
    assert missing > 0


# --- log loss and explained variance: hand cases, MS Recommenders 1.2.1, scikit-learn ---

_EPS = 2.0**-52


def pairs_report(predicted: list[float], actual: list[float], metrics: list[str]) -> Any:
    n = len(predicted)
    items = [f"i{j}" for j in range(n)]
    users = [1 + j % 2 for j in range(n)]
    return receval_cli.evaluate(
        pl.DataFrame({"user": users, "item": items, "score": predicted}),
        pl.DataFrame({"user": users, "item": items, "relevance": actual}),
        metrics,
    )


@pytest.mark.parametrize(
    ("predicted", "clicked", "want"),
    [
        # -(ln 0.8 + ln 0.6) / 2
        ([0.8, 0.4], [1, 0], -(math.log(0.8) + math.log(0.6)) / 2),
        # certain and right: ln(1 - eps) each; certain and wrong: -ln(eps) = 36.04
        ([1.0, 0.0], [1, 0], -math.log(1 - _EPS)),
        ([1.0, 0.0], [0, 1], -math.log(_EPS)),
        # one class only: defined here
        ([0.5, 0.25], [1, 1], -(math.log(0.5) + math.log(0.25)) / 2),
    ],
)
def test_log_loss_hand_cases(predicted: list[float], clicked: list[int], want: float) -> None:
    report = pairs_report(predicted, [float(c) for c in clicked], ["log_loss"])
    assert report.metrics["log_loss"] == pytest.approx(want, rel=1e-15)


def test_log_loss_has_no_value_for_a_score_outside_the_unit_interval() -> None:
    report = pairs_report([0.5, 1.5], [1.0, 0.0], ["log_loss"])
    assert report.metrics["log_loss"] is None
    assert any("log_loss has no value" in w for w in report.warnings)


@pytest.mark.parametrize(
    ("predicted", "actual", "want"),
    [
        # e = (1, 1, 2): Var(e) = 2/9, Var(r) = 2/3: 1 - 1/3
        ([2.0, 3.0, 5.0], [1.0, 2.0, 3.0], 2 / 3),
        # a constant bias costs nothing: 1 (r2 would be 1 - 3/2 = -0.5)
        ([2.0, 3.0, 4.0], [1.0, 2.0, 3.0], 1.0),
        # every rating equal: 0, as r2
        ([1.0, 2.0, 3.0], [2.0, 2.0, 2.0], 0.0),
        ([2.0, 2.0], [2.0, 2.0], 0.0),
    ],
)
def test_explained_variance_hand_cases(
    predicted: list[float], actual: list[float], want: float
) -> None:
    report = pairs_report(predicted, actual, ["explained_variance"])
    assert report.metrics["explained_variance"] == pytest.approx(want, abs=1e-15)


# receval metric -> (MS Recommenders' function, its truth file, its predictions file)
RECOMMENDERS_PAIR_METRICS = {
    "log_loss": ("logloss", "clicks.csv", "probabilities.csv"),
    "explained_variance": ("exp_var", "ratings.csv", "predictions.csv"),
}


@pytest.mark.slow
@pytest.mark.parametrize("metric", list(RECOMMENDERS_PAIR_METRICS))
def test_agrees_with_recommenders_and_scikit_learn(metric: str) -> None:
    """Under the recommenders preset (unpredicted: ignore, MS's inner merge), over all
    pairs and over each user's pairs alone."""
    golden = json.loads((GOLDEN / "recommenders" / "probability.json").read_text())
    assert (golden["library"], golden["version"]) == ("recommenders", "1.2.1")
    function, truth_file, predictions_file = RECOMMENDERS_PAIR_METRICS[metric]
    entry = golden["metrics"][function]
    truth = read(truth_file, relevance=pl.Float64)
    predictions = read(predictions_file, score=pl.Float64)
    assert set(truth.select("user", "item").rows()) ^ set(predictions.select("user", "item").rows())

    def run(p: pl.DataFrame, t: pl.DataFrame) -> Any:
        return receval_cli.evaluate(p, t, [metric], conventions="recommenders")

    report = run(predictions, truth)
    assert report.pairs["used"] == entry["pairs"]
    assert report.pairs["unpredicted"]["count"] > 0  # rated pairs without a prediction
    for want in (entry["value"], entry["sklearn"]):
        assert math.isclose(report.metrics[metric], want, rel_tol=0, abs_tol=TOL)
    assert len(entry["per_user"]) > 30
    for user, want in entry["per_user"].items():
        one = pl.col("user") == int(user)
        got = run(predictions.filter(one), truth.filter(one)).metrics[metric]
        assert math.isclose(got, want, rel_tol=0, abs_tol=TOL), (user, got, want)


# --- MS Recommenders 1.2.1: co-occurrence diversity and serendipity ---------------------

# MS Recommenders' function -> the receval spec that reproduces it (at @k)
RECOMMENDERS_TO_RECEVAL = {
    "diversity": "intra_list_diversity@{k}(feature=cooccurrence)",
    "serendipity": "serendipity@{k}(denominator=list_length,relevance=ignored,unexpected=history)",
    "serendipity[relevance]": "serendipity@{k}(denominator=list_length,unexpected=history)",
}


def recommenders_run(specs: list[str], users: list[int]) -> Any:
    """receval under the recommenders preset on fresh_predictions.csv and the log, with
    `users` as the ground truth's users (and truth.csv's grades for their items)."""
    truth = read("truth.csv", relevance=pl.Float64).filter(pl.col("user").is_in(users))
    dummy = pl.DataFrame(
        {"user": users, "item": [-1] * len(users), "relevance": [1.0] * len(users)}
    )
    return receval_cli.evaluate(
        read("fresh_predictions.csv", score=pl.Float64),
        pl.concat([truth, dummy]),
        specs,
        conventions="recommenders",
        interactions=read("log.csv"),
    )


@pytest.fixture(scope="module")
def recommenders() -> dict[str, Any]:
    golden = json.loads((GOLDEN / "recommenders" / "cooccurrence.json").read_text())
    assert (golden["library"], golden["version"]) == ("recommenders", "1.2.1")
    return golden


@pytest.mark.parametrize("function", list(RECOMMENDERS_TO_RECEVAL))
def test_agrees_with_recommenders_cooccurrence(recommenders: dict[str, Any], function: str) -> None:
    """Per user and mean, at every cutoff; a user the library has no row for (a list of
    one item for diversity) is left out of receval's mean too."""
    users = sorted(set(read("fresh_predictions.csv", score=pl.Float64)["user"]))
    cutoffs = CUTOFFS
    if function == "diversity":
        # at k = 1 no list has a pair: the library's mean is NaN, receval refuses the cutoff
        assert recommenders["metrics"]["diversity@1"]["value"] is None
        cutoffs = CUTOFFS[1:]
    specs = [RECOMMENDERS_TO_RECEVAL[function].format(k=k) for k in cutoffs]
    report = recommenders_run(specs, users)
    rows = {r["user"]: r for r in report.per_user.iter_rows(named=True)}
    compared = 0
    for k, spec in zip(cutoffs, specs, strict=True):
        entry = recommenders["metrics"][f"{function}@{k}"]
        want = {int(u): v for u, v in entry["per_user"].items()}
        for user in users:
            got = rows[user][spec]
            if user in want:
                assert math.isclose(got, want[user], rel_tol=0, abs_tol=TOL), (spec, user, got)
                compared += 1
            else:
                assert got is None, (spec, user, got)
        assert math.isclose(report.metrics[spec], entry["value"], rel_tol=0, abs_tol=TOL)
        assert report.per_user[spec].drop_nulls().len() == len(want)
    assert compared > 200


# --- every polars engine, bit for bit; Spark plans the co-occurrence metrics too ---------

NEW_METRICS = [
    "novelty@10(share=users,unseen=one,normalize=max,denominator=k)",
    "novelty@5(unseen=one)",
    "unexpectedness@10(expected=history)",
    "unexpectedness@10(denominator=k)",
    "unexpectedness@3(expected=history,denominator=k)",
    "categorical_diversity@10",
    "categorical_diversity(denominator=list_length)",
    "intra_list_diversity@5(feature=cooccurrence)",
    "intra_list_diversity(feature=cooccurrence)",
    "serendipity@10(unexpected=history,relevance=ignored,denominator=list_length)",
    "serendipity@5(unexpected=history)",
    "log_loss",
    "explained_variance",
]


@pytest.mark.slow
def test_polars_engines_agree_bit_for_bit(tmp_path: Path) -> None:
    from cli_helpers import evaluate_model
    from engine_parity import POLARS_ENGINES, exact, parity_data

    config = {**parity_data(tmp_path), "metrics": NEW_METRICS}
    found = {
        name: exact(
            evaluate_model(tmp_path, {**config, **settings}, f"{name.replace(' ', '_')}.yaml")
        )
        for name, settings in POLARS_ENGINES.items()
    }
    expected = found.pop("in_memory")
    assert len(expected) == len(NEW_METRICS)
    assert all(value is not None for value in expected.values())
    for name, metrics in found.items():
        assert metrics == expected, name


def test_spark_plans_cooccurrence(tmp_path: Path) -> None:
    """Spark's buckets hold their own users' interactions only, and receive the log's
    pairs of the items their co-occurrences read (engines/spark_global_states.py): the
    metrics are not refused there (their values: tests/engines/test_spark_global_states.py)."""
    from cli_helpers import write_config
    from engine_parity import parity_data

    from receval_cli.config.loading import load_config
    from receval_cli.engines.run_plan import plan_run

    for metric in (
        "intra_list_diversity@5(feature=cooccurrence)",
        "serendipity@5(unexpected=history)",
    ):
        config = {**parity_data(tmp_path), "metrics": [metric], "engine": "spark"}
        assert plan_run(load_config(write_config(tmp_path, config))).engine.spark


# --- the log's totals where a bucket holds none of the log's items --------------------

UNSEEN_PREDICTIONS = "user,item,score\n1,a,0.9\n1,b,0.8\n2,x,0.9\n2,y,0.8\n3,a,0.5\n3,y,0.4\n"
UNSEEN_TRUTH = "user,item\n1,a\n2,x\n3,a\n"
UNSEEN_LOG = "user,item\n1,a\n1,b\n3,a\n4,b\n"
UNSEEN_SPECS = [
    "novelty@2(share=users,unseen=one)",
    "novelty@2(denominator=k,normalize=max,unseen=one)",
]
# by hand: the log has 4 rows and 3 users; a and b have 2 rows and 2 users each; x and y
# are unseen (one row, one user). share=users: user 1 -log2(2/3); user 2 -log2(1/3); user
# 3 their mean. Rows, normalised by log2(4) and divided by k = 2: 0.5, 1, 0.75.
_U1, _U2 = -math.log2(2 / 3), -math.log2(1 / 3)
UNSEEN_EXPECTED = {UNSEEN_SPECS[0]: (_U1 + _U2 + (_U1 + _U2) / 2) / 3, UNSEEN_SPECS[1]: 0.75}


def _unseen_config(tmp_path: Path, engine: dict[str, Any]) -> Path:
    (tmp_path / "p.csv").write_text(UNSEEN_PREDICTIONS, encoding="utf-8")
    (tmp_path / "t.csv").write_text(UNSEEN_TRUTH, encoding="utf-8")
    (tmp_path / "log.csv").write_text(UNSEEN_LOG, encoding="utf-8")
    config = {
        "predictions": {"path": "p.csv"},
        "ground_truth": {"path": "t.csv"},
        "interactions": {"path": "log.csv"},
        "metrics": UNSEEN_SPECS,
        **engine,
    }
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def _unseen_values(config: Path) -> dict[str, float]:
    from receval_cli.analysis.runs import evaluate_config
    from receval_cli.config.loading import load_config

    report = evaluate_config(load_config(config))
    return {name: report.models["model"].metrics[name] for name in UNSEEN_SPECS}


@pytest.mark.parametrize("partitions", [1, 3, 7])
def test_unseen_items_in_every_bucket(tmp_path: Path, partitions: int) -> None:
    """User 2 recommends only items absent from the log: a bucket holding user 2 alone
    still scores them as one row (one user) of the whole log."""
    values = _unseen_values(_unseen_config(tmp_path, {"partitions": partitions}))
    assert values == pytest.approx(UNSEEN_EXPECTED, rel=1e-12)


def test_unseen_items_in_every_bucket_on_spark(spark: Any, tmp_path: Path) -> None:
    """On Spark each bucket received only its items' popularity rows, so a bucket of
    unseen items had no log totals (novelty 0.557 instead of 1.085): the totals are
    shipped to every bucket."""
    engine = {"engine": "spark", "spark": {"conf": {"spark.sql.shuffle.partitions": "7"}}}
    values = _unseen_values(_unseen_config(tmp_path, engine))
    assert values == pytest.approx(UNSEEN_EXPECTED, rel=1e-12)
