"""Every float that reaches a report is finite or null: one pass over the run's report,
before any format renders it (JSON cannot hold NaN or an infinity, and a table showing
`nan` would read as a value). A non-finite value becomes null, and a run warning names it.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from receval_cli.results.report import RunReport


def finite_report(report: RunReport) -> RunReport:
    """The report with every non-finite float (NaN, +-inf) replaced by null, and one run
    warning per value replaced; the report itself when every float is finite."""
    notes: list[str] = []
    cleaned: RunReport = _finite(report, "", notes)
    if not notes:
        return report
    return dataclasses.replace(cleaned, run_warnings=[*cleaned.run_warnings, *notes])


def _finite(value: Any, where: str, notes: list[str]) -> Any:
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        notes.append(
            f"{where} is {value}, not a finite number (it overflows 64-bit floats): reported "
            "as null"
        )
        return None
    if isinstance(value, dict):
        named = ((key, f"{where}.{key}".lstrip("."), item) for key, item in value.items())
        return {key: _finite(item, path, notes) for key, path, item in named}
    if isinstance(value, list | tuple):
        items = [_finite(item, f"{where}[{index}]", notes) for index, item in enumerate(value)]
        return items if isinstance(value, list) else tuple(items)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changed = {}
        for field in dataclasses.fields(value):
            if not field.init:
                continue
            before = getattr(value, field.name)
            after = _finite(before, f"{where}.{field.name}".lstrip("."), notes)
            if after is not before:
                changed[field.name] = after
        return dataclasses.replace(value, **changed) if changed else value
    return value
