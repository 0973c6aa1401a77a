"""Segments: the users without a value are an explicit null group that no text
value collides with (a value `(none)` is its own segment, `group="(none)"`, on every
engine and every run), and a list or struct column as a segment attribute is refused
naming the file, the column, its type and segment_by."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import assert_user_error, hand_case, invoke, run_json, write_config

from receval_cli.evaluation.segment_split import segment_name, segment_value

# u1's group is the text (none); u2 has no value (an empty CSV field is a null)
TRUTH = 'user,item,group\nu1,b,(none)\nu2,d,\nu2,f,\nu3,a,"""q"""\n'
PREDICTIONS = "user,item,score\nu1,a,0.9\nu1,b,0.8\nu1,c,0.7\nu2,d,0.9\nu2,e,0.5\nu3,a,0.9\n"
ENGINES: list[dict[str, Any]] = [
    {},
    {"engine": "streaming"},
    {"partitions": 2},
    {"partitions": 2, "confidence": {"resamples": 50}},
]
EXPECTED = {'group="(none)"': "u1", "group=(none)": "u2", 'group="\\"q\\""': "u3"}


def test_names_and_values_are_one_to_one() -> None:
    for value in [None, "(none)", '"(none)"', '"', "DE", "", "a=b", "(none) "]:
        assert segment_value(segment_name("group", value)) == ("group", value)
    assert segment_name("group", None) == "group=(none)"
    assert segment_name("group", "(none)") == 'group="(none)"'
    assert segment_name("group", "DE") == "group=DE"


@pytest.mark.parametrize("engine", ENGINES)
def test_a_value_reading_none_is_not_the_null_group(tmp_path: Path, engine: dict[str, Any]) -> None:
    """Each group keeps its own user, on every polars engine (one used to vanish)."""
    config = hand_case(
        tmp_path, PREDICTIONS, TRUTH, metrics=["precision@1"], segment_by=["group"], **engine
    )
    segments = run_json(config)["models"]["model"]["segments"]
    assert set(segments) == set(EXPECTED)
    # precision@1 tells the users apart: u1's top item a is not relevant, u2's d and u3's a are
    values = {name: part["metrics"]["precision@1"] for name, part in segments.items()}
    assert values == {'group="(none)"': 0.0, "group=(none)": 1.0, 'group="\\"q\\""': 1.0}
    assert all(part["users"] == 1 for part in segments.values())


def test_a_gate_reaches_each_group_by_its_name(tmp_path: Path) -> None:
    gates = {
        "precision@1": {"min": 0.5, "segment": 'group="(none)"'},
        "ndcg@2": {"min": 0.5, "segment": "group=(none)"},
    }
    config = hand_case(
        tmp_path, PREDICTIONS, TRUTH, metrics=["precision@1", "ndcg@2"], segment_by=["group"]
    )
    config = write_config(tmp_path, {**_read(config), "gates": gates})
    results = run_json(config, expect=1)["gates"]["results"]
    verdicts = {g["metric"]: g["passed"] for g in results}
    assert verdicts == {'precision@1 [group="(none)"]': False, "ndcg@2 [group=(none)]": True}


def test_the_table_shows_the_two_groups_apart(tmp_path: Path) -> None:
    config = hand_case(tmp_path, PREDICTIONS, TRUTH, metrics=["precision@1"], segment_by=["group"])
    result = invoke("run", config, "-f", "table")
    assert result.exit_code == 0, result.stderr
    assert '"(none)"' in result.stdout
    assert result.stdout.count("(none)") == 2


def _read(config: Path) -> dict[str, Any]:
    import yaml

    loaded: dict[str, Any] = yaml.safe_load(config.read_text())
    return loaded


@pytest.mark.spark
def test_spark_keeps_the_groups_apart(spark: Any, tmp_path: Path) -> None:
    from receval_cli.config.loading import load_config
    from receval_cli.engines.spark import evaluate_spark

    config = hand_case(
        tmp_path,
        PREDICTIONS,
        TRUTH,
        metrics=["precision@1"],
        segment_by=["group"],
        engine="spark",
    )
    report = evaluate_spark(load_config(config), spark, buckets=3)
    assert set(report.segments) == set(EXPECTED)


# ---------------------------------------------------------------- a list column as segment


def _list_files(folder: Path) -> None:
    pl.DataFrame(
        {"user": ["u1", "u2", "u2"], "item": ["b", "d", "f"], "tags": [["x"], ["y"], ["y"]]}
    ).write_parquet(folder / "truth.parquet")
    pl.DataFrame({"uid": ["u1", "u2"], "tags": [["x"], ["y"]]}).write_parquet(
        folder / "segments.parquet"
    )


@pytest.mark.parametrize("engine", [{}, {"partitions": 2}])
@pytest.mark.parametrize("source", ["ground truth", "segments"])
def test_a_list_column_as_a_segment_names_file_column_type_and_key(
    tmp_path: Path, engine: dict[str, Any], source: str
) -> None:
    _list_files(tmp_path)
    config = hand_case(tmp_path, metrics=["ndcg@2"], segment_by=["tags"], **engine)
    extra: dict[str, Any] = {"ground_truth": {"path": "truth.parquet"}}
    if source == "segments":
        extra = {"segments": {"path": "segments.parquet", "columns": {"user": "uid"}}}
    config = write_config(tmp_path, {**_read(config), **extra})
    for command in ("run", "validate"):
        message = assert_user_error(
            invoke(command, config), "segment_by", "'tags'", "List(String)", f"{source} file"
        )
        assert str(tmp_path / f"{source.replace('ground ', '')}.parquet") in message


def test_the_list_column_error_carries_its_fields(tmp_path: Path) -> None:
    _list_files(tmp_path)
    config = hand_case(tmp_path, metrics=["ndcg@2"], segment_by=["tags"])
    config = write_config(tmp_path, {**_read(config), "ground_truth": {"path": "truth.parquet"}})
    result = invoke("--log-format", "json", "run", config)
    assert result.exit_code == 2
    fields = json.loads(result.stderr.strip().splitlines()[-1])["fields"]
    assert (fields["column"], fields["key"], fields["found"]) == (
        "tags",
        "segment_by",
        "List(String)",
    )
    assert fields["path"] == str(tmp_path / "truth.parquet")
