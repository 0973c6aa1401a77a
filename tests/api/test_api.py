"""The Python API: `receval_cli.evaluate` on paths, polars and pandas frames.

Its numbers must be the CLI's on the same data; its errors receval's own, naming the
function's arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from cli_helpers import NDCG_2, PRECISION_1, PREDICTIONS_CSV, TRUTH_CSV, hand_case, run_json, write
from lazy_modules import lazy

import receval_cli
from receval_cli.errors import ConfigError, InputError, UsageError
from receval_cli.results.report import Report

pd = lazy("pandas")  # loaded by the first test that reads it (lazy_modules.py)

METRICS = ["precision@1", "ndcg@2"]


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    return write(tmp_path / "p.csv", PREDICTIONS_CSV), write(tmp_path / "t.csv", TRUTH_CSV)


def test_hand_case_from_paths_polars_and_pandas(files: tuple[Path, Path]) -> None:
    """The hand-computed case (cli_helpers) through every kind of input gives its values."""
    predictions, truth = files
    frames = pl.read_csv(predictions), pl.read_csv(truth)
    for given in [
        (predictions, truth),
        (str(predictions), str(truth)),
        frames,
        (frames[0].lazy(), frames[1].lazy()),
        (frames[0].to_pandas(), frames[1].to_pandas()),
        (pd.read_csv(predictions), truth),  # mixed: a pandas frame and a path
    ]:
        report = receval_cli.evaluate(*given, metrics=METRICS)
        assert isinstance(report, Report)
        assert report.metrics["precision@1"] == pytest.approx(PRECISION_1, abs=1e-15)
        assert report.metrics["ndcg@2"] == pytest.approx(NDCG_2, abs=1e-15)


def test_same_numbers_and_users_as_the_cli(tmp_path: Path, files: tuple[Path, Path]) -> None:
    predictions, truth = files
    config = hand_case(tmp_path / "cli", metrics=["ndcg", "recall", "map"], cutoffs=[1, 2, 3])
    ran = run_json(config)
    report = receval_cli.evaluate(
        predictions, truth, metrics=["ndcg", "recall", "map"], cutoffs=[1, 2, 3]
    )
    assert report.metrics == ran["models"]["model"]["metrics"]
    assert report.users == ran["models"]["model"]["users"]
    # to_dict() is the CLI report's model block (the inputs name the files as given)
    block = {k: v for k, v in ran["models"]["model"].items() if k != "inputs"}
    assert {k: v for k, v in report.to_dict().items() if k != "inputs"} == block


def test_conventions_mapping_and_preset_name(files: tuple[Path, Path]) -> None:
    predictions, truth = files
    # u2's list (d, e) holds one of its two relevant items: precision@5 over k=5 or the list
    by_k = receval_cli.evaluate(predictions, truth, metrics="precision@5").metrics
    assert by_k["precision@5"] == pytest.approx((1 / 5 + 1 / 5) / 2)
    by_list = receval_cli.evaluate(
        predictions,
        truth,
        metrics="precision@5",
        conventions={"precision_denominator": "list_length"},
    ).metrics
    assert by_list["precision@5"] == pytest.approx((1 / 3 + 1 / 2) / 2)
    preset = receval_cli.evaluate(predictions, truth, metrics="map", conventions="trec_eval")
    assert preset.conventions["preset"] == "trec_eval"


def test_metric_mappings_with_parameters(files: tuple[Path, Path]) -> None:
    predictions, truth = files
    report = receval_cli.evaluate(
        predictions, truth, metrics=[{"name": "ndcg", "cutoffs": [2], "gain": "exponential"}]
    )
    assert list(report.metrics) == ["ndcg@2(gain=exponential)"]


def test_column_mapping_of_files(tmp_path: Path) -> None:
    predictions = write(tmp_path / "p.csv", PREDICTIONS_CSV.replace("user,item", "uid,iid"))
    truth = write(tmp_path / "t.csv", TRUTH_CSV.replace("user,item", "uid,iid"))
    report = receval_cli.evaluate(
        predictions,
        truth,
        metrics=METRICS,
        prediction_columns={"user": "uid", "item": "iid"},
        truth_columns={"user": "uid", "item": "iid"},
    )
    assert report.metrics["precision@1"] == pytest.approx(PRECISION_1, abs=1e-15)


def test_errors_name_the_arguments(tmp_path: Path, files: tuple[Path, Path]) -> None:
    predictions, truth = files
    with pytest.raises(InputError) as missing_column:
        receval_cli.evaluate(
            predictions, truth, metrics=METRICS, prediction_columns={"user": "uid"}
        )
    assert "has no column 'uid' (set by prediction_columns['user'])" in str(missing_column.value)
    assert "Set prediction_columns['user'] to one of them." in str(missing_column.value)

    with pytest.raises(InputError) as missing_file:
        receval_cli.evaluate(tmp_path / "nope.csv", truth, metrics=METRICS)
    assert str(missing_file.value) == (
        f"predictions file {tmp_path / 'nope.csv'} does not exist. Check the path given as "
        "predictions (a relative path is read from the current folder)."
    )

    with pytest.raises(InputError) as folder:
        receval_cli.evaluate(predictions, tmp_path, metrics=METRICS)
    assert (
        str(folder.value)
        == f"ground truth file {tmp_path} is a folder. Give a file as ground_truth."
    )

    with pytest.raises(ConfigError) as conventions:
        receval_cli.evaluate(predictions, truth, metrics=METRICS, conventions={"tie_brake": "x"})
    assert str(conventions.value).startswith(
        "evaluate(): the arguments are not valid:\n  conventions.tie_brake: unknown key "
        "'tie_brake'. Did you mean 'tie_break'?"
    )

    with pytest.raises(ConfigError) as columns:
        receval_cli.evaluate(predictions, truth, metrics=METRICS, truth_columns={"usr": "u"})
    assert "truth_columns['usr']: unknown key 'usr'. Did you mean 'user'?" in str(columns.value)

    with pytest.raises(ConfigError) as metric:
        receval_cli.evaluate(predictions, truth, metrics=["ndgc@10"])
    assert str(metric.value).startswith("evaluate(): metrics[0]: ")
    assert "ndcg" in str(metric.value)

    with pytest.raises(UsageError) as empty:
        receval_cli.evaluate(predictions, truth, metrics=[])
    assert str(empty.value) == "metrics is empty; name at least one metric, e.g. ['ndcg@10']."

    with pytest.raises(UsageError) as kind:
        receval_cli.evaluate([(1, 2, 0.5)], truth, metrics=METRICS)
    assert str(kind.value) == (
        "predictions is [(1, 2, 0.5)] (a list); give a path (str or Path), a polars "
        "DataFrame or LazyFrame, or a pandas DataFrame, e.g. predictions='predictions.csv'."
    )


def test_checks_run_on_frames_too() -> None:
    """Frames get the file inputs' checks: a duplicate (user, item) is an error."""
    predictions = pl.DataFrame({"user": [1, 1], "item": [10, 10], "score": [0.9, 0.8]})
    truth = pl.DataFrame({"user": [1], "item": [10]})
    with pytest.raises(InputError, match="duplicate"):
        receval_cli.evaluate(predictions, truth, metrics=METRICS)


def test_importing_the_package_does_not_import_the_api() -> None:
    """`import receval_cli` (the CLI's first import) stays light: the API loads on use."""
    import subprocess
    import sys

    code = "import sys, receval_cli; print('receval_cli.api' in sys.modules)"
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "False"


@pytest.mark.slow
@pytest.mark.own_process  # a polars query fails (tests/support/process_isolation.py)
def test_a_frame_that_fails_to_compute_is_named() -> None:
    """A lazy frame whose query fails is reported as the frame, not as a missing file."""
    broken = pl.LazyFrame({"user": ["a"], "item": [2], "score": ["1.0"]}).with_columns(
        pl.col("user").cast(pl.Int64)
    )
    truth = pl.DataFrame({"user": [1], "item": [2]})
    with pytest.raises(InputError) as found:
        receval_cli.evaluate(broken, truth, metrics=["mrr"])
    assert str(found.value).startswith(
        "predictions <predictions frame> could not be read: conversion from `str` to `i64` failed"
    )


def test_per_user_is_null_where_a_user_is_not_in_the_mean() -> None:
    """A user left out of a metric's mean is null in `Report.per_user`, as in
    the --per-user file, so each column's mean is the report's value (it held 0.0 before,
    and averaging the column gave another number than the report)."""
    predictions = pl.DataFrame(
        {
            "user": [1, 1, 2, 2, 3, 4, 4],
            "item": [10, 11, 10, 12, 11, 10, 11],
            "score": [0.9, 0.8, 0.9, 0.5, 0.7, 0.9, 0.1],
        }
    )
    truth = pl.DataFrame(
        {"user": [1, 2, 3, 4], "item": [11, 10, 11, 12], "relevance": [1, 1, 1, 0]}
    )
    catalog = pl.DataFrame({"item": [10, 11, 12], "genre": ["a", "b", "a"]})
    report = receval_cli.evaluate(
        predictions,
        truth,
        ["ndcg@2", "recall@2", "intra_list_diversity@2"],
        catalog=catalog,
        catalog_columns={"category": "genre"},
        truth_columns={"relevance": "relevance"},
    )
    rows = {row["user"]: row for row in report.per_user.iter_rows(named=True)}
    # user 3: a one-item list, so no pair to compare (out of the diversity's mean only)
    assert rows[3]["ndcg@2"] == 1.0
    assert rows[3]["intra_list_diversity@2"] is None
    # user 4: no relevant item, skipped by users_without_relevant: out of the means of the
    # metrics that read relevance; diversity does not, so user 4 counts there (items 10
    # and 11: genres a and b, diversity 1)
    assert rows[4]["status"] == "no_relevant"
    assert [rows[4][m] for m in ("ndcg@2", "recall@2")] == [None] * 2
    assert rows[4]["intra_list_diversity@2"] == 1.0
    for name in ("ndcg@2", "recall@2", "intra_list_diversity@2"):
        column = report.per_user.get_column(name)
        assert column.mean() == pytest.approx(report.metrics[name], abs=1e-15), name


# ---------------------------------------------------- messages: hostile pandas frames


class _Opaque:
    """A value pyarrow cannot convert."""


def _truth() -> pd.DataFrame:
    return pd.DataFrame({"user": ["u1"], "item": ["a"]})


@pytest.mark.parametrize(
    ("make_frame", "column", "found", "words"),
    [
        (
            lambda: pd.DataFrame([["u1", "a", 0.5]], columns=["user", "user", "score"]),
            "user",
            ["user", "user", "score"],
            ["2 columns named 'user'"],
        ),
        (
            lambda: pd.DataFrame({"user": [1, "u2"], "item": ["a", "b"], "score": [0.5, 0.4]}),
            "user",
            ["int", "str"],
            ["column 'user'", "mixes values of types int, str"],
        ),
        (
            lambda: pd.DataFrame({"user": ["u1", "u2"], "item": [[1], 2], "score": [0.5, 0.4]}),
            "item",
            ["int", "list"],
            ["column 'item'", "int, list"],
        ),
        (
            lambda: pd.DataFrame(
                {"user": ["u1", "u2"], "item": ["a", "b"], "score": [_Opaque()] * 2}
            ),
            "score",
            None,
            ["column 'score'", "cannot be converted"],
        ),
    ],
    ids=["duplicate columns", "mixed ids", "a list among ints", "opaque objects"],
)
def test_hostile_pandas_frames_raise_receval_s_errors(
    make_frame: Callable[[], pd.DataFrame], column: str, found: list[str] | None, words: list[str]
) -> None:
    """polars raised a bare ValueError for two columns of one name, pyarrow ArrowInvalid
    for a column mixing 1 and 'u2': now an InputError with the CLI's fields."""
    with pytest.raises(InputError) as caught:
        receval_cli.evaluate(make_frame(), _truth(), ["ndcg@2"])
    message = str(caught.value)
    assert message.startswith("predictions: "), message
    assert all(word in message for word in words), message
    fields = caught.value.fields
    assert fields["key"] == "predictions"
    assert fields["path"] == "<predictions frame>"
    assert fields["column"] == column
    assert fields["fix"] in message
    if found is not None:
        assert fields["found"] == found


def test_a_hostile_ground_truth_frame_names_its_argument() -> None:
    truth = pd.DataFrame({"user": ["u1", 2], "item": ["a", "b"]})
    with pytest.raises(InputError) as caught:
        receval_cli.evaluate(
            pd.DataFrame({"user": ["u1"], "item": ["a"], "score": [1.0]}), truth, ["ndcg@2"]
        )
    assert caught.value.fields["key"] == "ground_truth"
    assert caught.value.fields["path"] == "<ground truth frame>"


@pytest.mark.parametrize("metrics", [["ndcg@2", "recip_rank", "P_2"], ["RBP(p=0.8)"]])
def test_evaluate_says_whose_definition_ran_as_a_run_does(
    tmp_path: Path, metrics: list[str]
) -> None:
    """A name both receval's and a tool's in a mixed list, or a tool's spelling the tool
    refuses: the run warns whose definition ran; evaluate() said nothing."""
    config = hand_case(tmp_path, metrics=metrics)
    said = run_json(config)["warnings"]
    report = receval_cli.evaluate(
        tmp_path / "predictions.csv", tmp_path / "truth.csv", metrics=metrics
    )
    notes = [w for w in said if w.startswith("metrics: ")]
    assert notes
    assert [w for w in report.warnings if w.startswith("metrics: ")] == notes


def test_run_in_python_logs_nothing(tmp_path: Path) -> None:
    """receval.run writes nothing: a config's tracking block is taken as a key, not used
    (no MLflow needed, no store made)."""
    config = hand_case(tmp_path, tracking={"mlflow": {"uri": "sqlite:///mlflow.db"}})
    from receval_cli.api import run

    result = run(config)
    assert result.models["model"].metrics["ndcg@2"] == pytest.approx(NDCG_2, abs=1e-12)
    assert result.config["tracking"] == {
        "mlflow": {"uri": "sqlite:///mlflow.db", "experiment": "receval"}
    }
    assert not (tmp_path / "mlflow.db").exists()
