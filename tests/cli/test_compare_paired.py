"""`receval compare`'s paired tests: saved reports written with
`receval run --with-per-user` hold each model's per-user values, and compare tests every
column against the baseline user by user, with the run's own tests and correction.

Checked against the run itself (two models in one config: the same differences, users and
p-values as its comparison) and against scipy (the paired t-test and the Wilcoxon
signed-rank test on the per-user differences, computed here from the saved values).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import golden_files
import pytest
from cli_helpers import assert_user_error, invoke, run_report, write_config
from golden_files import dataset_config

DATA = golden_files.GOLDEN / "data"
METRICS = ["ndcg@10", "P_5", "recall@5", "entropy@5"]


def saved(tmp_path: Path, name: str, predictions: str, *flags: str) -> Path:
    """The saved JSON report of `predictions`' run (a dataset's name) on ties_int's truth."""
    run_report(tmp_path, dataset_config("ties_int", METRICS, predictions), name, *flags)
    return tmp_path / f"{name}.json"


def compare_json(*args: str | Path) -> dict[str, Any]:
    result = invoke("compare", *args, "--format", "json")
    assert result.exit_code == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


@pytest.mark.parametrize("test", ["t", "wilcoxon"])
def test_compare_tests_as_the_run_compares_its_models(tmp_path: Path, test: str) -> None:
    base = saved(tmp_path, "base", "ties_int", "--with-per-user")
    other = saved(tmp_path, "other", "tiefree_int", "--with-per-user")
    both = write_config(
        tmp_path,
        dataset_config(
            "ties_int",
            METRICS,
            predictions={
                "models": {
                    "base": str(DATA / "ties_int_predictions.csv"),
                    "other": str(DATA / "tiefree_int_predictions.csv"),
                }
            },
            comparison={"test": test},
        ),
        name="both.yaml",
    )
    ran = invoke("run", both, "-q", "--format", "json")
    assert ran.exit_code == 0, ran.stderr
    expected = {r["metric"]: r for r in json.loads(ran.stdout)["comparisons"]["results"]}
    found = compare_json(base, other, "--test", test)
    assert found["tests"]["test"] == test
    results = {r["metric"]: r for r in found["tests"]["results"]}
    assert set(results) == set(METRICS)
    for metric, want in expected.items():
        got = results[metric]
        assert got["model"] == "other"
        for key in ("difference", "users", "p_value", "p_adjusted", "verdict", "low", "high"):
            assert got[key] == want[key], (metric, key)
    assert results["entropy@5"]["verdict"] == "untested"  # one value over all lists


@pytest.mark.parametrize(
    "settings",
    [
        {"comparison": {"level": 0.9}},  # no confidence block
        {"comparison": {"level": 0.9}, "confidence": {"level": 0.8}},
    ],
)
def test_the_differences_intervals_are_at_the_comparisons_level_as_compare_draws_them(
    tmp_path: Path, settings: dict[str, Any]
) -> None:
    """comparison.level sets the level of the differences' intervals in a run as --level
    does in compare: the same intervals, to the last bit; a confidence block's level sets
    only the models' own intervals (without one, they are at the comparison's level)."""
    models = {
        "base": str(DATA / "ties_int_predictions.csv"),
        "other": str(DATA / "tiefree_int_predictions.csv"),
    }
    both = write_config(
        tmp_path,
        dataset_config("ties_int", METRICS, predictions={"models": models}, **settings),
        name="both.yaml",
    )
    ran = invoke("run", both, "-q", "--format", "json")
    assert ran.exit_code == 0, ran.stderr
    report = json.loads(ran.stdout)
    expected = {r["metric"]: r for r in report["comparisons"]["results"]}
    own_level = settings.get("confidence", settings["comparison"])["level"]
    assert report["models"]["other"]["confidence"]["level"] == own_level
    saved_paths = [
        saved(tmp_path, name, Path(path).name.removesuffix("_predictions.csv"), "--with-per-user")
        for name, path in models.items()
    ]
    found = compare_json(*saved_paths, "--level", "0.9")
    results = {r["metric"]: r for r in found["tests"]["results"]}
    tested = [m for m, r in expected.items() if "low" in r and r["low"] is not None]
    assert tested
    for metric in tested:
        assert (results[metric]["low"], results[metric]["high"]) == (
            expected[metric]["low"],
            expected[metric]["high"],
        ), metric


def test_p_values_agree_with_scipy(tmp_path: Path) -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    base = saved(tmp_path, "base", "ties_int", "--with-per-user")
    other = saved(tmp_path, "other", "tiefree_int", "--with-per-user")
    values = {
        name: json.loads(path.read_text())["models"]["model"]["per_user"]
        for name, path in (("base", base), ("other", other))
    }
    for test, scipy_test in (("t", scipy_stats.ttest_rel), ("wilcoxon", scipy_stats.wilcoxon)):
        found = compare_json(base, other, "--test", test, "--correction", "none")
        for result in found["tests"]["results"]:
            metric = result["metric"]
            if result["verdict"] == "untested":
                continue
            pairs = {
                user: [v]
                for user, v in zip(
                    values["base"]["users"], values["base"]["values"][metric], strict=True
                )
            }
            for user, v in zip(
                values["other"]["users"], values["other"]["values"][metric], strict=True
            ):
                pairs.setdefault(user, [None]).append(v)
            paired = [(a, b) for a, *rest in pairs.values() for b in rest[:1]]
            paired = [(a, b) for a, b in paired if a is not None and b is not None]
            assert result["users"] == len(paired)
            theirs = [b for _, b in paired]
            ours = [a for a, _ in paired]
            if test == "wilcoxon":  # scipy drops the zero differences itself
                want = scipy_test([b - a for a, b in paired]).pvalue
            else:
                want = scipy_test(theirs, ours).pvalue
            assert math.isclose(result["p_value"], want, rel_tol=1e-6), (test, metric)


def test_every_format_shows_the_tests_and_a_report_without_values_is_named(
    tmp_path: Path,
) -> None:
    base = saved(tmp_path, "base", "ties_int", "--with-per-user")
    other = saved(tmp_path, "other", "tiefree_int", "--with-per-user")
    plain = saved(tmp_path, "plain", "tiefree_int")
    table = invoke("compare", base, other, plain)
    assert table.exit_code == 0, table.stderr
    text = " ".join(table.stdout.split())
    assert "paired tests against base, user by user (t, holm correction, level 0.95)" in text
    assert "plain: no per-user values in the report, so not tested" in text
    markdown = invoke("compare", base, other, "--format", "markdown")
    assert "### paired tests against base" in markdown.stdout
    assert "| other | `P_5` |" in markdown.stdout
    csv = invoke("compare", base, other, "--format", "csv").stdout.splitlines()
    assert csv[0] == "column,metric,value,low,high,delta,relative_delta"  # appendable as before
    without = compare_json(plain, base)
    assert "tests" not in without
    assert any("no paired tests: the baseline plain's report" in w for w in without["warnings"])


def test_a_damaged_per_user_block_is_refused(tmp_path: Path) -> None:
    base = saved(tmp_path, "base", "ties_int", "--with-per-user")
    data = json.loads(base.read_text())
    data["models"]["model"]["per_user"]["values"]["P_5"].pop()
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps(data))
    result = invoke("compare", base, damaged)
    assert_user_error(result, "damaged.json", "per_user")


@pytest.mark.parametrize("engine", [{"partitions": 3}, {"engine": "streaming", "partitions": 7}])
def test_the_saved_per_user_values_are_the_same_on_a_partitioned_engine(
    tmp_path: Path, engine: dict[str, Any]
) -> None:
    """--with-per-user on partitions and on one pass: the same users and values (the
    partitioned run keeps its rows for them), so compare tests alike."""

    def values(config: dict[str, Any], name: str) -> dict[Any, dict[str, Any]]:
        path = write_config(tmp_path, config, name=name)
        result = invoke("run", path, "-q", "--format", "json", "--with-per-user")
        assert result.exit_code == 0, result.stderr
        block = json.loads(result.stdout)["models"]["model"]["per_user"]
        return {
            user: {metric: column[i] for metric, column in block["values"].items()}
            for i, user in enumerate(block["users"])
        }

    one = values(dataset_config("ties_int", METRICS), "one.yaml")
    found = values(dataset_config("ties_int", METRICS, **engine), "parts.yaml")
    assert found == one
    assert len(one) > 60
