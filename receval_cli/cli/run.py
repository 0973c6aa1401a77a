"""`receval run`: the options, one evaluation, the outputs written and the table shown."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from receval_cli import console
from receval_cli.choices import Engine
from receval_cli.cli.common import (
    AllowDifferentConventions,
    AppendOption,
    OutputOption,
    SetOption,
    error_exit,
    option_order,
)
from receval_cli.cli.output_pairs import pair_outputs
from receval_cli.cli.run_outputs import RunRequest, checked_outputs
from receval_cli.errors import EXIT_GATE_FAILED, EXIT_OK, RecEvalError, UsageError
from receval_cli.formats import RUN_FORMATS, Format, choices_text
from receval_cli.report.destinations import Destination
from receval_cli.streams import stdout_closed_at_start

if TYPE_CHECKING:  # the work's modules load polars and pydantic: imported when a run starts
    from receval_cli.report.mlflow_target import MlflowTarget
    from receval_cli.results.report import RunReport

# what the MLflow logging reuses of the outputs written: each format's text
_LOGGED_FORMATS = ("json", "html")


def run_command(
    ctx: typer.Context,
    config: Annotated[Path, typer.Argument(help="The YAML config file.")],
    format: Annotated[
        list[Format] | None,
        typer.Option(
            "--format",
            "-f",
            help=f"{choices_text(RUN_FORMATS)}; default: the --output file's extension, "
            "else the config's output.format. "
            "Given several times, each names the format of the --output after it.",
        ),
    ] = None,
    output: OutputOption = None,
    append: AppendOption = False,
    per_user: Annotated[
        Path | None,
        typer.Option(
            "--per-user",
            help="Write every per-user metric value (with the model) to this file: .parquet, "
            ".csv, .tsv or .jsonl.",
        ),
    ] = None,
    with_per_user: Annotated[
        bool,
        typer.Option(
            "--with-per-user",
            help="The JSON report also holds every per-user value, so that `receval compare` "
            "can test the differences between saved reports user by user.",
        ),
    ] = False,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="No progress display and no table; warnings and failed gates still go to "
            "stderr, and a report asked for with --format or --output is still written.",
        ),
    ] = False,
    verbose: console.VerboseOption = False,
    log_format: console.LogFormatOption = None,
    no_color: console.NoColorOption = False,
    preset: Annotated[
        str | None,
        typer.Option(
            "--preset",
            help="Conventions of a well-known tool (e.g. trec_eval); the config's other "
            "conventions still override single settings.",
        ),
    ] = None,
    ci: Annotated[
        bool,
        typer.Option(
            "--ci",
            help="Confidence intervals for every per-user metric (the config's confidence "
            "settings, else 95% bootstrap, 1000 resamples).",
        ),
    ] = False,
    engine: Annotated[
        Engine | None,
        typer.Option(
            "--engine",
            help="auto, in_memory, streaming, spark or gpu (default: the config's engine).",
        ),
    ] = None,
    baseline_report: Annotated[
        Path | None,
        typer.Option(
            "--baseline-report",
            help="Compare with the metrics of a saved JSON report instead of a baseline model.",
        ),
    ] = None,
    allow_different_conventions: AllowDifferentConventions = False,
    spark_master: Annotated[
        str | None,
        typer.Option(
            "--spark-master",
            help="engine: spark: the master of the session receval starts (local[4], "
            "spark://host:7077, yarn); overrides the config's spark.master.",
        ),
    ] = None,
    spark_conf: Annotated[
        list[str] | None,
        typer.Option(
            "--spark-conf",
            help="engine: spark: a Spark setting KEY=VALUE (repeat it), e.g. "
            "spark.driver.memory=8g; added to the config's spark.conf.",
        ),
    ] = None,
    history: Annotated[
        Path | None,
        typer.Option(
            "--history",
            help="Append this run's values to a history store (a folder of Parquet files, "
            "one per run; `receval history PATH` shows the trends); overrides the config's "
            "history.",
        ),
    ] = None,
    label: Annotated[
        str | None,
        typer.Option(
            "--label", help="A label for this run in its report and history, e.g. a git sha."
        ),
    ] = None,
    tag: Annotated[
        list[str] | None,
        typer.Option(
            "--tag", help="A KEY=VALUE tag for this run (repeat it), e.g. model_version=3."
        ),
    ] = None,
    mlflow_uri: Annotated[
        str | None,
        typer.Option(
            "--mlflow-uri",
            help="Log this run to MLflow once its outputs are written: a tracking URI "
            "(sqlite:///mlflow.db, http://HOST:5000 or a folder; the mlflow extra); "
            "overrides the config's tracking.mlflow.uri.",
        ),
    ] = None,
    mlflow_experiment: Annotated[
        str | None,
        typer.Option(
            "--mlflow-experiment",
            help="The MLflow experiment to log to; overrides the config's "
            "tracking.mlflow.experiment (default: receval).",
        ),
    ] = None,
    settings: SetOption = None,
) -> None:
    """Evaluate the predictions in CONFIG; exit 1 when a gate fails."""
    from receval_cli.report.render import run_table
    from receval_cli.results.run_info import RunLabel, parse_tags

    console.configure(no_color=no_color, quiet=quiet, verbose=verbose, log_format=log_format)
    try:
        formats = [f.value for f in format or []]
        allowed = [f.value for f in Format]
        outputs, given = pair_outputs(option_order(ctx), formats, output or [], allowed)
        request = RunRequest(config, given, outputs, append, per_user, quiet, history)
        request = dataclasses.replace(
            request,
            settings=tuple(settings or ()),
            with_per_user=with_per_user,
            mlflow_uri=mlflow_uri,
            mlflow_experiment=mlflow_experiment,
        )
        with console.live_stages():
            spark = _spark_settings(spark_master, spark_conf or [])
            request = dataclasses.replace(request, label=RunLabel(label, parse_tags(tag or [])))
            report, table_shown, tracking, written = _run(
                request, preset, ci, engine, baseline_report, allow_different_conventions, spark
            )
    except RecEvalError as error:
        raise error_exit(error) from None
    if table_shown:
        console.show(run_table(report))
    else:  # the table shows them; without it they go to stderr, even with --quiet
        for warning in report.warnings:
            console.warn(warning)
    if not report.passed and not table_shown:  # the table already lists the failures
        for gate in report.gates:
            if not gate.passed:
                console.emit("gate", gate.describe())
    exit_code = EXIT_OK if report.passed else EXIT_GATE_FAILED
    if tracking is not None:  # after every output: a tracker that fails loses no report
        _log_to_mlflow(report, tracking, exit_code, written)
    if exit_code != EXIT_OK:
        raise typer.Exit(exit_code)


def _log_to_mlflow(
    report: RunReport, target: MlflowTarget, exit_code: int, written: dict[str, str]
) -> None:
    """Log the finished run to MLflow; a failure is one error line and exit 2 (the
    outputs are whole: docs/tracking.md)."""
    from receval_cli.report.mlflow_logging import log_run_to_mlflow

    try:
        with console.stage("tracking"):
            run_id = log_run_to_mlflow(report, target, exit_code, written)
    except RecEvalError as error:
        raise error_exit(error) from None
    console.log(f"logged to MLflow: run {run_id}, experiment {target.experiment!r}, {target.uri}")


def _spark_settings(master: str | None, pairs: list[str]) -> tuple[str | None, dict[str, str]]:
    """--spark-master and the --spark-conf KEY=VALUE pairs, checked."""
    from receval_cli.config.model import receval_spark_key

    conf: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            fix = "Write it as KEY=VALUE, e.g. --spark-conf spark.driver.memory=8g."
            raise UsageError(
                f"--spark-conf {pair!r} is not a Spark setting. {fix}",
                key="--spark-conf",
                found=pair,
                fix=fix,
            )
        instead = receval_spark_key(key, value)
        if instead is not None:
            message = f"--spark-conf {pair}: {instead}"
            raise UsageError(message, key="--spark-conf", found=pair, fix=instead)
        conf[key.strip()] = value
    return master, conf


def _run(
    request: RunRequest,
    preset: str | None,
    ci: bool,
    engine: Engine | None,
    baseline_report: Path | None,
    allow_different_conventions: bool = False,
    spark: tuple[str | None, dict[str, str]] = (None, {}),
) -> tuple[RunReport, bool, MlflowTarget | None, dict[str, str]]:
    """Evaluate, write the outputs (files, then standard output); return the report,
    whether the table is still to be shown on stdout, where the run is logged to MLflow
    (None: nowhere) and the JSON and HTML texts written (which that logs as they are)."""
    from receval_cli.analysis.runs import evaluate_config
    from receval_cli.config.loading import load_config
    from receval_cli.config.model import ConfidenceConfig
    from receval_cli.history.store import history_rows, prepare_store, run_file
    from receval_cli.inputs.change_watch import input_files, watching
    from receval_cli.report.per_user_table import per_user_values
    from receval_cli.report.render import render
    from receval_cli.report.writing import Content, frame_writer, write_outputs

    with console.stage("config"):
        loaded = load_config(request.config, preset, request.settings)
        if engine is not None:
            chosen_engine = loaded.config.model_copy(update={"engine": engine.value})
            loaded = dataclasses.replace(loaded, config=chosen_engine)
        master, conf = spark
        if master is not None or conf:
            given = loaded.config.spark
            spark_settings = given.model_copy(
                update={"master": master or given.master, "conf": {**given.conf, **conf}}
            )
            updated = loaded.config.model_copy(update={"spark": spark_settings})
            loaded = dataclasses.replace(loaded, config=updated)
        if request.history is not None:
            # a path on the command line is from the working directory, as --output's is
            # (the config's `history:` is from the config's folder)
            given_store = str(request.history.absolute())
            with_history = loaded.config.model_copy(update={"history": given_store})
            loaded = dataclasses.replace(loaded, config=with_history)
        checked = checked_outputs(request, loaded, baseline_report)
        store, destinations, per_user = checked.store, checked.destinations, checked.per_user
    confidence = None
    if ci:
        confidence = loaded.config.confidence or ConfidenceConfig()
    html = any(d.format == "html" for d in destinations)
    with watching(input_files(loaded)):  # a file rewritten meanwhile: exit 2, no report
        report = evaluate_config(
            loaded,
            confidence,
            baseline_report,
            # the HTML report draws the per-user distributions: a partitioned run keeps them
            per_user is not None or request.with_per_user or html,
            allow_different_conventions,
            request.label,
            figures=html,  # the item figures, only where they are drawn
        )
    if request.with_per_user:
        report = dataclasses.replace(report, per_user_in_json=True)
    with console.stage("report"):
        contents: dict[Destination, Content] = {}
        if per_user is not None:
            contents[per_user] = frame_writer(per_user_values(report), per_user.format)
        if store is not None:  # the run's own file in the store, with the other outputs
            assert report.run is not None
            kept_path = run_file(store, report.run.id)
            if kept_path.exists():
                fix = "Unset SOURCE_DATE_EPOCH, or give this run another --label or --tag."
                raise UsageError(
                    f"history store {store} already holds run {report.run.id}: with "
                    "SOURCE_DATE_EPOCH set, the same config, label and tags give the same run "
                    f"id. Nothing was written. {fix}",
                    path=kept_path,
                    found=report.run.id,
                    fix=fix,
                )
            prepare_store(store)
            kept = Destination(kept_path, "parquet", exclusive=True)
            contents[kept] = frame_writer(history_rows(report), "parquet")
        for destination in destinations:
            if destination.path is not None or destination.format != "table":
                contents[destination] = render(report, destination.format, width=100)
        write_outputs(contents)  # every file or none, then standard output
        for destination in contents:
            if destination.path is not None:
                console.log(f"wrote {destination.path}")
    written = {
        d.format: text
        for d in destinations
        if d.format in _LOGGED_FORMATS and isinstance(text := contents.get(d), str)
    }
    return report, _table_shown(request, destinations), checked.tracking, written


def _table_shown(request: RunRequest, destinations: list[Destination]) -> bool:
    """The table goes to stdout (through the console) when stdout is a table destination,
    or beside files only; --quiet drops it, except when asked for with `-o -`."""
    on_stdout = [d for d in destinations if d.path is None]
    if not on_stdout:  # beside files: not shown on a stdout closed from the start (>&-)
        return not request.quiet and not stdout_closed_at_start()
    if on_stdout[0].format != "table":
        return False
    return bool(request.outputs) or not request.quiet
