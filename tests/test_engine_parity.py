"""Every engine gives the same report, bit for bit: in memory, streaming, `partitions: N`
for several N, and Spark with several bucket and shuffle settings.

The config mixes ranking, set, rating and beyond-accuracy metrics. The data has the
shapes real data has: integer ids whose text and number orders differ (9, 10, 100),
heavily tied scores, fractional and negative grades, users on one side only, lists
shorter than the cutoffs and longer than 15, and item features and a log for the
beyond-accuracy metrics. Values are compared as float.hex, so a difference in the last
bit fails (the means are exact sums divided once: exact_sum.py).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import invoke, write_config

from receval_cli.analysis.runs import evaluate_config
from receval_cli.config.conventions import Conventions
from receval_cli.config.loading import load_config
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.registry import REGISTRY, MetricDef, Param, resolve
from receval_cli.metrics.spec import ParamValue
from receval_cli.results.report import Report

RANKING = [
    "ndcg@5",
    "ndcg@10(gain=exponential)",
    "ndcg(ideal=all_relevant)",
    "map@10",
    "map(denominator=relevant)",
    "precision@3",
    "precision@7",
    "precision@20(denominator=list_length)",
    "recall@10",
    "f1@5",
    "fbeta@5(beta=0.5)",
    "mrr",
    "hit_rate@5",
    "r_precision",
    "dcg@10",
    "idcg@10",
    "num_rel_ret",
    "bpref",
    "infap@10",
    "unj@5",
    "judged@20(denominator=list_length,negative_grades=judged)",
    "num_nonrel_judged_ret",
    "ndcg@10(gains=1:3;2:9)",
    "g",
    "bing",
    "ndcg_rel",
    "rndcg",
    "rbp",
    "rbp@10(gain=binary,p=0.8)",
    "rbp_resid",
    "err@10",
    "nerr@5(grades=binary,max_grade=1)",
    "hits@5",
    "map@10(denominator=k)",
    "ndcg@5(gain=binary,ideal=k_positions)",
    "fall_out@5",
    "fall_out(no_negatives=skip)",
    "partial_auc@3",
    "pap@3",
    "sufficient_reco@5(measure=share)",
    # trec_eval's precision points (metrics/precision_points.py) and a geometric mean
    "map(mean=geometric)",
    "ndcg@10(mean=geometric)",
    "set_map",
    "utility(c=-0.5)",
    "relative_precision@5",
    "relative_precision",
    "rprec_mult(multiplier=0.5)",
    "iprec_at_recall(level=0.3)",
    "iprec_at_recall@10(level=0.5,rounding=up)",
    "iprec_avg",
    "iprec_avg@20(levels=0.25;0.5;0.75)",
]
SETS = ["set_precision", "set_recall", "set_f1"]
RATING = [
    "rmse",
    "mae",
    "mse",
    "r2",
    "auc",
    "gauc",
    "gauc(weight=none)",
    "auc@5",
    "gauc@3",
    "gauc@20",
]
BEYOND = [
    "novelty@10",
    "intra_list_diversity@5(feature=category)",
    "serendipity@10",
    "arp@10",
    "long_tail_share@10",
    "catalog_coverage@10",
    "prediction_coverage",
    "user_coverage",
    "gini@10",
    "entropy@10",
    "inter_list_diversity@5",
    "intersection@5(baseline_k=10)",
]
# per-user metrics that read the catalog's size (Spark's buckets get it, counted once)
CATALOG_SIZE = ["accuracy@10", "mcc@5"]


GRADES = (-1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0)


def parity_rows(
    rng: random.Random,
    users: int = 90,
    truth_lengths: tuple[int, ...] = (1, 2, 3, 6, 12),
    grades: tuple[float, ...] = GRADES,
) -> tuple[list[tuple[int, int, float]], list[tuple[int, int, float]]]:
    """(user, item, score) and (user, item, grade) rows: ids whose text and number orders
    differ (9, 10, 100), heavily tied scores, fractional, zero and negative grades, users
    on one side only, lists of 0 to 40 items; grouped by user, ascending."""
    items = [9, 10, 100, *range(11, 100), *range(101, 140)]
    predictions, truth = [], []
    for index, user in enumerate([9, 10, 100, *range(1000, 1000 + users)]):
        if index % 11 != 3:  # some users only in the ground truth
            length = rng.choice([0, 1, 2, 4, 9, 16, 23, 40])
            for item in rng.sample(items, length):
                score = round(rng.choice([0.1, 0.5, 0.5, 0.9, rng.random()]), 1)
                predictions.append((user, item, score))
        if index % 13 != 5:  # some users only in the predictions
            for item in rng.sample(items, rng.choice(truth_lengths)):
                truth.append((user, item, rng.choice(grades)))
    return predictions, truth


def parity_data(folder: Path, seed: int = 7) -> dict[str, Any]:
    """Write the inputs; return the config that reads them."""
    rng = random.Random(seed)
    items = [9, 10, 100, *range(11, 100), *range(101, 140)]
    users = [9, 10, 100, *range(1000, 1090)]
    predictions, truth = parity_rows(rng)
    pl.DataFrame(predictions, schema=["user", "item", "score"], orient="row").write_parquet(
        folder / "predictions.parquet"
    )
    pl.DataFrame(truth, schema=["user", "item", "relevance"], orient="row").write_csv(
        folder / "truth.csv"
    )
    categories = [rng.choice(["a", "b", "c", "d"]) for _ in items]
    pl.DataFrame({"item": items, "category": categories}).write_csv(folder / "catalog.csv")
    log = [(rng.choice(users), rng.choice(items[:40])) for _ in range(900)]
    pl.DataFrame(log, schema=["user", "item"], orient="row").unique().write_csv(folder / "log.csv")
    return {
        "predictions": {"path": "predictions.parquet"},
        "ground_truth": {"path": "truth.csv"},
        "catalog": {"path": "catalog.csv", "columns": {"category": "category"}},
        "interactions": {"path": "log.csv"},
        "conventions": {"relevance_threshold": 1.0, "unpredicted": "ignore"},
        "metrics": [*RANKING, *SETS, *RATING, *BEYOND, *CATALOG_SIZE],
    }


def exact(report: Report) -> dict[str, str]:
    return {
        name: None if value is None else float.hex(value)
        for name, value in report.to_dict()["metrics"].items()
    }


def run(folder: Path, config: dict[str, Any], name: str) -> Report:
    run = evaluate_config(load_config(write_config(folder, config, f"{name}.yaml")))
    assert list(run.models) == ["model"]  # a one-file config: one model, named "model"
    return run.models["model"]


POLARS_ENGINES = {
    "in_memory": {"engine": "in_memory"},
    "streaming": {"engine": "streaming"},
    "partitions 1": {"engine": "in_memory", "partitions": 1},
    "partitions 3": {"engine": "in_memory", "partitions": 3},
    "partitions 7": {"engine": "streaming", "partitions": 7},
}


@pytest.mark.slow
def test_polars_engines_agree_bit_for_bit(tmp_path: Path) -> None:
    config = parity_data(tmp_path)
    found = {
        name: exact(run(tmp_path, {**config, **settings}, name.replace(" ", "_")))
        for name, settings in POLARS_ENGINES.items()
    }
    expected = found.pop("in_memory")
    assert len(expected) == len(RANKING) + len(SETS) + len(RATING) + len(BEYOND) + 2
    hashes = {
        run(tmp_path, {**config, **settings}, "h").inputs["ground_truth"]["content_hash"]
        for settings in POLARS_ENGINES.values()
    }
    assert len(hashes) == 1  # the ground truth's fingerprint, whatever the engine
    for name, metrics in found.items():
        assert metrics == expected, name


def test_spark_agrees_bit_for_bit(spark: Any, tmp_path: Path) -> None:
    from receval_cli.engines.spark import evaluate_spark

    config = parity_data(tmp_path)  # accuracy and mcc too: the catalog's size, counted once
    single = run(tmp_path, config, "single")
    expected = exact(single)
    content_hash = single.inputs["ground_truth"]["content_hash"]
    loaded = load_config(write_config(tmp_path, {**config, "engine": "spark"}, "spark.yaml"))
    before = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        for buckets, shuffle in ((3, "2"), (64, "7")):
            spark.conf.set("spark.sql.shuffle.partitions", shuffle)
            report = evaluate_spark(loaded, spark, buckets=buckets)
            assert exact(report) == expected, (buckets, shuffle)
            # the ground truth's fingerprint too: the same hash on Spark
            assert report.inputs["ground_truth"]["content_hash"] == content_hash
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)


def test_a_users_value_does_not_depend_on_the_others(tmp_path: Path) -> None:
    """Per-user values are computed per user: the same alone as among all users (polars
    divides a column by a scalar through its reciprocal, which differs in the last bit
    from a true division, and only for batches of two rows or more)."""
    config = {**parity_data(tmp_path), "metrics": [*RANKING, *SETS, "novelty@10"]}
    whole = run(tmp_path, config, "whole")
    assert whole.per_user is not None
    truth = pl.read_csv(tmp_path / "truth.csv")
    predictions = pl.read_parquet(tmp_path / "predictions.parquet")
    chosen = [u for u in (9, 10, 100, 1001, 1004, 1017) if u in truth["user"].to_list()]
    for user in chosen:
        folder = tmp_path / f"user{user}"
        folder.mkdir()
        for name in ("catalog.csv", "log.csv"):
            (folder / name).write_bytes((tmp_path / name).read_bytes())
        predictions.filter(pl.col("user") == user).write_parquet(folder / "predictions.parquet")
        truth.filter(pl.col("user") == user).write_csv(folder / "truth.csv")
        alone = run(folder, config, "alone")
        assert alone.per_user is not None
        mine = whole.per_user.filter(pl.col("user") == user).drop("status")
        for column in mine.columns[1:]:
            assert float.hex(mine[column][0]) == float.hex(alone.per_user[column][0]), (
                user,
                column,
            )


# the Spark case asks for the fixture inside the test: marked here, so -m "not spark" skips it
@pytest.mark.parametrize("engine", ["partitions", pytest.param("spark", marks=pytest.mark.spark)])
def test_per_user_file_is_the_same_on_every_engine(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """--per-user with partitions: 4 and with Spark writes the rows of a single pass, in
    the same order, bit for bit."""
    config = parity_data(tmp_path)
    single = write_config(tmp_path, config, "single.yaml")
    assert invoke("run", single, "--per-user", tmp_path / "single.parquet").exit_code == 0
    if engine == "spark":
        request.getfixturevalue("spark")  # skips without pyspark or Java
        other = {**config, "engine": "spark", "partitions": 5}
    else:
        other = {**config, "partitions": 4}
    path = write_config(tmp_path, other, "other.yaml")
    result = invoke("run", path, "--per-user", tmp_path / "other.csv")
    assert result.exit_code == 0, result.stderr
    expected = pl.read_parquet(tmp_path / "single.parquet")
    got = pl.read_csv(tmp_path / "other.csv", schema=expected.schema)
    assert got.height == expected.height > 50
    assert got.equals(expected)
    metrics = [c for c in expected.columns if c not in ("model", "user", "status")]
    nulls = expected.select(pl.sum_horizontal(pl.col(metrics).null_count())).item()
    assert nulls > 0  # users left out of a mean: null there


def test_the_metrics_that_read_the_catalog_size_are_named() -> None:
    """accuracy and mcc read the catalog's number of items (Spark counts it once for its
    buckets, which see only part of the catalog)."""
    from receval_cli.config.conventions import Conventions
    from receval_cli.evaluation.plan import catalog_size_metrics
    from receval_cli.metrics import MetricSpec

    specs = tuple(MetricSpec.parse(m) for m in [*CATALOG_SIZE, "ndcg@5", "partial_auc@5"])
    assert catalog_size_metrics(specs, Conventions()) == CATALOG_SIZE


# ------------------------------------------------------------------ the registry matrix
#
# Every registered metric, at several cutoffs, and with each parameter value that changes
# its computation (one at a time, from the value the config's conventions give), through
# every engine: the JSON report and the --per-user file must be the same bit for bit as
# in memory: no engine refuses a metric. A metric added to the registry joins the matrix
# by itself; a parameter that is neither a choice nor derivable below needs a value in
# SAMPLES.

CONVENTIONS = {"relevance_threshold": 1.0, "unpredicted": "ignore", "prediction_threshold": 0.5}
# values of the parameters that have no choices and that the rules of `sample` cannot
# derive (or derive badly): the recall levels, a score threshold
SAMPLES: dict[str, ParamValue] = {"threshold": 0.7, "level": 0.3, "levels": "0.25;0.5;0.75"}
# a parameter that changes nothing unless another one is set: varied together
TOGETHER: dict[str, dict[str, ParamValue]] = {
    "threshold": {"retrieve": "threshold"},
    "collection_size": {"d": 1.5},
    "max_weight": {"estimator": "ips"},
    "switch": {"estimator": "switch_dr"},
}
# combinations worth a spec of their own (RePlay's Surprisal; trec_eval's usual forms)
COMBINATIONS = [
    "novelty@10(share=users,unseen=one,normalize=max,denominator=k)",
    "novelty@10(share=users,items=new,unseen=zero,normalize=max)",
    "serendipity@10(unexpected=history,relevance=ignored,denominator=list_length)",
    "intersection@5(baseline_k=20)",
]


def sample(param: Param) -> ParamValue:
    """A value of a parameter without choices that differs from its default."""
    if param.name in SAMPLES:
        return SAMPLES[param.name]
    if param.gain_map:
        return "0.5:1;1:3;2:9"  # fractional grades too
    if param.share:
        return 0.5 if param.below_one else 0.3
    if param.positive_number:
        return 3  # a whole number: baseline_k takes only those
    if isinstance(param.default, float):
        return param.default + 1.5
    if isinstance(param.default, int):
        return param.default + 150
    raise AssertionError(f"parameter {param.name}: add a value to SAMPLES")


def metric_specs(definition: MetricDef) -> list[str]:
    """The metric at the whole list, @3 and @20 (as it allows), then at @10 with each
    parameter value that differs from the conventions', one at a time."""
    conventions = Conventions(**CONVENTIONS)
    params = definition.all_params()
    base: dict[str, ParamValue] = {p.name: sample(p) for p in params if p.required}
    # an optional choice (intra_list_diversity's feature) has no default to vary from
    base |= {p.name: p.choices[0] for p in params if p.optional and p.choices}
    cutoffs: list[int | None] = [None, 3, 20] if definition.takes_cutoff else [None]
    if definition.needs_cutoff:
        cutoffs.remove(None)
    at = 10 if definition.takes_cutoff else None
    specs = [MetricSpec(definition.name, k, tuple(base.items())) for k in cutoffs]
    given = conventions.metric_params(MetricSpec(definition.name, at, tuple(base.items())))
    for param in params:
        values = [c for c in param.choices if c != given.get(param.name)]
        for value in values if param.choices else [sample(param)]:
            varied = {**base, **TOGETHER.get(param.name, {}), param.name: value}
            if varied != base:
                specs.append(MetricSpec(definition.name, at, tuple(varied.items())))
    return [str(s) for s in dict.fromkeys(specs)]


# metrics whose inputs this matrix's data cannot be: each runs on every engine in the test
# module named, on data of its kind
OWN_DATA = {
    "corrected": "test_sampled",  # sampled candidate lists: m + 1 per user, one relevant
}


def matrix() -> list[str]:
    """Every spec of the matrix, canonical and without repeats: the registry's (but those
    of OWN_DATA), the hand lists above and COMBINATIONS."""
    found = [spec for d in REGISTRY.values() if d.name not in OWN_DATA for spec in metric_specs(d)]
    hand = [*RANKING, *SETS, *RATING, *BEYOND, *CATALOG_SIZE, *COMBINATIONS]
    found += [str(resolve(MetricSpec.parse(text))) for text in hand]
    return list(dict.fromkeys(found))


ENGINES: dict[str, dict[str, Any]] = {
    "in_memory": {"engine": "in_memory"},
    "streaming": {"engine": "streaming"},
    "partitions 3": {"engine": "in_memory", "partitions": 3},
    "partitions 7": {"engine": "streaming", "partitions": 7},
    "auto": {"engine": "auto"},
}


def registry_data(folder: Path, seed: int) -> dict[str, dict[str, Any]]:
    """parity_data's inputs (drawn with `seed`) and more: a catalog with a category, tags
    (some empty) and an embedding (a zero vector, two equal and two opposite ones), a
    baseline with ties and users of its own, a click log with propensities, and a segments
    file. Returns the configs of the two groups of metrics: those over graded relevance
    (with segment_by), and the click metrics (over the click log)."""
    config = parity_data(folder, seed)
    rng = random.Random(seed + 1)
    catalog = pl.read_csv(folder / "catalog.csv")
    items = catalog["item"].to_list()
    vectors = [[round(rng.uniform(-1, 1), rng.choice([1, 3, 17])) for _ in range(6)] for _ in items]
    vectors[0] = [0.0] * 6
    vectors[2] = vectors[1]
    vectors[4] = [-v for v in vectors[3]]
    tags = [rng.sample(["t1", "t2", "t3", "t4", "t5"], rng.choice([0, 1, 2, 3])) for _ in items]
    # propensities for psp, psdcg, psndcg (propensity=catalog), from a generator of their
    # own (the draws above and below stay as they were)
    drawn = random.Random(seed + 2)
    propensity = [drawn.choice([0.05, 0.1, 0.25, 0.5, 1.0]) for _ in items]
    catalog.with_columns(
        tags=pl.Series(tags, dtype=pl.List(pl.String)),
        embedding=pl.Series(vectors, dtype=pl.List(pl.Float64)),
        propensity=pl.Series(propensity),
    ).write_parquet(folder / "catalog.parquet")
    users = pl.read_csv(folder / "truth.csv")["user"].unique().sort().to_list()
    baseline = [
        (user, item, round(rng.choice([0.2, 0.6, rng.random()]), 1))
        for user in [*users[::2], 5000, 5001]
        for item in rng.sample(items, rng.choice([1, 5, 18]))
    ]
    pl.DataFrame(baseline, schema=["user", "item", "score"], orient="row").write_csv(
        folder / "baseline.csv"
    )
    predictions = pl.read_parquet(folder / "predictions.parquet")
    shown = predictions.sample(fraction=0.6, seed=seed).select("user", "item")
    clicks = shown.with_columns(
        click=pl.Series([rng.choice([0, 0, 1]) for _ in range(shown.height)]),
        propensity=pl.Series([rng.choice([0.1, 0.25, 0.5, 0.9]) for _ in range(shown.height)]),
    )
    clicks.write_csv(folder / "clicks.csv")
    segments = [(user, ["low", "mid", "high"][user % 3]) for user in users if user % 5]
    pl.DataFrame(segments, schema=["user", "band"], orient="row").write_csv(folder / "segments.csv")
    graded = {
        **config,
        "catalog": {
            "path": "catalog.parquet",
            "columns": {
                "category": "category",
                "tags": "tags",
                "embedding": "embedding",
                "propensity": "propensity",
            },
        },
        "baseline": {"path": "baseline.csv"},
        "conventions": CONVENTIONS,
        "segments": {"path": "segments.csv"},
        "segment_by": ["band"],
    }
    logged = {
        "predictions": config["predictions"],
        "ground_truth": {
            "path": "clicks.csv",
            "columns": {"relevance": "click", "propensity": "propensity"},
        },
        "conventions": CONVENTIONS,
    }
    specs = matrix()
    scope = {s: lookup(MetricSpec.parse(s).name).scope for s in specs}
    graded["metrics"] = [s for s in specs if scope[s] != "logged"]
    logged["metrics"] = [s for s in specs if scope[s] == "logged"]
    return {"graded": graded, "clicks": logged}


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    """The JSON report less what names the run: its id, time, config and duration, and
    each model's `inputs.engine` (what ran it)."""
    kept = {k: v for k, v in report.items() if k not in ("run", "config", "elapsed_seconds")}
    for model in kept["models"].values():
        model["inputs"].pop("engine", None)
    return kept


def differences(expected: Any, got: Any, path: str = "") -> list[str]:
    """Where two JSON values differ (floats by repr), as short lines."""
    if isinstance(expected, dict) and isinstance(got, dict):
        found = []
        for key in dict.fromkeys([*expected, *got]):
            found += differences(expected.get(key), got.get(key), f"{path}/{key}")
        return found
    if isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got):
        pairs = zip(expected, got, strict=True)
        return [d for i, (a, b) in enumerate(pairs) for d in differences(a, b, f"{path}[{i}]")]
    return [] if repr(expected) == repr(got) else [f"{path}: {expected!r} != {got!r}"]


def run_cli(folder: Path, config: dict[str, Any], name: str) -> tuple[int, str]:
    path = write_config(folder, config, f"{name}.yaml")
    result = invoke(
        "run", path, "-q", "-o", folder / f"{name}.json", "--per-user", folder / f"{name}.parquet"
    )
    return result.exit_code, result.stderr


def check_engine(
    folder: Path, group: str, config: dict[str, Any], engine: str, settings: dict[str, Any]
) -> int:
    """Run the group's metrics on the engine, compared with in memory's files (written by
    the engine "in_memory", run first): no engine refuses a metric. Returns how many ran."""
    label = f"{group}_{engine.replace(' ', '_')}"
    code, stderr = run_cli(folder, {**config, **settings}, label)
    assert code == 0, (engine, stderr)
    if engine == "in_memory":
        return len(config["metrics"])
    expected = comparable(json.loads((folder / f"{group}_in_memory.json").read_text()))
    got = comparable(json.loads((folder / f"{label}.json").read_text()))
    found = differences(expected, got)
    assert not found, (engine, len(found), found[:20])
    expected_users = pl.read_parquet(folder / f"{group}_in_memory.parquet")
    got_users = pl.read_parquet(folder / f"{label}.parquet")
    assert got_users.columns == expected_users.columns, engine
    changed = [c for c in expected_users.columns if not got_users[c].equals(expected_users[c])]
    assert not changed, (engine, changed[:20])
    return len(config["metrics"])


def test_the_matrix_holds_every_registered_metric() -> None:
    """A metric added to the registry joins the matrix: its names are the registry's,
    every parameter with choices takes each of them, and every other one is varied."""
    conventions = Conventions(**CONVENTIONS)
    specs = [MetricSpec.parse(s) for s in matrix()]
    assert {s.name for s in specs} == set(REGISTRY) - set(OWN_DATA)  # OWN_DATA: their own
    for definition in REGISTRY.values():
        if definition.name in OWN_DATA:
            continue
        mine = [s for s in specs if s.name == definition.name]
        taken = [conventions.metric_params(s) for s in mine]
        for param in definition.all_params():
            if param.choices:
                assert {t.get(param.name) for t in taken} >= set(param.choices), param
            else:
                assert any(param.name in s.param_dict() for s in mine), param


@pytest.mark.slow
def test_every_registered_metric_agrees_on_every_polars_engine(tmp_path: Path) -> None:
    """The matrix on the polars engines: in memory, streaming, partitions: 3 and 7, auto."""
    groups = registry_data(tmp_path, seed=11)
    counts = {
        (group, engine): check_engine(tmp_path, group, config, engine, settings)
        for group, config in groups.items()
        for engine, settings in ENGINES.items()
    }
    assert counts["graded", "partitions 7"] == len(groups["graded"]["metrics"])
    assert all(counts["clicks", engine] == len(groups["clicks"]["metrics"]) for engine in ENGINES)
    report = json.loads((tmp_path / "graded_in_memory.json").read_text())
    segments = report["models"]["model"]["segments"]
    assert set(segments) == {"band=low", "band=mid", "band=high", "band=(none)"}
    per_user = [
        s for s in groups["graded"]["metrics"] if lookup(MetricSpec.parse(s).name).scope == "user"
    ]
    columns = pl.read_parquet(tmp_path / "graded_in_memory.parquet").columns
    assert columns == ["model", "user", "status", *per_user, "band"]


@pytest.mark.slow
def test_every_registered_metric_agrees_in_ranges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The matrix in ranges of users (auto on predictions grouped by user, engines/ranges.py)
    of 400 prediction rows: the in-memory files, bit for bit."""
    groups = registry_data(tmp_path, seed=11)
    monkeypatch.setenv("RECEVAL_RANGE_ROWS", "400")
    for group, config in groups.items():
        for engine, settings in (("in_memory", ENGINES["in_memory"]), ("ranges", {})):
            assert check_engine(tmp_path, group, config, engine, settings)
    report = json.loads((tmp_path / "graded_ranges.json").read_text())
    assert report["models"]["model"]["inputs"]["engine"]["ranges"] >= 2


def test_every_registered_metric_agrees_on_spark(spark: Any, tmp_path: Path) -> None:
    """The matrix on Spark with 5 and 16 buckets: the metrics it runs give the in-memory
    files bit for bit (the click metrics, the item-group fairness metrics, co-occurrence and
    the catalog's size included): none is refused. (A bucket of one user, as 64 buckets
    give, is test_..._for_a_user_alone's case.)"""
    groups = registry_data(tmp_path, seed=11)
    before = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        for group, config in groups.items():
            check_engine(tmp_path, group, config, "in_memory", ENGINES["in_memory"])
            for buckets, shuffle in ((5, "3"), (16, "7")):
                spark.conf.set("spark.sql.shuffle.partitions", shuffle)
                settings = {"engine": "spark", "partitions": buckets}
                ran = check_engine(tmp_path, group, config, f"spark {buckets}", settings)
                assert ran == len(config["metrics"])
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)


@pytest.mark.slow
def test_every_registered_metric_is_the_same_for_a_user_alone(tmp_path: Path) -> None:
    """A user's values over the whole matrix are the same alone as among every user, as
    in a Spark or `partitions` bucket that holds one user: polars takes other paths for
    one row (a whole exponent of one row is raised by repeated multiplication, a scalar
    divisor is divided by truly), and the values must not follow."""
    config = registry_data(tmp_path, seed=11)["graded"]
    del config["segments"], config["segment_by"]
    per_user = [s for s in config["metrics"] if lookup(MetricSpec.parse(s).name).scope == "user"]
    config["metrics"] = per_user
    assert run_cli(tmp_path, config, "whole")[0] == 0
    whole = pl.read_parquet(tmp_path / "whole.parquet")
    truth = pl.read_csv(tmp_path / "truth.csv")
    predictions = pl.read_parquet(tmp_path / "predictions.parquet")
    # 1073's one hit is at rank 10 (p^9 in rbp); 9 and 100 order differently as text
    for user in (9, 100, 1073):
        folder = tmp_path / f"user{user}"
        folder.mkdir()
        for name in ("catalog.parquet", "log.csv", "baseline.csv"):
            (folder / name).write_bytes((tmp_path / name).read_bytes())
        mine = predictions.filter(pl.col("user") == user)
        assert mine.height > 1
        mine.write_parquet(folder / "predictions.parquet")
        truth.filter(pl.col("user") == user).write_csv(folder / "truth.csv")
        code, stderr = run_cli(folder, config, "alone")
        assert code == 0, stderr
        alone = pl.read_parquet(folder / "alone.parquet")
        among = whole.filter(pl.col("user") == user)
        assert alone.columns == among.columns
        changed = [c for c in among.columns if not alone[c].equals(among[c])]
        assert not changed, (user, changed)


def test_every_metric_of_its_own_data_runs_on_every_engine_elsewhere() -> None:
    """A metric left out of the matrix has its own engine test, named in OWN_DATA."""
    import importlib

    for name, module in OWN_DATA.items():
        assert name in REGISTRY, name
        tests = vars(importlib.import_module(module))
        assert "test_every_engine_agrees" in tests, module
        assert "test_spark_agrees" in tests, module
