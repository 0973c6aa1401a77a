"""Bad inputs of the beyond-accuracy metrics: each a clear message, exit 2, no traceback,
no report file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_user_error, assert_validate_refuses, invoke, write, write_config

PREDICTIONS = "user,item,score\n1,a,0.9\n1,b,0.8\n2,a,0.7\n2,c,0.6\n"
TRUTH = "user,item\n1,a\n2,c\n"


def setup(folder: Path, metrics: list[str], **extra: Any) -> Path:
    write(folder / "p.csv", PREDICTIONS)
    write(folder / "t.csv", TRUTH)
    config = {
        "predictions": {"path": "p.csv"},
        "ground_truth": {"path": "t.csv"},
        "metrics": metrics,
        "output": {"format": "json", "path": "report.json"},
        **extra,
    }
    return write_config(folder, config)


def fails(config: Path, *words: str, values: bool = False) -> None:
    """run refuses CONFIG (no report written), and validate refuses it the same way;
    `values`: a refusal of what the metrics computed on these inputs, which validate
    does not compute (it accepts the config)."""
    message = assert_user_error(invoke("run", config), *words)
    assert not (config.parent / "report.json").exists()
    if values:
        assert invoke("validate", config).exit_code == 0
    else:
        assert_validate_refuses(config, message)


def catalog(folder: Path, text: str, **columns: str) -> dict[str, Any]:
    write(folder / "catalog.csv", text)
    return {"path": "catalog.csv", "columns": columns}


def test_novelty_without_interactions(tmp_path: Path) -> None:
    fails(setup(tmp_path, ["novelty@2"]), "novelty@2 needs the interactions input")


def test_unexpectedness_without_a_baseline_or_interactions(tmp_path: Path) -> None:
    fails(
        setup(tmp_path, ["unexpectedness@2"]),
        "unexpectedness@2 needs the baseline or interactions input",
    )


def test_coverage_without_a_catalog(tmp_path: Path) -> None:
    fails(
        setup(tmp_path, ["catalog_coverage@2", "gini@2"]),
        "catalog_coverage@2, gini@2",
        "add a catalog (catalog.path",
        "interactions.path",
    )


def test_diversity_with_a_catalog_without_features(tmp_path: Path) -> None:
    config = setup(
        tmp_path, ["intra_list_diversity@2"], catalog=catalog(tmp_path, "item\na\nb\nc\n")
    )
    fails(config, "the catalog's features are: none", "catalog.columns")


def test_diversity_with_several_features_names_one(tmp_path: Path) -> None:
    text = "item,g,v\na,x,1|0\nb,y,0|1\nc,x,1|1\n"
    config = setup(
        tmp_path,
        ["intra_list_diversity@2"],
        catalog=catalog(tmp_path, text, category="g", embedding="v"),
    )
    fails(config, "category, embedding", "intra_list_diversity@k(feature=...)")


def test_diversity_on_a_feature_the_catalog_lacks(tmp_path: Path) -> None:
    config = setup(
        tmp_path,
        ["intra_list_diversity@2(feature=tags)"],
        catalog=catalog(tmp_path, "item,g\na,x\nb,y\nc,x\n", category="g"),
    )
    fails(config, "needs the catalog.columns.tags input")


def test_diversity_of_items_missing_from_the_catalog(tmp_path: Path) -> None:
    config = setup(
        tmp_path,
        ["intra_list_diversity@2"],
        catalog=catalog(tmp_path, "item,g\na,x\nb,y\n", category="g"),
    )
    fails(config, "catalog.csv", "1 recommended item(s) are not in the catalog (e.g. 'c')")


def test_diversity_at_1_is_undefined(tmp_path: Path) -> None:
    config = setup(
        tmp_path,
        ["intra_list_diversity@1"],
        catalog=catalog(tmp_path, "item,g\na,x\nb,y\nc,x\n", category="g"),
    )
    fails(
        config,
        "metrics[0]: 'intra_list_diversity@1': intra_list_diversity is undefined at a cutoff "
        "of 1 (it averages over the pairs of items in each top-k list, and 1 item has no pair)",
        "Use a cutoff of at least 2",
    )


def test_diversity_of_lists_of_one_item(tmp_path: Path) -> None:
    """At a cutoff of 2, lists of one item each: undefined for every user, a fact of the
    inputs' values (run's refusal; validate does not compute the metric)."""
    config = setup(
        tmp_path,
        ["intra_list_diversity@2"],
        catalog=catalog(tmp_path, "item,g\na,x\nb,y\nc,x\n", category="g"),
    )
    write(tmp_path / "p.csv", "user,item,score\n1,a,0.9\n2,b,0.5\n")
    fails(
        config,
        "intra_list_diversity@2 is undefined for every evaluated user: no list has 2 items",
        "Check that the model's lists hold 2 items or more.",
        values=True,
    )


@pytest.mark.parametrize(
    ("text", "columns", "words"),
    [
        ("item\na\nb\na\n", {}, ["1 row(s) repeat an item already listed (e.g. 'a')"]),
        ("item,g\na,x\nb,\n", {"category": "g"}, ["column 'g' has 1 null value(s)"]),
        ("item,v\na,1|0\nb,1|0|2\n", {"embedding": "v"}, ["different lengths (from 2 to 3)"]),
        ("item,v\na,1|0\nb,1|x\n", {"embedding": "v"}, ["1 embedding(s) that are missing"]),
        ("item,v\na,1|0\nb,nan|1\n", {"embedding": "v"}, ["NaN, infinite"]),
        ("name\na\n", {}, ["no column 'item' (set by catalog.columns.item)"]),
        ("item\n", {}, ["catalog.csv has no rows"]),
    ],
)
def test_bad_catalogs(tmp_path: Path, text: str, columns: dict[str, str], words: list[str]) -> None:
    config = setup(tmp_path, ["catalog_coverage@2"], catalog=catalog(tmp_path, text, **columns))
    fails(config, "catalog file", *words)


def test_catalog_file_missing(tmp_path: Path) -> None:
    config = setup(tmp_path, ["catalog_coverage@2"], catalog={"path": "nowhere.csv"})
    fails(config, "catalog file", "nowhere.csv does not exist", "Fix catalog.path")


def test_interactions_with_a_null_user(tmp_path: Path) -> None:
    write(tmp_path / "log.csv", "user,item\n1,a\n,b\n")
    config = setup(tmp_path, ["novelty@2"], interactions={"path": "log.csv"})
    fails(config, "interactions file", "column 'user' has 1 null value(s)")


@pytest.mark.parametrize("statistics", [True, False])
@pytest.mark.parametrize("column", ["user", "item"])
def test_a_parquet_log_with_a_null_id(tmp_path: Path, statistics: bool, column: str) -> None:
    """A Parquet log's checks come from its footer's null counts where it records them
    (inputs/parquet_stats.py), else from its rows: the same refusal either way."""
    import polars as pl

    log = pl.DataFrame({"user": [1, 2, 2], "item": ["a", "b", "c"]})
    log = log.with_columns(pl.when(pl.int_range(3) == 1).then(pl.col(column)).alias(column))
    log.write_parquet(tmp_path / "log.parquet", statistics=statistics, row_group_size=2)
    config = setup(tmp_path, ["novelty@2"], interactions={"path": "log.parquet"})
    fails(config, "interactions file", f"column '{column}' has 2 null value(s)")


def test_baseline_without_a_layout_column(tmp_path: Path) -> None:
    write(tmp_path / "b.csv", "user,item,weight\n1,a,1\n")
    write(tmp_path / "log.csv", "user,item\n1,a\n")
    config = setup(
        tmp_path,
        ["unexpectedness@2"],
        interactions={"path": "log.csv"},
        baseline={"path": "b.csv"},
    )
    fails(config, "baseline file", "Set baseline.columns.score (or .rank, or .items)")


def test_inter_list_diversity_of_one_user(tmp_path: Path) -> None:
    config = setup(tmp_path, ["inter_list_diversity@2"])
    write(tmp_path / "p.csv", "user,item,score\n1,a,0.9\n")
    fails(
        config,
        "inter_list_diversity@2 compares pairs",
        "1 user(s) have a non-empty list",
        values=True,
    )


def test_gini_with_no_recommended_item_in_the_catalog(tmp_path: Path) -> None:
    config = setup(tmp_path, ["gini@2"], catalog=catalog(tmp_path, "item\nx\ny\n"))
    fails(config, "gini@2: no recommended item is in the catalog", values=True)


def test_head_must_be_a_share(tmp_path: Path) -> None:
    write(tmp_path / "log.csv", "user,item\n1,a\n")
    config = setup(tmp_path, ["long_tail_share@2(head=20)"], interactions={"path": "log.csv"})
    fails(config, "parameter 'head' of 'long_tail_share@2(head=20)' is '20'", "in (0, 1]")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("user,item,score\n1,a,0.5\n1,a,0.4\n", ["1 (user, item) pair(s) appear more than once"]),
        ("user,item,score\n1,b,0.5\n1,a,NaN\n", ["column 'score' has 1 NaN value(s)"]),
        ("user,item,score\n1,b,0.5\n1,a,\n", ["column 'score' has 1 null value(s)"]),
    ],
)
def test_bad_baselines(tmp_path: Path, text: str, words: list[str]) -> None:
    write(tmp_path / "b.csv", text)
    config = setup(tmp_path, ["unexpectedness@2"], baseline={"path": "b.csv"})
    fails(config, "baseline file", *words)


def test_baseline_duplicates_follow_the_convention(tmp_path: Path) -> None:
    write(tmp_path / "b.csv", "user,item,score\n1,a,0.5\n1,a,0.4\n")
    config = setup(
        tmp_path,
        ["unexpectedness@2"],
        baseline={"path": "b.csv"},
        conventions={"duplicates": "first"},
    )
    result = invoke("run", config)
    assert result.exit_code == 0, result.stderr
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    # u1's top 2 a b: a expected; u2's a c: no baseline list
    assert report["models"]["model"]["metrics"]["unexpectedness@2"] == (1 / 2 + 1) / 2
