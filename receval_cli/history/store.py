"""The history store: a folder with one Parquet file per run, `<run id>.parquet`.

A run appends by writing its own file (a hidden temporary file renamed into place, as
every output is written: report/writing.py), so two jobs appending at once each add a
file and lose nothing, and a reader never sees half a run. Any Parquet reader reads the
store without receval: `pl.read_parquet("PATH/*.parquet")`, DuckDB's
`read_parquet('PATH/*.parquet')`, Spark's `spark.read.parquet("PATH")` (each skips the
hidden temporary files).

One row per (run, model, segment, metric); the columns (SCHEMA) are the run's metadata,
the inputs' fingerprints, and the value with its interval, the users it was averaged
over and the absolute gate bounds that applied to it. `segment` is null for all users.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from receval_cli import console
from receval_cli.errors import InputError, UsageError
from receval_cli.metrics import lookup
from receval_cli.metrics.dialects import spec_of
from receval_cli.results.blocks import InputBlock
from receval_cli.results.report import Report, RunReport

TAGS = pl.List(pl.Struct({"key": pl.String, "value": pl.String}))
SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "started_at": pl.Datetime("us", "UTC"),
    "label": pl.String(),
    "tags": TAGS,
    "receval_version": pl.String(),
    "config_hash": pl.String(),
    "config_path": pl.String(),
    "passed": pl.Boolean(),  # every gate of the run passed
    "model": pl.String(),
    "segment": pl.String(),  # null: all users
    "metric": pl.String(),
    "higher_is_better": pl.Boolean(),
    "value": pl.Float64(),  # null: the metric has no value on these inputs
    "ci_low": pl.Float64(),
    "ci_high": pl.Float64(),
    "ci_level": pl.Float64(),
    "users": pl.Int64(),  # the users the value is averaged over
    "gate_min": pl.Float64(),
    "gate_max": pl.Float64(),
    "predictions_path": pl.String(),
    "predictions_size_bytes": pl.Int64(),
    "predictions_modified": pl.String(),
    "predictions_rows": pl.Int64(),
    "predictions_users": pl.Int64(),
    "ground_truth_path": pl.String(),
    "ground_truth_hash": pl.String(),
    "ground_truth_rows": pl.Int64(),
    "ground_truth_users": pl.Int64(),
}
REQUIRED = ("run_id", "started_at", "model", "segment", "metric", "value")


def history_rows(result: RunReport) -> pl.DataFrame:
    """The run's rows for the store."""
    assert result.run is not None, "a run's report carries its RunInfo"
    run = result.run
    common = {
        "run_id": run.id,
        "started_at": run.started_at,
        "label": run.label,
        "tags": [{"key": k, "value": v} for k, v in run.tags.items()],
        "receval_version": result.version,
        "config_hash": run.config_hash,
        "config_path": str(result.config.get("source")),
        "passed": result.passed,
    }
    gates = result.config.get("gates") or {}
    rows = []
    for model, report in result.models.items():
        inputs = _inputs(report)
        parts: list[tuple[str | None, Report]] = [(None, report), *report.segments.items()]
        for segment, part in parts:
            intervals = (part.confidence or {}).get("intervals", {})
            level = (part.confidence or {}).get("level")
            for metric, value in part.metrics.items():
                low, high = intervals.get(metric) or (None, None)
                bounds = _bounds(gates.get(metric), model, segment)
                rows.append(
                    {
                        **common,
                        "model": model,
                        "segment": segment,
                        "metric": metric,
                        "higher_is_better": _higher_is_better(metric),
                        "value": value,
                        "ci_low": low,
                        "ci_high": high,
                        "ci_level": None if low is None else level,
                        "users": part.users.get("evaluated"),
                        **bounds,
                        **inputs,
                    }
                )
    return pl.DataFrame(rows, schema=SCHEMA)


def _higher_is_better(metric: str) -> bool:
    return lookup(spec_of(metric).name).higher_is_better


def _bounds(gate: dict[str, Any] | None, model: str, segment: str | None) -> dict[str, Any]:
    """The absolute bounds of the config's gate on this metric, where it applies."""
    if not gate or gate.get("model") not in (None, model) or gate.get("segment") != segment:
        return {"gate_min": None, "gate_max": None}
    return {"gate_min": gate.get("min"), "gate_max": gate.get("max")}


def _inputs(report: Report) -> dict[str, Any]:
    predictions: InputBlock = report.inputs.get("predictions") or {}
    truth: InputBlock = report.inputs.get("ground_truth") or {}
    return {
        "predictions_path": _text(predictions.get("path")),
        "predictions_size_bytes": predictions.get("size_bytes"),
        "predictions_modified": predictions.get("modified"),
        "predictions_rows": predictions.get("rows"),
        "predictions_users": predictions.get("users"),
        "ground_truth_path": _text(truth.get("path")),
        "ground_truth_hash": truth.get("content_hash"),
        "ground_truth_rows": truth.get("rows"),
        "ground_truth_users": truth.get("users"),
    }


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def run_file(store: Path, run_id: str) -> Path:
    """Where a run's rows go: `<store>/<run id>.parquet`."""
    return store / f"{run_id}.parquet"


def check_store(store: Path, option: str = "--history") -> None:
    """Fail before any work when the store cannot be appended to: a file where the folder
    should be, or a missing parent folder, or no write permission."""
    if store.exists() and not store.is_dir():
        fix = "Name a folder: the store holds one Parquet file per run."
        raise UsageError(
            f"{option} {store} is a file, not a folder. {fix}", path=store, found="a file", fix=fix
        )
    folder = store if store.is_dir() else store.parent
    if not folder.is_dir():
        fix = f"Create it first (mkdir -p {folder})."
        raise UsageError(
            f"{option} {store}: the folder {folder} does not exist. {fix}",
            path=store,
            found=str(folder),
            fix=fix,
        )
    if not os.access(folder, os.W_OK):
        raise UsageError(
            f"{option} {store}: the folder {folder} is not writable.", path=store, found=str(folder)
        )


def refuse_outputs_inside(store: Path, outputs: list[tuple[str, Path]]) -> None:
    """Fail before any work when an output (the option that names it, its path) would be
    written inside the store: every file there is read as a run, so any other file would
    break every later read of the store."""
    folder = Path(os.path.realpath(store))
    for option, path in outputs:
        if Path(os.path.realpath(path)).is_relative_to(folder):
            fix = "Write it outside the store's folder."
            raise UsageError(
                f"{option} {path} is inside the history store {store}, which holds only "
                f"its runs' files (any other file breaks every later read of the store). {fix}",
                key=option,
                path=path,
                found=str(path),
                fix=fix,
            )


def prepare_store(store: Path) -> None:
    """Create the store's folder on its first run (its parent was checked)."""
    store.mkdir(exist_ok=True)


def store_files(store: Path) -> list[Path]:
    """The runs' files, in name order (which is time order: run ids start with the time);
    hidden files (a run being written) and other files are not runs."""
    if not store.is_dir():
        return []
    found = [
        p
        for p in store.iterdir()
        if p.suffix == ".parquet" and not p.name.startswith((".", "_")) and p.is_file()
    ]
    return sorted(found)


def read_store(store: Path) -> pl.DataFrame:
    """Every row of the store (an empty table with SCHEMA when it holds no run), ordered
    by (started_at, run_id). A file that is not a run's is named, exit 2."""
    if store.exists() and not store.is_dir():
        fix = "Name the history folder (receval run --history PATH writes it)."
        raise InputError(
            f"history store {store} is a file, not a folder. {fix}",
            path=store,
            found="a file",
            fix=fix,
        )
    frames = _once_each(store, [(path, _read_run(path)) for path in store_files(store)])
    if not frames:
        return pl.DataFrame(schema=SCHEMA)
    frame = pl.concat(frames, how="diagonal_relaxed")
    return frame.sort("started_at", "run_id", maintain_order=True)


def _once_each(store: Path, read: list[tuple[Path, pl.DataFrame | None]]) -> list[pl.DataFrame]:
    """The runs' tables, each run id once: a file whose run is in another file already (a
    copy) is left out, with a warning naming both; the file named after the run
    (`<run id>.parquet`) is the one kept. A file removed meanwhile (None) is passed over."""
    present = [(path, frame) for path, frame in read if frame is not None]
    ids = {path: set(frame["run_id"].unique().to_list()) for path, frame in present}
    present.sort(key=lambda found: (found[0].stem not in ids[found[0]], found[0].name))
    owner: dict[str, Path] = {}
    kept = []
    for path, frame in present:
        first = next((owner[i] for i in sorted(ids[path]) if i in owner), None)
        if first is not None:
            console.warn(
                f"history store {store}: {path.name} holds run {min(ids[path] & set(owner))}, "
                f"as {first.name} does: it is read once, from {first.name}. Remove the copy."
            )
            continue
        owner.update(dict.fromkeys(ids[path], path))
        kept.append(frame)
    return kept


def _read_run(path: Path) -> pl.DataFrame | None:
    """The run's rows; None when the file is gone (pruned by another job since the store
    was listed). A file that is there and is not a run's is named, exit 2."""
    try:
        frame = pl.read_parquet(path)
    except (OSError, pl.exceptions.PolarsError) as error:
        if not path.exists():
            return None
        fix = "Remove it from the store, or move it elsewhere."
        raise InputError(
            f"history store: {path} could not be read as Parquet ({_first_line(error)}). {fix}",
            path=path,
            found=_first_line(error),
            fix=fix,
        ) from None
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        fix = "It is not a run of receval's history; move it out of the store."
        raise InputError(
            f"history store: {path} has no column {', '.join(missing)}. {fix}",
            path=path,
            column=missing[0],
            found=frame.columns[:8],
            fix=fix,
        )
    present = {name: dtype for name, dtype in SCHEMA.items() if name in frame.columns}
    try:
        return frame.cast(present)  # type: ignore[arg-type]
    except pl.exceptions.PolarsError as error:
        fix = "It is not a run of receval's history; move it out of the store."
        raise InputError(
            f"history store: {path} has columns of other types ({_first_line(error)}). {fix}",
            path=path,
            found=_first_line(error),
            fix=fix,
        ) from None


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


@dataclass(frozen=True)
class Pruned:
    kept: int
    removed: list[Path]


def prune(store: Path, keep: int) -> Pruned:
    """Remove every run but the latest `keep` (by start time): their files."""
    read = {path: _read_run(path) for path in store_files(store)}
    files = {path: f.select("run_id", "started_at") for path, f in read.items() if f is not None}
    if not files:
        return Pruned(0, [])
    runs = pl.concat(files.values()).unique().sort("started_at", "run_id")
    old = set(runs.head(max(runs.height - keep, 0))["run_id"].to_list())
    removed = []
    for path, frame in files.items():
        ids = set(frame["run_id"].to_list())
        if ids and ids <= old:
            try:
                path.unlink()
            except FileNotFoundError:
                continue  # another prune removed it meanwhile
            removed.append(path)
    return Pruned(runs.height - len(old), removed)


def past_values(
    frame: pl.DataFrame, model: str, metric: str, segment: str | None, runs: int
) -> list[float]:
    """The metric's values in the latest `runs` runs of the store for this model and
    segment (latest first); runs where it had no value are passed over."""
    segment_match = pl.col("segment").is_null() if segment is None else pl.col("segment") == segment
    found = frame.filter(
        pl.col("model") == model,
        pl.col("metric") == metric,
        segment_match,
        pl.col("value").is_not_null(),
    ).sort("started_at", "run_id", descending=True)
    return found.head(runs)["value"].to_list()
