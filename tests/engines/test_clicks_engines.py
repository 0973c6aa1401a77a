"""The click metrics (ctr's estimators over a click log) on every engine: a single pass,
`partitions: N` and `engine: spark` give the same report bit for bit (the metrics, the
`logged` block with its variances and effective sample sizes), from exact sums per
bucket (evaluation/click_parts.py), and refuse a bad log with the same message."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import assert_user_error, invoke, run_report, write, write_config
from hypothesis import given, settings
from hypothesis import strategies as st

from receval_cli.metrics.exact_squares import exact_squares

CTR_CONFIG = Path(__file__).parents[2] / "configs" / "ctr.yaml"
POLARS_ENGINES: dict[str, dict[str, Any]] = {
    "partitions 2": {"partitions": 2},
    "partitions 3": {"partitions": 3},
    "partitions 7": {"engine": "streaming", "partitions": 7},
}
ESTIMATORS = ["matching", "ips", "snips", "dm", "dr", "switch_dr"]
# every estimator, at a cutoff and without, clipped and switched
HAND_METRICS = [
    *(f"ctr(estimator={e})" for e in ESTIMATORS),
    *(f"ctr@2(estimator={e})" for e in ESTIMATORS),
    "ctr(estimator=ips,max_weight=3)",
    "ctr(estimator=snips,max_weight=3)",
    "ctr@1(estimator=switch_dr,switch=2.5)",
    "ctr(estimator=dr,max_weight=4)",
]
# u1..u8 recommended; u3 and u7 absent from the log; u9 and u10 logged, never recommended;
# u1's a and u2's d logged twice (with other clicks or propensities)
RECOMMENDED = """user,item,score
u1,a,0.9
u1,b,0.5
u1,c,0.1
u2,a,0.7
u2,d,0.3
u3,b,0.6
u4,a,0.2
u4,e,0.8
u5,c,0.45
u5,b,0.45
u6,d,0.05
u7,a,0.33
u8,e,0.61
u8,c,0.12
"""
LOG = """user,item,click,propensity
u1,a,1,0.5
u1,c,0,0.1
u1,a,0,0.25
u2,a,0,0.2
u2,d,1,0.8
u2,d,1,0.4
u4,e,1,0.3
u4,a,0,0.7
u5,c,1,0.15
u5,b,1,0.9
u6,d,0,0.05
u8,e,1,0.6
u8,c,0,0.35
u9,a,1,0.5
u10,e,0,0.2
"""


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    """The models' blocks less `inputs.engine` (what ran them)."""
    models = report["models"]
    for model in models.values():
        model["inputs"].pop("engine", None)
    return models


def run(config: Path, folder: Path, tag: str, **setting: Any) -> dict[str, Any]:
    """`receval run` of the config with the settings (engine, partitions) over it: the
    report's models."""
    return comparable(run_report(folder, yaml_with(config, setting), tag))


def yaml_with(config: Path, setting: dict[str, Any]) -> str:
    """The config's text with its input paths absolute and the settings appended."""
    samples = str(config.parent.parent / "sample_data")
    text = config.read_text(encoding="utf-8").replace("../sample_data", samples)
    return text + "".join(f"{key}: {value}\n" for key, value in setting.items())


def hand_config(folder: Path, duplicates: str, log: str = LOG, **extra: Any) -> Path:
    """The hand case's config over `log` (its propensity column mapped when it has one),
    with `extra` keys."""
    write(folder / "recommended.csv", RECOMMENDED)
    write(folder / "log.csv", log)
    columns = {"relevance": "click"}
    if "propensity" in log.splitlines()[0]:
        columns["propensity"] = "propensity"
    return write_config(
        folder,
        {
            "predictions": {"path": "recommended.csv"},
            "ground_truth": {"path": "log.csv", "columns": columns},
            "metrics": HAND_METRICS,
            "conventions": {"truth_duplicates": duplicates, "tie_break": "item_asc"},
            **extra,
        },
        f"hand-{duplicates}.yaml",
    )


def test_the_ctr_config_is_the_same_partitioned(tmp_path: Path) -> None:
    """configs/ctr.yaml with partitions 2, 3 and 7: in memory's report, bit for bit."""
    expected = run(CTR_CONFIG, tmp_path, "in_memory")
    assert expected["model"]["logged"]["matched"] > 0
    for name, setting in POLARS_ENGINES.items():
        got = run(CTR_CONFIG, tmp_path, name.replace(" ", "_"), **setting)
        assert got == expected, name


@pytest.mark.parametrize("duplicates", ["max", "first"])
def test_a_hand_log_is_the_same_partitioned(tmp_path: Path, duplicates: str) -> None:
    """Propensities, users on one side only, duplicate log rows kept by truth_duplicates:
    every estimator the same bits in 2, 3 and 7 partitions as in one pass."""
    config = hand_config(tmp_path, duplicates)
    expected = run(config, tmp_path, f"{duplicates}-one")
    for name, setting in POLARS_ENGINES.items():
        got = run(config, tmp_path, f"{duplicates}-{name.replace(' ', '_')}", **setting)
        assert got == expected, (duplicates, name)


def test_the_hand_log_by_hand(tmp_path: Path) -> None:
    """The hand log's ips and its variance, by hand (exactly, rounded once): max keeps u1's
    click (propensity 0.5) and, of u2's two clicks, the higher propensity 0.8; 14
    recommendations, each a round (its term 0 unless clicked)."""
    models = run(hand_config(tmp_path, "max"), tmp_path, "max")
    model = models["model"]
    # clicked and matched: u1 a (1/0.5), u2 d (1/0.8), u4 e (1/0.3), u5 c, b (1/0.15,
    # 1/0.9), u8 e (1/0.6)
    terms = [Fraction(1 / float(p)) for p in (0.5, 0.8, 0.3, 0.15, 0.9, 0.6)]
    terms += [Fraction(0)] * 8
    n = len(terms)
    mean = sum(terms, Fraction(0)) / n
    assert model["metrics"]["ctr(estimator=ips)"] == float(mean)
    spread = sum(((t - mean) ** 2 for t in terms), Fraction(0)) / (n - 1) / n
    assert model["logged"]["variance"]["ctr(estimator=ips)"] == float(spread)
    assert model["logged"]["logged_rows"] == 13  # 15 rows, two (user, item) twice
    assert model["logged"]["recommendations"] == n


def test_segments_click_metrics_are_the_same_partitioned(tmp_path: Path) -> None:
    """With segment_by, each segment's click metrics (its users' recommendations and log
    rows) are the same bits in 3 partitions as in one pass."""
    write(tmp_path / "users.csv", "user,band\nu1,x\nu2,y\nu4,x\nu5,y\nu6,x\nu8,y\n")
    config = hand_config(tmp_path, "max", segments={"path": "users.csv"}, segment_by=["band"])
    expected = run(config, tmp_path, "segments-one")
    assert {"band=x", "band=y"} <= set(expected["model"]["segments"])
    assert run(config, tmp_path, "segments-3", partitions=3) == expected


@pytest.mark.parametrize(
    ("log", "words"),
    [
        ("user,item,click,propensity\nu1,a,1,0.5\nu2,b,2,0.5\nu9,c,3,0.5\n", "click 0 or 1"),
        ("user,item,click,propensity\nu1,a,1,0.5\nu2,d,0,0\nu9,c,1,1\n", "propensity in (0, 1]"),
    ],
)
def test_a_bad_log_is_refused_alike_partitioned(tmp_path: Path, log: str, words: str) -> None:
    """A click of 2 or a propensity of 0: exit 2, the single pass's message (its rows'
    numbers in the file) in every partitioning."""
    config = hand_config(tmp_path, "max", log)
    said = assert_user_error(invoke("run", config), words, "row 2")
    for setting in POLARS_ENGINES.values():
        path = write(tmp_path / "bad.yaml", yaml_with(config, setting))
        assert assert_user_error(invoke("run", path), words) == said


@settings(max_examples=60)
@given(
    st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=40),
    st.integers(1, 6),
)
def test_squares_are_summed_exactly_in_any_parts(values: list[float], parts: int) -> None:
    """The sum of squares (the variances' and effective sample sizes') is exact, from the
    tiniest subnormal to the largest float, and parts add up to the same integer."""
    exact = sum((Fraction(v) ** 2 for v in values), Fraction(0))
    assert exact_squares(pl.Series(values, dtype=pl.Float64)).fraction() == exact
    pieces = [exact_squares(pl.Series(values[i::parts], dtype=pl.Float64)) for i in range(parts)]
    total = pieces[0]
    for piece in pieces[1:]:
        total = total + piece
    assert total == exact_squares(pl.Series(values, dtype=pl.Float64))


@pytest.mark.spark
@pytest.mark.slow
def test_the_click_metrics_are_the_same_on_spark(spark: Any, tmp_path: Path) -> None:
    """configs/ctr.yaml, the hand log (truth_duplicates max; first has no meaning on
    Spark) in 3 buckets, a log without propensities beside a catalog with some, and a bad
    log's message: on Spark as in memory."""
    expected = run(CTR_CONFIG, tmp_path, "ctr-one")
    assert run(CTR_CONFIG, tmp_path, "ctr-spark", engine="spark") == expected
    config = hand_config(tmp_path, "max")
    expected = run(config, tmp_path, "hand-one")
    assert run(config, tmp_path, "hand-spark", engine="spark", partitions=3) == expected
    # a log without propensities (1 / its 5 items) beside a catalog with a propensity
    # column: the catalog's propensities are not the log's
    plain = "\n".join(line.rsplit(",", 1)[0] for line in LOG.splitlines()) + "\n"
    catalog = {"path": "catalog.csv", "columns": {"propensity": "propensity"}}
    config = hand_config(tmp_path / "plain", "max", plain, catalog=catalog)
    write(
        tmp_path / "plain" / "catalog.csv",
        "item,propensity\n" + "".join(f"{i},0.5\n" for i in "abcde"),
    )
    expected = run(config, tmp_path / "plain", "one")
    assert expected["model"]["logged"]["propensity"] == "1 / 5 logged items"
    assert run(config, tmp_path / "plain", "spark", engine="spark", partitions=2) == expected
    bad = "user,item,click,propensity\nu1,a,1,0.5\nu2,d,0,0\nu9,c,2,1\n"
    config = hand_config(tmp_path / "bad", "max", bad)
    said = assert_user_error(invoke("run", config), "click 0 or 1", "row 3")
    path = write(tmp_path / "bad" / "spark.yaml", yaml_with(config, {"engine": "spark"}))
    assert assert_user_error(invoke("run", path)) == said
