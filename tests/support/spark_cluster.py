"""A Spark standalone master and worker on 127.0.0.1 for the cluster tests."""

from __future__ import annotations

import os
import random
import re
import signal
import socket
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml

# these helpers wait on the clock and serve only slow tests: the mark says so to
# tests/test_clock_free.py, which reads a module's pytestmark
pytestmark = pytest.mark.slow

ROOT = Path(__file__).parents[2]


MAIN = ROOT / "receval_cli" / "__main__.py"


METRICS = ["precision@5", "recall@10", "map@10", "mrr", "ndcg@5", "ndcg(gain=exponential)"]
METRICS += ["r_precision", "num_rel_ret", "catalog_coverage@5", "gini@5", "entropy@5"]
METRICS += ["intra_list_diversity@5"]


# the JVM's own line when it starts with Spark's incubator module (not a log line)
JVM_NOTICE = "WARNING: Using incubator modules: jdk.incubator.vector"


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
