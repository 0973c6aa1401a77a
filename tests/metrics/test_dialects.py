"""Other tools' names beside receval's in one config: the passes by
conventions (config/convention_groups.py) assembled into one report (evaluation/
metric_groups.py), whatever the engine, the models, the segments, the gates and the format.

tests/peers/test_dialect_agreement.py checks each tool's numbers against the tool itself; this file
checks what joins them: a tool's name in a mixed config gives the number it gives alone
under its tool's preset, on every engine, and the report states its conventions.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import golden_files
import pytest
import yaml
from cli_helpers import (
    assert_user_error,
    evaluate_model,
    evaluate_written,
    hand_case,
    invoke,
    write_config,
)
from engine_parity import POLARS_ENGINES
from golden_files import dataset_config

from receval_cli.metrics.dialects import spec_of

DATA = golden_files.GOLDEN / "data"
# receval's own names, then one of each tool's, and a trec_eval -m form of two
MIXED = ["ndcg@10", "precision@5", "P_5", "map_cut.5,10", "nDCG@10", "RR@5", "ranx:ndcg@10"]
# each tool name alone under its tool's preset: (preset, conventions, receval spec)
ALONE = {
    "P_5": ("trec_eval", {}, "precision@5"),
    "map_cut_5": ("trec_eval", {}, "map@5"),
    "map_cut_10": ("trec_eval", {}, "map@10"),
    "nDCG@10": (
        "pytrec_eval",
        {"users_without_recommendations": "zero", "users_without_relevant": "zero"},
        "ndcg@10",
    ),
    "RR@5": (
        "pytrec_eval",
        {
            "users_without_recommendations": "zero",
            "users_without_relevant": "zero",
            "score_precision": "float64",
            "tie_break": "item_text_asc",
        },
        "mrr@5",
    ),
    "ranx:ndcg@10": ("ranx", {}, "ndcg@10"),
}


def values(report: Any, metric: str) -> dict[str, float]:
    rows = report.per_user.filter(report.counted[metric])
    return {str(u): v for u, v in rows.select("user", metric).iter_rows()}


@pytest.mark.parametrize("dataset", ["ties", "ties_int"])
def test_a_tool_name_beside_others_gives_its_number_alone(tmp_path: Path, dataset: str) -> None:
    mixed = evaluate_model(tmp_path, dataset_config(dataset, MIXED), per_user=True)
    assert list(mixed.metrics) == [
        "ndcg@10",
        "precision@5",
        "P_5",
        "map_cut_5",
        "map_cut_10",
        "nDCG@10",
        "RR@5",
        "ranx:ndcg@10",
    ]
    own = evaluate_written(
        tmp_path, dataset_config(dataset, ["ndcg@10", "precision@5"]), "own.yaml", per_user=True
    )
    for name in ("ndcg@10", "precision@5"):  # receval's own under the defaults
        assert mixed.metrics[name] == own.models["model"].metrics[name]
        assert values(mixed, name) == values(own.models["model"], name)
    for name, (preset, settings, spec) in ALONE.items():
        conventions = {"preset": preset, **settings}
        alone = evaluate_model(
            tmp_path,
            dataset_config(dataset, [spec], conventions=conventions),
            f"{preset}.yaml",
            per_user=True,
        )
        assert mixed.metrics[name] == alone.metrics[spec], name
        assert values(mixed, name) == values(alone, spec), name
    assert mixed.metrics["P_5"] != mixed.metrics["precision@5"]  # the conventions matter here


def test_the_report_states_each_tool_name_s_conventions(tmp_path: Path) -> None:
    path = write_config(tmp_path, dataset_config("ties_int", MIXED))
    result = invoke("run", path, "-q", "--format", "json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    by_metric = data["conventions"]["by_metric"]
    assert set(by_metric) == {"P_5", "map_cut_5", "map_cut_10", "nDCG@10", "RR@5", "ranx:ndcg@10"}
    assert by_metric["P_5"]["tool"] == "trec_eval"
    assert by_metric["P_5"]["metric"] == "precision@5"
    assert by_metric["P_5"]["differs"]["tie_break"] == "item_text_desc"
    assert by_metric["nDCG@10"]["differs"]["score_precision"] == "float32"
    assert by_metric["RR@5"]["provider"] == "msmarco"
    assert by_metric["ranx:ndcg@10"]["differs"]["tie_break"] == "input_order"
    assert data["conventions"]["tie_break"] == "item_desc"  # the run's own, for ndcg@10
    table = invoke("run", path)
    assert table.exit_code == 0, table.stderr
    assert "P_5: trec_eval's conventions (preset trec_eval)" in " ".join(table.stdout.split())


def test_a_list_in_one_tool_s_names_is_that_tool_s_run(tmp_path: Path) -> None:
    """Names receval shares with trec_eval (map, bpref) are trec_eval's in a list of
    trec_eval's names, and receval's beside receval's own; one pass runs a one-tool list,
    under the tool's conventions."""
    trec = evaluate_written(
        tmp_path, dataset_config("ties_int", ["map", "bpref", "P_10"]), per_user=True
    )
    assert set(trec.conventions["by_metric"]) == {"map", "bpref", "P_10"}
    assert trec.conventions["tie_break"] == "item_text_desc"  # the run's: trec_eval's
    alone = evaluate_written(
        tmp_path,
        dataset_config("ties_int", ["map", "bpref"], conventions={"preset": "trec_eval"}),
        "alone.yaml",
        per_user=True,
    )
    assert trec.models["model"].metrics["map"] == alone.models["model"].metrics["map"]
    mine = evaluate_written(
        tmp_path, dataset_config("ties_int", ["map", "ndcg@10"]), "mine.yaml", per_user=True
    )
    assert "by_metric" not in mine.conventions
    ir = evaluate_written(
        tmp_path, dataset_config("ties_int", ["infAP", "P@5"]), "ir.yaml", per_user=True
    )
    assert ir.conventions["by_metric"]["infAP"]["tool"] == "ir_measures"


@pytest.mark.parametrize("engine", list(POLARS_ENGINES))
def test_mixed_names_agree_on_every_engine(tmp_path: Path, engine: str) -> None:
    expected = evaluate_model(
        tmp_path, dataset_config("ties_int", MIXED), "one.yaml", per_user=True
    )
    found = evaluate_model(
        tmp_path,
        dataset_config("ties_int", MIXED, **POLARS_ENGINES[engine]),
        "engine.yaml",
        per_user=True,
    )
    assert found.metrics == expected.metrics
    assert found.users == expected.users
    for name in expected.metrics:
        assert values(found, name) == values(expected, name), name


@pytest.mark.spark
def test_mixed_names_agree_on_spark(tmp_path: Path) -> None:
    expected = evaluate_model(
        tmp_path, dataset_config("ties_int", MIXED), "one.yaml", per_user=True
    )
    found = evaluate_written(
        tmp_path, dataset_config("ties_int", MIXED, engine="spark"), "spark.yaml", per_user=True
    )
    spark = found.models["model"]
    assert spark.metrics.keys() == expected.metrics.keys()
    for name, value in expected.metrics.items():
        assert math.isclose(spark.metrics[name], value, rel_tol=1e-12), name


def test_models_intervals_segments_and_gates_on_mixed_names(tmp_path: Path) -> None:
    """Two models compared with intervals, segments and gates keyed by the tools' names:
    every pass's metrics are in each model's, each segment's and the comparison."""
    predictions = DATA / "ties_int_predictions.csv"
    other = tmp_path / "other.csv"
    other.write_text(
        "user,item,score\n"
        + "".join(
            f"{line.split(',')[0]},{line.split(',')[1]},{1 - float(line.split(',')[2])}\n"
            for line in predictions.read_text().splitlines()[1:]
        ),
        encoding="utf-8",
    )
    segments = tmp_path / "segments.csv"
    users = sorted({line.split(",")[0] for line in predictions.read_text().splitlines()[1:]})
    segments.write_text(
        "user,group\n" + "".join(f"{u},{'a' if i % 2 else 'b'}\n" for i, u in enumerate(users)),
        encoding="utf-8",
    )
    config = dataset_config(
        "ties_int",
        MIXED,
        predictions={"models": {"base": str(predictions), "other": str(other)}},
        confidence={"method": "bootstrap", "resamples": 200, "seed": 1},
        segments={"path": str(segments)},
        segment_by=["group"],
        gates={"P_5": {"min": 0.0}, "nDCG@10": {"min": 2.0}},
    )
    path = write_config(tmp_path, config)
    result = invoke("run", path, "-q", "--format", "json")
    assert result.exit_code == 1, result.stderr  # nDCG@10 >= 2 fails
    data = json.loads(result.stdout)
    for model in ("base", "other"):
        block = data["models"][model]
        assert list(block["metrics"]) == list(
            evaluate_model(
                tmp_path, dataset_config("ties_int", MIXED), "m.yaml", per_user=True
            ).metrics
        )
        assert set(block["confidence"]["intervals"]) == set(block["metrics"])
        evaluated = {n: s for n, s in block["segments"].items() if "not_evaluated" not in s}
        assert set(evaluated) == {"group=a", "group=b"}, model
        for name, segment in evaluated.items():
            assert set(segment["metrics"]) == set(block["metrics"]), (name, segment)
    compared = {c["metric"] for c in data["comparisons"]["results"]}
    assert {"P_5", "nDCG@10", "ranx:ndcg@10"} <= compared
    failed = [g for g in data["gates"]["results"] if not g["passed"]]
    assert {g["metric"] for g in failed} == {"nDCG@10"}
    assert {g["metric"] for g in data["gates"]["results"]} == {"P_5", "nDCG@10"}


@pytest.mark.parametrize(
    ("metric", "says"),
    [
        ({"name": "P_10", "cutoffs": [5]}, "drop cutoffs"),
        ("ranx:ndcgg@10", "'ndcgg@10' is not a ranx measure"),
        ("RBP(p=0.8)@10", "receval reproduces ir_measures' RBP without a cutoff"),
        ("p_10", "Did you mean 'P@10'?"),
        ("nDCG(gains=1)@10", "receval reproduces nDCG without 'gains'"),
        ("nDCG(rel=2)@10", "ir_measures' nDCG takes no 'rel' (its parameters: dcg, gains,"),
    ],
)
def test_a_tool_name_written_wrong_is_refused(tmp_path: Path, metric: Any, says: str) -> None:
    assert_user_error(invoke("run", hand_case(tmp_path, metrics=[metric])), says)


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("P_10", "P_10 is trec_eval's measure: receval's precision@10"),
        ("map_cut.5,10", "map_cut_10 is trec_eval's measure: receval's map@10"),
        ("nDCG@10", "nDCG@10 is ir_measures' measure (pytrec_eval computes it there)"),
        ("ranx:ndcg_burges@5", "receval's ndcg@5(gain=exponential) under ranx's conventions"),
        ("AP", "AP is ir_measures' measure"),
    ],
)
def test_receval_metrics_explains_a_tool_s_name(name: str, says: str) -> None:
    result = invoke("metrics", name)
    assert result.exit_code == 0, result.stderr
    assert says in " ".join(result.stdout.split())
    listed = invoke("metrics", name, "--format", "json")
    assert listed.exit_code == 0, listed.stderr
    assert json.loads(listed.stdout)["as_written"]


def test_the_html_and_markdown_reports_name_the_tools(tmp_path: Path) -> None:
    path = write_config(tmp_path, dataset_config("ties_int", MIXED, gates={"P_5": {"min": 0}}))
    for fmt in ("markdown", "html", "latex", "csv", "junit"):  # github: a summary line
        result = invoke("run", path, "-q", "--format", fmt)
        assert result.exit_code == 0, (fmt, result.stderr)
        assert "P_5" in result.stdout.replace("\\_", "_"), fmt  # LaTeX escapes _
        if fmt == "html":  # the conventions section names each tool's
            assert "P_5: trec_eval&#x27;s conventions (preset trec_eval)" in result.stdout
    yaml.safe_dump({})  # the module reads YAML configs through write_config


def test_the_python_api_and_inspect_read_tools_names_as_the_run_does(tmp_path: Path) -> None:
    import receval

    predictions, truth = golden_files.frames("ties_int")
    report = receval.evaluate(predictions, truth, MIXED, truth_columns={"relevance": "relevance"})
    ran = evaluate_model(tmp_path, dataset_config("ties_int", MIXED), per_user=True)
    assert report.metrics == ran.metrics
    assert set(report.conventions["by_metric"]) == set(ran.metrics) - {"ndcg@10", "precision@5"}
    path = write_config(tmp_path, dataset_config("ties_int", MIXED), name="inspect.yaml")
    shown = invoke("inspect", path, "--user", "3308", "--format", "json")
    assert shown.exit_code == 0, shown.stderr
    (user,) = json.loads(shown.stdout)["users"]
    for name, value in user["metrics"].items():
        assert value == ran.per_user.filter(ran.per_user["user"] == 3308)[name].item(), name


def test_a_tool_spelling_its_tool_refuses_is_receval_s_and_the_run_says_so(
    tmp_path: Path,
) -> None:
    """RBP(p=0.8) is no ir_measures measure (its RBP needs rel), and receval reads it as its
    own rbp(p=0.8): keyed so, with a warning naming why."""
    path = write_config(tmp_path, dataset_config("ties_int", ["RBP(p=0.8)", "ndcg@10"]))
    result = invoke("run", path, "-q", "--format", "json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert list(data["models"]["model"]["metrics"]) == ["rbp(p=0.8)", "ndcg@10"]
    assert (
        "metrics: 'RBP(p=0.8)' is read as receval's rbp(p=0.8); as ir_measures' name it is "
        "refused: ir_measures computes RBP with cwl_eval, which needs rel, e.g. "
        "RBP(p=0.8,rel=1)."
    ) in data["warnings"]


def test_a_name_both_receval_s_and_a_tool_s_keeps_its_key_and_says_whose_ran(
    tmp_path: Path,
) -> None:
    """recip_rank (trec_eval's, and receval's alias of mrr) and bpref in a list that mixes
    trec_eval's names with receval's: receval's definitions run under the config's
    conventions, each keyed as written, and a warning for each says so; in a list of
    trec_eval's names they are trec_eval's, without a word; a gate on mrr gates the
    metric written recip_rank."""
    mixed = ["P_5", "ndcg@10", "recip_rank", "bpref"]
    path = write_config(tmp_path, dataset_config("ties_int", mixed, gates={"mrr": {"min": 0.0}}))
    result = invoke("run", path, "-q", "--format", "json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    metrics = data["models"]["model"]["metrics"]
    assert list(metrics) == mixed
    own = evaluate_model(
        tmp_path, dataset_config("ties_int", ["mrr", "bpref"]), "own.yaml", per_user=True
    )
    assert metrics["recip_rank"] == own.metrics["mrr"]
    assert metrics["bpref"] == own.metrics["bpref"]
    assert set(data["conventions"]["by_metric"]) == {"P_5"}
    assert (
        "metrics: 'recip_rank' names receval's mrr and trec_eval's recip_rank; the list is not "
        "in one tool's names (P_5, ndcg@10), so it is receval's: mrr ran, under the config's "
        "conventions, keyed 'recip_rank'. Write trec_eval:recip_rank for trec_eval's."
    ) in data["warnings"]
    assert any(w.startswith("metrics: 'bpref' names receval's bpref") for w in data["warnings"])
    assert [g["metric"] for g in data["gates"]["results"]] == ["recip_rank"]
    trec = write_config(tmp_path, dataset_config("ties_int", ["P_5", "recip_rank"]), "trec.yaml")
    found = json.loads(invoke("run", trec, "-q", "--format", "json").stdout)
    assert list(found["models"]["model"]["metrics"]) == ["P_5", "recip_rank"]
    assert found["conventions"]["by_metric"]["recip_rank"]["tool"] == "trec_eval"
    assert not any("names receval's" in w for w in found["warnings"])


def test_a_tool_name_read_as_a_receval_alias_keeps_its_key_alone(tmp_path: Path) -> None:
    """Without another tool's name, recip_rank is receval's mrr, keyed recip_rank (and
    at each cutoff, recip_rank@k); receval's own aliases (rr) keep receval's key."""
    report = evaluate_written(
        tmp_path, dataset_config("ties_int", ["recip_rank", "rr", "ndcg@10"]), per_user=True
    )
    metrics = report.models["model"].metrics
    assert list(metrics) == ["recip_rank", "mrr", "ndcg@10"]
    assert metrics["recip_rank"] == metrics["mrr"]
    assert not any("names receval's" in w for w in report.warnings)
    assert spec_of("recip_rank").name == "mrr"  # what the key is, for intervals and gates
    assert str(spec_of("recip_rank")) == "recip_rank"
    cut = evaluate_written(
        tmp_path,
        dataset_config("ties_int", ["recip_rank"], cutoffs=[1, 5]),
        "cut.yaml",
        per_user=True,
    )
    assert list(cut.models["model"].metrics) == ["recip_rank@1", "recip_rank@5"]
