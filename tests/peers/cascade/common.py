"""Shared by the golden scripts of this folder (no receval code): read the shared data
(tests/peers/data) with the csv module, and write a compact golden JSON."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

DATA = Path(__file__).parent.parent / "data"


def read(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def truncated(grade: str) -> int:
    """A grade as C's atol reads it (2.5 -> 2, -1 stays -1): the tools take integers."""
    return math.trunc(float(grade))


def qrels_and_run(dataset: str) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """{user: {item: int grade}} with every truth row, {user: {item: score}} in file order."""
    qrels: dict[str, dict[str, int]] = {}
    for row in read(DATA / f"{dataset}_truth.csv"):
        qrels.setdefault(row["user"], {})[row["item"]] = truncated(row["relevance"])
    run: dict[str, dict[str, float]] = {}
    for row in read(DATA / f"{dataset}_predictions.csv"):
        run.setdefault(row["user"], {})[row["item"]] = float(row["score"])
    return qrels, run


def write(path: Path, head: dict, metrics: dict[str, dict[str, float]]) -> None:
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
