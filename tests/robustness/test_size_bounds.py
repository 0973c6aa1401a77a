"""Size bounds and the history store's races: what a config can make big is bounded, every
float of a report is finite or null, and readers and prunes of one store run side by side.

The bounds' simplest rows are in test_matrix.py's BAD list (iprec_avg's levels, segments,
resamples, an alias of a long text); here: a gains map, the permutation test's
resamples, ctr with weights near the largest float, a non-finite value in every format,
a full disk under the store, and concurrent prunes.
"""

from __future__ import annotations

import datetime
import json
import os
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import polars as pl
import pytest
from cli_helpers import assert_no_traceback, assert_user_error, hand_case, invoke, write

pytestmark = pytest.mark.slow  # left out of `uv run pytest`; .ci/run runs it

GAINS_2001 = ";".join(f"{grade}:1" for grade in range(2001))


def test_a_gains_map_counts_one_value_per_grade(tmp_path: Path) -> None:
    config = hand_case(tmp_path, metrics=[f"ndcg@2(gains={GAINS_2001})"])
    result = invoke("run", config)
    assert_user_error(result, "metrics[0]", "2,001 grades of the gains map", "at most 2,000")


def test_the_permutation_tests_resamples_count(tmp_path: Path) -> None:
    write(tmp_path / "other.csv", "user,item,score\nu1,a,1\n")
    config = hand_case(
        tmp_path,
        predictions={"models": {"a": "predictions.csv", "b": "other.csv"}},
        metrics=["iprec_avg(levels=100)"],
        comparison={"test": "permutation", "resamples": 1_000_000},
    )
    result = invoke("run", config)
    assert_user_error(
        result,
        "comparison.resamples: 1,000,000 resamples of 100 metric values make 100,000,000",
        "at most 20,000,000",
    )


# ctr with weights near the largest float: the case (exit 3 before, on the
# effective sample size's inf / inf)
LOG = "user,item,click,propensity\nu1,a,1,1e-300\nu2,a,1,1e-300\nu2,c,0,0.5\n"
RECOMMENDED = "user,item,score\nu1,a,0.5\nu1,b,0.2\nu2,a,0.4\nu2,c,0.3\n"


def ctr_case(folder: Path, *metrics: str) -> Path:
    return hand_case(
        folder,
        rows=RECOMMENDED,
        truth_rows=LOG,
        ground_truth={
            "path": "truth.csv",
            "columns": {"relevance": "click", "propensity": "propensity"},
        },
        metrics=list(metrics),
    )


def test_ctr_with_weights_near_the_largest_float_is_finite(tmp_path: Path) -> None:
    """Weights 1e300: ips = (1e300 + 1e300 + 0) / 4 and the effective sample size
    (2e300 + 2)^2 / (2e600 + 4) = 2 are finite; so is the mean of two weights of 1e308
    (their sum overflows)."""
    config = ctr_case(
        tmp_path,
        "ctr@3(estimator=ips,max_weight=1e308)",
        "ctr(estimator=ips)",
        "ctr(estimator=dr,max_weight=1e308)",
    )
    result = invoke("run", config, "-f", "json")
    assert_no_traceback(result)
    assert result.exit_code == 0, result.stderr
    model = json.loads(result.stdout)["models"]["model"]
    assert model["metrics"]["ctr@3(estimator=ips,max_weight=1e+308)"] == pytest.approx(5e299)
    assert model["metrics"]["ctr(estimator=ips)"] == pytest.approx(5e299)
    assert model["metrics"]["ctr(estimator=dr,max_weight=1e+308)"] == pytest.approx(2.75e299)
    sizes = model["logged"]["effective_sample_size"]
    assert all(size == pytest.approx(2.0) for size in sizes.values()), sizes

    huge = "user,item,click,propensity\nu1,a,1,1e-308\nu2,a,1,1e-308\n"
    config = ctr_case(tmp_path / "sum", "ctr(estimator=ips,max_weight=1.5e308)")
    write(tmp_path / "sum" / "truth.csv", huge)
    result = invoke("run", config, "-f", "json")
    assert result.exit_code == 0, result.stderr
    metrics = json.loads(result.stdout)["models"]["model"]["metrics"]
    # weights 1e308 (under max_weight): (1e308 + 1e308 + 0 + 0) / 4, though the sum overflows
    assert metrics["ctr(estimator=ips,max_weight=1.5e+308)"] == pytest.approx(1e308 / 2)


FORMATS = ("json", "markdown", "csv", "junit", "github", "html", "table")


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_non_finite_value_is_null_in_every_format(
    tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever float is not finite when the report is made (here the effective sample
    size, forced to NaN) is null with a warning naming it, in every format: never an
    internal error, never `nan` shown as a value."""
    monkeypatch.setattr(
        "receval_cli.evaluation.click_parts.effective_sample_size",
        lambda part: float("nan"),
    )
    config = ctr_case(tmp_path, "ctr(estimator=ips)")
    out = tmp_path / f"report.{fmt}"
    result = invoke("run", config, "-q", "-f", fmt, "-o", out)
    assert_no_traceback(result)
    assert result.exit_code == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    note = "models.model.logged.effective_sample_size.ctr(estimator=ips) is nan, not a finite"
    assert note in " ".join(result.stderr.split())  # the run's warnings, whatever the format
    if fmt in ("json", "markdown", "github", "html"):  # and the report's own warnings
        assert "not a finite number" in text
    if fmt == "json":
        logged = json.loads(text)["models"]["model"]["logged"]
        assert logged["effective_sample_size"] == {"ctr(estimator=ips)": None}


# --- the history store ------------------------------------------------------------------


def test_a_full_disk_under_the_store_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """polars' Parquet writer on a full disk says only "Invalid thrift: transport error":
    the message says the disk is full and names the run's file in the store."""
    config = hand_case(tmp_path)
    store = tmp_path / "runs"

    def full(*args: Any, **kwargs: Any) -> None:
        raise pl.exceptions.ComputeError(
            "parquet: File out of specification: Invalid thrift: transport error"
        )

    real_statvfs = os.statvfs

    def no_room(path: Any) -> Any:
        found = real_statvfs(path)
        return SimpleNamespace(f_bavail=0, f_frsize=found.f_frsize)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", full)
    monkeypatch.setattr(os, "statvfs", no_room)
    result = invoke("run", config, "--history", store)
    stderr = assert_user_error(result, f"output {store}/", "No space left on device")
    assert "thrift" not in stderr


def _run_file(store: Path, number: int) -> None:
    """A run's file as receval writes it: a hidden temporary one renamed into place."""
    from receval_cli.history.store import SCHEMA

    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    run_id = f"{20260101 + number:08d}T000000.000000Z-{number:08x}"
    row = dict.fromkeys(SCHEMA)
    row.update(
        run_id=run_id,
        started_at=start + datetime.timedelta(seconds=number),
        model="m",
        metric="ndcg@10",
        value=0.5,
        higher_is_better=True,
        tags=[],
    )
    temporary = store / f".{run_id}.tmp"
    pl.DataFrame([row], schema=SCHEMA).write_parquet(temporary)
    os.replace(temporary, store / f"{run_id}.parquet")


def test_readers_and_prunes_of_one_store_run_side_by_side(tmp_path: Path) -> None:
    """A job appends runs while two jobs prune the store and another reads it, for three
    seconds: a file pruned between a listing and its reading is passed over (by a reader
    and by the other prune), never an error."""
    from receval_cli.history.store import prune, read_store

    store = tmp_path / "runs"
    store.mkdir()
    failures: list[BaseException] = []
    until = time.monotonic() + 3
    counts = {"reads": 0, "prunes": 0}

    def loop(step: Any, name: str) -> None:
        try:
            while time.monotonic() < until:
                step()
                counts[name] = counts.get(name, 0) + 1
        except BaseException as error:  # reported by the test
            failures.append(error)

    numbers = iter(range(1_000_000))

    def append() -> None:
        for _ in range(3):
            _run_file(store, next(numbers))
        time.sleep(0.02)

    jobs = [
        threading.Thread(target=loop, args=(append, "appends")),
        threading.Thread(target=loop, args=(lambda: read_store(store), "reads")),
        threading.Thread(target=loop, args=(lambda: read_store(store), "reads2")),
        threading.Thread(target=loop, args=(lambda: prune(store, 2), "prunes")),
        threading.Thread(target=loop, args=(lambda: prune(store, 1), "prunes2")),
    ]
    for job in jobs:
        job.start()
    for job in jobs:
        job.join()
    assert not failures, failures[0]
    assert counts["reads"] > 5, counts
    assert counts["prunes"] > 5, counts


def test_history_and_prune_commands_side_by_side(tmp_path: Path) -> None:
    """The same through the command line: `receval history` in a loop while `receval
    history --prune --keep 1` runs in a loop beside it, runs being appended meanwhile."""
    import subprocess
    import sys

    store = tmp_path / "runs"
    store.mkdir()
    for number in range(20):
        _run_file(store, number)
    loop = (
        "import sys, time\n"
        "from typer.testing import CliRunner\n"
        "from receval_cli.cli.app import app\n"
        "until = time.monotonic() + 3\n"
        "while time.monotonic() < until:\n"
        "    result = CliRunner().invoke(app, sys.argv[1:])\n"
        "    if result.exit_code != 0:\n"
        "        print(result.stdout, result.stderr); sys.exit(1)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
    commands = [["history", str(store)], ["history", str(store), "--prune", "--keep", "1"]]
    jobs = [
        subprocess.Popen(
            [sys.executable, "-c", loop, *command],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for command in [*commands, commands[1]]
    ]
    until = time.monotonic() + 3
    number = 20
    while time.monotonic() < until:
        _run_file(store, number)
        number += 1
    for job in jobs:
        output, _ = job.communicate(timeout=60)
        assert job.returncode == 0, output
