"""Shared random data for the beyond-accuracy goldens (deterministic; no receval code).

    uv run python tests/peers/beyond_data/make_data.py

Writes, next to this script:

  catalog.csv            item, emb, genre, tags: 60 items i00-i59. emb: an 8-dim vector,
                         "|"-separated, 4 decimals, normal(0, 1) (negative values: cosine
                         similarities below 0); i01 = -i00 (cosine distance 2) and i02 =
                         2 * i00 (distance 0). No zero vector: MS Recommenders
                         divides by its norm (ZeroDivisionError).
                         genre: one of g0-g5. tags: 0-3 of t0-t7, "|"-separated, empty for
                         some items (an empty tag set).
  log.csv                user, item: the interactions log. 200 users u000-u199 with 5-25
                         distinct items each, drawn by a Zipf-like popularity from
                         i00-i54; every one of those 55 items is in the log at least once,
                         the 5 "cold" items i55-i59 never are. No repeated (user, item)
                         row (MS Recommenders assumes none).
  equal_predictions.csv  user, item, score: every log user scores 15 items from i00-i49
                         that are not in their log (MS Recommenders refuses a recommended
                         pair that is in the log); every top-k list (k <= 15) has exactly
                         k items, every recommended item is in the log, and i50-i54 (in
                         the log) are never recommended.
  ragged_predictions.csv user, item, score: users u000-u179 and u200-u219 (not in the log)
                         with 1-15 items from all 60 but i40-i44 (cold items included),
                         not in their log; lists of different lengths, some of one item.

Scores are distinct across the whole file (6 decimals): no ties anywhere, so every
library ranks the same way whatever its sort.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

HERE = Path(__file__).parent
SEED = 20261123
N_USERS, N_ITEMS, N_WARM = 200, 60, 55  # items i55-i59 are cold: never in the log
DIMS, GENRES, TAGS = 8, 6, 8


def item(i: int) -> str:
    return f"i{i:02d}"


def user(u: int) -> str:
    return f"u{u:03d}"


def weighted_sample(rng: random.Random, pool: list[int], weights: list[float], n: int) -> list[int]:
    """n distinct elements of pool, each draw proportional to the remaining weights."""
    pool, weights = list(pool), list(weights)
    chosen = []
    for _ in range(min(n, len(pool))):
        j = rng.choices(range(len(pool)), weights=weights)[0]
        chosen.append(pool.pop(j))
        weights.pop(j)
    return chosen


def catalog(rng: random.Random) -> list[tuple[str, str, str, str]]:
    vectors = [[round(rng.gauss(0.0, 1.0), 4) for _ in range(DIMS)] for _ in range(N_ITEMS)]
    vectors[1] = [-x for x in vectors[0]]
    vectors[2] = [2 * x for x in vectors[0]]
    rows = []
    for i, vector in enumerate(vectors):
        assert any(vector), "no zero vector"
        genre = f"g{rng.randrange(GENRES)}"
        tags = sorted(rng.sample([f"t{t}" for t in range(TAGS)], rng.choice([0, 1, 1, 2, 2, 3])))
        rows.append((item(i), "|".join(repr(x + 0.0) for x in vector), genre, "|".join(tags)))
    return rows


def log(rng: random.Random) -> dict[str, set[int]]:
    warm = list(range(N_WARM))
    popularity = [1.0 / (i + 1) ** 0.8 for i in warm]
    known = {
        user(u): set(weighted_sample(rng, warm, popularity, rng.randint(5, 25)))
        for u in range(N_USERS)
    }
    for i in warm:  # every warm item in the log at least once
        holders = [u for u, items in known.items() if i in items]
        if not holders:
            known[user(rng.randrange(N_USERS))].add(i)
    return known


def predictions(
    rng: random.Random, known: dict[str, set[int]], users: list[str], ragged: bool
) -> list[tuple[str, str, float]]:
    never = range(40, 45) if ragged else range(50, 55)  # in the log, never recommended
    pool = [i for i in range(N_ITEMS if ragged else N_WARM) if i not in never]
    popularity = {i: 1.0 / (i + 1) ** 0.5 if i < N_WARM else 0.1 for i in pool}
    scores = iter(rng.sample(range(1, 1_000_000), 15 * len(users)))
    rows = []
    for u in users:
        candidates = [i for i in pool if i not in known.get(u, set())]
        weights = [popularity[i] for i in candidates]
        length = rng.choice([1, 1, 2, 3, *range(1, 16)]) if ragged else 15
        for i in weighted_sample(rng, candidates, weights, length):
            rows.append((u, item(i), next(scores) / 1_000_000))
    return rows


def write(name: str, header: list[str], rows: list[tuple[object, ...]]) -> None:
    with open(HERE / name, "w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def main() -> None:
    rng = random.Random(SEED)
    write("catalog.csv", ["item", "emb", "genre", "tags"], catalog(rng))
    known = log(rng)
    rows = [(u, item(i)) for u, items in known.items() for i in sorted(items)]
    write("log.csv", ["user", "item"], rows)
    everyone = [user(u) for u in range(N_USERS)]
    write(
        "equal_predictions.csv", ["user", "item", "score"], predictions(rng, known, everyone, False)
    )
    some = [user(u) for u in (*range(180), *range(200, 220))]
    write("ragged_predictions.csv", ["user", "item", "score"], predictions(rng, known, some, True))


if __name__ == "__main__":
    main()
