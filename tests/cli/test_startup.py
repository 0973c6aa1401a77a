"""The command line starts without the work's libraries: `receval --version`,
`--help`, every command's `--help` and shell completion build the commands from typer and
receval's light modules, and import polars, pydantic, numpy, pyarrow, the config models and
the metric registry only when a command runs (timing-free: the modules are listed)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import NDCG_2, PRECISION_1, hand_case

from receval_cli.version import __version__

HEAVY = (
    "polars",
    "pydantic",
    "numpy",
    "pyarrow",
    "receval_cli.config.model",
    "receval_cli.metrics",
    "rich.markdown",  # typer's help renderer imports these two at its top, unused by receval
    "rich.traceback",
    "mlflow",  # the mlflow extra: imported only to log a run (report/mlflow_logging.py)
)
# the child runs the command as the console script does, then lists the heavy modules
CHILD = """
import json, sys
heavy = json.loads(sys.argv[2])
sys.argv = ["receval", *json.loads(sys.argv[1])]
from receval_cli.cli.app import receval_command
try:
    receval_command()
except SystemExit as stop:
    code = stop.code
else:
    code = 0
print(json.dumps([code, [name for name in heavy if name in sys.modules]]), file=sys.stderr)
"""

COMMANDS = ["run", "convert", "compare", "metrics", "init", "schema", "validate", "inspect"]


def imported(
    args: list[str],
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    watched: tuple[str, ...] = HEAVY,
) -> tuple[str, int, list[str]]:
    """Run the CLI with `args` in a fresh interpreter: its stdout, its exit code and the
    `watched` modules (the heavy ones) it imported."""
    result = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(args), json.dumps(watched)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "120", **(env or {})},
    )
    code, heavy = json.loads(result.stderr.strip().splitlines()[-1])
    return result.stdout, code, heavy


def test_version_imports_nothing_heavy() -> None:
    out, code, heavy = imported(["--version"])
    assert out == f"receval {__version__}\n"
    assert code == 0
    assert heavy == []


@pytest.mark.slow
@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_imports_nothing_heavy(command: str | None) -> None:
    out, code, heavy = imported(["--help"] if command is None else [command, "--help"])
    assert "Usage" in out
    assert code == 0
    if command is None:
        assert "Exact, fast offline evaluation of recommender systems." in out
        assert all(name in out for name in COMMANDS)
    else:
        assert f"receval {command}" in out
    if command == "run":
        assert "--format" in out
        assert "--output" in out
    assert heavy == []


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("receval ru", ["run"]),
        ("receval run --fo", ["--format"]),
        (
            "receval run --format ",
            ["table", "json", "markdown", "csv", "junit", "html", "github", "latex"],
        ),
        ("receval run config.yaml -o a.json --fo", ["--format"]),  # typed values: not coerced
    ],
)
def test_completion_imports_nothing_heavy(words: str, expected: list[str]) -> None:
    env = {
        "_RECEVAL_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split(" ")) - 1),
    }
    out, code, heavy = imported([], env)
    assert out.split() == expected
    assert code == 0
    assert heavy == []


def test_a_usage_error_before_a_command_runs_is_unchanged() -> None:
    """A bad value is still typer's to refuse (with pydantic, which it then imports)."""
    out, code, _ = imported(["inspect", "config.yaml", "--users", "many"])
    assert code == 2
    assert out == ""


def test_a_command_that_works_imports_them() -> None:
    """The check above can fail: `metrics` (which lists the registry) imports them."""
    out, code, heavy = imported(["metrics", "--format", "json"])
    assert json.loads(out)
    assert code == 0
    assert "receval_cli.metrics" in heavy


@pytest.mark.slow
def test_run_end_to_end(tmp_path: Path) -> None:
    """`receval run` as the console script runs it: the work's modules load when it runs."""
    config = hand_case(tmp_path)
    out, code, heavy = imported(["run", str(config), "--format", "json"], cwd=tmp_path)
    assert code == 0
    metrics = json.loads(out)["models"]["model"]["metrics"]
    assert metrics == {
        "precision@1": pytest.approx(PRECISION_1, abs=1e-12),
        "ndcg@2": pytest.approx(NDCG_2, abs=1e-12),
    }
    assert {"polars", "receval_cli.config.model", "receval_cli.metrics"} <= set(heavy)
    assert "mlflow" not in heavy  # no tracking asked


@pytest.mark.slow
def test_a_quiet_run_to_a_file_draws_no_table(tmp_path: Path) -> None:
    """A run that prints nothing (--quiet, the report in a file: a pipeline's or a cron
    job's) does not load rich, about 30 ms of a run's start; the same run printing its
    table does (the check can fail)."""
    config = hand_case(tmp_path)
    rich = ("rich.console", "rich.table")
    args = ["run", str(config), "--quiet", "--output", str(tmp_path / "r.json")]
    _, code, loaded = imported(args, cwd=tmp_path, watched=rich)
    assert code == 0
    assert json.loads((tmp_path / "r.json").read_text())["models"]["model"]["metrics"]
    assert loaded == []
    out, code, loaded = imported(["run", str(config)], cwd=tmp_path, watched=rich)
    assert code == 0
    assert "ndcg@2" in out
    assert loaded == list(rich)


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("mlflow") is None, reason="the mlflow extra is not installed"
)
def test_validate_checks_the_tracking_without_mlflow(tmp_path: Path) -> None:
    """`validate` checks a tracking block (the extra, the URI) without importing MLflow,
    and so without contacting the server."""
    config = hand_case(tmp_path, tracking={"mlflow": {"uri": "http://127.0.0.1:9"}})
    _, code, heavy = imported(["validate", str(config)], cwd=tmp_path)
    assert code == 0
    assert "mlflow" not in heavy


def test_the_help_renderers_stand_ins_are_the_real_classes_when_used() -> None:
    """typer's renderer, loaded with stand-ins for Markdown and Traceback, still works if
    it uses them, and a later import of rich.markdown is the real module."""
    code = """
import sys
from receval_cli.cli.common import load_help_renderer
load_help_renderer()
import typer.rich_utils as rich_utils
assert "rich.markdown" not in sys.modules and "rich.traceback" not in sys.modules
import rich.markdown, rich.traceback
assert type(rich_utils.Markdown("*x*")) is rich.markdown.Markdown
assert rich_utils.Traceback.from_exception == rich.traceback.Traceback.from_exception
print("ok")
"""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.stdout == "ok\n", result.stderr


def test_the_metric_registry_loads_without_numpy() -> None:
    """A run imports numpy on another thread while polars reads (evaluation/numpy_ahead.py):
    the registry that every run loads first must not import it on the main thread."""
    code = "import sys, receval_cli.metrics, receval_cli.config.model\n"
    code += "print('numpy' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.stdout == "False\n", result.stderr
