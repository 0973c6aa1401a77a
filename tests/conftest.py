"""Shared fixtures: one Spark session per test run (started only by the tests that ask).

Every test that uses the `spark` fixture is marked `spark`, so `pytest -m spark` runs just
those (CI does, after installing the `spark` extra). Without pyspark or Java they skip with
the reason; with RECEVAL_REQUIRE_SPARK=1 (CI's Spark step) they fail instead, so a broken
Spark install cannot pass as a row of skips.
"""

from __future__ import annotations

import importlib.util
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parent.parent

# No bytecode caches in the checkout, from this process (a module loaded from a file, e.g.
# sample_data/generate.py) or from any child Python a test starts: on a clone without
# PYTHONDONTWRITEBYTECODE they would appear as __pycache__ folders and fail the guard below.
sys.dont_write_bytecode = True
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
# No core files either: a child a test kills or starves (signals, memory limits) may abort,
# and where core dumps are on (ulimit -c unlimited, core_pattern "core") it would leave
# `core` in its working directory, the checkout, failing the guard at the suite's end.
resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
_WATCHED = ("", "configs", "sample_data", "tests", "benchmarks")


def _checkout_files() -> set[str]:
    found = set()
    for folder in _WATCHED:
        path = ROOT / folder
        if path.is_dir():
            found |= {f"{folder}/{name}" for name in os.listdir(path)}
    return found


@pytest.fixture(scope="session", autouse=True)
def _the_checkout_stays_clean() -> Iterator[None]:
    """No test may write into the checkout (its outputs belong in tmp_path): a file that
    appears at the top or in configs/, sample_data/, tests/ or benchmarks/ fails the run."""
    before = _checkout_files()
    yield
    appeared = sorted(_checkout_files() - before - {"/.hypothesis", "/.pytest_cache"})
    assert not appeared, f"tests wrote into the checkout: {appeared}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "spark_installed" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


# --- tests that make polars panic run in a process of their own ---------------------------
#
# A process in which polars panicked (a Rust panic inside its reader, on a damaged Parquet
# page; or inside its async executor while a failed streaming query cancels its other
# tasks: "joined on cancelled task", "invalid TaskData when polling") is not safe to reuse:
# in CI, streaming queries run later in such a pytest process have waited forever on a
# futex (the suite ran out its 90 minutes). A `receval` command
# exits after the panic, so users never reuse one; the suite must not either. A test marked
# `own_process` runs in a fresh `python -m pytest NODEID` (the marker is ignored there),
# with a time limit, and its output is shown when it fails; any other test in whose process
# polars panics fails and says to mark it.

OWN_PROCESS = "RECEVAL_TEST_IN_OWN_PROCESS"
OWN_PROCESS_LIMIT = 540  # seconds: under pytest-timeout's 600, so the child's output shows
_RUST_PANIC = re.compile(r"thread '[^'\n]*'(?: \(\d+\))? panicked at ")  # Rust's panic line


def _in_own_process(item: pytest.Item) -> bool:
    return item.get_closest_marker("own_process") is not None


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run an `own_process` test in a child pytest (see above); None lets pytest call it."""
    if not _in_own_process(pyfuncitem) or os.environ.get(OWN_PROCESS) == "1":
        return None
    command = [sys.executable, "-m", "pytest", pyfuncitem.nodeid, "-q", "-p", "no:cacheprovider"]
    try:
        child = subprocess.run(
            command,
            cwd=pyfuncitem.config.rootpath,
            env={**os.environ, OWN_PROCESS: "1"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=OWN_PROCESS_LIMIT,
        )
    except subprocess.TimeoutExpired as stuck:
        seen = stuck.stdout or b""
        output = (seen.decode(errors="replace") if isinstance(seen, bytes) else seen)[-6000:]
        pytest.fail(f"the test's own process ran past {OWN_PROCESS_LIMIT} s:\n{output}")
    if child.returncode != 0:
        pytest.fail(f"the test failed in its own process:\n{child.stdout[-12000:]}{child.stderr}")
    return True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Fail a test not marked `own_process` in whose process polars panicked."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.passed or _in_own_process(item):
        return
    if _RUST_PANIC.search(report.capstderr):
        report.outcome = "failed"
        report.longrepr = (
            "polars panicked inside this test's process, which other tests go on using (a "
            "process where polars panicked has later hung): mark the test "
            "@pytest.mark.own_process so it runs in a process of its own"
        )


def _missing_spark() -> str | None:
    """Why Spark cannot start here, or None."""
    if importlib.util.find_spec("pyspark") is None:
        return "pyspark is not installed (the spark extra: uv sync --extra spark)"
    if shutil.which("java") is None:
        return "Spark needs Java 17 or newer, and no `java` is on the PATH"
    return None


@pytest.fixture(scope="session")
def spark_installed() -> None:
    """Skip, with the reason, without pyspark (the `spark` extra) or without Java; fail
    instead with RECEVAL_REQUIRE_SPARK=1."""
    missing = _missing_spark()
    if missing is not None:
        if os.environ.get("RECEVAL_REQUIRE_SPARK") == "1":
            pytest.fail(f"RECEVAL_REQUIRE_SPARK=1 but {missing}")
        pytest.skip(missing)


@pytest.fixture(scope="session")
def spark(spark_installed: None) -> Iterator[Any]:
    """A local[2] SparkSession (see spark_installed)."""
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("receval-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", tempfile.mkdtemp(prefix="receval-warehouse-"))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
