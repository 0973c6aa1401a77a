"""`receval validate`: the config and its inputs checked without computing a metric.

Exit 0 where `run` can evaluate (warnings included), 2 where `run` fails on the inputs,
with `run`'s own message: every error case below runs both commands on the same files
and compares their stderr. The snapshot tests/snapshots/validate_quickstart.txt is
reviewed by hand: after a change, rewrite it with
`UPDATE_SNAPSHOTS=1 uv run pytest tests/cli/test_validate.py` and read the diff line by line.
It is never the only check: the quickstart test recomputes every number of the summary
from sample_data/ with plain polars (rows, users, items, repeated pairs, nulls, list
lengths, grade counts, users in both files or in one with their first ids, users without
a grade >= 4, recommended items absent from the ground truth) and finds it in its row.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import (
    PREDICTIONS_CSV,
    TRUTH_CSV,
    assert_no_traceback,
    assert_user_error,
    hand_case,
    invoke,
    write,
    write_config,
)
from typer.testing import Result

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
SNAPSHOTS = Path(__file__).parents[1] / "snapshots"
QUICKSTART = "configs/quickstart.yaml"  # relative: the output names the config as given
VERDICT = "ok: receval run can evaluate this config"


@pytest.fixture(autouse=True)
def _in_repository_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def validate(*args: str | Path) -> Result:
    result = invoke("validate", *args)
    assert_no_traceback(result)
    return result


def passes(*args: str | Path) -> str:
    result = validate(*args)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result.stdout


def cells(output: str, label: str) -> list[str]:
    """The cells of the table row that starts with `label` (columns: 2+ spaces apart)."""
    for line in output.splitlines():
        if line.strip().startswith(label + "  "):
            return re.split(r"\s{2,}", line.strip()[len(label) :].strip())
    raise AssertionError(f"no row {label!r} in:\n{output}")


# -- every bundled config ----------------------------------------------------------------


@pytest.mark.parametrize("config", sorted(p.name for p in (ROOT / "configs").glob("*.yaml")))
def test_every_bundled_config_validates(config: str) -> None:
    output = passes(f"configs/{config}")
    assert output.rstrip().endswith(VERDICT)
    assert "warning:" not in output


# -- the quickstart summary: a reviewed snapshot, every number recomputed ------------------


def _sample() -> tuple[pl.DataFrame, pl.DataFrame]:
    return pl.read_csv(SAMPLE / "predictions.csv"), pl.read_parquet(SAMPLE / "ground_truth.parquet")


def test_quickstart_summary_matches_the_snapshot_and_the_data() -> None:
    output = passes(QUICKSTART)
    lines = [line.rstrip() for line in output.splitlines()]
    snapshot = SNAPSHOTS / "validate_quickstart.txt"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        snapshot.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert lines == snapshot.read_text(encoding="utf-8").splitlines()

    preds, truth = _sample()
    assert cells(output, "rows") == [str(preds.height), str(truth.height)]
    users = [str(f.get_column("user_id").n_unique()) for f in (preds, truth)]
    assert cells(output, "users") == users
    assert cells(output, "items") == [
        str(f.get_column("item_id").n_unique()) for f in (preds, truth)
    ]
    repeated = [str(f.height - f.unique(["user_id", "item_id"]).height) for f in (preds, truth)]
    assert cells(output, "repeated (user, item) rows") == repeated
    nulls = sum(f.null_count().sum_horizontal().item() for f in (preds, truth))
    assert nulls == 0
    assert cells(output, "nulls") == ["none", "none"]
    assert cells(output, "user id type") == ["String", "String"]
    assert cells(output, "item id type") == ["Int64", "Int64"]
    lengths = preds.group_by("user_id").len().get_column("len")
    shown = f"{lengths.min()} / {lengths.median():g} / {lengths.max()}"
    assert cells(output, "list length min / median / max") == [shown]
    grades = truth.group_by("rating").len().sort("rating").iter_rows()
    counts = ", ".join(f"{grade}: {n}" for grade, n in grades)
    assert f"relevance (ground truth): {counts}" in lines

    predicted = set(preds.get_column("user_id"))
    truth_users = set(truth.get_column("user_id"))
    assert cells(output, "users in both") == [str(len(predicted & truth_users))]

    def with_examples(found: set[str]) -> str:
        first = ", ".join(repr(u) for u in sorted(found)[:3])
        return f"{len(found)} (e.g. {first}, ...)"

    assert cells(output, "only in predictions") == [with_examples(predicted - truth_users)]
    assert cells(output, "only in ground truth") == [with_examples(truth_users - predicted)]
    best = truth.group_by("user_id").agg(pl.col("rating").max())
    no_relevant = best.filter(pl.col("rating") < 4).height
    assert cells(output, "no item with relevance >= 4") == [str(no_relevant)]
    # users_without_relevant: skip; users without a recommendation count (as 0)
    assert cells(output, "users evaluated") == [str(len(truth_users) - no_relevant)]
    items = set(preds.get_column("item_id"))
    assert cells(output, "items recommended (whole lists)") == [str(len(items))]
    absent = items - set(truth.get_column("item_id"))
    assert cells(output, "in no user's ground truth") == [str(len(absent))]
    assert cells(output, "user ids compared as") == ["text (String)"]
    assert cells(output, "item ids compared as") == ["integer (Int64)"]


def test_quickstart_json_keys_and_numbers() -> None:
    result = validate(QUICKSTART, "--format", "json")
    assert result.exit_code == 0, result.stderr
    health = json.loads(result.stdout)
    assert list(health) == ["config", "models", "ground_truth", "optional", "warnings"]
    assert health["config"] == QUICKSTART
    assert list(health["models"]) == ["model"]
    model = health["models"]["model"]
    assert list(model) == ["predictions", "ids", "users", "items", "unknown_items"]
    block_keys = ["path", "format", "layout", "columns", "rows", "users", "items"]
    block_keys += ["duplicate_rows", "nulls", "id_types"]
    assert list(model["predictions"]) == [*block_keys, "list_length"]
    assert list(health["ground_truth"]) == [*block_keys, "relevance"]
    assert list(model["users"]) == [
        "in_ground_truth",
        "in_predictions",
        "in_both",
        "only_in_predictions",
        "only_in_ground_truth",
        "no_relevant",
        "evaluated",
    ]
    assert list(model["items"]) == ["depth", "recommended", "not_in_ground_truth"]
    assert health["optional"] == {}
    assert health["warnings"] == []

    preds, truth = _sample()
    assert model["predictions"]["rows"] == preds.height
    assert model["predictions"]["nulls"] == {"user_id": 0, "item_id": 0, "score": 0}
    assert model["predictions"]["format"] == "csv"
    assert model["predictions"]["layout"] == "score"
    assert health["ground_truth"]["layout"] == "graded"
    assert health["ground_truth"]["id_types"] == {"user": "String", "item": "Int64"}
    grades = dict(truth.group_by("rating").len().iter_rows())
    relevance = health["ground_truth"]["relevance"]
    assert relevance == {"distinct": 5, "counts": {str(g): n for g, n in sorted(grades.items())}}
    predicted = set(preds.get_column("user_id"))
    truth_users = set(truth.get_column("user_id"))
    users = model["users"]
    assert users["in_both"] == len(predicted & truth_users)
    only = sorted(predicted - truth_users)
    assert users["only_in_predictions"] == {"count": len(only), "examples": only[:3]}
    assert users["no_relevant"]["relevance_threshold"] == 4.0
    assert users["no_relevant"]["rule"] == "skip"
    assert model["ids"]["user"] == {
        "types": {"predictions": "String", "ground truth": "String"},
        "compared_as": "text",
        "mixed": False,
    }
    lengths = model["predictions"]["list_length"]
    assert lengths["largest_cutoff"] == 20
    assert lengths["shorter_than_cutoff"] == 0


def test_optional_inputs_are_summed_up() -> None:
    """beyond.yaml: the catalog and the log, and the recommended items not in the catalog."""
    result = validate("configs/beyond.yaml", "--format", "json")
    assert result.exit_code == 0, result.stderr
    health = json.loads(result.stdout)
    assert list(health["optional"]) == ["catalog", "interactions"]
    catalog = pl.read_ndjson(SAMPLE / "catalog.jsonl")
    log = pl.read_csv(SAMPLE / "interactions.csv")
    assert health["optional"]["catalog"]["rows"] == catalog.height
    assert health["optional"]["catalog"]["items"] == catalog.get_column("item_id").n_unique()
    assert health["optional"]["interactions"]["rows"] == log.height
    assert health["optional"]["interactions"]["users"] == log.get_column("user_id").n_unique()
    recommended = set(pl.read_csv(SAMPLE / "predictions.csv").get_column("item_id"))
    unknown = recommended - set(catalog.get_column("item_id"))
    outside = health["models"]["model"]["items"]["outside_universe"]
    assert outside == {
        "universe": "catalog",
        "count": len(unknown),
        "examples": sorted(unknown)[:3],
    }


def test_several_models_are_each_checked() -> None:
    result = validate("configs/compare.yaml", "--format", "json")
    assert result.exit_code == 0, result.stderr
    health = json.loads(result.stdout)
    assert list(health["models"]) == ["popular", "model"]
    popular = pl.read_csv(SAMPLE / "popular_predictions.csv")
    block = health["models"]["popular"]["predictions"]
    assert block["path"].endswith("popular_predictions.csv")
    assert block["items"] == popular.get_column("item_id").n_unique()
    # cutoffs: [10]: the lists are ranked to depth 10, as run ranks them
    top = popular.sort(["score", "item_id"], descending=True).group_by("user_id").head(10)
    items = health["models"]["popular"]["items"]
    assert items["depth"] == 10
    assert items["recommended"] == top.get_column("item_id").n_unique()


# -- errors: exit 2 with run's message -----------------------------------------------------


def same_error_as_run(config: Path) -> str:
    """validate and run both exit 2 with the same message; validate prints nothing else."""
    checked = validate(config)
    assert_user_error(checked)
    ran = invoke("run", config)
    assert_user_error(ran)
    assert checked.stderr == ran.stderr
    return " ".join(checked.stderr.split())  # one line: the console wraps long messages


def test_missing_predictions_file(tmp_path: Path) -> None:
    config = hand_case(tmp_path)
    (tmp_path / "predictions.csv").unlink()
    message = same_error_as_run(config)
    assert message == (
        f"error: predictions file {tmp_path / 'predictions.csv'} does not exist. Fix "
        "predictions.path in the config (relative paths are read from the config file's "
        "folder)."
    )


def test_missing_column(tmp_path: Path) -> None:
    columns = {"path": "predictions.csv", "columns": {"item": "itm"}}
    config = hand_case(tmp_path, predictions=columns)
    message = same_error_as_run(config)
    assert message == (
        f"error: predictions file {tmp_path / 'predictions.csv'} has no column 'itm' (set by "
        "predictions.columns.item). Did you mean 'item'? Its columns are: user, item, score. "
        "Set predictions.columns.item to one of them."
    )


def test_duplicates_under_duplicates_error(tmp_path: Path) -> None:
    config = hand_case(tmp_path, rows=PREDICTIONS_CSV + "u1,a,0.1\n")
    message = same_error_as_run(config)
    assert message == (
        f"error: predictions file {tmp_path / 'predictions.csv'}: 1 (user, item) pair(s) appear "
        "more than once, e.g. user 'u1', item 'a' (2 rows). Remove the duplicates, or set "
        "conventions.duplicates to say which row counts."
    )


def test_duplicates_with_a_policy_pass_and_are_counted(tmp_path: Path) -> None:
    config = hand_case(
        tmp_path,
        rows=PREDICTIONS_CSV + "u1,a,0.1\n",
        truth_rows=TRUTH_CSV + "u2,d\nu2,d\n",
        conventions={"duplicates": "first", "truth_duplicates": "max"},
    )
    output = passes(config)
    assert cells(output, "repeated (user, item) rows") == ["1", "2"]
    assert cells(output, "rows") == ["6", "5"]


def test_null_user_ids(tmp_path: Path) -> None:
    config = hand_case(tmp_path, rows=PREDICTIONS_CSV + ",f,0.3\n")
    message = same_error_as_run(config)
    assert message == (
        f"error: predictions file {tmp_path / 'predictions.csv'}: column 'user' has 1 null "
        "value(s); drop or fill those rows."
    )


def test_float_ids_are_refused(tmp_path: Path) -> None:
    predictions = "user,item,score\n1.0,10,0.9\n2.0,11,0.8\n"
    config = hand_case(tmp_path, rows=predictions, truth_rows="user,item\n1,10\n2,12\n")
    message = same_error_as_run(config)
    assert message == (
        f"error: predictions file {tmp_path / 'predictions.csv'}: column 'user' holds Float64 "
        "values; ids must be integers or strings. Fix the column (e.g. write ids as integers, "
        "not 1.0)."
    )


def test_config_error(tmp_path: Path) -> None:
    config = hand_case(tmp_path, metric=["ndcg"])
    message = same_error_as_run(config)
    assert message.startswith(f"error: {config}: the config is not valid: metric: unknown key")
    assert "Did you mean 'metrics'?" in message


def test_no_user_in_both_files(tmp_path: Path) -> None:
    config = hand_case(tmp_path, truth_rows="user,item\nu8,a\nu9,d\n")
    message = same_error_as_run(config)
    assert message.startswith("error: no user appears in both")
    assert "(users e.g. 'u1', 'u2')" in message


def test_metric_needing_a_missing_input(tmp_path: Path) -> None:
    config = hand_case(tmp_path, metrics=["novelty@2"])
    message = same_error_as_run(config)
    assert message == (
        "error: novelty@2 needs the interactions input, which the config does not give. Add "
        "it (see docs/metrics.md, 'Beyond accuracy')."
    )


def test_rating_without_a_prediction(tmp_path: Path) -> None:
    """unpredicted: error (the default) is checked as run checks it."""
    config = hand_case(
        tmp_path,
        truth_rows="user,item,rating\nu1,b,4\nu2,d,5\nu2,f,3\n",
        ground_truth={"path": "truth.csv", "columns": {"relevance": "rating"}},
        metrics=["rmse"],
    )
    message = same_error_as_run(config)
    assert "1 rated (user, item) pair(s) have no prediction, e.g. user 'u2', item 'f'" in message


def test_clicks_that_are_not_0_or_1(tmp_path: Path) -> None:
    config = hand_case(
        tmp_path,
        truth_rows="user,item,click\nu1,a,1\nu2,d,2\n",
        ground_truth={"path": "truth.csv", "columns": {"relevance": "click"}},
        metrics=["ctr"],
    )
    message = same_error_as_run(config)
    assert "ctr needs every click 0 or 1, and 1 row(s) are not" in message


def test_second_model_file_missing(tmp_path: Path) -> None:
    write(tmp_path / "a.csv", PREDICTIONS_CSV)
    config = hand_case(
        tmp_path,
        predictions={"models": {"a": "a.csv", "b": "b.csv"}},
        metrics=["precision@1"],
    )
    message = same_error_as_run(config)
    assert message.startswith(f"error: predictions file {tmp_path / 'b.csv'} does not exist.")


def test_second_model_with_duplicates(tmp_path: Path) -> None:
    write(tmp_path / "a.csv", PREDICTIONS_CSV)
    write(tmp_path / "b.csv", PREDICTIONS_CSV + "u2,d,0.1\n")
    config = hand_case(
        tmp_path,
        predictions={"models": {"a": "a.csv", "b": "b.csv"}},
        metrics=["precision@1"],
    )
    message = same_error_as_run(config)
    assert f"predictions file {tmp_path / 'b.csv'}: 1 (user, item) pair(s)" in message


# -- warnings: run accepts, validate exits 0 and says what looks wrong -----------------------


def warnings_of(config: Path) -> list[str]:
    result = validate(config, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert invoke("run", config).exit_code in (0, 1)  # run evaluates it too
    found: list[str] = json.loads(result.stdout)["warnings"]
    return found


def test_integer_and_text_ids_are_compared_as_text(tmp_path: Path) -> None:
    """Integer user ids in the predictions, text in the ground truth: run aligns them as
    text (7 matches "7"), so both commands accept the files; validate warns."""
    predictions = "user,item,score\n7,a,0.9\n8,b,0.8\n"
    config = hand_case(
        tmp_path,
        rows=predictions,
        truth_rows="user,item\nu7,a\n7,a\n8,c\n",
        metrics=["precision@1"],
    )
    (warning,) = warnings_of(config)
    assert warning == (
        "the user ids are integers in one file and text in another (predictions Int64, "
        'ground truth String); run compares them as text, so 7 matches "7" but not "07". '
        "Check that every file writes the ids the same way."
    )
    health = json.loads(validate(config, "--format", "json").stdout)
    assert health["models"]["model"]["ids"]["user"]["compared_as"] == "text"
    assert health["models"]["model"]["users"]["in_both"] == 2  # 7 and 8 matched


def test_tiny_user_overlap(tmp_path: Path) -> None:
    truth = "user,item\n" + "".join(f"t{i},a\n" for i in range(20)) + "u1,b\n"
    config = hand_case(tmp_path, truth_rows=truth)
    found = warnings_of(config)
    assert found[0] == (
        "only 1 of the 21 users in the ground truth have recommendations. Check "
        "predictions.columns.user and ground_truth.columns.user, and that both files hold "
        "the same users."
    )


def test_most_recommended_items_absent_from_the_ground_truth(tmp_path: Path) -> None:
    """validate gives run's unknown_items warning, at the config's threshold."""
    truth = "user,item\nu1,b\nu2,zz\n"
    # the top-2 lists (ndcg@2) hold a, b (u1) and d, e (u2); only b is in the ground truth
    assert warnings_of(hand_case(tmp_path, truth_rows=truth)) == []  # 0.75 <= 0.9
    config = hand_case(tmp_path, truth_rows=truth, unknown_items={"warn": 0.7})
    (warning,) = warnings_of(config)
    expected = (
        "3 of the 4 recommended items (75%) are not in the ground truth (e.g. 'a', 'd', "
        "'e'). If that is unexpected, check that the item ids of both files match "
        "(predictions.columns.item, ground_truth.columns.item, and their types); "
        "unknown_items.warn sets when this warning shows."
    )
    assert warning == expected
    ran = invoke("run", config, "--format", "json")
    assert json.loads(ran.stdout)["warnings"] == [expected]
    assert ran.stderr == f"warning: {expected}\n"


ALL_ITEMS = "user,item\nu1,a\nu1,b\nu1,c\nu2,d\nu2,e\n"  # every recommended item


def test_lists_shorter_than_the_largest_cutoff(tmp_path: Path) -> None:
    """u1 has 3 recommendations, u2 has 2: one list is shorter than precision@3's k."""
    config = hand_case(tmp_path, truth_rows=ALL_ITEMS, metrics=["precision@3"])
    (warning,) = warnings_of(config)
    assert warning == (
        "1 of the 2 users in both files have fewer than 3 recommendations, the largest "
        "cutoff. Check how many items the model was asked for."
    )


def test_warnings_are_printed_before_the_verdict(tmp_path: Path) -> None:
    config = hand_case(tmp_path, truth_rows=ALL_ITEMS, metrics=["precision@3"])
    output = passes(config)
    text = " ".join(output.split())
    assert "warning: 1 of the 2 users in both files have fewer than 3 recommendations" in text
    assert text.index("warning:") < text.index(VERDICT)
    assert output.splitlines()[-1] == f"{VERDICT} (1 warning)"


# -- validate never computes a metric ---------------------------------------------------------


@pytest.mark.parametrize("config", ["configs/quickstart.yaml", "configs/beyond.yaml"])
def test_no_metric_is_computed(config: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The evaluation entry points raise, and no collected frame holds a metric column."""
    import receval_cli.analysis.runs
    import receval_cli.evaluation.assembly
    import receval_cli.evaluation.global_metrics

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("validate computed a metric")

    for module, name in (
        (receval_cli.evaluation.assembly, "evaluate_inputs"),
        (receval_cli.evaluation.assembly, "finish"),
        (receval_cli.analysis.runs, "evaluate_config"),
        (receval_cli.evaluation.global_metrics, "global_values"),
    ):
        monkeypatch.setattr(module, name, forbidden)
    collected: list[str] = []
    collect_all, collect = pl.collect_all, pl.LazyFrame.collect

    def recording(original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            result = original(*args, **kwargs)
            for frame in result if isinstance(result, list) else [result]:
                collected.extend(frame.columns)
            return result

        return wrapper

    monkeypatch.setattr(pl, "collect_all", recording(collect_all))
    monkeypatch.setattr(pl.LazyFrame, "collect", recording(collect))
    passes(config)
    from receval_cli.config.loading import load_config

    metrics = {str(s) for s in load_config(Path(config)).specs}
    assert collected  # the checks did run
    assert not metrics & set(collected)


# -- options ----------------------------------------------------------------------------------


def test_verbose_logs_each_model_on_stderr() -> None:
    result = validate("configs/compare.yaml", "--verbose")
    assert result.exit_code == 0
    logged = [line.split(" INFO ", 1)[1] for line in result.stderr.splitlines()]
    assert [line.split(":")[0] for line in logged if ": done in" in line] == [
        "check model popular",
        "check model model",
    ]


def test_no_color() -> None:
    """--no-color drops the colours (bold stays, as NO_COLOR asks)."""
    colour = re.compile(r"\x1b\[[0-9;]*3[0-9]m")  # a foreground colour
    coloured = invoke("validate", QUICKSTART, env={"FORCE_COLOR": "1"})
    assert colour.search(coloured.stdout)
    plain = invoke("validate", QUICKSTART, "--no-color", env={"FORCE_COLOR": "1"})
    assert not colour.search(plain.stdout)
    assert f"\x1b[1m{VERDICT}\x1b[0m" in plain.stdout


def test_preset_option_is_run_s(tmp_path: Path) -> None:
    config = hand_case(tmp_path)
    assert_user_error(validate(config, "--preset", "nope"), "preset")


def test_nan_scores(tmp_path: Path) -> None:
    config = hand_case(tmp_path, rows=PREDICTIONS_CSV + "u2,f,NaN\n")
    message = same_error_as_run(config)
    assert message == (
        f"error: predictions file {tmp_path / 'predictions.csv'}: column 'score' has 1 NaN "
        "value(s), which cannot be ranked or compared; drop or fill those rows."
    )


def test_partitioned_runs_accept_click_metrics_as_run_does(tmp_path: Path) -> None:
    """Click metrics run on partitions: validate accepts them, as run does."""
    config = hand_case(tmp_path, partitions=2, metrics=["ctr"])
    assert invoke("validate", config).exit_code == 0
    assert invoke("run", config, "-q").exit_code == 0


def test_partitioned_runs_with_intervals_and_several_models_validate(tmp_path: Path) -> None:
    """Intervals and several models run on partitions: validate accepts them, as run does."""
    config = hand_case(
        tmp_path,
        partitions=2,
        confidence={"resamples": 10},
        predictions={"models": {"a": "predictions.csv", "b": "predictions.csv"}},
    )
    assert invoke("validate", config).exit_code == 0
    assert invoke("run", config, "-q").exit_code == 0


def test_relative_gate_needs_a_baseline(tmp_path: Path) -> None:
    """One model and a gate against the baseline: run needs --baseline-report, so does
    validate; with the saved report, both accept the config."""
    config = hand_case(tmp_path, gates={"precision@1": {"max_drop": 0.1}})
    message = same_error_as_run(config)
    assert "gates.precision@1 compares with a baseline" in message
    plain = write_config(
        tmp_path,
        {
            "predictions": {"path": "predictions.csv"},
            "ground_truth": {"path": "truth.csv"},
            "metrics": ["precision@1"],
        },
        "plain.yaml",
    )
    saved = tmp_path / "saved.json"
    assert invoke("run", plain, "--format", "json", "--output", saved).exit_code == 0
    assert invoke("run", config, "--baseline-report", saved).exit_code == 0
    passes(config, "--baseline-report", saved)


def test_segment_attribute_missing(tmp_path: Path) -> None:
    config = hand_case(tmp_path, segment_by=["country"])
    message = same_error_as_run(config)
    assert message.startswith(
        "error: segment_by names 'country', which is not a column of the ground truth"
    )
