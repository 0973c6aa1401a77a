"""A saved JSON report, read back: its schema (`SavedReport`: the models' blocks, or the
flat `metrics` of a one-model report written before receval 0.2) and its reading
(`read_saved_report`, every fault an InputError naming the key), for `receval compare`
(report/report_comparison.py) and `--baseline-report` (engines/run_plan.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from receval_cli.errors import InputError

_HOW_TO_WRITE = "Write one with `receval run CONFIG --format json --output PATH`."


FiniteNumber = Annotated[float, Field(strict=True, allow_inf_nan=False)]


class SavedConfidence(BaseModel):
    """A saved report's confidence block: what compare reads of it (the intervals)."""

    model_config = ConfigDict(extra="ignore")
    intervals: dict[str, tuple[FiniteNumber, FiniteNumber]] = {}


class SavedPerUser(BaseModel):
    """A saved report's per-user values (`receval run --with-per-user`): the users, and
    each per-user metric's values in their order (null: not in its mean)."""

    model_config = ConfigDict(extra="ignore")
    users: list[Annotated[int, Field(strict=True)] | str]
    values: dict[str, list[FiniteNumber | None]]

    @model_validator(mode="after")
    def _one_value_per_user(self) -> SavedPerUser:
        for name, values in self.values.items():
            if len(values) != len(self.users):
                raise ValueError(
                    f"values.{name} holds {len(values)} values for {len(self.users)} users"
                )
        if len(set(self.users)) != len(self.users):
            raise ValueError("a user is listed twice in users")
        return self


class SavedModel(BaseModel):
    """One model's part of a saved report: its metric values and intervals, and its
    per-user values where the report holds them."""

    model_config = ConfigDict(extra="ignore")
    metrics: dict[str, FiniteNumber | None]  # null: no value (auc with one class)
    confidence: SavedConfidence | None = None
    inputs: dict[str, Any] | None = None  # the fingerprints (the ground truth's hash)
    per_user: SavedPerUser | None = None


class SavedReport(BaseModel):
    """A saved JSON report, as `receval compare` and `--baseline-report` read it: its
    models' blocks (`models.NAME.metrics`), or the flat `metrics` of a one-model report
    written before receval 0.2. Everything else a report holds is ignored; conventions of
    another shape than a mapping count as none."""

    model_config = ConfigDict(extra="ignore")
    metrics: dict[str, FiniteNumber | None] | None = None
    confidence: SavedConfidence | None = None
    models: dict[str, SavedModel] | None = None
    inputs: dict[str, Any] | None = None  # a flat report's (before 0.2)
    conventions: dict[str, Any] | None = None
    baseline: str | None = None  # comparisons.baseline of a several-model report

    @model_validator(mode="before")
    @classmethod
    def _shape(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not ("metrics" in data or "models" in data):
            raise ValueError("no 'metrics' (nor 'models')")
        found = dict(data)
        if not isinstance(found.get("conventions"), dict):
            found.pop("conventions", None)
        models = found.get("models")
        for block in [found, *(models.values() if isinstance(models, dict) else [])]:
            if isinstance(block, dict) and not isinstance(block.get("inputs"), dict):
                block.pop("inputs", None)  # fingerprints of another shape: none
        comparisons = found.get("comparisons")
        baseline = comparisons.get("baseline") if isinstance(comparisons, dict) else None
        found["baseline"] = baseline if isinstance(baseline, str) else None
        if "models" in found:
            if isinstance(found["models"], dict) and not found["models"]:
                raise ValueError("'models' holds no model")
            found.pop("metrics", None)
        return found

    def blocks(self) -> dict[str, SavedModel]:
        """Each model's block (a flat report of before 0.2: one, named "model")."""
        if self.models is not None:
            return self.models
        assert self.metrics is not None
        flat = SavedModel(metrics=self.metrics, confidence=self.confidence, inputs=self.inputs)
        return {"model": flat}


def _saved_error(error: ValidationError, path: Path, role: str) -> InputError:
    """A saved report that does not fit SavedReport, named by the first key at fault."""
    first = error.errors()[0]
    location = [str(part) for part in first["loc"]]
    kind = first["type"]
    fix = _HOW_TO_WRITE
    if not location:  # the shape check of the whole document
        reason = str(first.get("ctx", {}).get("error", first["msg"]))
        if "holds no model" in reason:
            return InputError(f"{role} {path}: {reason}. {fix}", key="models", path=path, fix=fix)
        return InputError(
            f"{role} {path} has {reason}: it is not a receval JSON report. {fix}",
            key="metrics",
            path=path,
            fix=fix,
        )
    if "intervals" in location and len(location) >= 3:
        key = ".".join(location[:3])
        if kind in ("tuple_type", "too_short", "too_long", "list_type", "missing"):
            found = first.get("input")
            return InputError(
                f"{role} {path}: {key} is {json.dumps(found)}, not a [low, high] pair. {fix}",
                key=key,
                path=path,
                found=_json_safe(found),
                fix=fix,
            )
        location = location[:3]
    key = ".".join(location)
    if location[-1] == "metrics" or kind in ("dict_type", "missing"):
        return InputError(
            f"{role} {path}: {key} is missing or not a mapping of metric names to values; "
            f"it is not a receval JSON report. {fix}",
            key=key,
            path=path,
            found=None if kind == "missing" else _json_safe(first.get("input")),
            fix=fix,
        )
    found = first.get("input")
    return InputError(
        f"{role} {path}: {key} is {json.dumps(found)}, not a finite number; it "
        f"is not a receval JSON report. {fix}",
        key=key,
        path=path,
        found=_json_safe(found),
        fix=fix,
    )


def _json_safe(value: Any) -> Any:
    """A value read from a saved report, as a field: NaN and infinities (which JSON
    does not hold) as the text the report wrote them with."""
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        return json.dumps(value)
    return value


def read_saved_report(path: Path, role: str = "report") -> SavedReport:
    """A saved JSON report (for `compare` and `--baseline-report`), read through the
    SavedReport model, or an InputError naming `role`, the path and the key at fault.
    Nesting too deep for Python and numbers too long to convert are refused as not a
    report."""
    fix = _HOW_TO_WRITE
    if path.is_dir():
        fix = f"name a JSON report file, e.g. {path / 'report.json'}."
        raise InputError(f"{role} {path} is a folder; {fix}", path=path, found="a folder", fix=fix)
    if not path.exists():
        raise InputError(
            f"{role} {path} does not exist. Check the path. {fix}",
            path=path,
            found="no such file",
            fix=fix,
        )
    try:
        with path.open("rb") as handle:
            raw = handle.read(_MAX_REPORT_BYTES + 1)
    except OSError as error:
        raise InputError(
            f"{role} {path} cannot be read: {error.strerror}.", path=path, found=error.strerror
        ) from None
    if len(raw) > _MAX_REPORT_BYTES:
        raise InputError(
            f"{role} {path} is larger than {_MAX_REPORT_BYTES // 1_000_000} MB: not a receval "
            f"JSON report. {fix}",
            path=path,
            found=len(raw),
            fix=fix,
        )
    longs: list[_LongInteger] = []  # integers beyond what Python converts
    try:  # NaN parses; saved_number names its key
        data = json.loads(raw.decode("utf-8"), parse_int=lambda text: _integer(text, longs))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(
            f"{role} {path} is not JSON ({error}). {fix}", path=path, found=str(error), fix=fix
        ) from None
    except RecursionError:
        reason = "it nests too deeply"
        raise InputError(
            f"{role} {path}: {reason}; it is not a receval JSON report. {fix}",
            path=path,
            found=reason,
            fix=fix,
        ) from None
    if longs:
        key = _key_of(data, longs[0]) or "(top level)"
        found = f"an integer of {longs[0].digits:,} digits"
        raise InputError(
            f"{role} {path}: {key} holds {found}, not a metric's value; it is not a receval "
            f"JSON report. {fix}",
            key=key,
            path=path,
            found=found,
            fix=fix,
        )
    try:
        return SavedReport.model_validate(data)
    except ValidationError as error:
        raise _saved_error(error, path, role) from None


_MAX_REPORT_BYTES = 100_000_000


class _LongInteger:
    """An integer of more digits than Python converts, read as its count of digits."""

    def __init__(self, digits: int) -> None:
        self.digits = digits


def _integer(text: str, longs: list[_LongInteger]) -> int | _LongInteger:
    digits, limit = len(text.lstrip("-")), sys.get_int_max_str_digits()  # 0: no limit
    if limit == 0 or digits <= limit:
        return int(text)
    longs.append(_LongInteger(digits))
    return longs[-1]


def _key_of(data: Any, target: object, key: str = "") -> str | None:
    """The key holding `target` (`models.m.metrics.x[1]`; '' at the top), else None;
    None too where the document nests deeper than this walk can follow."""
    if data is target:
        return key
    if isinstance(data, dict):
        items: Any = ((f"{key}.{k}" if key else str(k), v) for k, v in data.items())
    elif isinstance(data, list):
        items = ((f"{key}[{i}]", v) for i, v in enumerate(data))
    else:
        return None
    for inner, value in items:
        try:
            found = _key_of(value, target, inner)
        except RecursionError:
            return None
        if found is not None:
            return found
    return None
