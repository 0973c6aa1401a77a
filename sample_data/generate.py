"""Generate the bundled sample data (deterministic: the same files on every machine).

    uv run python sample_data/generate.py

200 users (string ids u001...) and 120 items (integer ids). Each user has a hidden taste;
the ground truth holds the items a user rated (grades 1-5, relevant when >= 4 under the
quickstart config), and the "model" scores 30 items per user with a noisy view of that taste.
A few users get no recommendation, and a few recommendations go to users with no truth.
rating_predictions.csv holds a rating model's predicted ratings (configs/ratings.yaml);
logged_clicks.csv and click_predictions.csv a click log and a new policy (configs/ctr.yaml).
catalog.jsonl (every item: title, genre, tags, an 8-number embedding) and interactions.csv
(a training log that favours popular items) feed the beyond-accuracy metrics
(configs/beyond.yaml). popular_predictions.csv is a most-popular baseline model
(configs/compare.yaml). users.csv gives each user a country and whether they are new
(configs/segments.yaml). diversity_qrels.txt and diversity_run.txt are TREC diversity qrels
(`topic intent doc rel`: 12 ambiguous queries of 2-4 intents each) and a run of 10
documents per query (configs/diversity.yaml).
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import polars as pl

HERE = Path(__file__).parent
N_USERS, N_ITEMS, LIST_LENGTH = 200, 120, 30


def build() -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = random.Random(20261122)
    truth_rows: list[tuple[str, int, int]] = []
    pred_rows: list[tuple[str, int, float]] = []
    for u in range(1, N_USERS + 11):
        user = f"u{u:03d}"
        taste = {item: rng.gauss(0, 1) for item in range(1, N_ITEMS + 1)}
        if u <= N_USERS:
            # People mostly rate what they like: a noisy top of their taste.
            seen = {item: t + rng.gauss(0, 1.0) for item, t in taste.items()}
            rated = sorted(seen, key=lambda i: -seen[i])[: rng.randint(5, 20)]
            for item in rated:
                grade = min(5, max(1, round(3 + 1.2 * taste[item] + rng.gauss(0, 0.5))))
                truth_rows.append((user, item, grade))
        if u % 40 == 0:
            continue  # users without recommendations
        noisy = {item: round(t + rng.gauss(0, 0.35), 4) for item, t in taste.items()}
        top = sorted(noisy, key=lambda i: (-noisy[i], i))[:LIST_LENGTH]
        pred_rows.extend((user, item, noisy[item]) for item in top)
    truth = pl.DataFrame(truth_rows, schema=["user_id", "item_id", "rating"], orient="row")
    predictions = pl.DataFrame(pred_rows, schema=["user_id", "item_id", "score"], orient="row")
    return predictions, truth


def build_ratings(truth: pl.DataFrame) -> pl.DataFrame:
    """A rating model's predictions: a noisy predicted rating for every rated (user, item),
    and for a few items each user did not rate (which rating metrics ignore by default)."""
    rng = random.Random(1122)
    rows: list[tuple[str, int, float]] = []
    for user, item, rating in truth.iter_rows():
        rows.append((user, item, round(min(5.0, max(1.0, rating + rng.gauss(0, 0.8))), 2)))
    rated = set(zip(truth["user_id"], truth["item_id"], strict=True))
    for user in sorted(set(truth["user_id"])):
        for item in rng.sample(range(1, N_ITEMS + 1), 3):
            if (user, item) not in rated:
                rows.append((user, item, round(rng.uniform(1, 5), 2)))
    return pl.DataFrame(rows, schema=["user_id", "item_id", "predicted_rating"], orient="row")


def build_clicks() -> tuple[pl.DataFrame, pl.DataFrame]:
    """A click log and a new policy's recommendations (configs/ctr.yaml).

    The logging policy showed each user 6 of the 120 items uniformly at random (propensity
    6/120 = 0.05); a shown item was clicked with probability sigmoid(1.5 taste - 1.5). The
    new policy recommends each user's top 10 items by a noisy view of the taste, with that
    view's click probability as its predicted reward.
    """
    rng = random.Random(2026)
    log: list[tuple[str, int, int, float]] = []
    recommendations: list[tuple[str, int, float]] = []
    for u in range(1, N_USERS + 1):
        user = f"u{u:03d}"
        taste = {item: rng.gauss(0, 1) for item in range(1, N_ITEMS + 1)}
        for item in rng.sample(range(1, N_ITEMS + 1), 6):
            click = int(rng.random() < _sigmoid(1.5 * taste[item] - 1.5))
            log.append((user, item, click, 6 / N_ITEMS))
        view = {item: t + rng.gauss(0, 0.5) for item, t in taste.items()}
        for item in sorted(view, key=lambda i: (-view[i], i))[:10]:
            recommendations.append((user, item, round(_sigmoid(1.5 * view[item] - 1.5), 4)))
    return (
        pl.DataFrame(log, schema=["user_id", "item_id", "click", "propensity"], orient="row"),
        pl.DataFrame(recommendations, schema=["user_id", "item_id", "predicted_ctr"], orient="row"),
    )


GENRES = ("drama", "comedy", "thriller", "documentary", "animation")
TAGS = ("classic", "indie", "award", "family", "dark", "light", "long", "short")


def build_catalog() -> pl.DataFrame:
    """Every item with a genre, 0-3 tags, and an embedding near its genre's centre."""
    rng = random.Random(3)
    centres = {g: [rng.gauss(0, 1) for _ in range(8)] for g in GENRES}
    rows = []
    for item in range(1, N_ITEMS + 1):
        genre = GENRES[item % len(GENRES)]
        rows.append(
            {
                "item_id": item,
                "title": f"Title {item}",
                "genre": genre,
                "tags": sorted(rng.sample(TAGS, rng.randint(0, 3))),
                "embedding": [round(c + rng.gauss(0, 0.6), 3) for c in centres[genre]],
            }
        )
    return pl.DataFrame(rows)


def build_interactions() -> pl.DataFrame:
    """A training log: each user interacted with 5-25 distinct items, popular items more
    often (item popularity falls off as a power law)."""
    rng = random.Random(4)
    weights = [1 / (rank**0.9) for rank in range(1, N_ITEMS + 1)]
    order = list(range(1, N_ITEMS + 1))
    rng.shuffle(order)  # which item is how popular
    rows: list[tuple[str, int, int]] = []
    for u in range(1, N_USERS + 1):
        seen: set[int] = set()
        for _ in range(rng.randint(5, 25)):
            seen.add(rng.choices(order, weights)[0])
        rows.extend(
            (f"u{u:03d}", item, 1_700_000_000 + rng.randrange(10**7)) for item in sorted(seen)
        )
    return pl.DataFrame(rows, schema=["user_id", "item_id", "timestamp"], orient="row")


def build_popular_model(predictions: pl.DataFrame, interactions: pl.DataFrame) -> pl.DataFrame:
    """A baseline model (configs/compare.yaml): every user gets the 30 items most often in
    the training log, scored by their count (ties: lower item id first)."""
    counts = (
        interactions.group_by("item_id").len().sort(["len", "item_id"], descending=[True, False])
    )
    top = counts.head(LIST_LENGTH).with_columns(
        score=(pl.col("len") - pl.int_range(pl.len()) / 1000).cast(pl.Float64)
    )
    users = predictions.select("user_id").unique().sort("user_id")
    return users.join(top.select("item_id", "score"), how="cross")


def build_users() -> pl.DataFrame:
    """Each user's attributes: a country (DE, FR, US; US the most common) and whether the
    user is new (about one in four)."""
    rng = random.Random(2411)
    rows = [
        (f"u{u:03d}", rng.choices(["DE", "FR", "US"], [3, 2, 5])[0], rng.random() < 0.25)
        for u in range(1, N_USERS + 11)
    ]
    return pl.DataFrame(rows, schema=["user_id", "country", "new_user"], orient="row")


def build_diversity() -> tuple[str, str]:
    """TREC diversity qrels and a run, as text: each query has 2-4 intents and 30 judged
    documents, a document relevant to one or two of them (grades 0-2); the run lists 10
    documents per query, favouring the first intent (a system that misses the others)."""
    rng = random.Random(5252)
    qrels, run = [], []
    for topic in range(101, 113):
        intents = rng.randint(2, 4)
        docs = [f"d{topic}-{n:02d}" for n in range(1, 31)]
        weight = {}
        for doc in docs:
            for intent in rng.sample(range(1, intents + 1), rng.choice([1, 1, 2])):
                grade = rng.choice([0, 1, 1, 2])
                qrels.append(f"{topic} {intent} {doc} {grade}")
                weight[doc] = weight.get(doc, 0.0) + grade * (2.0 if intent == 1 else 0.5)
        ranked = sorted(docs, key=lambda d: weight.get(d, 0.0) + rng.random(), reverse=True)
        for rank, doc in enumerate(ranked[:10], start=1):
            run.append(f"{topic} Q0 {doc} {rank} {round(20 - rank * 1.5, 2)} sample")
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def main() -> None:
    predictions, truth = build()
    build_ratings(truth).write_csv(HERE / "rating_predictions.csv")
    log, recommendations = build_clicks()
    log.write_csv(HERE / "logged_clicks.csv")
    recommendations.write_csv(HERE / "click_predictions.csv")
    predictions.write_csv(HERE / "predictions.csv")
    interactions = build_interactions()
    interactions.write_csv(HERE / "interactions.csv")
    build_popular_model(predictions, interactions).write_csv(HERE / "popular_predictions.csv")
    with open(HERE / "catalog.jsonl", "w", encoding="utf-8") as handle:
        for row in build_catalog().iter_rows(named=True):
            handle.write(json.dumps(row) + "\n")
    truth.write_parquet(HERE / "ground_truth.parquet")
    build_users().write_csv(HERE / "users.csv")
    qrels, run = build_diversity()
    (HERE / "diversity_qrels.txt").write_text(qrels, encoding="utf-8")
    (HERE / "diversity_run.txt").write_text(run, encoding="utf-8")
    lists = predictions.sort(["user_id", "score", "item_id"], descending=[False, True, True])
    lists = lists.group_by("user_id", maintain_order=True).agg(pl.col("item_id").alias("items"))
    with open(HERE / "predictions_lists.jsonl", "w", encoding="utf-8") as handle:
        for row in lists.iter_rows(named=True):
            handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
