"""engine: spark reads its inputs as the polars engines do: tables and
URIs passed to Spark unchanged, every column mapping honoured (a configured rank beside a
score column, list layouts, `items` by name, list truth), the formats the polars engines
read (JSONL, gzip CSV, text lists), and the same refusals with the same `error:` line and
exit 2 (a missing file, a wrong column, float ids), before Spark starts."""

from __future__ import annotations

import gzip
import json
import os
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import evaluate_written, invoke, write, write_config

from receval_cli.analysis.runs import evaluate_config
from receval_cli.config.loading import is_remote, load_config
from receval_cli.engines.spark import evaluate_spark
from receval_cli.results.report import Report

# integer ids whose text and number orders differ, ties, lists longer than k, a user
# only in the truth (4) and one only in the predictions (300)
PREDICTIONS = pl.DataFrame(
    {
        "user": [9, 9, 9, 9, 10, 10, 100, 100, 100, 300],
        "item": [10, 100, 9, 1000, 9, 10, 100, 9, 10, 9],
        "score": [0.9, 0.5, 0.5, 0.1, 0.8, 0.7, 0.6, 0.6, 0.2, 0.5],
        "rank": [4, 1, 2, 3, 2, 1, 1, 3, 2, 1],
    }
)
TRUTH = pl.DataFrame(
    {
        "user": [9, 9, 10, 100, 100, 4],
        "item": [100, 1000, 10, 9, 10, 9],
        "grade": [2.0, 1.0, 3.0, 1.0, 0.0, 1.0],
    }
)
METRICS = ["ndcg@2", "precision@3", "map", "mrr", "recall@10"]


def both(spark: Any, folder: Path, config: dict[str, Any]) -> tuple[Report, Report]:
    path = write_config(folder, {"metrics": METRICS, **config})
    (in_memory,) = evaluate_config(load_config(path)).models.values()
    return in_memory, evaluate_spark(load_config(path), spark, buckets=3)


def assert_same(expected: Report, got: Report) -> None:
    assert got.metrics == pytest.approx(expected.metrics, abs=1e-12)
    assert got.users == expected.users


def test_is_remote() -> None:
    for remote in ("table:preds", "s3a://b/p", "hdfs://nn/x", "file:///tmp/x", "dbfs:/x"):
        assert is_remote(remote), remote
    for local in ("p.csv", "/tmp/p.csv", "C:/data/p.csv", "data:x.csv", "./table.csv"):
        assert not is_remote(local), local


def test_a_configured_rank_beside_a_score_column(spark: Any, tmp_path: Path) -> None:
    """columns.rank was ignored when the file also had `score`: silent wrong numbers."""
    PREDICTIONS.write_parquet(tmp_path / "p.parquet")
    TRUTH.write_csv(tmp_path / "t.csv")
    config = {
        "predictions": {"path": "p.parquet", "columns": {"rank": "rank"}},
        "ground_truth": {"path": "t.csv", "columns": {"relevance": "grade"}},
    }
    expected, got = both(spark, tmp_path, config)
    assert_same(expected, got)
    scored = {**config, "metrics": METRICS, "predictions": {"path": "p.parquet"}}
    by_score = evaluate_written(tmp_path, scored)
    assert by_score.models["model"].metrics != expected.metrics  # the rank decides


def test_a_table_and_a_file_uri(spark: Any, tmp_path: Path) -> None:
    """table:NAME and file:/// are given to Spark as written (they became
    /config/dir/table:NAME and /config/dir/file:/...)."""
    PREDICTIONS.write_parquet(tmp_path / "p.parquet")
    TRUTH.write_parquet(tmp_path / "t.parquet")
    local = {
        "predictions": {"path": "p.parquet"},
        "ground_truth": {"path": "t.parquet", "columns": {"relevance": "grade"}},
    }
    expected, _ = both(spark, tmp_path, local)
    spark.createDataFrame(PREDICTIONS.to_pandas()).createOrReplaceTempView("receval_preds")
    remote = {
        "predictions": {"path": "table:receval_preds"},
        "ground_truth": {
            "path": (tmp_path / "t.parquet").resolve().as_uri(),
            "columns": {"relevance": "grade"},
        },
        "metrics": METRICS,
    }
    config = load_config(write_config(tmp_path / "elsewhere", remote))
    got = evaluate_spark(config, spark, buckets=3)
    assert_same(expected, got)
    assert got.inputs["predictions"]["path"] == "table:receval_preds"
    uri = (tmp_path / "t.parquet").resolve().as_uri()
    assert got.inputs["ground_truth"]["path"] == uri  # as written: file:///..., not file:/


def test_a_table_the_catalog_lacks_names_the_hive_setting(spark: Any, tmp_path: Path) -> None:
    """table:NAME of a Hive metastore, in a session with Spark's in-memory catalog (one
    receval starts): the error says which catalog the session has and the setting."""
    from receval_cli.errors import InputError

    TRUTH.write_parquet(tmp_path / "t.parquet")
    config = {
        "predictions": {"path": "table:warehouse.no_such_predictions"},
        "ground_truth": {"path": "t.parquet", "columns": {"relevance": "grade"}},
        "metrics": METRICS,
    }
    with pytest.raises(InputError) as raised:
        evaluate_spark(load_config(write_config(tmp_path, config)), spark, buckets=2)
    message = str(raised.value)
    assert message.startswith(
        "predictions table table:warehouse.no_such_predictions could not be read by Spark"
    ), message
    assert "The session's catalog is Spark's in-memory one" in message
    assert "--spark-conf spark.sql.catalogImplementation=hive" in message


@pytest.mark.parametrize(
    "shape", ["jsonl", "csv.gz", "csv text lists", "items by name", "list truth"]
)
def test_every_input_shape_the_polars_engines_read(spark: Any, tmp_path: Path, shape: str) -> None:
    lists = (
        PREDICTIONS.sort("user", "rank")
        .group_by("user", maintain_order=True)
        .agg(pl.col("item").alias("items"))
    )
    truth_lists = TRUTH.group_by("user", maintain_order=True).agg(
        pl.col("item").alias("items"), pl.col("grade").alias("grades")
    )
    truth = {"path": "t.csv", "columns": {"relevance": "grade"}}
    TRUTH.write_csv(tmp_path / "t.csv")
    if shape == "jsonl":
        PREDICTIONS.write_ndjson(tmp_path / "p.jsonl")
        predictions: dict[str, Any] = {"path": "p.jsonl"}
    elif shape == "csv.gz":
        (tmp_path / "p.csv.gz").write_bytes(gzip.compress(PREDICTIONS.write_csv().encode()))
        predictions = {"path": "p.csv.gz"}
    elif shape == "csv text lists":
        text = lists.with_columns(pl.col("items").cast(pl.List(pl.String)).list.join(";"))
        text.write_csv(tmp_path / "p.csv")
        predictions = {"path": "p.csv", "columns": {"items": "items"}}
    elif shape == "items by name":
        lists.write_parquet(tmp_path / "p.parquet")
        predictions = {"path": "p.parquet"}  # found by its name, `items`
    else:
        PREDICTIONS.write_parquet(tmp_path / "p.parquet")
        predictions = {"path": "p.parquet"}
        truth_lists.write_parquet(tmp_path / "tl.parquet")
        truth = {"path": "tl.parquet", "columns": {"items": "items", "relevances": "grades"}}
    expected, got = both(spark, tmp_path, {"predictions": predictions, "ground_truth": truth})
    assert_same(expected, got)


def outcome(args: list[str | Path]) -> tuple[int, str]:
    result = invoke("run", *args)
    assert "Traceback" not in result.stderr
    return result.exit_code, result.stderr


@pytest.mark.parametrize(
    "case", ["missing file", "wrong column", "float ids", "trec", "nan score", "duplicate"]
)
def test_bad_input_is_refused_alike_on_both_engines(spark: Any, tmp_path: Path, case: str) -> None:
    """The same exit code (2) and the same error line on Spark as in memory."""
    predictions = PREDICTIONS
    if case == "float ids":
        predictions = PREDICTIONS.with_columns(pl.col("item").cast(pl.Float64))
    if case == "nan score":
        predictions = PREDICTIONS.with_columns(
            pl.when(pl.col("user") == 10)
            .then(float("nan"))
            .otherwise(pl.col("score"))
            .alias("score")
        )
    if case == "duplicate":
        predictions = pl.concat([PREDICTIONS, PREDICTIONS.head(1)])
    predictions.write_parquet(tmp_path / "p.parquet")
    TRUTH.write_csv(tmp_path / "t.csv")
    config: dict[str, Any] = {
        "predictions": {"path": "p.parquet"},
        "ground_truth": {"path": "t.csv", "columns": {"relevance": "grade"}},
        "metrics": METRICS,
    }
    if case == "missing file":
        config["predictions"]["path"] = "nowhere.parquet"
    if case == "wrong column":
        config["ground_truth"]["columns"]["relevance"] = "grades"
    if case == "trec":
        write(tmp_path / "run.trec", "9 Q0 10 1 0.9 x\n")
        config["predictions"]["path"] = "run.trec"
    memory = outcome([write_config(tmp_path, config, "memory.yaml")])
    on_spark = outcome([write_config(tmp_path, {**config, "engine": "spark"}, "spark.yaml")])
    if case == "trec":  # read in memory; Spark refuses it, clearly, before it starts
        assert memory[0] == 0
        assert on_spark[0] == 2
        assert "engine: spark reads CSV, TSV, Parquet and JSONL, not trec" in on_spark[1]
        return
    assert memory[0] == on_spark[0] == 2
    assert memory[1] == on_spark[1]
    assert memory[1].startswith("error: ")


def on_spark(folder: Path, predictions: str) -> Path:
    """A config of `predictions` (a path, folder or table) against TRUTH, on Spark."""
    TRUTH.write_csv(folder / "t.csv")
    config = {
        "predictions": {"path": predictions},
        "ground_truth": {"path": "t.csv", "columns": {"relevance": "grade"}},
        "metrics": METRICS,
        "engine": "spark",
    }
    return write_config(folder, config)


def test_a_missing_table_is_an_input_error(spark: Any, tmp_path: Path) -> None:
    code, stderr = outcome([on_spark(tmp_path, "table:no_such_table_here")])
    assert code == 2
    assert stderr.startswith("error: predictions table table:no_such_table_here could not")


def test_a_table_or_uri_needs_engine_spark(tmp_path: Path) -> None:
    """On a polars engine (no Spark needed to say so): a clear error, not 'does not exist'
    at /config/dir/table:NAME."""
    TRUTH.write_csv(tmp_path / "t.csv")
    for path in ("table:preds", "s3a://bucket/preds.parquet"):
        config = {
            "predictions": {"path": path},
            "ground_truth": {"path": "t.csv", "columns": {"relevance": "grade"}},
            "metrics": METRICS,
        }
        result = invoke("run", write_config(tmp_path, config), "--format", "json")
        assert result.exit_code == 2, result.stderr
        assert f"'{path}' is a" in result.stderr
        assert "only engine: spark reads" in result.stderr
        assert result.stdout == ""
        json.dumps(path)  # the path is reported as written


# --- the session's settings ---------------------------------------------


class RecordingBuilder:
    """Stands for SparkSession.builder: records what receval asks of it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    def appName(self, name: str) -> RecordingBuilder:
        self.calls.append(("appName", name))
        return self

    def master(self, master: str) -> RecordingBuilder:
        self.calls.append(("master", master))
        return self

    def config(self, key: str, value: str) -> RecordingBuilder:
        self.calls.append(("config", key, value))
        return self

    def getOrCreate(self) -> str:
        self.calls.append(("getOrCreate",))
        return "session"


def test_the_session_takes_the_master_and_settings(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(The `spark` fixture marks it, so CI's Spark pass runs it.)"""
    import pyspark.sql as pyspark_sql

    from receval_cli.config.model import SparkConfig
    from receval_cli.engines import spark as engine

    recorder = RecordingBuilder()
    monkeypatch.setattr(pyspark_sql.SparkSession, "builder", recorder)
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    settings = SparkConfig(master="local[3]", conf={"spark.driver.memory": "6g"})
    assert engine.spark_session(None, settings) == "session"
    quiet = "-Dlog4j2.configurationFile=" + engine._LOG4J.as_uri()
    assert recorder.calls == [
        ("appName", "receval"),
        ("master", "local[3]"),
        ("config", "spark.ui.showConsoleProgress", "false"),
        ("config", "spark.driver.memory", "6g"),
        ("config", "spark.driver.extraJavaOptions", quiet),
        ("getOrCreate",),
    ]
    assert engine._LOG4J.is_file()
    assert os.environ["PYSPARK_PYTHON"] == sys.executable  # local workers: this Python
    given = object()
    assert engine.spark_session(given, settings) is given  # a notebook's session: as it is


def test_the_users_settings_win_over_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """receval's defaults for a session it starts yield to the user's settings: their Java
    options come after receval's (the last -D wins), their progress bar setting stays; a
    cluster master or a PYSPARK_PYTHON of theirs keeps the workers' Python theirs."""
    from receval_cli.config.model import SparkConfig
    from receval_cli.engines import spark as engine

    conf = {"spark.ui.showConsoleProgress": "true", "spark.driver.extraJavaOptions": "-Dx=1"}
    made = engine.session_conf(SparkConfig(master="spark://h:7077", conf=conf))
    assert made["spark.ui.showConsoleProgress"] == "true"
    quiet = "-Dlog4j2.configurationFile=" + engine._LOG4J.as_uri()
    assert made["spark.driver.extraJavaOptions"] == f"{quiet} -Dx=1"
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    engine._python_for_workers(SparkConfig(master="spark://h:7077"))
    assert "PYSPARK_PYTHON" not in os.environ
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "1")  # under spark-submit
    engine._python_for_workers(SparkConfig())
    assert "PYSPARK_PYTHON" not in os.environ
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT")
    monkeypatch.setenv("PYSPARK_PYTHON", "/their/python")
    engine._python_for_workers(SparkConfig())
    assert os.environ["PYSPARK_PYTHON"] == "/their/python"
    # spark.pyspark.python, which pyspark itself never reads, wins as under spark-submit
    archived = SparkConfig(master="spark://h:7077", conf={"spark.pyspark.python": "./env/py"})
    engine._python_for_workers(archived)
    assert os.environ["PYSPARK_PYTHON"] == "./env/py"


def _spark_case(tmp_path: Path, **config: Any) -> Path:
    """A config of the hand case on `engine: spark` (its inputs written beside it)."""
    PREDICTIONS.write_parquet(tmp_path / "p.parquet")
    TRUTH.write_csv(tmp_path / "t.csv")
    whole = {
        "predictions": {"path": "p.parquet"},
        "ground_truth": {"path": "t.csv", "columns": {"relevance": "grade"}},
        "metrics": METRICS,
        "engine": "spark",
        **config,
    }
    return write_config(tmp_path, whole)


def test_spark_options_reach_the_session(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """--spark-master and --spark-conf override and extend the config's spark block."""
    from receval_cli.engines import spark as engine

    seen: list[Any] = []

    def stop(spark: Any, settings: Any) -> Any:
        seen.append(settings)
        raise SystemExit(0)

    monkeypatch.setattr(engine, "spark_session", stop)
    monkeypatch.setattr(engine, "require_pyspark", lambda: None)  # where the extra is not
    path = _spark_case(tmp_path, spark={"master": "local[2]", "conf": {"a": "1", "b": "2"}})
    invoke(
        "run", path, "--spark-master", "local[4]", "--spark-conf", "b=3", "--spark-conf", "c=x=y"
    )
    assert seen[0].master == "local[4]"
    assert seen[0].conf == {"a": "1", "b": "3", "c": "x=y"}


def test_a_malformed_spark_conf_is_refused(tmp_path: Path) -> None:
    TRUTH.write_csv(tmp_path / "t.csv")
    config = {"predictions": {"path": "t.csv"}, "ground_truth": {"path": "t.csv"}}
    path = write_config(tmp_path, {**config, "metrics": METRICS, "engine": "spark"})
    result = invoke("run", path, "--spark-conf", "spark.driver.memory")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --spark-conf 'spark.driver.memory' is not a Spark")
    assert "KEY=VALUE" in result.stderr


def test_receval_s_own_spark_setting_is_refused_among_spark_s(tmp_path: Path) -> None:
    """spark.stall_timeout given as a Spark setting (--spark-conf, or the config's
    spark.conf) would go to Spark, which ignores it: refused, naming the config's key."""
    TRUTH.write_csv(tmp_path / "t.csv")
    config = {"predictions": {"path": "t.csv"}, "ground_truth": {"path": "t.csv"}}
    path = write_config(tmp_path, {**config, "metrics": METRICS, "engine": "spark"})
    result = invoke("run", path, "--spark-conf", "spark.stall_timeout=20")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --spark-conf spark.stall_timeout=20: ")
    assert "spark: {stall_timeout: 20} in the config" in result.stderr
    assert "--set spark.stall_timeout=20" in result.stderr
    in_conf = {**config, "metrics": METRICS, "engine": "spark"}
    in_conf["spark"] = {"conf": {"spark.stall_timeout": "20"}}
    path = write_config(tmp_path, in_conf)
    for command in ("run", "validate"):
        result = invoke(command, path)
        assert result.exit_code == 2, result.stderr
        assert "spark.conf: spark.stall_timeout is receval's setting" in result.stderr
        assert "spark: {stall_timeout: 20}" in result.stderr
        assert "Traceback" not in result.stderr


def test_the_stall_timeout_set_for_one_run_reaches_the_watch(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """--set spark.stall_timeout=20, the way the refusal above names, takes effect."""
    from receval_cli.engines import spark as engine

    seen: list[Any] = []

    def stop(session: Any, stall_timeout: Any, own: bool) -> Any:
        seen.append(stall_timeout)
        raise SystemExit(0)

    monkeypatch.setattr(engine, "spark_session", lambda spark, settings: None)
    monkeypatch.setattr(engine, "watched_jobs", stop)
    monkeypatch.setattr(engine, "require_pyspark", lambda: None)  # where the extra is not
    invoke("run", _spark_case(tmp_path), "--set", "spark.stall_timeout=20")
    assert seen == [20]


# --- a folder of Parquet files, as Spark writes them -----------------------


def spark_like_folder(folder: Path, frame: pl.DataFrame, crc: bool = True) -> Path:
    """part-*.parquet files beside _SUCCESS (and, with `crc`, hidden .crc files standing
    for Hadoop's checksums: Spark itself verifies real ones, so its test goes without)."""
    folder.mkdir(parents=True)
    size = -(-frame.height // 3)
    for index in range(3):
        frame.slice(index * size, size).write_parquet(folder / f"part-{index:05d}.snappy.parquet")
        if crc:
            write(folder / f".part-{index:05d}.snappy.parquet.crc", "crc")
    write(folder / "_SUCCESS", "")
    return folder


def test_a_parquet_folder_is_read_by_every_engine(tmp_path: Path) -> None:
    spark_like_folder(tmp_path / "preds", PREDICTIONS)
    PREDICTIONS.write_parquet(tmp_path / "p.parquet")
    TRUTH.write_csv(tmp_path / "t.csv")
    truth = {"path": "t.csv", "columns": {"relevance": "grade"}}
    one_file = load_config(
        write_config(
            tmp_path,
            {"predictions": {"path": "p.parquet"}, "ground_truth": truth, "metrics": METRICS},
            "file.yaml",
        )
    )
    expected = evaluate_config(one_file).models["model"].metrics
    for name, extra in {
        "memory": {},
        "streaming": {"engine": "streaming"},
        "parts": {"partitions": 2},
    }.items():
        config = {"predictions": {"path": "preds"}, "ground_truth": truth, "metrics": METRICS}
        path = write_config(tmp_path, {**config, **extra}, f"{name}.yaml")
        report = evaluate_config(load_config(path)).models["model"]
        assert report.metrics == expected, name
    assert report.inputs["predictions"]["format"] == "parquet"
    sizes = sum(p.stat().st_size for p in (tmp_path / "preds").iterdir())
    assert report.inputs["predictions"]["size_bytes"] == sizes
    validated = invoke("validate", write_config(tmp_path, config, "validate.yaml"))
    assert validated.exit_code == 0, validated.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    config["predictions"] = {"path": "empty"}
    result = invoke("run", write_config(tmp_path, config, "empty.yaml"))
    assert result.exit_code == 2
    assert "is a folder" in result.stderr


def test_a_parquet_folder_on_spark(spark: Any, tmp_path: Path) -> None:
    spark_like_folder(tmp_path / "preds", PREDICTIONS, crc=False)
    TRUTH.write_csv(tmp_path / "t.csv")
    config = {
        "predictions": {"path": "preds"},
        "ground_truth": {"path": "t.csv", "columns": {"relevance": "grade"}},
    }
    expected, got = both(spark, tmp_path, config)
    assert_same(expected, got)


@pytest.mark.own_process  # a polars query fails (tests/support/process_isolation.py)
def test_a_damaged_part_is_an_input_error_on_spark(spark: Any, tmp_path: Path) -> None:
    """A Parquet part that Spark fails to read while the buckets run: exit 2 naming the
    file, no Java stack trace (it was an internal error, exit 3, with one)."""
    folder = spark_like_folder(tmp_path / "preds", PREDICTIONS, crc=False)
    damaged = folder / "part-00002.snappy.parquet"
    data = damaged.read_bytes()
    damaged.write_bytes(data[:4] + bytes(len(data) - 12) + data[-8:])  # the pages zeroed
    code, stderr = outcome([on_spark(tmp_path, "preds")])
    assert code == 2, stderr
    assert stderr.startswith("error: ")
    assert "part-00002.snappy.parquet" in stderr
    assert "\tat org.apache" not in stderr


def test_spark_s_reason_and_the_fix_join_with_one_period(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spark's reason ends with a period ("... schema and catalog."): the message joins it
    to the fix with one (it read "catalog.. The session's catalog ..."). No Spark needed:
    a stand-in session raises what Spark raises for a table its catalog lacks."""
    import types

    from receval_cli.engines.spark_inputs import read_frame
    from receval_cli.errors import InputError

    class AnalysisException(Exception):
        pass

    errors = types.ModuleType("pyspark.errors")
    errors.AnalysisException = AnalysisException  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pyspark", types.ModuleType("pyspark"))
    monkeypatch.setitem(sys.modules, "pyspark.errors", errors)
    reason = (
        "[TABLE_OR_VIEW_NOT_FOUND] The table or view `w`.`t` cannot be found. Verify the "
        "spelling and correctness of the schema and catalog."
    )

    class Session:
        class conf:  # SparkSession.conf
            @staticmethod
            def get(key: str, default: str) -> str:
                return default

        @staticmethod
        def table(name: str) -> None:
            raise AnalysisException(reason)

    with pytest.raises(InputError) as raised:
        read_frame(Session(), "table:w.t", "parquet", None, "predictions")  # type: ignore[arg-type]
    message = str(raised.value)
    assert ".." not in message, message
    assert "schema and catalog. The session's catalog is Spark's in-memory one" in message
