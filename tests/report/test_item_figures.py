"""The report's item figures (the HTML report's exposure histogram and popularity bias):
computed only where an HTML report is written, so a catalog or an interactions log that
no metric reads costs no pass over the lists or the log for them, and the report's values
are the same either way."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import pytest
from cli_helpers import (
    SAMPLE_CATALOG,
    SAMPLE_INTERACTIONS,
    run_json,
    sample_config,
    write_config,
)

from receval_cli.analysis.runs import evaluate_config
from receval_cli.config.loading import load_config


def _config(folder: Path, metrics: list[str]) -> Path:
    """The bundled sample model with the catalog and the log declared."""
    config = sample_config(
        metrics, catalog=SAMPLE_CATALOG, interactions=SAMPLE_INTERACTIONS, cutoffs=[5, 10]
    )
    return write_config(folder, config)


def _figures_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever computes the figures' tables fails the test: the log's popularity ranking,
    the lists' item exposure, the ranked lists the compiled core would build for them."""

    def refused(*_: Any, **__: Any) -> NoReturn:
        raise AssertionError("computed for the item figures, which no output draws")

    monkeypatch.setattr("receval_cli.evaluation.item_facts.item_popularity", refused)
    monkeypatch.setattr("receval_cli.evaluation.assembly.item_exposure", refused)
    monkeypatch.setattr("receval_cli.evaluation.plan.ranked_lists", refused)


def _model(report: dict[str, Any]) -> dict[str, Any]:
    block: dict[str, Any] = report["models"]["model"]
    return block


def test_a_catalog_and_log_no_metric_reads_cost_no_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A JSON run with a catalog and a log declared and ranking metrics alone computes
    none of the figures' tables, and its report (the items and unknown-items blocks
    included, which read the catalog) is the one of a run that computes them."""
    config = _config(tmp_path, ["ndcg", "precision", "mrr"])
    drawn = evaluate_config(load_config(config)).to_dict()
    _figures_refused(monkeypatch)
    found = run_json(config)
    assert _model(found) == _model(drawn)
    assert _model(found)["items"]["universe"] == "catalog"
    assert _model(found)["unknown_items"]["reference"] == "catalog"


@pytest.mark.parametrize(
    "metrics",
    [
        ["ndcg"],  # the catalog alone asks for the items' exposure
        ["ndcg", "novelty", "catalog_coverage", "gini", "arp"],  # beyond accuracy
    ],
)
def test_the_figures_tables_only_where_drawn(tmp_path: Path, metrics: list[str]) -> None:
    """evaluate_config's `figures`: the exposure histogram and the popularity bias with
    it (an HTML report), neither without it; the metrics and blocks alike."""
    loaded = load_config(_config(tmp_path, metrics))
    (drawn,) = evaluate_config(loaded).models.values()
    (plain,) = evaluate_config(loaded, figures=False).models.values()
    assert drawn.exposure is not None
    assert drawn.popularity_bias is not None
    assert plain.exposure is None
    assert plain.popularity_bias is None
    assert plain.metrics == drawn.metrics
    assert plain.items == drawn.items
    assert plain.unknown_items == drawn.unknown_items
