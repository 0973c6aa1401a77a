"""The rows the compiled core ranks for the lists' readers (evaluation/kernel_core.py
`_kept`, plan.py `_rank_depth`): kept only as deep as the recs table and the global
metrics read them, so that beyond-accuracy metrics at @5 and @10 beside an ndcg@20 keep
10 rows a user, not 20; with a catalog and the item figures (an HTML report), as deep as
every metric. Each case is a whole `receval run` with the compiled core and with
RECEVAL_CORE=polars: the same JSON report and per-user file, bit for bit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import invoke, write_config
from engine_parity import BEYOND, comparable, differences, parity_data
from kernel_readers import watch_readers

from receval_cli.compiled import extension
from receval_cli.evaluation import kernel_core

pytestmark = pytest.mark.skipif(extension() is None, reason="the compiled core is not built here")
# deeper than every beyond-accuracy metric (BEYOND: @5 and @10); lists of up to 18 items
RANKING = ["ndcg@20", "precision@15", "recall@20", "map@20", "mrr@20"]
# those with a cutoff (prediction_coverage reads whole lists: every row is kept then)
AT_K = [spec for spec in BEYOND if "@" in spec]


def _watched(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[int | None]]:
    """Which of the compiled core's two readers gave tables, and each `_kept`'s depth."""
    ran = watch_readers(monkeypatch)
    depths: list[int | None] = []
    kept = kernel_core._kept

    def recorded(out: dict[str, Any], rank_depth: int | None) -> Any:
        depths.append(rank_depth)
        return kept(out, rank_depth)

    monkeypatch.setattr(kernel_core, "_kept", recorded)
    return ran, depths


@pytest.mark.parametrize("html", [False, True], ids=["json", "html: the item figures"])
@pytest.mark.parametrize("grouped", [True, False], ids=["in batches", "read whole"])
def test_lists_ranked_as_deep_as_read_give_the_polars_cores_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, grouped: bool, html: bool
) -> None:
    monkeypatch.setattr(kernel_core, "BATCH_ROWS", 60)  # several batches, users across them
    config = parity_data(tmp_path)
    predictions = pl.read_parquet(tmp_path / "predictions.parquet")
    ordered = predictions.sort("user", maintain_order=True) if grouped else predictions
    if not grouped:
        ordered = predictions.sample(fraction=1.0, shuffle=True, seed=3)
    ordered.write_parquet(tmp_path / "predictions.parquet")
    pl.DataFrame(
        [(u, i, s) for u, i, s in [(9, 100, 0.5), (10, 9, 0.5), (100, 10, 0.1)]],
        schema=["user", "item", "score"],
        orient="row",
    ).write_csv(tmp_path / "baseline.csv")
    config |= {"metrics": [*RANKING, *AT_K], "baseline": {"path": "baseline.csv"}}
    ran, depths = _watched(monkeypatch)
    reports = {}
    for core in ("", "polars"):
        monkeypatch.setenv("RECEVAL_CORE", core)
        name = core or "compiled"
        outputs = ["-o", tmp_path / f"{name}.json", "--per-user", tmp_path / f"{name}.parquet"]
        if html:
            outputs += ["-o", tmp_path / f"{name}.html"]
        result = invoke("run", write_config(tmp_path, config, f"{name}.yaml"), "-q", *outputs)
        assert result.exit_code == 0, result.stderr
        reports[name] = comparable(json.loads((tmp_path / f"{name}.json").read_text()))
        if name == "compiled":
            assert ran == ["evaluate_batches" if grouped else "evaluate_compiled"]
            # the figures read the lists at @20; the metrics at @10 at most
            assert set(depths) == ({None} if html else {10})
    assert not differences(reports["polars"], reports["compiled"])
    compiled = pl.read_parquet(tmp_path / "compiled.parquet")
    reference = pl.read_parquet(tmp_path / "polars.parquet")
    assert compiled.equals(reference)
