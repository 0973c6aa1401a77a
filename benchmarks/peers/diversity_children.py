"""One peer library's diversity or novelty measure, run by bench_diversity.py --part peers
with that library's own Python (each has a venv of its own: benchmarks/peers/make_*.sh):

    /tmp/bench-jurity/bin/python benchmarks/peers/diversity_children.py jurity intra DATA RESULT

DATA holds the CSV files bench_diversity.py writes (peers_predictions.csv: user, item,
score, rank; peers_catalog.csv: item, category; peers_log.csv: user, item;
peers_truth.csv: user, item). The process reads them, computes the one measure over every
user, and writes {"value", "compute_seconds"} as JSON (reading the CSVs it needs is in the
process's time, not in compute_seconds). No third-party import at module level.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

K = 20


def one_hot(catalog: Any) -> Any:
    """The catalog's category as 0/1 columns, one per category, indexed by item."""
    import pandas as pd

    return pd.get_dummies(catalog.set_index("item")["category"], dtype=float)


def jurity_intra(data: dict[str, Any]) -> float:
    """IntraListDiversity on the one-hot category (cosine distance: 0 same, 1 different)."""
    from jurity.recommenders import IntraListDiversity

    features = one_hot(data["catalog"]).reset_index()
    metric = IntraListDiversity(
        features,
        click_column="score",
        k=K,
        user_id_column="user",
        item_id_column="item",
        user_sample_size=None,
    )
    return float(metric.get_score(None, data["predictions"]))


def recommenders_frames(data: dict[str, Any]) -> tuple[Any, Any]:
    rename = {"user": "userID", "item": "itemID"}
    reco = data["predictions"].rename(columns={**rename, "score": "prediction"})
    log = data["log"].rename(columns=rename)
    return log, reco[["userID", "itemID", "prediction"]]


def recommenders_diversity_features(data: dict[str, Any]) -> float:
    """diversity(item_sim_measure='item_feature_vector') on the one-hot category."""
    import pandas as pd
    from recommenders.evaluation.python_evaluation import diversity

    log, reco = recommenders_frames(data)
    vectors = one_hot(data["catalog"])
    features = pd.DataFrame({"itemID": vectors.index, "features": list(vectors.to_numpy())})
    return float(
        diversity(log, reco, item_feature_df=features, item_sim_measure="item_feature_vector")
    )


def recommenders_diversity_cooccurrence(data: dict[str, Any]) -> float:
    """diversity with its default similarity: co-occurrence in the log (no receval twin)."""
    from recommenders.evaluation.python_evaluation import diversity

    log, reco = recommenders_frames(data)
    return float(diversity(log, reco))


def recommenders_novelty(data: dict[str, Any]) -> float:
    from recommenders.evaluation.python_evaluation import novelty

    log, reco = recommenders_frames(data)
    return float(novelty(log, reco))


def rectools_frames(data: dict[str, Any]) -> tuple[Any, Any]:
    from rectools import Columns

    rename = {"user": Columns.User, "item": Columns.Item}
    reco = data["predictions"].rename(columns={**rename, "rank": Columns.Rank})
    return reco[[Columns.User, Columns.Item, Columns.Rank]], data["log"].rename(columns=rename)


def rectools_intra(data: dict[str, Any]) -> float:
    """IntraListDiversity with the Hamming distance on the category (0 same, 1 different)."""
    from rectools.metrics import IntraListDiversity, PairwiseHammingDistanceCalculator

    reco, _ = rectools_frames(data)
    features = data["catalog"].set_index("item")[["category"]].astype(float)
    metric = IntraListDiversity(
        k=K, distance_calculator=PairwiseHammingDistanceCalculator(features)
    )
    return float(metric.calc(reco))


def rectools_miuf(data: dict[str, Any]) -> float:
    """MeanInvUserFreq: -log2(the item's users / the log's users), mean per user."""
    from rectools.metrics import MeanInvUserFreq

    reco, log = rectools_frames(data)
    return float(MeanInvUserFreq(k=K).calc(reco, log))


def rectools_serendipity(data: dict[str, Any]) -> float:
    """Serendipity (Kotkov et al.: relevance times unexpectedness from popularity ranks;
    no receval twin, timed only)."""
    from rectools import Columns
    from rectools.metrics import Serendipity

    reco, log = rectools_frames(data)
    truth = data["truth"].rename(columns={"user": Columns.User, "item": Columns.Item})
    catalog = data["catalog"]["item"].to_numpy()
    return float(Serendipity(k=K).calc(reco, truth, log, catalog))


class OnDemand(dict[str, Any]):
    """The input tables, each read from its CSV when a measure first asks for it (so a
    process reads only the files its measure needs, outside compute_seconds)."""

    def __init__(self, read: Callable[[str], Any]) -> None:
        super().__init__()
        self.read = read

    def __missing__(self, name: str) -> Any:
        self[name] = self.read(name)
        return self[name]


MEASURES: dict[tuple[str, str], Callable[[dict[str, Any]], float]] = {
    ("jurity", "intra"): jurity_intra,
    ("recommenders", "diversity_features"): recommenders_diversity_features,
    ("recommenders", "diversity_cooccurrence"): recommenders_diversity_cooccurrence,
    ("recommenders", "novelty"): recommenders_novelty,
    ("rectools", "intra"): rectools_intra,
    ("rectools", "miuf"): rectools_miuf,
    ("rectools", "serendipity"): rectools_serendipity,
}

NEEDS = {
    ("jurity", "intra"): ("predictions", "catalog"),
    ("recommenders", "diversity_features"): ("predictions", "catalog", "log"),
    ("recommenders", "diversity_cooccurrence"): ("predictions", "log"),
    ("recommenders", "novelty"): ("predictions", "log"),
    ("rectools", "intra"): ("predictions", "catalog"),
    ("rectools", "miuf"): ("predictions", "log"),
    ("rectools", "serendipity"): ("predictions", "catalog", "log", "truth"),
}


def main() -> int:
    import pandas as pd

    peer, measure, folder, result = sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4]
    data = OnDemand(lambda name: pd.read_csv(folder / f"peers_{name}.csv"))
    measure_function = MEASURES[(peer, measure)]
    for name in NEEDS[(peer, measure)]:
        data[name]
    started = time.perf_counter()
    value = measure_function(data)
    seconds = time.perf_counter() - started
    Path(result).write_text(json.dumps({"value": value, "compute_seconds": seconds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
