"""`receval run` with `tracking: {mlflow: ...}` or --mlflow-uri (docs/tracking.md): the run
logged to a real MLflow store (an embedded sqlite file) and read back with MLflow's own
client; an unreachable server is one line and exit 2 after the report is written; what
MLflow would refuse is refused before any row is read, by run and validate alike.

The stores' tests need the mlflow extra (skipped without it; .ci/run installs it) and are
slow (MLflow's import, and its tables made in a new database, take seconds)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_helpers import (
    REPO,
    assert_no_traceback,
    assert_user_error,
    assert_validate_refuses,
    hand_case,
    invoke,
    run_json,
    run_process,
    write,
)

from receval_cli.config.model import Config, TrackingConfig
from receval_cli.formats import EXTRA_MODULES
from receval_cli.report.mlflow_names import joined_name, mlflow_name

QUIET_MLFLOW = {"MLFLOW_DISABLE_TELEMETRY": "true"}
# a server that is not there: refused at once, no retries, a short timeout
UNREACHABLE = {
    **QUIET_MLFLOW,
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "5",
}


@pytest.fixture(autouse=True)
def _no_usage_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    """MLflow's client in this process sends no usage report of its own."""
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")


def _two_models(folder: Path, **extra: Any) -> Path:
    """The hand case with a second model (pop), users in two segments, intervals, the
    comparison with pop and a gate that fails (ndcg@2 >= 0.99): exit 1."""
    write(folder / "pop.csv", "user,item,score\nu1,b,0.9\nu1,c,0.5\nu2,e,0.9\n")
    write(folder / "users.csv", "user,group\nu1,a\nu2,b\n")
    return hand_case(
        folder,
        predictions={"models": {"als": "predictions.csv", "pop": "pop.csv"}},
        metrics=["precision@1", "ndcg@2", "map"],
        segments={"path": "users.csv"},
        segment_by=["group"],
        confidence={"resamples": 200},
        comparison={"baseline": "pop"},
        gates={"ndcg@2": {"min": 0.99}},
        **extra,
    )


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _input_params(report: dict[str, Any], model: str) -> dict[str, str]:
    return {
        f"inputs.{source}.{key}": _text(value)
        for source, block in report["models"][model]["inputs"].items()
        for key, value in block.items()
    }


def _expected_metrics(report: dict[str, Any], model: str) -> dict[str, float]:
    """A model's values as the JSON report holds them, under their documented names."""
    block = report["models"][model]
    expected = {"users/evaluated": float(block["users"]["evaluated"])}

    def values(prefix: tuple[str, ...], metrics: dict[str, Any], bounds: dict[str, Any]) -> None:
        for key, value in metrics.items():
            name = mlflow_name(key)
            if value is not None:
                expected[joined_name(*prefix, name)] = value
            low, high = bounds.get(key) or (None, None)
            if low is not None:
                expected[joined_name(*prefix, f"{name}_low")] = low
            if high is not None:
                expected[joined_name(*prefix, f"{name}_high")] = high

    values((), block["metrics"], block["confidence"]["intervals"])
    for segment, part in block["segments"].items():
        prefix = ("segment", mlflow_name(segment))
        expected[joined_name(*prefix, "users", "evaluated")] = float(part["users"])
        values(prefix, part["metrics"], part.get("intervals") or {})
    for compared in report["comparisons"]["results"]:
        if compared["model"] == model:
            for entry in ("difference", "low", "high", "p_value", "p_adjusted"):
                if compared[entry] is not None:
                    name = joined_name("vs_baseline", mlflow_name(compared["metric"]), entry)
                    expected[name] = compared[entry]
    return expected


@pytest.mark.slow
def test_a_run_is_read_back_by_mlflow_s_client(tmp_path: Path) -> None:
    """Two models against a sqlite store beside the config (run from another folder): one
    MLflow run named by the label, a nested run per model with every value of the report
    (metrics, intervals, segments, comparisons), the params (version, config hash,
    conventions, inputs), the tags (--tag, --label, the gates' verdict, the exit code) and
    the JSON report as written; the exit code stays the gates' (1)."""
    mlflow = pytest.importorskip("mlflow")
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    elsewhere.mkdir(parents=True)
    tracking = {"mlflow": {"uri": "sqlite:///mlflow.db", "experiment": "recs"}}
    config = _two_models(project, tracking=tracking)
    written = tmp_path / "report.json"
    args = ["run", config, "-o", written, "--label", "nightly-7", "--tag", "team=search"]
    result = run_process(*args, cwd=elsewhere, env=QUIET_MLFLOW)
    assert result.returncode == 1, result.stderr.decode()
    assert "mlflow" not in result.stderr.decode().lower()  # MLflow's own lines kept off
    report = json.loads(written.read_text(encoding="utf-8"))
    assert not report["gates"]["passed"]

    client = mlflow.MlflowClient(f"sqlite:///{project / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("recs")
    runs = client.search_runs([experiment.experiment_id])
    (parent,) = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    children = {r.info.run_name: r for r in runs if r is not parent}
    assert parent.info.run_name == "nightly-7"
    assert parent.info.status == "FINISHED"
    failed = sum(not gate["passed"] for gate in report["gates"]["results"])
    run_tags = {
        "team": "search",
        "receval.run_id": report["run"]["id"],
        "receval.label": "nightly-7",
        "receval.gates": "failed",
        "receval.gates_failed": str(failed),
        "receval.exit_code": "1",
    }
    assert run_tags.items() <= parent.data.tags.items()
    params = {
        "receval_version": report["receval_version"],
        "config_hash": report["run"]["config_hash"],
        **{
            f"conventions.{key}": _text(value)
            for key, value in report["conventions"].items()
            if key != "by_metric"
        },
    }
    als_inputs, pop_inputs = (_input_params(report, name) for name in ("als", "pop"))
    shared = {k: v for k, v in als_inputs.items() if pop_inputs.get(k) == v}
    assert "inputs.ground_truth.content_hash" in shared
    assert "inputs.predictions.path" not in shared
    assert parent.data.params == {**params, **shared}
    assert parent.data.metrics == {}

    assert set(children) == {"als", "pop"}
    for name, child in children.items():
        assert child.data.tags["mlflow.parentRunId"] == parent.info.run_id
        assert {**run_tags, "receval.model": name}.items() <= child.data.tags.items()
        assert child.info.status == "FINISHED"
        inputs = _input_params(report, name)
        assert child.data.params == {**params, **inputs, "model": name}
        assert child.data.metrics == _expected_metrics(report, name)
    als = children["als"].data.metrics  # a few names spelt out
    assert als["ndcg_at_2"] == report["models"]["als"]["metrics"]["ndcg@2"]
    assert "ndcg_at_2_low" in als
    assert "segment/group-a/precision_at_1" in als
    assert "vs_baseline/map/difference" in als

    artifacts = {a.path for a in client.list_artifacts(parent.info.run_id)}
    html = _installed("matplotlib")  # the html extra (the dev group has it)
    assert artifacts == ({"report.json", "report.html"} if html else {"report.json"})
    copy = client.download_artifacts(parent.info.run_id, "report.json", str(tmp_path))
    assert Path(copy).read_bytes() == written.read_bytes()
    assert (project / "mlartifacts").is_dir()  # the artifacts beside the database

    untracked = _two_models(tmp_path / "untracked")  # the same run, not tracked
    assert run_json(untracked, expect=1)["run"]["config_hash"] == report["run"]["config_hash"]


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


@pytest.mark.slow
def test_the_command_line_overrides_the_config_s_tracking(tmp_path: Path) -> None:
    """--mlflow-uri (a relative sqlite file: the working directory's) and
    --mlflow-experiment replace the config's block; a second run goes to the same
    experiment; a gate-free run is tagged exit 0 and gates none."""
    mlflow = pytest.importorskip("mlflow")
    tracking = {"mlflow": {"uri": "sqlite:///config.db", "experiment": "from-config"}}
    config = hand_case(tmp_path / "project", tracking=tracking)
    options = ["--mlflow-uri", "sqlite:///cli.db", "--mlflow-experiment", "from-cli", "-q"]
    for _ in range(2):
        result = run_process("run", config, *options, cwd=tmp_path, env=QUIET_MLFLOW)
        assert result.returncode == 0, result.stderr.decode()
        assert result.stdout == b""
    assert not (tmp_path / "project" / "config.db").exists()
    client = mlflow.MlflowClient(f"sqlite:///{tmp_path / 'cli.db'}")
    assert client.get_experiment_by_name("from-config") is None
    experiment = client.get_experiment_by_name("from-cli")
    runs = client.search_runs([experiment.experiment_id])
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    assert len(parents) == 2
    assert len(runs) == 4  # each with its one model
    for run in runs:
        assert (run.data.tags["receval.exit_code"], run.data.tags["receval.gates"]) == ("0", "none")


@pytest.mark.slow
def test_an_unreachable_server_is_one_line_after_the_report(tmp_path: Path) -> None:
    """Nothing listens on port 9: the report and the history file are written whole, then
    one error line says so; exit 2 (where the run was sent cannot take it), not 1."""
    pytest.importorskip("mlflow")
    config = hand_case(tmp_path, history="history", gates={"ndcg@2": {"min": 0.99}})
    written = tmp_path / "report.json"
    args = ["run", config, "-o", written, "-q", "--mlflow-uri", "http://127.0.0.1:9"]
    result = run_process(*args, cwd=tmp_path, env=UNREACHABLE)
    stderr = result.stderr.decode()
    assert result.returncode == 2, stderr
    assert result.stdout == b""
    lines = stderr.splitlines()
    assert lines[-1].startswith("error: the report was written, but logging the run to MLflow")
    assert "cannot reach the server" in lines[-1]
    assert "--mlflow-uri http://127.0.0.1:9" in lines[-1]
    assert all(line.startswith("gate") for line in lines[:-1]), stderr  # the failed gate
    assert "Traceback" not in stderr
    report = json.loads(written.read_text(encoding="utf-8"))
    assert set(report["models"]["model"]["metrics"]) == {"precision@1", "ndcg@2"}
    assert len(list((tmp_path / "history").glob("*.parquet"))) == 1


@pytest.fixture
def mlflow_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The extra counted as installed (its modules found), whether or not it is: the
    checks below never import MLflow."""
    monkeypatch.setitem(EXTRA_MODULES, "mlflow", ("json",))
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)


@pytest.mark.usefixtures("mlflow_installed")
@pytest.mark.parametrize(
    ("uri", "words"),
    [
        ("http://", "names no host"),
        ("http://user:secret@mlflow.example:5000", "MLFLOW_TRACKING_PASSWORD"),
        ("http://mlflow.example:port", "port that is not a number"),
        ("ftp://mlflow.example/runs", "a scheme (ftp:) receval does not log to"),
        ("sqlite://", "is not a sqlite file URI"),
        ("sqlite:///:memory:", "an in-memory database keeps nothing"),
        ("sqlite:///missing/mlflow.db", "which does not exist"),
        ("mlruns", "MLFLOW_ALLOW_FILE_STORE=true"),
    ],
)
def test_a_uri_mlflow_would_refuse_is_refused_before_any_row(
    tmp_path: Path, uri: str, words: str
) -> None:
    """Exit 2 naming the key and the fix, nothing written, before the predictions (not a
    predictions file: no user column) are read; validate says the same."""
    config = hand_case(tmp_path, rows="who,what\nu1,a\n", tracking={"mlflow": {"uri": uri}})
    out = tmp_path / "report.json"
    result = invoke("run", config, "-o", out)
    message = assert_user_error(result, "tracking.mlflow.uri", words)
    assert not out.exists()
    assert_validate_refuses(config, message)


@pytest.mark.usefixtures("mlflow_installed")
def test_a_folder_store_is_taken_when_mlflow_is_told_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    config = hand_case(tmp_path, tracking={"mlflow": {"uri": "mlruns"}})
    result = invoke("validate", config)
    assert result.exit_code == 0, result.stderr


@pytest.mark.usefixtures("mlflow_installed")
@pytest.mark.parametrize(
    "uri",
    ["http://127.0.0.1:9", "https://mlflow.example/tracking", "sqlite:///{tmp}/runs.db"],
)
def test_a_store_is_checked_without_being_contacted(tmp_path: Path, uri: str) -> None:
    """A server that is not there, an absolute sqlite file: validate takes them (its check
    contacts nothing) and makes no file."""
    given = uri.format(tmp=tmp_path)
    config = hand_case(tmp_path, tracking={"mlflow": {"uri": given}})
    result = invoke("validate", config)
    assert result.exit_code == 0, result.stderr
    assert not (tmp_path / "runs.db").exists()


@pytest.mark.usefixtures("mlflow_installed")
def test_an_mlflow_that_cannot_be_loaded_is_one_line_after_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by the check but failing to import (a part of it missing): the report is
    written, then exit 2 with the install command, not a traceback."""
    for name in ["mlflow", *(n for n in sys.modules if n.startswith("mlflow."))]:
        monkeypatch.setitem(sys.modules, name, None)  # its import raises ImportError
    config = hand_case(tmp_path)
    out = tmp_path / "report.json"
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"  # from the working directory otherwise
    result = invoke("run", config, "-q", "-o", out, "--mlflow-uri", store)
    assert_no_traceback(result)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stderr.startswith("error: the report was written, but MLflow could not be")
    assert "uv sync --extra mlflow" in result.stderr
    assert json.loads(out.read_text(encoding="utf-8"))["models"]["model"]["metrics"]


def test_tracking_without_the_extra_is_refused_with_its_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(EXTRA_MODULES, "mlflow", ("receval_no_such_module",))
    config = hand_case(tmp_path, rows="who,what\nu1,a\n")
    out = tmp_path / "report.json"
    result = invoke("run", config, "-o", out, "--mlflow-uri", f"sqlite:///{tmp_path}/m.db")
    assert_user_error(result, "--mlflow-uri", "not installed", "uv sync --extra mlflow")
    assert not out.exists()
    hand_case(tmp_path, rows="who,what\nu1,a\n", tracking={"mlflow": {"uri": "sqlite:///m.db"}})
    message = assert_user_error(invoke("run", config), "tracking.mlflow.uri", "'.[mlflow]'")
    assert_validate_refuses(config, message)


def test_an_experiment_without_a_uri_is_refused(tmp_path: Path) -> None:
    config = hand_case(tmp_path)
    result = invoke("run", config, "--mlflow-experiment", "nightly")
    assert_user_error(result, "--mlflow-experiment", "no tracking URI", "--mlflow-uri")


@pytest.mark.usefixtures("mlflow_installed")
def test_empty_settings_are_refused_by_their_names(tmp_path: Path) -> None:
    config = hand_case(tmp_path, tracking={"mlflow": {"uri": "sqlite:///m.db", "experiment": " "}})
    assert_user_error(invoke("run", config), "tracking.mlflow.experiment is empty")
    result = invoke("run", config, "--mlflow-uri", " ", "--mlflow-experiment", "x")
    assert_user_error(result, "--mlflow-uri ' ' is empty")
    assert_user_error(invoke("run", config, "--mlflow-experiment", ""), "--mlflow-experiment")


def test_the_block_s_keys_are_checked(tmp_path: Path) -> None:
    config = hand_case(tmp_path, tracking={"mlflow": {"url": "sqlite:///m.db"}})
    assert_user_error(invoke("run", config), "tracking.mlflow")


def test_the_docs_configs_are_valid() -> None:
    """docs/tracking.md's block and its cron recipe's config are configs receval takes."""
    text = (REPO / "docs" / "tracking.md").read_text(encoding="utf-8")
    block, recipe = re.findall(r"```yaml\n(.*?)```", text, re.S)
    assert TrackingConfig.model_validate(yaml.safe_load(block)["tracking"]).mlflow is not None
    config = Config.model_validate(yaml.safe_load(recipe))
    assert config.tracking is not None
    assert config.tracking.mlflow is not None
    assert config.tracking.mlflow.uri.startswith("sqlite:///")
