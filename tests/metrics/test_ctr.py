"""Off-policy CTR: hand-computed cases, Jurity's own numbers, log validation, unbiasedness."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import golden_files
import polars as pl
import pytest
from cli_helpers import assert_user_error, invoke, write, write_config

import receval_cli

GOLDEN = Path(__file__).parents[1] / "peers"
ESTIMATORS = ["ctr", "ctr(estimator=ips)", "ctr(estimator=dr)"]


def test_hand_computed() -> None:
    # a: score 0.5, logged click 1 with propensity 0.5; b: score 0.2, not in the log
    recommendations = pl.DataFrame({"user": ["u", "u"], "item": ["a", "b"], "score": [0.5, 0.2]})
    log = pl.DataFrame(
        {"user": ["u", "v"], "item": ["a", "c"], "click": [1, 0], "propensity": [0.5, 0.25]}
    )
    report = receval_cli.evaluate(
        recommendations,
        log,
        [*ESTIMATORS, "ctr(estimator=ips,max_weight=1.5)"],
        truth_columns={"relevance": "click"},
    )
    assert report.metrics == pytest.approx(
        {
            "ctr": 1.0,  # the one matched recommendation was clicked
            "ctr(estimator=ips)": (1 / 0.5 + 0) / 2,
            "ctr(estimator=dr)": (0.5 + (1 - 0.5) / 0.5 + 0.2) / 2,
            "ctr(estimator=ips,max_weight=1.5)": (1.5 + 0) / 2,
        }
    )
    assert report.logged is not None
    assert report.logged["recommendations"] == 2
    assert report.logged["matched"] == 1
    assert report.logged["effective_sample_size"]["ctr(estimator=ips)"] == 1.0


def logged_data(dataset: str, propensity: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The golden data's recommendations and click log (logged.csv, logged_int.csv:
    tests/peers/make_data.py), ids as strings or integers (pl.Int64); without the
    propensity column Jurity assumes 1 / number of logged items."""
    id_type = golden_files.id_type(dataset)
    ids = {"user": id_type, "item": id_type}
    log_file = "logged_int.csv" if dataset.endswith("_int") else "logged.csv"
    log = pl.read_csv(GOLDEN / "data" / log_file, schema_overrides=ids)
    if not propensity:
        log = log.drop("propensity")
    recommendations = pl.read_csv(
        GOLDEN / "data" / f"{dataset}_predictions.csv", schema_overrides=ids
    )
    return recommendations, log


@pytest.mark.parametrize("dataset", ["tiefree", "tiefree_int"])
@pytest.mark.parametrize("propensity", [True, False])
def test_agrees_with_jurity(propensity: bool, dataset: str) -> None:
    """logged.csv / logged_int.csv (tests/peers/make_data.py): the tiefree truth with
    click = grade >= 1 and a propensity per row; string or integer (pl.Int64) ids."""
    golden = json.loads((GOLDEN / "jurity" / f"ctr_{dataset}.json").read_text())
    assert (golden["library"], golden["version"]) == ("jurity", "2.1.0")
    recommendations, log = logged_data(dataset, propensity)
    report = receval_cli.evaluate(
        recommendations, log, ESTIMATORS, truth_columns={"relevance": "click"}
    )
    suffix = "" if propensity else "_default_propensity"
    for name, estimation in zip(ESTIMATORS, ("matching", "ips", "dr"), strict=True):
        want = golden["ctr"][estimation + suffix]
        assert report.metrics[name] == pytest.approx(want, abs=1e-9), name


def test_ips_is_unbiased_on_a_simulated_log() -> None:
    """A uniform logging policy over 4 items; the new policy always shows item 0, whose true
    CTR is 0.3. IPS's standard error is about sqrt(p(1-p)/n / 0.25), so allow 5 of them."""
    rng = random.Random(3)
    n, true_ctr = 20_000, {0: 0.3, 1: 0.1, 2: 0.5, 3: 0.2}
    rows = []
    for user in range(n):
        item = rng.randrange(4)
        rows.append((user, item, int(rng.random() < true_ctr[item]), 0.25))
    log = pl.DataFrame(rows, schema=["user", "item", "click", "propensity"], orient="row")
    recommendations = pl.DataFrame({"user": range(n), "item": [0] * n, "score": [0.3] * n})
    report = receval_cli.evaluate(
        recommendations,
        log,
        ["ctr(estimator=ips)", "ctr(estimator=dr)"],
        truth_columns={"relevance": "click"},
    )
    tolerance = 5 * math.sqrt(true_ctr[0] * (1 - true_ctr[0]) / n / 0.25)
    assert abs(report.metrics["ctr(estimator=ips)"] - 0.3) < tolerance
    assert abs(report.metrics["ctr(estimator=dr)"] - 0.3) < tolerance


def logged_config(folder: Path, log_csv: str) -> Path:
    write(folder / "recs.csv", "user,item,score\nu,a,0.5\n")
    write(folder / "log.csv", log_csv)
    return write_config(
        folder,
        {
            "predictions": {"path": "recs.csv"},
            "ground_truth": {"path": "log.csv", "columns": {"relevance": "click"}},
            "metrics": ["ctr(estimator=ips)"],
        },
    )


def test_clicks_must_be_zero_or_one(tmp_path: Path) -> None:
    config = logged_config(tmp_path, "user,item,click,propensity\nu,a,1,0.5\nu,b,2,0.5\n")
    assert_user_error(invoke("run", config), "log.csv", "click 0 or 1", "row 2", "'b'")


def test_propensities_must_be_in_0_1(tmp_path: Path) -> None:
    config = logged_config(tmp_path, "user,item,click,propensity\nu,a,1,0.5\nu,b,0,0\n")
    assert_user_error(invoke("run", config), "log.csv", "propensity in (0, 1]", "row 2")


@pytest.mark.parametrize("engine", [{}, {"partitions": 2}])
def test_a_propensity_whose_weight_overflows_is_refused(
    tmp_path: Path, engine: dict[str, int]
) -> None:
    """A logging propensity in (0, 1] below 5.56e-309 (1e-310; 1e-308 is taken) would weigh
    its row 1/p = inf: refused by its row, not an overflow of the sums blamed on scores."""
    config = logged_config(tmp_path, "user,item,click,propensity\nu,a,1,0.5\nu,b,0,1e-310\n")
    if engine:
        config = write(config, config.read_text(encoding="utf-8") + "partitions: 2\n")
    words = ("log.csv", "at least 5.56268464626801e-309 (1/p finite)", "row 2", "1e-310")
    assert_user_error(invoke("run", config), *words)


def test_no_match_gives_no_value_and_no_sample_size() -> None:
    """matching with no matched recommendation has no value (null, as Jurity's None; it
    was 0); ips is 0 and dr the predicted reward."""
    recommendations = pl.DataFrame({"user": ["u"], "item": ["a"], "score": [0.4]})
    log = pl.DataFrame({"user": ["u"], "item": ["b"], "click": [1], "propensity": [0.5]})
    report = receval_cli.evaluate(
        recommendations, log, ESTIMATORS, truth_columns={"relevance": "click"}
    )
    assert report.metrics == {"ctr": None, "ctr(estimator=ips)": 0.0, "ctr(estimator=dr)": 0.4}
    assert report.warnings[0] == (
        "ctr has no value (null): matching and snips: no recommendation is in the log, so no "
        "click was matched (the report's logged block counts them). A gate on it fails."
    )
    assert report.logged is not None
    assert report.logged["effective_sample_size"]["ctr(estimator=ips)"] is None
    from receval_cli.report.render import render_json

    assert '"effective_sample_size"' in render_json(report)  # no NaN in the JSON


def test_a_repeated_log_row_follows_truth_duplicates() -> None:
    recommendations = pl.DataFrame({"user": ["u"], "item": ["a"], "score": [0.4]})
    log = pl.DataFrame(
        {"user": ["u", "u"], "item": ["a", "a"], "click": [0, 1], "propensity": [0.5, 0.25]}
    )
    first = receval_cli.evaluate(
        recommendations,
        log,
        ["ctr(estimator=ips)"],
        conventions={"truth_duplicates": "first"},
        truth_columns={"relevance": "click"},
    )
    assert first.metrics["ctr(estimator=ips)"] == 0.0  # the first row: no click
    best = receval_cli.evaluate(
        recommendations,
        log,
        ["ctr(estimator=ips)"],
        conventions={"truth_duplicates": "max"},
        truth_columns={"relevance": "click"},
    )
    assert best.metrics["ctr(estimator=ips)"] == 1 / 0.25  # the click, with its propensity
    assert best.logged is not None
    assert best.logged["recommendations"] == 1


@pytest.mark.parametrize("dataset", ["tiefree", "tiefree_int"])
@pytest.mark.parametrize("propensity", [True, False])
def test_ctr_at_k_agrees_with_jurity(propensity: bool, dataset: str) -> None:
    """ctr@k against Jurity's CTR(k=K) (tests/peers/jurity/ctr_k_*.json): each user's top
    k by score; the tiefree data has no tied score, so Jurity's unstable sort is defined."""
    golden = json.loads((GOLDEN / "jurity" / f"ctr_k_{dataset}.json").read_text())
    assert (golden["library"], golden["version"]) == ("jurity", "2.1.0")
    recommendations, log = logged_data(dataset, propensity)
    ks = [int(key.removeprefix("k=")) for key in golden["ctr"]]
    assert ks == [1, 3, 5, 10]
    specs = [f"ctr@{k}(estimator={e})" for k in ks for e in ("matching", "ips", "dr")]
    report = receval_cli.evaluate(
        recommendations,
        log,
        specs,
        conventions={"preset": "jurity"},
        truth_columns={"relevance": "click"},
    )
    suffix = "" if propensity else "_default_propensity"
    for k in ks:
        values = golden["ctr"][f"k={k}"]
        for estimation in ("matching", "ips", "dr"):
            got = report.metrics[f"ctr@{k}(estimator={estimation})"]
            assert got == pytest.approx(values[estimation + suffix], abs=1e-9), (k, estimation)


@pytest.mark.parametrize("dataset", ["tiefree", "tiefree_int"])
def test_auc_at_k_agrees_with_jurity(dataset: str) -> None:
    """auc@k against Jurity's AUC(k=K) (tests/peers/jurity/auc_k_*.json)."""
    golden = json.loads((GOLDEN / "jurity" / f"auc_k_{dataset}.json").read_text())
    assert (golden["library"], golden["version"]) == ("jurity", "2.1.0")
    predictions, truth = golden_files.frames(dataset)
    ks = [entry["k"] for entry in golden["metrics"].values()]
    assert ks == [1, 3, 5, 10]
    report = receval_cli.evaluate(
        predictions,
        truth,
        [f"auc@{k}" for k in ks],
        conventions={"preset": "jurity"},
        truth_columns={"relevance": "relevance"},
    )
    for entry in golden["metrics"].values():
        got = report.metrics[f"auc@{entry['k']}"]
        assert got == pytest.approx(entry["auc"], abs=1e-9), entry["k"]


# the Open Bandit Pipeline's estimators (tests/peers/obp/, obp 0.5.7) -> receval's ctr spec
OBP_TO_RECEVAL = {
    "ipw": "ctr(estimator=ips)",
    "snipw": "ctr(estimator=snips)",
    "dm": "ctr(estimator=dm)",
    "dr": "ctr(estimator=dr)",
    "switch-dr_2": "ctr(estimator=switch_dr,switch=2)",
    "switch-dr_5": "ctr(estimator=switch_dr,switch=5)",
    "switch-dr_1000": "ctr(estimator=switch_dr,switch=1000)",
    "ipw_clip_5": "ctr(estimator=ips,max_weight=5)",
    "dr_clip_5": "ctr(estimator=dr,max_weight=5)",
}


@pytest.mark.parametrize("dataset", ["tiefree", "tiefree_int"])
def test_agrees_with_the_open_bandit_pipeline(dataset: str) -> None:
    """IPS, SNIPS, DM, DR, Switch-DR and the clipped ones, at every cutoff, and each one's
    variance (its round rewards' over n), against obp's own estimators (its golden files:
    each recommendation a round, the logged action the recommended item when matched)."""
    name = "logged_int" if dataset.endswith("_int") else "logged"
    golden = json.loads((GOLDEN / "obp" / f"{name}.json").read_text())
    assert (golden["library"], golden["version"]) == ("obp", "0.5.7")
    recommendations, log = logged_data(dataset, True)
    specs = [
        spec.replace("ctr(", f"ctr@{k}(") if k is not None else spec
        for spec in OBP_TO_RECEVAL.values()
        for k in golden["cutoffs"]
    ]
    report = receval_cli.evaluate(recommendations, log, specs, truth_columns={"relevance": "click"})
    assert report.logged is not None
    compared = 0
    for theirs, ours in OBP_TO_RECEVAL.items():
        for k in golden["cutoffs"]:
            want = golden["estimates"][theirs if k is None else f"{theirs}@{k}"]
            key = ours if k is None else ours.replace("ctr(", f"ctr@{k}(")
            assert report.metrics[key] == pytest.approx(want["value"], rel=0, abs=1e-12), key
            variance = report.logged["variance"][key]
            assert variance == pytest.approx(want["variance"], rel=1e-9, abs=0), key
            compared += 1
    assert compared == len(OBP_TO_RECEVAL) * len(golden["cutoffs"])


def test_the_new_estimators_by_hand() -> None:
    """The docstring's example: a (score 0.5, click 1, propensity 0.5), b (score 0.2, not
    logged): snips 1, dm 0.35, switch_dr at 1.5 (a's weight 2 above it) dm's 0.35, at 2
    (inclusive) dr's 0.85."""
    recommendations = pl.DataFrame({"user": ["u", "u"], "item": ["a", "b"], "score": [0.5, 0.2]})
    log = pl.DataFrame({"user": ["u"], "item": ["a"], "click": [1], "propensity": [0.5]})
    specs = [
        "ctr(estimator=snips)",
        "ctr(estimator=dm)",
        "ctr(estimator=switch_dr,switch=1.5)",
        "ctr(estimator=switch_dr,switch=2)",
        "ctr@1(estimator=dm)",
    ]
    report = receval_cli.evaluate(recommendations, log, specs, truth_columns={"relevance": "click"})
    assert report.metrics == pytest.approx(
        {
            "ctr(estimator=snips)": 1.0,
            "ctr(estimator=dm)": 0.35,
            "ctr(estimator=switch_dr,switch=1.5)": 0.35,
            "ctr(estimator=switch_dr,switch=2)": 0.85,
            "ctr@1(estimator=dm)": 0.5,
        },
        abs=1e-15,
    )
    assert report.logged is not None
    # dm's terms 0.5 and 0.2: variance (0.045) / 2
    assert report.logged["variance"]["ctr(estimator=dm)"] == pytest.approx(0.0225, abs=1e-15)


def test_every_format_states_the_variance(tmp_path: Path) -> None:
    recommendations, log = logged_data("tiefree", True)
    recommendations.write_csv(tmp_path / "p.csv")
    log.write_csv(tmp_path / "log.csv")
    config = write_config(
        tmp_path,
        {
            "predictions": {"path": "p.csv"},
            "ground_truth": {"path": "log.csv", "columns": {"relevance": "click"}},
            "metrics": ["ctr(estimator=snips)", "ctr(estimator=switch_dr,switch=5)"],
        },
    )
    for fmt, shown in (
        ("table", "variance of each estimate: ctr(estimator=snips)"),
        ("markdown", "Variance of each estimate: ctr\\(estimator=snips\\)"),
        ("html", "<th>variance</th>"),
        ("json", '"variance": {'),
    ):
        result = invoke("run", config, *(["-q"] if fmt != "table" else []), "--format", fmt)
        assert result.exit_code == 0, (fmt, result.stderr)
        assert shown in " ".join(result.stdout.split()), fmt
