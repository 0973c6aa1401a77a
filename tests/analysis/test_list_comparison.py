"""comparison.lists: how alike each model's lists are to the baseline model's,
user by user: jaccard@k, rbo@k(p) and kendall_tau@k (metrics/list_similarity.py).

Checked against independent references: the `rbo` package's rbo_ext on 300 pairs of
uneven lists (tests/peers/rbo/, made by that package in its own environment), scipy's
Kendall tau, sets for Jaccard; by hand on small cases; and end to end on the shared data
(integer ids, tied scores, users in one file only, lists longer than 15), the lists ranked
here from the files as receval ranks them (score, then item descending).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import golden_files
import polars as pl
import pytest
from cli_helpers import assert_user_error, invoke, write_config

from receval_cli.metrics.list_similarity import list_measure, per_user

DATA = golden_files.GOLDEN / "data"


def values(measure: str, pairs: list[tuple[list[Any], list[Any]]]) -> list[float | None]:
    items = [x for a, b in pairs for x in (*a, *b)]
    kind = pl.String if any(isinstance(x, str) for x in items) else pl.Int64
    frame = pl.DataFrame(
        {"user": list(range(len(pairs))), "a": [a for a, _ in pairs], "b": [b for _, b in pairs]},
        schema={"user": pl.Int64, "a": pl.List(kind), "b": pl.List(kind)},
    )
    found = per_user(frame.lazy(), list_measure(measure)).collect().sort("user")
    return found.get_column("value").to_list()


def test_by_hand() -> None:
    """A = [a, b, c], B = [a, c, b], p = 0.9: X1 = 1, X2 = 1, X3 = 3, so RBO = (0.1/0.9)
    (0.9 + 0.5 * 0.81 + 0.729) + 0.729; identical lists 1, reversed ones tau -1."""
    abc, acb, cba = list("abc"), list("acb"), list("cba")
    (rbo,) = values("rbo(p=0.9)", [(abc, acb)])
    assert rbo == pytest.approx((0.1 / 0.9) * (0.9 + 0.5 * 0.81 + 0.729) + 0.729, abs=1e-15)
    assert values("rbo(p=0.9)", [(abc, abc)]) == [pytest.approx(1.0, abs=1e-15)]
    assert values("kendall_tau", [(abc, cba), (abc, abc), (abc, acb)]) == [-1.0, 1.0, 1 / 3]
    assert values("jaccard@2", [(abc, acb), (abc, list("xyz"))]) == [1 / 3, 0.0]
    assert values("kendall_tau@2", [(abc, list("axy"))]) == [None]  # one common item
    assert values("rbo", [(abc, [])]) == [0.0]  # nothing in common with an empty list
    assert values("jaccard", [([], [])]) == [None]


def test_rbo_is_the_rbo_package_s() -> None:
    golden = json.loads((golden_files.GOLDEN / "rbo" / "cases.json").read_text("utf-8"))
    assert golden["library"] == "rbo"
    by_p: dict[float, list[dict[str, Any]]] = {}
    for case in golden["cases"]:
        by_p.setdefault(case["p"], []).append(case)
    compared = 0
    for p, cases in by_p.items():
        found = values(f"rbo(p={p})", [(c["a"], c["b"]) for c in cases])
        for case, value in zip(cases, found, strict=True):
            assert value == pytest.approx(case["rbo_ext"], abs=1e-12), case
            compared += 1
    assert compared == 300


def test_kendall_tau_is_scipy_s() -> None:
    stats = pytest.importorskip("scipy.stats")
    import random

    rng = random.Random(5)
    pairs = [
        (rng.sample(range(30), rng.randint(0, 20)), rng.sample(range(30), rng.randint(0, 20)))
        for _ in range(200)
    ]
    for measure in ("kendall_tau", "kendall_tau@8"):
        k = list_measure(measure).k
        for (a, b), value in zip(pairs, values(measure, pairs), strict=True):
            a, b = (a, b) if k is None else (a[:k], b[:k])
            common = [x for x in a if x in b]
            if len(common) < 2:
                assert value is None
                continue
            want = stats.kendalltau([a.index(x) for x in common], [b.index(x) for x in common])
            assert value == pytest.approx(want.statistic, abs=1e-12)


def ranked(path: Path) -> dict[int, list[int]]:
    """Each user's list as receval ranks it: score descending, then item descending."""
    rows = pl.read_csv(path).sort(["user", "score", "item"], descending=[False, True, True])
    return {u: g.get_column("item").to_list() for (u,), g in rows.group_by("user")}


def two_models(tmp_path: Path, lists: list[str], **extra: Any) -> Path:
    config = golden_files.two_models(["ndcg@10"], comparison={"lists": lists}, **extra)
    return write_config(tmp_path, config)


def test_a_run_compares_the_models_lists(tmp_path: Path) -> None:
    asked = ["jaccard@10", "rbo@10(p=0.9)", "kendall_tau", "rbo(p=0.8)"]
    result = invoke("run", two_models(tmp_path, asked), "-q", "--format", "json")
    assert result.exit_code == 0, result.stderr
    found = {c["measure"]: c for c in json.loads(result.stdout)["comparisons"]["lists"]}
    assert list(found) == asked
    base = ranked(DATA / "ties_int_predictions.csv")
    other = ranked(DATA / "tiefree_int_predictions.csv")
    users = sorted(set(base) & set(other))
    assert any(len(base[u]) > 15 for u in users)
    for measure in asked:
        k = list_measure(measure).k
        pairs = [(other[u], base[u]) if k is None else (other[u][:k], base[u][:k]) for u in users]
        kept = [v for v in values(measure, pairs) if v is not None]
        assert found[measure]["users"] == len(kept)
        assert found[measure]["model"] == "other"
        assert math.isclose(found[measure]["value"], math.fsum(kept) / len(kept), abs_tol=1e-12)


def test_every_format_shows_them(tmp_path: Path) -> None:
    config = two_models(tmp_path, ["jaccard@10"])
    for fmt, shown in (
        ("table", "lists against the baseline's, user by user"),
        ("markdown", "| other | `jaccard@10` |"),
        ("html", "Lists against the baseline&#x27;s, user by user"),
        ("json", '"lists": ['),
    ):
        result = invoke("run", config, *(["-q"] if fmt != "table" else []), "--format", fmt)
        assert result.exit_code == 0, (fmt, result.stderr)
        assert shown in " ".join(result.stdout.split()), fmt


def test_what_cannot_be_compared_is_refused(tmp_path: Path) -> None:
    assert_user_error(
        invoke("run", two_models(tmp_path, ["cosine@10"])),
        "comparison.lists: 'cosine@10' is not a list measure",
    )
    assert_user_error(
        invoke(
            "run",
            two_models(tmp_path, ["rbo@10(p=0.9)"], conventions={"tie_break": "expected"}),
        ),
        "comparison.lists",
        "tie_break expected",
    )
    saved = tmp_path / "saved.json"
    one = write_config(
        tmp_path,
        {
            "predictions": {"path": str(DATA / "ties_int_predictions.csv")},
            "ground_truth": {"path": str(DATA / "ties_int_truth.csv")},
            "metrics": ["ndcg@10"],
        },
        name="one.yaml",
    )
    assert invoke("run", one, "-q", "-o", saved).exit_code == 0
    other = write_config(
        tmp_path,
        {
            "predictions": {"path": str(DATA / "tiefree_int_predictions.csv")},
            "ground_truth": {"path": str(DATA / "ties_int_truth.csv")},
            "metrics": ["ndcg@10"],
            "comparison": {"lists": ["jaccard@10"]},
        },
        name="other.yaml",
    )
    result = invoke("run", other, "--baseline-report", saved)
    assert_user_error(result, "comparison.lists", "holds metric values, not lists")


def test_a_run_of_one_model_refuses_them(tmp_path: Path) -> None:
    """With one model (and no saved report, which is refused too) there are no lists to
    compare: refused, by validate as by run, as a gate against the baseline is there."""
    one = write_config(
        tmp_path,
        {
            "predictions": {"path": str(DATA / "ties_int_predictions.csv")},
            "ground_truth": {"path": str(DATA / "ties_int_truth.csv")},
            "metrics": ["ndcg@10"],
            "comparison": {"lists": ["jaccard@10"]},
        },
    )
    for command in ("run", "validate"):
        assert_user_error(
            invoke(command, one), "comparison.lists", "one model", "predictions.models"
        )
