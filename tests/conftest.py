"""Shared fixtures: one Spark session per test run (started only by the tests that ask)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A local[2] SparkSession; the Spark tests are skipped, with the reason, without
    pyspark (the `spark` extra) or without Java."""
    pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (extra: spark)")
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java 17 or newer, and no `java` is on the PATH")
    del pyspark
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("receval-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
