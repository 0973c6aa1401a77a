"""Every config feature on every engine: the same report bit for bit, or a refusal.

The matrix is built from the code's own lists: every preset (config.presets.PRESETS),
every polars engine (in memory, streaming, partitions, auto), and Spark in its own
test; each feature is a config on fresh random data with the shapes real data has
(integer ids whose text and number orders differ, heavy score ties, fractional and
negative grades, users on one side only, lists shorter than k and longer than 15).
Each cell runs `receval run` and compares its JSON report and --per-user file with
the in-memory run's, or expects exit 2 naming the engine's setting and the metric or
convention it cannot run (and `receval validate` refusing the same config with the same
message). No cell may exit 3.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import assert_user_error, assert_validate_refuses, invoke, write_config

from receval_cli.config.presets import PRESETS
from receval_cli.engines import choice

BASE_METRICS = ["ndcg", "precision", "recall", "map", "mrr", "hit_rate"]
CUTOFFS = [1, 5, 20]

# fields that name the engine or the moment of a run, not its results
VOLATILE = ("elapsed_seconds", "run")


def matrix_data(folder: Path, seed: int) -> None:
    """Write three models' predictions, the ground truth, a catalog, a log and the
    users' segments (base_config reads them)."""
    rng = random.Random(seed)
    items = [9, 10, 100, *range(11, 60), *range(101, 130)]
    users = [9, 10, 100, *range(1000, 1060)]
    truth, segments = [], []
    models: dict[str, list[tuple[int, int, float]]] = {"als": [], "pop": [], "base": []}
    for index, user in enumerate(users):
        for name, rows in models.items():
            if (index + len(name)) % 11 != 3:  # some users only in the ground truth
                length = rng.choice([0, 1, 2, 4, 9, 16, 23])
                for item in rng.sample(items, length):
                    score = round(rng.choice([0.1, 0.5, 0.5, 0.9, rng.random()]), 1)
                    rows.append((user, item, score))
        if index % 13 != 5:  # some users only in the predictions
            for item in rng.sample(items, rng.choice([1, 2, 3, 6, 12])):
                truth.append((user, item, rng.choice([-1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0])))
        if index % 7 != 2:  # some users without a segment value
            segments.append((str(user), rng.choice(["DE", "FR", "US"])))
    schema = ["user", "item", "score"]
    for name, rows in models.items():
        frame = pl.DataFrame(rows, schema=schema, orient="row")
        frame.write_parquet(folder / f"{name}.parquet")
    pl.DataFrame(truth, schema=["user", "item", "relevance"], orient="row").write_csv(
        folder / "truth.csv"
    )
    categories = [rng.choice(["a", "b", "c"]) for _ in items]
    pl.DataFrame({"item": items, "category": categories}).write_csv(folder / "catalog.csv")
    log = [(rng.choice(users), rng.choice(items[:30])) for _ in range(500)]
    log_frame = pl.DataFrame(log, schema=["user", "item"], orient="row").unique()
    log_frame.write_csv(folder / "log.csv")
    pl.DataFrame(segments, schema=["user", "country"], orient="row").write_csv(folder / "users.csv")


def base_config() -> dict[str, Any]:
    return {
        "predictions": {"path": "als.parquet"},
        "ground_truth": {"path": "truth.csv"},
        "cutoffs": CUTOFFS,
        "metrics": list(BASE_METRICS),
        "conventions": {"relevance_threshold": 1.0},
    }


Feature = Callable[[dict[str, Any], Path], tuple[dict[str, Any], list[str]]]


def _plain(config: dict[str, Any], folder: Path) -> tuple[dict[str, Any], list[str]]:
    return config, []


def _several_models(config: dict[str, Any], folder: Path) -> tuple[dict[str, Any], list[str]]:
    models = {"pop": "pop.parquet", "als": "als.parquet"}
    config["predictions"] = {"models": models}
    lists = ["rbo@10(p=0.9)", "jaccard@5"]  # comparison.lists: on every engine too
    config["comparison"] = {"baseline": "pop", "test": "t", "lists": lists}
    config["confidence"] = {"resamples": 50, "seed": 3}
    return config, []


def _intervals(config: dict[str, Any], folder: Path) -> tuple[dict[str, Any], list[str]]:
    config["confidence"] = {"method": "bootstrap", "resamples": 50, "seed": 5}
    return config, []


def _segments(config: dict[str, Any], folder: Path) -> tuple[dict[str, Any], list[str]]:
    config["segments"] = {"path": "users.csv"}
    config["segment_by"] = ["country"]
    config["confidence"] = {"resamples": 50, "seed": 5}
    config["gates"] = {"ndcg@5": {"min": 0.0, "segment": "country=DE"}}
    return config, []


def _models_and_segments(config: dict[str, Any], folder: Path) -> tuple[dict[str, Any], list[str]]:
    config, _ = _several_models(config, folder)
    config, _ = _segments(config, folder)
    return config, []


def _optional_inputs(config: dict[str, Any], folder: Path) -> tuple[dict[str, Any], list[str]]:
    config["catalog"] = {"path": "catalog.csv", "columns": {"category": "category"}}
    config["interactions"] = {"path": "log.csv"}
    config["baseline"] = {"path": "base.parquet"}
    config["metrics"] = [
        *BASE_METRICS,
        "novelty",
        "serendipity",
        "unexpectedness",
        {"name": "intra_list_diversity", "feature": "category", "cutoffs": [5, 20]},
        "catalog_coverage",
        "gini",
        "arp",
        "intersection",
    ]
    return config, []


def _clicks(config: dict[str, Any], folder: Path) -> tuple[dict[str, Any], list[str]]:
    config["metrics"] = [*BASE_METRICS, "ctr"]
    return config, []


def _baseline_report(config: dict[str, Any], folder: Path) -> tuple[dict[str, Any], list[str]]:
    saved = folder / "saved.json"
    if not saved.exists():
        other = {**config, "predictions": {"path": "pop.parquet"}}
        result = invoke("run", write_config(folder, other, "saved.yaml"), "-q", "-o", saved)
        assert result.exit_code == 0, result.output
    return config, ["--baseline-report", str(saved)]


def _history(config: dict[str, Any], folder: Path) -> tuple[dict[str, Any], list[str]]:
    gate = {"vs": "history", "runs": 3, "stat": "median", "relative": 0.5, "min_runs": 1}
    config["gates"] = {"ndcg@5": {"max_drop": gate}}
    return config, []


def _preset(name: str) -> Feature:
    def apply(config: dict[str, Any], folder: Path) -> tuple[dict[str, Any], list[str]]:
        config, _ = _optional_inputs(config, folder)
        config["conventions"] = {"preset": name, "relevance_threshold": 1.0}
        # the preset's per-metric rules, on metrics it gives a rule for
        ruled = [m for m in PRESETS[name].per_metric if m not in config["metrics"]]
        config["metrics"] = [*config["metrics"], *ruled]
        return config, []

    return apply


FEATURES: dict[str, Feature] = {
    "plain": _plain,
    "several models": _several_models,
    "intervals": _intervals,
    "segments": _segments,
    "several models with segments": _models_and_segments,
    "optional inputs": _optional_inputs,
    "click metrics": _clicks,
    "baseline report": _baseline_report,
    "history": _history,
    **{f"preset {name}": _preset(name) for name in PRESETS},
}

POLARS_ENGINES: dict[str, dict[str, Any]] = {
    "streaming": {"engine": "streaming"},
    "partitions": {"engine": "in_memory", "partitions": 3},
    "auto": {"engine": "auto"},  # made to partition: see _auto_partitions
}

# what a partitioned engine refuses up front, by feature: none (the click metrics run on
# every engine, tests/engines/test_clicks_engines.py)
PARTITIONED_REFUSALS: dict[str, str] = {}
# and Spark too: the presets whose tie-break reads the file order
SPARK_REFUSALS = {
    **PARTITIONED_REFUSALS,
    **{
        f"preset {name}": "conventions.tie_break"
        for name, preset in PRESETS.items()
        if preset.conventions.get("tie_break") == "input_order"
    },
}


def _click_data(folder: Path, config: dict[str, Any]) -> dict[str, Any]:
    """ctr reads the ground truth as a click log with propensities."""
    truth = pl.read_csv(folder / "truth.csv")
    clicks = truth.with_columns(
        (pl.col("relevance") > 0).cast(pl.Int64).alias("relevance"),
        pl.lit(0.5).alias("propensity"),
    )
    if not (folder / "clicks.csv").exists():
        clicks.write_csv(folder / "clicks.csv")
    columns = {"relevance": "relevance", "propensity": "propensity"}
    config["ground_truth"] = {"path": "clicks.csv", "columns": columns}
    return config


def run_cell(
    folder: Path, feature: str, engine: dict[str, Any], tag: str
) -> tuple[int, str, dict[str, Any] | None, bytes | None]:
    """One cell: (exit code, output, the normalised JSON report, the per-user file)."""
    if not (folder / "truth.csv").exists():  # written once: the reports name their dates
        folder.mkdir(parents=True, exist_ok=True)
        matrix_data(folder, seed=11)
        pl.read_parquet(folder / "pop.parquet").write_parquet(folder / "base.parquet")
    config = base_config()
    config, args = FEATURES[feature](config, folder)
    if feature == "click metrics":
        config = _click_data(folder, config)
    config.update(engine)
    tag = f"{feature.replace(' ', '_')}-{tag}"
    path = write_config(folder, config, f"{tag}.yaml")
    report, users = folder / f"{tag}.json", folder / f"{tag}-users.csv"
    extra = ["--history", str(folder / f"store-{tag}")] if feature == "history" else []
    result = invoke(
        "run", path, "-q", "-f", "json", "-o", report, "--per-user", users, *args, *extra
    )
    if result.exit_code != 0:
        assert not report.exists(), "a refused run wrote its report"
        return result.exit_code, result.output, None, None
    return 0, result.output, normalised(json.loads(report.read_text())), users.read_bytes()


def normalised(report: dict[str, Any]) -> dict[str, Any]:
    """The report without what names the engine, the config file or the moment."""
    for key in VOLATILE:
        report.pop(key, None)
    for model in report["models"].values():
        model["inputs"].pop("engine", None)
    for key in ("engine", "partitions", "source", "history"):
        report["config"].pop(key, None)
    report.pop("history", None)  # the store's earlier runs differ per cell
    return report


@pytest.fixture
def auto_partitions(monkeypatch: pytest.MonkeyPatch) -> None:
    """engine: auto splits even these small inputs (as it does past PARTITION_FROM)."""
    monkeypatch.setattr(choice, "PARTITION_FROM", 1)
    monkeypatch.setattr(choice, "PARTITION_SIZE", 2_000)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder of inputs for the whole matrix (written once, so every report names
    the same files and dates)."""
    return tmp_path_factory.mktemp("matrix")


_IN_MEMORY: dict[str, tuple[int, str, dict[str, Any] | None, bytes | None]] = {}


def in_memory(folder: Path, feature: str) -> tuple[int, str, dict[str, Any] | None, bytes | None]:
    """The feature's in-memory run, the reference of every engine (run once)."""
    if feature not in _IN_MEMORY:
        _IN_MEMORY[feature] = run_cell(folder, feature, {"engine": "in_memory"}, "in_memory")
    return _IN_MEMORY[feature]


def check_cell(
    folder: Path, feature: str, engine_name: str, engine: dict[str, Any], refused: str | None
) -> None:
    expected = in_memory(folder, feature)
    assert expected[0] == 0, f"{feature} in memory: {expected[1]}"
    code, output, report, users = run_cell(folder, feature, engine, engine_name)
    assert code != 3, f"{feature} on {engine_name}: a bug: {output}"
    if refused is not None:
        setting = "engine: spark" if engine_name == "spark" else "partitions: "
        assert code == 2, f"{feature} on {engine_name}: exit {code}: {output}"
        assert setting in output, output
        assert refused in output, output
        # validate refuses it too, with run's message (tests/cli/test_validate_refuses_as_run.py)
        config = folder / f"{feature.replace(' ', '_')}-{engine_name}.yaml"
        assert_validate_refuses(config, assert_user_error(invoke("run", config, "-q")))
        return
    assert code == 0, f"{feature} on {engine_name}: exit {code}: {output}"
    assert report == expected[2], f"{feature} on {engine_name}: another report"
    assert users == expected[3], f"{feature} on {engine_name}: another per-user file"


@pytest.mark.slow
@pytest.mark.parametrize("engine_name", list(POLARS_ENGINES))
@pytest.mark.parametrize("feature", list(FEATURES))
def test_every_feature_on_every_polars_engine(
    folder: Path, feature: str, engine_name: str, auto_partitions: None
) -> None:
    engine = POLARS_ENGINES[engine_name]
    partitioned = engine_name in ("partitions",)
    refused = PARTITIONED_REFUSALS.get(feature) if partitioned else None
    check_cell(folder, feature, engine_name, engine, refused)


def test_auto_never_picks_an_engine_that_refuses_the_config(
    tmp_path: Path, auto_partitions: None
) -> None:
    """auto on inputs big enough to split, with click metrics: partitions (which run them),
    not a refusal."""
    code, output, report, _ = run_cell(tmp_path, "click metrics", {"engine": "auto"}, "auto")
    assert code == 0, output
    assert report is not None
    written = json.loads((tmp_path / "click_metrics-auto.json").read_text())
    assert written["models"]["model"]["inputs"]["engine"]["partitions"] > 1


@pytest.mark.spark
@pytest.mark.parametrize("feature", list(FEATURES))
def test_every_feature_on_spark(spark: Any, folder: Path, feature: str) -> None:
    check_cell(
        folder, feature, "spark", {"engine": "spark", "partitions": 5}, SPARK_REFUSALS.get(feature)
    )


def test_the_matrix_covers_the_code_s_lists() -> None:
    """A new preset joins the matrix by existing; every engine choice but gpu is in it."""
    from receval_cli.choices import Engine

    assert {f"preset {name}" for name in PRESETS} <= set(FEATURES)
    engines = {e.value for e in Engine} - {"gpu"}
    assert engines <= {*POLARS_ENGINES, "in_memory", "spark"}
