"""ndeval's golden values (tests/peers/ndeval/ndeval_golden.json, its make.sh) and their
inputs, for tests/metrics/test_intent_aware.py (the per-user computation) and
tests/peers/test_ndeval_peers.py (through `receval run`)."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

PEER = Path(__file__).parents[1] / "peers" / "ndeval"
GOLDEN: dict[str, Any] = json.loads((PEER / "ndeval_golden.json").read_text(encoding="utf-8"))[
    "measures"
]
_NAME = re.compile(r"(?P<name>\w+)(?:\((?P<params>[^)]*)\))?(?:@(?P<k>\d+))?")
# ir_measures' measure -> receval's metric
RECEVAL = {
    "alpha_nDCG": "alpha_ndcg",
    "ERR_IA": "err_ia",
    "nERR_IA": "nerr_ia",
    "NRBP": "nrbp",
    "nNRBP": "nnrbp",
    "P_IA": "p_ia",
    "StRecall": "s_recall",
}


def parsed(measure: str) -> tuple[str, int | None, dict[str, str]]:
    """ir_measures' printed name (its defaults left out) as (receval's metric, cutoff,
    parameters): alpha_nDCG(alpha=0.3)@5 is ("alpha_ndcg", 5, {"alpha": "0.3"})."""
    match = _NAME.fullmatch(measure)
    assert match is not None, measure
    params = dict(p.split("=") for p in (match["params"] or "").split(",") if p)
    k = None if match["k"] is None else int(match["k"])
    return RECEVAL[match["name"]], k, params


def peer_inputs() -> tuple[dict[str, list[str]], dict[str, list[tuple[str, str]]]]:
    """Each user's list ranked as pyndeval ranks it (score descending, then the id's text
    ascending), and each user of the qrels' relevant (item, intent) pairs (rel >= 1); ids
    as text."""
    scored: dict[str, list[tuple[float, str]]] = {}
    with open(PEER / "diversity_run.csv", encoding="utf-8") as file:
        for row in csv.DictReader(file):
            scored.setdefault(row["user"], []).append((-float(row["score"]), row["item"]))
    lists = {user: [item for _, item in sorted(rows)] for user, rows in scored.items()}
    judged: dict[str, list[tuple[str, str]]] = {}
    with open(PEER / "diversity_truth.csv", encoding="utf-8") as file:
        for row in csv.DictReader(file):
            pairs = judged.setdefault(row["user"], [])
            if int(row["rel"]) >= 1:
                pairs.append((row["item"], row["intent"]))
    return lists, judged


def intent_counts() -> dict[str, int]:
    """Each user of the qrels' number of intents with a relevant item (ndeval's N)."""
    return {user: len({j for _, j in pairs}) for user, pairs in peer_inputs()[1].items()}
