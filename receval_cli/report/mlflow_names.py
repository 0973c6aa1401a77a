"""A run's report as MLflow runs: the names MLflow takes, and what each run gets.

MLflow's metric, param and tag names hold letters, digits, `_ - . : /` and spaces only, at
most 250 characters, no empty or `..` path part. A report's key is written so
(docs/tracking.md has the table), the same way wherever it appears:

    @        _at_      ndcg@10                     -> ndcg_at_10
    ( and ,  .         ndcg@10(gain=exponential)   -> ndcg_at_10.gain-exponential
    )        dropped   P(rel=2)@10                 -> P.rel-2_at_10
    =        -         utility_2,-1,0,0            -> utility_2.-1.0.0
    ;        _         ndcg(gains=1:3;2:9)         -> ndcg.gains-1:3_2:9
    other    _uXXXX_   a space, /, +, an accent: its code point in hex (`+` -> _u002b_)

a leading `.` too (so no part is `.` or `..`); a name over 250 characters keeps its first
241 and `_` and 8 hex digits of its SHA-256. `/` joins the parts of a name: a segment's
metric is `segment/ATTRIBUTE-VALUE/METRIC` (group=a -> segment/group-a/ndcg_at_10), a
comparison with the baseline `vs_baseline/METRIC/difference`. Every name the metric
registry and the tools' dialects produce maps to a distinct name (tests/report/
test_mlflow_names.py); two keys of one report that would still meet are refused.

Nothing here imports MLflow: report/mlflow_logging.py sends what these functions build.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from receval_cli.errors import TrackingError

if TYPE_CHECKING:
    from receval_cli.results.report import Report, RunReport

MLFLOW_KEY_LENGTH = 250  # MLflow's longest metric, param or tag name
MLFLOW_PARAM_LENGTH = 6000  # its longest param value
MLFLOW_TAG_LENGTH = 8000  # and tag value
_PLAIN = re.compile(r"[A-Za-z0-9_.\-:]")
_SPELLED = {"@": "_at_", "(": ".", ",": ".", ")": "", "=": "-", ";": "_"}
# an input's fields logged as params (page_checksums, long, stays in the JSON report)
_INPUT_FIELDS_LEFT_OUT = ("page_checksums",)


def mlflow_name(key: str) -> str:
    """`key` (a metric's report key, a segment, a tag's key) as one part of an MLflow name:
    the table of the module docstring."""
    spelled = "".join(
        char if _PLAIN.fullmatch(char) else _SPELLED.get(char, f"_u{ord(char):04x}_")
        for char in key
    )
    if spelled.startswith("."):
        spelled = "_u002e_" + spelled[1:]
    return spelled or "_"


def joined_name(*parts: str) -> str:
    """Parts already spelled (mlflow_name) joined with `/`, at most MLflow's length."""
    name = "/".join(parts)
    if len(name) <= MLFLOW_KEY_LENGTH:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{name[: MLFLOW_KEY_LENGTH - 9]}_{digest}"


@dataclass(frozen=True)
class TrackedRun:
    """What one MLflow run gets: its name, params, metrics and tags."""

    name: str
    params: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)


def tracked_runs(report: RunReport, exit_code: int) -> tuple[TrackedRun, list[TrackedRun]]:
    """The run's MLflow run (receval's version, the config hash, the conventions and the
    inputs every model shares as params; the run's tags) and a nested run per model (the
    same, its own inputs, and its metrics, intervals, segments and comparisons)."""
    tags = run_tags(report, exit_code)
    params = {
        "receval_version": report.version,
        "config_hash": report.run.config_hash if report.run is not None else "",
        **_convention_params(dict(report.conventions)),
    }
    per_model = {name: _input_params(model.inputs) for name, model in report.models.items()}
    first, *others = list(per_model.values()) or [{}]
    common = {k: v for k, v in first.items() if all(o.get(k) == v for o in others)}
    label = report.run.label if report.run is not None else None
    run_name = label or (report.run.id if report.run is not None else "receval")
    parent = TrackedRun(run_name, {**params, **common}, {}, tags)
    models = [
        TrackedRun(
            name,
            {**params, **per_model[name], "model": name},
            model_metrics(model, [c.to_dict() for c in report.comparisons if c.model == name]),
            {**tags, "receval.model": name},
        )
        for name, model in report.models.items()
    ]
    return parent, models


def run_tags(report: RunReport, exit_code: int) -> dict[str, str]:
    """The run's tags: each --tag (its key spelled as a name), then receval's own: the run
    id, the --label, the gates' verdict and failures, the exit code."""
    tags: dict[str, str] = {}
    if report.run is not None:
        given = report.run.tags.items()
        tags.update({mlflow_name(key): _cut(value, MLFLOW_TAG_LENGTH) for key, value in given})
        tags["receval.run_id"] = report.run.id
        if report.run.label is not None:
            tags["receval.label"] = _cut(report.run.label, MLFLOW_TAG_LENGTH)
    failed = sum(not gate.passed for gate in report.gates)
    tags["receval.gates"] = "none" if not report.gates else "failed" if failed else "passed"
    tags["receval.gates_failed"] = str(failed)
    tags["receval.exit_code"] = str(exit_code)
    return tags


def model_metrics(
    report: Report, comparisons: list[dict[str, Any]] | None = None
) -> dict[str, float]:
    """One model's values under MLflow names: each metric with a value (null ones are left
    out), its interval's bounds (NAME_low, NAME_high), each segment's
    (segment/SEGMENT/NAME), the users evaluated (users/evaluated, and per segment), and
    each comparison with the baseline (vs_baseline/NAME/difference, low, high, p_value,
    p_adjusted)."""
    found: dict[str, tuple[str, float]] = {}
    _add_metrics(found, report, (), "")
    for segment, part in report.segments.items():
        _add_metrics(found, part, ("segment", mlflow_name(segment)), f"segment {segment}: ")
    for compared in comparisons or []:
        metric = mlflow_name(str(compared["metric"]))
        for entry in ("difference", "low", "high", "p_value", "p_adjusted"):
            name = joined_name("vs_baseline", metric, entry)
            _add(found, name, f"{compared['metric']} ({entry})", compared.get(entry))
    return {name: value for name, (_, value) in found.items()}


def _add_metrics(
    found: dict[str, tuple[str, float]], report: Report, prefix: tuple[str, ...], where: str
) -> None:
    users = report.users.get("evaluated")
    _add(found, joined_name(*prefix, "users", "evaluated"), f"{where}users", users)
    intervals = (report.confidence or {}).get("intervals") or {}
    for key, value in report.metrics.items():
        name = mlflow_name(key)
        _add(found, joined_name(*prefix, name), where + key, value)
        bounds = intervals.get(key) or [None, None]
        _add(found, joined_name(*prefix, f"{name}_low"), f"{where}{key} (low)", bounds[0])
        _add(found, joined_name(*prefix, f"{name}_high"), f"{where}{key} (high)", bounds[1])


def _add(found: dict[str, tuple[str, float]], name: str, source: str, value: object) -> None:
    """Add a value (none: nothing); a name two keys would share is refused."""
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return
    if name in found and found[name][0] != source:
        fix = "Rename one of them (a segment's value, a metric's spelling)."
        raise TrackingError(
            f"{found[name][0]!r} and {source!r} would be logged to MLflow under one name, "
            f"{name!r}; nothing was logged. {fix}",
            key="tracking.mlflow",
            found=name,
            fix=fix,
        )
    found[name] = (source, float(value))


def _convention_params(conventions: dict[str, Any]) -> dict[str, str]:
    """conventions.KEY per convention; a tool name's own, conventions.by_metric.METRIC."""
    by_metric = conventions.pop("by_metric", None) or {}
    params = {f"conventions.{key}": _text(value) for key, value in conventions.items()}
    for metric, block in by_metric.items():
        params[joined_name(f"conventions.by_metric.{mlflow_name(metric)}")] = _text(block)
    return params


def _input_params(inputs: dict[str, Any]) -> dict[str, str]:
    """inputs.NAME.FIELD per input and field of its fingerprint (page_checksums aside)."""
    params = {}
    for name, block in inputs.items():
        for key, value in block.items():
            if key not in _INPUT_FIELDS_LEFT_OUT:
                params[joined_name(f"inputs.{mlflow_name(name)}.{mlflow_name(key)}")] = _text(value)
    return params


def _text(value: object) -> str:
    """A param's value: text as it is, anything else as JSON (null, 1.0, {...}), at most
    MLflow's length."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return _cut(text, MLFLOW_PARAM_LENGTH)


def _cut(text: str, length: int) -> str:
    """The text, at most `length` characters (a longer one ends in `...`)."""
    return text if len(text) <= length else text[: length - 3] + "..."
