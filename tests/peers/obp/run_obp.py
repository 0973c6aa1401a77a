"""Golden off-policy estimates from the Open Bandit Pipeline (obp) itself (run in its own
venv, see make.sh; does not import receval).

    /tmp/golden-obp/bin/python tests/peers/obp/run_obp.py

The log is tests/peers/data/logged.csv (string ids) or logged_int.csv (the same rows,
integer ids); the recommendations are tiefree_predictions.csv (tiefree_int_predictions.csv).
Every recommendation (user, item, score) is one round; a round is "matched" when (user,
item) is a row of the log (click c, propensity p, weight w = 1/p). With a cutoff K only each
user's first K recommendations count (score descending, ties by item descending in the id's
own order: text for the string ids, numbers for the integer ids).

Fed to obp as a two-action bandit (see NOTES.md): action 0 = "the recommended item", action
1 = "anything else", len_list = 1, position 0; matched round: action 0, reward c, pscore p;
unmatched round: action 1, reward 0, pscore 1; the evaluation policy puts probability 1 on
action 0; the reward model gives the score for action 0 and 0 for action 1.

Writes logged.json and logged_int.json next to this file. Every obp estimate is checked
against the mean of its own round rewards and against a hand-written (Jurity-style)
definition to 1e-12; the script stops on any difference.
"""

from __future__ import annotations

import importlib.metadata
import json
import math
import platform
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import obp
from obp.ope import (
    DirectMethod,
    DoublyRobust,
    InverseProbabilityWeighting,
    SelfNormalizedInverseProbabilityWeighting,
    SwitchDoublyRobust,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/peers/: golden_runs
from golden_runs import read_rows

HERE = Path(__file__).parent
DATA = HERE.parent / "data"
CUTOFFS = (None, 1, 3, 5, 10)
CLIP = 5.0
TOL = 1e-12
DATASETS = {
    # output name: (log file, predictions file, dataset name, integer ids?)
    "logged": ("logged.csv", "tiefree_predictions.csv", "tiefree", False),
    "logged_int": ("logged_int.csv", "tiefree_int_predictions.csv", "tiefree_int", True),
}

# name -> (obp constructor, as text)
ESTIMATORS = {
    "ipw": (InverseProbabilityWeighting(), "InverseProbabilityWeighting()"),
    "snipw": (
        SelfNormalizedInverseProbabilityWeighting(),
        "SelfNormalizedInverseProbabilityWeighting()",
    ),
    "dm": (DirectMethod(), "DirectMethod()"),
    "dr": (DoublyRobust(), "DoublyRobust()"),
    "switch-dr_2": (SwitchDoublyRobust(lambda_=2.0), "SwitchDoublyRobust(lambda_=2.0)"),
    "switch-dr_5": (SwitchDoublyRobust(lambda_=5.0), "SwitchDoublyRobust(lambda_=5.0)"),
    "switch-dr_1000": (
        SwitchDoublyRobust(lambda_=1000.0),
        "SwitchDoublyRobust(lambda_=1000.0)",
    ),
    "ipw_clip_5": (
        InverseProbabilityWeighting(lambda_=CLIP),
        "InverseProbabilityWeighting(lambda_=5.0)",
    ),
    "dr_clip_5": (DoublyRobust(lambda_=CLIP), "DoublyRobust(lambda_=5.0)"),
}


def rounds(name: str, k: int | None) -> list[tuple[float, bool, int, float]]:
    """One (score, matched, click, propensity) per recommendation (per top-k one), in the
    predictions file's order; an unmatched round gets click 0 and propensity 1."""
    log_file, pred_file, _, integer = DATASETS[name]
    ident = int if integer else str
    log = {}
    for row in read_rows(DATA / log_file):
        key = (ident(row["user"]), ident(row["item"]))
        if key in log:
            raise SystemExit(f"{log_file}: duplicate row {key}")
        log[key] = (int(row["click"]), float(row["propensity"]))
    predictions = [
        (ident(row["user"]), ident(row["item"]), float(row["score"]))
        for row in read_rows(DATA / pred_file)
    ]
    if len({(user, item) for user, item, _ in predictions}) != len(predictions):
        raise SystemExit(f"{pred_file}: duplicate (user, item)")
    per_user = defaultdict(list)
    for user, item, score in predictions:
        per_user[user].append((score, item))
    keep = set()
    for user, recs in per_user.items():
        # score descending, ties by item descending (the id's own order)
        ranked = sorted(recs, reverse=True)
        keep.update((user, item) for _, item in (ranked if k is None else ranked[:k]))
    out = []
    # rounds in the predictions file's order (the same for both id types)
    for user, item, score in predictions:
        if (user, item) not in keep:
            continue
        hit = log.get((user, item))
        if hit is None:
            out.append((score, False, 0, 1.0))
        else:
            out.append((score, True, hit[0], hit[1]))
    return out


def fed(data: list[tuple[float, bool, int, float]]) -> dict[str, np.ndarray]:
    n = len(data)
    matched = np.array([m for _, m, _, _ in data])
    action = np.where(matched, 0, 1).astype(int)
    reward = np.array([float(c) if m else 0.0 for _, m, c, _ in data])
    pscore = np.array([p if m else 1.0 for _, m, _, p in data])
    action_dist = np.zeros((n, 2, 1))
    action_dist[:, 0, 0] = 1.0
    q_hat = np.zeros((n, 2, 1))
    q_hat[:, 0, 0] = [s for s, _, _, _ in data]
    return {
        "reward": reward,
        "action": action,
        "pscore": pscore,
        "action_dist": action_dist,
        "estimated_rewards_by_reg_model": q_hat,
        "position": np.zeros(n, dtype=int),
    }


def hand(data: list[tuple[float, bool, int, float]]) -> dict[str, tuple[str, list[float]]]:
    """Jurity-style definitions, in plain Python: name -> (obp estimator, round terms).
    The estimate is the mean of the terms (snips: see below)."""
    terms: dict[str, tuple[str, list[float]]] = {
        "ips": ("ipw", [c / p if m else 0.0 for _, m, c, p in data]),
        "dm": ("dm", [s for s, _, _, _ in data]),
        "dr": ("dr", [s + ((c - s) / p if m else 0.0) for s, m, c, p in data]),
        "ips_clip_5": ("ipw_clip_5", [c * min(1 / p, CLIP) if m else 0.0 for _, m, c, p in data]),
        "dr_clip_5": (
            "dr_clip_5",
            [s + ((c - s) * min(1 / p, CLIP) if m else 0.0) for s, m, c, p in data],
        ),
    }
    for tau in (2, 5, 1000):
        terms[f"switch-dr_{tau}"] = (
            f"switch-dr_{tau}",
            [s + ((c - s) / p if m and 1 / p <= tau else 0.0) for s, m, c, p in data],
        )
    # snips = sum [matched] c w / sum [matched] w; terms scaled so their mean is it
    mean_w = sum(1 / p if m else 0.0 for _, m, _, p in data) / len(data)
    terms["snips"] = ("snipw", [c / p / mean_w if m else 0.0 for _, m, c, p in data])
    return terms


def snips_direct(data: list[tuple[float, bool, int, float]]) -> float:
    num = sum(c / p for _, m, c, p in data if m)
    den = sum(1 / p for _, m, _, p in data if m)
    return num / den


def variance_of_mean(terms: np.ndarray) -> float:
    return float(np.var(terms, ddof=1) / terms.shape[0])


def at(name: str, k: int | None) -> tuple[dict, dict, dict]:
    data = rounds(name, k)
    n = len(data)
    inputs = fed(data)
    suffix = "" if k is None else f"@{k}"
    estimates = {}
    round_rewards = {}
    for key, (estimator, _) in ESTIMATORS.items():
        value = float(estimator.estimate_policy_value(**inputs))
        rr = np.asarray(estimator._estimate_round_rewards(**inputs), dtype=float)
        if rr.shape != (n,) or not math.isclose(rr.mean(), value, rel_tol=0, abs_tol=TOL):
            raise SystemExit(f"{name} {key}{suffix}: round rewards mean {rr.mean()} != {value}")
        round_rewards[key] = rr
        estimates[key + suffix] = {"value": value, "variance": variance_of_mean(rr), "n": n}
    checks = {}
    for key, (obp_key, terms) in hand(data).items():
        terms_ = np.array(terms)
        value = float(np.mean(terms_))
        if key == "snips":
            direct = snips_direct(data)
            if not math.isclose(direct, value, rel_tol=0, abs_tol=TOL):
                raise SystemExit(f"{name} snips{suffix}: {direct} != {value}")
            value = direct
        obp_value = estimates[obp_key + suffix]["value"]
        diff_value = abs(value - obp_value)
        diff_rounds = float(np.max(np.abs(terms_ - round_rewards[obp_key])))
        if diff_value > TOL or diff_rounds > TOL:
            raise SystemExit(
                f"{name} {key}{suffix}: hand {value} vs obp {obp_value} "
                f"(rounds differ by {diff_rounds})"
            )
        checks[key + suffix] = {
            "value": value,
            "variance": variance_of_mean(terms_),
            "n": n,
            "obp_estimator": obp_key + suffix,
            "abs_diff_value": diff_value,
            "max_abs_diff_round": diff_rounds,
        }
    counts = {
        "matched" + suffix: int(sum(m for _, m, _, _ in data)),
        "switched_2" + suffix: int(sum(1 for _, m, _, p in data if m and 1 / p > 2)),
        "switched_5" + suffix: int(sum(1 for _, m, _, p in data if m and 1 / p > 5)),
        "switched_1000" + suffix: int(sum(1 for _, m, _, p in data if m and 1 / p > 1000)),
    }
    return estimates, checks, counts


def main() -> None:
    for name, (log_file, pred_file, dataset, integer) in DATASETS.items():
        estimates: dict = {}
        checks: dict = {}
        counts: dict = {}
        for k in CUTOFFS:
            e, c, m = at(name, k)
            estimates.update(e)
            checks.update(c)
            counts.update(m)
        golden = {
            "library": "obp",
            "version": obp.__version__,
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scikit-learn": importlib.metadata.version("scikit-learn"),
            "torch": importlib.metadata.version("torch"),
            "dataset": dataset,
            "log": log_file,
            "predictions": pred_file,
            "ids": "integers" if integer else "strings",
            "fed": (
                "Every recommendation (user, item, score) of the predictions file is one round "
                "(with a cutoff K only each user's first K by score descending, ties by item "
                "descending in the id's own order); a round is matched when (user, item) is a "
                "row of the log (click c, propensity p). obp gets n rounds with n_actions=2 "
                "(action 0 = the recommended item, 1 = anything else), len_list=1, position 0: "
                "matched round action=0, reward=c, pscore=p; unmatched round action=1, "
                "reward=0, pscore=1; action_dist (n,2,1) = 1 on action 0 for every round (so "
                "the importance weight is 1/p when matched, 0 otherwise); "
                "estimated_rewards_by_reg_model (n,2,1) = the score for action 0, 0 for "
                "action 1. value = estimator.estimate_policy_value(reward, action, pscore, "
                "action_dist, estimated_rewards_by_reg_model, position); variance = "
                "var(estimator._estimate_round_rewards(same), ddof=1) / n (the variance of "
                "the mean; for snipw obp's round rewards are r*w/mean(w), whose mean is the "
                "estimate, and the variance ignores the randomness of the normaliser)."
            ),
            "cutoffs": list(CUTOFFS),
            "estimators": {key: text for key, (_, text) in ESTIMATORS.items()},
            "estimates": estimates,
            "hand_checks": checks,
            "counts": counts,
        }
        out = HERE / f"{name}.json"
        out.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
        print("wrote", out.name, len(estimates), "estimates; every hand definition within", TOL)
        jurity_cross_check(name, dataset, estimates)


def jurity_cross_check(name: str, dataset: str, estimates: dict) -> None:
    """Informational: Jurity's CTR ips / dr goldens (tests/peers/jurity) for the same data."""
    plain = HERE.parent / "jurity" / f"ctr_{dataset}.json"
    at_k = HERE.parent / "jurity" / f"ctr_k_{dataset}.json"
    if not (plain.exists() and at_k.exists()):
        return
    tables = {None: json.loads(plain.read_text())["ctr"]}
    for k, values in json.loads(at_k.read_text())["ctr"].items():
        tables[int(k.split("=")[1])] = values
    worst = 0.0
    for k, values in tables.items():
        suffix = "" if k is None else f"@{k}"
        for jurity_key, obp_key in (("ips", "ipw"), ("dr", "dr")):
            worst = max(worst, abs(values[jurity_key] - estimates[obp_key + suffix]["value"]))
    print(f"  {name}: max |Jurity CTR ips/dr - obp ipw/dr| = {worst:.3g}", file=sys.stderr)


if __name__ == "__main__":
    main()
