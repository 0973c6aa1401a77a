"""The seeded data and the pytrec_eval measures of
tests/peers/pytrec_eval/test_pytrec_eval_points.py, in
plain Python (no receval, no polars), so that make_points.py can run where only
pytrec_eval is installed.

Integer item ids whose text and number orders differ (9, 10, 100; receval reads them as
integers, trec_eval as text), scores rounded to one or two decimals (ties), grades 0..3,
lists of 1 to 40 items (shorter and longer than the cutoffs), users only in the run or
only in the qrels, users with no relevant item.
"""

from __future__ import annotations

import math
import random

LEVELS = [i / 10 for i in range(11)]
CUTOFFS = (1, 3, 5, 10, 20)
MULTIPLIERS = (0.2, 0.5, 1.0, 1.5, 2.0, 5.0)
BETWEEN_TENTHS = (0.05, 0.33, 0.45)

# one pytrec_eval evaluator per group: its measures, and result name -> receval spec
GROUPS: list[tuple[list[str], dict[str, str]]] = [
    (
        [
            "set_map",
            "utility",
            "set_relative_P",
            "set_P",
            "set_recall",
            "set_F",
            "11pt_avg",
            "iprec_at_recall",
            "relative_P." + ",".join(map(str, CUTOFFS)),
            "Rprec_mult." + ",".join(map(str, MULTIPLIERS)),
        ],
        {
            "set_map": "set_map",
            "utility": "utility",
            "set_relative_P": "relative_precision",
            "set_P": "set_precision",
            "set_recall": "set_recall",
            "set_F": "set_f1",
            "11pt_avg": "iprec_avg(rounding=up)",
            **{f"relative_P_{k}": f"relative_precision@{k}" for k in CUTOFFS},
            **{f"Rprec_mult_{m:.2f}": f"rprec_mult(multiplier={m!r})" for m in MULTIPLIERS},
            **{
                f"iprec_at_recall_{level:.2f}": f"iprec_at_recall(level={level!r},rounding=up)"
                for level in LEVELS
            },
        },
    ),
    (
        ["set_F.0.5", "11pt_avg.0.25,0.5,0.75"],
        {
            "set_F": f"set_fbeta(beta={math.sqrt(0.5)!r})",
            "11pt_avg": "iprec_avg(levels=0.25;0.5;0.75,rounding=up)",
        },
    ),
    (
        ["iprec_at_recall." + ",".join(map(str, BETWEEN_TENTHS))],
        {
            f"iprec_at_recall_{level:.2f}": f"iprec_at_recall(level={level!r},rounding=up)"
            for level in BETWEEN_TENTHS
        },
    ),
    (["gm_map"], {"gm_map": "map(mean=geometric)"}),  # per query: log(max(AP, 1e-5))
]

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]


def random_data(seed: int) -> tuple[Qrels, Run]:
    rng = random.Random(seed)
    count = rng.randint(12, 60)
    docs = [str(d) for d in [9, 10, 100, 7, 56, *rng.sample(range(1, 1000), count)]]
    docs = list(dict.fromkeys(docs))[:count]
    qrels: Qrels = {}
    run: Run = {}
    decimals = rng.choice([1, 2])
    for user in (f"u{i}" for i in range(rng.randint(8, 30))):
        side = rng.random()
        if side > 0.15:  # in the qrels
            judged = rng.sample(docs, rng.randint(1, min(15, len(docs))))
            grades = [0, 0, 1, 1, 2, 3] if rng.random() > 0.2 else [0]  # some: no relevant
            qrels[user] = {doc: rng.choice(grades) for doc in judged}
        if side < 0.85 or side > 0.97:  # in the run (some users in neither)
            listed = rng.sample(docs, rng.randint(1, min(40, len(docs))))
            run[user] = {doc: round(rng.random(), decimals) for doc in listed}
    qrels.setdefault("anchor", {})[docs[1]] = 2
    run.setdefault("anchor", {})[docs[1]] = 0.5
    return qrels, run
