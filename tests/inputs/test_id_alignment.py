"""Ids given one type (inputs/id_alignment.py): integers where every input holds integers,
else text, so that 7 in one file is "7" in another. Across the models of one run the
user ids get one type too: their per-user values are joined user by user (intervals,
paired tests, list comparisons, the --per-user table), and a model whose file holds the
ids as text must meet the one that holds them as integers on the same users."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import invoke, write, write_config
from engine_parity import POLARS_ENGINES

# the same users (ids 9, 10, 100: text and number orders differ), as integers in one
# model's file and as text in the other's; the ground truth's are integers
USERS = [9, 9, 9, 10, 10, 100, 100, 100]
ITEMS = ["a", "b", "c", "a", "d", "b", "c", "e"]
SCORES = [0.9, 0.8, 0.7, 0.9, 0.6, 0.5, 0.5, 0.4]
TRUTH = "user,item\n9,b\n10,a\n10,d\n100,e\n100,c\n"


def _case(folder: Path, **extra: Any) -> Path:
    frame = pl.DataFrame({"user": USERS, "item": ITEMS, "score": SCORES})
    frame.write_parquet(folder / "numbers.parquet")
    reordered = frame.with_columns(pl.col("score").reverse())  # another model's lists
    reordered.with_columns(pl.col("user").cast(pl.String)).write_parquet(folder / "text.parquet")
    write(folder / "truth.csv", TRUTH)
    config = {
        "predictions": {
            "models": {"numbers": {"path": "numbers.parquet"}, "text": {"path": "text.parquet"}}
        },
        "ground_truth": {"path": "truth.csv"},
        "metrics": ["ndcg@2", "mrr@3"],
        **extra,
    }
    return write_config(folder, config)


def _alone(folder: Path, file: str) -> dict[str, Any]:
    config = {
        "predictions": {"path": file},
        "ground_truth": {"path": "truth.csv"},
        "metrics": ["ndcg@2", "mrr@3"],
    }
    path = write_config(folder, config, f"{file}.yaml")
    out = folder / f"{file}.json"
    result = invoke("run", path, "-q", "-o", out)
    assert result.exit_code == 0, result.stderr
    found: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))["models"]["model"]
    return found


# the Spark case asks for the fixture inside the test: marked here, so -m "not spark" skips it
@pytest.mark.parametrize(
    "engine",
    ["in_memory", "streaming", "partitions 3", pytest.param("spark", marks=pytest.mark.spark)],
)
def test_models_with_user_ids_of_two_types_compare_user_by_user(
    tmp_path: Path, engine: str, request: pytest.FixtureRequest
) -> None:
    """A comparison (paired tests, intervals), the list comparison and the per-user table
    over two models whose files hold the same user ids as integers and as text: each
    model's numbers are those of its run alone, and the per-user rows pair the users."""
    if engine == "spark":
        request.getfixturevalue("spark")  # skips without pyspark or Java
    setting = {"engine": "spark", "partitions": 3} if engine == "spark" else POLARS_ENGINES[engine]
    config = _case(
        tmp_path,
        comparison={"baseline": "numbers", "lists": ["jaccard@2"]},
        confidence={"method": "bootstrap", "resamples": 200, "seed": 1},
        **setting,
    )
    out, per_user = tmp_path / "report.json", tmp_path / "per_user.parquet"
    result = invoke("run", config, "-q", "-o", out, "--per-user", per_user)
    assert result.exit_code == 0, result.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    for name, file in (("numbers", "numbers.parquet"), ("text", "text.parquet")):
        alone = _alone(tmp_path, file)
        assert report["models"][name]["metrics"] == alone["metrics"]
        assert report["models"][name]["users"] == alone["users"]
    comparisons = report["comparisons"]
    assert {c["model"] for c in comparisons["results"]} == {"text"}
    assert [c["users"] for c in comparisons["results"]] == [3, 3]
    assert [(c["model"], c["users"]) for c in comparisons["lists"]] == [("text", 3)]
    rows = pl.read_parquet(per_user)
    assert rows.get_column("user").cast(pl.String).unique().sort().to_list() == ["10", "100", "9"]
    assert rows.height == 6  # three users for each of the two models


def test_one_model_keeps_its_integer_ids(tmp_path: Path) -> None:
    """Alone, a model whose files hold integers keeps them: its per-user table's users are
    integers, sorted as numbers (9, 10, 100)."""
    _case(tmp_path)
    config = {
        "predictions": {"path": "numbers.parquet"},
        "ground_truth": {"path": "truth.csv"},
        "metrics": ["ndcg@2"],
    }
    path = write_config(tmp_path, config, "alone.yaml")
    per_user = tmp_path / "alone.parquet"
    result = invoke("run", path, "-q", "-f", "json", "--per-user", per_user)
    assert result.exit_code == 0, result.stderr
    users = pl.read_parquet(per_user).get_column("user")
    assert users.dtype == pl.Int64
    assert users.to_list() == [9, 10, 100]
