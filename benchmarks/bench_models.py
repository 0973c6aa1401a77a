"""Three models with bootstrap intervals and paired comparisons on 100k users.

    cd /work/main
    UV_PROJECT_ENVIRONMENT=/tmp/bench-venv uv run --group bench python benchmarks/bench_models.py
    ... --users 5000        # a quick run

The data are bench.py's (100k users x 100 items, graded truth; made by it when missing),
plus two more models: the same scores with Gaussian noise added (sd 0.05 and 0.2), so the
three models differ a little and a lot. Every run is `receval run` in a fresh process (wall
clock from spawn to exit, peak RSS of the process), 36 metrics (6 metrics x 6 cutoffs):

    one model                     the plain run, for reference
    one model, --ci               + 95% bootstrap intervals, 1000 resamples
    3 models, intervals + tests   3 evaluations, intervals for each, and 2 x 36 paired
                                  comparisons (bootstrap interval of the difference,
                                  paired t test), Holm over the 72

The last line prints how much the statistics add to the three plain evaluations.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench import CUTOFFS, METRICS, child_env, data_paths, generate, spawn

HERE = Path(__file__).resolve().parent
NOISE = {"noisy": 0.05, "noisier": 0.2}


def make_models(users: int, seed: int) -> dict[str, Path]:
    import numpy as np
    import polars as pl

    data = HERE / "data"
    data.mkdir(exist_ok=True)
    predictions, truth = data_paths(data, users, 100, seed)
    if not predictions.exists() or not truth.exists():
        generate(users, 100, seed, predictions, truth)
    models = {"model": predictions}
    frame = None
    for name, sd in NOISE.items():
        path = predictions.with_name(f"{predictions.stem}_{name}.parquet")
        if not path.exists():
            frame = frame if frame is not None else pl.read_parquet(predictions)
            rng = np.random.default_rng(seed + len(name))
            noise = rng.normal(0.0, sd, frame.height).astype(np.float32)
            noisy = (frame["score"].cast(pl.Float32) + pl.Series(noise)).cast(pl.Float64)
            frame.with_columns(score=noisy).write_parquet(path)
        models[name] = path
    models["truth"] = truth
    return models


def write_config(paths: dict[str, Path], name: str, models: list[str], stats: bool) -> Path:
    predictions: dict[str, Any] = {"columns": {"user": "user_id", "item": "item_id"}}
    predictions["columns"]["score"] = "score"
    if len(models) == 1:
        predictions["path"] = str(paths[models[0]])
    else:
        predictions["models"] = {m: str(paths[m]) for m in models}
    config: dict[str, Any] = {
        "predictions": predictions,
        "ground_truth": {
            "path": str(paths["truth"]),
            "columns": {"user": "user_id", "item": "item_id", "relevance": "rating"},
        },
        "cutoffs": list(CUTOFFS),
        "metrics": list(METRICS),
    }
    if stats:
        config["confidence"] = {"method": "bootstrap", "resamples": 1000, "seed": 1}
        if len(models) > 1:
            config["comparison"] = {"baseline": "model", "test": "t", "correction": "holm"}
    path = HERE / "data" / f"models_{name}.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    return path


def run(config: Path, timeout: float) -> dict[str, Any]:
    result = config.with_suffix(".json")
    receval = Path(sys.executable).with_name("receval")
    command = [str(receval), "run", str(config), "--format", "json", "--output", str(result)]
    outcome = spawn(
        [*command, "--quiet"], config.with_suffix(".log"), timeout, child_env(HERE / "data")
    )
    if "error" not in outcome:
        outcome["report"] = json.loads(result.read_text(encoding="utf-8"))
    return outcome


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    made = (
        spawn(
            [
                sys.executable,
                __file__,
                "--users",
                str(args.users),
                "--seed",
                str(args.seed),
                "--repeat",
                "0",
            ],
            HERE / "data" / "models_generate.log",
            args.timeout,
            child_env(HERE / "data"),
        )
        if args.repeat
        else None
    )
    paths = make_models(args.users, args.seed)
    if not args.repeat:
        return 0
    if made is not None and "error" in made:
        print(f"generating the data failed: {made['error']}")
        return 1
    runs = {
        "one model": write_config(paths, f"one_{args.users}", ["model"], False),
        "one model, --ci": write_config(paths, f"one_ci_{args.users}", ["model"], True),
        "3 models, intervals + tests": write_config(
            paths, f"three_{args.users}", ["model", "noisy", "noisier"], True
        ),
    }
    best: dict[str, dict[str, Any]] = {}
    for _ in range(args.repeat):
        for label, config in runs.items():
            outcome = run(config, args.timeout)
            if "error" in outcome:
                print(f"{label}: {outcome['error']}")
                return 1
            if label not in best or outcome["seconds"] < best[label]["seconds"]:
                rss = max(outcome["rss_mib"], best.get(label, {}).get("rss_mib", 0.0))
                best[label] = {**outcome, "rss_mib": rss}
    print(f"\n{args.users} users x 100 items, 36 metrics, best of {args.repeat}")
    print(f"{'run':32} {'seconds':>8} {'peak MiB':>9}")
    for label, outcome in best.items():
        print(f"{label:32} {outcome['seconds']:>8.2f} {outcome['rss_mib']:>9.0f}")
    three = best["3 models, intervals + tests"]
    results = three["report"]["comparisons"]["results"]
    wins = sum(r["verdict"] == "win" for r in results)
    losses = sum(r["verdict"] == "loss" for r in results)
    print(f"comparisons: {len(results)} ({wins} significant wins, {losses} losses)")
    plain = 3 * best["one model"]["seconds"]
    print(
        f"3 models with intervals and tests take {three['seconds']:.2f} s, "
        f"{three['seconds'] / plain:.2f}x three plain one-model runs ({plain:.2f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
