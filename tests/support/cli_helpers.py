"""Shared helpers for the CLI tests: a fixed-width runner, small files, a config run to its
report (through the CLI or in this process), error assertions.

The hand-checkable case used throughout (binary relevance, default conventions):

    predictions  u1: a 0.9, b 0.8, c 0.7        u2: d 0.9, e 0.5
    ground truth u1: b                          u2: d, f

    precision@1 = (0 + 1) / 2 = 0.5
    ndcg@2      = u1: (1/log2 3) / 1 = 0.63093
                  u2: 1 / (1 + 1/log2 3) = 0.61315      mean 0.62204
    map (whole list, |R| denominator) = u1: (1/2)/1, u2: (1/1)/2 -> 0.5
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import yaml
from message_words import assert_plain
from typer.testing import CliRunner, Result

from receval_cli.cli.app import app

if TYPE_CHECKING:
    import polars as pl

REPO = Path(__file__).resolve().parents[2]  # the checkout the tests belong to
SAMPLE = REPO / "sample_data"  # the bundled sample: ids user_id and item_id
SAMPLE_CATALOG = {
    "path": str(SAMPLE / "catalog.jsonl"),
    "columns": {"item": "item_id", "category": "genre"},
}
SAMPLE_INTERACTIONS = {
    "path": str(SAMPLE / "interactions.csv"),
    "columns": {"user": "user_id", "item": "item_id"},
}

# A fixed terminal: 120 columns, no colour whatever the caller's environment says.
ENV: dict[str, str | None] = {
    "COLUMNS": "120",
    "LINES": "200",
    "FORCE_COLOR": None,
    "NO_COLOR": None,
    "TTY_COMPATIBLE": None,
    "TTY_INTERACTIVE": None,
    "TERM": "xterm",
}

PREDICTIONS_CSV = "user,item,score\nu1,a,0.9\nu1,b,0.8\nu1,c,0.7\nu2,d,0.9\nu2,e,0.5\n"
TRUTH_CSV = "user,item\nu1,b\nu2,d\nu2,f\n"

INV_LOG2_3 = 1 / math.log2(3)
PRECISION_1 = 0.5
NDCG_2 = (INV_LOG2_3 + 1 / (1 + INV_LOG2_3)) / 2
MAP_ALL = 0.5


def invoke(*args: str | Path, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args], env={**ENV, **(env or {})})


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def write_config(folder: Path, config: dict[str, Any] | str, name: str = "config.yaml") -> Path:
    """Write a config (a dict, dumped as YAML, or raw YAML text) into folder."""
    text = config if isinstance(config, str) else yaml.safe_dump(config, sort_keys=False)
    return write(folder / name, text)


def evaluate_written(
    folder: Path, config: dict[str, Any] | str, name: str = "config.yaml", **options: Any
) -> Any:
    """Write the config into folder and evaluate it in this process, as `receval run` does
    (analysis.runs.evaluate_config; options such as per_user=True go to it): the Report."""
    from receval_cli.analysis.runs import evaluate_config
    from receval_cli.config.loading import load_config

    return evaluate_config(load_config(write_config(folder, config, name)), **options)


def hand_case(
    folder: Path,
    rows: str = PREDICTIONS_CSV,
    truth_rows: str = TRUTH_CSV,
    *,
    files: tuple[str, str] = ("predictions.csv", "truth.csv"),
    **extra: Any,
) -> Path:
    """The two-user case of the module docstring (or the CSV texts given), written as
    `files` (predictions, ground truth); extra keys are added to the config."""
    predictions, truth = files
    write(folder / predictions, rows)
    write(folder / truth, truth_rows)
    config: dict[str, Any] = {
        "predictions": {"path": predictions},
        "ground_truth": {"path": truth},
        "metrics": ["precision@1", "ndcg@2"],
    }
    config.update(extra)
    return write_config(folder, config)


def sample_config(
    metrics: list[Any],
    predictions: Path = SAMPLE / "predictions.csv",
    truth: Path = SAMPLE / "ground_truth.parquet",
    **extra: Any,
) -> dict[str, Any]:
    """A config of the bundled sample's model (or other files with its columns: user_id,
    item_id, score; the truth's rating as relevance), the metrics, then `extra`'s keys
    (SAMPLE_CATALOG, SAMPLE_INTERACTIONS for the sample's catalog and log)."""
    ids = {"user": "user_id", "item": "item_id"}
    return {
        "predictions": {"path": str(predictions), "columns": {**ids, "score": "score"}},
        "ground_truth": {"path": str(truth), "columns": {**ids, "relevance": "rating"}},
        "metrics": metrics,
        **extra,
    }


def run_json(config: Path, *args: str | Path, expect: int = 0) -> dict[str, Any]:
    result = invoke("run", config, "--format", "json", *args)
    assert result.exit_code == expect, (result.exit_code, result.stdout, result.stderr)
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def run_report(
    folder: Path,
    config: dict[str, Any] | str | Path,
    name: str,
    *args: str | Path,
    env: dict[str, str | None] | None = None,
    per_user: bool = False,
) -> dict[str, Any]:
    """`receval run -q -o NAME.json` in this process, expecting a clean exit 0: the parsed
    JSON report. The config (a dict or YAML text) is written as NAME.yaml in folder; a Path
    is run as it is. With per_user the rows go to NAME.parquet too (`per_user_rows`)."""
    path = config if isinstance(config, Path) else write_config(folder, config, f"{name}.yaml")
    out = folder / f"{name}.json"
    rows = ("--per-user", folder / f"{name}.parquet") if per_user else ()
    result = invoke("run", path, "-q", "-o", out, *rows, *args, env=env)
    assert_no_traceback(result)
    assert result.exit_code == 0, (name, result.exit_code, result.stdout, result.stderr)
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return report


def per_user_rows(folder: Path, name: str) -> pl.DataFrame:
    """The per-user rows `run_report(folder, ..., name, per_user=True)` wrote."""
    import polars as pl

    return pl.read_parquet(folder / f"{name}.parquet")


def report_metrics(report: dict[str, Any], model: str = "model") -> dict[str, Any]:
    """A JSON report's metric values for one model (a one-file config's is "model")."""
    metrics: dict[str, Any] = report["models"][model]["metrics"]
    return metrics


def run_metrics(
    folder: Path, config: dict[str, Any] | str | Path, name: str = "config", *args: str | Path
) -> dict[str, Any]:
    """`run_report`'s metric values of the one model, "model"."""
    return report_metrics(run_report(folder, config, name, *args))


def evaluate_model(
    folder: Path, config: dict[str, Any] | str, name: str = "config.yaml", **options: Any
) -> Any:
    """`evaluate_written` of a one-file config: its one model's Report."""
    run = evaluate_written(folder, config, name, **options)
    assert list(run.models) == ["model"]  # a one-file config: one model, named "model"
    return run.models["model"]


def assert_no_traceback(result: Result) -> None:
    """The command ended by a clean exit, never by an escaped exception."""
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"escaped exception: {result.exception!r}"
    )
    assert "Traceback" not in result.stdout
    assert "Traceback" not in result.stderr


def assert_user_error(result: Result, *words: str) -> str:
    """Exit 2, one `error:` message on stderr holding every word, nothing on stdout."""
    assert_no_traceback(result)
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    stderr = result.stderr
    assert stderr.startswith("error: "), stderr
    missing = [w for w in words if w not in stderr]
    assert not missing, f"message lacks {missing}: {stderr!r}"
    return assert_plain(stderr)


def assert_validate_refuses(config: Path, message: str, *args: str | Path) -> None:
    """`receval validate CONFIG` refuses what `run` refused with `message`: exit 2, the
    same message (validate is run without the evaluation)."""
    checked = invoke("validate", config, *args)
    assert_user_error(checked)
    assert checked.stderr == message, f"run said:\n{message}\nvalidate said:\n{checked.stderr}"


def run_process(
    *args: str | Path, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """The CLI as a user runs it in a pipe: no terminal, no colour variables, 80 columns,
    nothing on stdin; this checkout's receval_cli whatever the folder it runs in."""
    environment = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
    paths = [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
    environment.update(
        {"COLUMNS": "80", "TERM": "xterm", "PYTHONPATH": os.pathsep.join(paths), **(env or {})}
    )
    return subprocess.run(
        [sys.executable, "-m", "receval_cli", *map(str, args)],
        cwd=cwd,
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
        timeout=120,
    )


def load_script(path: Path, name: str) -> ModuleType:
    """A Python file that is not in a package (a benchmark, a data generator), as a module."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
