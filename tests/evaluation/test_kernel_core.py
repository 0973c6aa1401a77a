"""The compiled core (evaluation/kernel_core.py, receval_cli/_kernel.c) gives the polars
core's per-user table bit for bit, wherever it takes a run.

The matrices come from the code's own lists: every registered metric's specs
(test_engine_parity.matrix), every choice of every convention (the Conventions model's
Literal types), every preset. Each case runs the one assembly twice on the same inputs,
once with RECEVAL_CORE=polars, and compares the whole per-user table (statistics, status,
metric values: floats by their bits, nulls where they are) and every metric's exact sum.
The data has the shapes real data has: integer ids whose text and number orders differ
(9, 10, 100), heavy ties, fractional, zero and negative grades, users on one side only,
lists shorter than the cutoffs and longer than 15; and text ids, and rows in no order.
"""

from __future__ import annotations

import json
import random
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from engine_parity import (
    GRADES,
    comparable,
    differences,
    matrix,
    metric_specs,
    parity_rows,
    run_cli,
)
from kernel_readers import watch_readers

from receval_cli.api import _input
from receval_cli.compiled import extension
from receval_cli.config.conventions import Conventions
from receval_cli.config.presets import PRESETS
from receval_cli.errors import InputError, RecEvalError
from receval_cli.evaluation import kernel_core, unknown_items
from receval_cli.evaluation.assembly import BucketTask, bucket_partial
from receval_cli.evaluation.partial import Partial
from receval_cli.evaluation.plan import metric_exprs
from receval_cli.inputs.id_alignment import align_ids
from receval_cli.inputs.optional import Sources
from receval_cli.metrics import MetricSpec, lookup
from receval_cli.metrics.registry import REGISTRY, resolve
from receval_cli.metrics.stats import OrderDependent

pytestmark = pytest.mark.skipif(extension() is None, reason="the compiled core is not built here")

CLASSIC = ["ndcg@10", "precision@5", "recall@20", "map@10", "mrr", "hit_rate@3", "r_precision"]


def data(seed: int = 3, text_ids: bool = False, shuffled: bool = True) -> tuple[pl.DataFrame, ...]:
    rng = random.Random(seed)
    predictions, truth = parity_rows(rng, 60, (1, 2, 3, 6, 12, 30), (*GRADES, 4.0))
    if shuffled:
        rng.shuffle(predictions)
        rng.shuffle(truth)
    frames = (
        pl.DataFrame(predictions, schema=["user", "item", "score"], orient="row"),
        pl.DataFrame(truth, schema=["user", "item", "relevance"], orient="row"),
    )
    if text_ids:
        frames = tuple(f.with_columns(pl.col("user", "item").cast(pl.String)) for f in frames)
    return frames


def partial(
    frames: tuple[pl.DataFrame, ...], specs: list[str], conventions: Conventions, engine: str
) -> Partial:
    predictions = _input(frames[0], "predictions", None, "|")
    truth = _input(frames[1], "ground_truth", None, "|")
    align_ids(predictions, truth)
    parsed = tuple(resolve(MetricSpec.parse(s)) for s in specs)
    _, reference = unknown_items.reference_of(truth, Sources())
    task = BucketTask(engine=engine, keep="all", reference=reference)
    return bucket_partial(predictions, truth, parsed, conventions, task=task)


def both(
    monkeypatch: pytest.MonkeyPatch,
    frames: tuple[pl.DataFrame, ...],
    specs: list[str],
    conventions: Conventions,
    engine: str = "auto",
) -> tuple[Partial, Partial, int]:
    """The Partial of the compiled core (and how many times it ran) and the polars core's."""
    runs = []
    evaluate = kernel_core.evaluate_compiled

    def counted(*args: Any, **kwargs: Any) -> Any:
        result = evaluate(*args, **kwargs)
        runs.append(result is not None)
        return result

    monkeypatch.setattr(kernel_core, "evaluate_compiled", counted)
    compiled = partial(frames, specs, conventions, engine)
    monkeypatch.setenv("RECEVAL_CORE", "polars")
    reference = partial(frames, specs, conventions, engine)
    monkeypatch.delenv("RECEVAL_CORE")
    return compiled, reference, sum(runs)


def bits(series: pl.Series) -> Any:
    """A column's values as comparable data: floats by their bits, lists element-wise."""
    if series.dtype == pl.List(pl.Float64):
        lengths = series.list.len().to_list()
        return lengths, bits(series.explode())
    if series.dtype == pl.Float64:
        mask = series.is_null().to_numpy()
        values = series.fill_null(0.0).to_numpy().view(np.uint64)
        return mask.tolist(), np.where(mask, 0, values).tolist()
    return series.to_list()


def assert_same(compiled: Partial, reference: Partial) -> None:
    assert compiled.values is not None
    assert reference.values is not None
    got, expected = compiled.values, reference.values
    assert got.columns == expected.columns
    assert got.schema == expected.schema
    changed = [c for c in expected.columns if bits(got[c]) != bits(expected[c])]
    assert not changed, changed
    assert compiled.tally == reference.tally
    assert compiled.samples == reference.samples
    assert set(compiled.totals) == set(reference.totals)
    for name, total in reference.totals.items():
        mine = compiled.totals[name]
        assert (mine.total.to_json(), mine.counted, mine.users) == (
            total.total.to_json(),
            total.counted,
            total.users,
        ), name
    assert compiled.checks == reference.checks
    assert compiled.duplicates == reference.duplicates
    assert compiled.digest == reference.digest
    # the unknown-items count reads the distinct recommended items: the compiled core's own
    assert compiled.unknown is not None
    assert reference.unknown is not None
    assert compiled.unknown.equals(reference.unknown)


def taken(specs: list[str], conventions: Conventions) -> list[str]:
    """The specs whose statistics the compiled core computes under these conventions."""
    found = []
    for text in specs:
        spec = resolve(MetricSpec.parse(text))
        if lookup(spec.name).scope != "user":
            continue
        try:
            stats, _ = metric_exprs((spec,), conventions)
        except (RecEvalError, OrderDependent):
            continue  # needs an input or a setting these cases do not give
        if kernel_core.requests(stats) is not None:
            found.append(text)
    return found


def test_the_classic_metrics_are_the_compiled_cores() -> None:
    """The metrics the compiled core is for are taken (else every test below is empty)."""
    assert taken(CLASSIC, Conventions()) == CLASSIC


def test_every_registered_metric_it_takes_gives_the_polars_cores_bits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every spec of the registry matrix that the compiled core takes, in one run."""
    conventions = Conventions(relevance_threshold=1.0)
    specs = taken(matrix(), conventions)
    names = {MetricSpec.parse(s).name for s in specs}
    assert {"ndcg", "precision", "recall", "map", "mrr", "hit_rate", "r_precision"} <= names
    assert len(specs) >= 40
    compiled, reference, runs = both(monkeypatch, data(), specs, conventions)
    assert runs == 1
    assert_same(compiled, reference)


# a choice that needs a companion setting
COMPANIONS = {"unrated": {"default_rating": 0.0}, "unpredicted": {"default_prediction": 0.0}}


def _choices() -> list[dict[str, Any]]:
    """One case per choice of every convention with Literal choices (the others at their
    defaults), and the thresholds, depths and presets below."""
    cases: list[dict[str, Any]] = []
    for name, field in Conventions.model_fields.items():
        for value in typing.get_args(field.annotation):
            if isinstance(value, str) and value != field.default:
                companion = COMPANIONS.get(name, {}) if value == "default" else {}
                cases.append({name: value, **companion})
    cases += [
        {"relevance_threshold": 2.0},
        {"relevance_threshold": 0.5},
        {"relevance_threshold": -1.0},
        {"max_depth": 5},
        {"max_depth": 30},
        {"gain": "exponential", "gain_below_threshold": "zero", "discount": "jarvelin"},
        {"gain": "binary", "ideal_dcg": "all_relevant", "tie_break": "item_text_asc"},
        *({"preset": preset} for preset in PRESETS),
    ]
    return cases


@pytest.mark.parametrize(
    "settings", _choices(), ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items())
)
@pytest.mark.slow
def test_every_convention_gives_the_polars_cores_bits(
    monkeypatch: pytest.MonkeyPatch, settings: dict[str, Any]
) -> None:
    conventions = Conventions(**settings)
    specs = taken(matrix(), conventions)
    compiled, reference, runs = both(monkeypatch, data(seed=5), specs or CLASSIC, conventions)
    assert_same(compiled, reference)
    drops = (
        settings.get("duplicates", "error") != "error"
        or settings.get("truth_duplicates", "error") != "error"
    )
    if specs and not drops and conventions.duplicates == "error":
        assert runs == 1, "the compiled core should have taken this run"


SHAPES: dict[str, Callable[[], tuple[pl.DataFrame, ...]]] = {
    "text ids": lambda: data(seed=7, text_ids=True),
    "rows grouped by user": lambda: data(seed=8, shuffled=False),
    "float32 scores": lambda: (
        data(seed=9)[0].with_columns(pl.col("score").cast(pl.Float32)),
        data(seed=9)[1],
    ),
    "integer grades": lambda: (
        data(seed=10)[0],
        data(seed=10)[1].with_columns(pl.col("relevance").cast(pl.Int64)),
    ),
    "one user": lambda: tuple(f.filter(pl.col("user") == 1001) for f in data(seed=11)),
    "long lists": lambda: data(seed=12),
    # ids far apart: the distinct recommended items are found by hashing, not a bitmap
    "ids far apart": lambda: tuple(
        f.with_columns(pl.col("user", "item") * 1_000_003_001 - 2**62) for f in data(seed=16)
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
@pytest.mark.parametrize("threads", [1, 3])
def test_every_shape_and_engine_gives_the_polars_cores_bits(
    monkeypatch: pytest.MonkeyPatch, shape: str, engine: str, threads: int
) -> None:
    """Each shape on both polars engines, the users split among 1 and 3 threads."""
    monkeypatch.setattr(kernel_core, "threads", lambda rows: threads)
    conventions = Conventions(relevance_threshold=1.0, tie_break="item_text_desc")
    specs = taken(matrix(), conventions)
    compiled, reference, runs = both(monkeypatch, SHAPES[shape](), specs, conventions, engine)
    assert runs == 1
    assert_same(compiled, reference)


# scores the kernel's sort compares by their bits (_kernel.c, comparable): both zeros,
# negatives, infinities, neighbours one ulp apart, the extremes; heavily tied
EVERY_SIGN = [
    0.0, -0.0, -0.0, 0.0, -1.5, -1.5, 1.5, -1e-300, 1e-300, 5e-324, -5e-324,
    float("inf"), float("-inf"), float("inf"), 1.7976931348623157e308,
    -1.7976931348623157e308, 0.1, float(np.nextafter(0.1, 1.0)), float(np.nextafter(0.1, 0.0)),
    -0.1, 2.0, 2.0, 2.0,
]  # fmt: skip


def every_sign(seed: int) -> tuple[pl.DataFrame, ...]:
    """data() with scores drawn from EVERY_SIGN, and users with lists of 17 to 300 items
    (the sort's networks take 16 keys, then merges), a third of them graded."""
    rng = random.Random(seed)
    predictions, truth = data(seed=seed)
    scores = [rng.choice(EVERY_SIGN) for _ in range(predictions.height)]
    long = [
        (user, item, rng.choice(EVERY_SIGN))
        for user, length in ((5, 17), (6, 33), (7, 300))
        for item in rng.sample(range(1, 400), length)
    ]
    graded = [(user, item, rng.choice(GRADES)) for user, item, _ in long[::3]]
    return (
        pl.concat(
            [
                predictions.with_columns(score=pl.Series(scores)),
                pl.DataFrame(long, schema=["user", "item", "score"], orient="row"),
            ]
        ),
        pl.concat([truth, pl.DataFrame(graded, schema=truth.columns, orient="row")]),
    )


def ulps_apart(seed: int) -> tuple[pl.DataFrame, ...]:
    """Lists of 1, 15, 16, 17, 129 and 1,000 items whose scores differ only in their last
    bits (a few ulps above 1.0, or below -1.0, some tied): the kernel sorts keys whose lowest
    bits are the rows' places (_kernel.c, rank_scores), so these rank by a second pass."""
    rng = random.Random(seed)
    rows, graded = [], []
    for user, length in enumerate((1, 15, 16, 17, 129, 1000), start=1):
        base = rng.choice([1.0, -1.0])
        for item in rng.sample(range(1, 5000), length):
            score = base
            for _ in range(rng.randrange(12)):
                score = float(np.nextafter(score, 2.0))
            rows.append((user, item, score))
            if rng.random() < 0.3:
                graded.append((user, item, rng.choice(GRADES)))
    rng.shuffle(rows)  # not grouped by user: read whole (evaluate_compiled, counted)
    predictions = pl.DataFrame(rows, schema=["user", "item", "score"], orient="row")
    truth = pl.DataFrame(graded, schema=["user", "item", "relevance"], orient="row")
    return predictions, truth


@pytest.mark.parametrize(
    ("scores", "tie_break"),
    [
        *((every_sign, t) for t in ("item_desc", "item_asc", "input_order", "item_text_asc")),
        *((ulps_apart, t) for t in ("item_desc", "input_order")),
    ],
)
def test_scores_of_every_sign_and_a_few_ulps_apart_rank_as_in_the_polars_core(
    monkeypatch: pytest.MonkeyPatch,
    scores: Callable[[int], tuple[pl.DataFrame, ...]],
    tie_break: str,
) -> None:
    conventions = Conventions(relevance_threshold=1.0, tie_break=tie_break)
    compiled, reference, runs = both(monkeypatch, scores(21), CLASSIC, conventions)
    assert runs == 1
    assert_same(compiled, reference)


@pytest.mark.own_process
@pytest.mark.parametrize(
    "change",
    [
        "a NaN score",
        "an infinite grade",
        "a repeated prediction",
        "a repeated truth row",
        "a null item",
    ],
)
@pytest.mark.slow
def test_what_the_polars_core_must_report_goes_to_it(
    monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """Inputs with a failed check leave the compiled core: the polars core reports them
    (the same error either way)."""
    predictions, truth = data(seed=13)
    if change == "a NaN score":
        predictions = predictions.with_columns(
            pl.when(pl.int_range(pl.len()) == 4)
            .then(float("nan"))
            .otherwise(pl.col("score"))
            .alias("score")
        )
    elif change == "an infinite grade":
        truth = truth.with_columns(
            pl.when(pl.int_range(pl.len()) == 2)
            .then(float("inf"))
            .otherwise(pl.col("relevance"))
            .alias("relevance")
        )
    elif change == "a repeated prediction":
        predictions = pl.concat([predictions, predictions.head(1).with_columns(score=pl.lit(0.01))])
    elif change == "a repeated truth row":
        truth = pl.concat([truth, truth.tail(1)])
    else:
        predictions = predictions.with_columns(
            pl.when(pl.int_range(pl.len()) == 3).then(None).otherwise(pl.col("item")).alias("item")
        )
    conventions = Conventions()
    errors = []
    for core in ("", "polars"):
        monkeypatch.setenv("RECEVAL_CORE", core)
        partial_or_error: Any
        try:
            partial_or_error = partial((predictions, truth), CLASSIC, conventions, "auto")
        except InputError as error:
            partial_or_error = str(error)
        errors.append(partial_or_error)
    if isinstance(errors[0], str):
        assert errors[0] == errors[1]
    else:  # the failed check is in the Partial (raised when the run finishes)
        assert not isinstance(errors[1], str)
        assert_same(errors[0], errors[1])
        assert errors[0].checks != {"predictions": {}, "truth": {}} or errors[0].duplicates


def test_the_polars_core_is_chosen_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECEVAL_CORE", "polars")
    assert extension() is None
    monkeypatch.setenv("RECEVAL_CORE", "")
    assert extension() is not None


def test_the_extension_ships_its_source(tmp_path: Path) -> None:
    """The C source sits beside the module that loads it (the sdist and wheels carry it)."""
    source = Path(kernel_core.__file__).parents[1] / "_kernel.c"
    assert "evaluate_job" in source.read_text(encoding="utf-8")


def _with_truth_only_ends(frames: tuple[pl.DataFrame, ...]) -> tuple[pl.DataFrame, ...]:
    """Users in the truth alone below the first and above the last predicted user."""
    extra = pl.DataFrame(
        {"user": [1, 1, 99999], "item": [9, 10, 100], "relevance": [1.0, 2.0, 1.0]}
    )
    return frames[0], pl.concat([frames[1], extra])


@pytest.mark.parametrize("batch_rows", [1, 7, 64, 1_000_000])
def test_predictions_read_in_batches_give_the_polars_cores_bits(
    monkeypatch: pytest.MonkeyPatch, batch_rows: int
) -> None:
    """Predictions grouped by user stream through the kernel in batches (a user's rows
    may span batches; the truth is sliced per batch; truth-only users at both ends)."""
    monkeypatch.setattr(kernel_core, "BATCH_ROWS", batch_rows)
    streamed = []
    batches = kernel_core.evaluate_batches

    def watched(*args: Any, **kwargs: Any) -> Any:
        result = batches(*args, **kwargs)
        streamed.append(isinstance(result, kernel_core.KernelTables))
        return result

    monkeypatch.setattr(kernel_core, "evaluate_batches", watched)
    frames = _with_truth_only_ends(data(seed=14, shuffled=False))
    conventions = Conventions(relevance_threshold=1.0)
    specs = taken(matrix(), conventions)
    compiled, reference, runs = both(monkeypatch, frames, specs, conventions)
    assert streamed == [True]
    assert runs == 0  # the whole-file path did not run
    assert_same(compiled, reference)


def test_predictions_not_grouped_by_user_are_read_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernel_core, "BATCH_ROWS", 16)
    frames = data(seed=15, shuffled=True)
    conventions = Conventions()
    compiled, reference, runs = both(monkeypatch, frames, CLASSIC, conventions)
    assert runs == 1  # the batches found the order broken; the whole file was read
    assert_same(compiled, reference)


def test_the_metrics_the_docs_name_are_the_compiled_cores() -> None:
    """docs/engines.md's list of metrics built from the compiled core's statistics holds."""
    engines = (Path(__file__).parents[2] / "docs" / "engines.md").read_text(encoding="utf-8")
    paragraph = " ".join(engines.split("**The compiled core.**")[1].split("\n\n")[0].split())
    named = paragraph.split("hits within |R|: what ")[1].split(" and more are built from")[0]
    names = [n.strip() for n in named.split(",")]
    assert len(names) >= 12
    specs = [metric_specs(REGISTRY[name])[0] for name in names]  # with its required params
    assert taken(specs, Conventions()) == specs


ENGINE_SETTINGS: dict[str, dict[str, Any]] = {
    "in_memory": {"engine": "in_memory"},
    "streaming": {"engine": "streaming"},
    "partitions 3": {"engine": "in_memory", "partitions": 3},
    "partitions 7": {"engine": "streaming", "partitions": 7},
    "auto": {"engine": "auto"},
}


@pytest.mark.slow
@pytest.mark.parametrize("grouped", [True, False], ids=["grouped by user", "in no order"])
@pytest.mark.parametrize("engine", list(ENGINE_SETTINGS))
def test_every_engine_gives_the_polars_cores_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str, grouped: bool
) -> None:
    """A whole `receval run` (the run planner, the engine, the report) with the compiled
    core and with RECEVAL_CORE=polars: the same JSON report and per-user file, bit for
    bit, on every polars engine (partitions: each bucket through the compiled core)."""
    monkeypatch.setattr(kernel_core, "BATCH_ROWS", 50)  # several batches, users across them
    predictions, truth = _with_truth_only_ends(data(seed=18, shuffled=not grouped))
    predictions.write_parquet(tmp_path / "predictions.parquet")
    truth.write_parquet(tmp_path / "truth.parquet")
    conventions = Conventions(relevance_threshold=1.0)
    config = {
        "predictions": {"path": "predictions.parquet"},
        "ground_truth": {"path": "truth.parquet", "columns": {"relevance": "relevance"}},
        "metrics": taken(matrix(), conventions),
        "conventions": {"relevance_threshold": 1.0},
        **ENGINE_SETTINGS[engine],
    }
    ran = watch_readers(monkeypatch)
    reports = {}
    for core in ("", "polars"):
        monkeypatch.setenv("RECEVAL_CORE", core)
        name = core or "compiled"
        code, stderr = run_cli(tmp_path, config, name)
        assert code == 0, stderr
        reports[name] = comparable(json.loads((tmp_path / f"{name}.json").read_text()))
        if name == "compiled":  # once per bucket; in batches where the rows are grouped
            buckets = ENGINE_SETTINGS[engine].get("partitions", 1)
            assert ran == ["evaluate_batches" if grouped else "evaluate_compiled"] * buckets
    assert not differences(reports["polars"], reports["compiled"])
    compiled = pl.read_parquet(tmp_path / "compiled.parquet")
    reference = pl.read_parquet(tmp_path / "polars.parquet")
    assert compiled.columns == reference.columns
    assert [c for c in reference.columns if bits(compiled[c]) != bits(reference[c])] == []


@pytest.mark.parametrize("rows", [1, 7, 250, 1000])
def test_parquet_is_read_a_slice_at_a_time(tmp_path: Path, rows: int) -> None:
    """read_batches reads a Parquet scan (renamed, cast) in slices of `rows` rows, in the
    file's order, the last one shorter; a filter before the scan (no slice pushed into it)
    or a CSV file is read by polars' streaming batches: the same rows either way."""
    path = tmp_path / "predictions.parquet"
    frame = pl.DataFrame({"u": np.arange(1000) // 7, "i": np.arange(1000)[::-1] % 97})
    frame.with_columns(s=pl.col("i") / 3).write_parquet(path, row_group_size=64)
    scan = pl.scan_parquet(path).select(
        user=pl.col("u"), item=pl.col("i").cast(pl.Int64), score=pl.col("s")
    )
    frame.write_csv(tmp_path / "predictions.csv")
    filtered = scan.filter(pl.col("score") > 5)
    csv = pl.scan_csv(tmp_path / "predictions.csv")
    assert kernel_core._sliced(scan)
    assert not kernel_core._sliced(filtered)
    assert not kernel_core._sliced(csv)
    for lazy in (scan, filtered, csv):
        batches = list(kernel_core.read_batches(lazy, rows, "streaming"))
        assert pl.concat(batches).equals(lazy.collect())
        if lazy is scan:
            assert [b.height for b in batches] == [rows] * (1000 // rows) + (
                [1000 % rows] if 1000 % rows else []
            )
