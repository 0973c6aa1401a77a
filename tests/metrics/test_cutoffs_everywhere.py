"""Cutoffs for the click and pair metrics: ctr@k, auc@k and gauc@k (Jurity's CTR(k=...) and
AUC(k=...)), and max_depth for every metric.

Hand-computed cases, then a naive reference (plain Python, written from the definitions)
on random data with integer ids whose text and number orders differ (9, 10, 100), heavy
ties, users on one side only and lists shorter and longer than k, under every tie rule.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import invoke, write_config

import receval_cli

CLICK = {"relevance": "click"}


def hand_recs() -> pl.DataFrame:
    # u: a 0.9, b 0.5, c 0.5, d 0.1; v: a 0.8, e 0.3
    return pl.DataFrame(
        {
            "user": ["u", "u", "u", "u", "v", "v"],
            "item": ["a", "b", "c", "d", "a", "e"],
            "score": [0.9, 0.5, 0.5, 0.1, 0.8, 0.3],
        }
    )


def hand_log() -> pl.DataFrame:
    # logged: u-a click 1 (p 0.5), u-c click 0 (p 0.25), u-d click 1 (p 0.5), v-e click 1 (p 1)
    return pl.DataFrame(
        {
            "user": ["u", "u", "u", "v"],
            "item": ["a", "c", "d", "e"],
            "click": [1, 0, 1, 1],
            "propensity": [0.5, 0.25, 0.5, 1.0],
        }
    )


def test_ctr_at_k_by_hand() -> None:
    """Top 2 under item_desc (the default tie_break): u: a, c (c before b); v: a, e."""
    report = receval_cli.evaluate(
        hand_recs(),
        hand_log(),
        ["ctr@2", "ctr@2(estimator=ips)", "ctr@2(estimator=dr)", "ctr@1", "ctr"],
        truth_columns=CLICK,
    )
    assert report.metrics["ctr@2"] == pytest.approx(2 / 3)  # matched u-a 1, u-c 0, v-e 1
    # ips over the 4 top-2 recommendations: u-a 1/0.5, u-c 0, v-a 0, v-e 1/1
    assert report.metrics["ctr@2(estimator=ips)"] == pytest.approx((2 + 0 + 0 + 1) / 4)
    # dr: r^ + [matched] (click - r^) / p
    dr = (0.9 + 0.1 / 0.5) + (0.5 - 0.5 / 0.25) + 0.8 + (0.3 + 0.7 / 1.0)
    assert report.metrics["ctr@2(estimator=dr)"] == pytest.approx(dr / 4)
    assert report.metrics["ctr@1"] == 1.0  # u-a (clicked); v-a is not logged
    assert report.metrics["ctr"] == pytest.approx(3 / 4)  # every recommendation


def test_ctr_at_k_follows_the_tie_break() -> None:
    """b and c tie at 0.5: item_asc puts b (not logged) second, so ctr@2 matches u-a and v-e."""
    report = receval_cli.evaluate(
        hand_recs(),
        hand_log(),
        ["ctr@2", "ctr@2(estimator=ips)"],
        conventions={"tie_break": "item_asc"},
        truth_columns=CLICK,
    )
    assert report.metrics["ctr@2"] == 1.0
    assert report.metrics["ctr@2(estimator=ips)"] == pytest.approx((2 + 0 + 0 + 1) / 4)


def test_max_depth_cuts_ctr() -> None:
    """max_depth: 2 is ctr@2 for ctr (it used every recommendation before)."""
    cut = receval_cli.evaluate(
        hand_recs(),
        hand_log(),
        ["ctr", "ctr(estimator=dr)", "ctr@3(estimator=dr)"],
        conventions={"max_depth": 2},
        truth_columns=CLICK,
    )
    at2 = receval_cli.evaluate(
        hand_recs(), hand_log(), ["ctr@2", "ctr@2(estimator=dr)"], truth_columns=CLICK
    )
    assert cut.metrics["ctr"] == at2.metrics["ctr@2"]
    assert cut.metrics["ctr(estimator=dr)"] == at2.metrics["ctr@2(estimator=dr)"]
    assert cut.metrics["ctr@3(estimator=dr)"] == at2.metrics["ctr@2(estimator=dr)"]
    assert cut.logged is not None
    assert cut.logged["recommendations"] == 4  # the rows past max_depth are not counted


def hand_pairs() -> tuple[pl.DataFrame, pl.DataFrame]:
    predictions = pl.DataFrame(
        {
            "user": ["u"] * 4 + ["v"] * 3,
            "item": ["a", "b", "c", "d", "a", "b", "c"],
            "score": [0.9, 0.8, 0.8, 0.1, 0.3, 0.2, 0.1],
        }
    )
    truth = pl.DataFrame(
        {
            "user": ["u"] * 4 + ["v"] * 3,
            "item": ["a", "b", "c", "d", "a", "b", "c"],
            "rel": [1, 0, 1, 0, 0, 1, 1],
        }
    )
    return predictions, truth


def test_auc_at_k_by_hand() -> None:
    """Top 2 (item_desc: c before b at 0.8): u a(0.9, 1), c(0.8, 1); v a(0.3, 0), b(0.2, 1).
    Clicked 0.9, 0.8, 0.2 against unclicked 0.3: 2 of 3 pairs ordered."""
    predictions, truth = hand_pairs()
    report = receval_cli.evaluate(
        predictions,
        truth,
        ["auc@2", "auc@3", "auc", "gauc@3", "gauc@3(weight=none)"],
        truth_columns={"relevance": "rel"},
    )
    assert report.metrics["auc@2"] == pytest.approx(2 / 3)
    # top 3: u a 1, c 1, b 0 (0.8, tied with c); v a 0, b 1, c 1: clicked 0.9 0.8 0.2 0.1,
    # unclicked 0.8 0.3: 0.9 > both (2), 0.8 = 0.8 (1/2) and > 0.3 (1), 0.2 and 0.1 < both
    assert report.metrics["auc@3"] == pytest.approx(3.5 / 8)
    # gauc@3: u: clicked 0.9, 0.8 vs 0.8: (1 + 1/2) / 2 = 0.75 (3 pairs); v: clicked 0.2,
    # 0.1 vs 0.3: 0 (3 pairs)
    assert report.metrics["gauc@3"] == pytest.approx((0.75 * 3 + 0 * 3) / 6)
    assert report.metrics["gauc@3(weight=none)"] == pytest.approx(0.375)


def test_max_depth_cuts_the_pair_metrics() -> None:
    """max_depth: 2 scores the pairs of each user's first two predictions, for auc and for
    the rating metrics, as if the file held only those rows."""
    predictions, truth = hand_pairs()
    metrics = ["auc", "mae", "rmse", "gauc"]
    cut = receval_cli.evaluate(
        predictions,
        truth,
        metrics,
        conventions={"max_depth": 2, "unpredicted": "ignore"},
        truth_columns={"relevance": "rel"},
    )
    first_two = predictions.filter(pl.col("item").is_in(["a", "c"]) & (pl.col("user") == "u"))
    first_two = pl.concat([first_two, predictions.filter(pl.col("user") == "v").head(2)])
    shorter = receval_cli.evaluate(
        first_two,
        truth,
        metrics,
        conventions={"unpredicted": "ignore"},
        truth_columns={"relevance": "rel"},
    )
    assert cut.metrics == shorter.metrics
    assert cut.metrics["auc"] == pytest.approx(2 / 3)
    assert cut.pairs is not None
    assert cut.pairs["used"] == 4


# --- a naive reference on random data ---------------------------------------------------


def random_data(seed: int) -> tuple[list[tuple[int, int, float]], list[tuple[int, int, int]]]:
    rng = random.Random(seed)
    items = [9, 10, 100, 11, 99, 101, 1000, 5, 50, 500, 7, 70]
    predictions, truth = [], []
    for user in (9, 10, 100, 3, 30, 300, 4):
        if user != 4:  # user 4: only in the log
            for item in rng.sample(items, rng.choice([1, 2, 5, 9, 12])):
                predictions.append((user, item, rng.choice([0.1, 0.5, 0.5, 0.9])))
        if user != 300:  # user 300: only in the predictions
            for item in rng.sample(items, rng.choice([2, 4, 8])):
                truth.append((user, item, rng.choice([0, 1])))
    return predictions, truth


def naive_order(rows: list[tuple[int, float]], tie_break: str) -> list[int]:
    """A user's items, best first: score descending, then the tie rule."""

    def key(row: tuple[int, float]) -> tuple[float, Any]:
        item, score = row
        return (-score, item if "text" not in tie_break else str(item))

    ascending = sorted(rows, key=key)
    if tie_break.endswith("_asc"):
        return [item for item, _ in ascending]
    # descending ties: sort by the tie key descending within equal scores
    groups = itertools.groupby(ascending, key=lambda row: row[1])
    return [item for _, group in groups for item, _ in reversed(list(group))]


def naive_top(
    predictions: list[tuple[int, int, float]], k: int | None, tie_break: str
) -> dict[tuple[int, int], float]:
    by_user: dict[int, list[tuple[int, float]]] = {}
    for user, item, score in predictions:
        by_user.setdefault(user, []).append((item, score))
    kept = {}
    for user, rows in by_user.items():
        scores = dict(rows)
        for item in naive_order(rows, tie_break)[:k]:
            kept[(user, item)] = scores[item]
    return kept


def naive_auc(pairs: list[tuple[float, int]]) -> float | None:
    """None with one class (no clicked or no unclicked pair): no AUC."""
    clicked = [s for s, c in pairs if c]
    other = [s for s, c in pairs if not c]
    if not clicked or not other:
        return None
    wins = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in clicked for b in other)
    return wins / (len(clicked) * len(other))


def naive_ctr(top: dict[tuple[int, int], float], log: dict[tuple[int, int], int]) -> float | None:
    """Matching CTR; None (no value) when no recommendation is in the log."""
    matched = [log[pair] for pair in top if pair in log]
    return sum(matched) / len(matched) if matched else None


@pytest.mark.parametrize("tie_break", ["item_desc", "item_asc", "item_text_desc"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_auc_and_ctr_at_k_agree_with_a_naive_reference(seed: int, tie_break: str) -> None:
    predictions, truth = random_data(seed)
    log = {(u, i): c for u, i, c in truth}
    ks = (1, 2, 3, 5, 20)
    metrics = [f"{name}@{k}" for name in ("auc", "ctr") for k in ks] + ["auc", "ctr"]
    report = receval_cli.evaluate(
        pl.DataFrame(predictions, schema=["user", "item", "score"], orient="row"),
        pl.DataFrame(truth, schema=["user", "item", "click"], orient="row"),
        metrics,
        conventions={"tie_break": tie_break, "unpredicted": "ignore"},
        truth_columns=CLICK,
    )
    for k in (*ks, None):
        top = naive_top(predictions, k, tie_break)
        pairs = [(score, log[pair]) for pair, score in top.items() if pair in log]
        suffix = "" if k is None else f"@{k}"
        want, got = naive_auc(pairs), report.metrics[f"auc{suffix}"]
        assert (
            got == want if want is None or got is None else math.isclose(got, want, abs_tol=1e-12)
        )
        want, got = naive_ctr(top, log), report.metrics[f"ctr{suffix}"]
        assert (
            got == want if want is None or got is None else math.isclose(got, want, abs_tol=1e-12)
        )


def test_auc_at_k_is_the_same_on_every_engine(tmp_path: Path) -> None:
    """auc@k, gauc@k and max_depth through the config path: in memory, streaming and
    partitions give the same bits."""
    predictions, truth = random_data(5)
    pl.DataFrame(predictions, schema=["user", "item", "score"], orient="row").write_parquet(
        tmp_path / "p.parquet"
    )
    pl.DataFrame(truth, schema=["user", "item", "click"], orient="row").write_csv(
        tmp_path / "t.csv"
    )
    base = {
        "predictions": {"path": "p.parquet"},
        "ground_truth": {"path": "t.csv", "columns": {"relevance": "click"}},
        "conventions": {"unpredicted": "ignore", "max_depth": 9},
        "metrics": ["auc@3", "auc", "gauc@2", "mae"],
        "output": {"format": "json"},
    }
    outputs = []
    for name, settings in {
        "memory": {"engine": "in_memory"},
        "streaming": {"engine": "streaming"},
        "partitions": {"partitions": 3},
    }.items():
        config = write_config(tmp_path, {**base, **settings}, f"{name}.yaml")
        result = invoke("run", config)
        assert result.exit_code == 0, result.stderr
        metrics = json.loads(result.stdout)["models"]["model"]["metrics"]
        outputs.append({n: None if v is None else float.hex(v) for n, v in metrics.items()})
    assert outputs[0] == outputs[1] == outputs[2]
    assert set(outputs[0]) == {"auc@3", "auc", "gauc@2", "mae"}
