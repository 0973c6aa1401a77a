"""psp, psdcg, psndcg (metrics/propensity.py): by hand, against pyxclib's own functions
(tests/peers/pyxclib: run_pyxclib.py made golden.json with pyxclib's psprecision, psndcg
and compute_inv_propesity), and their properties; the catalog's propensity column's
errors."""

from __future__ import annotations

import itertools
import json
import math
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import assert_user_error, invoke, write, write_config

from receval_cli.metrics import MetricSpec, resolve

GOLDEN = Path(__file__).parents[1] / "peers" / "pyxclib"
INPUTS = ("predictions.csv", "truth.csv", "log.csv", "catalog.csv")


def canonical(spec: str) -> str:
    """The spec as the report names it (its parameters sorted)."""
    return str(resolve(MetricSpec.parse(spec)))


def per_user(folder: Path, config: dict[str, Any], name: str = "run") -> pl.DataFrame:
    """The run's per-user file, its metric columns named as the config writes them."""
    path = write_config(folder, config, f"{name}.yaml")
    result = invoke("run", path, "-q", "--per-user", folder / f"{name}.parquet")
    assert result.exit_code == 0, result.stderr
    found = pl.read_parquet(folder / f"{name}.parquet")
    return found.rename({canonical(m): m for m in config["metrics"] if canonical(m) != m})


def golden_config(predictions: str = "predictions.csv", metrics: list[str] | None = None) -> dict:
    return {
        "predictions": {"path": predictions},
        "ground_truth": {"path": "truth.csv"},
        "catalog": {"path": "catalog.csv", "columns": {"propensity": "propensity"}},
        "interactions": {"path": "log.csv"},
        "metrics": metrics or [],
    }


@pytest.fixture
def golden(tmp_path: Path) -> dict[str, Any]:
    for name in GOLDEN.iterdir():
        if name.suffix == ".csv":
            shutil.copy(name, tmp_path / name.name)
    data: dict[str, Any] = json.loads((GOLDEN / "golden.json").read_text())
    return data


def specs_for(source: str, k: int) -> dict[str, str]:
    return {
        "psp": f"psp@{k}(normalize=ideal,propensity={source})",
        "psp_none": f"psp@{k}(normalize=none,propensity={source})",
        "psndcg": f"psndcg@{k}(normalize=ideal,propensity={source})",
        "psndcg_none": f"psndcg@{k}(normalize=none,propensity={source})",
    }


# what the agreement tests below check (read by tests/metrics/test_registry_coverage.py)
PYXCLIB_SPECS = [spec for source in ("model", "catalog") for spec in specs_for(source, 3).values()]
NAIVE_SPECS = [
    f"{name}@{k}(propensity={source})"
    for name in ("psp", "psdcg", "psndcg")
    for source in ("model", "catalog")
    for k in (1, 2, 4, 10)
] + ["psdcg(propensity=model)", "psndcg(normalize=none,propensity=catalog)"]


# pyxclib's _ndcg keeps its values in float32 (np.zeros(..., dtype=np.float32)): psndcg
# agrees to float32's precision; psprecision is float64 throughout
TOLERANCE = {"psp": 1e-12, "psp_none": 1e-12, "psndcg": 1e-6, "psndcg_none": 1e-6}


def test_per_user_values_agree_with_pyxclib(tmp_path: Path, golden: dict[str, Any]) -> None:
    """Each evaluated user's psP@k and psnDCG@k: normalize=ideal against pyxclib's
    psprecision / psndcg on that user's row alone, normalize=none against pyxclib's raw
    values (its _precision and _ndcg of the propensity-weighted hits)."""
    cases = [(source, k) for source in ("model", "catalog") for k in (1, 3, 5)]
    metrics = [spec for source, k in cases for spec in specs_for(source, k).values()]
    found = per_user(tmp_path, golden_config(metrics=metrics))
    evaluated = found.filter(pl.col("status") == "evaluated")
    assert sorted(evaluated["user"].to_list()) == golden["evaluated"]
    assert found.filter(pl.col("status") == "only_in_predictions").height > 0
    assert found.filter(pl.col("status") == "no_relevant").height > 0  # grade-0 rows only
    empty = found.filter(pl.col("user").is_in([100, 201, 219]))  # only in the ground truth
    assert empty["status"].to_list() == ["evaluated"] * 3
    checked = 0
    for source, k in cases:
        expected = golden["per_user"][f"{source}@{k}"]
        for key, spec in specs_for(source, k).items():
            values = dict(zip(evaluated["user"], evaluated[spec], strict=True))
            for user, wanted in expected.items():
                assert values[int(user)] == pytest.approx(wanted[key], rel=TOLERANCE[key]), (
                    spec,
                    user,
                )
                checked += wanted[key] > 0
    assert checked > 100  # most cases score: the agreement is not on zeros alone


def test_users_without_relevant_items_score_zero(tmp_path: Path, golden: dict[str, Any]) -> None:
    """users_without_relevant=zero keeps them: every value 0 (pyxclib's rows without
    labels add 0 to both of its means)."""
    metrics = [*specs_for("model", 3).values(), "psdcg@3"]
    config = {**golden_config(metrics=metrics), "conventions": {"users_without_relevant": "zero"}}
    found = per_user(tmp_path, config)
    none = found.filter(pl.col("user").is_in([202, 208, 210, 215, 221, 226, 229]))
    assert none.height == 7
    assert none["status"].to_list() == ["evaluated"] * 7
    for spec in metrics:
        assert none[spec].to_list() == [0.0] * 7, spec


def test_dataset_ratios_agree_with_pyxclib(tmp_path: Path, golden: dict[str, Any]) -> None:
    """pyxclib (and the Extreme Classification Repository) report the ratio of the means
    over the users: mean psP@k / mean psP*@k. receval's normalize=none means, on the
    predictions and on pyxclib's best lists (oracle_*.csv), give it."""
    cases = [(source, k) for source in ("model", "catalog") for k in (1, 3, 5)]
    wanted = {
        case: [
            specs_for(*case)["psp_none"],
            specs_for(*case)["psndcg_none"],
            specs_for(*case)["psp"],
        ]
        for case in cases
    }
    every = [spec for specs in wanted.values() for spec in specs]
    mine = per_user(tmp_path, golden_config(metrics=every), "mine")
    users = mine.filter(pl.col("status") == "evaluated")["user"]
    for (source, k), specs in wanted.items():
        best = per_user(tmp_path, golden_config(f"oracle_{source}_{k}.csv", specs), "best")
        best = best.filter(pl.col("user").is_in(users.implode()))
        assert best.height == len(users)
        expected = golden["dataset"][f"{source}@{k}"]
        for key, spec in (("psp", specs[0]), ("psndcg", specs[1])):
            ratio = mine[spec].sum() / best[spec].sum()
            assert ratio == pytest.approx(expected[key], rel=TOLERANCE[key]), (spec, k)
        # on its best list every user with a relevant item scores 1
        assert best[specs[2]].to_list() == [1.0] * len(users)


def naive(spec: str, ranked: list[int], relevant: set[int], weight: dict[int, float]) -> float:
    """The paper's formulas, written out (no cutoff: the whole list, and the ideal over
    every relevant item, as ndcg's)."""
    parsed = MetricSpec.parse(spec)
    k = parsed.k if parsed.k is not None else len(ranked) + len(relevant) + 1
    top = ranked[:k]
    gains = [weight[i] if i in relevant else 0.0 for i in top]
    best = sorted((weight[i] for i in relevant), reverse=True)[:k]
    normalize = parsed.param_dict().get("normalize", "none")
    if parsed.name == "psp":
        value, ideal = sum(gains) / k, sum(best) / k
    else:
        value = sum(g / math.log2(r + 2) for r, g in enumerate(gains))
        ideal = sum(g / math.log2(r + 2) for r, g in enumerate(best))
        if parsed.name == "psdcg":
            return value
        if normalize == "none":
            ideal = sum(1 / math.log2(r + 2) for r in range(min(k, len(relevant))))
    if normalize == "none" and parsed.name == "psp":
        return value
    return value / ideal if ideal else 0.0


def test_agrees_with_the_paper_s_formulas(tmp_path: Path, golden: dict[str, Any]) -> None:
    """Every evaluated user's value against the formulas written out, with pyxclib's
    weights (golden.json), the lists ranked by score then item id descending."""
    found = per_user(tmp_path, golden_config(metrics=NAIVE_SPECS))
    predictions = pl.read_csv(tmp_path / "predictions.csv")
    truth = pl.read_csv(tmp_path / "truth.csv")
    for user in golden["evaluated"]:
        mine = predictions.filter(pl.col("user") == user).sort(
            ["score", "item"], descending=[True, True]
        )
        ranked = mine["item"].to_list()
        relevant = set(truth.filter((pl.col("user") == user) & (pl.col("relevance") >= 1))["item"])
        row = found.filter(pl.col("user") == user).row(0, named=True)
        for spec in NAIVE_SPECS:
            source = MetricSpec.parse(spec).param_dict()["propensity"]
            weight = {int(i): w for i, w in golden["weights"][str(source)].items()}
            assert row[spec] == pytest.approx(naive(spec, ranked, relevant, weight), rel=1e-12), (
                spec,
                user,
            )


HAND = {
    "predictions.csv": "user,item,score\n1,9,0.9\n1,10,0.8\n1,100,0.8\n2,10,0.5\n3,9,0.3\n",
    "truth.csv": "user,item,relevance\n1,9,1\n1,100,1\n1,7,1\n1,10,0\n2,9,1\n4,10,1\n",
    "catalog.csv": "item,p\n9,0.5\n10,0.25\n100,0.1\n",
    "log.csv": "user,item\n1,9\n2,9\n3,9\n1,10\n5,100\n5,100\n",
}


def hand_config(folder: Path, metrics: list[str]) -> dict[str, Any]:
    for name, text in HAND.items():
        write(folder / name, text)
    return {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": "truth.csv"},
        "catalog": {"path": "catalog.csv", "columns": {"propensity": "p"}},
        "interactions": {"path": "log.csv"},
        "metrics": metrics,
    }


def test_hand_computed_catalog_propensities(tmp_path: Path) -> None:
    """User 1's list is [9, 100, 10] (100 before 10: tie_break item_desc); relevant 9
    (p = 0.5), 100 (p = 0.1), 7 (not in the catalog: p = 1); 10 has grade 0. User 2 has
    9 relevant and recommends 10 only; user 4 has no list; user 3 only predictions."""
    metrics = [
        "psp@2(propensity=catalog,normalize=none)",
        "psp@2(normalize=ideal,propensity=catalog)",
        "psp@1(normalize=ideal,propensity=catalog)",
        "psdcg@3(propensity=catalog)",
        "psndcg@3(normalize=ideal,propensity=catalog)",
        "psndcg@3(propensity=catalog,normalize=none)",
        "psndcg(normalize=ideal,propensity=catalog)",
    ]
    found = per_user(tmp_path, hand_config(tmp_path, metrics))
    one = found.filter(pl.col("user") == 1).row(0, named=True)
    log3 = math.log2(3)
    assert one[metrics[0]] == (2 + 10) / 2
    assert one[metrics[1]] == 1.0  # the best two: 10 and 2
    assert one[metrics[2]] == pytest.approx(2 / 10)  # rank 1 holds 9 (2), the best 100 (10)
    assert one[metrics[3]] == pytest.approx(2 + 10 / log3)
    best = 10 + 2 / log3 + 1 / 2
    assert one[metrics[4]] == pytest.approx((2 + 10 / log3) / best)
    assert one[metrics[5]] == pytest.approx((2 + 10 / log3) / (1 + 1 / log3 + 1 / 2))
    assert one[metrics[6]] == pytest.approx((2 + 10 / log3) / best)
    for user in (2, 4):
        row = found.filter(pl.col("user") == user).row(0, named=True)
        assert [row[m] for m in metrics] == [0.0] * len(metrics)
    assert found.filter(pl.col("user") == 3)["status"].item() == "only_in_predictions"


def test_hand_computed_model_propensities(tmp_path: Path) -> None:
    """Jain et al.'s model over the log: N = 4 distinct users (1, 2, 3, 5), N_9 = 3,
    N_10 = 1, N_100 = 1 (user 5's two rows count once), N_7 = 0."""
    a, b = 0.55, 1.5
    c = (math.log(4) - 1) * (b + 1) ** a

    def weight(holders: int) -> float:
        return 1 + c * (holders + b) ** -a

    metrics = [
        "psp@2(normalize=none)",
        "psdcg@3",
        "psndcg@3(normalize=ideal)",
        "psp@2(a=0.5,b=0.4,normalize=none)",
    ]
    found = per_user(tmp_path, hand_config(tmp_path, metrics))
    one = found.filter(pl.col("user") == 1).row(0, named=True)
    assert one[metrics[0]] == pytest.approx((weight(3) + weight(1)) / 2, rel=1e-14)
    dcg = weight(3) + weight(1) / math.log2(3)
    assert one[metrics[1]] == pytest.approx(dcg, rel=1e-14)
    ideal = sorted([weight(3), weight(1), weight(0)], reverse=True)
    best = ideal[0] + ideal[1] / math.log2(3) + ideal[2] / 2
    assert one[metrics[2]] == pytest.approx(dcg / best, rel=1e-14)
    c2 = (math.log(4) - 1) * 1.4**0.5
    other = (2 + c2 * 3.4**-0.5 + c2 * 1.4**-0.5) / 2
    assert one[metrics[3]] == pytest.approx(other, rel=1e-14)


def test_with_every_propensity_one_they_are_precision_and_ndcg(tmp_path: Path) -> None:
    """p = 1 for every item: psP@k = P@k, psnDCG@k = binary nDCG@k (both normalizations),
    the same bits."""
    for name, text in HAND.items():
        write(tmp_path / name, text)
    write(tmp_path / "ones.csv", "item,p\n9,1\n10,1.0\n100,1\n7,1\n")
    config = {
        **hand_config(tmp_path, []),
        "catalog": {"path": "ones.csv", "columns": {"propensity": "p"}},
    }
    config["conventions"] = {"users_without_relevant": "zero"}
    pairs = []
    for k in (1, 2, 3, 5):
        pairs += [
            (f"psp@{k}(propensity=catalog,normalize=none)", f"precision@{k}"),
            (f"psndcg@{k}(normalize=ideal,propensity=catalog)", f"ndcg@{k}(gain=binary)"),
            (f"psndcg@{k}(propensity=catalog,normalize=none)", f"ndcg@{k}(gain=binary)"),
            (f"psdcg@{k}(propensity=catalog)", f"dcg@{k}(gain=binary)"),
            (f"psp@{k}(normalize=ideal,propensity=catalog)", f"hits@{k}"),
        ]
    pairs += [  # the whole list: the ideal over every relevant item, as ndcg's
        ("psndcg(normalize=ideal,propensity=catalog)", "ndcg(gain=binary)"),
        ("psndcg(propensity=catalog,normalize=none)", "ndcg(gain=binary)"),
        ("psdcg(propensity=catalog)", "dcg(gain=binary)"),
    ]
    config["metrics"] = list(dict.fromkeys(m for pair in pairs for m in pair))
    found = per_user(tmp_path, config).sort("user")
    assert found["user"].to_list() == [1, 2, 3, 4]
    relevant = [3, 1, 0, 1]  # |R| per user
    for mine, theirs in pairs:
        if theirs.startswith("hits"):  # normalize=ideal: hits@k / min(k, |R|)
            k = int(theirs.split("@")[1])
            hits = found[theirs].to_list()
            expected = [h / min(k, r) if r else 0.0 for h, r in zip(hits, relevant, strict=True)]
            assert found[mine].to_list()[:2] + found[mine].to_list()[3:] == (
                expected[:2] + expected[3:]
            )
            continue
        assert found[mine].to_list() == found[theirs].to_list(), (mine, theirs)


def test_bounds_on_the_golden_data(tmp_path: Path, golden: dict[str, Any]) -> None:
    """normalize=ideal lies in [0, 1]; a rarer relevant item found weighs more, so the
    raw values reach above 1; psDCG@k grows with k."""
    metrics = []
    for source in ("model", "catalog"):
        for k in (1, 2, 3, 5, 10):
            metrics += [
                f"psp@{k}(normalize=ideal,propensity={source})",
                f"psndcg@{k}(normalize=ideal,propensity={source})",
            ]
            metrics += [f"psdcg@{k}(propensity={source})"]
        metrics += [f"psndcg(normalize=ideal,propensity={source})", f"psdcg(propensity={source})"]
    found = per_user(tmp_path, golden_config(metrics=metrics))
    found = found.filter(pl.col("status") == "evaluated")
    for spec in metrics:
        values = found[spec]
        if spec.startswith("psdcg"):
            assert values.min() >= 0.0
        else:
            assert values.min() >= 0.0, spec
            assert values.max() <= 1.0, spec
    assert found["psdcg@10(propensity=model)"].max() > 1.0
    for source in ("model", "catalog"):
        at = [found[f"psdcg@{k}(propensity={source})"] for k in (1, 2, 3, 5, 10)]
        for low, high in itertools.pairwise(at):
            assert (high >= low).all()


def test_psp_needs_a_cutoff(tmp_path: Path) -> None:
    config = hand_config(tmp_path, ["psp"])
    result = invoke("run", write_config(tmp_path, config))
    assert_user_error(result, "psp", "needs a cutoff", "psp@10")


def test_propensity_catalog_needs_the_column(tmp_path: Path) -> None:
    config = hand_config(tmp_path, ["psp@5(normalize=ideal,propensity=catalog)"])
    config["catalog"] = {"path": "catalog.csv"}
    result = invoke("run", write_config(tmp_path, config))
    assert_user_error(
        result, "psp@5(normalize=ideal,propensity=catalog)", "catalog.columns.propensity"
    )


def test_propensity_model_needs_the_log(tmp_path: Path) -> None:
    config = hand_config(tmp_path, ["psndcg@5"])
    del config["interactions"]
    result = invoke("run", write_config(tmp_path, config))
    assert_user_error(result, "psndcg@5", "interactions")


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ("9,0.5\n10,1.5\n100,0.2\n", ["outside (0, 1]", "1.5"]),
        ("9,0.5\n10,0\n100,0.2\n", ["outside (0, 1]", "0.0"]),
        ("9,-0.25\n10,3\n100,0.2\n", ["2 value(s) outside (0, 1]", "-0.25"]),
        ("9,0.5\n10,\n100,0.2\n", ["1 missing, NaN or infinite value(s)"]),
        ("9,0.5\n10,NaN\n100,0.2\n", ["1 missing, NaN or infinite value(s)"]),
        ("9,0.5\n10,high\n100,0.2\n", ["holds String values, not numbers"]),
    ],
)
def test_bad_propensities_are_named(tmp_path: Path, values: str, words: list[str]) -> None:
    """Exit 2 naming the file, the column and a bad value (or what is wrong), and the fix,
    whether or not a metric reads the column."""
    config = hand_config(tmp_path, ["psp@5(normalize=ideal,propensity=catalog)"])
    write(tmp_path / "catalog.csv", "item,p\n" + values)
    result = invoke("run", write_config(tmp_path, config))
    stderr = assert_user_error(result, "catalog.csv", "'p'", "catalog.columns.propensity", *words)
    assert "0 < p <= 1" in stderr
    config["metrics"] = ["ndcg@5"]
    result = invoke("run", write_config(tmp_path, config, "other.yaml"))
    assert_user_error(result, "catalog.csv", "'p'", *words)


@pytest.mark.parametrize("engine", [{}, {"partitions": 2}])
def test_a_propensity_whose_weight_overflows_is_named(
    tmp_path: Path, engine: dict[str, Any]
) -> None:
    """A propensity in (0, 1] below 5.56e-309 (1e-310; 1e-308 weighs 1e308) would weigh its item
    1/p = inf: exit 2 naming the file, the column, the value and the least propensity
    allowed, not an overflow of the sums blamed on the scores."""
    config = {**hand_config(tmp_path, ["psp@5(propensity=catalog)"]), **engine}
    write(tmp_path / "catalog.csv", "item,p\n9,0.5\n10,1e-310\n100,0.2\n")
    result = invoke("run", write_config(tmp_path, config))
    words = ("catalog.csv", "'p'", "1 value(s) below 5.56268464626801e-309", "1e-310", "1/p")
    assert_user_error(result, *words)


def test_a_propensity_metric_is_documented() -> None:
    result = invoke("metrics", "psp")
    assert result.exit_code == 0, result.stderr
    for words in ("Jain", "KDD 2016", "propensity", "normalize", "model", "catalog"):
        assert words in result.stdout, words


def golden_engine_specs() -> list[str]:
    specs = []
    for source in ("model", "catalog"):
        for k in ("@1", "@5", ""):
            specs += [f"psndcg{k}(propensity={source})", f"psdcg{k}(propensity={source})"]
            specs += [f"psndcg{k}(normalize=none,propensity={source})"]
        specs += [
            f"psp@3(normalize=ideal,propensity={source})",
            f"psp@3(normalize=none,propensity={source})",
        ]
    return specs


def engine_files(folder: Path, settings: dict[str, Any]) -> pl.DataFrame:
    """The golden data's per-user file on the engine (a relevant item that the catalog
    lacks, users on one side only, ties): it must be in memory's, bit for bit."""
    config = {**golden_config(metrics=golden_engine_specs()), **settings}
    return per_user(folder, config, "engine")


@pytest.mark.parametrize("settings", [{"partitions": 3}, {"engine": "streaming", "partitions": 7}])
def test_partitioned_engines_give_the_same_bits(
    tmp_path: Path, golden: dict[str, Any], settings: dict[str, Any]
) -> None:
    expected = engine_files(tmp_path, {"engine": "in_memory"})
    assert engine_files(tmp_path, settings).equals(expected)


@pytest.mark.spark
def test_spark_gives_the_same_bits(spark: Any, tmp_path: Path, golden: dict[str, Any]) -> None:
    """Spark's buckets see the catalog rows and the log's popularity of the items they
    recommend and of their users' ground-truth items (the ideal values weigh those)."""
    expected = engine_files(tmp_path, {"engine": "in_memory"})
    for buckets in (3, 40):
        assert engine_files(tmp_path, {"engine": "spark", "partitions": buckets}).equals(expected)
    # the catalog's checks run on Spark's executors: a bad propensity is named there too
    write(tmp_path / "catalog.csv", "item,propensity\n9,0.5\n10,1.25\n100,0.2\n")
    config = {
        **golden_config(metrics=["psp@3(normalize=ideal,propensity=catalog)"]),
        "engine": "spark",
    }
    result = invoke("run", write_config(tmp_path, config, "bad.yaml"))
    assert_user_error(result, "catalog.csv", "'propensity'", "outside (0, 1]", "1.25")


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("psp@5(normalize=ideal,a=0)", ["'a'", "positive number"]),
        ("psp@5(normalize=ideal,a=101)", ["'a'", "at most 100"]),
        ("psndcg@5(normalize=ideal,b=1001)", ["'b'", "at most 1000"]),
        ("psndcg@5(normalize=max)", ["'normalize'", "none, dataset, ideal"]),
        ("psdcg@5(propensity=log)", ["'propensity'", "model, catalog"]),
    ],
)
def test_bad_parameters_are_named(tmp_path: Path, spec: str, words: list[str]) -> None:
    config = hand_config(tmp_path, [spec])
    assert_user_error(invoke("run", write_config(tmp_path, config)), *words)
