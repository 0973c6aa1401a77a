"""The recommended items the reference does not know (unknown_items.py): a join-key guard.

Every report states the share; above `unknown_items.warn` it warns (JSON `warnings`, the
table's footer, stderr for other formats), above `unknown_items.max` a gate fails.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import polars as pl
import pytest
from cli_helpers import invoke, write, write_config

import receval_cli
from receval_cli.compiled import extension
from receval_cli.engines import running


def _files(folder: Path, truth_items: list[str], users: int = 4, per_user: int = 5) -> Path:
    """Users u0.. with items i0.. scored descending; the ground truth gives each user the
    items listed (the same for every user)."""
    rows = ["user,item,score"]
    for u in range(users):
        rows += [f"u{u},i{u * per_user + j},{1 - j / 10}" for j in range(per_user)]
    write(folder / "p.csv", "\n".join(rows) + "\n")
    truth = ["user,item"] + [f"u{u},{item}" for u in range(users) for item in truth_items]
    write(folder / "t.csv", "\n".join(truth) + "\n")
    return folder


def _config(folder: Path, **extra: object) -> Path:
    config = {
        "predictions": {"path": "p.csv"},
        "ground_truth": {"path": "t.csv"},
        "metrics": ["precision@5"],
        **extra,
    }
    return write_config(folder, config)


def test_ids_that_never_match_warn_in_every_output(tmp_path: Path) -> None:
    # the ground truth writes the items as "I0", "I1", ...: none of the 20 ids match
    _files(tmp_path, [f"I{i}" for i in range(20)])
    config = _config(tmp_path)
    result = invoke("run", config, "--format", "json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    block = report["models"]["model"]["unknown_items"]
    assert block == {
        "reference": "ground truth",
        "recommended": 20,
        "unknown": 20,
        "share": 1.0,
        "examples": ["i0", "i1", "i10", "i11", "i12"],
    }
    (warning,) = report["warnings"]
    assert warning.startswith(
        "20 of the 20 recommended items (100%) are not in the ground truth (e.g. 'i0', 'i1', "
        "'i10', 'i11', 'i12'). If that is unexpected, check that the item ids"
    )
    assert result.stderr == f"warning: {warning}\n"
    table = invoke("run", config)
    assert "warning: 20 of the 20 recommended items (100%)" in table.stdout
    assert table.stderr == ""
    quiet = invoke("run", config, "--output", tmp_path / "r.md", "--quiet")
    assert quiet.stderr == f"warning: {warning}\n"  # --quiet never silences a warning
    assert "### Warnings" in (tmp_path / "r.md").read_text(encoding="utf-8")


def test_the_share_is_over_the_lists_as_deep_as_the_metrics_look(tmp_path: Path) -> None:
    # each list holds 5 items; precision@2 looks at 2 of them; the truth knows the 1st ones
    _files(tmp_path, ["i0", "i5", "i10", "i15"])
    deep = json.loads(invoke("run", _config(tmp_path), "--format", "json").stdout)
    assert deep["models"]["model"]["unknown_items"]["unknown"] == 16
    assert deep["models"]["model"]["unknown_items"]["share"] == 16 / 20
    shallow = _config(tmp_path, metrics=["precision@2"])
    block = json.loads(invoke("run", shallow, "--format", "json").stdout)["models"]["model"][
        "unknown_items"
    ]
    assert (block["recommended"], block["unknown"], block["share"]) == (8, 4, 0.5)


def test_a_gate_on_the_share(tmp_path: Path) -> None:
    _files(tmp_path, ["i0", "i5", "i10", "i15"])  # 16 of 20 unknown
    failing = invoke("run", _config(tmp_path, unknown_items={"max": 0.5}), "--format", "json")
    assert failing.exit_code == 1
    (gate,) = json.loads(failing.stdout)["gates"]["results"]
    assert gate["metric"] == "unknown_items"
    assert (gate["bound"], gate["threshold"], gate["value"], gate["passed"]) == (
        "max",
        0.5,
        0.8,
        False,
    )
    assert "gate failed: unknown_items = 0.8, required <= 0.5: FAILED by 0.3" in failing.stderr
    passing = invoke("run", _config(tmp_path, unknown_items={"max": 0.8}), "--format", "json")
    assert passing.exit_code == 0


def test_the_catalog_is_the_reference_when_given(tmp_path: Path) -> None:
    _files(tmp_path, ["I0"])  # the ground truth knows none of them
    write(tmp_path / "catalog.csv", "item\n" + "".join(f"i{i}\n" for i in range(15)))
    config = _config(tmp_path, catalog={"path": "catalog.csv"})
    report = json.loads(invoke("run", config, "--format", "json").stdout)
    assert report["models"]["model"]["unknown_items"]["reference"] == "catalog"
    assert report["models"]["model"]["unknown_items"]["unknown"] == 5  # i15 .. i19
    assert report["models"]["model"]["unknown_items"]["examples"] == [
        "i15",
        "i16",
        "i17",
        "i18",
        "i19",
    ]
    assert report["warnings"] == []  # 25% unknown


def test_several_models_each_have_their_block_warning_and_gate(tmp_path: Path) -> None:
    _files(tmp_path, ["i0", "i5", "i10", "i15"])
    write(tmp_path / "same.csv", (tmp_path / "p.csv").read_text(encoding="utf-8"))
    config = _config(
        tmp_path,
        predictions={"models": {"a": "p.csv", "b": "same.csv"}},
        unknown_items={"warn": 0.5, "max": 0.9},
    )
    report = json.loads(invoke("run", config, "--format", "json").stdout)
    assert [m["unknown_items"]["share"] for m in report["models"].values()] == [0.8, 0.8]
    assert [w[:10] for w in report["warnings"]] == ["model a: 1", "model b: 1"]
    gates = [g for g in report["gates"]["results"] if g["metric"] == "unknown_items"]
    assert [(g["model"], g["passed"]) for g in gates] == [("a", True), ("b", True)]


def test_partitions_give_the_same_block(tmp_path: Path) -> None:
    _files(tmp_path, ["i0", "i5", "i10", "i15", "zz"], users=12)
    one = json.loads(invoke("run", _config(tmp_path), "--format", "json").stdout)
    parts = _config(tmp_path, partitions=3, unknown_items={"warn": 0.5})
    split = json.loads(invoke("run", parts, "--format", "json").stdout)
    assert split["models"]["model"]["unknown_items"] == one["models"]["model"]["unknown_items"]
    assert split["warnings"]
    assert split["warnings"][0].startswith("56 of the 60")


@pytest.mark.parametrize("core", ["compiled", "polars"])
@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("seed", range(5))
def test_agrees_with_plain_sets(
    seed: int, wide: bool, core: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Random lists and truths: the share is |top-k items - truth items| / |top-k items|,
    with the compiled core (the items counted on its bits; `wide`: with negative and
    large ids, which its bits do not hold) and the polars core."""
    monkeypatch.setenv("RECEVAL_CORE", core)
    rng = random.Random(seed)
    k = rng.randint(1, 6)
    ids = [*range(30), 100, *([-7, -1, 2**40] if wide else [])]
    rows, truth = [], []
    for user in range(rng.randint(1, 8)):
        for item in rng.sample(ids, rng.randint(1, 10)):
            rows.append((user, item, rng.random()))
        truth += [(user, item) for item in rng.sample([*ids, *range(30, 40)], rng.randint(1, 6))]
    predictions = pl.DataFrame(rows, schema=["user", "item", "score"], orient="row")
    ground = pl.DataFrame(truth, schema=["user", "item"], orient="row")
    report = receval_cli.evaluate(
        predictions, ground, metrics=[f"hit_rate@{k}"], conventions={"tie_break": "item_asc"}
    )
    top: set[int] = set()
    for user in {r[0] for r in rows}:
        ranked = sorted((r for r in rows if r[0] == user), key=lambda r: (-r[2], r[1]))
        top |= {r[1] for r in ranked[:k]}
    unknown = top - {t[1] for t in truth}
    assert report.unknown_items == {
        "reference": "ground truth",
        "recommended": len(top),
        "unknown": len(unknown),
        "share": len(unknown) / len(top),
        **({"examples": sorted(unknown)[:5]} if unknown else {}),
    }
    assert bool(report.warnings) == (len(unknown) / len(top) > 0.9)


@pytest.mark.parametrize("reference", ["ground truth", "catalog"])
@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_partitions_count_as_plain_sets(
    tmp_path: Path, seed: int, wide: bool, reference: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`partitions: 3`: the buckets' items and the reference's (read a slice at a time)
    counted on bits where both are (engines/running.py), else by finish's query (`wide`:
    negative and large ids); the block is that of plain sets either way."""
    counted: list[object] = []
    missing_from = running.ItemSet.missing_from

    def watched(self: running.ItemSet, other: running.ItemSet) -> object:
        counted.append(found := missing_from(self, other))
        return found

    monkeypatch.setattr(running.ItemSet, "missing_from", watched)
    rng = random.Random(seed)
    ids = [*range(30), 100, *([-7, 2**40] if wide else [])]
    rows = [(u, i, rng.random()) for u in range(12) for i in rng.sample(ids, rng.randint(1, 8))]
    truth = [(u, i) for u in range(12) for i in rng.sample([*ids, *range(30, 40)], 3)]
    catalog = rng.sample([*ids, *range(30, 60)], 25)
    pl.DataFrame(rows, schema=["user", "item", "score"], orient="row").write_parquet(
        tmp_path / "p.parquet"
    )
    pl.DataFrame(truth, schema=["user", "item"], orient="row").write_parquet(tmp_path / "t.parquet")
    pl.DataFrame({"item": catalog}).write_parquet(tmp_path / "c.parquet")
    config = {
        "predictions": {"path": "p.parquet"},
        "ground_truth": {"path": "t.parquet"},
        "metrics": ["hit_rate@3"],
        "partitions": 3,
        "conventions": {"tie_break": "item_asc"},
        **({"catalog": {"path": "c.parquet"}} if reference == "catalog" else {}),
    }
    result = invoke("run", write_config(tmp_path, config), "--format", "json")
    assert result.exit_code == 0, result.stderr
    top: set[int] = set()
    for user in {r[0] for r in rows}:
        ranked = sorted((r for r in rows if r[0] == user), key=lambda r: (-r[2], r[1]))
        top |= {r[1] for r in ranked[:3]}
    known = set(catalog) if reference == "catalog" else {t[1] for t in truth}
    unknown = top - known
    assert json.loads(result.stdout)["models"]["model"]["unknown_items"] == {
        "reference": reference,
        "recommended": len(top),
        "unknown": len(unknown),
        "share": len(unknown) / len(top),
        **({"examples": sorted(unknown)[:5]} if unknown else {}),
    }
    on_bits = [found for found in counted if found is not None]
    if extension() is not None and not wide:
        assert on_bits, "the count was not made on bits"


def test_check_false_skips_the_count(tmp_path: Path) -> None:
    _files(tmp_path, [f"I{i}" for i in range(20)])  # nothing matches: it would warn
    for extra in ({}, {"partitions": 2}):
        config = _config(tmp_path, unknown_items={"check": False}, **extra)
        result = invoke("run", config, "--format", "json")
        assert result.exit_code == 0, result.stderr
        report = json.loads(result.stdout)
        assert "unknown_items" not in report
        assert report["warnings"] == []
        assert result.stderr == ""


def test_a_gate_needs_the_count(tmp_path: Path) -> None:
    _files(tmp_path, ["i0"])
    config = _config(tmp_path, unknown_items={"check": False, "max": 0.5})
    result = invoke("run", config)
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {config}: the config is not valid:\n  unknown_items: max is a gate on the "
        "count that check: false turns off; drop one.\n"
    )
