"""A run logged to MLflow, after every output of it is written (`receval run` with
`tracking: {mlflow: ...}` or --mlflow-uri; docs/tracking.md).

One MLflow run per receval run, named by its --label (else its run id), in the target's
experiment (made when missing); one nested run per model, named by the model, holding
its metrics (report/mlflow_names.py builds what each run gets). The run's artifacts: the
JSON report (`report.json`) and, where the html extra is installed, the HTML report
(`report.html`): the texts written to the outputs, else rendered here.

MLflow is imported here only, when a run is logged. Its own logging and warnings are
kept off stderr (receval's lines there stay receval's: `--log-format json`); a store that
cannot be reached or refuses the run is one TrackingError (exit 2), the outputs already
whole. MLflow's variables apply: MLFLOW_HTTP_REQUEST_TIMEOUT and
MLFLOW_HTTP_REQUEST_MAX_RETRIES bound the wait for a server, MLFLOW_TRACKING_USERNAME,
MLFLOW_TRACKING_PASSWORD and MLFLOW_TRACKING_TOKEN authenticate.
"""

from __future__ import annotations

import contextlib
import logging
import re
import tempfile
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from receval_cli.errors import TrackingError
from receval_cli.report.mlflow_names import TrackedRun, tracked_runs
from receval_cli.report.mlflow_target import MLFLOW_INSTALL
from receval_cli.report.renderers import installed

if TYPE_CHECKING:
    from receval_cli.report.mlflow_target import MlflowTarget
    from receval_cli.results.report import RunReport

_BATCH_NAMES = 100  # MLflow's most params, or tags, in one batch
_BATCH_METRICS = 1000  # and metrics
_REASON_LENGTH = 300  # the longest cause an error line quotes
_Item = TypeVar("_Item")
_SYSTEM_ERROR = re.compile(r"\[Errno -?\d+\] [^\"')\]]+")  # a socket's error, as requests words it


def log_run_to_mlflow(
    report: RunReport, target: MlflowTarget, exit_code: int, written: Mapping[str, str]
) -> str:
    """Log the run (its exit code, as the gates make it) to the target; return the MLflow
    run's id. `written`: the texts of the formats written to the outputs (json, html),
    logged as they are; the others are rendered. Raises TrackingError (the outputs are
    whole: nothing here writes one)."""
    try:
        from mlflow.exceptions import MlflowException
        from sqlalchemy.exc import SQLAlchemyError
    except ImportError as error:  # found before the run, yet broken (a part missing)
        raise TrackingError(
            f"the report was written, but MLflow could not be loaded to log the run "
            f"({type(error).__name__}: {error}). {MLFLOW_INSTALL}",
            key=target.key,
            found=str(error),
            fix=MLFLOW_INSTALL,
        ) from None
    _quiet_libraries()  # after MLflow's import, which sets its loggers' levels

    try:
        return _log(report, target, exit_code, written)
    except (MlflowException, SQLAlchemyError, OSError) as error:
        reason = _reason(error)
        fix = (
            "Check that the tracking store is reachable from here and takes runs "
            "(MLFLOW_HTTP_REQUEST_TIMEOUT and MLFLOW_HTTP_REQUEST_MAX_RETRIES bound the wait "
            "for a server)."
        )
        raise TrackingError(
            f"the report was written, but logging the run to MLflow ({target.key} "
            f"{target.uri}, experiment {target.experiment!r}) failed: {reason}. {fix}",
            key=target.key,
            found=target.uri,
            fix=fix,
        ) from None


def _reason(error: Exception) -> str:
    """The cause in a line: a server that cannot be reached said so, with the system's
    words (`[Errno 111] Connection refused`); else the error's own text, cut short."""
    text = " ".join(str(error).split())
    system = _SYSTEM_ERROR.search(text)
    if "API request to" in text and system is not None:
        return f"cannot reach the server ({system.group(0).rstrip()})"
    if "API request to" in text and "timed out" in text.lower():
        return "the server did not answer in time (MLFLOW_HTTP_REQUEST_TIMEOUT)"
    text = f"{type(error).__name__}: {text}"
    return text if len(text) <= _REASON_LENGTH else text[: _REASON_LENGTH - 3] + "..."


def _quiet_libraries() -> None:
    """MLflow's and alembic's log lines (a database made, a run's address) and warnings
    stay off receval's stderr: what fails is raised, and said in receval's one line."""
    for name in ("mlflow", "alembic", "sqlalchemy"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    warnings.filterwarnings("ignore", module=r"(mlflow|alembic|sqlalchemy)(\..*)?$")


def _log(
    report: RunReport, target: MlflowTarget, exit_code: int, written: Mapping[str, str]
) -> str:
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=target.uri)
    experiment = _experiment_id(client, target)
    started = report.run.started_at if report.run is not None else None
    start_ms = int(started.timestamp() * 1000) if started is not None else None
    end_ms = None if start_ms is None else start_ms + int(report.elapsed_seconds * 1000)
    parent, models = tracked_runs(report, exit_code)

    def send(run_id: str, tracked: TrackedRun) -> None:
        stamp = start_ms if start_ms is not None else 0
        params = [Param(k, v) for k, v in tracked.params.items()]
        tags = [RunTag(k, v) for k, v in tracked.tags.items()]
        metrics = [Metric(k, v, stamp, 0) for k, v in tracked.metrics.items()]
        for chunk in _chunks(params, _BATCH_NAMES):
            client.log_batch(run_id, params=chunk)
        for tag_chunk in _chunks(tags, _BATCH_NAMES):
            client.log_batch(run_id, tags=tag_chunk)
        for metric_chunk in _chunks(metrics, _BATCH_METRICS):
            client.log_batch(run_id, metrics=metric_chunk)

    run_id = client.create_run(experiment, start_time=start_ms, run_name=parent.name).info.run_id
    try:
        send(run_id, parent)
        for model in models:
            nested = client.create_run(
                experiment,
                start_time=start_ms,
                tags={"mlflow.parentRunId": run_id},
                run_name=model.name,
            ).info.run_id
            send(nested, model)
            client.set_terminated(nested, "FINISHED", end_time=end_ms)
        with tempfile.TemporaryDirectory(prefix="receval-mlflow-") as folder:
            for path in _artifacts(report, written, Path(folder)):
                client.log_artifact(run_id, str(path))
        client.set_terminated(run_id, "FINISHED", end_time=end_ms)
    except Exception:
        with contextlib.suppress(Exception):  # a store that fails may not take this either
            client.set_terminated(run_id, "FAILED")
        raise
    return str(run_id)


def _experiment_id(client: Any, target: MlflowTarget) -> str:
    """The experiment's id; made when missing (in a sqlite store, with its artifacts in
    `mlartifacts/` beside the file), or found when another process made it meanwhile."""
    from mlflow.exceptions import MlflowException

    found = client.get_experiment_by_name(target.experiment)
    if found is not None:
        return str(found.experiment_id)
    try:
        return str(client.create_experiment(target.experiment, artifact_location=target.artifacts))
    except MlflowException:
        found = client.get_experiment_by_name(target.experiment)
        if found is None:
            raise
        return str(found.experiment_id)


def _artifacts(report: RunReport, written: Mapping[str, str], folder: Path) -> Iterator[Path]:
    """report.json, and report.html where the html extra is installed, in `folder`."""
    from receval_cli.report.render import render

    for fmt in ("json", "html"):
        text = written.get(fmt)
        if text is None and (fmt == "json" or installed("html")):
            text = render(report, fmt, width=100)
        if text is not None:
            path = folder / f"report.{fmt}"
            path.write_text(text, encoding="utf-8")
            yield path


def _chunks(items: Sequence[_Item], size: int) -> Iterator[Sequence[_Item]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
