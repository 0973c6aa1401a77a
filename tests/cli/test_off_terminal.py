"""Off a terminal, as a user meets it: the CLI as a subprocess, stdout a pipe.

- A table's cells wrap at spaces only: no metric name, header word or gate word is broken
  across lines or cut with `…` (validate, history, run, compare, metrics), whatever the
  width of the pipe (COLUMNS=80, rich's default off a terminal).
- A reader of stdout that goes away (`receval metrics | head -1`) ends receval quietly:
  exit 141 (128 + SIGPIPE, as `git log | head`), nothing on stderr; also for the commands
  that run in a child process watched by the supervisor (run, validate, history).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_helpers import REPO, run_process, write

from receval_cli.errors import EXIT_STDOUT_CLOSED

pytestmark = pytest.mark.slow  # left out of `uv run pytest`; .ci/run runs it

SAMPLE = REPO / "sample_data"
COLUMNS = {"COLUMNS": "80"}


def whole(text: str, *words: str) -> None:
    """Each word (no space in it) appears whole on a line, and nothing is cut with `…`."""
    missing = [word for word in words if word not in text]
    assert not missing, f"broken or missing: {missing}\n{text}"
    assert "…" not in text, text


def table_of(*args: str | Path, cwd: Path) -> str:
    done = run_process(*args, cwd=cwd, env=COLUMNS)
    assert done.returncode in (0, 1), done.stderr.decode()
    return done.stdout.decode()


@pytest.fixture(scope="module")
def three_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample data as three models (long names, a long metric name) with gates whose
    verdicts fill a cell: a table too wide for 80 columns."""
    folder = tmp_path_factory.mktemp("three")
    columns = {"user": "user_id", "item": "item_id", "score": "score"}
    config = {
        "predictions": {
            "columns": columns,
            "models": {
                "popularity_baseline": str(SAMPLE / "popular_predictions.csv"),
                "matrix_factorisation": str(SAMPLE / "predictions.csv"),
                "matrix_factorisation_v2": str(SAMPLE / "predictions.csv"),
            },
        },
        "ground_truth": {
            "path": str(SAMPLE / "ground_truth.parquet"),
            "columns": {"user": "user_id", "item": "item_id", "relevance": "rating"},
        },
        "cutoffs": [10],
        "metrics": ["ndcg", "precision", "recall", {"name": "ndcg", "gain": "exponential"}],
        "conventions": {"relevance_threshold": 4},
        "comparison": {"baseline": "popularity_baseline"},
        "gates": {
            "ndcg@10": {"min": 0.1, "max_relative_drop": 0.02, "no_significant_drop": True},
            "precision@10": {"min": 0.2},
        },
    }
    write(folder / "three.yaml", yaml.safe_dump(config, sort_keys=False))
    return folder


def metric_names(folder: Path) -> list[str]:
    done = run_process("run", "three.yaml", "-f", "json", cwd=folder)
    report: dict[str, Any] = json.loads(done.stdout)
    return list(report["models"]["matrix_factorisation"]["metrics"])


def test_validate_keeps_headers_and_labels_whole(three_models: Path) -> None:
    text = table_of("validate", "three.yaml", cwd=three_models)
    labels = ["predictions:", "popularity_baseline", "matrix_factorisation_v2", "repeated"]
    whole(text, *labels, "relevance", "recommended", "compared")


def test_run_keeps_names_and_gate_words_whole(three_models: Path) -> None:
    text = table_of("run", "three.yaml", cwd=three_models)
    names = metric_names(three_models)
    assert "ndcg@10(gain=exponential)" in names
    whole(text, *names, "popularity_baseline", "matrix_factorisation_v2", "significant")
    gate_lines = [line for line in text.splitlines() if line.startswith("│ ndcg@10 ")]
    assert gate_lines, text


def test_run_table_file_keeps_names_whole(three_models: Path) -> None:
    done = run_process("run", "three.yaml", "-o", "t.txt", "-q", cwd=three_models, env=COLUMNS)
    assert done.returncode in (0, 1), done.stderr.decode()
    whole((three_models / "t.txt").read_text(), *metric_names(three_models))


def test_compare_keeps_names_whole(three_models: Path) -> None:
    for name in ("first_saved_report", "second_saved_report"):
        done = run_process("run", "three.yaml", "-o", f"{name}.json", "-q", cwd=three_models)
        assert done.returncode in (0, 1), done.stderr.decode()
    text = table_of(
        "compare", "first_saved_report.json", "second_saved_report.json", cwd=three_models
    )
    whole(text, *metric_names(three_models), "second_saved_report:matrix_factorisation_v2")


def test_history_keeps_metric_names_and_headers_whole(three_models: Path) -> None:
    store = three_models / "store"
    for label in ("first", "second"):
        args = ["run", "three.yaml", "--history", store, "--label", label, "-o", "r.json", "-q"]
        done = run_process(*args, cwd=three_models)
        assert done.returncode in (0, 1), done.stderr.decode()
    text = table_of("history", store, cwd=three_models)
    whole(text, *metric_names(three_models), "matrix_factorisation_v2", "previous", "median")


def test_metrics_listing_keeps_words_whole(tmp_path: Path) -> None:
    text = table_of("metrics", cwd=tmp_path)
    whole(text, "(conventions.precision_denominator)", "intra_list_diversity@k", "Precision@k")
    detail = table_of("metrics", "ndcg", cwd=tmp_path)
    whole(detail, "users_without_recommendations", "(conventions.users_without_relevant)")


# ------------------------------------------------------------ stdout's reader goes away


def to_closed_pipe(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """The CLI with stdout a pipe whose reader has already gone (every write fails with
    EPIPE): what `| head -1` does once it has its line, without the race."""
    read, write_end = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [sys.executable, "-m", "receval_cli", *map(str, args)],
            cwd=cwd,
            env={**os.environ, "PYTHONPATH": str(REPO), **COLUMNS},
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.PIPE,
            check=False,
            timeout=120,
        )
    finally:
        os.close(write_end)


QUICKSTART = REPO / "configs" / "quickstart.yaml"
CLOSED_PIPE_COMMANDS = {
    "metrics": ["metrics"],
    "metrics json": ["metrics", "-f", "json"],
    "metrics markdown": ["metrics", "-f", "markdown"],
    "one metric": ["metrics", "ndcg"],
    "run json": ["run", QUICKSTART, "-f", "json", "-o", "-"],
    "run table": ["run", QUICKSTART],
    "run markdown": ["run", QUICKSTART, "-f", "markdown"],
    "validate": ["validate", QUICKSTART],
    "validate json": ["validate", QUICKSTART, "-f", "json"],
    "schema": ["schema"],
}


@pytest.mark.parametrize("args", CLOSED_PIPE_COMMANDS.values(), ids=CLOSED_PIPE_COMMANDS.keys())
def test_a_closed_stdout_is_a_quiet_exit(tmp_path: Path, args: list[str | Path]) -> None:
    done = to_closed_pipe(*args, cwd=tmp_path)
    assert (done.returncode, done.stderr.decode()) == (EXIT_STDOUT_CLOSED, "")
    assert list(tmp_path.iterdir()) == []


def test_a_closed_stdout_beside_a_file_keeps_the_file(tmp_path: Path) -> None:
    """Files are written before standard output: `-o report.json -o - | head` keeps the
    file whole."""
    done = to_closed_pipe(
        "run", QUICKSTART, "-o", "report.json", "-f", "csv", "-o", "-", cwd=tmp_path
    )
    assert (done.returncode, done.stderr.decode()) == (EXIT_STDOUT_CLOSED, "")
    assert json.loads((tmp_path / "report.json").read_text())["models"]["model"]["metrics"]


@pytest.mark.parametrize(
    "command",
    [
        "receval metrics | head -1",
        "receval run configs/quickstart.yaml -f json -o - | head -1",
    ],
)
def test_head_reads_one_line_and_receval_says_nothing(command: str) -> None:
    """The real pipe: whether receval's write comes before or after head exits, stderr is
    empty and the status is 0 or 141."""
    python = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{python}{os.pathsep}{os.environ['PATH']}", **COLUMNS}
    script = f"{command}; echo status=${{PIPESTATUS[0]}} >&2"
    done = subprocess.run(
        ["bash", "-c", script], cwd=REPO, env=env, capture_output=True, check=False, timeout=120
    )
    stderr = done.stderr.decode()
    assert stderr.strip() in ("status=0", f"status={EXIT_STDOUT_CLOSED}"), stderr
    assert len(done.stdout.decode().splitlines()) == 1
