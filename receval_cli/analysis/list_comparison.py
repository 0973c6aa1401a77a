"""`comparison.lists`: how alike each model's lists are to the baseline model's, user by
user (the measures and their definitions: metrics/list_similarity.py), averaged over the
users with a list in both predictions files. The lists are ranked as the evaluation ranks
them (evaluation/prepare.py: model_lists), under the config's conventions.
"""

from __future__ import annotations

import math

import polars as pl

from receval_cli.engines.run_plan import RunPlan
from receval_cli.evaluation.prepare import model_lists
from receval_cli.metrics.list_similarity import list_measure, per_user
from receval_cli.results.comparison import ListComparison


def compare_lists(plan: RunPlan) -> list[ListComparison]:
    """Every model but the baseline against the baseline model, on every list measure
    asked (none without a baseline model: the planner refuses a saved report)."""
    measures = [list_measure(text) for text in plan.comparison.lists]
    baseline = plan.baseline
    if not measures or baseline is None:
        return []
    conventions = plan.loaded.config.conventions
    cutoffs = [m.k for m in measures]
    depth = None if None in cutoffs else max(k for k in cutoffs if k is not None)
    if conventions.max_depth is not None:
        depth = conventions.max_depth if depth is None else min(depth, conventions.max_depth)

    def lists(name: str) -> pl.LazyFrame:
        return model_lists(plan.inputs(name).predictions, conventions, depth)

    theirs = lists(baseline).rename({"items": "b"})
    found = []
    for name in plan.models:
        if name == baseline:
            continue
        pairs = lists(name).rename({"items": "a"}).join(theirs, on="user", how="inner")
        for measure in measures:
            values = per_user(pairs, measure).collect().get_column("value").drop_nulls()
            mean = math.fsum(values.to_list()) / values.len() if values.len() else None
            found.append(ListComparison(name, str(measure), mean, values.len()))
    return found
