"""The item-fairness metrics (metrics/fairness.py): rsp, reo and exposure_disparity.

Agreement with Elliot's definitions transcribed naively (fairness_reference.py) on data
with integer ids whose text and number orders differ (9, 10, 100), tied scores and
tied popularity, users on one side only, lists shorter than k, a log with repeated
interactions and catalog items without a category; hand-computed cases; properties
(equal shares give 0; bounds; relabelling the groups changes nothing); errors.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import fairness_reference as ref
import pytest
import yaml
from cli_helpers import assert_user_error, invoke, run_json, write, write_config
from fairness_cases import (
    CASES,
    GOLDEN,
    HAND_CATALOG,
    NAMES,
    case_specs,
    drawn,
    golden_config,
    golden_spec,
    hand_config,
    reference_inputs,
    write_inputs,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from receval_cli.metrics.fairness import spread


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_agrees_with_elliots_definitions(tmp_path: Path, seed: int) -> None:
    """rsp, reo and exposure_disparity equal the reference's on random data, each group
    split at two cutoffs (the report lists the metrics in the config's order)."""
    data = drawn(seed)
    report = run_json(write_inputs(tmp_path, data, case_specs()))
    got = iter(report["models"]["model"]["metrics"].values())
    inputs = reference_inputs(data)
    for k, groups, ratio in CASES:
        if ratio is None:
            group_sets = inputs["category"]
        else:
            group_sets = ref.short_head(inputs["train"], ratio, inputs["order"])
        recs, train = inputs["recs"], inputs["train"]
        expected = [
            ref.rsp(recs, train, group_sets, k),
            ref.reo(recs, train, inputs["relevant"], group_sets, k),
            ref.exposure_disparity(recs, group_sets, k),
        ]
        for name, value in zip(NAMES, expected, strict=True):
            found = next(got)
            if value is None:
                assert found is None, (name, k, groups, ratio)
            else:
                assert math.isclose(found, value, rel_tol=1e-12), (name, k, groups, ratio)


def test_hand_computed_category_case(tmp_path: Path) -> None:
    """Lists at k=2: user 10 [10, 100]; user 9 [100, 9] (a tie: item_desc puts 100
    first). Groups a = {9, 10}, b = {100, 11}; user 10 knows item 9.
    rsp: P_a = (1 + 1) / ((2 - 1) + 2) = 2/3, P_b = 2/4: std 1/12, mean 7/12 -> 1/7.
    reo: relevant outside the log: a {10 (user 9)}, b {100 (user 10), 11 (user 9)}; found
    a 0, b 1 (100 for user 10): P = 0, 1/2 -> std 1/4 / mean 1/4 = 1.
    exposure: a 1 + 1/log2 3, b 1/log2 3 + 1, over 2 users x 2 items each: equal -> 0.
    User 100 (truth only) has no list and counts nowhere."""
    metrics = [f"{m}@2(groups=category)" for m in ("rsp", "reo", "exposure_disparity")]
    values = run_json(hand_config(tmp_path, metrics))["models"]["model"]["metrics"]
    assert list(values.values()) == pytest.approx([1 / 7, 1.0, 0.0], abs=1e-15)


def test_hand_computed_popularity_case(tmp_path: Path) -> None:
    """The log: user 10 has 9 (twice: one pair), 10 and 100; user 9 has 9 and 11. Pairs:
    5; pop 9: 2 users, then 100, 11, 10 at 1 each (ties: item_desc). pop_ratio=0.5: the
    bar is 2.5; 9 enters (0 before), 100 enters (2 before < 2.5), 11 does not (3 before):
    head {9, 100}, tail {11, 10}. At k=1 the lists are [10] and [100]: rsp P_head = 1 /
    ((2 - 2) + (2 - 1)) = 1, P_tail = 1 / ((2 - 1) + (2 - 1)) = 1/2: std 1/4, mean 3/4
    -> 1/3."""
    write(tmp_path / "log.csv", "")
    config = hand_config(tmp_path, ["rsp@1(pop_ratio=0.5)"])
    write(tmp_path / "log.csv", "user,item\n10,9\n10,9\n10,10\n10,100\n9,9\n9,11\n")
    values = run_json(config)["models"]["model"]["metrics"]
    assert values["rsp@1(pop_ratio=0.5)"] == pytest.approx(1 / 3, abs=1e-15)


def test_equal_shares_give_zero_disparity(tmp_path: Path) -> None:
    """Every user's list holds one item of each of two equal-size groups, nobody knows
    an item, each finds one relevant item per group: rsp and reo are 0."""
    write(tmp_path / "predictions.csv", "user,item,score\n1,9,2\n1,100,1\n2,10,2\n2,11,1\n")
    write(tmp_path / "truth.csv", "user,item\n1,9\n1,100\n2,10\n2,11\n")
    write(tmp_path / "catalog.csv", HAND_CATALOG)
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": "predictions.csv"},
            "ground_truth": {"path": "truth.csv"},
            "catalog": {"path": "catalog.csv", "columns": {"category": "category"}},
            "metrics": ["rsp@2(groups=category)", "reo@2(groups=category)"],
        },
    )
    values = run_json(config)["models"]["model"]["metrics"]
    assert list(values.values()) == [0.0, 0.0]


def test_no_value_when_nothing_is_found(tmp_path: Path) -> None:
    """reo with no relevant grouped item in any top k is 0 / 0: null, with a warning."""
    config = hand_config(tmp_path, ["reo@1(groups=category)"])
    write(tmp_path / "truth.csv", "user,item,grade\n10,11,1\n9,11,1\n")
    report = run_json(config)
    assert report["models"]["model"]["metrics"] == {"reo@1(groups=category)": None}
    assert any("reo@1(groups=category) has no value" in w for w in report["warnings"])


@given(
    st.lists(st.one_of(st.just(0.0), st.floats(1e-9, 1.0)), min_size=1, max_size=8),
    st.floats(0.01, 100.0),
)
@settings(max_examples=200)
def test_spread_bounds_and_scale(values: list[float], scale: float) -> None:
    """std / mean over n groups lies in [0, sqrt(n - 1)] (non-negative values), does not
    change when every value is scaled, and is 0 when the values are equal."""
    shares = {str(i): v for i, v in enumerate(values)}
    found = spread(shares)
    if math.fsum(values) == 0:
        assert found is None
        return
    assert found is not None
    assert -1e-12 <= found <= math.sqrt(len(values) - 1) + 1e-9
    scaled = spread({g: v * scale for g, v in shares.items()})
    assert scaled == pytest.approx(found, rel=1e-9, abs=1e-12)
    assert spread(dict.fromkeys(shares, values[0] or 1.0)) == 0.0


def test_relabelling_the_groups_changes_nothing(tmp_path: Path) -> None:
    """The categories' names only label the groups."""
    metrics = [f"{m}@2(groups=category)" for m in ("rsp", "reo", "exposure_disparity")]
    first = run_json(hand_config(tmp_path, metrics))["models"]["model"]["metrics"]
    write(tmp_path / "catalog.csv", HAND_CATALOG.replace(",a", ",zz").replace(",b", ",0"))
    second = run_json(tmp_path / "config.yaml")["models"]["model"]["metrics"]
    assert first == second


@pytest.mark.parametrize(
    ("spec", "drop", "words"),
    [
        ("rsp@5(groups=category)", "catalog", ["rsp", "catalog.columns.category", "catalog"]),
        ("reo@5", "interactions", ["reo", "interactions.path", "groups=category"]),
        ("rsp@5(pop_ratio=1.5)", None, ["pop_ratio", "1.5", "share in (0, 1]"]),
        ("rsp@5(groups=genre)", None, ["groups", "genre", "popularity, category"]),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(
    tmp_path: Path, spec: str, drop: str | None, words: list[str]
) -> None:
    """A missing group input (before any row is read) or a bad parameter: exit 2, the
    metric, the key and the fix named."""
    config = hand_config(tmp_path, [spec])
    if drop is not None:
        loaded = yaml.safe_load(config.read_text(encoding="utf-8"))
        del loaded[drop]
        write_config(tmp_path, loaded)
    assert_user_error(invoke("run", config), *words)


def test_spark_plans_the_item_group_metrics(tmp_path: Path) -> None:
    """engine: spark runs them (their values: tests/engines/test_spark_global_states.py): the run
    planner, which makes every engine's refusals, plans them on Spark."""
    from receval_cli.config.loading import load_config
    from receval_cli.engines.run_plan import plan_run

    config = hand_config(tmp_path, ["ndcg@2", "rsp@2", "reo@2(groups=category)"], engine="spark")
    assert plan_run(load_config(config)).engine.spark


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_agrees_with_elliots_own_code(tmp_path: Path, seed: int) -> None:
    """rsp and reo equal Elliot's RSP and REO run on the same data (tests/peers/elliot:
    its NOTES.md says how), by category and by its popularity short head at two
    pop_ratios, at k = 3 and 10; and the fairness block's per-group P(R@k | g) and
    P(R@k | g, y=1) equal Elliot's per-cluster ProbToBeRanked."""
    golden = json.loads((GOLDEN / "elliot.json").read_text(encoding="utf-8"))
    mine = {key: value for key, value in golden.items() if key.startswith(f"{seed}|")}
    specs = {}
    for key in mine:
        _, grouping, k, metric = key.split("|")
        specs[key] = golden_spec(metric, grouping, int(k))
    report = run_json(golden_config(tmp_path, seed, list(specs.values())))
    values = report["models"]["model"]["metrics"]
    for key, spec in specs.items():
        assert values[spec] == pytest.approx(mine[key]["value"], rel=1e-12), key
    for grouping, k in (("category", 10), ("popularity,0.8", 3), ("popularity,0.5", 10)):
        groups = grouping.split(",")[0]
        fairness: dict[str, Any] = {"k": k, "groups": groups}
        if groups == "popularity":
            fairness["pop_ratio"] = float(grouping.split(",")[1])
        config = golden_config(tmp_path, seed, ["ndcg@3"], fairness=fairness)
        rows = run_json(config)["models"]["model"]["fairness"]["items"]["groups"]
        for column, metric in (("recommended", "rsp"), ("recall", "reo")):
            expected = mine[f"{seed}|{grouping}|{k}|{metric}"]["per_group"]
            got = {row["group"]: row[column] for row in rows}
            assert got == pytest.approx(expected, rel=1e-12), (grouping, k, metric)


def test_one_item_group_is_zero_by_construction_and_the_run_says_so(tmp_path: Path) -> None:
    """Every catalog item in one category: each metric is std / mean over that one group,
    0 by construction (the formula's value, and Elliot's), with a warning per metric that
    says so; with two groups whose values are equal (exposure above), no warning."""
    metrics = [f"{m}@2(groups=category)" for m in ("rsp", "reo", "exposure_disparity")]
    config = hand_config(tmp_path, metrics)
    two = run_json(config)
    assert not any("by construction" in w for w in two["warnings"])
    write(tmp_path / "catalog.csv", "item,category\n9,a\n10,a\n100,a\n11,a\n")
    report = run_json(config)
    assert list(report["models"]["model"]["metrics"].values()) == [0.0, 0.0, 0.0]
    for metric in metrics:
        says = (
            f"{metric} is 0 by construction: one item group (a) has a value, and std / mean "
            "over one group is 0, so it compares no groups."
        )
        assert any(w.startswith(says) for w in report["warnings"]), metric
