"""engine: spark refuses what needs no data before a Spark session starts.

A config error that needs no rows (a metric against the catalog with no catalog named, a
metric whose side column needs an optional input the config does not give) exited 2
after 23 to 50 s on a cluster, once an application had run its first tasks; in memory
it takes 2 s. The matrix is the registry: every registered metric alone in a config
without optional inputs, run in memory and on Spark with the session start replaced by
a stub. Where the in-memory run refuses a missing input, Spark gives the same line and
never reaches the session; where it does not, Spark reaches it (no false refusal). The
same with the inputs as file: URIs, and with an optional input that only Spark can read
(a URI), which satisfies the check without being read here. No pyspark needed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import hand_case, invoke

from receval_cli.metrics import REGISTRY

REACHED = 42  # the stub's exit code: the session would have started
REFUSED: list[str] = []  # the registry's metrics the matrix saw refused for a missing input


@pytest.fixture
def no_session(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replace the Spark session's start by one that records it and exits REACHED, with
    pyspark taken as installed (these tests run where the spark extra is not)."""
    from receval_cli.engines import spark as engine

    started: list[str] = []

    def stub(spark: Any, settings: Any) -> Any:
        started.append("session")
        raise SystemExit(REACHED)

    monkeypatch.setattr(engine, "spark_session", stub)
    monkeypatch.setattr(engine, "require_pyspark", lambda: None)
    return started


def _error(stderr: str) -> dict[str, Any]:
    """The one JSON `error` line of a --log-format json run."""
    lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    errors = [line for line in lines if line.get("level") == "error"]
    assert len(errors) == 1, stderr
    return errors[0]


def _missing_input(error: dict[str, Any]) -> bool:
    """An error that names an optional input the config does not give."""
    fields = error.get("fields", {})
    found, key = str(fields.get("found")), str(fields.get("key"))
    named = found in ("catalog", "interactions", "baseline or interactions")
    return key == "catalog.path" or key.startswith("catalog.columns") or named


def _run(config: Path) -> tuple[int, str]:
    result = invoke("--log-format", "json", "run", config, "-q")
    return result.exit_code, result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_a_missing_input_is_refused_before_spark_starts(
    name: str, tmp_path: Path, no_session: list[str]
) -> None:
    in_memory = hand_case(tmp_path / "m", metrics=[name], engine="in_memory")
    code, stderr = _run(in_memory)
    on_spark = hand_case(tmp_path / "s", metrics=[name], engine="spark")
    spark_code, spark_stderr = _run(on_spark)
    if code == 2 and _missing_input(_error(stderr)):
        REFUSED.append(name)
        assert spark_code == 2, (spark_code, spark_stderr)
        assert not no_session, "Spark started before refusing a config error"
        expected = _error(stderr)["message"].replace(str(tmp_path / "m"), "")
        got = _error(spark_stderr)["message"].replace(str(tmp_path / "s"), "")
        # the same line, or Spark's own refusal of the metric (accuracy, mcc: run_plan)
        assert got == expected or got.startswith("engine: spark does not"), (got, expected)
    elif spark_code == 2:  # refused by the engine (click metrics): still before Spark
        assert not no_session, spark_stderr
    else:
        assert (spark_code, no_session) == (REACHED, ["session"]), spark_stderr


def test_the_universe_is_checked_before_spark_with_uri_inputs(
    tmp_path: Path, no_session: list[str]
) -> None:
    """gini without a catalog, the inputs given as file: URIs (Spark's to read)."""
    config = hand_case(tmp_path, metrics=["ndcg@2", "gini@2"], engine="spark")
    for role in ("predictions.csv", "truth.csv"):
        text = config.read_text(encoding="utf-8")
        uri = (tmp_path / role).resolve().as_uri()
        config.write_text(text.replace(f"path: {role}", f"path: {uri}"), encoding="utf-8")
    assert "file://" in config.read_text(encoding="utf-8")
    code, stderr = _run(config)
    assert code == 2, stderr
    assert "gini@2 measure(s) the recommendations against the catalog" in _error(stderr)["message"]
    assert not no_session


def test_an_input_only_spark_reads_satisfies_the_check(
    tmp_path: Path, no_session: list[str]
) -> None:
    """novelty needs the interactions log; given as a URI, it is Spark's to read: the run
    goes on to the session (no refusal here), and without it the refusal comes first,
    also beside a catalog that only Spark reads (whose features are checked once read)."""
    log = tmp_path / "log.csv"
    log.write_text("user,item\nu1,a\nu2,d\n", encoding="utf-8")
    without = hand_case(tmp_path / "a", metrics=["novelty@2"], engine="spark")
    code, stderr = _run(without)
    assert code == 2, stderr
    assert "needs the interactions input" in _error(stderr)["message"]
    assert not no_session
    given = hand_case(
        tmp_path / "b",
        metrics=["novelty@2", "catalog_coverage@2"],
        engine="spark",
        interactions={"path": log.resolve().as_uri()},
    )
    code, stderr = _run(given)
    assert (code, no_session) == (REACHED, ["session"]), stderr
    # a catalog only Spark reads does not stand in for the missing log
    catalog = tmp_path / "catalog.csv"
    catalog.write_text("item,category\na,x\nb,y\nd,x\n", encoding="utf-8")
    other = hand_case(
        tmp_path / "c",
        metrics=["novelty@2", "intra_list_diversity@2"],
        engine="spark",
        catalog={"path": catalog.resolve().as_uri()},
    )
    no_session.clear()
    code, stderr = _run(other)
    assert code == 2, stderr
    assert "needs the interactions input" in _error(stderr)["message"]
    assert not no_session


@pytest.mark.slow  # with the matrix it checks
def test_the_matrix_saw_refusals() -> None:
    """The registry matrix above met the case it is for (run after it, in file order)."""
    assert {"gini", "novelty", "catalog_coverage", "serendipity"} <= set(REFUSED), REFUSED
