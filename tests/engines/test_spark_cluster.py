"""engine: spark on a real standalone cluster, and on a session receval starts itself.

The cluster test starts a Spark standalone master and one worker on 127.0.0.1 with
pyspark's own launcher (`bin/spark-class`), packs an environment as docs/engines.md's first
recipe does (a venv made with `--copies`, receval and its libraries in its site-packages,
tarred), submits `receval run` with `spark-submit --archives environment.tar.gz#environment`
and `PYSPARK_PYTHON=./environment/bin/python`, and compares the JSON report with the
in-memory engine's: equal bit for bit. The daemons it started are stopped, and checked
gone. The recipe's `pip install` is replaced by packing the distributions installed here
(tests never download), which gives the same site-packages.

The other tests run `receval run --engine spark` as a process: a bad input, and executors
whose Python lacks pyarrow, each print exactly one `error:` line (no Java stack trace, no
Spark log lines) and exit 2.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from spark_cluster import (
    MAIN,
    NOTEBOOK,
    Cluster,
    _damaged_parquet,
    _error_lines,
    _free_port,
    _not_logs,
    _spark_env,
    _spark_home,
    _stop,
    _wait_for,
    pack_environment,
    receval,
    write_case,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster(spark_installed: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A standalone master and one worker (2 cores, 2 GiB) on 127.0.0.1."""
    folder = tmp_path_factory.mktemp("cluster")
    env = _spark_env(folder)
    launcher = str(_spark_home() / "bin" / "spark-class")
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    started: list[subprocess.Popen[bytes]] = []

    def daemon(name: str, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
        log = folder / f"{name}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [launcher, f"org.apache.spark.deploy.{name}", *args],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        started.append(process)
        return process, log

    try:
        master, master_log = daemon(
            "master.Master", "--host", "127.0.0.1", "--port", str(port), "--webui-port", "0"
        )
        _wait_for(master_log, "I have been elected leader", master, 120)
        worker, worker_log = daemon(
            "worker.Worker",
            *("--host", "127.0.0.1", "--cores", "2", "--memory", "2g", "--webui-port", "0"),
            *("--work-dir", str(folder / "work"), url),
        )
        _wait_for(worker_log, "Successfully registered with master", worker, 120)
        yield Cluster(url, folder / "work")
    finally:
        for process in reversed(started):
            _stop(process)
    assert all(process.poll() is not None for process in started)
    with socket.socket() as probe:  # nothing listens on the master's port any more
        assert probe.connect_ex(("127.0.0.1", port)) != 0


def test_a_submitted_job_on_a_standalone_cluster(cluster: Cluster, tmp_path: Path) -> None:
    config = write_case(tmp_path)
    archive = pack_environment(tmp_path)
    env = _spark_env(tmp_path)
    env.update(PYSPARK_DRIVER_PYTHON=sys.executable, PYSPARK_PYTHON="./environment/bin/python")
    env.pop("PYSPARK_GATEWAY_PORT", None)
    submit = [
        str(_spark_home() / "bin" / "spark-submit"),
        *("--master", cluster.url, "--archives", f"{archive}#environment"),
        *("--driver-memory", "1g", "--executor-memory", "1g"),
        *("--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=4"),
        str(MAIN),
        *("run", str(config), "--engine", "spark", "--output", str(tmp_path / "spark.json")),
    ]
    done = subprocess.run(submit, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, (done.stdout, _not_logs(done.stderr))
    # the job ran on the cluster's executor, in the environment it unpacked
    assert list(cluster.work.glob("app-*/*/environment/bin/python")), done.stderr[-4000:]
    in_memory = receval("run", config, "--engine", "in_memory", "--output", tmp_path / "m.json")
    assert in_memory.returncode == 0, in_memory.stderr
    spark = json.loads((tmp_path / "spark.json").read_text())["models"]["model"]
    memory = json.loads((tmp_path / "m.json").read_text())["models"]["model"]
    assert spark["metrics"] == memory["metrics"]  # bit for bit: JSON floats round-trip
    assert spark["users"] == memory["users"]
    assert spark["unknown_items"] == memory["unknown_items"]
    assert spark["inputs"]["engine"]["name"] == "spark"
    assert all(value is not None for value in memory["metrics"].values())


def test_a_session_receval_starts_with_an_archive(cluster: Cluster, tmp_path: Path) -> None:
    """Recipe 3 with a packed environment: `--spark-conf spark.archives=...#environment
    --spark-conf spark.pyspark.python=./environment/bin/python`, no spark-submit. pyspark
    reads the executors' Python from PYSPARK_PYTHON alone, so the setting was ignored and
    the executors ran the PATH's python3 (no pyarrow); receval now passes it on."""
    config = write_case(tmp_path)
    archive = pack_environment(tmp_path)
    env = {k: v for k, v in _spark_env(tmp_path).items() if k != "PYSPARK_PYTHON"}
    env.pop("PYSPARK_GATEWAY_PORT", None)
    done = receval(
        *("run", config, "--engine", "spark", "--spark-master", cluster.url),
        *("--spark-conf", f"spark.archives={archive}#environment"),
        *("--spark-conf", "spark.pyspark.python=./environment/bin/python"),
        *("--spark-conf", "spark.ui.enabled=false", "--output", tmp_path / "spark.json"),
        env=env,
    )
    assert done.returncode == 0, _not_logs(done.stderr)
    assert list(cluster.work.glob("app-*/*/environment/bin/python")), done.stderr[-4000:]
    in_memory = receval("run", config, "--engine", "in_memory", "--output", tmp_path / "m.json")
    assert in_memory.returncode == 0, in_memory.stderr
    spark = json.loads((tmp_path / "spark.json").read_text())["models"]["model"]
    memory = json.loads((tmp_path / "m.json").read_text())["models"]["model"]
    assert spark["metrics"] == memory["metrics"]


def test_a_notebook_session_on_a_standalone_cluster(cluster: Cluster, tmp_path: Path) -> None:
    """docs/engines.md's notebook recipe: an existing session on the cluster, executors with
    the libraries the recipe lists (EXECUTOR_PACKAGES, and nothing else) but not receval,
    receval's code given with addPyFile."""
    from receval_cli.engines.spark import EXECUTOR_PACKAGES

    config = write_case(tmp_path)
    # exactly what the recipe lists (and what pip brings with them)
    archive = pack_environment(tmp_path, with_receval=False, packages=EXECUTOR_PACKAGES)
    script = tmp_path / "notebook.py"
    script.write_text(NOTEBOOK)
    env = _spark_env(tmp_path)
    env.update(PYSPARK_PYTHON="./environment/bin/python")
    args = [cluster.url, str(archive), str(config), str(tmp_path / "m.json"), str(tmp_path)]
    done = subprocess.run(
        [sys.executable, script, *args], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, _not_logs(done.stderr)
    in_memory = receval("run", config, "--engine", "in_memory", "--format", "json")
    assert in_memory.returncode == 0, in_memory.stderr
    expected = json.loads(in_memory.stdout)["models"]["model"]["metrics"]
    assert json.loads((tmp_path / "m.json").read_text()) == expected


def test_a_bad_input_prints_one_line(spark_installed: None, tmp_path: Path) -> None:
    """A session receval starts: Spark's task failure and its stack traces stay in the JVM;
    the user sees the polars engines' `error:` line, exit 2."""
    config = _damaged_parquet(tmp_path)
    done = receval("run", config, "--output", tmp_path / "out.json")
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stdout == ""
    assert _error_lines(done.stderr) == [
        f"error: predictions file {tmp_path}/p.parquet cannot be read as parquet: the file is "
        "damaged (parquet: File out of specification: Invalid thrift: bad data). Write the "
        "file again."
    ]
    assert not (tmp_path / "out.json").exists()


def test_executors_without_pyarrow(spark_installed: None, tmp_path: Path) -> None:
    """Executors whose Python lacks receval's libraries (a bare venv): what to ship, exit 2."""
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", bare], check=True)
    config = _damaged_parquet(tmp_path)
    pl.DataFrame({"user": ["u1"], "item": ["a"], "score": [0.9]}).write_parquet(
        tmp_path / "p.parquet"
    )
    env = {**os.environ, "PYSPARK_PYTHON": str(bare / "bin" / "python")}
    done = receval("run", config, env=env)
    assert done.returncode == 2, done.stderr[-3000:]
    assert _error_lines(done.stderr) == [
        "error: engine: spark: the executors' Python cannot import pyarrow (No module named "
        "'pyarrow'). Ship receval's environment to the executors: a packed environment "
        "(spark.archives and PYSPARK_PYTHON), receval installed on every node from its "
        "wheel, or addPyFile in a notebook (docs/engines.md, Running on a cluster)."
    ]


def test_a_local_session_needs_no_python_setting(spark_installed: None, tmp_path: Path) -> None:
    """receval starts the JVM on a local master: its Python workers run this Python (the
    `python3` on the PATH may lack pyarrow), with no Spark log line on the terminal."""
    config = write_case(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "VIRTUAL_ENV")}
    java = os.path.dirname(shutil.which("java") or "/usr/bin/java")
    env["PATH"] = f"{java}:/usr/bin:/bin"  # Java, and no virtual environment's python3 first
    done = receval("run", config, "--engine", "spark", "--format", "json", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _error_lines(done.stderr) == []
    assert json.loads(done.stdout)["models"]["model"]["inputs"]["engine"]["name"] == "spark"
