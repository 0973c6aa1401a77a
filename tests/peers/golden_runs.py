"""What the golden scripts of tests/peers/<tool>/ share (their run_*.py, each run by its
make.sh in the peer's own environment, outside the test suite): reading the shared data
(tests/peers/data), the ids' types, the output path from the command line, the versions at
the head of a golden file, and the compact JSON some of them write.

No receval code and nothing beyond the standard library at import (pandas and numpy are
imported by the functions that use them), so any peer's environment can import it. A script
in tests/peers/<tool>/ (or tests/peers/dialects/<tool>/) puts tests/peers/ on its path first:

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from golden_runs import qrels_and_run
"""

from __future__ import annotations

import csv
import json
import math
import platform
import sys
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"


def read_rows(path: Path) -> list[dict[str, str]]:
    """A CSV file's rows, every value as the file's text."""
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def truncated(grade: str) -> int:
    """A grade as C's atol reads it (2.5 -> 2, -1 stays -1): the tools that take integers."""
    return math.trunc(float(grade))


def qrels_and_run(
    dataset: str, grade: Callable[[str], Any] = truncated
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, float]]]:
    """A dataset of tests/peers/data as {user: {item: grade}} with every truth row (the grade
    read by `grade`: truncated to an integer, or float as it is) and {user: {item: score}}
    with the items in file order; ids as the file's text."""
    qrels: dict[str, dict[str, Any]] = {}
    for row in read_rows(DATA / f"{dataset}_truth.csv"):
        qrels.setdefault(row["user"], {})[row["item"]] = grade(row["relevance"])
    run: dict[str, dict[str, float]] = {}
    for row in read_rows(DATA / f"{dataset}_predictions.csv"):
        run.setdefault(row["user"], {})[row["item"]] = float(row["score"])
    return qrels, run


def id_types(dataset: str) -> dict[str, Any]:
    """pandas' dtypes of the id columns: the _int datasets' ids as int64, the others' as str."""
    if dataset.endswith("_int"):
        return {"user": "int64", "item": "int64"}
    return {"user": str, "item": str}


def read_frames(dataset: str) -> tuple[Any, Any]:
    """A dataset's predictions and ground truth as pandas DataFrames, ids typed by
    `id_types`."""
    import pandas as pd

    ids = id_types(dataset)
    predictions = pd.read_csv(DATA / f"{dataset}_predictions.csv", dtype=ids)
    truth = pd.read_csv(DATA / f"{dataset}_truth.csv", dtype=ids)
    return predictions, truth


def output(default: Path) -> Path:
    """The file to write: the command line's first argument, else `default`."""
    return Path(sys.argv[1]) if len(sys.argv) > 1 else default


def versions(library: str, *others: str) -> dict[str, str]:
    """The head of a golden file: the library and its version, Python's, pandas' and
    numpy's, then the other packages' (by their distribution names) in the order given."""
    head = {"library": library, "version": version(library), "python": platform.python_version()}
    return head | {name: version(name) for name in ("pandas", "numpy", *others)}


def write_compact(path: Path, result: dict[str, Any]) -> None:
    """The golden JSON with its head's keys one a line, "users" on one line and one line
    per metric (small, and a diff shows which metric moved); read back to check it."""
    head = {k: v for k, v in result.items() if k not in ("users", "metrics")}
    lines = ["{"]
    lines += [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    lines.append(f'  "users": {json.dumps(result["users"], separators=(",", ":"))},')
    lines.append('  "metrics": {')
    items = list(result["metrics"].items())
    for i, (name, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        lines.append(f"    {json.dumps(name)}: {json.dumps(value, separators=(',', ':'))}{comma}")
    lines += ["  }", "}", ""]
    path.write_text("\n".join(lines))
    json.loads(path.read_text())


def write_metrics(path: Path, head: dict[str, Any], metrics: dict[str, Any]) -> None:
    """head's keys, then per metric {user: value} on one line each."""
    lines = ["{"]
    lines += [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    lines.append('  "metrics": {')
    items = list(metrics.items())
    for n, (name, values) in enumerate(items):
        comma = "," if n < len(items) - 1 else ""
        lines.append(f"    {json.dumps(name)}: {json.dumps(values, separators=(',', ':'))}{comma}")
    lines += ["  }", "}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def compact_sorted(out: dict[str, Any]) -> str:
    """The JSON of `out` with its keys sorted and one line per metric, sorted by name (its
    "metrics" taken out of `out`)."""
    metrics = out.pop("metrics")
    assert isinstance(metrics, dict)
    head = json.dumps(out, sort_keys=True)[:-1]
    lines = [
        f"  {json.dumps(n)}: {json.dumps(v, separators=(',', ':'))}"
        for n, v in sorted(metrics.items())
    ]
    return head + ', "metrics": {\n' + ",\n".join(lines) + "\n}}\n"
