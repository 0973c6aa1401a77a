"""The `fairness` report block (analysis/fairness_report.py): per item group and per segment.

Hand-computed on the two-user case of test_fairness.py; the segments' Welch intervals
against the stdlib's statistics; RecList's miss-rate equality difference transcribed
from its EvalRS code (examples/evalrs_2023.py: mean over the slices of |mr_slice - mr|,
there negated)."""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_helpers import assert_user_error, invoke, run_json, write, write_config
from fairness_cases import drawn, hand_config, reference_inputs, write_inputs

from receval_cli.analysis.fairness_report import welch

Z95 = statistics.NormalDist().inv_cdf(0.975)


def fairness_config(folder: Path, **fairness: Any) -> Path:
    config = hand_config(folder, ["ndcg@2"])
    write(folder / "segments.csv", "user,band\n10,x\n100,x\n9,y\n")
    loaded = yaml.safe_load(config.read_text(encoding="utf-8"))
    loaded |= {
        "segments": {"path": "segments.csv"},
        "segment_by": ["band"],
        "fairness": {"k": 2, "groups": "category", "metrics": ["recall"], **fairness},
    }
    return write_config(folder, loaded)


def test_item_groups_by_hand(tmp_path: Path) -> None:
    """k=2, lists 10: [10, 100], 9: [100, 9]; a = {9, 10}, b = {100, 11}. a: 2 slots,
    P = 2/3, user 9's 10 relevant and not found; b: 2 slots, P = 1/2, 2 relevant (100 of
    user 10, 11 of user 9), 100 found; exposure a = 1 + 1/log2 3 = b. a's interval: the
    users' (placed, unseen) are (1, 1) and (1, 2): residuals 1 - 2/3 and 1 - 4/3, so
    sd = sqrt((2/9) 2 / (1 x 3^2)) = 2/9."""
    block = run_json(fairness_config(tmp_path))["models"]["model"]["fairness"]
    assert block["items"]["disparity"] == {
        "rsp@2(groups=category)": pytest.approx(1 / 7),
        "reo@2(groups=category)": 1.0,
        "exposure_disparity@2(groups=category)": 0.0,
    }
    a, b = block["items"]["groups"]
    assert a == {
        "group": "a",
        "items": 2,
        "slots": 2,
        "recommended": pytest.approx(2 / 3),
        "relevant": 1,
        "found": 0,
        "recall": 0.0,
        "recommended_interval": pytest.approx([2 / 3 - Z95 * 2 / 9, 2 / 3 + Z95 * 2 / 9]),
        "recall_interval": [0.0, 0.0],
        "item_share": 0.5,
        "slot_share": 0.5,
        "exposure_share": 0.5,
    }
    assert (b["group"], b["recommended"], b["relevant"], b["found"], b["recall"]) == (
        "b",
        0.5,
        2,
        1,
        0.5,
    )


def test_segments_by_hand(tmp_path: Path) -> None:
    """hit_rate@2: user 10 finds 100 (1), user 9 nothing (0), user 100 has no list (0,
    counted: users_without_recommendations=zero). x = {10, 100}: 1/2; y = {9}: 0; all
    users 1/3. Miss rates 1/2, 1, overall 2/3: RecList's MRED (|1/2 - 2/3| + |1 -
    2/3|) / 2 = 1/4. y's gap 1/2 has no interval (one user)."""
    block = run_json(fairness_config(tmp_path))["models"]["model"]["fairness"]
    hits = block["segments"]["band"]["hit_rate@2"]
    assert (hits["best"], hits["worst"], hits["max_min"]) == ("band=x", "band=y", 0.5)
    assert hits["segments"]["band=x"] == {
        "value": 0.5,
        "users": 2,
        "gap": 0.0,
        "interval": None,
        "miss_rate": 0.5,
    }
    assert hits["segments"]["band=y"]["miss_rate"] == 1.0
    assert hits["miss_rate"] == pytest.approx(2 / 3)
    assert hits["miss_rate_equality_difference"] == pytest.approx(0.25)
    assert set(block["segments"]["band"]) == {"hit_rate@2", "recall@2"}


def test_welch_interval_is_scipys() -> None:
    """scipy's Welch t-test interval (ttest_ind, equal_var=False), at two levels."""
    from scipy import stats

    first, second = [1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0]
    gap = statistics.fmean(first) - statistics.fmean(second)
    for level in (0.95, 0.8):
        want = stats.ttest_ind(first, second, equal_var=False).confidence_interval(level)
        got = welch(first, second, gap, level)
        assert got == pytest.approx([want.low, want.high], rel=1e-9)
    assert welch(first, [1.0], gap, 0.95) is None  # one value: no variance
    assert welch([1.0, 1.0], [0.0, 0.0], 1.0, 0.95) == [1.0, 1.0]  # constant sides


def test_welch_interval_does_not_depend_on_the_order_of_the_values() -> None:
    """The users' values in any order (as an engine's buckets hand them over) give the
    same interval, bit for bit: the variances come from exact sums."""
    import random

    draw = random.Random(7)
    first = [draw.random() / 3 for _ in range(500)]
    second = [draw.random() ** 3 for _ in range(300)]
    want = welch(first, second, 0.1, 0.95)
    for _ in range(5):
        draw.shuffle(first)
        draw.shuffle(second)
        assert welch(first, second, 0.1, 0.95) == want


def test_spark_plans_the_fairness_block(tmp_path: Path) -> None:
    """A fairness: block adds the item-group metrics, which engine: spark runs too (the
    same block: tests/engines/test_spark_global_states.py runs configs/fairness.yaml there)."""
    from receval_cli.config.loading import load_config
    from receval_cli.engines.run_plan import plan_run

    config = fairness_config(tmp_path)
    loaded = yaml.safe_load(config.read_text(encoding="utf-8"))
    spark = write_config(tmp_path, {**loaded, "engine": "spark"}, "spark.yaml")
    assert plan_run(load_config(spark)).engine.spark


def test_a_bad_fairness_metric_is_refused(tmp_path: Path) -> None:
    config = fairness_config(tmp_path, metrics=["recal"])
    assert_user_error(invoke("run", config), "fairness.metrics[0]", "recal", "recall")
    config = fairness_config(tmp_path, metrics=["gini"])
    assert_user_error(invoke("run", config), "fairness.metrics[0]", "not a per-user metric")


def test_every_format_shows_the_block(tmp_path: Path) -> None:
    """Table, Markdown and HTML show the item groups and the segments' gaps."""
    config = fairness_config(tmp_path)
    table = invoke("run", config)
    assert table.exit_code == 0, table.stderr
    assert "fairness: item groups (k=2, groups=category)" in table.stdout
    assert "fairness: segments by band" in table.stdout
    assert "RecList's miss-rate equality difference 0.2500" in table.stdout
    markdown = invoke("run", config, "--format", "markdown")
    assert "### fairness: item groups" in markdown.stdout
    assert "| `a` | 2 | 0.5000 |" in markdown.stdout.replace("\\.", ".")
    page = tmp_path / "report.html"
    html = invoke("run", config, "--format", "html", "-o", page)
    assert html.exit_code == 0, html.stderr
    text = page.read_text(encoding="utf-8")
    assert '<section id="fairness">' in text
    assert "<code>band=y</code>" not in text  # segments are values, metrics are code
    assert "<td><code>hit_rate@2</code></td>" in text
    assert "rsp@2(groups=category) = 0.1429 (lower is fairer)" in text


@pytest.mark.parametrize("engine", [{"partitions": 3}, {"engine": "streaming"}])
def test_the_block_is_the_same_on_other_engines(tmp_path: Path, engine: dict[str, Any]) -> None:
    """The item groups and segments' gaps of a partitioned or streaming run equal the
    in-memory run's (the per-user values are read back from the buckets' rows)."""
    config = fairness_config(tmp_path)
    expected = run_json(config)["models"]["model"]["fairness"]
    loaded = yaml.safe_load(config.read_text(encoding="utf-8"))
    other = write_config(tmp_path, {**loaded, **engine}, "other.yaml")
    assert run_json(other)["models"]["model"]["fairness"] == expected


def test_the_bundled_config_runs() -> None:
    """configs/fairness.yaml: the item groups by genre and the countries' gaps."""
    block = run_json(BUNDLED)["models"]["model"]["fairness"]
    groups = [g["group"] for g in block["items"]["groups"]]
    assert groups == sorted(groups)
    assert len(groups) > 1
    assert set(block["segments"]["country"]) == {"hit_rate@10", "recall@10", "ndcg@10"}


BUNDLED = Path(__file__).resolve().parents[2] / "configs" / "fairness.yaml"


@pytest.fixture(scope="module")
def bundled_block() -> dict[str, Any]:
    block: dict[str, Any] = run_json(BUNDLED)["models"]["model"]["fairness"]
    return block


@pytest.mark.slow
@pytest.mark.parametrize(
    "engine",
    [["--set", "engine=streaming"], ["--set", "partitions=2"], ["--set", "partitions=3"]],
)
def test_the_bundled_configs_block_is_bit_identical_on_every_engine(
    bundled_block: dict[str, Any], engine: list[str]
) -> None:
    """configs/fairness.yaml's whole fairness block (the segments' Welch intervals
    included: their variances from exact sums, whatever order the users' values come in)
    is the same, ==, on streaming and partitions 2 and 3 as in memory."""
    assert bundled_block["segments"]["country"]
    assert run_json(BUNDLED, *engine)["models"]["model"]["fairness"] == bundled_block


@pytest.mark.parametrize(
    ("name", "source"),
    [("rsp", "Zhu et al. SIGIR 2020"), ("reo", "Elliot's"), ("exposure_disparity", "Singh")],
)
def test_receval_metrics_lists_each_with_its_source(name: str, source: str) -> None:
    """`receval metrics` has a row for the metric, `receval metrics NAME` its source."""
    listing = invoke("metrics")
    assert listing.exit_code == 0
    assert f"│ {name}@k " in listing.stdout
    detail = invoke("metrics", name)
    assert source in " ".join(detail.stdout.split())


def naive_ratio_interval(pairs: list[tuple[int, int]], level: float) -> list[float]:
    """The delta method's interval of sum a / sum b over the users' (a, b), written from
    Deng et al. (KDD 2018) with the stdlib: Var(R) = Var(a - R b) / (n mean(b)^2)."""
    n = len(pairs)
    ratio = sum(a for a, _ in pairs) / sum(b for _, b in pairs)
    residuals = [a - ratio * b for a, b in pairs]
    error = math.sqrt(
        statistics.variance(residuals) / (n * statistics.fmean(b for _, b in pairs) ** 2)
    )
    z = statistics.NormalDist().inv_cdf(0.5 + level / 2)
    return [ratio - z * error, ratio + z * error]


@pytest.mark.parametrize("seed", [1, 2])
def test_group_intervals_agree_with_a_naive_per_user_computation(tmp_path: Path, seed: int) -> None:
    """The per-group intervals equal the delta method applied to each user's (top-k items
    of the group, items of the group outside the log) and (relevant ones found, relevant
    outside the log), the users being those with a list."""
    data = drawn(seed)
    config = write_inputs(tmp_path, data, ["ndcg@5"])
    loaded = yaml.safe_load(config.read_text(encoding="utf-8"))
    loaded["fairness"] = {"k": 5, "groups": "category", "level": 0.9}
    rows = run_json(write_config(tmp_path, loaded))["models"]["model"]["fairness"]["items"][
        "groups"
    ]
    inputs = reference_inputs(data)
    recs, train, relevant = inputs["recs"], inputs["train"], inputs["relevant"]
    for row in rows:
        members = inputs["category"][row["group"]]
        rsp_pairs, reo_pairs = [], []
        for user, ranked in recs.items():
            top = set(ranked[:5]) & members
            known = train.get(user, set())
            mine = relevant.get(user, set())
            rsp_pairs.append((len(top), len(members - known)))
            reo_pairs.append((len(top & mine), len((members & mine) - known)))
        assert row["recommended_interval"] == pytest.approx(naive_ratio_interval(rsp_pairs, 0.9))
        assert row["recall_interval"] == pytest.approx(naive_ratio_interval(reo_pairs, 0.9))


@pytest.mark.parametrize("engine", [{"partitions": 4}, {"engine": "streaming", "partitions": 2}])
def test_the_block_of_drawn_data_is_the_same_on_other_engines(
    tmp_path: Path, engine: dict[str, Any]
) -> None:
    """On drawn data (ids 9, 10, 100, ties, users on one side only), with segments, the
    whole fairness block of a partitioned run equals the in-memory run's, bit for bit."""
    data = drawn(5)
    config = write_inputs(tmp_path, data, ["ndcg@5"])
    users = sorted({u for u, _, _ in data["predictions"]} | {u for u, _, _ in data["truth"]})
    write(tmp_path / "segments.csv", "user,band\n" + "".join(f"{u},{u % 3}\n" for u in users))
    loaded = yaml.safe_load(config.read_text(encoding="utf-8"))
    loaded |= {
        "segments": {"path": "segments.csv"},
        "segment_by": ["band"],
        "fairness": {"k": 5, "groups": "popularity", "pop_ratio": 0.6},
    }
    expected = run_json(write_config(tmp_path, loaded))["models"]["model"]["fairness"]
    assert expected["items"]["groups"]
    assert expected["segments"]["band"]
    other = write_config(tmp_path, {**loaded, **engine}, "other.yaml")
    assert run_json(other)["models"]["model"]["fairness"] == expected
