"""receval's report on the random data compared with pytrec_eval."""

from __future__ import annotations

import random
from typing import Any

import polars as pl
import trec_measures

import receval_cli

TOL = 1e-12


CUTOFFS = (1, 2, 3, 5, 10)


TREC_CONVENTIONS = {
    "tie_break": "item_text_desc",
    "users_without_recommendations": "skip",
    "users_without_relevant": "zero",
    "relevance_threshold": 1,
    "ap_denominator": "relevant",
    "ideal_dcg": "at_k",
    "gain": "linear",
    "discount": "log2",
    "precision_denominator": "k",
}


# trec_eval measure (with its _k suffix) -> receval metric
PAIRS = trec_measures.pairs(CUTOFFS)


MEASURES = trec_measures.measures(CUTOFFS)


Qrels = dict[str, dict[str, int]]


Run = dict[str, dict[str, float]]


def random_data(seed: int, ids: str = "text") -> tuple[Qrels, Run]:
    """`ids`: "text" (d0, d1, ...) or "integer" (numbers written as text, among them 9, 10
    and 100, whose text order is not their number order)."""
    rng = random.Random(seed)
    count = rng.randint(6, 25)
    if ids == "integer":
        docs = [str(d) for d in [9, 10, 100, 7, 56, *rng.sample(range(1, 1000), count)]]
        docs = list(dict.fromkeys(docs))[:count]
    else:
        docs = [f"d{i}" for i in range(count)]
    users = [f"u{i}" for i in range(rng.randint(8, 30))]
    qrels: Qrels = {}
    run: Run = {}
    decimals = rng.choice([1, 2])
    for user in users:
        side = rng.random()
        if side > 0.15:  # in the qrels
            judged = rng.sample(docs, rng.randint(1, min(8, len(docs))))
            grades = [0, 0, 1, 1, 2, 3] if rng.random() > 0.2 else [0]  # some: no relevant
            qrels[user] = {doc: rng.choice(grades) for doc in judged}
        if side < 0.85 or side > 0.97:  # in the run (some users in neither)
            listed = rng.sample(docs, rng.randint(1, min(12, len(docs))))
            run[user] = {doc: round(rng.random(), decimals) for doc in listed}
    # At least one user in both with a relevant document.
    qrels.setdefault("anchor", {})[docs[1]] = 2
    run.setdefault("anchor", {})[docs[1]] = 0.5
    return qrels, run


def receval_report(
    qrels: Qrels, run: Run, metrics: list[str], ids: str = "text", level: int = 1
) -> Any:
    """receval on the same data: item ids as integers when `ids` is "integer"; `level` the
    relevance threshold (trec_eval's -l)."""
    item = pl.Int64 if ids == "integer" else pl.String
    truth = pl.DataFrame(
        [(u, d, g) for u, judged in qrels.items() for d, g in judged.items()],
        schema={"user": pl.String, "item": pl.String, "rel": pl.Int64},
        orient="row",
    ).with_columns(pl.col("item").cast(item))
    predictions = pl.DataFrame(
        [(u, d, s) for u, scored in run.items() for d, s in scored.items()],
        schema={"user": pl.String, "item": pl.String, "score": pl.Float64},
        orient="row",
    ).with_columns(pl.col("item").cast(item))
    return receval_cli.evaluate(
        predictions,
        truth,
        metrics,
        conventions={"preset": "pytrec_eval", "relevance_threshold": level},
        truth_columns={"user": "user", "item": "item", "relevance": "rel"},
    )


SEEDS = range(12)
