"""Whether two reports measure the same thing: the conventions they were computed under,
and the ground truth they were computed on (its content hash: evaluation/fingerprints.py).

`receval compare` and `run --baseline-report` refuse reports whose conventions differ
(exit 2) unless --allow-different-conventions is given, and warn when their ground truths
differ: a delta across either is not a difference between models.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from receval_cli.config.conventions import Conventions
from receval_cli.errors import InputError

ALLOW_FLAG = "--allow-different-conventions"
_DEFAULTS = Conventions().model_dump()


def conventions_differ(sides: Mapping[str, dict[str, Any] | None]) -> dict[str, dict[str, Any]]:
    """Each conventions setting that is not the same on every side, by side. A side whose
    conventions are unknown (None) is left out; a setting a side lacks (a report written
    before that convention existed) counts as its default, which it then had. The preset
    is a name for the settings, which are compared themselves."""
    known = {name: {**_DEFAULTS, **found} for name, found in sides.items() if found is not None}
    keys = dict.fromkeys(k for found in known.values() for k in found if k != "preset")
    differ: dict[str, dict[str, Any]] = {}
    for key in keys:
        values = {name: found.get(key) for name, found in known.items()}
        if len({json.dumps(v, sort_keys=True) for v in values.values()}) > 1:
            differ[key] = values
    return differ


def describe_differences(differ: dict[str, dict[str, Any]]) -> str:
    """ "relevance_threshold: run=4.0, saved=1.0; ..." for a message."""
    return "; ".join(
        f"{key}: " + ", ".join(f"{name}={_setting(v)}" for name, v in values.items())
        for key, values in differ.items()
    )


def _setting(value: Any) -> str:
    return "none" if value is None else str(value)


def conventions_error(differ: dict[str, dict[str, Any]], what: str, path: Path) -> InputError:
    """The exit-2 error for comparing under different conventions (`what`: the reports)."""
    fix = (
        "Evaluate them under the same conventions, or pass "
        f"{ALLOW_FLAG} to compare them anyway (the deltas then mix the conventions' effect "
        "with the models')."
    )
    return InputError(
        f"{what} were computed under different conventions ({describe_differences(differ)}), "
        f"so their values are not comparable. {fix}",
        key=ALLOW_FLAG,
        path=path,
        found=differ,
        fix=fix,
    )


def truths_warning(sides: Mapping[str, dict[str, Any] | None]) -> str | None:
    """A warning when the sides' ground truths differ (fingerprints.truth_identity of each;
    sides without a hash, or with hashes of another method, cannot be told apart and are
    left out)."""
    known = {name: found for name, found in sides.items() if found is not None}
    methods = {found.get("hash_method") for found in known.values()}
    if len(known) < 2 or len(methods) > 1:
        return None
    if len({found["content_hash"] for found in known.values()}) == 1:
        return None
    shown = "; ".join(
        f"{name}: {found.get('path')} ({found.get('rows')} rows, {found.get('users')} users, "
        f"hash {found['content_hash']})"
        for name, found in known.items()
    )
    return (
        f"the ground truths differ ({shown}): the deltas compare results on different test "
        "data, not only different models."
    )
