"""The metrics a config's `fairness:` block adds to the run (config/model.py,
FairnessConfig): rsp, reo and exposure_disparity at k over its item groups, hit_rate@k
(RecList's miss rate is its complement) and the per-user metrics it compares between
the segments, each at k unless written with a cutoff."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from receval_cli.config.model import FairnessConfig
from receval_cli.errors import ConfigError
from receval_cli.metrics import MetricSpec, SpecError, SpecSyntaxError, lookup, resolve
from receval_cli.metrics.fairness_state import GROUPS, ITEM_GROUP_METRICS, POP_RATIO
from receval_cli.metrics.spec import ParamValue


def group_params(fairness: FairnessConfig) -> tuple[tuple[str, ParamValue], ...]:
    """The item-group metrics' parameters, those at their default left out (so the spec
    is the one a config writes without them)."""
    params: list[tuple[str, ParamValue]] = []
    if fairness.groups != GROUPS.default:
        params.append(("groups", fairness.groups))
    elif fairness.pop_ratio != POP_RATIO.default:
        params.append(("pop_ratio", fairness.pop_ratio))
    return tuple(params)


def item_group_specs(fairness: FairnessConfig) -> tuple[MetricSpec, ...]:
    """rsp, reo and exposure_disparity at k over the block's item groups."""
    params = group_params(fairness)
    return tuple(resolve(MetricSpec(name, fairness.k, params)) for name in ITEM_GROUP_METRICS)


def segment_specs(path: Path, fairness: FairnessConfig) -> tuple[MetricSpec, ...]:
    """hit_rate@k and the block's per-user metrics (at k unless written with a cutoff)."""
    found: dict[MetricSpec, None] = {}
    for index, text in enumerate(["hit_rate", *fairness.metrics]):
        key = "fairness.metrics" if index == 0 else f"fairness.metrics[{index - 1}]"
        try:
            spec = MetricSpec.parse(text)
            if spec.k is None and lookup(spec.name).takes_cutoff:
                spec = dataclasses.replace(spec, k=fairness.k)
            spec = resolve(spec)
        except (SpecError, SpecSyntaxError) as error:
            raise ConfigError(f"{path}: {key}: {error}", key=key, path=path, found=text) from None
        if lookup(spec.name).scope != "user":
            fix = "Name a per-user metric (recall, ndcg, hit_rate, ...)."
            raise ConfigError(
                f"{path}: {key}: {spec} is not a per-user metric, so its segments have no "
                f"per-user values to compare. {fix}",
                key=key,
                path=path,
                found=text,
                fix=fix,
            )
        found[spec] = None
    return tuple(found)


def fairness_specs(path: Path, fairness: FairnessConfig | None) -> tuple[MetricSpec, ...]:
    """Every metric the block adds (none without a block)."""
    if fairness is None:
        return ()
    return (*item_group_specs(fairness), *segment_specs(path, fairness))
