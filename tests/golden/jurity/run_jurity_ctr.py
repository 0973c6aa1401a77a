"""Golden CTR values from Jurity itself (run in its own venv; does not import receval).

    /tmp/golden-jurity/bin/python tests/golden/jurity/run_jurity_ctr.py

The log is tests/golden/data/tiefree_truth.csv with click = (grade >= 1) and a propensity
per row drawn from a seeded generator; it is written to tests/golden/data/logged.csv so the
test reads the very same rows. The recommendations are tiefree_predictions.csv, their score
the predicted reward. Jurity's CTR runs with k=None (every recommendation) for matching,
ips and dr, and with no propensity column (Jurity's 1 / number of logged items).
"""

from __future__ import annotations

import importlib.metadata
import json
import platform
import random
from pathlib import Path

import pandas as pd
from jurity.recommenders import CTR

HERE = Path(__file__).parent
DATA = HERE.parent / "data"


def main() -> None:
    truth = pd.read_csv(DATA / "tiefree_truth.csv", dtype={"user": str, "item": str})
    rng = random.Random(7)
    log = pd.DataFrame(
        {
            "user_id": truth["user"],
            "item_id": truth["item"],
            "click": (truth["relevance"] >= 1).astype(int),
            "propensity": [round(rng.uniform(0.05, 1.0), 4) for _ in range(len(truth))],
        }
    )
    log.rename(columns={"user_id": "user", "item_id": "item"}).to_csv(
        DATA / "logged.csv", index=False
    )
    predictions = pd.read_csv(DATA / "tiefree_predictions.csv", dtype={"user": str, "item": str})
    recommendations = pd.DataFrame(
        {
            "user_id": predictions["user"],
            "item_id": predictions["item"],
            "click": predictions["score"],  # Jurity reads the predicted reward from click
        }
    )
    values = {}
    for estimation in ("matching", "ips", "dr"):
        metric = CTR(click_column="click", estimation=estimation)
        values[estimation] = float(metric.get_score(log.copy(), recommendations.copy()))
        without = CTR(click_column="click", estimation=estimation, propensity_column="absent")
        values[f"{estimation}_default_propensity"] = float(
            without.get_score(log.drop(columns=["propensity"]).copy(), recommendations.copy())
        )
    golden = {
        "library": "jurity",
        "version": importlib.metadata.version("jurity"),
        "pandas": pd.__version__,
        "python": platform.python_version(),
        "fed": "log: tiefree truth with click = grade >= 1 and the propensity in logged.csv; "
        "recommendations: tiefree predictions, score as the predicted reward; k=None",
        "ctr": values,
    }
    (HERE / "ctr_tiefree.json").write_text(json.dumps(golden, indent=2) + "\n")


if __name__ == "__main__":
    main()
