"""The history store: `receval run --history` appends one Parquet file per run,
`receval history` shows the trends, and a gate can compare with the recent past.

A cron job in small: the hand case of cli_helpers ranked three ways on three days, the
expected values computed here from the formulas (not from receval), then read back by
plain polars and DuckDB, shown in every format, and gated against the history.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import (
    assert_user_error,
    hand_case,
    invoke,
    write,
    write_config,
)
from history_runs import DAYS, GATE, _history, _synthetic_store, cron, duckdb, run_day


def test_every_report_says_which_run_it_is(tmp_path: Path) -> None:
    config = hand_case(tmp_path)
    before = datetime.datetime.now(datetime.UTC)
    result = invoke("run", config, "-f", "json", "--label", "abc123", "--tag", "a=1", "--tag", "b=")
    after = datetime.datetime.now(datetime.UTC)
    assert result.exit_code == 0, result.stderr
    run = json.loads(result.stdout)["run"]
    assert set(run) == {"id", "started_at", "label", "tags", "config_hash"}
    started = datetime.datetime.fromisoformat(run["started_at"].replace("Z", "+00:00"))
    assert before <= started <= after
    assert run["id"].startswith(started.strftime("%Y%m%dT%H%M%S.%fZ-"))
    assert (run["label"], run["tags"]) == ("abc123", {"a": "1", "b": ""})
    again = json.loads(invoke("run", config, "-f", "json").stdout)["run"]
    assert again["id"] != run["id"]
    assert again["config_hash"] == run["config_hash"]  # the same config, the same hash
    assert len(run["config_hash"]) == 64
    hand_case(tmp_path, metrics=["precision@1"])
    changed = json.loads(invoke("run", config, "-f", "json").stdout)["run"]
    assert changed["config_hash"] != run["config_hash"]
    markdown = invoke("run", config, "-f", "markdown", "--label", "abc123").stdout
    assert f"Run {started:%Y-%m-%d}" in markdown
    assert "abc123" in markdown
    junit = invoke("run", config, "-f", "junit", "--tag", "team=x").stdout
    assert 'name="run_tag_team" value="x"' in junit
    assert 'name="run_id"' in junit


def test_source_date_epoch_makes_the_report_reproducible(tmp_path: Path) -> None:
    config = hand_case(tmp_path)
    env = {"SOURCE_DATE_EPOCH": "1700000000"}
    pages = [invoke("run", config, "-f", "html", env=env).stdout for _ in range(2)]
    assert pages[0] == pages[1]
    run = json.loads(invoke("run", config, "-f", "json", env=env).stdout)["run"]
    assert run["started_at"] == "2023-11-14T22:13:20.000000Z"
    assert run["id"].startswith("20231114T221320.000000Z-")
    result = invoke("run", config, env={"SOURCE_DATE_EPOCH": "yesterday"})
    assert_user_error(result, "SOURCE_DATE_EPOCH", "'yesterday'")


@pytest.mark.parametrize("value", ["team", "=x"])
def test_a_tag_is_key_value(tmp_path: Path, value: str) -> None:
    result = invoke("run", hand_case(tmp_path), "--tag", value)
    assert_user_error(result, "--tag", repr(value), "KEY=VALUE")


def test_a_tag_key_is_given_once(tmp_path: Path) -> None:
    result = invoke("run", hand_case(tmp_path), "--tag", "a=1", "--tag", "a=2")
    assert_user_error(result, "--tag a", "twice")


def test_three_nights_append_three_runs_that_plain_polars_and_duckdb_read(
    tmp_path: Path,
) -> None:
    store, reports = cron(tmp_path, ["better", "hand", "worse"])
    files = sorted(store.iterdir())
    assert [f.name for f in files] == sorted(f"{r['run']['id']}.parquet" for r in reports)
    rows = pl.read_parquet(store / "*.parquet").sort("started_at", "metric")
    assert rows.height == 3 * 2  # three runs, two metrics, one model, no segment
    for report, day, (metric_rows) in zip(
        reports, DAYS, rows.partition_by("run_id", maintain_order=True), strict=True
    ):
        _, precision, ndcg = DAYS[day]
        run = report["run"]
        assert metric_rows["run_id"].unique().to_list() == [run["id"]]
        got = dict(zip(metric_rows["metric"], metric_rows["value"], strict=True))
        assert got["precision@1"] == pytest.approx(precision, abs=1e-15)
        assert got["ndcg@2"] == pytest.approx(ndcg, abs=1e-15)
        assert got == report["models"]["model"]["metrics"]
        first = metric_rows.row(0, named=True)
        assert first["label"] == run["label"]
        assert first["tags"] == [{"key": "team", "value": "search"}]
        assert first["model"] == "model"
        assert first["segment"] is None
        assert first["users"] == 2
        assert first["config_hash"] == run["config_hash"]
        assert (
            first["ground_truth_hash"]
            == (report["models"]["model"]["inputs"]["ground_truth"]["content_hash"])
        )
        assert first["predictions_rows"] == 5
        started = datetime.datetime.fromisoformat(run["started_at"].replace("Z", "+00:00"))
        assert first["started_at"] == started
    # DuckDB reads the same store with one query, no receval code
    found = duckdb.sql(
        f"select metric, avg(value) as mean, count(distinct run_id) as runs "
        f"from read_parquet('{store}/*.parquet') group by metric order by metric"
    ).fetchall()
    assert found[0][0] == "ndcg@2"
    assert found[0][1] == pytest.approx(sum(d[2] for d in DAYS.values()) / 3, abs=1e-15)
    assert found[1] == ("precision@1", pytest.approx(0.5), 3)


@pytest.mark.slow
def test_history_shows_the_trend_in_every_format(tmp_path: Path) -> None:
    store, reports = cron(tmp_path, ["better", "hand", "worse"])
    # precision@1: 1.0, 0.5, 0.0; the median of the runs before the latest: 0.75
    data = json.loads(_history(store, "--format", "json", "--metric", "precision@1"))
    (series,) = data["series"]
    assert series["metric"] == "precision@1"
    assert series["runs"] == 3
    assert series["latest"]["value"] == 0.0
    assert series["latest"]["run_id"] == reports[-1]["run"]["id"]
    assert series["latest"]["label"] == "night3"
    assert series["previous"]["value"] == 0.5
    assert series["change_previous"] == -0.5
    assert series["relative_change_previous"] == -1.0
    assert series["median"] == 0.75
    assert series["median_runs"] == 2
    assert series["change_median"] == -0.75
    assert series["significant_drop"] is None  # no intervals
    assert [p["value"] for p in series["points"]] == [1.0, 0.5, 0.0]
    # ndcg@2, window 1: the median of the previous run alone
    data = json.loads(_history(store, "-f", "json", "-m", "ndcg@*", "--window", "1"))
    (series,) = data["series"]
    ndcg = [d[2] for d in DAYS.values()]
    assert series["median"] == pytest.approx(ndcg[1], abs=1e-15)
    assert series["change_median"] == pytest.approx(ndcg[2] - ndcg[1], abs=1e-15)
    # --last 2: two points shown, the trend numbers unchanged
    data = json.loads(_history(store, "-f", "json", "--last", "2"))
    assert [len(s["points"]) for s in data["series"]] == [2, 2]
    rows = list(csv.DictReader(io.StringIO(_history(store, "-f", "csv"))))
    assert [r["metric"] for r in rows] == ["precision@1", "ndcg@2"]
    assert float(rows[0]["latest"]) == 0.0
    assert float(rows[0]["change_median"]) == -0.75
    assert rows[0]["latest_label"] == "night3"
    markdown = _history(store, "-f", "markdown")
    row = "| model | precision@1 | 3 | 0.0000 | night3 | -0.5000 (-100.0%) | -0.7500 (-100.0%)"
    assert row in markdown
    table = _history(store)
    assert "precision@1" in table
    assert "█▅▁" in table  # the sparkline: 1.0, 0.5, 0.0 on eight levels
    page = _history(store, "-f", "html")
    assert page.count('data-kind="trend"') == 2
    assert "<script" not in page
    assert "night1" in page  # runs labelled on the axis
    assert _history(store, "-f", "html") == page  # byte-deterministic
    out = tmp_path / "trends.html"
    _history(store, "--output", out)
    assert out.read_text(encoding="utf-8") == page


def test_history_filters(tmp_path: Path) -> None:
    store, _ = cron(tmp_path, ["better", "hand"])
    data = json.loads(_history(store, "-f", "json", "--model", "other"))
    assert data["series"] == []
    assert "no runs match" in _history(store, "--since", "2999-01-01")
    data = json.loads(_history(store, "-f", "json", "--since", "1d"))
    assert [s["runs"] for s in data["series"]] == [2, 2]
    result = invoke("history", store, "--since", "last week")
    assert_user_error(result, "--since", "'last week'", "7d")
    result = invoke("history", tmp_path / "nowhere")
    assert_user_error(result, "nowhere", "does not exist", "--history")


def test_prune_keeps_the_latest_runs(tmp_path: Path) -> None:
    store, reports = cron(tmp_path, ["better", "hand", "worse"])
    result = invoke("history", store, "--prune", "--keep", "2")
    assert result.exit_code == 0, result.stderr
    assert "kept 2 runs, removed 1" in result.stdout
    left = pl.read_parquet(store / "*.parquet")["run_id"].unique().sort().to_list()
    assert left == sorted(r["run"]["id"] for r in reports[1:])
    assert_user_error(invoke("history", store, "--prune"), "--keep")


def test_a_history_gate_fires_on_a_drop_against_the_recent_median(tmp_path: Path) -> None:
    gates = {"precision@1": GATE}
    store = tmp_path / "history"
    job = tmp_path / "job"
    first = run_day(job, "better", "--history", store, gates=gates)
    (gate,) = first["gates"]["results"]
    assert gate["passed"] is True
    assert gate["waived"].startswith("0 past runs of this metric in the history, 2 needed")
    second = run_day(job, "hand", "--history", store, gates=gates)  # -50%, one past run
    assert "1 past run of this metric" in second["gates"]["results"][0]["waived"]
    # two past runs (1.0, 0.5): median 0.75; today 0.0 is a drop of 100% > 10%: exit 1
    third = run_day(job, "worse", "--history", store, expect=1, gates=gates)
    (gate,) = third["gates"]["results"]
    assert gate["passed"] is False
    assert gate["bound"] == "history_relative_drop"
    assert gate["reference"] == 0.75
    assert gate["value"] == 1.0
    assert gate["margin"] == pytest.approx(-0.9)
    assert len(list(store.iterdir())) == 3  # a failed gate's run is in the history too
    result = invoke("run", job / "config.yaml", "--history", store)
    assert result.exit_code == 1
    assert "drop 1 (a share of the reference) from the median of the last 2 runs" in (
        result.stdout + result.stderr
    )
    # the next night is better: median of (0.0, 0.0) is 0, 1.0 is no drop: passes
    fourth = run_day(job, "better", "--history", store, gates=gates)
    (gate,) = fourth["gates"]["results"]
    assert gate["passed"] is True
    assert "waived" not in gate
    assert gate["reference"] == 0.0
    assert gate["value"] <= 0


def test_a_history_gate_with_an_absolute_drop_and_few_runs_needed(tmp_path: Path) -> None:
    gate = {"max_drop": {"vs": "history", "runs": 5, "min_runs": 1, "absolute": 0.2}}
    store = tmp_path / "history"
    job = tmp_path / "job"
    run_day(job, "hand", "--history", store, gates={"ndcg@2": gate})
    report = run_day(job, "worse", "--history", store, expect=1, gates={"ndcg@2": gate})
    (result,) = report["gates"]["results"]
    assert result["bound"] == "history_drop"
    assert result["runs"] == 1
    assert result["value"] == pytest.approx(DAYS["hand"][2] - DAYS["worse"][2], abs=1e-15)


def test_a_history_gate_needs_a_store(tmp_path: Path) -> None:
    config = hand_case(tmp_path, gates={"precision@1": GATE})
    result = invoke("run", config)
    assert_user_error(result, "gates.precision@1", "history", "--history PATH")


@pytest.mark.parametrize(
    ("gate", "words"),
    [
        ({"vs": "history"}, ["relative", "absolute"]),
        ({"vs": "history", "relative": 0.1, "absolute": 0.1}, ["one of relative"]),
        ({"vs": "past", "relative": 0.1}, ["history"]),
        ({"vs": "history", "relative": 0.1, "runs": 3, "min_runs": 4}, ["min_runs 4"]),
    ],
)
def test_a_history_gate_is_checked(tmp_path: Path, gate: dict[str, Any], words: list[str]) -> None:
    config = hand_case(tmp_path, gates={"precision@1": {"max_drop": gate}}, history="h")
    assert_user_error(invoke("run", config), "gates", *words)
    assert not (tmp_path / "h").exists()


def test_the_config_names_the_store(tmp_path: Path) -> None:
    config = hand_case(tmp_path, history="runs/history")
    write(tmp_path / "runs" / ".keep", "")
    assert invoke("run", config, "-q").exit_code == 0
    assert len(list((tmp_path / "runs" / "history").glob("*.parquet"))) == 1
    other = tmp_path / "elsewhere"
    assert invoke("run", config, "-q", "--history", other).exit_code == 0  # the option wins
    assert len(list(other.glob("*.parquet"))) == 1


def test_a_relative_store_is_from_where_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--history runs/ is from the working directory (as --output is); the config's
    `history: runs/` from the config's folder."""
    config = hand_case(tmp_path / "configs", history="from_config")
    monkeypatch.chdir(tmp_path)
    assert invoke("run", config, "-q").exit_code == 0
    assert len(list((tmp_path / "configs" / "from_config").glob("*.parquet"))) == 1
    assert invoke("run", config, "-q", "--history", "runs", "--label", "b").exit_code == 0
    assert len(list((tmp_path / "runs").glob("*.parquet"))) == 1
    assert not (tmp_path / "configs" / "runs").exists()
    shown = invoke("history", "runs", "--format", "json")  # the path the run was given
    assert shown.exit_code == 0, shown.stderr
    assert json.loads(shown.stdout)["series"][0]["runs"] == 1


def test_a_store_that_is_not_a_folder_is_refused_before_the_run(tmp_path: Path) -> None:
    config = hand_case(tmp_path)
    a_file = write(tmp_path / "history.parquet", "x")
    assert_user_error(invoke("run", config, "--history", a_file), "history.parquet", "a file")
    assert a_file.read_text() == "x"
    missing = tmp_path / "no" / "such" / "store"
    assert_user_error(invoke("run", config, "--history", missing), "does not exist", "mkdir")
    assert not (tmp_path / "no").exists()


def test_a_foreign_file_in_the_store_is_named(tmp_path: Path) -> None:
    store, _ = cron(tmp_path, ["hand"])
    pl.DataFrame({"x": [1]}).write_parquet(store / "notes.parquet")
    result = invoke("history", store)
    assert_user_error(result, "notes.parquet", "run_id")
    write(store / "broken.parquet", "not parquet")
    assert_user_error(invoke("history", store), "broken.parquet", "could not be read")


def test_a_bad_run_appends_nothing(tmp_path: Path) -> None:
    config = hand_case(tmp_path)
    write(tmp_path / "predictions.csv", "user,item\nu1,a\n")  # no score column
    result = invoke("run", config, "--history", tmp_path / "store")
    assert result.exit_code == 2
    assert not (tmp_path / "store").exists() or not any((tmp_path / "store").iterdir())


@pytest.mark.slow
def test_two_jobs_appending_at_once_lose_nothing(tmp_path: Path) -> None:
    store = tmp_path / "history"
    configs = []
    for name in ("a", "b", "c", "d"):
        configs.append(hand_case(tmp_path / name))
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
    jobs = [
        subprocess.Popen(
            [sys.executable, "-m", "receval_cli", "run", str(c), "-q", "--history", str(store)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for c in configs
    ]
    for job in jobs:
        _, err = job.communicate(timeout=120)
        assert job.returncode == 0, err
    frame = pl.read_parquet(store / "*.parquet")
    assert frame["run_id"].n_unique() == 4
    assert frame.height == 4 * 2
    sources = sorted(set(frame["config_path"]))
    assert sources == sorted(str(c) for c in configs)
    assert sorted(p.name for p in store.iterdir()) == sorted(
        f"{i}.parquet" for i in frame["run_id"].unique()
    )  # no temporary file left


@pytest.mark.parametrize(
    ("metric", "runs", "flagged"),
    [
        ("ndcg@10", [(0.75, 0.7, 0.8), (0.55, 0.5, 0.6)], True),
        ("ndcg@10", [(0.75, 0.7, 0.8), (0.7, 0.65, 0.75)], False),  # the intervals overlap
        ("ndcg@10", [(0.55, 0.5, 0.6), (0.75, 0.7, 0.8)], False),  # a rise
        ("gini@10", [(0.55, 0.5, 0.6), (0.75, 0.7, 0.8)], True),  # lower is better
    ],
)
def test_a_significant_drop_is_flagged(
    tmp_path: Path, metric: str, runs: list[tuple[float, float, float]], flagged: bool
) -> None:
    store = tmp_path / "store"
    _synthetic_store(store, runs, metric)
    (series,) = json.loads(_history(store, "-f", "json"))["series"]
    assert series["significant_drop"] is flagged
    assert ("significant drop" in _history(store, "-f", "markdown")) is flagged
    page = _history(store, "-f", "html")
    assert "bands: confidence intervals" in page


@pytest.mark.parametrize("engine", ["in_memory", "streaming", "partitions"])
def test_every_engine_appends_the_same_rows(tmp_path: Path, engine: str) -> None:
    extra: dict[str, Any] = {"partitions": 2} if engine == "partitions" else {"engine": engine}
    rows = "user,item,score\n" + "".join(
        f"{u},{i},{(i * 7 + u) % 11 / 10}\n" for u in (9, 10, 100) for i in (3, 20, 100, 7)
    )
    truth = "user,item,rating\n9,20,2\n10,100,1\n100,3,0.5\n100,7,-1\n"
    config = hand_case(tmp_path, rows=rows, truth_rows=truth)
    write_config(
        tmp_path,
        {
            "predictions": {"path": "predictions.csv"},
            "ground_truth": {"path": "truth.csv", "columns": {"relevance": "rating"}},
            "metrics": ["ndcg@3", "precision@2", "mrr@3", "user_coverage"],
            **extra,
        },
    )
    result = invoke("run", config, "-f", "json", "--history", tmp_path / "h")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    frame = pl.read_parquet(tmp_path / "h" / "*.parquet")
    got = dict(zip(frame["metric"], frame["value"], strict=True))
    assert got == report["models"]["model"]["metrics"]
    assert math.isfinite(got["ndcg@3"])


def test_spark_appends_the_same_rows(tmp_path: Path, spark_installed: None) -> None:
    config = hand_case(tmp_path, engine="spark")
    result = invoke("run", config, "-f", "json", "--history", tmp_path / "h")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    frame = pl.read_parquet(tmp_path / "h" / "*.parquet")
    assert (
        dict(zip(frame["metric"], frame["value"], strict=True))
        == (report["models"]["model"]["metrics"])
    )
    assert frame["run_id"].unique().to_list() == [report["run"]["id"]]


@pytest.mark.slow
def test_the_history_page_renders_in_chromium(tmp_path: Path) -> None:
    from html_pages import CHROMIUM, render_in_chromium

    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (CI installs Debian's chromium)")
    store = tmp_path / "store"
    _synthetic_store(store, [(0.75, 0.7, 0.8), (0.55, 0.5, 0.6), (0.6, 0.55, 0.65)], "ndcg@10")
    page = tmp_path / "history.html"
    _history(store, "-o", page)
    shot = tmp_path / "history.png"
    assert render_in_chromium(page, shot, tmp_path / "profile") == []
    assert shot.stat().st_size > 10_000


def test_a_run_id_already_in_the_store_is_refused(tmp_path: Path) -> None:
    """SOURCE_DATE_EPOCH fixes the run id: the same run twice would name the same file,
    and the second never replaces the first (exit 2, nothing written)."""
    config = hand_case(tmp_path)
    store = tmp_path / "store"
    env = {"SOURCE_DATE_EPOCH": "1764000000"}
    assert invoke("run", config, "-q", "--history", store, env=env).exit_code == 0
    (first,) = store.iterdir()
    before = first.read_bytes()
    report = tmp_path / "report.json"
    result = invoke("run", config, "-q", "--history", store, "-o", report, env=env)
    assert_user_error(result, "already holds run", "SOURCE_DATE_EPOCH", "--label")
    assert list(store.iterdir()) == [first]
    assert first.read_bytes() == before
    assert not report.exists()
    labelled = invoke("run", config, "-q", "--history", store, "--label", "b", env=env)
    assert labelled.exit_code == 0
    assert len(list(store.iterdir())) == 2


def test_an_exclusive_output_never_replaces_a_file(tmp_path: Path) -> None:
    """The no-replace rename itself (the race the check before it cannot close): a file
    already at the path stays, the other outputs are not written, no temporary is left."""
    from receval_cli.errors import UsageError
    from receval_cli.report.destinations import Destination
    from receval_cli.report.writing import write_outputs

    taken = write(tmp_path / "run.parquet", "first")
    other = tmp_path / "report.json"
    with pytest.raises(UsageError, match="already exists"):
        write_outputs(
            {
                Destination(other, "json"): "{}",
                Destination(taken, "parquet", exclusive=True): "second",
            }
        )
    assert taken.read_text() == "first"
    assert not other.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.parquet"]


def test_a_copied_run_file_counts_once(tmp_path: Path) -> None:
    """A run's file copied inside the store (by hand, by a sync tool) is the same run: it
    is read once, from the file named after the run, with one warning naming both."""
    store, reports = cron(tmp_path, ["better", "hand", "worse"])
    first = reports[0]["run"]["id"]
    copy = store / "backup.parquet"
    copy.write_bytes((store / f"{first}.parquet").read_bytes())
    result = invoke("history", store, "-f", "json")
    assert result.exit_code == 0, result.stderr
    assert [s["runs"] for s in json.loads(result.stdout)["series"]] == [3, 3]
    assert result.stderr.count("warning:") == 1, result.stderr
    assert "backup.parquet" in result.stderr
    assert f"{first}.parquet" in result.stderr


@pytest.mark.parametrize("option", ["--per-user", "--output"])
def test_an_output_inside_the_store_is_refused(tmp_path: Path, option: str) -> None:
    """Any file in the store is read as a run: an output there would break every later
    read of the store, so it is refused before the run, and the store stays readable."""
    store, _ = cron(tmp_path, ["hand"])
    config = hand_case(tmp_path / "job")
    inside = store / ("users.parquet" if option == "--per-user" else "report.json")
    result = invoke("run", config, "--history", store, option, inside)
    assert_user_error(result, option, str(inside), "inside the history store")
    assert not inside.exists()
    _history(store)
    result = invoke("history", store, "--output", store / "trends.md")
    assert_user_error(result, "--output", "inside the history store")


def test_since_an_age_older_than_any_date_means_every_run(tmp_path: Path) -> None:
    store, _ = cron(tmp_path, ["better", "hand"])
    for age in ("99999999999999d", "3000000w", "9" * 5000 + "h"):
        data = json.loads(_history(store, "-f", "json", "--since", age))
        assert [s["runs"] for s in data["series"]] == [2, 2], age
