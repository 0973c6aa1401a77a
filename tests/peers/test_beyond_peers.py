"""The beyond-accuracy metrics against three peer libraries' own numbers.

tests/peers/{jurity,recommenders,recmetrics}/make.sh ran Jurity 2.1.0, MS Recommenders
1.2.1 and recmetrics 0.1.5, each in a virtual environment of its own, on the shared data
in tests/peers/beyond_data (make_data.py: a catalog with an embedding, a genre and tags,
an interactions log, and two prediction files: `equal`, every user with 15 scored items,
so every top-k list has k items; `ragged`, lists of 1 to 15 items, some with items absent
from the log). The NOTES.md next to each golden file says how the library defines its
metrics and how the data were fed. Here receval evaluates the same files and must agree
to 1e-9 (absolute), in the value and per user where the library gives per-user values.
Where a library's definition differs, the test checks the documented relation exactly
instead. No peer library is run here.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import golden_files
import polars as pl
import pytest

import receval_cli
from receval_cli.config.conventions import Conventions
from receval_cli.metrics import MetricSpec
from receval_cli.results.report import Report

GOLDEN = Path(__file__).parent
DATA = GOLDEN / "beyond_data"
TOL = 1e-9
CUTOFFS = (5, 10)
PER_USER_AT = 10  # the peers' per-user values are stored at k = 10
DATASETS = ("equal", "ragged")
IDS = {"user": pl.String, "item": pl.String}
CATALOG_COLUMNS = {"item": "item", "embedding": "emb", "category": "genre", "tags": "tags"}
CONVENTIONS = {"users_without_relevant": "zero"}  # the ground truth is a placeholder

# the metrics receval computes on each dataset (with the catalog: its 60 items are U)
METRICS = (
    *(
        name
        for k in CUTOFFS
        for name in (
            f"inter_list_diversity@{k}",
            f"intra_list_diversity@{k}(feature=embedding)",
            f"intra_list_diversity@{k}(feature=category)",
            f"intra_list_diversity@{k}(feature=tags)",
            f"catalog_coverage@{k}",
            f"novelty@{k}(unseen=zero)",
            f"novelty@{k}(share=users)",
            f"entropy@{k}",
        )
    ),
    "prediction_coverage",
)
# without the catalog: the log's items are the universe (MS Recommenders' catalog)
LOG_UNIVERSE_METRICS = tuple(f"catalog_coverage@{k}" for k in CUTOFFS)


golden = cache(golden_files.golden)


@cache
def predictions(dataset: str) -> pl.DataFrame:
    return pl.read_csv(DATA / f"{dataset}_predictions.csv", schema_overrides=IDS)


@cache
def catalog() -> pl.DataFrame:
    return pl.read_csv(DATA / "catalog.csv", schema_overrides={"item": pl.String})


@cache
def log() -> pl.DataFrame:
    return pl.read_csv(DATA / "log.csv", schema_overrides=IDS)


def placeholder_truth(frame: pl.DataFrame) -> pl.DataFrame:
    """One item per user of the predictions: these metrics do not read the ground truth."""
    return frame.group_by("user", maintain_order=True).agg(pl.col("item").first())


def evaluate(dataset: str, metrics: Sequence[str], with_catalog: bool) -> Report:
    frame = predictions(dataset)
    return receval_cli.evaluate(
        frame,
        placeholder_truth(frame),
        list(metrics),
        conventions=CONVENTIONS,
        catalog=catalog() if with_catalog else None,
        catalog_columns=CATALOG_COLUMNS if with_catalog else None,
        interactions=log(),
        interaction_columns={"user": "user", "item": "item"},
    )


@cache
def receval(dataset: str) -> Report:
    return evaluate(dataset, METRICS, with_catalog=True)


@cache
def receval_log_universe(dataset: str) -> Report:
    return evaluate(dataset, LOG_UNIVERSE_METRICS, with_catalog=False)


def per_user(report: Report, metric: str) -> dict[str, float]:
    """The users with a value (intra-list diversity: users with >= 2 items)."""
    assert report.per_user is not None
    rows = report.per_user.select("user", metric).drop_nulls().iter_rows()
    return dict(rows)


users_averaged = golden_files.users_averaged


def top_k(dataset: str, k: int) -> pl.DataFrame:
    """Each user's top k rows by score (the data have no tied score)."""
    return (
        predictions(dataset)
        .sort("score", descending=True)
        .group_by("user", maintain_order=True)
        .head(k)
    )


def assert_per_user(expected: dict[str, float], got: dict[str, float]) -> None:
    assert set(got) == set(expected)
    assert got == pytest.approx(expected, abs=TOL)


# --- the data ------------------------------------------------------------------------


def test_data_have_no_tied_score_and_no_recommended_pair_in_the_log() -> None:
    """What every comparison relies on: the same ranking whatever the library's sort, and
    (MS Recommenders) no recommended (user, item) pair in the training log."""
    for dataset in DATASETS:
        frame = predictions(dataset)
        assert not frame.get_column("score").is_duplicated().any()
        assert frame.join(log(), on=["user", "item"], how="semi").height == 0
    assert not log().is_duplicated().any()
    equal = predictions("equal").group_by("user").len()
    assert set(equal.get_column("len")) == {15}
    ragged = predictions("ragged").group_by("user").len().get_column("len")
    assert ragged.min() == 1
    assert ragged.max() == 15
    logged = set(log().get_column("item"))
    assert set(predictions("equal").get_column("item")) <= logged
    assert set(predictions("ragged").get_column("item")) - logged  # cold items recommended


def test_golden_files_come_from_the_pinned_versions() -> None:
    for library, name, version in (
        ("jurity", "beyond", "2.1.0"),
        ("recommenders", "beyond", "1.2.1"),
        ("recmetrics", "equal", "0.1.5"),
    ):
        data = golden(library, name)
        assert (data["library"], data["version"]) == (library, version)
    assert golden("recmetrics", "equal")["numpy"].startswith("1.")
    assert golden("recmetrics", "equal")["pandas"].startswith("1.")


# --- Jurity 2.1.0 --------------------------------------------------------------------


def jurity(dataset: str, key: str) -> dict[str, Any]:
    entry: dict[str, Any] = golden("jurity", "beyond")["metrics"][dataset][key]
    return entry


@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("k", CUTOFFS)
def test_jurity_inter_list_diversity(dataset: str, k: int) -> None:
    """InterListDiversity(user_sample_size=None): the exact mean over all user pairs; lists
    of different lengths on `ragged`."""
    entry = jurity(dataset, f"InterListDiversity@{k}")
    assert abs(entry["value"]) > 1e-6  # not in the range Jurity sets to 0.0
    assert entry["support"] == predictions(dataset).get_column("user").n_unique()
    got = receval(dataset).metrics[f"inter_list_diversity@{k}"]
    assert got == pytest.approx(entry["value"], abs=TOL)


@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("k", CUTOFFS)
@pytest.mark.parametrize("feature", ["embedding", "category", "tags"])
def test_jurity_intra_list_diversity(dataset: str, k: int, feature: str) -> None:
    """IntraListDiversity: embedding with metric cosine, category one-hot with cosine,
    tags multi-hot with scipy's jaccard; the mean over users with >= 2 items."""
    entry = jurity(dataset, f"IntraListDiversity@{k}[{feature}]")
    metric = f"intra_list_diversity@{k}(feature={feature})"
    report = receval(dataset)
    assert report.metrics[metric] == pytest.approx(entry["value"], abs=TOL)
    assert users_averaged(report, metric) == entry["support"]
    if k == PER_USER_AT:
        assert_per_user(entry["per_user"], per_user(report, metric))


# --- MS Recommenders 1.2.1 -----------------------------------------------------------


def recommenders(dataset: str, key: str) -> dict[str, Any]:
    entry: dict[str, Any] = golden("recommenders", "beyond")["metrics"][dataset][key]
    return entry


@pytest.mark.parametrize("k", CUTOFFS)
def test_recommenders_catalog_coverage(k: int) -> None:
    """Every recommended item is in the log (`equal`): the log's items are the catalog."""
    expected = recommenders("equal", f"catalog_coverage@{k}")["value"]
    got = receval_log_universe("equal").metrics[f"catalog_coverage@{k}"]
    assert got == pytest.approx(expected, abs=TOL)
    assert expected < 1


@pytest.mark.parametrize("k", CUTOFFS)
def test_recommenders_catalog_coverage_counts_items_outside_the_log(k: int) -> None:
    """On `ragged` some recommended items are not in the log: the library counts them in
    the numerator (distinct recommended items / distinct log items), receval leaves them
    out (|U ∩ recommended| / |U|). Documented relation: theirs = ours + outside / |U|."""
    expected = recommenders("ragged", f"catalog_coverage@{k}")["value"]
    logged = set(log().get_column("item"))
    outside = set(top_k("ragged", k).get_column("item")) - logged
    assert outside
    got = receval_log_universe("ragged").metrics[f"catalog_coverage@{k}"]
    assert got + len(outside) / len(logged) == pytest.approx(expected, abs=TOL)


@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("k", CUTOFFS)
def test_recommenders_distributional_coverage_is_entropy(dataset: str, k: int) -> None:
    expected = recommenders(dataset, f"distributional_coverage@{k}")["value"]
    assert receval(dataset).metrics[f"entropy@{k}"] == pytest.approx(expected, abs=TOL)


@pytest.mark.parametrize("k", CUTOFFS)
def test_recommenders_novelty(k: int) -> None:
    """Every list has k items: the library's mean over all recommendations is receval's
    mean over users (unseen=zero, as the library's inner merge)."""
    entry = recommenders("equal", f"novelty@{k}")
    metric = f"novelty@{k}(unseen=zero)"
    assert receval("equal").metrics[metric] == pytest.approx(entry["value"], abs=TOL)
    if k == PER_USER_AT:
        assert_per_user(entry["per_user"], per_user(receval("equal"), metric))


def test_recommenders_preset_counts_unseen_items_as_zero() -> None:
    """Under the recommenders preset, novelty's default is the library's (unseen=zero)."""
    frame = predictions("equal")
    report = receval_cli.evaluate(
        frame,
        placeholder_truth(frame),
        ["novelty@10"],
        conventions={"preset": "recommenders"},
        interactions=log(),
    )
    expected = recommenders("equal", "novelty@10")["value"]
    assert report.metrics["novelty@10"] == pytest.approx(expected, abs=TOL)
    # (every item of `equal` is in the log, so the value alone cannot tell the rule)
    params = Conventions(preset="recommenders").metric_params(MetricSpec.parse("novelty@10"))
    assert params["unseen"] == "zero"


@pytest.mark.parametrize("k", CUTOFFS)
def test_recommenders_novelty_weights_users_by_list_length(k: int) -> None:
    """On `ragged` the library's mean over all recommendations weights each user by the
    length of their list, and items absent from the log count 0 in it. Documented
    relation: theirs = sum_u n_u novelty_u / sum_u n_u with receval's per-user
    novelty@k(unseen=zero) and n_u = min(k, |list|); per user the values are the same."""
    entry = recommenders("ragged", f"novelty@{k}")
    metric = f"novelty@{k}(unseen=zero)"
    values = per_user(receval("ragged"), metric)
    lengths = dict(top_k("ragged", k).group_by("user").len().iter_rows())
    weighted = sum(lengths[u] * v for u, v in values.items()) / sum(lengths.values())
    assert weighted == pytest.approx(entry["value"], abs=TOL)
    assert receval("ragged").metrics[metric] != pytest.approx(entry["value"], abs=1e-3)
    if k == PER_USER_AT:
        assert_per_user(entry["per_user"], values)


@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("k", CUTOFFS)
@pytest.mark.parametrize("feature", ["embedding", "category"])
def test_recommenders_diversity(dataset: str, k: int, feature: str) -> None:
    """diversity(item_sim_measure="item_feature_vector"): 1 - the mean cosine similarity
    of the distinct pairs in the list, averaged over users with >= 2 items (category: the
    one-hot vector of the genre)."""
    entry = recommenders(dataset, f"diversity@{k}[{feature}]")
    metric = f"intra_list_diversity@{k}(feature={feature})"
    report = receval(dataset)
    assert report.metrics[metric] == pytest.approx(entry["value"], abs=TOL)
    assert users_averaged(report, metric) == entry["support"]
    if k == PER_USER_AT:
        assert_per_user(entry["per_user"], per_user(report, metric))


# --- recmetrics 0.1.5 (equal-length lists only) ----------------------------------------


def recmetrics(key: str) -> dict[str, Any]:
    entry: dict[str, Any] = golden("recmetrics", "equal")["metrics"][key]
    return entry


@pytest.mark.parametrize("k", CUTOFFS)
def test_recmetrics_personalization(k: int) -> None:
    expected = recmetrics(f"personalization@{k}")["value"]
    assert receval("equal").metrics[f"inter_list_diversity@{k}"] == pytest.approx(expected, abs=TOL)


def test_recmetrics_personalization_alias() -> None:
    report = evaluate("equal", ["personalization@10"], with_catalog=False)
    expected = recmetrics("personalization@10")["value"]
    assert report.metrics["inter_list_diversity@10"] == pytest.approx(expected, abs=TOL)


@pytest.mark.parametrize("k", CUTOFFS)
@pytest.mark.parametrize("feature", ["embedding", "category"])
def test_recmetrics_intra_list_similarity(k: int, feature: str) -> None:
    """intra_list_similarity is the mean cosine similarity of the pairs (category: one-hot
    genre columns), so 1 - it is receval's intra-list diversity, per user and in the mean."""
    entry = recmetrics(f"intra_list_similarity@{k}[{feature}]")
    metric = f"intra_list_diversity@{k}(feature={feature})"
    assert receval("equal").metrics[metric] == pytest.approx(1 - entry["value"], abs=TOL)
    if k == PER_USER_AT:
        expected = {u: 1 - v for u, v in entry["per_user"].items()}
        assert_per_user(expected, per_user(receval("equal"), metric))


@pytest.mark.parametrize("k", CUTOFFS)
def test_recmetrics_novelty(k: int) -> None:
    """novelty(predicted, pop = the item's distinct users, u = the log's users, n = k)."""
    entry = recmetrics(f"novelty@{k}")
    metric = f"novelty@{k}(share=users)"
    assert receval("equal").metrics[metric] == pytest.approx(entry["value"], abs=TOL)
    if k == PER_USER_AT:
        assert_per_user(entry["per_user"], per_user(receval("equal"), metric))


@pytest.mark.parametrize("k", CUTOFFS)
def test_recmetrics_prediction_coverage_of_the_top_k(k: int) -> None:
    """prediction_coverage(top-k lists, catalog) is a percentage rounded to 2 decimals:
    documented relation round(100 * catalog_coverage@k, 2), exactly."""
    expected = recmetrics(f"prediction_coverage@{k}")["value"]
    assert round(100 * receval("equal").metrics[f"catalog_coverage@{k}"], 2) == expected


def test_recmetrics_prediction_coverage_of_whole_lists() -> None:
    expected = recmetrics("prediction_coverage[whole lists]")["value"]
    assert round(100 * receval("equal").metrics["prediction_coverage"], 2) == expected
