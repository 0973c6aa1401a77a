"""Shared random data for RePlay's and MS Recommenders' beyond-accuracy and probability
metrics (deterministic; no receval code).

    uv run python tests/peers/peer_metrics_data/make_data.py

Writes, next to this script (integer ids throughout: users and items include 9, 10, 100
and 1000, whose text order "9" > "1000" > "100" > "10" is not their number order):

  log.csv          user, item: the interactions log, no repeated (user, item) row (MS
                   Recommenders assumes none). 70 users, a Zipf-like popularity over 50
                   warm items; 8 cold items are never in the log. Users u % 10 == 3 are
                   not in the log (only predictions and truth).
  catalog.csv      item, category: every item (warm and cold), categories c0-c5.
  predictions.csv  user, item, score: users u % 10 != 8 (u % 10 == 8: truth only) plus 6
                   users in no other file; lists of 1-12 items, 16-24 for u % 10 == 6
                   (longer than 15 and than every cutoff but 30), a few users of one item;
                   about a third of each list drawn from the user's own log (RePlay's
                   Novelty counts them), cold items too. Scores rounded to one decimal:
                   many ties, items 9, 10, 100, 1000 tied in every list of u % 10 == 5.
  fresh_predictions.csv  the same users and lengths with none of the user's log items
                   (MS Recommenders' diversity and serendipity refuse a recommended pair
                   that is in train_df).
  baseline.csv     user, item, score: a baseline list of 3-15 items for most users
                   (u % 10 == 1 has none), one-decimal scores (ties).
  truth.csv        user, item, relevance: 1-8 judged items per user, grades 0-4; users
                   u % 10 == 9 have none (predictions only).
  probabilities.csv  user, item, score: a predicted probability in [0, 1] per prediction
                   row of predictions.csv (0 and 1 exactly among them: log loss clips them).
  clicks.csv       user, item, relevance: 0/1 labels for most of those rows and some
                   others (pairs on either side only).
  ratings.csv      user, item, relevance: an actual rating 1-5 (halves too) for most
                   prediction rows and some others, for explained variance; the
                   predictions' scores (0-1, one decimal) are the predicted ratings.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

HERE = Path(__file__).parent
SEED = 20261126
SPECIAL = (9, 10, 100, 1000)
N_USERS, N_WARM, N_COLD = 70, 50, 8


def ids(rng: random.Random, count: int) -> list[int]:
    head = [*SPECIAL, 99, 11, 101, 2, 20, 200, 1001, 999]
    rest = [n for n in rng.sample(range(1, 5000), 3 * count) if n not in head]
    out = (head + rest)[:count]
    rng.shuffle(out)
    return out


def write(name: str, header: list[str], rows: list[tuple[object, ...]]) -> None:
    with open(HERE / name, "w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def weighted(rng: random.Random, pool: list[int], weights: list[float], n: int) -> list[int]:
    pool, weights = list(pool), list(weights)
    chosen = []
    for _ in range(min(n, len(pool))):
        j = rng.choices(range(len(pool)), weights=weights)[0]
        chosen.append(pool.pop(j))
        weights.pop(j)
    return chosen


def main() -> None:
    rng = random.Random(SEED)
    users = ids(rng, N_USERS + 6)
    extra_users, users = users[N_USERS:], users[:N_USERS]
    items = ids(random.Random(SEED + 1), N_WARM + N_COLD)
    # the special items are warm (in the log), so their ties matter for every metric
    warm = [i for i in items if i in SPECIAL] + [i for i in items if i not in SPECIAL]
    warm, cold = warm[:N_WARM], warm[N_WARM:]
    popularity = [1.0 / (n + 1) ** 0.7 for n in range(N_WARM)]

    log: dict[int, list[int]] = {}
    for u, user in enumerate(users):
        if u % 10 != 3:
            log[user] = weighted(rng, warm, popularity, rng.randint(2, 15))
    write("log.csv", ["user", "item"], [(u, i) for u, known in log.items() for i in known])
    write(
        "catalog.csv",
        ["item", "category"],
        [(i, f"c{rng.randrange(6)}") for i in sorted(warm + cold)],
    )

    predictions, fresh, baseline, truth = [], [], [], []
    probabilities, clicks, ratings = [], [], []
    everyone = [(u, user) for u, user in enumerate(users)] + [(9, user) for user in extra_users]
    for u, user in everyone:
        known = log.get(user, [])
        if u % 10 == 8:
            length = 0
        elif u % 10 == 6:
            length = rng.randint(16, 24)
        else:
            length = rng.choice([1, 1, 2, *range(1, 13)])
        own = rng.sample(known, min(len(known), length // 3)) if known else []
        others = [i for i in warm + cold if i not in own]
        listed = own + rng.sample(others, length - len(own))
        if u % 10 == 5:
            listed = list(SPECIAL) + [i for i in listed if i not in SPECIAL][: max(0, length - 4)]
        rng.shuffle(listed)
        scores = [round(rng.random(), 1) for _ in listed]
        if u % 10 == 5:
            shared = round(rng.random(), 1)
            scores = [shared if i in SPECIAL else s for i, s in zip(listed, scores, strict=True)]
        predictions += [(user, i, s) for i, s in zip(listed, scores, strict=True)]
        unknown = [i for i in warm + cold if i not in known]
        fresh_list = rng.sample(unknown, min(len(unknown), len(listed)))
        fresh += [(user, i, round(rng.random(), 1)) for i in fresh_list]
        if u % 10 != 1 and u < N_USERS:
            base = rng.sample(warm, rng.randint(3, 15))
            baseline += [(user, i, round(rng.random(), 1)) for i in base]
        if u % 10 != 9:
            judged = rng.sample(listed, min(len(listed), rng.randint(0, 4)))
            judged += rng.sample([i for i in warm + cold if i not in judged], rng.randint(1, 4))
            truth += [(user, i, rng.choice([0, 0, 1, 1, 2, 3, 4])) for i in judged]
        for i in listed:
            p = rng.choice([0.0, 1.0, round(rng.random(), 3), round(rng.random(), 3)])
            probabilities.append((user, i, p))
            if rng.random() < 0.8:
                clicks.append((user, i, int(rng.random() < 0.3 + 0.5 * p)))
            if rng.random() < 0.8:
                ratings.append((user, i, rng.choice([1, 1.5, 2, 3, 3.5, 4, 5])))
        for i in rng.sample(warm, 2):  # rated or clicked, never predicted
            if i not in listed:
                clicks.append((user, i, rng.randint(0, 1)))
                ratings.append((user, i, rng.choice([1, 2, 3, 4, 5])))
    write("predictions.csv", ["user", "item", "score"], predictions)
    write("fresh_predictions.csv", ["user", "item", "score"], fresh)
    write("baseline.csv", ["user", "item", "score"], baseline)
    write("truth.csv", ["user", "item", "relevance"], truth)
    write("probabilities.csv", ["user", "item", "score"], probabilities)
    write("clicks.csv", ["user", "item", "relevance"], clicks)
    write("ratings.csv", ["user", "item", "relevance"], ratings)


if __name__ == "__main__":
    main()
