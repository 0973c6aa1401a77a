"""Which users the beyond-accuracy metrics average over, under the presets' own defaults.

The `jurity` and `recommenders` presets skip users without a relevant item
(`users_without_relevant: skip`), as those libraries' accuracy metrics do. Their diversity
and novelty functions never read the ground truth: they average over every user with a
list. So receval's metrics that do not read relevance (novelty, arp, long_tail_share,
unexpectedness, intra_list_diversity) ignore the rule; serendipity reads it and keeps it.
(tests/peers/test_beyond_peers.py sets the rule to zero, so it cannot see this.)

Hand case, lists in score order, u3's only ground-truth row is not relevant (0):

    lists     u1: a b c    u2: a c d    u3: b d e
    truth     u1: b (1)    u2: d (1)    u3: a (0)
    catalog   a x, b x, c y, d y, e z                 (category)
    log       a 8 rows, b 4, c 2, d 1, e 1: 16 rows  -> -log2 share: a 1, b 2, c 3, d 4, e 4

    intra_list_diversity@3: u1 pairs (ab same, ac, bc) 2/3; u2 (ac, ad, cd same) 2/3;
                            u3 (bd, be, de) 1                       -> mean (2/3 + 2/3 + 1) / 3
    novelty@3:              u1 (1 + 2 + 3) / 3 = 2; u2 (1 + 3 + 4) / 3 = 8/3;
                            u3 (2 + 4 + 4) / 3 = 10/3                -> mean 8/3
    arp@3:                  u1 (8 + 4 + 2) / 3; u2 (8 + 2 + 1) / 3; u3 (4 + 1 + 1) / 3 -> 31/9
    serendipity@3:          baseline = the 3 most popular (a, b, c): u1 0 (b expected),
                            u2 d: 1/3; u3 skipped (no relevant item) -> (0 + 1/3) / 2

Every list has 3 items, so MS Recommenders' novelty (a mean over all recommendations) is
the mean over users here. With the rule wrongly applied the values were those of u1 and u2
alone: 2/3 for intra-list diversity (Jurity 2.1.0 gives 7/9 on these files) and 7/3 for
novelty (MS Recommenders 1.2.1: 8/3; both run by hand in their benchmark environments,
benchmarks/peers/).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import evaluate_written

import receval_cli
from receval_cli.config.conventions import Conventions
from receval_cli.metrics import MetricSpec
from receval_cli.metrics.registry import SpecError, lookup, resolve

PREDICTIONS = pl.DataFrame(
    {
        "user": ["u1"] * 3 + ["u2"] * 3 + ["u3"] * 3,
        "item": ["a", "b", "c", "a", "c", "d", "b", "d", "e"],
        "score": [0.9, 0.8, 0.7] * 3,
    }
)
TRUTH = pl.DataFrame({"user": ["u1", "u2", "u3"], "item": ["b", "d", "a"], "relevance": [1, 1, 0]})
CATALOG = pl.DataFrame({"item": ["a", "b", "c", "d", "e"], "category": ["x", "x", "y", "y", "z"]})
LOG_COUNTS = {"a": 8, "b": 4, "c": 2, "d": 1, "e": 1}
LOG = pl.DataFrame(
    {
        "user": [f"l{n}" for counts in LOG_COUNTS.values() for n in range(counts)],
        "item": [item for item, counts in LOG_COUNTS.items() for _ in range(counts)],
    }
)

EXPECTED = {
    "intra_list_diversity@3": (2 / 3 + 2 / 3 + 1) / 3,
    "novelty@3": 8 / 3,
    "arp@3": 31 / 9,
    "long_tail_share@3(head=0.2)": (2 / 3 + 2 / 3 + 1) / 3,  # the head: a (8 rows)
    "unexpectedness@3": (0 + 1 / 3 + 2 / 3) / 3,
}
NOT_READING_RELEVANCE = ("novelty", "arp", "long_tail_share", "unexpectedness")


def evaluate(preset: str, metrics: list[str]) -> receval_cli.Report:
    return receval_cli.evaluate(
        PREDICTIONS,
        TRUTH,
        metrics,
        conventions={"preset": preset},
        catalog=CATALOG,
        catalog_columns={"item": "item", "category": "category"},
        interactions=LOG,
    )


@pytest.mark.parametrize("preset", ["jurity", "recommenders"])
def test_presets_skip_users_without_relevant_items(preset: str) -> None:
    """The premise: both presets skip such users for the accuracy metrics."""
    conventions = Conventions(preset=preset)
    assert conventions.users_without_relevant == "skip"
    report = evaluate(preset, ["recall@3"])
    assert report.users["evaluated"] == 2
    assert report.metrics["recall@3"] == pytest.approx(1.0, abs=1e-12)  # b and d found


@pytest.mark.parametrize("preset", ["jurity", "recommenders"])
@pytest.mark.parametrize("metric", sorted(EXPECTED))
def test_metrics_that_do_not_read_relevance_average_over_every_user(
    preset: str, metric: str
) -> None:
    report = evaluate(preset, [metric])
    assert report.metrics[metric] == pytest.approx(EXPECTED[metric], abs=1e-12)
    assert report.per_user is not None
    values = report.per_user.select("user", metric).drop_nulls()
    assert sorted(values.get_column("user")) == ["u1", "u2", "u3"]


@pytest.mark.parametrize("preset", ["jurity", "recommenders"])
def test_serendipity_reads_relevance_and_keeps_the_rule(preset: str) -> None:
    report = evaluate(preset, ["serendipity@3"])
    assert report.metrics["serendipity@3"] == pytest.approx((0 + 1 / 3) / 2, abs=1e-12)


def test_the_rule_is_no_parameter_of_a_metric_that_does_not_read_relevance() -> None:
    for name in (*NOT_READING_RELEVANCE, "intra_list_diversity"):
        definition = lookup(name)
        assert not definition.reads_relevance
        names = [p.name for p in definition.all_params()]
        assert "users_without_relevant" not in names
        assert "users_without_recommendations" in names
        with pytest.raises(SpecError, match="has no parameter 'users_without_relevant'"):
            resolve(MetricSpec.parse(f"{name}@3(users_without_relevant=skip)"))
    assert lookup("serendipity").reads_relevance
    assert lookup("ndcg").reads_relevance


@pytest.mark.parametrize(
    "engine",
    [
        {"engine": "streaming"},
        {"engine": "in_memory", "partitions": 2},
        {"engine": "streaming", "partitions": 3},
    ],
)
def test_every_polars_engine_averages_over_the_same_users(
    tmp_path: Path, engine: dict[str, Any]
) -> None:
    """The partitioned engines count each metric's users apart (evaluation/partial.py)."""
    PREDICTIONS.write_csv(tmp_path / "predictions.csv")
    TRUTH.write_csv(tmp_path / "truth.csv")
    CATALOG.write_csv(tmp_path / "catalog.csv")
    LOG.write_csv(tmp_path / "log.csv")
    config = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": "truth.csv"},
        "catalog": {"path": "catalog.csv", "columns": {"category": "category"}},
        "interactions": {"path": "log.csv"},
        "conventions": {"preset": "jurity"},
        "metrics": [*sorted(EXPECTED), "serendipity@3"],
        **engine,
    }
    run = evaluate_written(tmp_path, config, "users.yaml")
    report = run.models["model"]
    for metric, value in EXPECTED.items():
        assert report.metrics[metric] == pytest.approx(value, abs=1e-12), metric
        assert report.users["evaluated_per_metric"][metric] == 3, metric
    assert report.metrics["serendipity@3"] == pytest.approx(1 / 6, abs=1e-12)


@pytest.mark.parametrize("preset", ["jurity", "recommenders", "rectools"])
def test_a_user_only_in_the_predictions_counts_under_the_list_libraries(preset: str) -> None:
    """Those libraries' list metrics read the recommendations alone: a user with a list
    and no ground-truth row counts too (prediction_only_users: evaluate). u4: a b e,
    intra-list diversity (ab same, ae, be) 2/3; novelty (1 + 2 + 4) / 3 = 7/3."""
    extra = pl.DataFrame({"user": ["u4"] * 3, "item": ["a", "b", "e"], "score": [0.9, 0.8, 0.7]})
    report = receval_cli.evaluate(
        pl.concat([PREDICTIONS, extra]),
        TRUTH,
        ["intra_list_diversity@3", "novelty@3", "recall@3"],
        conventions={"preset": preset},
        catalog=CATALOG,
        catalog_columns={"item": "item", "category": "category"},
        interactions=LOG,
    )
    diversity = (2 / 3 + 2 / 3 + 1 + 2 / 3) / 4
    assert report.metrics["intra_list_diversity@3"] == pytest.approx(diversity, abs=1e-12)
    assert report.metrics["novelty@3"] == pytest.approx((2 + 8 / 3 + 10 / 3 + 7 / 3) / 4)
    assert report.metrics["recall@3"] == pytest.approx(1.0, abs=1e-12)  # u1 and u2 only
    plain = receval_cli.evaluate(
        pl.concat([PREDICTIONS, extra]),
        TRUTH,
        ["intra_list_diversity@3"],
        catalog=CATALOG,
        catalog_columns={"item": "item", "category": "category"},
    )
    assert plain.metrics["intra_list_diversity@3"] == pytest.approx((2 / 3 + 2 / 3 + 1) / 3)
