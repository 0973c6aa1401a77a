"""comparison.lists on every engine: `partitions: N` compares the lists bucket by bucket and
Spark on its executors (evaluation/list_pairs.py, engines/spark_lists.py), and both give
the in-memory run's values bit for bit.

The data: three models whose lists hold tied scores, integer item ids whose text and number
orders differ (9, 10, 100, 1000), users in one model only, lists shorter than the cutoffs;
the third model's items are text (one of them is not a number), so its lists are compared
with the baseline's as text.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import evaluate_written

from receval_cli.analysis import list_comparison
from receval_cli.metrics.list_similarity import list_measure, per_user

MEASURES = [
    "jaccard@5",
    "jaccard",
    "rbo@10(p=0.9)",
    "rbo(p=0.8)",
    "kendall_tau",
    "kendall_tau@3",
]
ITEMS = [9, 10, 100, 1000, 2, 20, 200, 1, 11, 101]


def write_models(folder: Path) -> dict[str, str]:
    """base, other (integer ids) and text (text items), over users 0..149: each model leaves
    some users out, lists of 1 to 8 items, scores of one decimal (many ties)."""
    rng = random.Random(11)
    files = {}
    for name in ("base", "other", "text"):
        rows = []
        for user in range(150):
            if rng.random() < 0.15:
                continue  # this user is in the other models only
            for item in rng.sample(ITEMS, rng.randint(1, 8)):
                rows.append((user, item, rng.choice([0.1, 0.2, 0.5, 0.5, 0.9])))
        frame = pl.DataFrame(rows, schema=["user", "item", "score"], orient="row")
        if name == "text":
            frame = frame.with_columns(pl.col("item").cast(pl.String))
            more = pl.DataFrame({"user": [3], "item": ["x"], "score": [0.3]})
            frame = pl.concat([frame, more])
        frame.write_csv(folder / f"{name}.csv")
        files[name] = f"{name}.csv"
    truth = pl.DataFrame({"user": list(range(0, 70, 2)), "item": [9] * 35})
    truth.write_csv(folder / "truth.csv")
    return files


def lists(folder: Path, conventions: dict[str, Any], **engine: Any) -> list[dict[str, Any]]:
    config = {
        "predictions": {"models": write_models(folder)},
        "ground_truth": {"path": "truth.csv"},
        "metrics": ["ndcg@5"],
        "conventions": conventions,
        "comparison": {"lists": MEASURES},
        "confidence": {"resamples": 20, "seed": 1},  # the comparison's intervals: few
        **engine,
    }
    found = evaluate_written(folder, config)
    return [c.to_dict() for c in found.list_comparisons]


CONVENTIONS = [{}, {"tie_break": "item_asc", "max_depth": 6}, {"tie_break": "item_text_asc"}]


def check_values(found: list[dict[str, Any]]) -> None:
    """Every model and measure, with values: the comparison is not vacuous."""
    asked = [(model, measure) for model in ("other", "text") for measure in MEASURES]
    assert [(c["model"], c["measure"]) for c in found] == asked
    assert all(c["users"] > 2 and c["value"] is not None for c in found)


def test_a_user_s_value_does_not_depend_on_the_other_users(tmp_path: Path) -> None:
    """Each user's value computed among all users and alone (a bucket of one user, as
    Spark may have) is the same bits: rbo's p^l was another polars path in a frame of
    one row (0.9^6 = 0.5314410000000002 there, 0.531441 in a larger one)."""
    write_models(tmp_path)

    def ranked_lists(name: str) -> pl.DataFrame:
        rows = pl.read_csv(tmp_path / f"{name}.csv")
        rows = rows.sort(["user", "score", "item"], descending=[False, True, True])
        return rows.group_by("user", maintain_order=True).agg(pl.col("item").alias(name))

    pairs = ranked_lists("other").join(ranked_lists("base"), on="user")
    pairs = pairs.rename({"other": "a", "base": "b"})
    for text in ("rbo@10(p=0.9)", "rbo(p=0.8)", "kendall_tau", "jaccard@5"):
        measure = list_measure(text)
        together = per_user(pairs.lazy(), measure).collect().sort("user")
        alone = pl.concat(
            per_user(pairs.filter(pl.col("user") == user).lazy(), measure).collect()
            for user in pairs.get_column("user")
        ).sort("user")
        assert together.equals(alone), text


def test_partitions_compare_the_lists_bucket_by_bucket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """partitions: N holds one bucket's lists at a time, not every user's."""
    seen: list[int] = []
    whole = list_comparison.list_sums

    def counting(model: Any, baseline: Any, *rest: Any) -> Any:
        seen.append(model.frame.select("user").unique().collect().height)
        return whole(model, baseline, *rest)

    monkeypatch.setattr(list_comparison, "list_sums", counting)
    lists(tmp_path, {}, partitions=4)
    assert len(seen) == 2 * 4  # two models against the baseline, four buckets each
    users = pl.read_csv(tmp_path / "other.csv").get_column("user").n_unique()
    assert max(seen) < users / 2
    assert sum(seen[:4]) == users


@pytest.mark.parametrize("conventions", CONVENTIONS)
def test_partitions_give_the_in_memory_values(tmp_path: Path, conventions: dict[str, Any]) -> None:
    expected = lists(tmp_path, conventions, engine="in_memory")
    check_values(expected)
    for partitions in (2, 5):
        assert lists(tmp_path, conventions, partitions=partitions) == expected, partitions


def ranked(path: Path) -> dict[str, list[str]]:
    """Each user's list as receval ranks it under tie_break item_asc, in its own ids'
    type (score descending, then item ascending), then as text."""
    rows = pl.read_csv(path, infer_schema_length=None)
    rows = rows.sort(["user", "score", "item"], descending=[False, True, False])
    return {str(u): [str(i) for i in g.get_column("item")] for (u,), g in rows.group_by("user")}


def test_models_with_ids_of_two_types_are_compared_as_text(tmp_path: Path) -> None:
    """The text model's lists against the integer baseline's (an item that is not a
    number): each list ranked in its own model's ids (10 before 9 as text, after
    it as a number), then compared as text; they were an internal error (exit 3)."""
    found = lists(tmp_path, {"tie_break": "item_asc"}, engine="in_memory")
    base, text = ranked(tmp_path / "base.csv"), ranked(tmp_path / "text.csv")
    users = set(base) & set(text)
    for k, measure in ((5, "jaccard@5"), (None, "jaccard")):
        values = [
            len(set(text[u][:k]) & set(base[u][:k])) / len(set(text[u][:k]) | set(base[u][:k]))
            for u in users
        ]
        (got,) = [c for c in found if c["model"] == "text" and c["measure"] == measure]
        assert got["users"] == len(values)
        assert got["value"] == pytest.approx(sum(values) / len(values), abs=1e-12)


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("conventions", CONVENTIONS)
def test_spark_gives_the_in_memory_values(
    spark: Any, tmp_path: Path, conventions: dict[str, Any]
) -> None:
    expected = lists(tmp_path, conventions, engine="in_memory")
    check_values(expected)
    for buckets in (2, 5):
        found = lists(tmp_path, conventions, engine="spark", partitions=buckets)
        assert found == expected, buckets
