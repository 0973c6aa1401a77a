"""Golden values of napkinXC 0.7.2's propensity-scored measures (napkinxc.metrics:
psprecision_at_k, psndcg_at_k, with normalize False and True), on seeded data written
beside them. Run with a Python that has napkinxc (not receval):

    uv venv -p 3.11 /tmp/nxc && uv pip install -p /tmp/nxc/bin/python napkinxc==0.7.2
    /tmp/nxc/bin/python tests/peers/napkinxc/make.py

Each user's list is ranked here as receval ranks it by default (score descending, then
the item id descending) and handed to napkinXC as a ranking; the propensities are the
catalog's column, napkinXC's inv_ps is 1 / p. Every user given has at least one relevant
item and a list (napkinXC averages over the instances it is given)."""

import json
import random
from pathlib import Path

import numpy as np
from napkinxc.metrics import psndcg_at_k, psprecision_at_k

HERE = Path(__file__).parent
K = 5


def main() -> None:
    rng = random.Random(38)
    items = [9, 10, 100, *range(11, 60)]
    propensity = {item: rng.choice([0.05, 0.1, 0.3, 0.5, 0.9, 1.0]) for item in items}
    predictions, truth = [], []
    for user in [9, 10, 100, *range(200, 240)]:
        listed = rng.sample(items, rng.choice([1, 2, 4, 7, 12]))
        if user % 7 == 3:  # a user with relevant items and no list
            listed = []
        for item in listed:
            predictions.append(
                (user, item, rng.choice([0.1, 0.5, 0.5, 0.9, round(rng.random(), 2)]))
            )
        for item in rng.sample(items, rng.choice([1, 2, 3, 6])):
            truth.append((user, item, 1.0))
    # the users of the ground truth (receval evaluates those), listed or not; a user only
    # in the predictions is not evaluated, so not handed to napkinXC
    predictions += [(1000, item, 0.5) for item in items[:3]]
    users = sorted({u for u, _, _ in truth})
    rankings = []
    for user in users:
        rows = [(i, s) for u, i, s in predictions if u == user]
        rows.sort(key=lambda r: (-r[1], -r[0]))
        rankings.append([i for i, _ in rows])
    labels = [[i for u, i, _ in truth if u == user] for user in users]
    inv_ps = np.ones(max(items) + 1)
    for item, p in propensity.items():
        inv_ps[item] = 1.0 / p
    values = {}
    for normalize in (False, True):
        psp = psprecision_at_k(labels, rankings, inv_ps, k=K, normalize=normalize)
        psndcg = psndcg_at_k(labels, rankings, inv_ps, k=K, normalize=normalize)
        values[f"normalize={normalize}"] = {
            "psp": [float(v) for v in psp],
            "psndcg": [float(v) for v in psndcg],
        }
    document = {
        "napkinxc": "0.7.2",
        "k": K,
        "predictions": predictions,
        "truth": truth,
        "propensity": sorted(propensity.items()),
        "values": values,
    }
    (HERE / "golden.json").write_text(json.dumps(document, indent=1) + "\n")


if __name__ == "__main__":
    main()
