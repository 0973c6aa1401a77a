"""Random diversity qrels and a run for the intent-aware measures' golden values (seeded;
does not import receval).

    python tests/peers/ndeval/make_data.py     # writes diversity_truth.csv, diversity_run.csv

The qrels hold (user, intent, item, rel): several intents per user, items relevant to
several intents, grades 0/1/2, users whose items are all graded 0 (no relevant item),
intents whose items are all graded 0 (an intent ndeval does not count). The run holds
(user, item, score): users missing from the run, users only in the run, lists shorter and
longer than 20, heavy score ties (scores rounded to one of four values) and integer ids
whose text and number orders differ (9, 10, 100: ties are broken by the id's text).
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

HERE = Path(__file__).parent
SEED = 52
USERS = 40


def main() -> None:
    rng = random.Random(SEED)
    items = [9, 10, 100, 11, 99, 101, 1000, 2, 20, 200, *range(21, 61)]
    truth: list[tuple[int, int, int, int]] = []
    run: list[tuple[int, int, float]] = []
    for user in range(1, USERS + 1):
        pool = rng.sample(items, rng.randint(3, 25))
        intents = rng.randint(1, 5)
        if user % 10 != 3:  # every tenth user (3, 13, ...) has no qrels row
            for item in pool:
                for intent in rng.sample(range(1, intents + 1), rng.randint(1, intents)):
                    grade = rng.choice((0, 0, 1, 1, 2)) if user % 10 != 7 else 0
                    truth.append((user, intent, item, grade))
        if user % 10 == 5:  # missing from the run
            continue
        listed = rng.sample(items, rng.randint(1, 35))
        listed += rng.sample(pool, min(len(pool), rng.randint(0, 8)))
        for item in dict.fromkeys(listed):
            run.append((user, item, float(rng.choice((0.25, 0.5, 0.75, 1.0)))))
    with open(HERE / "diversity_truth.csv", "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(("user", "intent", "item", "rel"))
        writer.writerows(truth)
    with open(HERE / "diversity_run.csv", "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(("user", "item", "score"))
        writer.writerows(run)
    print(len(truth), "qrels rows,", len(run), "run rows")


if __name__ == "__main__":
    main()
