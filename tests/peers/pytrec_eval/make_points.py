"""Write points.json: pytrec_eval's per-query values of the precision-point and set
measures on the seeded data of points_data.py (GOLDEN_SEEDS), for
tests/peers/pytrec_eval/test_pytrec_eval_points.py. Run by make.sh in pytrec_eval's own
environment."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytrec_eval

sys.path.insert(0, str(Path(__file__).parent))
from points_data import GROUPS, random_data

GOLDEN_SEEDS = (100, 101, 102)


def main() -> None:
    found: dict[str, list[dict[str, dict[str, float]]]] = {}
    for seed in GOLDEN_SEEDS:
        qrels, run = random_data(seed)
        found[str(seed)] = [
            pytrec_eval.RelevanceEvaluator(qrels, set(measures)).evaluate(run)
            for measures, _ in GROUPS
        ]
    out = Path(__file__).parent / "points.json"
    out.write_text(json.dumps(found, sort_keys=True, indent=0) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
