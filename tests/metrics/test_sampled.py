"""Sampled metrics, corrected: corrected@k, Krichene and Rendle's estimate of
a full-catalog metric from each relevant item's rank among m sampled negatives
(metrics/sampled.py).

References: the paper's construction recomputed here with scipy's hypergeometric and
binomial distributions and numpy's least squares on the whole matrix (small catalogs); the
identity it must give when every negative is sampled; its purpose, an unbiased estimate,
on simulated true ranks; and by hand end to end on candidate lists with integer ids.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_helpers import (
    assert_user_error,
    evaluate_model,
    invoke,
    write,
    write_config,
)

from receval_cli.metrics.sampled import correction, full_metric, sampled_rank_probabilities

stats = pytest.importorskip("scipy.stats")
# the specs the run below checks against the reference (tests/metrics/test_registry_coverage.py)
CHECKED_SPECS = ("corrected@10(items=500,negatives=4)",)


def reference(
    metric: str, k: int | None, m: int, n: int, estimator: str, gamma: float, replace: bool
) -> np.ndarray:
    """The paper's estimator on the whole n x (m + 1) matrix, with scipy's pmfs."""
    ranks = np.arange(1, n + 1)
    a = np.array(
        [
            [
                stats.binom.pmf(j, m, (r - 1) / (n - 1))
                if replace
                else stats.hypergeom.pmf(j, n - 1, r - 1, m)
                for j in range(m + 1)
            ]
            for r in ranks
        ]
    )
    b = full_metric(metric, k, ranks.astype(float))
    if estimator == "cls":
        return np.linalg.lstsq(a, b, rcond=None)[0]
    lhs = (1 - gamma) * a.T @ a + gamma * np.diag(a.sum(axis=0))
    return np.linalg.solve(lhs, a.T @ b)


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize(("metric", "k"), [("ndcg", 10), ("hit_rate", 5), ("mrr", None)])
@pytest.mark.parametrize(("estimator", "gamma"), [("cls", 0.0), ("bv", 0.01), ("bv", 0.3)])
def test_the_estimator_is_the_paper_s(
    metric: str, k: int | None, estimator: str, gamma: float, replace: bool
) -> None:
    m, n = 12, 150
    ours = np.array(correction(metric, k, m, n, estimator, gamma or 0.01, replace))
    theirs = reference(metric, k, m, n, estimator, gamma or 0.01, replace)
    if estimator == "cls":  # least squares: compare the fitted expectations (unique)
        a = sampled_rank_probabilities(np.arange(1, n + 1, dtype=float), m, n, replace)
        assert np.allclose(a @ ours, a @ theirs, atol=1e-9)
    else:
        assert np.allclose(ours, theirs, atol=1e-9)


def test_every_negative_sampled_gives_the_metric_itself() -> None:
    """m = n - 1 without replacement: the sampled ranking is the whole one, r̃ = r."""
    n = 40
    x = correction("ndcg", 10, n - 1, n, "cls", 0.01, False)
    assert np.allclose(x, full_metric("ndcg", 10, np.arange(1, n + 1, dtype=float)), atol=1e-9)


def test_least_squares_is_unbiased_on_average_over_the_true_ranks() -> None:
    """A's rows sum to 1, so the constant is in its column space and the least-squares
    residual sums to 0: averaged over the true ranks 1..n, E[x(r̃) | r] is exactly the mean
    full metric, where the sampled metric itself is far above it."""
    m, n = 50, 2_000
    ranks = np.arange(1, n + 1, dtype=float)
    a = sampled_rank_probabilities(ranks, m, n, False)
    x = np.array(correction("ndcg", 10, m, n, "cls", 0.01, False))
    full = full_metric("ndcg", 10, ranks).mean()
    assert math.isclose((a @ x).mean(), full, rel_tol=1e-9)
    sampled = (a @ full_metric("ndcg", 10, np.arange(1, m + 2, dtype=float))).mean()
    assert sampled > 10 * full


def test_bias_and_variance_on_simulated_users() -> None:
    """True ranks drawn uniformly from 1..n, their sampled ranks drawn as RecBole samples
    them: the mean bv-corrected ndcg@10 lands near the mean full ndcg@10, the sampled one
    far from it."""
    rng = np.random.default_rng(11)
    m, n, users = 50, 2_000, 200_000
    true = rng.integers(1, n + 1, users)
    sampled = 1 + rng.hypergeometric(true - 1, n - true, m)
    full = full_metric("ndcg", 10, true.astype(float)).mean()
    naive = full_metric("ndcg", 10, sampled.astype(float)).mean()
    x = np.array(correction("ndcg", 10, m, n, "bv", 0.01, False))
    corrected = x[sampled - 1].mean()
    assert abs(naive - full) > 10 * abs(corrected - full)


def test_a_run_on_candidate_lists(tmp_path: Path) -> None:
    """Three users, each with its relevant item and m = 4 negatives (integer ids 9, 10,
    100 among them), the relevant one at sampled ranks 1, 3 and 5; a fourth user with one
    negative too few has no value."""
    rows = ["user,item,score"]
    truth = ["user,item"]
    for user, rank in ((1, 1), (2, 3), (3, 5)):
        items = [9, 10, 100, 1000, 10000]
        for place, item in enumerate(items, start=1):
            rows.append(f"{user},{item},{10 - place}")
        truth.append(f"{user},{items[rank - 1]}")
    rows += ["4,9,1", "4,10,0.5", "4,100,0.2", "4,1000,0.1"]
    truth.append("4,9")
    write(tmp_path / "candidates.csv", "\n".join(rows) + "\n")
    write(tmp_path / "truth.csv", "\n".join(truth) + "\n")
    (spec,) = CHECKED_SPECS
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": "candidates.csv"},
            "ground_truth": {"path": "truth.csv"},
            "metrics": ["ndcg@10", spec],
        },
    )
    values = tmp_path / "users.csv"
    result = invoke("run", config, "-q", "--format", "json", "--per-user", values)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    x = reference("ndcg", 10, 4, 500, "bv", 0.01, False)
    block = data["models"]["model"]
    assert math.isclose(block["metrics"][spec], (x[0] + x[2] + x[4]) / 3, abs_tol=1e-9)
    assert block["users"]["evaluated_per_metric"][spec] == 3
    sampled_ndcg = (1 + 1 / math.log2(4) + 1 / math.log2(6) + 1) / 4
    assert math.isclose(block["metrics"]["ndcg@10"], sampled_ndcg, abs_tol=1e-12)
    assert any("overstate the same metrics over the whole catalog" in w for w in data["warnings"])
    for fmt in ("table", "markdown", "html"):
        shown = invoke("run", config, *(["-q"] if fmt != "table" else []), "--format", fmt)
        assert shown.exit_code == 0, (fmt, shown.stderr)
        assert "corrected@10(items=500,negatives=4)" in shown.stdout, fmt


def candidate_lists(folder: Path, users: int = 60, m: int = 9) -> dict[str, Any]:
    """Sampled evaluation's inputs: each user's relevant item among m negatives, tied
    scores among them, integer ids; a few users with a list of another length (no value)."""
    rng = np.random.default_rng(3)
    rows, truth = ["user,item,score"], ["user,item"]
    for user in range(1, users + 1):
        items = rng.choice(np.arange(1, 400), m + 1 - (user % 13 == 0), replace=False)
        for item in items:
            rows.append(f"{user},{item},{rng.choice([0.1, 0.5, 0.9, rng.random()])}")
        truth.append(f"{user},{items[0]}")
    write(folder / "candidates.csv", "\n".join(rows) + "\n")
    write(folder / "truth.csv", "\n".join(truth) + "\n")
    return {
        "predictions": {"path": str(folder / "candidates.csv")},
        "ground_truth": {"path": str(folder / "truth.csv")},
        "metrics": [
            f"corrected@5(items=400,negatives={m})",
            f"corrected(metric=mrr,items=400,negatives={m},estimator=cls)",
            f"corrected@3(metric=hit_rate,items=400,negatives={m},sampling=with_replacement)",
            "ndcg@5",
        ],
    }


@pytest.mark.parametrize("engine", ["streaming", "partitions 3", "partitions 7"])
def test_every_engine_agrees(tmp_path: Path, engine: str) -> None:
    from engine_parity import POLARS_ENGINES

    config = candidate_lists(tmp_path)
    expected = evaluate_model(
        tmp_path, {**config, "engine": "in_memory"}, "one.yaml", per_user=True
    )
    found = evaluate_model(tmp_path, {**config, **POLARS_ENGINES[engine]}, "e.yaml", per_user=True)
    assert found.metrics == expected.metrics
    assert found.users == expected.users


@pytest.mark.spark
def test_spark_agrees(tmp_path: Path) -> None:
    config = candidate_lists(tmp_path)
    expected = evaluate_model(
        tmp_path, {**config, "engine": "in_memory"}, "one.yaml", per_user=True
    )
    found = evaluate_model(tmp_path, {**config, "engine": "spark"}, "s.yaml", per_user=True)
    assert found.metrics == expected.metrics


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("corrected@10(items=100,negatives=100)", "negatives (100) must be fewer than"),
        ("corrected@10(items=100,negatives=2.5)", "negatives is 2.5; it must be a whole number"),
    ],
)
def test_impossible_counts_are_refused(tmp_path: Path, spec: str, says: str) -> None:
    write(tmp_path / "p.csv", "user,item,score\n1,9,1\n")
    write(tmp_path / "t.csv", "user,item\n1,9\n")
    config = write_config(
        tmp_path,
        {"predictions": {"path": "p.csv"}, "ground_truth": {"path": "t.csv"}, "metrics": [spec]},
    )
    assert_user_error(invoke("run", config), says)


def test_no_list_of_negatives_plus_one_candidates_names_negatives(tmp_path: Path) -> None:
    """Lists of 3 candidates where negatives=5 says each list holds 6: the fix names
    negatives, not the cutoff (which has nothing to do with it)."""
    write(tmp_path / "p.csv", "user,item,score\n1,9,3\n1,8,2\n1,7,1\n")
    write(tmp_path / "t.csv", "user,item\n1,9\n")
    spec = "corrected@10(items=100,negatives=5)"
    config = write_config(
        tmp_path,
        {"predictions": {"path": "p.csv"}, "ground_truth": {"path": "t.csv"}, "metrics": [spec]},
    )
    message = assert_user_error(invoke("run", config), f"{spec} is undefined", "negatives")
    assert "Set negatives to the negatives sampled per user" in message, message
    assert "cutoff" not in message, message
