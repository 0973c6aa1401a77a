"""The shared random data every peer library is run on (deterministic; no receval code).

    uv run python tests/peers/make_data.py

One generator for the preset and reference tests. It writes, in
tests/peers/data/:

    {ties,tiefree}_{predictions,truth}.csv         string ids: users u9, u10, u100, ...,
                                                   items i9, i10, i100, ...
    {ties,tiefree}_int_{predictions,truth}.csv     the very same rows with integer ids:
                                                   users 9, 10, 100, ..., items 9, 10, 100
    logged.csv, logged_int.csv                     the CTR log (from tiefree truth, below)

Ids: the same numbers in both variants, among them 9, 10, 100 and 1000, whose text order
("9" > "1000" > "100" > "10") is not their number order (1000 > 100 > 10 > 9); the string
ids are those numbers behind a letter, so "i9" > "i100" > "i10" as text. A tie broken by
item id therefore breaks differently on the two variants, and differently as text and as
numbers.

80 users, 60 items, users in file order (not sorted). By user number u (0-79), u % 10:

    9  only in the predictions (no truth row)
    8  only in the truth (no recommendation)
    7  no relevant item: judged with grades 0, -1 and 0.5 only (all below 1)
    6  a long list: 16-24 items (longer than 15, and than every cutoff 1, 3, 5, 10; the
       tools also run k = 30, beyond every list)
    5  items 9, 10, 100 and 1000 all listed, with one tied score in `ties` (float32-only
       ties in `tiefree`), one of them relevant
    4  a float32-only tie: two items whose scores differ as float64 but are equal as
       float32 (s and s + 1e-9; trec_eval keeps float scores)
    else  1-12 items (often shorter than k)

Truth: 1-8 judged items per user, grades drawn from 0, 0, 1, 1, 2, 2.5, 3, 4, -1 (grades
0-4, a fractional and a negative grade; a relevant item is one with grade >= 1 under every
preset); users u % 10 == 5 get one of the four items above with a grade of 1-4.

`ties` rounds scores to one decimal: many ties, also in the long lists (ranx's documented
limit: more than 15 items with tied scores). `tiefree` gives distinct scores per user as
float64 (six decimals, from x / 997), except the float32-only ties, which are distinct as
float64 too.

logged.csv (and logged_int.csv, the same rows with integer ids): the tiefree truth with
click = 1 if grade >= 1 else 0 and a propensity per row, round(uniform(0.05, 1), 4) from
random.Random(7), for the off-policy CTR tests (tests/metrics/test_ctr.py, Jurity's CTR).
"""

from __future__ import annotations

import csv
import math
import random
import struct
from pathlib import Path

HERE = Path(__file__).parent / "data"
SEED = 20261122
N_USERS, N_ITEMS = 80, 60
SPECIAL = (9, 10, 100, 1000)  # text order differs from number order
GRADES = (0, 0, 1, 1, 2, 2.5, 3, 4, -1)
NOT_RELEVANT = (0, 0, -1, 0.5)

Row = tuple[int, int, float]


def f32(x: float) -> float:
    return float(struct.unpack("f", struct.pack("f", x))[0])


def numbers(rng: random.Random, count: int) -> list[int]:
    """`count` distinct ids: 9, 10, 100, 1000 and neighbours of every length, shuffled."""
    head = [*SPECIAL, 99, 11, 101, 2, 20, 200, 1001, 999]
    rest = [n for n in rng.sample(range(1, 5000), 3 * count) if n not in head]
    ids = (head + rest)[:count]
    rng.shuffle(ids)
    return ids


def float32_group(score: float, size: int) -> list[float]:
    """`size` scores, the first `score`, distinct as float64 and all equal as float32."""
    assert score > 0
    base = f32(score)
    _, exponent = math.frexp(base)
    eighth = 2.0 ** (exponent - 24) / 8  # an eighth of a float32 step at `base`
    group = [score, *(base + j * eighth for j in range(1, size))]
    assert len(set(group)) == size, group
    assert {f32(g) for g in group} == {base}, group
    return group


def build(ties: bool) -> tuple[list[Row], list[Row]]:
    """Predictions (user, item, score) and truth (user, item, grade), integer ids."""
    ids = random.Random(SEED)
    users, items = numbers(ids, N_USERS), numbers(ids, N_ITEMS)
    rng = random.Random(SEED + 1)
    predictions: list[Row] = []
    truth: list[Row] = []
    for u, user in enumerate(users):
        kind = u % 10
        special = rng.choice(SPECIAL)
        if kind != 9:
            judged = rng.sample(items, rng.randint(1, 8))
            if kind == 5 and not set(judged) & set(SPECIAL):
                judged[0] = special
            for item in judged:
                if kind == 7:
                    grade: float = rng.choice(NOT_RELEVANT)
                elif kind == 5 and item in SPECIAL:
                    grade = rng.choice([1, 2, 3, 4]) if item == special else rng.choice([0, -1])
                else:
                    grade = rng.choice(GRADES)
                truth.append((user, item, grade))
        if kind == 8:
            continue  # no recommendation
        length = rng.randint(16, 24) if kind == 6 else rng.randint(1, 12)
        if kind == 5:
            others = [i for i in items if i not in SPECIAL]
            listed = list(SPECIAL) + rng.sample(others, rng.randint(0, 6))
            rng.shuffle(listed)
        else:
            listed = rng.sample(items, length)
        if ties:
            scores = [round(rng.random(), 1) for _ in listed]
        else:
            scores = [
                round(s, 6) for s in rng.sample([x / 997 for x in range(1, 997)], len(listed))
            ]
        if kind == 5:  # the four special items tie: exactly in `ties`, as float32 in `tiefree`
            at = [n for n, item in enumerate(listed) if item in SPECIAL]
            shared = scores[at[0]] or 0.5
            group = [shared] * 4 if ties else float32_group(shared, 4)
            for n, score in zip(at, group, strict=True):
                scores[n] = score
        if kind == 4 and len(listed) >= 2:  # a float32-only tie
            at = 0 if scores[0] else 1
            scores[at], scores[1 - at] = float32_group(scores[at] or 0.5, 2)
        if not ties:
            assert len(set(scores)) == len(scores), (user, scores)
        predictions.extend((user, item, score) for item, score in zip(listed, scores, strict=True))
    return predictions, truth


def as_text(rows: list[Row]) -> list[tuple[str, str, float]]:
    return [(f"u{user}", f"i{item}", value) for user, item, value in rows]


def write(path: Path, header: list[str], rows: list[tuple[object, ...]]) -> None:
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def logged(truth: list[Row]) -> list[tuple[int, int, int, float]]:
    """The CTR log: click = grade >= 1, a seeded propensity per row."""
    rng = random.Random(7)
    return [
        (user, item, int(grade >= 1), round(rng.uniform(0.05, 1.0), 4))
        for user, item, grade in truth
    ]


def main() -> None:
    HERE.mkdir(exist_ok=True)
    for name, ties in (("ties", True), ("tiefree", False)):
        predictions, truth = build(ties)
        for suffix, convert in (("", as_text), ("_int", list)):
            write(
                HERE / f"{name}{suffix}_predictions.csv",
                ["user", "item", "score"],
                convert(predictions),
            )
            write(HERE / f"{name}{suffix}_truth.csv", ["user", "item", "relevance"], convert(truth))
        if not ties:
            log = logged(truth)
            text = [(f"u{u}", f"i{i}", c, p) for u, i, c, p in log]
            header = ["user", "item", "click", "propensity"]
            write(HERE / "logged.csv", header, text)
            write(HERE / "logged_int.csv", header, log)


if __name__ == "__main__":
    main()
