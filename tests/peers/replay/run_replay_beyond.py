"""RePlay's beyond-accuracy metrics on tests/peers/peer_metrics_data (does not import
receval), for tests/peers/test_recommender_metrics.py.

    bash tests/peers/replay/make.sh    # builds /tmp/golden-replay and runs this script too

Writes tests/peers/replay/beyond.json: Surprisal, Novelty, Unexpectedness and
CategoricalDiversity at k = 1, 3, 5, 10, 30 (30: beyond every list), each with mode=Mean()
(the default) and mode=PerUser(), all ids integers (pl.Int64). Every call passes polars
DataFrames (RePlay's polars path); the pandas path is run too and must give the same means.

How the data are fed, and which users each metric evaluates (read from replay/metrics/):
  Surprisal(recommendations, train)    train = log.csv; the users of the recommendations
  Novelty(recommendations, train)      train = log.csv; the users of train (a user with no
                                       recommendation scores 1.0: `if not train or not
                                       pred: return 1.0`); also run with train cut to the
                                       users that have recommendations ("Novelty[with
                                       recommendations]": the same per-user values, and the
                                       mean over those users only)
  Unexpectedness(recommendations, base_recommendations)  baseline.csv; the users of the
                                       recommendations (no baseline list: 0.0)
  CategoricalDiversity(recommendations with each item's category from catalog.csv)
                                       the users of the recommendations. Its polars path
                                       sorts with sort_by(score).over(user), which does not
                                       keep tied rows in any fixed order, so the scores it
                                       is given are -rank, the rank breaking ties by item
                                       descending as RePlay's other metrics do
                                       (sort([score, item], descending=True)).
Recommendations are predictions.csv (scores with one decimal: many ties; items 9, 10,
100, 1000 tied).
"""

from __future__ import annotations

import json
import math
import platform
from importlib.metadata import version
from pathlib import Path

import polars as pl
from replay.metrics import (
    CategoricalDiversity,
    Mean,
    Novelty,
    PerUser,
    Surprisal,
    Unexpectedness,
)

HERE = Path(__file__).parent
DATA = HERE.parent / "peer_metrics_data"
CUTOFFS = [1, 3, 5, 10, 30]
COLUMNS = {"query_column": "user", "item_column": "item", "rating_column": "score"}
IDS = {"user": pl.Int64, "item": pl.Int64}


def read(name: str, **extra: type[pl.DataType]) -> pl.DataFrame:
    return pl.read_csv(DATA / name, schema={**IDS, **extra})


def run_metric(make, *frames: pl.DataFrame, key: str | None = None) -> dict:
    """Mean and per-user values of one metric class at every cutoff."""
    means = make(Mean())(*frames)
    by_user = make(PerUser())(*frames)
    pandas = make(Mean())(*(f.to_pandas() for f in frames))
    out = {}
    for k in CUTOFFS:
        name = next(m for m in means if m.endswith(f"@{k}"))
        assert math.isclose(pandas[name], means[name], rel_tol=0, abs_tol=1e-12), name
        per_user = next(v for m, v in by_user.items() if m.endswith(f"@{k}"))
        users = sorted(per_user)
        label = f"{key or name.split('@')[0]}@{k}"
        out[label] = {
            "mean": float(means[name]),
            "users": [int(u) for u in users],
            "per_user": [float(per_user[u]) for u in users],
        }
    return out


def main() -> None:
    predictions = read("predictions.csv", score=pl.Float64)
    log = read("log.csv")
    baseline = read("baseline.csv", score=pl.Float64)
    catalog = pl.read_csv(DATA / "catalog.csv", schema={"item": pl.Int64, "category": pl.String})

    def columns(cls, **more):
        return lambda mode: cls(CUTOFFS, mode=mode, **COLUMNS, **more)

    metrics = {}
    metrics |= run_metric(columns(Surprisal), predictions, log)
    metrics |= run_metric(columns(Novelty), predictions, log)
    with_recs = log.filter(pl.col("user").is_in(predictions["user"].implode()))
    metrics |= run_metric(
        columns(Novelty), predictions, with_recs, key="Novelty[with recommendations]"
    )
    metrics |= run_metric(columns(Unexpectedness), predictions, baseline)
    ranked = predictions.sort(["score", "item"], descending=True).with_columns(
        (-pl.int_range(1, pl.len() + 1).over("user")).cast(pl.Float64).alias("score")
    )
    categorised = ranked.join(catalog, on="item", how="left").select("user", "category", "score")
    assert categorised["category"].null_count() == 0
    metrics |= run_metric(
        lambda mode: CategoricalDiversity(
            CUTOFFS,
            query_column="user",
            category_column="category",
            rating_column="score",
            mode=mode,
        ),
        categorised,
    )
    result = {
        "library": "replay-rec",
        "version": version("replay-rec"),
        "python": platform.python_version(),
        "pandas": version("pandas"),
        "polars": version("polars"),
        "numpy": version("numpy"),
        "data": "tests/peers/peer_metrics_data (make_data.py), ids as pl.Int64",
        "calls": {
            "Surprisal": "Surprisal(topk, query_column='user', item_column='item', "
            "rating_column='score'[, mode=PerUser()])(predictions, log)",
            "Novelty": "Novelty(...)(predictions, log)",
            "Novelty[with recommendations]": "Novelty(...)(predictions, log of the users "
            "with a recommendation)",
            "Unexpectedness": "Unexpectedness(...)(predictions, baseline)",
            "CategoricalDiversity": "CategoricalDiversity(topk, query_column='user', "
            "category_column='category', rating_column='score')(predictions ranked by "
            "[score, item] descending, score = -rank, with the item's category)",
        },
        "cutoffs": CUTOFFS,
        "metrics": metrics,
    }
    out = HERE / "beyond.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
