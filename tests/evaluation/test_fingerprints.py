"""Input fingerprints, and refusing to compare unlike things.

Every report records, per input, its resolved path, size, modification time, rows and
users, and for the ground truth a content hash of its (user, item, relevance) rows: the
same whatever the row order, file format, id type or engine, and different when a row
changes. `--baseline-report` and `compare` refuse reports of other conventions (exit 2)
unless --allow-different-conventions, and warn when the ground truths differ.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import polars as pl
import pytest
from cli_helpers import assert_user_error, invoke, run_json, write, write_config

import receval_cli
from receval_cli.evaluation import fingerprints
from receval_cli.inputs.readers import Input

TRUTH = pl.DataFrame(
    {
        "user": [9, 9, 10, 100, 100, 100],
        "item": [10, 100, 9, 9, 10, 1000],
        "relevance": [1.0, 2.5, 0.0, -1.0, 3.0, 1.0],
    }
)
PREDICTIONS = pl.DataFrame(
    {
        "user": [9, 9, 9, 10, 100, 7],
        "item": [10, 9, 100, 9, 1000, 10],
        "score": [0.5, 0.5, 0.2, 0.9, 0.1, 0.3],
    }
)
METRICS = ["ndcg@2", "precision@1", "map"]


def setup(folder: Path, truth: pl.DataFrame = TRUTH, truth_name: str = "truth.csv") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    PREDICTIONS.write_parquet(folder / "predictions.parquet")
    path = folder / truth_name
    if truth_name.endswith(".parquet"):
        truth.write_parquet(path)
    else:
        write(path, truth.write_csv())
    return write_config(
        folder,
        {
            "predictions": {"path": "predictions.parquet"},
            "ground_truth": {"path": truth_name},
            "metrics": METRICS,
        },
    )


def truth_block(report: dict[str, Any]) -> dict[str, Any]:
    block: dict[str, Any] = report["models"]["model"]["inputs"]["ground_truth"]
    return block


def test_every_input_is_fingerprinted(tmp_path: Path) -> None:
    config = setup(tmp_path / "case")
    report = run_json(config)
    inputs = report["models"]["model"]["inputs"]
    for role, name, rows, users in (
        ("predictions", "predictions.parquet", 6, 4),
        ("ground_truth", "truth.csv", 6, 3),
    ):
        block = inputs[role]
        path = tmp_path / "case" / name
        assert block["path"] == str(path.resolve())
        assert block["size_bytes"] == path.stat().st_size
        when = datetime.datetime.fromisoformat(block["modified"])
        assert when.tzinfo is not None
        assert abs(when.timestamp() - path.stat().st_mtime) < 1
        assert (block["rows"], block["users"]) == (rows, users)
    assert len(inputs["ground_truth"]["content_hash"]) == 16
    assert inputs["ground_truth"]["hash_method"].startswith("polars ")
    assert "content_hash" not in inputs["predictions"]


def test_the_content_hash_ignores_order_format_ids_and_engine(tmp_path: Path) -> None:
    reference = truth_block(run_json(setup(tmp_path / "a")))["content_hash"]
    shuffled = TRUTH.sample(fraction=1.0, shuffle=True, seed=5)
    assert shuffled["user"].to_list() != TRUTH["user"].to_list()
    as_text = TRUTH.with_columns(pl.col("user", "item").cast(pl.String))
    variants = {
        "shuffled csv": setup(tmp_path / "b", shuffled),
        "parquet": setup(tmp_path / "c", TRUTH, "truth.parquet"),
        "string ids": setup(tmp_path / "d", as_text, "truth.parquet"),
    }
    for name, config in variants.items():
        assert truth_block(run_json(config))["content_hash"] == reference, name
    config = setup(tmp_path / "e")
    for engine in ({"engine": "streaming"}, {"partitions": 3}):
        text = config.read_text(encoding="utf-8") + "".join(
            f"{k}: {v}\n" for k, v in engine.items()
        )
        other = write(tmp_path / "e" / "engine.yaml", text)
        assert truth_block(run_json(other))["content_hash"] == reference, engine


@pytest.mark.parametrize(
    "change",
    [
        pl.col("relevance").replace({2.5: 2.0}),  # one grade
        pl.col("item").replace({1000: 999}),  # one item
        pl.col("user").replace({10: 11}),  # one user
    ],
)
def test_the_content_hash_sees_a_changed_row(change: pl.Expr, tmp_path: Path) -> None:
    reference = truth_block(run_json(setup(tmp_path / "a")))["content_hash"]
    changed = TRUTH.with_columns(change)
    assert truth_block(run_json(setup(tmp_path / "b", changed)))["content_hash"] != reference


def test_a_repeated_row_changes_the_hash(tmp_path: Path) -> None:
    """Rows are a multiset: a duplicated row (truth_duplicates: first) is seen."""
    a = setup(tmp_path / "a")
    b = setup(tmp_path / "b", pl.concat([TRUTH, TRUTH.head(1)]))
    for config in (a, b):
        text = config.read_text(encoding="utf-8") + "conventions: {truth_duplicates: first}\n"
        config.write_text(text, encoding="utf-8")
    hashes = {truth_block(run_json(c))["content_hash"] for c in (a, b)}
    assert len(hashes) == 2


def digest(user: pl.Series, item: pl.Series) -> str | None:
    """The content hash of truth rows with these ids (grade 1.0 each)."""
    frame = pl.DataFrame({"user": user, "item": item, "rel": [1.0] * len(user)})
    found = fingerprints.truth_digest(cast(Input, SimpleNamespace(frame=frame.lazy())))
    return fingerprints.digest_text(found.collect().row(0, named=True))


BIG = 2**63 + 5  # beyond int64: UInt64 ids


@pytest.mark.parametrize(
    ("numbers", "texts"),
    [
        (pl.Series([9, 10, 100, -5, 0]), pl.Series(["9", "10", "100", "-5", "0"])),
        (pl.Series([-(2**63), 2**63 - 1]), pl.Series([str(-(2**63)), str(2**63 - 1)])),
        (pl.Series([BIG, 7], dtype=pl.UInt64), pl.Series([str(BIG), "7"])),
        (pl.Series([9, 10], dtype=pl.Int32), pl.Series(["9", "10"])),
        (pl.Series([9, BIG], dtype=pl.Int128), pl.Series(["9", str(BIG)])),
    ],
)
def test_an_integer_id_and_its_text_hash_alike(numbers: pl.Series, texts: pl.Series) -> None:
    as_int64 = numbers.cast(pl.Int64, strict=False)
    items = pl.Series(["u1"] * len(numbers))
    reference = digest(numbers, items)
    assert digest(texts, items) == reference
    assert digest(items, numbers) == digest(items, texts)  # the item column alike
    if as_int64.null_count() == 0:  # every id fits int64: its Int64 column hashes alike
        assert digest(as_int64, items) == reference


@pytest.mark.parametrize("text", ["09", "+9", "9.0", " 9", "-0"])
def test_an_id_that_only_reads_as_a_number_is_text(text: str) -> None:
    """Not an int64's plain decimal text: hashed as text, so it differs from 9 (or 0)."""
    number = 0 if text == "-0" else 9
    items = pl.Series(["a"])
    assert digest(pl.Series([text]), items) != digest(pl.Series([number]), items)


def test_the_hash_tells_ids_apart_by_column() -> None:
    """(user 1, item 2) is not (user 2, item 1); text "u1" is not the number 1."""
    assert digest(pl.Series([1]), pl.Series([2])) != digest(pl.Series([2]), pl.Series([1]))
    assert digest(pl.Series(["u1"]), pl.Series([2])) != digest(pl.Series([1]), pl.Series([2]))


def test_api_frames_are_fingerprinted_without_file_facts() -> None:
    report = receval_cli.evaluate(PREDICTIONS, TRUTH, METRICS)
    block = report.inputs["ground_truth"]
    assert block["users"] == 3
    assert "size_bytes" not in block
    assert len(block["content_hash"]) == 16


# --- --baseline-report ---------------------------------------------------------------


def saved_baseline(tmp_path: Path, **conventions: Any) -> Path:
    config = setup(tmp_path / "base")
    if conventions:
        text = config.read_text(encoding="utf-8") + f"conventions: {json.dumps(conventions)}\n"
        config.write_text(text, encoding="utf-8")
    report = tmp_path / "base.json"
    assert invoke("run", config, "-f", "json", "-o", report, "-q").exit_code == 0
    return report


def test_baseline_report_of_other_conventions_is_refused(tmp_path: Path) -> None:
    """relevance_threshold 2 against 1 passed a gate silently before."""
    base = saved_baseline(tmp_path, relevance_threshold=2)
    config = setup(tmp_path / "run")
    text = config.read_text(encoding="utf-8") + "gates: {map: {max_drop: 0.01}}\n"
    config.write_text(text, encoding="utf-8")
    out = tmp_path / "out.json"
    result = invoke("run", config, "--baseline-report", base, "--output", out)
    assert_user_error(
        result,
        "this run and baseline report",
        "different conventions (relevance_threshold: this run=1.0, baseline report=2.0)",
        "--allow-different-conventions",
    )
    assert not out.exists()
    allowed = invoke(
        "run", config, "--baseline-report", base, "-f", "json", "--allow-different-conventions"
    )
    assert allowed.exit_code in (0, 1), allowed.stderr
    warnings = json.loads(allowed.stdout)["warnings"]
    assert warnings[0].startswith("this run and the baseline report differ in conventions")


def test_baseline_report_of_the_same_conventions_is_compared(tmp_path: Path) -> None:
    base = saved_baseline(tmp_path)
    report = run_json(setup(tmp_path / "run"), "--baseline-report", base)
    assert report["warnings"] == []
    assert all(r["difference"] == 0.0 for r in report["comparisons"]["results"])


def test_an_old_report_without_the_newest_conventions_counts_their_defaults(
    tmp_path: Path,
) -> None:
    """A report written before fractional_grades existed had its default: not a difference."""
    base = saved_baseline(tmp_path)
    data = json.loads(base.read_text(encoding="utf-8"))
    del data["conventions"]["fractional_grades"]
    del data["models"]["model"]["inputs"]["ground_truth"]["content_hash"]
    base.write_text(json.dumps(data), encoding="utf-8")
    report = run_json(setup(tmp_path / "run"), "--baseline-report", base)
    assert report["warnings"] == []  # nothing differs; no hash: no truth warning


def test_baseline_report_on_another_ground_truth_warns(tmp_path: Path) -> None:
    base = saved_baseline(tmp_path)
    other = setup(tmp_path / "run", TRUTH.head(5))
    report = run_json(other, "--baseline-report", base)
    (warning,) = report["warnings"]
    assert warning.startswith("the ground truths differ (this run: ")
    assert "(5 rows" in warning
    assert "(6 rows" in warning
    result = invoke("run", other, "--baseline-report", base)
    assert "warning: the ground truths differ" in " ".join(result.stdout.split())


def test_compare_warns_on_different_ground_truths(tmp_path: Path) -> None:
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    assert invoke("run", setup(tmp_path / "ca"), "-o", a, "-q").exit_code == 0
    assert invoke("run", setup(tmp_path / "cb", TRUTH.head(5)), "-o", b, "-q").exit_code == 0
    result = invoke("compare", a, b, "--format", "json")
    assert result.exit_code == 0, result.stderr
    (warning,) = json.loads(result.stdout)["warnings"]
    assert "the ground truths differ" in warning
    assert "ground truths differ" in result.stderr  # JSON on stdout: the warning on stderr
    table = invoke("compare", a, b)
    assert "warning: the ground truths differ" in " ".join(table.stdout.split())
    same = invoke("compare", a, a, "--format", "json")
    assert json.loads(same.stdout)["warnings"] == []
