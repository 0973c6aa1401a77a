"""tie_break: expected (metrics/tie_expectation.py): each metric's mean over every order of
the tied items, in closed form.

Checked against: every order enumerated, each scored by receval's plain metrics (checked
against trec_eval and the peers elsewhere) and by a naive re-implementation here;
scikit-learn's tie-averaged DCG and nDCG (McSherry and Najork's, `ignore_ties=False`);
the plain metrics where there is no tie (bit for bit); every engine, Spark included.
The data has integer ids whose text and number orders differ (9, 10, 100), heavy ties,
fractional, zero and negative grades, users on one side only and lists shorter than k.
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
from cli_helpers import evaluate_model, evaluate_written, invoke, write_config
from engine_parity import (
    CONVENTIONS,
    ENGINES,
    check_engine,
    exact,
    matrix,
    parity_data,
)

from receval_cli.api import evaluate
from receval_cli.config.conventions import Conventions
from receval_cli.errors import ConfigError
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.registry import REGISTRY
from receval_cli.metrics.tie_expectation import EXPECTED, ORDER_FREE, WHOLE_LIST, order_dependent
from receval_cli.report.latex import render_latex
from receval_cli.report.render import render_github, render_junit

EXPECTED_TIES = {**CONVENTIONS, "tie_break": "expected"}
ITEMS = [9, 10, 100, 1000, 11, 12, 101, 5]
GRADES = (-1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0)


def tied_rows(seed: int, users: int = 14) -> tuple[list[tuple[int, int, float]], list[Any]]:
    """(user, item, score) with ties of at most 4 items, and (user, item, grade): users only
    in the truth or only in the predictions, lists of 0 to 8 items."""
    rng = random.Random(seed)
    predictions, truth = [], []
    for index, user in enumerate([9, 10, 100, *range(200, 200 + users)]):
        if index % 7 != 3:
            items = rng.sample(ITEMS, rng.choice([0, 1, 3, 5, 8]))
            scores: list[float] = []
            while len(scores) < len(items):  # ties of 1 to 4 items
                scores += [round(rng.random(), 3)] * rng.choice([1, 2, 3, 4])
            predictions += [(user, i, s) for i, s in zip(items, scores, strict=False)]
        if index % 9 != 5:
            truth += [(user, i, rng.choice(GRADES)) for i in rng.sample(ITEMS, rng.choice([1, 3]))]
    return predictions, truth


def frame(rows: list[Any], names: list[str]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=names, orient="row")


def every_order(predictions: list[tuple[int, int, float]]) -> list[tuple[int, int, int, float]]:
    """Each user's list in every order of its tied items, as users of their own: (user,
    order, item, position), position 1 first."""
    by_user: dict[int, list[tuple[int, float]]] = {}
    for user, item, score in predictions:
        by_user.setdefault(user, []).append((item, score))
    rows = []
    for user, items in by_user.items():
        ties = [
            list(g)
            for _, g in itertools.groupby(sorted(items, key=lambda r: -r[1]), key=lambda r: r[1])
        ]
        for order, parts in enumerate(
            itertools.product(*(itertools.permutations(t) for t in ties))
        ):
            listed = [item for part in parts for item, _ in part]
            rows += [(user, order, item, position) for position, item in enumerate(listed, 1)]
    return rows


def means_over_orders(
    predictions: list[tuple[int, int, float]],
    truth: list[Any],
    specs: list[str],
    **conventions: Any,
) -> dict[int, dict[str, float]]:
    """Per user: each spec's mean over every order of its tied items, each order scored by
    the plain metric (an order given as ranks, tie_break input_order)."""
    orders = every_order(predictions)
    pseudo = [
        (user * 10_000 + order, item, float(position)) for user, order, item, position in orders
    ]
    users = {user for user, _, _ in predictions}
    pseudo_truth = [
        (user * 10_000 + order, item, grade)
        for user, item, grade in truth
        if user in users
        for order in range(max(o for u, o, _, _ in orders if u == user) + 1)
    ]
    report = evaluate(
        frame(pseudo, ["user", "item", "rank"]),
        frame(pseudo_truth, ["user", "item", "relevance"]),
        specs,
        conventions={**conventions, "tie_break": "input_order"},
        prediction_columns={"user": "user", "item": "item", "rank": "rank"},
    )
    assert report.per_user is not None
    values = report.per_user.with_columns(original=pl.col("user") // 10_000)
    means = values.group_by("original").agg(pl.col(specs).mean())
    return {row.pop("original"): row for row in means.iter_rows(named=True)}


def expected_values(
    predictions: list[Any], truth: list[Any], specs: list[str], **conventions: Any
) -> dict[int, dict[str, float]]:
    report = evaluate(
        frame(predictions, ["user", "item", "score"]),
        frame(truth, ["user", "item", "relevance"]),
        specs,
        conventions={**conventions, "tie_break": "expected"},
    )
    assert report.per_user is not None
    return {row.pop("user"): row for row in report.per_user.drop("status").iter_rows(named=True)}


def tie_aware_specs() -> list[str]:
    """Every per-user spec of the registry's matrix that tie_break expected computes."""
    conventions = Conventions(**EXPECTED_TIES)
    found = []
    for text in matrix():
        spec = MetricSpec.parse(text)
        definition = lookup(spec.name)
        if definition.scope != "user" or definition.ties not in (EXPECTED, ORDER_FREE):
            continue
        if order_dependent(spec, conventions.metric_params(spec)) is None:
            found.append(text)
    return found


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_tie_aware_metric_is_its_mean_over_every_order(seed: int) -> None:
    """The registry's matrix, every spec tie_break expected computes: per user, the mean
    of the plain metric over every order of the tied items."""
    predictions, truth = tied_rows(seed)
    specs = [s for s in tie_aware_specs() if "catalog" not in s]
    assert len(specs) > 40
    conventions = {k: v for k, v in CONVENTIONS.items() if k != "unpredicted"}
    want = means_over_orders(predictions, truth, specs, **conventions)
    got = expected_values(predictions, truth, specs, **conventions)
    checked = 0
    for user, values in want.items():
        for spec in specs:
            assert close(got[user][spec], values[spec]), (
                seed,
                user,
                spec,
                got[user][spec],
                values[spec],
            )
            checked += 1
    assert checked > 40 * 10


def naive(listed: list[int], grades: dict[int, float], k: int) -> dict[str, float]:
    """Plain metrics of one order, written out (threshold 1, linear gain, log2)."""
    relevant = {i for i, g in grades.items() if g >= 1}
    top = listed[:k]
    hits = sum(i in relevant for i in top)
    gains = [max(grades.get(i, 0.0), 0.0) for i in top]
    dcg = sum(g / math.log2(p + 1) for p, g in enumerate(gains, 1))
    ideal = sorted((max(g, 0.0) for g in grades.values()), reverse=True)[:k]
    idcg = sum(g / math.log2(p + 1) for p, g in enumerate(ideal, 1))
    first = next((p for p, i in enumerate(top, 1) if i in relevant), None)
    found, precisions = 0, 0.0
    for p, item in enumerate(top, 1):
        if item in relevant:
            found += 1
            precisions += found / p
    return {
        f"precision@{k}": hits / k,
        f"recall@{k}": hits / len(relevant),
        f"hit_rate@{k}": float(hits > 0),
        f"mrr@{k}": 0.0 if first is None else 1 / first,
        f"map@{k}": precisions / min(k, len(relevant)),
        f"dcg@{k}": dcg,
        f"ndcg@{k}": dcg / idcg if idcg else 0.0,
    }


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_a_naive_mean_over_every_order_agrees(k: int) -> None:
    """The mean over orders by a naive re-implementation of the plain metrics."""
    predictions, truth = tied_rows(seed=k + 10, users=20)
    grades: dict[int, dict[int, float]] = {}
    for user, item, grade in truth:
        grades.setdefault(user, {})[item] = grade
    orders: dict[tuple[int, int], list[int]] = {}
    for user, order, item, _ in every_order(predictions):
        orders.setdefault((user, order), []).append(item)
    specs = list(naive([], {1: 1.0}, k))
    got = expected_values(predictions, truth, specs)
    checked = 0
    for user in {u for u, _ in orders}:
        if not any(g >= 1 for g in grades.get(user, {}).values()):
            continue  # no relevant item: skipped (users_without_relevant)
        lists = [listed for (u, _), listed in orders.items() if u == user]
        for spec in specs:
            mean = sum(naive(listed, grades[user], k)[spec] for listed in lists) / len(lists)
            assert close(got[user][spec], mean), (user, spec, got[user][spec], mean)
            checked += 1
    assert checked >= 7 * 8


def test_dcg_and_ndcg_agree_with_scikit_learns_tie_averaged_dcg() -> None:
    """sklearn.metrics.dcg_score / ndcg_score with ignore_ties=False (McSherry and Najork's
    averaging) on longer lists with heavy ties: every ground-truth item is in the list, so
    both ideal lists are the same."""
    from sklearn.metrics import dcg_score, ndcg_score

    rng = random.Random(5)
    predictions, truth = [], []
    for user in range(60):
        items = rng.sample(range(1, 200), rng.choice([2, 7, 16, 33]))
        for item in items:
            predictions.append((user, item, float(rng.choice([0, 1, 1, 2, 3, 3, 3]))))
            truth.append((user, item, float(rng.choice([0, 0, 1, 2, 3]))))
    for k in (1, 3, 10, 20):
        got = expected_values(predictions, truth, [f"dcg@{k}", f"ndcg@{k}"])
        for user, values in got.items():
            scores = [s for u, _, s in predictions if u == user]
            grades = [g for u, _, g in truth if u == user]
            if not any(g >= 1 for g in grades):
                continue
            want_dcg = dcg_score([grades], [scores], k=k, ignore_ties=False)
            want_ndcg = ndcg_score([grades], [scores], k=k, ignore_ties=False)
            assert math.isclose(values[f"dcg@{k}"], want_dcg, rel_tol=1e-12), (user, k)
            assert math.isclose(values[f"ndcg@{k}"], want_ndcg, rel_tol=1e-12), (user, k)


def test_without_ties_every_value_is_the_plain_one_bit_for_bit(tmp_path: Path) -> None:
    """No tied score: tie_break expected gives item_asc's report, every bit."""
    config = parity_data(tmp_path)
    scores = pl.read_parquet(tmp_path / "predictions.parquet")
    distinct = scores.with_columns(score=pl.int_range(pl.len(), 0, -1).cast(pl.Float64) / 7)
    distinct.write_parquet(tmp_path / "predictions.parquet")
    specs = [s for s in tie_aware_specs() if "catalog" not in s]
    plain = {**config, "metrics": specs, "conventions": {**CONVENTIONS, "tie_break": "item_asc"}}
    averaged = {**plain, "conventions": EXPECTED_TIES}
    expected_report = evaluate_model(tmp_path, averaged, "expected.yaml")
    assert exact(expected_report) == exact(evaluate_model(tmp_path, plain, "plain.yaml"))
    assert expected_report.users["ties"] == {
        "tied_positions": 0,
        "tied_groups": 0,
        "users_with_ties": 0,
    }


def test_max_depth_averages_over_which_tied_items_the_cut_keeps() -> None:
    """max_depth 3 cuts a tie: the mean over orders of the list cut at 3."""
    predictions, truth = tied_rows(seed=21)
    specs = ["precision@2", "recall@5", "ndcg@5", "map@5", "mrr", "hit_rate@5", "num_rel_ret"]
    want = means_over_orders(predictions, truth, specs, max_depth=3)
    got = expected_values(predictions, truth, specs, max_depth=3)
    for user, values in want.items():
        for spec in specs:
            assert close(got[user][spec], values[spec]), (user, spec)


def test_ranks_that_tie_are_averaged_too() -> None:
    """Predictions given as ranks: equal ranks are a tie, averaged the same way."""
    predictions = [(1, 9, 1), (1, 10, 2), (1, 100, 2), (1, 5, 4), (2, 7, 1), (2, 8, 1)]
    truth = [(1, 10, 1.0), (1, 100, 2.0), (2, 8, 1.0)]
    report = evaluate(
        frame(predictions, ["user", "item", "rank"]),
        frame(truth, ["user", "item", "relevance"]),
        ["ndcg@2", "precision@2", "mrr", "hit_rate@1"],
        conventions={"tie_break": "expected"},
        prediction_columns={"user": "user", "item": "item", "rank": "rank"},
    )
    assert report.per_user is not None
    values = {row["user"]: row for row in report.per_user.iter_rows(named=True)}
    # user 1: items 10 and 100 share positions 2 and 3; ideal 2, 1
    assert values[1]["ndcg@2"] == pytest.approx((1.5 / math.log2(3)) / (2 + 1 / math.log2(3)))
    assert values[1]["precision@2"] == 0.5
    assert values[1]["mrr"] == 0.5
    # user 2: two items tied at the top, one relevant: half the orders put it first
    assert values[2]["hit_rate@1"] == 0.5
    assert values[2]["mrr"] == pytest.approx(0.75)
    assert report.users["ties"] == {"tied_positions": 4, "tied_groups": 2, "users_with_ties": 2}


def test_the_tied_positions_are_counted() -> None:
    """users.ties: positions within the deepest cutoff whose score another item of the
    list shares, the ties they form, and the users with one; counted here by hand."""
    predictions, truth = tied_rows(seed=4, users=30)
    report = evaluate(
        frame(predictions, ["user", "item", "score"]),
        frame(truth, ["user", "item", "relevance"]),
        ["precision@3", "ndcg@5"],
        conventions={"tie_break": "expected"},
    )
    positions = groups = users = 0
    by_user: dict[int, list[float]] = {}
    for user, _, score in predictions:
        by_user.setdefault(user, []).append(score)
    for scores in by_user.values():
        top = sorted(scores, reverse=True)[:5]
        tied = [s for s in top if scores.count(s) > 1]
        positions += len(tied)
        groups += len(set(tied))
        users += bool(tied)
    assert positions > 10
    assert report.users["ties"] == {
        "tied_positions": positions,
        "tied_groups": groups,
        "users_with_ties": users,
    }


def test_every_registered_metric_has_a_kind_and_the_order_dependent_ones_are_refused() -> None:
    """Each metric says what tie_break expected does with it; a metric whose value reads
    the order without a closed form here is refused by name, one at a cutoff where only
    its whole-list form is order-free too."""
    conventions = Conventions(**EXPECTED_TIES)
    kinds = {d.ties for d in REGISTRY.values()}
    assert kinds == {EXPECTED, ORDER_FREE, WHOLE_LIST, "order"}
    for text in matrix():
        spec = MetricSpec.parse(text)
        definition = lookup(spec.name)
        why = order_dependent(spec, conventions.metric_params(spec))
        if definition.ties == "order":
            assert why is not None, text
        elif definition.ties == ORDER_FREE:
            assert why is None, text
        elif definition.ties == WHOLE_LIST:
            assert (why is None) == (spec.k is None), text
    refused = [
        "err@10",
        "bpref",
        "map@5(denominator=hits)",
        "novelty@10",
        "catalog_coverage@10",
        "set_precision(retrieve=threshold)",
        "auc@5",
    ]
    for text in refused:
        with pytest.raises(ConfigError) as raised:
            evaluate(
                frame([(1, 9, 1.0)], ["user", "item", "score"]),
                frame([(1, 9, 1.0)], ["user", "item", "relevance"]),
                ["ndcg@5", text],
                conventions=EXPECTED_TIES,
            )
        assert text.split("(")[0] in str(raised.value), text
        assert "ndcg@5" not in str(raised.value).split("fix")[0].split("for:")[1]


def test_the_cli_refuses_up_front_with_exit_2_and_no_report(tmp_path: Path) -> None:
    config = parity_data(tmp_path)
    config = {**config, "metrics": ["ndcg@10", "err@10", "bpref"], "conventions": EXPECTED_TIES}
    path = write_config(tmp_path, config, "refused.yaml")
    out = tmp_path / "report.json"
    result = invoke("run", path, "-q", "-o", out)
    assert result.exit_code == 2, result.stderr
    said = " ".join(result.stderr.split())
    assert "conventions.tie_break" in said
    assert "err@10" in said
    assert "bpref" in said
    assert "Traceback" not in result.stderr
    assert not out.exists()


def test_the_ties_reach_every_format(tmp_path: Path) -> None:
    config = parity_data(tmp_path)
    config = {**config, "metrics": ["ndcg@10", "precision@5"], "conventions": EXPECTED_TIES}
    path = write_config(tmp_path, config, "formats.yaml")
    for fmt, suffix in (("json", "json"), ("markdown", "md"), ("html", "html"), ("table", "txt")):
        out = tmp_path / f"report.{suffix}"
        result = invoke("run", path, "-q", "--format", fmt, "-o", out)
        assert result.exit_code == 0, result.stderr
        text = out.read_text()
        if fmt == "json":
            users = json.loads(text)["models"]["model"]["users"]
            assert users["ties"]["tied_positions"] > 0
        else:
            assert "tied positions" in text, fmt


@pytest.mark.slow
def test_every_tie_aware_metric_agrees_on_every_polars_engine(tmp_path: Path) -> None:
    """The tie-aware specs of the registry's matrix under tie_break expected, on the
    polars engines (in memory, streaming, partitions, auto): the same files, every bit."""
    from engine_parity import registry_data

    graded = registry_data(tmp_path, seed=13)["graded"]
    config = {**graded, "metrics": tie_aware_specs(), "conventions": EXPECTED_TIES}
    for engine, settings in ENGINES.items():
        check_engine(tmp_path, "ties", config, engine, settings)


def test_every_tie_aware_metric_agrees_on_spark(spark: Any, tmp_path: Path) -> None:
    from engine_parity import registry_data

    graded = registry_data(tmp_path, seed=13)["graded"]
    specs = [s for s in tie_aware_specs() if "catalog" not in s]
    config = {**graded, "metrics": specs, "conventions": EXPECTED_TIES}
    check_engine(tmp_path, "ties", config, "in_memory", ENGINES["in_memory"])
    check_engine(tmp_path, "ties", config, "spark 5", {"engine": "spark", "partitions": 5})


def test_what_shows_one_order_refuses_it() -> None:
    """A relstring shows one order's grades: tie_break expected has none to show (the TREC
    run of `receval convert` and comparison.lists refuse it too: test_convert.py,
    test_list_comparison.py)."""
    from receval_cli.api import relstrings
    from receval_cli.errors import UsageError

    with pytest.raises(UsageError, match="a relstring shows one order"):
        relstrings(
            frame([(1, 9, 1.0), (1, 10, 1.0)], ["user", "item", "score"]),
            frame([(1, 9, 1.0)], ["user", "item", "relevance"]),
            conventions={"tie_break": "expected"},
        )


def test_the_ties_reach_the_junit_github_and_latex_formats(tmp_path: Path) -> None:
    """Every format that states the users states the tied positions: JUnit as a property,
    GitHub as a notice, LaTeX as a comment (the CSV, one row per metric, holds no users
    block)."""
    config = parity_data(tmp_path)
    config = {**config, "metrics": ["ndcg@10"], "conventions": EXPECTED_TIES}
    result = evaluate_written(tmp_path, config, "formats.yaml")
    ties = result.models["model"].users["ties"]
    said = (
        f"tie_break expected: {ties['tied_positions']} tied positions in "
        f"{ties['tied_groups']} ties ({ties['users_with_ties']} users)"
    )
    assert ties["tied_positions"] > 0
    assert f'<property name="ties" value="{said}' in render_junit(result)
    assert f"::notice title=receval ties::{said}" in render_github(result)
    assert f"% {said}" in render_latex(result)
