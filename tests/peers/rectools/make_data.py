"""Fresh seeded data for the RecTools and torchmetrics golden files (no receval code).

    python tests/peers/rectools/make_data.py

Writes, in tests/peers/rectools/data/, for ids `str` (users u9, items i9, ...) and `int`
(the same numbers as integers; 9, 10, 100 and 1000 order differently as text and as
numbers):

    predictions_{ids}.csv   user,item,score   scores with one decimal: many ties
    truth_{ids}.csv         user,item,relevance   grades 0, 1 or 2 (relevant: >= 1)
    baseline_{ids}.csv      user,item,score   a reference model's lists (ties too)
    catalog_{ids}.csv       item              every item of the three files and more

60 users; by user index u % 8: 0 only in the predictions, 1 only in the truth, 2 judged
with grade 0 only (no relevant item), 3 a long list (16-24 items), 4 items 9, 10, 100 and
1000 all listed with one tied score, one of them relevant, else 1-12 items. Users u % 5
== 4 have no baseline list; the others' baseline holds up to 3 of their own items.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

HERE = Path(__file__).parent / "data"
SPECIAL = [9, 10, 100, 1000]


def main() -> None:
    rng = random.Random(2020)
    users = [*SPECIAL[:3], *rng.sample(range(11, 999), 57)]
    items = [*SPECIAL, *rng.sample(range(11, 5000), 56)]
    catalog = [*items, *rng.sample(range(5001, 6000), 20)]
    predictions, truth, baseline = [], [], []
    for u, user in enumerate(users):
        kind = u % 8
        if kind != 1:
            n = rng.randint(16, 24) if kind == 3 else rng.randint(1, 12)
            listed = rng.sample(items[4:], n)
            if kind == 4:
                listed = [*SPECIAL, *listed[:6]]
            scores = {i: round(rng.random(), 1) for i in listed}
            if kind == 4:
                for i in SPECIAL:
                    scores[i] = 0.5
            predictions += [(user, i, s) for i, s in scores.items()]
        if kind != 0:
            judged = rng.sample(items[4:], rng.randint(1, 8))
            pool = listed if kind != 1 else judged
            judged = list(dict.fromkeys([*rng.sample(pool, min(3, len(pool))), *judged]))
            grades = {i: rng.choice([0, 1, 1, 2]) for i in judged}
            if kind == 2:
                grades = dict.fromkeys(judged, 0)
            if kind == 4:
                grades[rng.choice(SPECIAL)] = rng.choice([1, 2])
            truth += [(user, i, g) for i, g in grades.items()]
        if u % 5 != 4:
            reference = rng.sample(items, rng.randint(1, 15))
            if kind != 1:  # a few of the user's own items, so the lists overlap
                reference = list(
                    dict.fromkeys([*rng.sample(listed, min(3, len(listed))), *reference])
                )
            baseline += [(user, i, round(rng.random(), 1)) for i in reference]
    HERE.mkdir(exist_ok=True)
    for ids in ("str", "int"):

        def user_id(x: int, ids: str = ids) -> str:
            return f"u{x}" if ids == "str" else str(x)

        def item_id(x: int, ids: str = ids) -> str:
            return f"i{x}" if ids == "str" else str(x)

        files = {
            "predictions": (("user", "item", "score"), predictions),
            "truth": (("user", "item", "relevance"), truth),
            "baseline": (("user", "item", "score"), baseline),
        }
        for name, (header, rows) in files.items():
            with open(HERE / f"{name}_{ids}.csv", "w", newline="") as f:
                out = csv.writer(f)
                out.writerow(header)
                out.writerows((user_id(a), item_id(b), c) for a, b, c in rows)
        with open(HERE / f"catalog_{ids}.csv", "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(("item",))
            out.writerows((item_id(i),) for i in catalog)


if __name__ == "__main__":
    main()
