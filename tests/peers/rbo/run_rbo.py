"""Golden RBO values from the `rbo` package itself (Changyao Chen's implementation of
Webber et al. 2010, its rbo_ext: lists of uneven length), for
tests/analysis/test_list_comparison.py.
Does not import receval. Run by make.sh in its own environment."""

from __future__ import annotations

import json
import platform
import random
from importlib.metadata import version
from pathlib import Path

import rbo

random.seed(2026)
cases = []
for _ in range(300):
    a = random.sample(range(1, 41), random.randint(1, 24))
    b = random.sample(range(1, 41), random.randint(1, 24))
    p = random.choice([0.5, 0.8, 0.9, 0.95, 0.98])
    cases.append({"a": a, "b": b, "p": p, "rbo_ext": rbo.RankingSimilarity(a, b).rbo_ext(p=p)})
out = {
    "library": "rbo",
    "version": version("rbo"),
    "python": platform.python_version(),
    "call": "rbo.RankingSimilarity(a, b).rbo_ext(p=p)",
    "cases": cases,
}
path = Path(__file__).parent / "cases.json"
path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
print(path, len(cases))
