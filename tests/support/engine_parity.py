"""The engine parity matrix's data, config and comparison (tests/engines/test_engine_parity.py and
the tests that reuse its matrix).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import polars as pl
from cli_helpers import invoke, write_config

from receval_cli.config.conventions import Conventions
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


POLARS_ENGINES = {
    "in_memory": {"engine": "in_memory"},
    "streaming": {"engine": "streaming"},
    "partitions 1": {"engine": "in_memory", "partitions": 1},
    "partitions 3": {"engine": "in_memory", "partitions": 3},
    "partitions 7": {"engine": "streaming", "partitions": 7},
}


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
