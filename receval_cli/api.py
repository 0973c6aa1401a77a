"""The Python API for notebooks and scripts: `receval.evaluate` (`import receval`:
receval/__init__.py), also `receval_cli.evaluate`.

Each input is a path (read by the same readers as `receval run`, the format from the
extension) or a frame (polars DataFrame/LazyFrame, or pandas DataFrame); the result is
the model's Report (the CLI report's `models.model` block; `Report.to_dict()` gives it).

>>> import polars as pl
>>> import receval_cli
>>> preds = pl.DataFrame({"user": [1, 1], "item": [10, 11], "score": [0.9, 0.8]})
>>> truth = pl.DataFrame({"user": [1], "item": [11]})
>>> receval_cli.evaluate(preds, truth, metrics=["precision@2", "mrr"]).metrics
{'precision@2': 0.5, 'mrr': 0.5}
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import polars as pl
from pydantic import BaseModel, ValidationError

from receval_cli.config.arguments import check_arguments
from receval_cli.config.convention_groups import conventions_block, metric_groups
from receval_cli.config.conventions import Conventions
from receval_cli.config.metric_lists import fallback_notes, metric_specs, mixed_list_notes
from receval_cli.config.model import (
    CatalogConfig,
    GroundTruthConfig,
    InteractionsConfig,
    PredictionsConfig,
    UnknownItemsConfig,
)
from receval_cli.config.validation_errors import validation_config_error
from receval_cli.errors import UsageError, did_you_mean
from receval_cli.evaluation import unknown_items
from receval_cli.evaluation.assembly import evaluate_inputs
from receval_cli.evaluation.metric_groups import merged_report
from receval_cli.inputs.column_guess import guessed_columns
from receval_cli.inputs.optional import (
    Sources,
    map_catalog,
    map_interactions,
    read_catalog,
    read_interactions,
)
from receval_cli.inputs.pandas_frames import from_pandas
from receval_cli.inputs.readers import Input, map_ground_truth, map_predictions, read_ground_truth
from receval_cli.inputs.readers import read_predictions as read_prediction_file
from receval_cli.inputs.scanning import FRAME_PREFIX, frames_given
from receval_cli.results.report import Report, RunReport

if TYPE_CHECKING:
    from receval_cli.report.report_comparison import ReportComparison
from receval_cli.wording import audience

M = TypeVar("M", bound=BaseModel)
F = TypeVar("F", bound=Callable[..., Any])


def keywords_checked(function: F) -> F:
    """A misspelt keyword argument names the nearest one (`metric=` -> Did you mean
    'metrics'?), where Python's own TypeError names only the misspelling; an argument of
    the wrong type is named with what it takes (config/arguments.py)."""
    signature = inspect.signature(function)

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        unknown = [name for name in kwargs if name not in signature.parameters]
        if unknown:
            near = did_you_mean(unknown[0], signature.parameters)
            raise TypeError(
                f"{function.__name__}() got an unexpected keyword argument {unknown[0]!r}."
                f"{near or ' Its arguments: ' + ', '.join(signature.parameters) + '.'}"
            )
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:  # a missing argument: Python's own error names it
            return function(*args, **kwargs)
        check_arguments(function.__name__, bound.arguments)
        return function(*args, **kwargs)

    return call  # type: ignore[return-value]


# a path, or a table in memory
Data = str | os.PathLike[str] | pl.DataFrame | pl.LazyFrame | Any


@keywords_checked
def evaluate(
    predictions: Data,
    ground_truth: Data,
    metrics: str | Iterable[str | Mapping[str, Any]],
    *,
    cutoffs: Iterable[int] | None = None,
    conventions: Mapping[str, Any] | str | None = None,
    prediction_columns: Mapping[str, str] | None = None,
    truth_columns: Mapping[str, str] | None = None,
    list_separator: str = "|",
    catalog: Data | None = None,
    catalog_columns: Mapping[str, str] | None = None,
    interactions: Data | None = None,
    interaction_columns: Mapping[str, str] | None = None,
    baseline: Data | None = None,
    baseline_columns: Mapping[str, str] | None = None,
) -> Report:
    """Evaluate as `receval run` does (same readers, checks, conventions and numbers).

    `metrics` and `cutoffs` are the config's keys of the same names ("ndcg@10", or "ndcg"
    with `cutoffs=[5, 10]`, or mappings with parameters). `conventions` is the config's
    conventions mapping, or a preset's name ("trec_eval"). The `*_columns` mappings name
    the columns as the config's `columns` blocks do. `catalog`, `interactions` and
    `baseline` are the optional inputs of the beyond-accuracy metrics. Problems raise
    receval's own errors (`receval_cli.errors.RecEvalError`) with the CLI's messages,
    the config's keys named as this function's arguments.
    """
    with audience("api"):  # messages name this function's arguments, not config keys
        entries: list[str | dict[str, Any]] = (
            [metrics] if isinstance(metrics, str) else [_entry(m) for m in metrics]
        )
        if not entries:
            fix = "name at least one metric, e.g. ['ndcg@10']."
            raise UsageError(f"metrics is empty; {fix}", key="metrics", found=[], fix=fix)
        ks = list(cutoffs) if cutoffs is not None else None
        specs = metric_specs(entries, ks, "evaluate()")
        settings = {"preset": conventions} if isinstance(conventions, str) else conventions
        chosen = _validated(Conventions, dict(settings or {}), "conventions")
        predictions, ground_truth = _frame_or_path(predictions, ground_truth)
        prediction_columns, truth_columns = guessed_columns(
            predictions, ground_truth, prediction_columns, truth_columns
        )
        given = {
            "predictions": (predictions, prediction_columns),
            "ground_truth": (ground_truth, truth_columns),
            "catalog": (catalog, catalog_columns),
            "interactions": (interactions, interaction_columns),
            "baseline": (baseline, baseline_columns),
        }
        inputs = {
            role: _input(data, role, columns, list_separator)
            for role, (data, columns) in given.items()
            if data is not None
        }
        sources = Sources(
            catalog=inputs.get("catalog"),
            interactions=inputs.get("interactions"),
            baseline=inputs.get("baseline"),
        )
        groups = metric_groups(chosen, specs)  # tools' names: a pass per conventions
        parts = [
            evaluate_inputs(
                inputs["predictions"],
                inputs["ground_truth"],
                group.specs,
                group.conventions,
                sources=sources,
            )
            for group in groups
        ]
        block = conventions_block(groups[0].conventions, specs)
        report = dataclasses.replace(merged_report(parts, specs), conventions=block)
        report, _ = unknown_items.checked(report, UnknownItemsConfig())  # the warning; no gate
        # whose definition ran for a name in a tool's case or in a mixed list, as a run says
        notes = [*fallback_notes(entries), *mixed_list_notes(entries)]
        report = dataclasses.replace(report, warnings=[*notes, *report.warnings])
        import receval_cli.report.html  # noqa: F401 (the Report's view in a notebook)

        return report


@keywords_checked
def relstrings(
    predictions: Data,
    ground_truth: Data,
    *,
    length: int = 10,
    conventions: Mapping[str, Any] | str | None = None,
    prediction_columns: Mapping[str, str] | None = None,
    truth_columns: Mapping[str, str] | None = None,
    list_separator: str = "|",
) -> pl.DataFrame:
    """trec_eval's relstring per user: a DataFrame (user, relstring) with, for every user
    of the ground truth, the grades of the top `length` items as one character each (0-9,
    '>' above 9, '-' not judged, '.' a negative grade; '' without recommendations), the
    lists ranked as `evaluate` ranks them (receval_cli/evaluation/relstring.py).
    The other arguments are `evaluate`'s.

    >>> import polars as pl
    >>> preds = pl.DataFrame({"user": [1, 1, 1], "item": [10, 11, 12], "score": [0.9, 0.8, 0.7]})
    >>> truth = pl.DataFrame({"user": [1, 1], "item": [11, 12], "relevance": [2, 0]})
    >>> relstrings(preds, truth)["relstring"].to_list()
    ['-20']
    """
    from receval_cli.evaluation.relstring import relstring_table as compute

    with audience("api"):
        settings = {"preset": conventions} if isinstance(conventions, str) else conventions
        chosen = _validated(Conventions, dict(settings or {}), "conventions", caller="relstrings")
        if chosen.tie_break == "expected":  # a relstring is one order's grades
            fix = "give the order to show: tie_break item_desc, item_text_desc (trec_eval's), ..."
            raise UsageError(
                "conventions.tie_break expected averages metrics over every order of tied "
                f"items; a relstring shows one order. {fix}",
                key="conventions.tie_break",
                found="expected",
                fix=fix,
            )
        if isinstance(length, bool) or not isinstance(length, int) or length < 1:
            fix = "give a positive integer, e.g. length=10 (trec_eval's relstring.10)."
            raise UsageError(f"length is {length!r}; {fix}", key="length", found=length, fix=fix)
        predictions, ground_truth = _frame_or_path(predictions, ground_truth)
        prediction_columns, truth_columns = guessed_columns(
            predictions, ground_truth, prediction_columns, truth_columns
        )
        given = _input(predictions, "predictions", prediction_columns, list_separator, "relstrings")
        truth = _input(ground_truth, "ground_truth", truth_columns, list_separator, "relstrings")
        return compute(given, truth, chosen, length)


@keywords_checked
def run(
    config: Mapping[str, Any] | str | os.PathLike[str], *, preset: str | None = None
) -> RunReport:
    """Run a config as `receval run CONFIG` does (every model, intervals, comparisons
    with a baseline, segments, gates: the same planner and numbers) and return the run's
    RunReport, writing nothing (no outputs, no history): a config file's path, or the
    config as a mapping of the YAML's keys (its relative paths read from the working
    directory), in which any input's path may be a frame instead (polars or pandas: a
    model's predictions, the ground truth, the catalog, ...). `preset` replaces the
    config's conventions.preset, as --preset does. Problems raise receval's own errors
    with the CLI's messages, naming the config's keys."""
    from receval_cli.analysis.runs import evaluate_config
    from receval_cli.config.loading import config_from_mapping, load_config

    frames: dict[str, pl.LazyFrame] = {}
    if isinstance(config, Mapping):
        raw = _frames_named(config, (), frames)
        loaded = config_from_mapping(raw, Path.cwd() / "<config>", preset)
    else:
        loaded = load_config(Path(config).expanduser(), preset)
    if frames and loaded.config.engine == "spark":
        fix = "write them to files (or Spark tables) and name those, or choose another engine"
        raise UsageError(
            f"engine: spark reads files and tables, not frames in memory ({', '.join(frames)}); "
            f"{fix}.",
            key="engine",
            found="spark",
            fix=fix,
        )
    with frames_given(frames):
        result = evaluate_config(loaded)
    import receval_cli.report.html  # noqa: F401 (the reports' view in a notebook)

    return result


def _frames_named(data: Any, keys: tuple[str, ...], frames: dict[str, pl.LazyFrame]) -> Any:
    """The config mapping with each frame in it replaced by a path "frame:KEYS" (its keys,
    dotted), the frame kept in `frames` under that path (inputs/scanning.frames_given)."""
    if isinstance(data, Mapping):
        return {key: _frames_named(value, (*keys, str(key)), frames) for key, value in data.items()}
    if isinstance(data, list):
        return [_frames_named(value, (*keys, str(i)), frames) for i, value in enumerate(data)]
    frame = _frame(data, ".".join(keys))
    if frame is None:
        return data
    name = f"{FRAME_PREFIX}{'.'.join(keys)}"
    frames[name] = frame
    return name


@keywords_checked
def compare(
    *reports: str | os.PathLike[str],
    baseline: str | None = None,
    metrics: str | Iterable[str] = (),
    allow_different_conventions: bool = False,
) -> ReportComparison:
    """`receval compare`: saved JSON reports (`receval run --format json --output PATH`)
    side by side, each value's delta against the `baseline` column (default: the first);
    `metrics` (a name or a list of them) keeps those only. Reports of other conventions
    are refused unless `allow_different_conventions`. Nothing is evaluated again."""
    from receval_cli.report.report_comparison import compare_reports

    paths = [Path(report).expanduser() for report in reports]
    kept = [metrics] if isinstance(metrics, str) else list(metrics)
    return compare_reports(paths, baseline, kept, allow_different_conventions)


# each input: its config model, its file reader, and its mapping of a frame's columns
_READERS: dict[str, tuple[type[Any], Callable[..., Input], Callable[..., Input]]] = {
    "predictions": (
        PredictionsConfig,
        read_prediction_file,
        lambda raw, c, path, fmt: map_predictions(raw, c.columns, c.list_separator, path, fmt),
    ),
    "ground_truth": (
        GroundTruthConfig,
        read_ground_truth,
        lambda raw, c, path, fmt: map_ground_truth(raw, c.columns, c.list_separator, path, fmt),
    ),
    "catalog": (CatalogConfig, read_catalog, map_catalog),
    "interactions": (InteractionsConfig, read_interactions, map_interactions),
    "baseline": (
        PredictionsConfig,
        lambda c, path: read_prediction_file(c, path, role="baseline"),
        lambda raw, c, path, fmt: map_predictions(
            raw, c.columns, c.list_separator, path, fmt, role="baseline"
        ),
    ),
}


def _frame_or_path(predictions: Data, ground_truth: Data) -> tuple[Data, Data]:
    """Each input as a LazyFrame (a pandas frame converted once), or its path."""
    found = []
    for data, role in ((predictions, "predictions"), (ground_truth, "ground_truth")):
        frame = _as_lazy(data, role)
        found.append(data if frame is None else frame)
    return found[0], found[1]


def _entry(metric: str | Mapping[str, Any]) -> str | dict[str, Any]:
    return metric if isinstance(metric, str) else dict(metric)


def _validated(model: type[M], data: dict[str, Any], *within: str, caller: str = "evaluate") -> M:
    """The model, or a ConfigError whose lines name the config keys (made arguments later),
    headed by the API function called."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        heading = "the arguments are not valid"
        raise validation_config_error(f"{caller}()", error, within, heading, file=False) from None


def _input(
    data: Data,
    role: str,
    columns: Mapping[str, str] | None,
    separator: str,
    caller: str = "evaluate",
) -> Input:
    """A path read by the file reader, or a frame mapped with the same column mapping."""
    model, read, mapped = _READERS[role]
    frame = _as_lazy(data, role)
    path = str(data) if frame is None else f"<{role.replace('_', ' ')} frame>"
    settings = {"path": path, "columns": dict(columns or {}), "list_separator": separator}
    tag = ("<file>",) if model is PredictionsConfig else ()  # predictions: one file
    config = _validated(model, settings, role, *tag, caller=caller)
    if frame is None:
        return read(config, Path(path).expanduser())
    return mapped(frame, config, Path(path), "frame")


def _as_lazy(data: Data, role: str) -> pl.LazyFrame | None:
    """The data as a LazyFrame, or None for a path."""
    frame = _frame(data, role)
    if frame is not None or isinstance(data, str | os.PathLike):
        return frame
    fix = "give a path (str or Path), a polars DataFrame or LazyFrame, or a pandas DataFrame."
    raise UsageError(
        f"an input is a {type(data).__name__}; {fix}", found=type(data).__name__, fix=fix
    )


def _frame(data: Any, role: str) -> pl.LazyFrame | None:
    """A polars or pandas frame as a LazyFrame; None for anything else."""
    if isinstance(data, pl.LazyFrame):
        return data
    if isinstance(data, pl.DataFrame):
        return data.lazy()
    if type(data).__module__.split(".")[0] == "pandas" and hasattr(data, "columns"):
        return from_pandas(data, role)
    return None
