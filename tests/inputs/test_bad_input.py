"""Bad input: one test per case. Each exits 2 with one `error:` line on stderr that names
the file, the column or key, what was found and the fix; no traceback; and no report
is written (an earlier report at the --output path is left as it was).
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import (
    NDCG_2,
    PREDICTIONS_CSV,
    TRUTH_CSV,
    assert_user_error,
    assert_validate_refuses,
    hand_case,
    invoke,
    run_json,
    write,
    write_config,
)

from receval_cli.config.model import Config

EARLIER = "an earlier report: must survive a failed run\n"
ONE_OF_TWO_AT_TOP = 1 / (1 + 1 / math.log2(3))  # NDCG@2 of [relevant] against 2 relevant


def fails(config: Path, *words: str, folder: Path | None = None) -> str:
    """Run CONFIG with --output over an earlier report; check the error and the report;
    then `receval validate CONFIG`: the same refusal, the same message (validate is run
    without the evaluation: tests/cli/test_validate_refuses_as_run.py)."""
    out = (folder or config.parent) / "out"
    out.mkdir(exist_ok=True)
    target = write(out / "report.json", EARLIER)
    result = invoke("run", config, "--format", "json", "--output", target)
    message = assert_user_error(result, *words)
    assert target.read_text(encoding="utf-8") == EARLIER
    assert sorted(p.name for p in out.iterdir()) == ["report.json"]  # no temporary file left
    assert_validate_refuses(config, message)
    return message


def config_with(folder: Path, **overrides: Any) -> Path:
    """A valid two-user config with some top-level keys replaced.

    predictions.csv and truth.csv hold the hand case unless a test wrote them first.
    """
    for name, content in (("predictions.csv", PREDICTIONS_CSV), ("truth.csv", TRUTH_CSV)):
        if not (folder / name).exists():
            write(folder / name, content)
    config: dict[str, Any] = {
        "predictions": {"path": "predictions.csv"},
        "ground_truth": {"path": "truth.csv"},
        "metrics": ["precision@1", "ndcg@2"],
    }
    config.update(overrides)
    return write_config(folder, config)


def with_predictions(folder: Path, name: str, content: str | bytes, **columns: str) -> Path:
    write(folder / name, content)
    predictions: dict[str, Any] = {"path": name}
    if columns:
        predictions["columns"] = columns
    return config_with(folder, predictions=predictions)


def with_truth(folder: Path, name: str, content: str | bytes, **columns: str) -> Path:
    write(folder / name, content)
    truth: dict[str, Any] = {"path": name}
    if columns:
        truth["columns"] = columns
    return config_with(folder, ground_truth=truth)


VALID_YAML = (
    "predictions: {path: predictions.csv}\nground_truth: {path: truth.csv}\nmetrics: [ndcg@2]\n"
)


def raw_config(folder: Path, text: str | bytes) -> Path:
    write(folder / "predictions.csv", PREDICTIONS_CSV)
    write(folder / "truth.csv", TRUTH_CSV)
    return write(folder / "config.yaml", text)


# --- the config file -------------------------------------------------------------------


def test_config_file_missing(tmp_path: Path) -> None:
    fails(tmp_path / "nope.yaml", "nope.yaml", "does not exist", "Check the path")


def test_config_is_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "configs"
    folder.mkdir()
    fails(folder, str(folder), "is a folder", "Name the YAML file", folder=tmp_path)


def test_yaml_syntax_error(tmp_path: Path) -> None:
    config = raw_config(tmp_path, "predictions: {path: predictions.csv\nground_truth: x\n")
    fails(config, "config.yaml", "invalid YAML", "line 2", "indentation")


def test_yaml_tab_indentation(tmp_path: Path) -> None:
    config = raw_config(tmp_path, "predictions:\n\tpath: predictions.csv\n")
    fails(config, "config.yaml", "invalid YAML", "line 2", "spaces, not tabs")


def test_duplicate_yaml_key(tmp_path: Path) -> None:
    config = raw_config(tmp_path, VALID_YAML + "metrics: [mrr]\n")
    fails(config, "config.yaml", "line 4", "'metrics' appears twice", "Remove one of them")


def test_duplicate_yaml_key_nested(tmp_path: Path) -> None:
    text = VALID_YAML + "conventions:\n  gain: linear\n  gain: exponential\n"
    fails(raw_config(tmp_path, text), "config.yaml", "line 6", "'gain' appears twice")


def test_python_object_tag_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    text = VALID_YAML + f"output: !!python/object/apply:os.system ['touch {marker}']\n"
    fails(raw_config(tmp_path, text), "config.yaml", "python/object", "never loaded")
    assert not marker.exists()


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("- predictions\n- ground_truth\n", "found a list"),
        ("just some text\n", "found a str"),
        ("", "found an empty file"),
        ("# only a comment\n", "found an empty file"),
    ],
)
def test_config_not_a_mapping(tmp_path: Path, text: str, found: str) -> None:
    config = raw_config(tmp_path, text)
    fails(config, "config.yaml", "must be a mapping", found, "configs/quickstart.yaml")


def test_config_not_utf8(tmp_path: Path) -> None:
    config = raw_config(tmp_path, VALID_YAML.encode() + b"# caf\xe9\n")
    fails(config, "config.yaml", "UTF-8")


def test_required_key_missing(tmp_path: Path) -> None:
    config = raw_config(tmp_path, "ground_truth: {path: truth.csv}\nmetrics: [ndcg@2]\n")
    fails(config, "config.yaml", "predictions: required key is missing")


def test_empty_metric_list(tmp_path: Path) -> None:
    fails(config_with(tmp_path, metrics=[]), "config.yaml", "metrics", "at least 1 item")


def test_unknown_top_level_key(tmp_path: Path) -> None:
    config = raw_config(tmp_path, VALID_YAML + "metric: [mrr]\n")
    fails(
        config,
        "config.yaml",
        "unknown key 'metric'",
        "Did you mean 'metrics'?",
        # every top-level key of the config, sorted (the model is the list's one source)
        f"Valid keys here: {', '.join(sorted(Config.model_fields))}.",
        "partitions, pr_curve, predictions",
    )


def test_unknown_key_in_conventions(tmp_path: Path) -> None:
    config = config_with(tmp_path, conventions={"tie_brake": "item_asc"})
    fails(
        config,
        "config.yaml",
        "conventions.tie_brake",
        "unknown key 'tie_brake'",
        "Did you mean 'tie_break'?",
        "relevance_threshold",
    )


def test_unknown_key_in_columns(tmp_path: Path) -> None:
    config = config_with(
        tmp_path, predictions={"path": "predictions.csv", "columns": {"scor": "x"}}
    )
    fails(config, "predictions.columns.scor", "Did you mean 'score'?", "item, items, rank, score")


@pytest.mark.parametrize(
    ("conventions", "words"),
    [
        ({"tie_break": "random"}, ["conventions.tie_break", "'random'", "'item_desc'"]),
        ({"duplicates": "last"}, ["conventions.duplicates", "'last'", "'max_score'"]),
        ({"relevance_threshold": "high"}, ["conventions.relevance_threshold", "'high'", "number"]),
    ],
)
def test_bad_convention_value(
    tmp_path: Path, conventions: dict[str, str], words: list[str]
) -> None:
    fails(config_with(tmp_path, conventions=conventions), "config.yaml", *words)


def test_two_prediction_layouts(tmp_path: Path) -> None:
    predictions = {"path": "predictions.csv", "columns": {"score": "score", "rank": "score"}}
    config = config_with(tmp_path, predictions=predictions)
    fails(config, "predictions.columns", "give only one of score, rank or items", "score, rank")


# --- metrics and gates -----------------------------------------------------------------


def test_unknown_metric(tmp_path: Path) -> None:
    fails(
        config_with(tmp_path, metrics=["ndcg@2", "ndgc@10"]),
        "config.yaml",
        "metrics[1]",
        "unknown metric 'ndgc'",
        "Did you mean 'ndcg'?",
        "Known metrics:",
        "receval metrics",
    )


@pytest.mark.parametrize("spec", ["ndcg@0", "ndcg@-3", "ndcg@ten"])
def test_bad_cutoff_in_spec(tmp_path: Path, spec: str) -> None:
    raw = spec.split("@")[1]
    fails(
        config_with(tmp_path, metrics=[spec]),
        "config.yaml",
        "metrics[0]",
        f"'{spec}'",
        f"is '{raw}'",
        "positive integer",
    )


@pytest.mark.parametrize("cutoff", [0, -5])
def test_bad_cutoff_in_shorthand(tmp_path: Path, cutoff: int) -> None:
    config = config_with(tmp_path, metrics=["ndcg"], cutoffs=[5, cutoff])
    fails(config, "config.yaml", "cutoffs[1]", f"found {cutoff}", "greater than 0")


@pytest.mark.parametrize("cutoffs", [[0], [-1], [True], ["ten"]])
def test_bad_cutoff_in_mapping(tmp_path: Path, cutoffs: list[Any]) -> None:
    config = config_with(tmp_path, metrics=[{"name": "ndcg", "cutoffs": cutoffs}])
    fails(config, "config.yaml", "metrics[0]", f"cutoff {cutoffs[0]!r}", "positive integer")


def test_both_k_and_cutoffs(tmp_path: Path) -> None:
    config = config_with(tmp_path, metrics=[{"name": "ndcg", "k": 2, "cutoffs": [3]}])
    fails(config, "metrics[0]", "give either k or cutoffs, not both")


def test_cutoff_on_a_metric_without_one(tmp_path: Path) -> None:
    config = config_with(tmp_path, metrics=["r_precision@5"])
    fails(config, "metrics[0]", "'r_precision@5'", "takes no cutoff", "write 'r_precision'")


def test_metric_mapping_without_a_name(tmp_path: Path) -> None:
    config = config_with(tmp_path, metrics=[{"cutoffs": [2]}])
    fails(config, "metrics[0]", "needs a name", "{name: ndcg, cutoffs: [10]}")


def test_misspelled_key_in_a_metric_mapping(tmp_path: Path) -> None:
    """`cutof: [5]` is a typo of cutoffs, not a parameter with a list value."""
    config = config_with(tmp_path, metrics=[{"name": "ndcg", "cutof": [5]}])
    fails(config, "metrics[0]", "'cutof'", "cutoffs")


@pytest.mark.parametrize(
    "metric", ["ndcg@2(gian=exponential)", {"name": "ndcg", "k": 2, "gian": "exponential"}]
)
def test_unknown_metric_parameter(tmp_path: Path, metric: str | dict[str, Any]) -> None:
    fails(
        config_with(tmp_path, metrics=[metric]),
        "config.yaml",
        "metrics[0]",
        "no parameter 'gian'",
        "gain, below_threshold, gains, discount, ideal",
        "Did you mean 'gain'?",
    )


@pytest.mark.parametrize(
    ("metric", "words"),
    [
        ("ndcg@2(gain=expo)", ["parameter 'gain'", "'expo'", "choose one of linear, exponential"]),
        ("ndcg@2(gain=exponentail)", ["'exponentail'", "Did you mean 'exponential'?"]),
        ("fbeta@2(beta=-1)", ["parameter 'beta'", "'-1'", "positive number"]),
        ("fbeta@2(beta=big)", ["parameter 'beta'", "'big'", "positive number"]),
        ("ndcg@10(gain)", ["'gain' is not a parameter", "name=value"]),
    ],
)
def test_bad_parameter_value(tmp_path: Path, metric: str, words: list[str]) -> None:
    fails(config_with(tmp_path, metrics=[metric]), "config.yaml", "metrics[0]", *words)


def test_fbeta_without_beta(tmp_path: Path) -> None:
    fails(
        config_with(tmp_path, metrics=["fbeta@2"]),
        "config.yaml",
        "metrics[0]",
        "'fbeta@2'",
        "needs the parameter 'beta'",
        "fbeta@10(beta=...)",
    )


def test_gate_on_a_metric_not_computed(tmp_path: Path) -> None:
    config = config_with(tmp_path, metrics=["ndcg@2"], gates={"ndcg@10": {"min": 0.1}})
    fails(
        config,
        "config.yaml",
        "gates.ndcg@10",
        "no such metric",
        "Did you mean 'ndcg@2'?",
        "Gate one of: ndcg@2",
        "add 'ndcg@10' to metrics",
    )


def test_gate_on_an_unknown_metric(tmp_path: Path) -> None:
    config = config_with(tmp_path, metrics=["ndcg@2"], gates={"ndgc@2": {"min": 0.1}})
    fails(config, "gates.ndgc@2", "no such metric", "Did you mean 'ndcg@2'?")


def test_gate_without_min_or_max(tmp_path: Path) -> None:
    config = config_with(tmp_path, metrics=["ndcg@2"], gates={"ndcg@2": {}})
    fails(
        config,
        "config.yaml",
        "gates.ndcg@2",
        "needs min, max, max_drop, max_relative_drop or no_significant_drop",
        "{min: 0.3}",
    )


def test_gate_with_a_misspelled_bound(tmp_path: Path) -> None:
    config = config_with(tmp_path, metrics=["ndcg@2"], gates={"ndcg@2": {"minimum": 0.3}})
    fails(
        config,
        "gates.ndcg@2.minimum",
        "unknown key 'minimum'",
        "Did you mean 'min'?",
        "Valid keys here: max, max_drop, max_relative_drop, min, model, no_significant_drop, "
        "on_null, segment.",
    )


def test_gate_bound_not_a_number(tmp_path: Path) -> None:
    config = config_with(tmp_path, metrics=["ndcg@2"], gates={"ndcg@2": {"min": "high"}})
    fails(config, "gates.ndcg@2.min", "'high'", "number")


# --- input files -----------------------------------------------------------------------


def test_predictions_file_missing(tmp_path: Path) -> None:
    config = config_with(tmp_path, predictions={"path": "nope.csv"})
    fails(
        config,
        "predictions file",
        str(tmp_path / "nope.csv"),
        "does not exist",
        "predictions.path",
        "relative paths are read from the config file's folder",
    )


def test_ground_truth_file_missing(tmp_path: Path) -> None:
    config = config_with(tmp_path, ground_truth={"path": "nope.parquet"})
    fails(config, "ground truth file", "nope.parquet", "does not exist", "ground_truth.path")


def test_input_file_is_a_folder(tmp_path: Path) -> None:
    (tmp_path / "predictions.d.csv").mkdir()
    config = config_with(tmp_path, predictions={"path": "predictions.d.csv"})
    fails(config, "predictions.d.csv", "is a folder", "Point predictions.path at a file")


def test_empty_file(tmp_path: Path) -> None:
    config = with_predictions(tmp_path, "empty.csv", "")
    fails(config, "empty.csv", "empty (0 bytes)", "Write the data first")


@pytest.mark.parametrize("role", ["predictions", "ground_truth"])
def test_header_only_csv(tmp_path: Path, role: str) -> None:
    if role == "predictions":
        config = with_predictions(tmp_path, "header.csv", "user,item,score\n")
    else:
        config = with_truth(tmp_path, "header.csv", "user,item\n")
    fails(config, "header.csv", "no rows", "Write the data first")


def test_unknown_extension_without_format(tmp_path: Path) -> None:
    config = with_predictions(tmp_path, "predictions.txt", PREDICTIONS_CSV)
    fails(
        config,
        "predictions.txt",
        "cannot tell the format",
        "'.txt'",
        "predictions.format",
        "csv, tsv, parquet, jsonl",
    )


def test_unknown_extension_with_format_is_fine(tmp_path: Path) -> None:
    write(tmp_path / "predictions.txt", PREDICTIONS_CSV)
    config = config_with(tmp_path, predictions={"path": "predictions.txt", "format": "csv"})
    assert run_json(config)["models"]["model"]["metrics"]["ndcg@2"] == pytest.approx(NDCG_2)


@pytest.mark.own_process  # a polars query fails (tests/support/process_isolation.py)
def test_corrupt_parquet(tmp_path: Path) -> None:
    frame = pl.DataFrame({"user": ["u1"], "item": ["b"]})
    frame.write_parquet(tmp_path / "whole.parquet")
    truncated = (tmp_path / "whole.parquet").read_bytes()[:-20]
    config = with_truth(tmp_path, "truth.parquet", truncated)
    fails(
        config,
        "ground truth file",
        "truth.parquet",
        "cannot be read as parquet",
        "does not end with Parquet's marker 'PAR1'",
        "Write the file again",
    )


@pytest.mark.own_process  # a polars query fails (tests/support/process_isolation.py)
def test_ragged_csv_names_the_file(tmp_path: Path) -> None:
    config = with_predictions(
        tmp_path, "ragged.csv", "user,item,score\nu1,a,0.9\nu2,d,0.9,extra,fields\n"
    )
    fails(config, "ragged.csv")


@pytest.mark.own_process  # a polars query fails (tests/support/process_isolation.py)
def test_invalid_utf8_in_a_csv(tmp_path: Path) -> None:
    config = with_predictions(tmp_path, "latin1.csv", b"user,item,score\nu1,caf\xe9,0.9\n")
    fails(config, "predictions file", "latin1.csv", "utf-8")


def test_column_not_found(tmp_path: Path) -> None:
    config = with_predictions(tmp_path, "predictions.csv", PREDICTIONS_CSV, score="scores")
    fails(
        config,
        "predictions.csv",
        "no column 'scores'",
        "predictions.columns.score",
        "Did you mean 'score'?",
        "Its columns are: user, item, score",
    )


def test_ground_truth_column_not_found(tmp_path: Path) -> None:
    config = with_truth(tmp_path, "truth.csv", "user,item,rating\nu1,b,5\n", relevance="ratng")
    fails(
        config,
        "truth.csv",
        "no column 'ratng'",
        "ground_truth.columns.relevance",
        "Did you mean 'rating'?",
        "Its columns are: user, item, rating",
    )


def test_no_score_rank_or_items_column(tmp_path: Path) -> None:
    config = with_predictions(tmp_path, "predictions.csv", "user,item,value\nu1,b,1\n")
    fails(config, "predictions.csv", "user, item, value", "predictions.columns.score")


def test_column_with_markup_like_name(tmp_path: Path) -> None:
    """Names from the data are printed as they are, never read as rich markup."""
    config = with_predictions(tmp_path, "predictions.csv", "user,item,[/x]\nu1,b,1\n", score="s")
    fails(config, "predictions.csv", "no column 's'", "user, item, [/x]")


def test_metric_name_with_markup_like_text(tmp_path: Path) -> None:
    fails(config_with(tmp_path, metrics=["[/oops]"]), "metrics[0]", "'[/oops]'")


def test_path_with_brackets_is_shown_as_written(tmp_path: Path) -> None:
    (tmp_path / "exp[v2]").mkdir()
    config = config_with(tmp_path, predictions={"path": "exp[v2]/missing.csv"})
    fails(config, "exp[v2]/missing.csv", "does not exist")


def test_non_numeric_score_column(tmp_path: Path) -> None:
    config = with_predictions(tmp_path, "predictions.csv", "user,item,score\nu1,b,high\n")
    fails(config, "predictions.csv", "column 'score'", "String", "not numbers")


def test_non_numeric_relevance_column(tmp_path: Path) -> None:
    config = with_truth(tmp_path, "truth.csv", "user,item,rating\nu1,b,good\n", relevance="rating")
    fails(config, "truth.csv", "column 'rating'", "String", "not numbers")


@pytest.mark.parametrize(
    ("column", "content"),
    [("user", "user,item,score\n1.0,2,0.9\n"), ("item", "user,item,score\nu1,2.0,0.9\n")],
)
def test_float_ids(tmp_path: Path, column: str, content: str) -> None:
    config = with_predictions(tmp_path, "predictions.csv", content)
    fails(config, "predictions.csv", f"column '{column}'", "Float64", "integers or strings")


@pytest.mark.own_process  # a polars query fails (tests/support/process_isolation.py)
@pytest.mark.parametrize("column", ["user_id", "item"])
def test_jsonl_ids_beyond_64_bits_are_to_be_written_as_text(tmp_path: Path, column: str) -> None:
    """polars reads such a JSON number as a 128-bit integer: the message says what the
    column holds and to write the ids as text, not "conversion from `i128` to `i64`"."""
    big = 2**70
    rows = [{"user_id": 1, "item": 10, "score": 0.5}, {"user_id": 2, "item": 11, "score": 0.4}]
    rows[1][column] = big
    lines = "".join(json.dumps(row) + "\n" for row in rows)
    write(tmp_path / "truth.csv", "user,item\n1,10\n2,11\n")
    config = with_predictions(tmp_path, "p.jsonl", lines, user="user_id")
    message = fails(config)
    path = tmp_path / "p.jsonl"
    expected = (
        f"error: predictions file {path}: column '{column}' holds integers beyond 64 bits "
        f"(1 of 2 values, e.g. {big}), which no id column holds. Write the ids as text "
        f'(JSON strings: "{big}").\n'
    )
    assert message == expected, message


def test_float_ids_in_parquet_ground_truth(tmp_path: Path) -> None:
    pl.DataFrame({"user": [1.0, 2.0], "item": [1, 2]}).write_parquet(tmp_path / "truth.parquet")
    config = config_with(tmp_path, ground_truth={"path": "truth.parquet"})
    fails(config, "ground truth file", "truth.parquet", "column 'user'", "Float64", "not 1.0")


def test_null_user_ids(tmp_path: Path) -> None:
    content = "user_id,item,score\nu1,b,0.9\n,d,0.8\n,e,0.7\n"
    config = with_predictions(tmp_path, "predictions.csv", content, user="user_id")
    fails(config, "predictions.csv", "column 'user_id'", "2 null value(s)", "drop or fill")


def test_null_scores(tmp_path: Path) -> None:
    config = with_predictions(tmp_path, "predictions.csv", "user,item,score\nu1,b,\nu2,d,0.9\n")
    fails(config, "predictions.csv", "column 'score'", "1 null value(s)", "drop or fill")


def test_nan_scores(tmp_path: Path) -> None:
    content = "user,item,pred\nu1,b,NaN\nu2,d,0.9\n"
    config = with_predictions(tmp_path, "predictions.csv", content, score="pred")
    fails(config, "predictions.csv", "column 'pred'", "1 NaN value(s)", "drop or fill")


def test_null_relevance(tmp_path: Path) -> None:
    content = "user,item,rating\nu1,b,5\nu2,d,\n"
    config = with_truth(tmp_path, "truth.csv", content, relevance="rating")
    fails(config, "truth.csv", "column 'rating'", "1 null value(s)", "drop or fill")


def test_nan_relevance(tmp_path: Path) -> None:
    content = "user,item,rating\nu1,b,NaN\nu2,d,4\n"
    config = with_truth(tmp_path, "truth.csv", content, relevance="rating")
    fails(config, "truth.csv", "column 'rating'", "1 NaN value(s)")


def test_relevances_without_items(tmp_path: Path) -> None:
    config = with_truth(tmp_path, "truth.csv", TRUTH_CSV, relevances="r")
    fails(config, "ground_truth.columns.relevances", "ground_truth.columns.items")


def test_list_column_that_is_not_a_list(tmp_path: Path) -> None:
    # In CSV a list is text ("5" is a list of one); in Parquet it must be a list column.
    buffer = io.BytesIO()
    pl.DataFrame({"user": ["u1"], "items": [5]}).write_parquet(buffer)
    config = with_predictions(tmp_path, "lists.parquet", buffer.getvalue(), items="items")
    fails(config, "lists.parquet", "column 'items'", "Int64", "list column", "'|'")


# --- duplicates ------------------------------------------------------------------------

DUPLICATED_PREDICTIONS = "user,item,score\nu1,a,0.9\nu1,a,0.1\nu2,d,0.2\nu2,d,0.9\nu2,d,0.3\n"


def test_duplicate_predictions(tmp_path: Path) -> None:
    config = with_predictions(tmp_path, "predictions.csv", DUPLICATED_PREDICTIONS)
    fails(
        config,
        "predictions file",
        "predictions.csv",
        "2 (user, item) pair(s) appear more than once",
        "user 'u2', item 'd' (3 rows)",
        "user 'u1', item 'a' (2 rows)",
        "conventions.duplicates",
    )


def test_duplicate_ground_truth(tmp_path: Path) -> None:
    config = with_truth(tmp_path, "truth.csv", "user,item\nu1,b\nu1,b\nu2,d\n")
    fails(
        config,
        "ground truth file",
        "truth.csv",
        "1 (user, item) pair(s)",
        "user 'u1', item 'b' (2 rows)",
        "conventions.truth_duplicates",
    )


@pytest.mark.parametrize("policy", ["first", "max_score"])
def test_duplicates_convention_makes_the_case_pass(tmp_path: Path, policy: str) -> None:
    config = with_predictions(tmp_path, "predictions.csv", DUPLICATED_PREDICTIONS)
    text = config.read_text(encoding="utf-8") + f"conventions: {{duplicates: {policy}}}\n"
    config.write_text(text, encoding="utf-8")
    report = run_json(config)
    # either way u1's list is [a] (not relevant) and u2's is [d], with truth {d, f}:
    # ndcg@2 = (0 + 1 / (1 + 1/log2 3)) / 2
    assert report["models"]["model"]["metrics"]["ndcg@2"] == pytest.approx(
        ONE_OF_TWO_AT_TOP / 2, abs=1e-12
    )
    assert report["models"]["model"]["metrics"]["precision@1"] == pytest.approx(0.5)
    assert report["models"]["model"]["inputs"]["predictions"]["rows"] == 5
    assert report["conventions"]["duplicates"] == policy


def test_duplicates_first_keeps_the_first_row_in_file_order(tmp_path: Path) -> None:
    content = "user,item,score\nu1,a,0.1\nu1,b,0.5\nu1,a,0.9\nu2,d,0.9\n"
    config = with_predictions(tmp_path, "predictions.csv", content)
    config.write_text(config.read_text() + "conventions: {duplicates: first}\n")
    # first: a@0.1, so u1's list is b, a -> precision@1 = 1 for both users
    assert run_json(config)["models"]["model"]["metrics"]["precision@1"] == 1.0
    config.write_text(config.read_text().replace("first", "max_score"))
    # max_score: a@0.9, so u1's list is a, b -> precision@1 = (0 + 1) / 2
    assert run_json(config)["models"]["model"]["metrics"]["precision@1"] == 0.5


@pytest.mark.parametrize(("policy", "evaluated"), [("first", 1), ("max", 2)])
def test_truth_duplicates_convention_makes_the_case_pass(
    tmp_path: Path, policy: str, evaluated: int
) -> None:
    content = "user,item,grade\nu1,a,0\nu1,a,3\nu2,d,1\n"
    config = with_truth(tmp_path, "truth.csv", content, relevance="grade")
    config.write_text(config.read_text() + f"conventions: {{truth_duplicates: {policy}}}\n")
    report = run_json(config)
    # first keeps u1's a at grade 0: u1 has no relevant item and is skipped.
    # max keeps grade 3: u1's top item a is relevant. u2's top item d is relevant.
    assert report["models"]["model"]["users"]["evaluated"] == evaluated
    assert report["models"]["model"]["users"]["skipped"]["no_relevant"] == 2 - evaluated
    assert report["models"]["model"]["metrics"]["precision@1"] == 1.0
    assert report["conventions"]["truth_duplicates"] == policy


# --- list layouts ----------------------------------------------------------------------


def test_list_layout_with_a_user_on_two_rows(tmp_path: Path) -> None:
    content = (
        '{"user": "u1", "items": ["a", "b"]}\n'
        '{"user": "u1", "items": ["c"]}\n'
        '{"user": "u2", "items": ["d"]}\n'
    )
    config = with_predictions(tmp_path, "lists.jsonl", content, items="items")
    fails(config, "lists.jsonl", "one row per user", "3 rows hold 2 users", "Merge")


def test_ground_truth_list_layout_with_a_user_on_two_rows(tmp_path: Path) -> None:
    content = "user,items\nu1,b\nu1,c\nu2,d|f\n"
    config = with_truth(tmp_path, "truth.csv", content, items="items")
    fails(config, "truth.csv", "one row per user", "3 rows hold 2 users")


LIST_WITH_A_REPEAT = '{"user": "u1", "items": ["a", "b", "a"]}\n{"user": "u2", "items": ["d"]}\n'


def test_list_layout_with_a_repeated_item(tmp_path: Path) -> None:
    config = with_predictions(tmp_path, "lists.jsonl", LIST_WITH_A_REPEAT, items="items")
    fails(config, "lists.jsonl", "user 'u1', item 'a' (2 rows)", "conventions.duplicates")


@pytest.mark.parametrize("policy", ["first", "max_score"])
def test_list_layout_repeated_item_with_duplicates_convention(tmp_path: Path, policy: str) -> None:
    config = with_predictions(tmp_path, "lists.jsonl", LIST_WITH_A_REPEAT, items="items")
    config.write_text(config.read_text() + f"conventions: {{duplicates: {policy}}}\n")
    report = run_json(config)
    # both keep a at rank 1: u1 is [a, b] (b relevant), u2 is [d] of {d, f}
    u1 = (1 / math.log2(3)) / 1
    assert report["models"]["model"]["metrics"] == pytest.approx(
        {"precision@1": 0.5, "ndcg@2": (u1 + ONE_OF_TWO_AT_TOP) / 2}, abs=1e-12
    )


def test_list_lengths_do_not_match(tmp_path: Path) -> None:
    content = '{"user": "u1", "items": ["b", "c"], "grades": [3]}\n'
    config = with_truth(tmp_path, "truth.jsonl", content, items="items", relevances="grades")
    fails(config, "ground truth file", "truth.jsonl")


# --- users -----------------------------------------------------------------------------


def test_no_overlapping_users(tmp_path: Path) -> None:
    config = with_truth(tmp_path, "truth.csv", "user,item\nx1,b\nx2,d\n")
    fails(
        config,
        "no user appears in both",
        "predictions.csv",
        "truth.csv",
        "'u1', 'u2'",
        "'x1', 'x2'",
        "predictions.columns.user",
        "ground_truth.columns.user",
    )


def test_integer_and_padded_text_ids_do_not_overlap(tmp_path: Path) -> None:
    write(tmp_path / "predictions.csv", "user,item,score\n1,10,0.9\n")
    config = with_truth(tmp_path, "truth.jsonl", '{"user": "001", "item": "10"}\n')
    fails(config, "no user appears in both", "'1'", "'001'")


def test_no_user_left_to_evaluate(tmp_path: Path) -> None:
    content = "user,item,rating\nu1,b,3\nu2,d,2\n"
    config = with_truth(tmp_path, "truth.csv", content, relevance="rating")
    config.write_text(config.read_text() + "conventions: {relevance_threshold: 5}\n")
    fails(
        config,
        "no user could be evaluated",
        "2 have no item with relevance",
        "conventions.relevance_threshold",
    )


# --- the output ------------------------------------------------------------------------


def test_output_folder_does_not_exist(tmp_path: Path) -> None:
    config = hand_case(tmp_path)
    target = tmp_path / "missing" / "report.json"
    result = invoke("run", config, "--output", target)
    assert_user_error(result, str(target), "does not exist", f"mkdir -p {target.parent}")
    assert not target.parent.exists()


def test_output_folder_in_the_config_does_not_exist(tmp_path: Path) -> None:
    config = hand_case(tmp_path, output={"path": "missing/report.json", "format": "json"})
    result = invoke("run", config)
    assert_user_error(result, "missing/report.json", "does not exist", "mkdir -p")
    assert not (tmp_path / "missing").exists()


def test_output_is_a_folder(tmp_path: Path) -> None:
    config = hand_case(tmp_path)
    (tmp_path / "reports").mkdir()
    result = invoke("run", config, "--output", tmp_path / "reports")
    assert_user_error(result, "reports", "is a folder", "report.json")
    assert list((tmp_path / "reports").iterdir()) == []


def test_bad_data_writes_no_new_report(tmp_path: Path) -> None:
    """With no earlier report, a run that fails on its data leaves no file at all."""
    config = with_predictions(tmp_path, "predictions.csv", DUPLICATED_PREDICTIONS)
    target = tmp_path / "report.json"
    result = invoke("run", config, "--output", target)
    assert_user_error(result, "predictions.csv", "appear more than once")
    assert not target.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "config.yaml",
        "predictions.csv",
        "truth.csv",
    ]


def test_bad_format_option_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke("run", hand_case(tmp_path), "--format", "xml")
    assert result.exit_code == 2
    assert "'xml'" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_the_base_config_is_valid(tmp_path: Path) -> None:
    """Each failure above comes from the one change its test makes to this config."""
    report = run_json(config_with(tmp_path))
    assert report["models"]["model"]["metrics"] == pytest.approx(
        {"precision@1": 0.5, "ndcg@2": NDCG_2}
    )


@pytest.mark.parametrize(("first", "second"), [("mrr", "recip_rank"), ("map@2", "ap@2")])
def test_two_gates_on_one_metric_are_refused(tmp_path: Path, first: str, second: str) -> None:
    """Two spellings of one metric gated: the second gate replaced the first, unsaid."""
    metrics = ["mrr", "map@2"]
    gates = {first: {"min": 0.1}, second: {"min": 0.9}}
    config = config_with(tmp_path, metrics=metrics, gates=gates)
    fails(
        config,
        f"gates.{second} and gates.{first} gate the same metric, {first}.",
        f"Keep one gate for {first} (its bounds in one mapping).",
    )
