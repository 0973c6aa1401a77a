"""The shared random data the peer libraries are run on (deterministic; no receval code).

    uv run python tests/golden/make_data.py

Writes tests/golden/data/{ties,tiefree}_{predictions,truth}.csv. String ids (ranx needs
them). 80 users, 50 items. Lists of 0-15 items (some users have none: they are absent from
the predictions), some users only in the predictions, ground truth of 1-8 items with grades
0-3 (some users have only grade-0 items: no relevant item), lists often shorter than k.
`ties` rounds scores to one decimal (many ties); `tiefree` gives distinct scores per user.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

HERE = Path(__file__).parent / "data"
N_USERS, N_ITEMS = 80, 50


def build(seed: int, ties: bool) -> tuple[list[tuple[str, str, float]], list[tuple[str, str, int]]]:
    rng = random.Random(seed)
    predictions: list[tuple[str, str, float]] = []
    truth: list[tuple[str, str, int]] = []
    for u in range(N_USERS):
        user = f"u{u:02d}"
        items = [f"i{i:02d}" for i in range(N_ITEMS)]
        if u % 10 != 9:  # every tenth user: only in the predictions
            judged = rng.sample(items, rng.randint(1, 8))
            no_relevant = u % 10 == 7
            for item in judged:
                truth.append((user, item, 0 if no_relevant else rng.choice([0, 1, 1, 2, 3])))
        if u % 10 == 8:
            continue  # no recommendation
        listed = rng.sample(items, rng.randint(1, 15))
        if ties:
            scores = [round(rng.random(), 1) for _ in listed]
        else:
            scores = [round(s, 6) for s in rng.sample([x / 997 for x in range(997)], len(listed))]
        predictions.extend((user, item, score) for item, score in zip(listed, scores, strict=True))
    return predictions, truth


def main() -> None:
    HERE.mkdir(exist_ok=True)
    for name, ties in (("ties", True), ("tiefree", False)):
        predictions, truth = build(20261122, ties)
        with open(HERE / f"{name}_predictions.csv", "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["user", "item", "score"])
            writer.writerows(predictions)
        with open(HERE / f"{name}_truth.csv", "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["user", "item", "relevance"])
            writer.writerows(truth)


if __name__ == "__main__":
    main()
