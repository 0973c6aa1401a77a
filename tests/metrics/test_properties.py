"""Properties that hold for any data: bounds, perfect rankings, invariance to row order,
to the file format, and to the prediction layout (score, rank or item list).
"""

from __future__ import annotations

import json
import math
import random
import tempfile
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import reference
import yaml
from hypothesis import Phase, assume, given, settings
from hypothesis import strategies as st
from reference_data import datasets, divided_by_hits, run_receval
from typer.testing import CliRunner

import receval_cli
from receval_cli.cli.app import app
from receval_cli.metrics import lookup

TOL = 1e-12
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)


def metric_name(spec: str) -> str:
    return reference.parse_spec(spec)[0]


def refused(data: dict[str, Any]) -> bool:
    """tie_break expected refuses AP divided by hits@k (test_reference_agreement checks it)."""
    return data["conventions"]["tie_break"] == "expected" and divided_by_hits(data)


def evaluated_rows(report: Any) -> list[dict[str, Any]]:
    return report.per_user.filter(pl.col("status") == "evaluated").to_dicts()


def by_user(report: Any) -> dict[Any, dict[str, Any]]:
    return {row["user"]: row for row in report.per_user.iter_rows(named=True)}


def assert_same_results(a: Any, b: Any, tol: float = TOL) -> None:
    """Same users, statuses, per-user values and means (to tol)."""
    rows_a, rows_b = by_user(a), by_user(b)
    assert set(rows_a) == set(rows_b)
    assert set(a.metrics) == set(b.metrics)
    for user, row in rows_a.items():
        assert row["status"] == rows_b[user]["status"], user
        for name in a.metrics:
            if row[name] is None or rows_b[user][name] is None:  # not in the metric's mean
                assert row[name] is rows_b[user][name] is None, (user, name)
                continue
            assert math.isclose(row[name], rows_b[user][name], rel_tol=0, abs_tol=tol), (
                user,
                name,
                row[name],
                rows_b[user][name],
            )
    for name, value in a.metrics.items():
        assert math.isclose(value, b.metrics[name], rel_tol=0, abs_tol=tol), name
    assert a.users == b.users


# ---------------------------------------------------------------------------------------
# bounds


def test_reference_bounds_match_the_registry() -> None:
    for name in reference.PARAMS:
        expected = 1.0 if name in reference.UPPER_BOUND_ONE else None
        assert lookup(name).upper_bound == expected, name


@pytest.mark.slow
@settings(max_examples=60)
@given(datasets())
def test_values_lie_within_their_bounds(data: dict[str, Any]) -> None:
    assume(not refused(data))
    cuts = ["@1", "@3", "@10", ""]
    extra = [f"{m}{c}" for c in cuts for m in ("dcg", "idcg", "ndcg")]
    extra += [f"{m}{c}(ideal=all_relevant)" for c in cuts for m in ("idcg", "ndcg")]
    extra += [f"{m}{c}(ideal=at_k)" for c in cuts for m in ("idcg", "ndcg")]
    report = run_receval({**data, "metrics": [*data["metrics"], *extra]})
    rows = evaluated_rows(report)
    assert rows
    for name in report.metrics:
        metric = metric_name(name)
        # a user out of a metric's mean (a metric's own users_without_* rule) has no value
        values = [row[name] for row in rows if row[name] is not None]
        for value in [*values, report.metrics[name]]:
            assert not math.isnan(value), name
            assert value >= 0.0, (name, value)
            if metric in reference.UPPER_BOUND_ONE:
                assert value <= 1.0 + TOL, (name, value)
    # DCG never exceeds the ideal DCG at the same cutoff, nor that the longer ideal list;
    # NDCG is their ratio.
    for row in rows:
        for c in cuts:
            dcg, at_k, whole = (
                row[f"dcg{c}"],
                row[f"idcg{c}(ideal=at_k)"],
                row[f"idcg{c}(ideal=all_relevant)"],
            )
            assert dcg <= at_k + TOL <= whole + 2 * TOL, (c, row)
            for ideal, idcg in (("at_k", at_k), ("all_relevant", whole)):
                expected = dcg / idcg if idcg > 0 else 0.0
                got = row[f"ndcg{c}(ideal={ideal})"]
                assert math.isclose(got, expected, rel_tol=1e-12, abs_tol=TOL), (c, ideal)


# ---------------------------------------------------------------------------------------
# a perfect ranking


@st.composite
def perfect_data(draw: st.DrawFn) -> dict[str, Any]:
    """Users whose scores are their grades; every truth item predicted; a few extra items."""
    truth, predictions = [], []
    for user in range(draw(st.integers(1, 4))):
        grades = draw(
            st.lists(st.sampled_from([-1.0, 0.0, 1.0, 1.0, 2.0, 3.0, 4.5]), min_size=1, max_size=8)
        )
        grades.append(draw(st.sampled_from([2.0, 3.0])))  # relevant at every threshold
        for item, grade in enumerate(grades):
            truth.append((user, item, grade))
            predictions.append((user, item, grade))
        for extra in range(draw(st.integers(0, 3))):
            predictions.append((user, 100 + extra, -5.0))  # below every grade
    draw(st.randoms()).shuffle(predictions)
    return {"truth": truth, "predictions": predictions}


@settings(max_examples=40)
@given(
    perfect_data(),
    st.sampled_from(["item_desc", "item_asc", "input_order"]),
    st.sampled_from([-1.0, 0.0, 1.0, 2.0]),
)
@pytest.mark.slow
def test_a_perfect_ranking_scores_one(
    data: dict[str, Any], tie_break: str, threshold: float
) -> None:
    longest = max(sum(1 for u, _i, _g in data["truth"] if u == user) for user in range(5))
    ks = list(range(1, longest + 3))
    specs = []
    for gain in ("linear", "exponential"):
        for discount in ("log2", "jarvelin"):
            for ideal in ("at_k", "all_relevant"):
                params = f"(discount={discount},gain={gain},ideal={ideal})"
                specs += [f"ndcg@{k}{params}" for k in ks] + [f"ndcg{params}"]
    specs += ["map(denominator=relevant)", "mrr", "r_precision", "recall"]
    specs += [f"map@{k}(denominator=min_k_relevant)" for k in ks]
    truth = pl.DataFrame(data["truth"], schema=["user", "item", "rel"], orient="row")
    predictions = pl.DataFrame(data["predictions"], schema=["user", "item", "score"], orient="row")
    conventions = {"tie_break": tie_break, "relevance_threshold": threshold}
    columns = {"user": "user", "item": "item", "relevance": "rel"}
    report = receval_cli.evaluate(
        predictions, truth, specs, conventions=conventions, truth_columns=columns
    )
    rows = evaluated_rows(report)
    assert rows
    positive = {}
    for user, _item, grade in data["truth"]:
        positive[user] = positive.get(user, 0) + (grade > 0)
    for row in rows:
        for spec in specs:
            value = row[spec]
            if "ideal=all_relevant" in spec and "@" in spec:
                k = int(spec.split("@")[1].split("(")[0])
                if k < positive[row["user"]]:  # the ideal list is longer than the cutoff
                    assert value < 1.0, (spec, row["user"], value)
                    continue
            assert math.isclose(value, 1.0, rel_tol=0, abs_tol=TOL), (spec, row["user"], value)


# ---------------------------------------------------------------------------------------
# row order


@pytest.mark.slow
@settings(max_examples=40)
@given(datasets(), st.randoms(use_true_random=False))
def test_row_order_does_not_matter(data: dict[str, Any], rng: random.Random) -> None:
    """With an item-based tie break and order-free duplicate rules, shuffling is harmless."""
    conventions = data["conventions"]
    assume(conventions["tie_break"] != "input_order")
    assume(not refused(data))
    assume(conventions["duplicates"] != "first" and conventions["truth_duplicates"] != "first")
    original = run_receval(data)
    shuffled = dict(data)
    shuffled["predictions"] = rng.sample(data["predictions"], len(data["predictions"]))
    shuffled["truth"] = rng.sample(data["truth"], len(data["truth"]))
    assert_same_results(original, run_receval(shuffled), tol=0.0)  # bit for bit


SAMPLE = Path(__file__).parents[2] / "sample_data"
SAMPLE_METRICS = ["ndcg@10", "ndcg", "idcg@20", "dcg@20", "map@10", "mrr", "r_precision", "f1@5"]


def evaluate_sample(predictions: pl.DataFrame, truth: pl.DataFrame) -> Any:
    return receval_cli.evaluate(
        predictions,
        truth,
        SAMPLE_METRICS,
        conventions={"relevance_threshold": 4},
        prediction_columns={"user": "user_id", "item": "item_id", "score": "score"},
        truth_columns={"user": "user_id", "item": "item_id", "relevance": "rating"},
    )


def test_results_are_bit_identical_across_runs_and_row_orders(tmp_path: Path) -> None:
    """The same data gives the same numbers to the last bit: run again, rows shuffled, or
    read from another file format through the CLI.

    A report must not change between two runs of a CI job (diffs, gates at the boundary);
    a per-user sum or a mean taken in whatever order the engine's threads deliver the rows
    changes the last bits.
    """
    predictions = pl.read_csv(SAMPLE / "predictions.csv")
    truth = pl.read_parquet(SAMPLE / "ground_truth.parquet")
    first = evaluate_sample(predictions, truth)
    for seed in range(3):
        again = evaluate_sample(predictions, truth)
        assert again.metrics == first.metrics
        assert_same_results(first, again, tol=0.0)
        shuffled = evaluate_sample(
            predictions.sample(fraction=1.0, shuffle=True, seed=seed),
            truth.sample(fraction=1.0, shuffle=True, seed=seed),
        )
        assert_same_results(first, shuffled, tol=0.0)
    via_cli = []
    for fmt in ("csv", "parquet", "jsonl"):
        write(predictions, tmp_path / f"predictions.{fmt}")
        write(truth, tmp_path / f"truth.{fmt}")
        config = {
            "predictions": {
                "path": f"predictions.{fmt}",
                "columns": {"user": "user_id", "item": "item_id", "score": "score"},
            },
            "ground_truth": {
                "path": f"truth.{fmt}",
                "columns": {"user": "user_id", "item": "item_id", "relevance": "rating"},
            },
            "metrics": SAMPLE_METRICS,
            "conventions": {"relevance_threshold": 4},
        }
        path = tmp_path / f"{fmt}.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        result = CliRunner().invoke(app, ["run", str(path), "--format", "json"])
        assert result.exit_code == 0, result.stderr
        via_cli.append(json.loads(result.stdout)["models"]["model"]["metrics"])
    assert via_cli == [first.metrics] * 3


def test_row_order_matters_for_input_order() -> None:
    """The control: input_order ties do follow the row order."""
    truth = pl.DataFrame({"user": [1], "item": [2]})
    forward = pl.DataFrame({"user": [1, 1], "item": [1, 2], "score": [0.5, 0.5]})
    backward = forward.reverse()
    conventions = {"tie_break": "input_order"}
    first = receval_cli.evaluate(forward, truth, ["mrr"], conventions=conventions).metrics
    second = receval_cli.evaluate(backward, truth, ["mrr"], conventions=conventions).metrics
    assert (first["mrr"], second["mrr"]) == (0.5, 1.0)


# ---------------------------------------------------------------------------------------
# file formats and layouts, through the CLI

FORMAT_METRICS = [
    "precision@3",
    "recall@3",
    "f1@2",
    "fbeta@3(beta=2.0)",
    "hit_rate@1",
    "mrr",
    "map@5",
    "map",
    "r_precision",
    "cg@3",
    "dcg@3",
    "idcg@3",
    "ndcg@5",
    "ndcg",
]
# Ids that no reader mistakes for numbers (CSV infers "10" as an integer) or for null ("").
FILE_STR_ITEMS = ["a", "b", "B", "Z", "i1", "i10", "i2", "é", "a b"]


@st.composite
def file_data(draw: st.DrawFn) -> dict[str, Any]:
    strings = draw(st.booleans())
    pool = FILE_STR_ITEMS if strings else list(range(-3, 12))
    items = draw(st.lists(st.sampled_from(pool), min_size=2, max_size=7, unique=True))
    users = (["u1", "u2", "U3", "ü"] if strings else [1, 2, 30, -4])[: draw(st.integers(1, 4))]
    predictions = draw(
        st.lists(
            st.tuples(
                st.sampled_from(users),
                st.sampled_from(items),
                st.sampled_from([1.0, 0.5, 0.25, 0.0, -1.5]),
            ),
            unique_by=lambda r: (r[0], r[1]),
            max_size=16,
        )
    )
    truth = draw(
        st.lists(
            st.tuples(
                st.sampled_from(users),
                st.sampled_from(items),
                st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0, 3.0]),
            ),
            unique_by=lambda r: (r[0], r[1]),
            max_size=14,
        )
    )
    anchor_item = draw(st.sampled_from(items))
    truth = [r for r in truth if (r[0], r[1]) != (users[0], anchor_item)]
    truth.append((users[0], anchor_item, 3.0))
    # The anchor user gets two recommendations, so a CSV list column always holds a "|"
    # (one integer per row is test_csv_list_column_with_one_integer_item_per_row's case).
    listed = {r[1] for r in predictions if r[0] == users[0]}
    for item in items:
        if len(listed) < 2 and item not in listed:
            predictions.append((users[0], item, draw(st.sampled_from([1.0, 0.5]))))
            listed.add(item)
    conventions = {
        "tie_break": draw(st.sampled_from(["item_desc", "item_asc", "input_order"])),
        "users_without_recommendations": draw(st.sampled_from(["zero", "skip"])),
        "users_without_relevant": draw(st.sampled_from(["zero", "skip"])),
        "relevance_threshold": draw(st.sampled_from([0.0, 1.0, 2.0])),
    }
    return {"predictions": predictions, "truth": truth, "conventions": conventions}


def prediction_frames(data: dict[str, Any]) -> dict[str, pl.DataFrame]:
    """The same predictions as scores, as ranks (rank = position), and as item lists."""
    rows = data["predictions"]
    score = pl.DataFrame(rows, schema=["user", "item", "score"], orient="row")
    entries: dict[Any, list[tuple[Any, float, int]]] = {}
    for row, (user, item, value) in enumerate(rows):
        entries.setdefault(user, []).append((item, value, row))
    tie_break = data["conventions"]["tie_break"]
    ranked = {user: reference.rank_list(e, "score", tie_break) for user, e in entries.items()}
    rank_rows = [(u, item, pos) for u, lst in ranked.items() for pos, item in enumerate(lst, 1)]
    rank = pl.DataFrame(rank_rows, schema=["user", "item", "rank"], orient="row")
    lists = pl.DataFrame(
        {"user": list(ranked), "items": list(ranked.values())},
        schema={"user": score.schema["user"], "items": pl.List(score.schema["item"])},
    )
    return {"score": score, "rank": rank.sample(fraction=1.0, shuffle=True, seed=1), "items": lists}


def write(frame: pl.DataFrame, path: Path) -> None:
    if path.suffix == ".parquet":
        frame.write_parquet(path)
    elif path.suffix == ".jsonl":
        frame.write_ndjson(path)
    else:
        if "items" in frame.columns:
            frame = frame.with_columns(pl.col("items").cast(pl.List(pl.String)).list.join("|"))
        frame.write_csv(path)


def cli_metrics(folder: Path, predictions: str, layout: str, truth: str, data: dict) -> dict:
    config = {
        "predictions": {"path": predictions, "columns": {layout: layout}},
        "ground_truth": {"path": truth, "columns": {"relevance": "rel"}},
        "metrics": FORMAT_METRICS,
        "conventions": data["conventions"],
    }
    path = folder / f"config_{predictions}_{truth}.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(path), "--format", "json"])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return json.loads(result.stdout)["models"]["model"]["metrics"]


@pytest.mark.slow
@settings(max_examples=12, phases=NO_SHRINK)  # shrinking CLI runs takes minutes
@given(file_data())
def test_formats_and_layouts_give_the_same_metrics(data: dict[str, Any]) -> None:
    truth = pl.DataFrame(data["truth"], schema=["user", "item", "rel"], orient="row")
    predictions = prediction_frames(data)
    expected = reference.evaluate(
        data["predictions"], data["truth"], FORMAT_METRICS, data["conventions"]
    ).metrics
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for fmt in ("csv", "parquet", "jsonl"):
            write(truth, folder / f"truth.{fmt}")
            for layout, frame in predictions.items():
                write(frame, folder / f"{layout}.{fmt}")
        for fmt in ("csv", "parquet", "jsonl"):
            for layout in predictions:
                results[fmt, layout] = cli_metrics(
                    folder, f"{layout}.{fmt}", layout, f"truth.{fmt}", data
                )
        # The truth in one format, the predictions in another.
        results["mixed"] = cli_metrics(folder, "score.parquet", "score", "truth.csv", data)
    baseline = results["parquet", "score"]
    assert baseline.keys() == set(FORMAT_METRICS)
    # Every format and layout gives the identical report, to the last bit.
    for key, metrics in results.items():
        assert metrics == baseline, key
    for name, value in expected.items():
        assert math.isclose(baseline[name], value, rel_tol=0, abs_tol=TOL), name


@pytest.mark.slow
@settings(max_examples=40)
@given(file_data())
def test_layouts_agree_in_memory(data: dict[str, Any]) -> None:
    """Per-user values, statuses and counts are the same in every layout."""
    truth = pl.DataFrame(data["truth"], schema=["user", "item", "rel"], orient="row")
    columns = {"user": "user", "item": "item", "relevance": "rel"}
    reports = {}
    frames_by_layout = prediction_frames(data)
    text_lists = frames_by_layout["items"].with_columns(
        pl.col("items").cast(pl.List(pl.String)).list.join(" | ")
    )
    for layout, frame in [*frames_by_layout.items(), ("text", text_lists)]:
        column = "items" if layout == "text" else layout
        reports[layout] = receval_cli.evaluate(
            frame,
            truth,
            FORMAT_METRICS,
            conventions=data["conventions"],
            prediction_columns={column: column},
            truth_columns=columns,
        )
    for report in reports.values():
        assert_same_results(reports["score"], report)


def test_csv_list_column_with_one_integer_item_per_row(tmp_path: Path) -> None:
    """A CSV list column whose lists each hold one integer id is still a list column.

    CSV has no types: "3" is a one-item list exactly as "3|4" is a two-item list. The same
    predictions as Parquet lists give precision@1 = 0.5.
    """
    (tmp_path / "lists.csv").write_text("user,items\n1,3\n2,5\n", encoding="utf-8")
    pl.DataFrame({"user": [1, 2], "items": [[3], [5]]}).write_parquet(tmp_path / "lists.parquet")
    (tmp_path / "truth.csv").write_text("user,item\n1,3\n2,4\n", encoding="utf-8")
    for name in ("lists.parquet", "lists.csv"):
        config = {
            "predictions": {"path": name, "columns": {"items": "items"}},
            "ground_truth": {"path": "truth.csv"},
            "metrics": ["precision@1"],
        }
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        result = CliRunner().invoke(app, ["run", str(path), "--format", "json"])
        assert result.exit_code == 0, (name, result.stderr)
        assert json.loads(result.stdout)["models"]["model"]["metrics"] == {"precision@1": 0.5}, name


LIST_METRICS = ["precision@3", "recall@3", "map@3", "ndcg@3", "idcg@3", "r_precision"]


@pytest.mark.parametrize("policy", ["first", "max_score"])
def test_a_repeated_item_in_a_list_counts_once(policy: str) -> None:
    """items [a, b, a]: each duplicates rule keeps one a (at position 1), as for rank rows.

    The list is the rank layout written compactly: its copies must be told apart by their
    position, not by the line they share.
    """
    truth = pl.DataFrame({"user": [1, 1], "item": ["a", "c"]})
    lists = pl.DataFrame({"user": [1], "items": [["a", "b", "a"]]})
    ranks = pl.DataFrame({"user": [1, 1, 1], "item": ["a", "b", "a"], "rank": [1, 2, 3]})
    conventions = {"duplicates": policy}
    from_list = receval_cli.evaluate(lists, truth, LIST_METRICS, conventions=conventions)
    from_ranks = receval_cli.evaluate(ranks, truth, LIST_METRICS, conventions=conventions)
    expected = reference.evaluate(
        [(1, "a", 1), (1, "b", 2), (1, "a", 3)],
        [(1, "a", 1.0), (1, "c", 1.0)],
        LIST_METRICS,
        conventions,
        layout="rank",
    ).metrics
    assert expected["precision@3"] == pytest.approx(1 / 3)  # a, b: one hit in 3
    assert expected["recall@3"] == pytest.approx(1 / 2)
    assert from_ranks.metrics == pytest.approx(expected, abs=TOL)
    assert from_list.metrics == pytest.approx(expected, abs=TOL)


@pytest.mark.parametrize("policy", ["first", "max"])
def test_a_repeated_item_in_a_truth_list_counts_once(policy: str) -> None:
    """Ground truth items [a, c, a] with grades [1, 1, 3]: one a, graded 1 (first) or 3."""
    predictions = pl.DataFrame({"user": [1, 1], "item": ["a", "b"], "score": [0.9, 0.8]})
    lists = pl.DataFrame({"user": [1], "items": [["a", "c", "a"]], "rels": [[1.0, 1.0, 3.0]]})
    rows = pl.DataFrame({"user": [1, 1, 1], "item": ["a", "c", "a"], "rel": [1.0, 1.0, 3.0]})
    conventions = {"truth_duplicates": policy}
    from_list = receval_cli.evaluate(
        predictions,
        lists,
        LIST_METRICS,
        conventions=conventions,
        truth_columns={"items": "items", "relevances": "rels"},
    )
    from_rows = receval_cli.evaluate(
        predictions, rows, LIST_METRICS, conventions=conventions, truth_columns={"relevance": "rel"}
    )
    expected = reference.evaluate(
        [(1, "a", 0.9), (1, "b", 0.8)], rows.rows(), LIST_METRICS, conventions
    ).metrics
    assert expected["precision@3"] == pytest.approx(1 / 3)
    assert expected["recall@3"] == pytest.approx(1 / 2)
    assert from_rows.metrics == pytest.approx(expected, abs=TOL)
    assert from_list.metrics == pytest.approx(expected, abs=TOL)
