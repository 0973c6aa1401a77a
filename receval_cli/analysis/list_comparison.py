"""`comparison.lists`: how alike each model's lists are to the baseline model's, user by
user (the measures and their definitions: metrics/list_similarity.py), averaged over the
users with a list in both predictions files. The lists are ranked as the evaluation ranks
them (evaluation/prepare.py: model_lists), under the config's conventions.

Every engine compares them bucket by bucket (evaluation/list_pairs.py): one pass in one
bucket, `partitions: N` (auto's choice of them too) in its N hash buckets of the users,
one after the other, and Spark on its executors (engines/spark_lists.py); the exact sums
make the means the same bits on every engine.
"""

from __future__ import annotations

import dataclasses

from receval_cli import console
from receval_cli.engines.run_plan import RunPlan
from receval_cli.evaluation.list_pairs import ListSum, list_depth, list_sums, user_key
from receval_cli.inputs.readers import Input
from receval_cli.metrics.list_similarity import ListMeasure, list_measure
from receval_cli.results.comparison import ListComparison


def compare_lists(plan: RunPlan) -> list[ListComparison]:
    """Every model but the baseline against the baseline model, on every list measure
    asked (none without a baseline model: the planner refuses a saved report)."""
    measures = [list_measure(text) for text in plan.comparison.lists]
    baseline = plan.baseline
    if not measures or baseline is None:
        return []
    depth = list_depth(measures, plan.loaded.config.conventions)
    others = [name for name in plan.models if name != baseline]
    if plan.engine.spark:
        from receval_cli.engines.spark_lists import spark_list_sums

        sums = spark_list_sums(plan, others, measures, depth)
    else:
        theirs = plan.inputs(baseline).predictions
        sums = {
            name: _bucketed(plan, plan.inputs(name).predictions, theirs, measures, depth)
            for name in others
        }
    return [
        ListComparison(name, str(measure), found.mean(), found.users)
        for name in others
        for measure, found in zip(measures, sums[name], strict=True)
    ]


def _bucketed(
    plan: RunPlan,
    mine: Input,
    theirs: Input,
    measures: list[ListMeasure],
    depth: int | None,
) -> list[ListSum]:
    """One model against the baseline, in the plan's buckets of users (partitions: N),
    one after the other; one bucket in one pass."""
    conventions = plan.loaded.config.conventions
    buckets = plan.engine.partitions
    if buckets == 1:
        return list_sums(mine, theirs, measures, conventions, depth)
    key = user_key(mine.frame, theirs.frame).hash(seed=0) % buckets
    totals = [ListSum()] * len(measures)
    for bucket in range(buckets):
        a, b = (
            dataclasses.replace(source, frame=source.frame.filter(key == bucket))
            for source in (mine, theirs)
        )
        with console.stage(f"partition {bucket + 1}/{buckets}: list comparisons"):
            found = list_sums(a, b, measures, conventions, depth)
        totals = [total + part for total, part in zip(totals, found, strict=True)]
    return totals
