"""Ranges of users (engines/ranges.py): predictions grouped by user, read once and cut into
ranges of whole users, each evaluated with its users' ground truth; the same report and
per-user rows as one pass, bit for bit, whatever the range size, the batch size, the order
of the ground truth; predictions in another order fall back to hash partitions."""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import invoke, per_user_rows, run_report, write_config
from engine_parity import comparable, differences, parity_data

from receval_cli.compiled import extension
from receval_cli.engines import ranges, running

METRICS = [
    "ndcg@5",
    "precision@3",
    "recall@10",
    "map(denominator=relevant)",
    "mrr",
    "num_rel_ret",
    "r_precision",
    "novelty@10",
    "intra_list_diversity@5(feature=category)",
    "catalog_coverage@10",
    "gini@5",
    "entropy@5",
    "inter_list_diversity@5",
    "user_coverage",
    "rmse",
]


def _run(folder: Path, config: dict[str, Any], name: str, rows: int | None) -> dict[str, Any]:
    """The JSON report and per-user rows of a run; `rows`: ranges of that many prediction
    rows (None: one pass in memory)."""
    settings = {"engine": "auto"} if rows else {"engine": "in_memory"}
    env = {"RECEVAL_RANGE_ROWS": str(rows) if rows else None}
    report = run_report(folder, {**config, **settings}, name, env=env, per_user=True)
    return {"report": report, "per_user": per_user_rows(folder, name)}


def _same(expected: dict[str, Any], got: dict[str, Any]) -> None:
    copies = [copy.deepcopy(run["report"]) for run in (expected, got)]  # comparable() pops
    found = differences(*(comparable(report) for report in copies))
    assert not found, found[:10]
    assert got["per_user"].equals(expected["per_user"])


def _engine(found: dict[str, Any]) -> dict[str, Any]:
    engine: dict[str, Any] = found["report"]["models"]["model"]["inputs"]["engine"]
    return engine


@pytest.fixture
def case(tmp_path: Path) -> dict[str, Any]:
    config = parity_data(tmp_path)
    config["metrics"] = METRICS
    return config


@pytest.mark.parametrize("rows", [1, 7, 60, 100_000])
def test_ranges_give_the_one_pass_report(
    tmp_path: Path, case: dict[str, Any], rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ranges of 1 row (a user each), 7 and 60 rows (users cut at their end), one range;
    batches of 5 rows, so users straddle batches."""
    monkeypatch.setattr(ranges, "BATCH_ROWS", 5)
    expected = _run(tmp_path, case, "one_pass", None)
    got = _run(tmp_path, case, f"ranges_{rows}", rows)
    _same(expected, got)
    users = pl.read_parquet(tmp_path / "predictions.parquet")["user"].n_unique()
    assert _engine(got)["ranges"] >= (2 if rows < 100_000 else 1)
    if rows == 1:  # a range per user with predictions, one for the truth-only users after
        assert _engine(got)["ranges"] in (users, users + 1)


def test_ground_truth_in_another_order_is_read_whole(tmp_path: Path, case: dict[str, Any]) -> None:
    truth = pl.read_csv(tmp_path / "truth.csv")
    shuffled = truth.sample(fraction=1.0, shuffle=True, seed=3)
    assert not shuffled["user"].is_sorted()
    shuffled.write_csv(tmp_path / "shuffled.csv")
    config = {**case, "ground_truth": {"path": "shuffled.csv"}}
    expected = _run(tmp_path, config, "one_pass", None)
    got = _run(tmp_path, config, "ranges_shuffled_truth", 9)
    _same(expected, got)
    assert _engine(got)["ranges"] > 2


def test_predictions_in_another_order_run_without_ranges(
    tmp_path: Path, case: dict[str, Any]
) -> None:
    frame = pl.read_parquet(tmp_path / "predictions.parquet")
    frame.sort("user", descending=True, maintain_order=True).write_parquet(
        tmp_path / "desc.parquet"
    )
    config = {**case, "predictions": {"path": "desc.parquet"}}
    expected = _run(tmp_path, config, "one_pass", None)
    got = _run(tmp_path, config, "ranges_descending", 9)
    _same(expected, got)  # one pass here: auto's hash partitions are for larger files
    assert "ranges" not in got["report"]["models"]["model"]["inputs"].get("engine", {})


def test_text_ids_in_text_order(tmp_path: Path, case: dict[str, Any]) -> None:
    """User ids as text, grouped in text order ("10" < "100" < "1000" < "9")."""
    for name, reader in (("predictions.parquet", pl.read_parquet), ("truth.csv", pl.read_csv)):
        frame = reader(tmp_path / name).with_columns(pl.col("user").cast(pl.String))
        frame = frame.sort("user", maintain_order=True)
        frame.write_parquet(tmp_path / f"text_{Path(name).stem}.parquet")
    config = {
        **case,
        "predictions": {"path": "text_predictions.parquet"},
        "ground_truth": {"path": "text_truth.parquet"},
    }
    expected = _run(tmp_path, config, "text_one_pass", None)
    got = _run(tmp_path, config, "text_ranges", 11)
    _same(expected, got)
    assert _engine(got)["ranges"] > 2


@pytest.mark.parametrize("ids", ["numbers", "negative", "text"])
@pytest.mark.parametrize("rows", [1, 13])
def test_unknown_items_against_the_truth_as_in_one_pass(
    tmp_path: Path, case: dict[str, Any], ids: str, rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a catalog or a log the ground truth is the unknown-items reference: its
    items are gathered range by range (bits for numbers, tables for negative ids and
    text), and the block (count, share, the smallest examples) is one pass's. With the
    compiled core, each range hands its recommended items over as its bits (numbers; a range
    with a negative id makes a table)."""
    handed: list[int] = []
    add_bits = running.ItemSet.add_bits

    def counted(self: running.ItemSet, bits: Any) -> None:
        handed.append(len(bits))
        add_bits(self, bits)

    monkeypatch.setattr(running.ItemSet, "add_bits", counted)
    config = {k: v for k, v in case.items() if k not in ("catalog", "interactions")}
    config["metrics"] = ["ndcg@5", "precision@3", "recall@10", "mrr"]
    if ids != "numbers":
        for name, reader in (("predictions.parquet", pl.read_parquet), ("truth.csv", pl.read_csv)):
            frame = reader(tmp_path / name)
            shift = pl.col("item") - 50 if ids == "negative" else pl.col("item").cast(pl.String)
            frame.with_columns(shift).write_parquet(tmp_path / f"{ids}_{Path(name).stem}.parquet")
        config["predictions"] = {"path": f"{ids}_predictions.parquet"}
        config["ground_truth"] = {"path": f"{ids}_truth.parquet"}
    expected = _run(tmp_path, config, f"{ids}_one_pass", None)
    got = _run(tmp_path, config, f"{ids}_ranges_{rows}", rows)
    _same(expected, got)
    block = got["report"]["models"]["model"]["unknown_items"]
    assert block["reference"] == "ground truth"
    assert 0 < block["unknown"] < block["recommended"], block
    assert _engine(got)["ranges"] > 2
    if extension() is None or ids == "text":
        assert not handed
    elif ids == "numbers":  # negative ids: the ranges without any hand their bits over
        assert len(handed) >= 2


def _refusals(folder: Path, config: dict[str, Any]) -> list[str]:
    """The stderr of a run in one pass and of the same run in ranges of 9 rows: exit 2."""
    said = []
    for rows in (None, 9):
        settings = {"engine": "auto"} if rows else {"engine": "in_memory"}
        path = write_config(folder, {**config, **settings}, "refused.yaml")
        result = invoke("run", path, "-q", env={"RECEVAL_RANGE_ROWS": str(rows) if rows else None})
        assert result.exit_code == 2, result.stderr
        said.append(result.stderr)
    return said


def test_a_null_user_is_reported_as_in_one_pass(tmp_path: Path, case: dict[str, Any]) -> None:
    frame = pl.read_parquet(tmp_path / "predictions.parquet")
    frame = frame.with_columns(
        pl.when(pl.int_range(pl.len()) == 40).then(None).otherwise("user").alias("user")
    )
    frame.write_parquet(tmp_path / "null.parquet")
    one_pass, ranged = _refusals(tmp_path, {**case, "predictions": {"path": "null.parquet"}})
    assert one_pass == ranged
    assert "null" in one_pass


def test_a_repeated_pair_is_reported_as_in_one_pass(tmp_path: Path, case: dict[str, Any]) -> None:
    frame = pl.read_parquet(tmp_path / "predictions.parquet")
    late = frame.filter(pl.col("user") == frame["user"].max()).head(1)
    pl.concat([frame, late]).write_parquet(tmp_path / "repeated.parquet")
    one_pass, ranged = _refusals(tmp_path, {**case, "predictions": {"path": "repeated.parquet"}})
    assert one_pass == ranged
    assert "more than once" in one_pass


def test_progress_says_rows_done_of_the_whole(tmp_path: Path, case: dict[str, Any]) -> None:
    path = write_config(tmp_path, {**case, "engine": "auto"}, "progress.yaml")
    result = invoke("run", path, "-v", "-o", tmp_path / "p.json", env={"RECEVAL_RANGE_ROWS": "50"})
    assert result.exit_code == 0, result.stderr
    total = pl.read_parquet(tmp_path / "predictions.parquet").height
    assert f"of {total:,} prediction rows" in result.stderr
    assert "s left" in result.stderr
    assert f"evaluated {total:,} prediction rows" in result.stderr


@pytest.mark.parametrize("seed", range(6))
def test_ranges_hold_whole_users_in_order(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every row once, in the file's order; no user in two ranges; a range ends where a
    user ends, past `rows` rows only when its first user alone has more."""
    rng = random.Random(seed)
    monkeypatch.setattr(ranges, "BATCH_ROWS", rng.choice([1, 2, 3, 7, 50]))
    users = sorted(rng.sample(range(1, 400), 40))
    rows = [(u, i) for u in users for i in range(rng.choice([1, 1, 2, 5, 13]))]
    frame = pl.DataFrame(rows, schema=["user", "item"], orient="row")
    size = rng.choice([1, 2, 4, 9, 30])
    found = list(ranges.prediction_ranges(frame.lazy(), size, "in-memory"))
    assert pl.concat(found).equals(frame)
    seen: set[int] = set()
    for part in found:
        mine = set(part["user"].to_list())
        assert not mine & seen
        seen |= mine
        if part.height > size:
            first = part["user"][0]
            assert (
                part["user"].n_unique() == 1 or part.filter(pl.col("user") == first).height > size
            )


def test_descending_users_are_refused_by_the_reader() -> None:
    frame = pl.DataFrame({"user": [3, 2, 1], "item": [1, 1, 1]})
    with pytest.raises(ranges.Unordered):
        list(ranges.prediction_ranges(frame.lazy(), 1, "in-memory"))


@pytest.mark.parametrize(
    "change",
    [
        {},
        {"metrics": ["ndcg@10", "gini@10", "novelty@10"]},
        {"conventions": {"duplicates": "first", "tie_break": "input_order"}},
        {"metrics": ["ctr@5", "ctr@5(estimator=snips)"]},  # click metrics: the truth is the log
    ],
    ids=["ranking", "global and side inputs", "file order", "click metrics"],
)
def test_auto_reads_large_predictions_in_ranges(
    tmp_path: Path, case: dict[str, Any], change: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`engine: auto` plans ranges from RANGES_FROM prediction rows (their size from the
    memory it plans for), whatever the metrics; below, one pass."""
    from receval_cli.config.loading import load_config
    from receval_cli.engines import choice
    from receval_cli.engines.run_plan import plan_run

    config = {**case, "metrics": change.get("metrics", METRICS)}
    config["conventions"] = {**case["conventions"], **change.get("conventions", {})}
    loaded = load_config(write_config(tmp_path, config))
    assert (plan_run(loaded).engine.ranges, plan_run(loaded).engine.partitions) == (0, 1)
    monkeypatch.setattr(choice, "RANGES_FROM", 100)
    lowest, highest = choice.RANGE_ROWS
    assert lowest <= plan_run(loaded).engine.ranges <= highest
