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
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml

ROOT = Path(__file__).parent.parent
MAIN = ROOT / "receval_cli" / "__main__.py"
METRICS = ["precision@5", "recall@10", "map@10", "mrr", "ndcg@5", "ndcg(gain=exponential)"]
METRICS += ["r_precision", "num_rel_ret", "catalog_coverage@5", "gini@5", "entropy@5"]
METRICS += ["intra_list_diversity@5"]
# the JVM's own line when it starts with Spark's incubator module (not a log line)
JVM_NOTICE = "WARNING: Using incubator modules: jdk.incubator.vector"

pytestmark = pytest.mark.slow


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(log: Path, text: str, process: subprocess.Popen[bytes], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.2)
    raise AssertionError(f"no {text!r} in {log}:\n{log.read_text(errors='replace')[-3000:]}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a daemon and everything it started (its own process group)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(30)


def _spark_env(folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        SPARK_HOME=str(_spark_home()),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOG_DIR=str(folder / "logs"),
        SPARK_WORKER_DIR=str(folder / "work"),
    )
    return env


@dataclass(frozen=True)
class Cluster:
    url: str
    work: Path  # the worker's folder: one per application, one per executor in it


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


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")


def _requirements(dist: str) -> list[str]:
    """The names of a distribution's requirements, without those of its extras (those of
    another platform are not installed, and are passed over where they are looked up)."""
    texts = metadata.requires(dist) or []
    return [m.group(0) for t in texts if "extra ==" not in t and (m := _NAME.match(t))]


def _runtime_distributions(packages: tuple[str, ...] = ()) -> dict[str, metadata.Distribution]:
    """`packages` (by default receval's runtime dependencies and the executors' Arrow
    libraries, pyarrow and pandas) with everything they need, as pip would install them;
    not pyspark (the cluster brings its own)."""
    wanted = list(packages) or [*_requirements("receval"), "pyarrow", "pandas"]
    found: dict[str, metadata.Distribution] = {}
    while wanted:
        name = re.sub(r"[-_.]+", "-", wanted.pop()).lower()
        if name in found or name in ("pyspark", "py4j", "receval"):
            continue
        try:
            found[name] = metadata.distribution(name)
        except metadata.PackageNotFoundError:  # a requirement of another platform
            continue
        wanted += _requirements(name)
    return found


def pack_environment(
    folder: Path, with_receval: bool = True, packages: tuple[str, ...] = ()
) -> Path:
    """docs/engines.md's recipe 1, offline: `python -m venv --copies` (an archive Spark unpacks
    must not hold links that point outside it), the installed libraries and receval in its
    site-packages, tarred and gzipped with the venv at the archive's top (Spark unpacks a
    .tar.gz with `tar`, which keeps bin/python executable; a plain .tar loses the mode).
    Without receval: the libraries only, as on a cluster whose nodes have them; with
    `packages`: those and their requirements only (see _runtime_distributions)."""
    env = folder / "environment"
    subprocess.run([sys.executable, "-m", "venv", "--copies", "--without-pip", env], check=True)
    (site,) = (env / "lib").glob("python*/site-packages")
    inside = site.relative_to(env)
    archive = folder / "environment.tar.gz"
    with tarfile.open(archive, "w:gz", compresslevel=1) as tar:
        tar.add(env / "pyvenv.cfg", "pyvenv.cfg")
        tar.add(env / "bin", "bin")
        for dist in _runtime_distributions(packages).values():
            for file in dist.files or []:
                source = Path(str(dist.locate_file(file)))
                if ".." not in file.parts and source.is_file():
                    tar.add(source, str(inside / file))
        if with_receval:
            tar.add(
                ROOT / "receval_cli",
                str(inside / "receval_cli"),
                filter=lambda entry: None if "__pycache__" in entry.name else entry,
            )
    return archive


def write_case(folder: Path, seed: int = 7) -> Path:
    """Integer ids whose text and number orders differ, tied scores, graded and fractional
    relevance, lists from 1 to 30 long, users missing from either file; a catalog with
    categories."""
    rng = random.Random(seed)
    items = [9, 10, 100, *(item for item in range(11, 400) if item != 100)]
    predictions, truth = [], []
    for user in range(1, 601):
        if user % 17 != 0:  # some users have no recommendations
            for item in rng.sample(items, rng.randint(1, 30)):
                predictions.append((user, item, rng.choice([0.1, 0.5, 0.5, 0.9, 1.0])))
        if user % 13 != 0:  # some have no ground truth
            for item in rng.sample(items, rng.randint(1, 12)):
                truth.append((user, item, rng.choice([0.5, 1.0, 2.0, 3.0])))
    pl.DataFrame(predictions, schema=["user", "item", "score"], orient="row").write_parquet(
        folder / "predictions.parquet"
    )
    pl.DataFrame(truth, schema=["user", "item", "relevance"], orient="row").write_csv(
        folder / "truth.csv"
    )
    catalog = pl.DataFrame({"item": items, "category": [f"c{item % 7}" for item in items]})
    catalog.write_csv(folder / "catalog.csv")
    config = {
        "predictions": {"path": "predictions.parquet"},
        "ground_truth": {"path": "truth.csv"},
        "catalog": {"path": "catalog.csv", "columns": {"category": "category"}},
        "metrics": METRICS,
        "conventions": {"relevance_threshold": 1.0},
    }
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def receval(*args: Any, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, MAIN, *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


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


_LOG_LINE = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d ")


def _not_logs(stderr: str) -> str:
    """spark-submit's stderr without Spark's log lines (its driver logs at INFO there)."""
    return "\n".join(line for line in stderr.splitlines() if not _LOG_LINE.match(line))[-4000:]


def _error_lines(stderr: str) -> list[str]:
    """stderr without the JVM's start-up notice."""
    return [line for line in stderr.splitlines() if line != JVM_NOTICE]


NOTEBOOK = """
import json, os, shutil, sys
from pathlib import Path

from pyspark.sql import SparkSession

import receval_cli
from receval_cli.config.loading import load_config
from receval_cli.engines.spark import evaluate_spark

master, archive, config, out, work = sys.argv[1:]
# the notebook's own session, on the cluster (whose executors have polars and pyarrow)
spark = (
    SparkSession.builder.master(master)
    .config("spark.archives", archive + "#environment")
    .config("spark.ui.enabled", "false")
    .getOrCreate()
)
# docs/engines.md's notebook recipe, as written there
package = os.path.dirname(os.path.dirname(receval_cli.__file__))
spark.sparkContext.addPyFile(
    shutil.make_archive(os.path.join(work, "receval"), "zip", package, "receval_cli")
)
report = evaluate_spark(load_config(Path(config)), spark, buckets=16)
Path(out).write_text(json.dumps(report.metrics))
"""


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


def _damaged_parquet(folder: Path) -> Path:
    """The hand case's truth and a predictions file whose first page header is damaged: its
    footer reads (so the polars readers' checks pass), its rows do not (Spark finds out
    while the buckets run)."""
    frame = pl.DataFrame(
        {"user": ["u1", "u1", "u2"], "item": ["a", "b", "c"], "score": [0.9, 0.8, 0.7]}
    )
    frame.write_parquet(folder / "p.parquet")
    data = (folder / "p.parquet").read_bytes()
    (folder / "p.parquet").write_bytes(data[:4] + b"\xff" * 8 + data[12:])
    (folder / "t.csv").write_text("user,item\nu1,a\nu2,c\n")
    config = folder / "config.yaml"
    config.write_text(
        "predictions: {path: p.parquet}\nground_truth: {path: t.csv}\nmetrics: [ndcg@2]\n"
        "engine: spark\n"
    )
    return config


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
