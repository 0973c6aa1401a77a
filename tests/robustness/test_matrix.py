"""The bad-input matrix: one row per hostile input, across every reader and the config.

Each row of BAD is run as `receval run CONFIG --output OUT.json` and must exit 2 with
exactly one `error: ` message on stderr, equal to the row's text ({tmp} stands for the
case's folder), nothing on stdout, no traceback, and no OUT.json (where the row says so,
an earlier OUT.json is left byte for byte as it was). The rows of WORKS are inputs that
look hostile but are valid (a BOM, quoted newlines, YAML anchors, unicode ids, +-inf
scores, 100,000 predictions, a cutoff of a billion): each exits 0 with metric values
computed in the test by hand or by the naive references of `helpers`. Every row of BAD
is also given to `receval validate CONFIG`, which must refuse it with the same message,
but for the rows of RUN_ONLY (run's --output option, a metric's value): a new row that
`run` refuses and `validate` does not fails here until validate checks it too.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest
from bad_input_matrix import (
    ANCHORS_YAML,
    BAD,
    ENGINES,
    HAND_FRAME,
    INV_LOG2_3,
    ON_ENGINES,
    ON_SPARK,
    POLARS_FAILS_ON_SPARK,
    ROWS,
    RUN_ONLY,
    SCORE_TWO,
    SPARK_READS,
    SPARK_REFUSES,
    UINT64_ROWS,
    WORKS,
    Bad,
    Works,
    bad_case,
    check_bad,
    predictions,
)
from cli_helpers import (
    PREDICTIONS_CSV,
    TRUTH_CSV,
    assert_no_traceback,
    invoke,
)
from robustness_cases import (
    build,
    checksummed_parquet,
    overwritten_page,
)

pytestmark = pytest.mark.slow  # left out of `uv run pytest`; .ci/run runs it


def test_the_checksum_rows_are_in_the_matrix() -> None:
    pytest.importorskip("pyarrow")
    assert {"parquet-page-fails-its-checksum", "parquet-folder-part-fails-its-checksum"} <= {
        case.id for case in BAD
    }


def test_a_damaged_page_without_checksums_goes_unseen(tmp_path: Path) -> None:
    """What cannot be checked: the same damage in a file without checksums (polars'
    writer records none) reads as a valid file, with u2's e scored 2.0 above d."""
    pytest.importorskip("pyarrow")
    unchecked = overwritten_page(
        checksummed_parquet(HAND_FRAME, checksums=False), "score", SCORE_TWO
    )
    case = predictions("p.parquet", unchecked)
    config = build(tmp_path, case["files"], case["config"])
    result = invoke("run", config, "--output", tmp_path / "OUT.json")
    assert result.exit_code == 0, (result.exit_code, result.stdout, result.stderr)
    report = json.loads((tmp_path / "OUT.json").read_text(encoding="utf-8"))
    ndcg_u2 = INV_LOG2_3 / (1 + INV_LOG2_3)  # d, relevant, now second; f never ranked
    assert report["models"]["model"]["metrics"] == pytest.approx(
        {"precision@1": 0.0, "ndcg@2": (INV_LOG2_3 + ndcg_u2) / 2}, rel=1e-12
    )


def test_the_matrix_has_forty_distinct_cases() -> None:
    assert len({case.id for case in BAD}) == len(BAD) >= 40
    assert len({case.message for case in BAD}) == len(BAD)


@pytest.mark.parametrize("case", [case.param() for case in BAD])
def test_bad_input(tmp_path: Path, case: Bad) -> None:
    check_bad(tmp_path, case)


@pytest.mark.own_process  # a bad input: see Bad.param
@pytest.mark.parametrize(("row", "engine"), [(r, e) for r in ON_ENGINES for e in ENGINES])
def test_bad_input_on_other_polars_engines(tmp_path: Path, row: str, engine: str) -> None:
    check_bad(tmp_path, ROWS[row], ENGINES[engine])


def test_every_engine_row_runs_on_spark() -> None:
    """Every row whose config can name an engine runs on Spark: the rows of the config's
    own text are the only ones left out, and the refusals name real rows."""
    assert len(ON_SPARK) >= 90
    left_out = [case for case in BAD if case not in ON_SPARK and case.id not in SPARK_READS]
    assert all(isinstance(case.config, str) for case in left_out)
    assert set(SPARK_REFUSES) <= {case.id for case in ON_SPARK}
    assert {case.id for case in ON_SPARK} >= POLARS_FAILS_ON_SPARK


@pytest.mark.parametrize(
    "case", [case.param(own_process=case.id in POLARS_FAILS_ON_SPARK) for case in ON_SPARK]
)
def test_bad_input_on_spark(spark: Any, tmp_path: Path, case: Bad) -> None:
    """The same exit code and the same `error:` line as the polars engines (a local input
    is checked by their readers; what Spark finds while it runs is diagnosed by them too),
    or Spark's own refusal of an input it does not read."""
    refused = SPARK_REFUSES.get(case.id)
    if refused is not None:
        case = dataclasses.replace(case, message=refused)
    check_bad(tmp_path, case, {"engine": "spark"})


@pytest.mark.parametrize("case", [case.param() for case in BAD if case.id not in RUN_ONLY])
def test_validate_refuses_every_bad_input(tmp_path: Path, case: Bad) -> None:
    result = invoke("validate", bad_case(tmp_path, case))
    assert_no_traceback(result)
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.stderr.replace(str(tmp_path), "{tmp}") == f"error: {case.message}\n"


def test_the_rows_only_run_refuses_are_rows() -> None:
    assert set(RUN_ONLY) <= {case.id for case in BAD}


@pytest.mark.parametrize("case", WORKS, ids=lambda case: case.id)
def test_valid_input(tmp_path: Path, case: Works) -> None:
    config = build(tmp_path, case.files, case.config)
    out = tmp_path / "OUT.json"
    result = invoke("run", config, "--output", out)
    assert_no_traceback(result)
    assert result.exit_code == 0, (result.exit_code, result.stdout, result.stderr)
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["models"]["model"]["metrics"] == pytest.approx(
        case.expected, rel=1e-12, abs=1e-15
    )


@pytest.mark.parametrize("engine", list(ENGINES))
@pytest.mark.parametrize("case", UINT64_ROWS, ids=lambda case: case.id)
def test_uint64_ids_on_other_polars_engines(tmp_path: Path, case: Works, engine: str) -> None:
    """Ids of 2^63 and more (UInt64 Parquet columns) on the streaming and partitioned
    engines: the same values as in memory."""
    assert isinstance(case.config, dict)
    test_valid_input(tmp_path, dataclasses.replace(case, config={**case.config, **ENGINES[engine]}))


@pytest.mark.parametrize("case", UINT64_ROWS, ids=lambda case: case.id)
def test_uint64_ids_on_spark(spark: Any, tmp_path: Path, case: Works) -> None:
    """Spark reads UInt64 Parquet ids (as decimal(20, 0)) and matches them with the text or
    integer ids beside them: the same values."""
    assert isinstance(case.config, dict)
    test_valid_input(tmp_path, dataclasses.replace(case, config={**case.config, "engine": "spark"}))


def test_anchors_and_merge_keys_are_read_as_written(tmp_path: Path) -> None:
    """The merged ground_truth takes format and separator from *defaults and keeps its own
    path; the aliased gate applies to both metrics."""
    out = tmp_path / "OUT.json"
    result = invoke("run", build(tmp_path, config=ANCHORS_YAML), "--output", out)
    assert result.exit_code == 0, result.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    truth_config = report["config"]["ground_truth"]
    assert (truth_config["path"], truth_config["format"], truth_config["separator"]) == (
        "truth.csv",
        "csv",
        ",",
    )
    gates = {(g["metric"], g["bound"], g["threshold"]) for g in report["gates"]["results"]}
    assert gates == {("ndcg@2", "min", 0.1), ("precision@1", "min", 0.1)}


def test_a_bom_changes_nothing(tmp_path: Path) -> None:
    """The same files with and without a BOM give the same report metrics."""
    plain = build(tmp_path / "plain")
    bom = build(
        tmp_path / "bom",
        files={"predictions.csv": "\ufeff" + PREDICTIONS_CSV, "truth.csv": "\ufeff" + TRUTH_CSV},
    )
    reports = []
    for config in (plain, bom):
        result = invoke("run", config, "--output", config.parent / "OUT.json")
        assert result.exit_code == 0, result.stderr
        reports.append(json.loads((config.parent / "OUT.json").read_text(encoding="utf-8")))
    assert reports[0]["models"]["model"]["metrics"] == reports[1]["models"]["model"]["metrics"]
    assert reports[0]["models"]["model"]["users"] == reports[1]["models"]["model"]["users"]


@pytest.mark.parametrize("case", [case.param() for case in BAD])
def test_every_error_says_what_it_is_about(tmp_path: Path, case: Bad) -> None:
    """Every row's error carries the file or the setting it is about as fields on the
    `--log-format json` error line, and each of them is named in the message as written
    (the message is worded from the same values, not rewritten afterwards)."""
    config = build(tmp_path, case.files, case.config)
    for folder in case.folders:
        (tmp_path / folder).mkdir()
    for name, target in case.links.items():
        (tmp_path / name).symlink_to(target)
    for name in case.fifos:
        os.mkfifo(tmp_path / name)
    out = tmp_path / case.output
    result = invoke("run", config.parent / case.run, "--output", out, "--log-format", "json")
    assert result.exit_code == 2, result.stderr
    records = [json.loads(line) for line in result.stderr.splitlines()]
    (error,) = [record for record in records if record["level"] == "error"]
    fields = error.get("fields", {})
    assert {"path", "key"} & set(fields), (case.id, error["message"])
    message = error["message"]
    for name in ("path", "key", "column", "fix"):
        if name in fields:
            assert str(fields[name]) in message, (case.id, name, fields[name], message)
