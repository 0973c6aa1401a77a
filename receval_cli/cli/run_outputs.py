"""What `receval run` was asked to write, checked before any row is read: the report's
destinations (the --output files, else the config's output.path, else standard output)
and their formats, the --per-user file, the history store, the MLflow tracking (the extra
installed, the URI well-formed: report/mlflow_target.py), and that no output overwrites
an input or lands inside the store. `receval validate` calls the same check on the
config's own outputs (output.path, output.format, history, tracking), so a config whose
outputs `run` refuses is refused by both.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from receval_cli.cli.output_pairs import Output
from receval_cli.errors import UsageError
from receval_cli.formats import RUN_FORMATS
from receval_cli.report.destinations import (
    REPORT_EXTENSIONS,
    TABLE_EXTENSIONS,
    Destination,
    check_append,
    format_of,
    guard,
    is_stdout,
)

if TYPE_CHECKING:  # the work's modules load polars and pydantic: imported when a run starts
    from receval_cli.config.loading import LoadedConfig
    from receval_cli.report.mlflow_target import MlflowTarget
    from receval_cli.results.run_info import RunLabel


@dataclasses.dataclass(frozen=True)
class RunRequest:
    """What `run` was asked to write, and where."""

    config: Path
    format: str | None  # the one --format for the outputs without a format of their own
    outputs: list[Output]
    append: bool
    per_user: Path | None
    quiet: bool
    history: Path | None = None  # --history
    label: RunLabel | None = None  # --label and --tag
    settings: tuple[str, ...] = ()  # --set
    with_per_user: bool = False  # --with-per-user: the JSON report holds the per-user values
    mlflow_uri: str | None = None  # --mlflow-uri
    mlflow_experiment: str | None = None  # --mlflow-experiment


@dataclasses.dataclass(frozen=True)
class CheckedOutputs:
    """The run's outputs, checked: the history store (None: none), the report's
    destinations, the --per-user file's and where the run is logged to MLflow (None:
    nowhere)."""

    store: Path | None
    destinations: list[Destination]
    per_user: Destination | None
    tracking: MlflowTarget | None = None


def checked_outputs(
    request: RunRequest, loaded: LoadedConfig, baseline_report: Path | None
) -> CheckedOutputs:
    """Refuse what `run` cannot write (exit 2), before any row is read: an output that
    would overwrite an input (checked first, whatever else is wrong), a history store
    that cannot be appended to or that would hold an output, a destination whose folder
    is missing or whose format is unknown, an HTML report without its figures library, an
    MLflow tracking without the mlflow extra or with a URI MLflow does not take."""
    from receval_cli.engines.run_plan import history_path
    from receval_cli.history.store import check_store, refuse_outputs_inside
    from receval_cli.inputs.change_watch import input_files
    from receval_cli.report.figures_library import require_figures
    from receval_cli.report.mlflow_target import mlflow_target
    from receval_cli.report.writing import check_destination

    store = history_path(loaded)
    if store is not None:
        check_store(store, "--history" if request.history is not None else "history")
    inputs = {request.config: "config file", **input_files(loaded)}
    if baseline_report is not None:
        inputs[baseline_report] = "--baseline-report file"
    settings = loaded.config.output
    paths = [o.path for o in request.outputs]
    reports = paths or ([loaded.resolve_path(settings.path)] if settings.path else [])
    named = [*reports, *([request.per_user] if request.per_user else [])]
    guard(named, inputs)  # first: an input is never overwritten, whatever else is wrong
    if store is not None:
        report_option = "--output" if paths else "output.path"
        refuse_outputs_inside(
            store,
            [(report_option, p) for p in reports if not is_stdout(p)]
            + ([("--per-user", request.per_user)] if request.per_user else []),
        )
    found = destinations(request, loaded)
    for needy in (d for d in found if RUN_FORMATS[d.format].extra == "html"):
        require_figures("the HTML report", needy.name)
    per_user = None
    if request.per_user is not None:
        check_destination(request.per_user)
        fmt = format_of(request.per_user, None, TABLE_EXTENSIONS, option="--per-user")
        per_user = Destination(request.per_user, fmt)
    tracking = mlflow_target(loaded, request.mlflow_uri, request.mlflow_experiment)
    return CheckedOutputs(store, found, per_user, tracking)


def destinations(request: RunRequest, loaded: LoadedConfig) -> list[Destination]:
    """Each output and its format (see destinations.py): the --output files, else the
    config's output.path, else standard output in --format or the config's format."""
    from receval_cli.report.writing import check_destination

    given = request.format
    settings = loaded.config.output
    default = given or settings.format
    if not request.outputs:
        check_append([], request.append, "the report")
        if settings.path is None:
            return [Destination(None, default)]
        configured = settings.format if "format" in settings.model_fields_set else None
        path = loaded.resolve_path(settings.path)
        check_destination(path)
        return [Destination(path, format_of(path, given or configured, REPORT_EXTENSIONS))]
    found = []
    for output in request.outputs:
        path, named = output.path, output.format or given
        if is_stdout(path):
            found.append(Destination(None, named or default))
        else:
            check_destination(path)  # a folder, a missing folder: said before the format
            strict = len(request.outputs) == 1 or output.paired
            fmt = format_of(path, named, REPORT_EXTENSIONS, strict=strict)
            found.append(Destination(path, fmt, request.append))
    if sum(d.path is None for d in found) > 1:
        fix = "name it once."
        raise UsageError(
            f"--output -: standard output is named more than once; {fix}",
            key="--output",
            found=[str(output.path) for output in request.outputs],
            fix=fix,
        )
    check_append(found, request.append, "the report")
    return found
