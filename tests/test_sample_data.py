"""The bundled sample data is what sample_data/generate.py makes, and it runs."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import polars as pl
from cli_helpers import load_script
from polars.testing import assert_frame_equal

ROOT = Path(__file__).parent.parent


def generator() -> ModuleType:
    return load_script(ROOT / "sample_data" / "generate.py", "generate")


def test_shipped_files_are_the_generator_output() -> None:
    predictions, truth = generator().build()
    assert_frame_equal(pl.read_csv(ROOT / "sample_data" / "predictions.csv"), predictions)
    assert_frame_equal(pl.read_parquet(ROOT / "sample_data" / "ground_truth.parquet"), truth)
    lines = (ROOT / "sample_data" / "predictions_lists.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    expected = (
        predictions.filter(pl.col("user_id") == first["user_id"])
        .sort(["score", "item_id"], descending=True)
        .get_column("item_id")
        .to_list()
    )
    assert first["items"] == expected
    assert len(lines) == predictions.get_column("user_id").n_unique()
    ratings = pl.read_csv(ROOT / "sample_data" / "rating_predictions.csv")
    assert_frame_equal(ratings, generator().build_ratings(truth))
    log, recommendations = generator().build_clicks()
    assert_frame_equal(pl.read_csv(ROOT / "sample_data" / "logged_clicks.csv"), log)
    assert_frame_equal(pl.read_csv(ROOT / "sample_data" / "click_predictions.csv"), recommendations)
    interactions = pl.read_csv(ROOT / "sample_data" / "interactions.csv")
    assert_frame_equal(interactions, generator().build_interactions())
    catalog = pl.read_ndjson(ROOT / "sample_data" / "catalog.jsonl")
    assert_frame_equal(catalog, generator().build_catalog())
    popular = pl.read_csv(ROOT / "sample_data" / "popular_predictions.csv")
    assert_frame_equal(popular, generator().build_popular_model(predictions, interactions))
    users = pl.read_csv(ROOT / "sample_data" / "users.csv")
    assert_frame_equal(users, generator().build_users())
    qrels, run = generator().build_diversity()
    assert (ROOT / "sample_data" / "diversity_qrels.txt").read_text(encoding="utf-8") == qrels
    assert (ROOT / "sample_data" / "diversity_run.txt").read_text(encoding="utf-8") == run


def test_bundled_configs_run() -> None:
    from typer.testing import CliRunner

    from receval_cli.cli.app import app

    for config in ("quickstart", "ratings", "ctr", "beyond", "compare", "segments", "diversity"):
        result = CliRunner().invoke(app, ["run", str(ROOT / "configs" / f"{config}.yaml")])
        assert result.exit_code == 0, (config, result.stderr)
