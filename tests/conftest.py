"""Shared fixtures: one Spark session per test run (started only by the tests that ask).

Every test that uses the `spark` fixture is marked `spark`, so `pytest -m spark` runs just
those (CI does, after installing the `spark` extra). Without pyspark or Java they skip with
the reason; with RECEVAL_REQUIRE_SPARK=1 (CI's Spark step) they fail instead, so a broken
Spark install cannot pass as a row of skips.
"""

from __future__ import annotations

import importlib.util
import os
import resource
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hypothesis_profile  # noqa: F401 (no deadline, no health check: loaded on import)
import pytest
from fault_cases import big_config  # noqa: F401 (the stop tests' fixture, found here by name)
from process_isolation import (  # noqa: F401 (pytest's hooks, found here by name)
    pytest_pyfunc_call,
    pytest_runtest_makereport,
    watch_polars,
)

ROOT = Path(__file__).parent.parent

# No bytecode caches in the checkout, from this process (a module loaded from a file, e.g.
# sample_data/generate.py) or from any child Python a test starts: on a clone without
# PYTHONDONTWRITEBYTECODE they would appear as __pycache__ folders and fail the guard below.
# They go to a folder of the system's temporary directory instead (sys.pycache_prefix), even
# where PYTHONDONTWRITEBYTECODE is set: compiling every module (receval's, the installed
# packages') again in every child Python and rewriting every test module's asserts again
# cost the suite minutes.
PYCACHE = Path(tempfile.gettempdir()) / f"receval-tests-pycache-{os.getuid()}"
sys.pycache_prefix = str(PYCACHE)
sys.dont_write_bytecode = False
os.environ["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# No core files either: a child a test kills or starves (signals, memory limits) may abort,
# and where core dumps are on (ulimit -c unlimited, core_pattern "core") it would leave
# `core` in its working directory, the checkout, failing the guard at the suite's end.
resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
_WATCHED = ("", "configs", "sample_data", "tests", "benchmarks")
# and every folder of tests/ that holds test modules (tests/<package>/, tests/peers/<tool>/)
_WATCHED += tuple(
    sorted(
        str(folder.relative_to(ROOT))
        for folder in (ROOT / "tests").rglob("*")
        if folder.is_dir() and any(folder.glob("test_*.py"))
    )
)


def _checkout_files() -> set[str]:
    found = set()
    for folder in _WATCHED:
        path = ROOT / folder
        if path.is_dir():
            found |= {f"{folder}/{name}" for name in os.listdir(path)}
    return found


_ALLOWED = {"/.hypothesis", "/.pytest_cache"}


@pytest.fixture(autouse=True)
def _the_checkout_stays_clean() -> Iterator[None]:
    """No test may write into the checkout (its outputs belong in tmp_path): a file that
    appears at the top or in configs/, sample_data/, tests/ (or a folder of its test
    modules) or benchmarks/ during a test
    fails that test, named (checked after each test, not once at the end, where the
    failure fell on the suite's last test whichever test wrote the file)."""
    before = _checkout_files()
    yield
    appeared = sorted(_checkout_files() - before - _ALLOWED)
    assert not appeared, (
        f"this test (or a process it started) wrote into the checkout: {appeared}; write "
        "into tmp_path instead"
    )


# --- the quick tests stay quick -------------------------------------------------------
# `uv run pytest` (no -m) skips the tests marked slow or spark, to stay within about 3
# minutes on 2 cores; .ci/run runs them with `-m`. They are skipped, not deselected, so
# that every test is collected (`pytest --collect-only` lists them all). A test that takes
# longer than QUICK_SECONDS without the mark is named at the end of the run, so that it
# gets the mark (no test fails for its time).
LEFT_OUT_OF_THE_QUICK_RUN = ("slow", "spark")
QUICK_SECONDS = 4.0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "spark_installed" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
    if _marks_chosen(config):
        return
    for item in items:
        left_out = [m for m in LEFT_OUT_OF_THE_QUICK_RUN if item.get_closest_marker(m)]
        if left_out:
            reason = f"marked {left_out[0]}: run with -m {left_out[0]} (as .ci/run does)"
            item.add_marker(pytest.mark.skip(reason=reason))


def _marks_chosen(config: pytest.Config) -> bool:
    """A -m was given (on the command line or in PYTEST_ADDOPTS), even -m "" (every test,
    whatever its marks: tests/support/process_isolation.py runs a node that way)."""
    words = [*config.invocation_params.args, *os.environ.get("PYTEST_ADDOPTS", "").split()]
    return bool(config.option.markexpr) or any(str(word).startswith("-m") for word in words)


def pytest_xdist_auto_num_workers(config: Any) -> int:
    """`-n auto`: one worker per CPU this process may run on, at most 8 (each worker holds
    polars and the test modules: a machine that shows many CPUs but grants few, or has
    little memory per CPU, is not flooded)."""
    return max(1, min(len(os.sched_getaffinity(0)), 8))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    unmarked = [
        report
        for report in terminalreporter.getreports("passed") + terminalreporter.getreports("failed")
        if report.when == "call"
        and report.duration > QUICK_SECONDS
        and "slow" not in report.keywords
    ]
    if unmarked:
        terminalreporter.section("tests to mark slow")
        for report in sorted(unmarked, key=lambda r: -r.duration):
            terminalreporter.line(f"{report.duration:5.1f} s  {report.nodeid}")


# --- tests in which a polars query fails run in a process of their own -------------------
# (why and how: tests/support/process_isolation.py)

watch_polars()


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
