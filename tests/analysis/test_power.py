"""Power and the per-user outcomes and effect sizes of comparisons: each comparison's
minimum detectable difference and the users a target difference needs, for the paired
t-test; wins, ties and losses per user; Cohen's d with its exact interval
(analysis/power.py, analysis/intervals.py).

Checked against scipy: its noncentral t distribution gives the power at the detectable
difference (the configured power, to 1e-9) and at the users needed (the power reached
there, not one user before); the differences are the per-user values of the run's own
--per-user table.
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

from receval_cli.analysis import power

stats = pytest.importorskip("scipy.stats")
DATA = golden_files.GOLDEN / "data"


def nct_cdf(t: float, nu: float, noncentrality: float) -> float:
    """scipy's noncentral t CDF; where it gives NaN (it does for some arguments, e.g.
    nu=1, or t=-3, nu=999, 5.5), its defining integral by scipy's quad instead:
    E[Phi(t S - lambda)] with S = chi(nu) / sqrt(nu)."""
    found = float(stats.nct.cdf(t, nu, noncentrality))
    if not math.isnan(found):
        return found
    integrate = pytest.importorskip("scipy.integrate")
    root = math.sqrt(nu)

    def term(s: float) -> float:
        return float(stats.norm.cdf(t * s - noncentrality) * stats.chi.pdf(s * root, nu) * root)

    center, spread = 1.0, 12.0 / root
    value, _ = integrate.quad(term, max(0.0, center - spread), center + spread, limit=500)
    return float(value)


def scipy_power(difference: float, sd: float, n: int, alpha: float) -> float:
    nu = n - 1
    critical = float(stats.t.ppf(1 - alpha / 2, nu))
    noncentrality = difference * math.sqrt(n) / sd
    inside = nct_cdf(critical, nu, noncentrality) - nct_cdf(-critical, nu, noncentrality)
    return 1 - inside


@pytest.mark.parametrize("nu", [1, 2, 4, 19, 59, 999, 99_999, 1_000_000])
def test_the_noncentral_t_distribution_is_scipy_s(nu: int) -> None:
    for t in (-3.0, -0.5, 0.0, 1.0, 1.96, 4.0):
        for noncentrality in (0.0, 0.3, 1.7, 2.8, 5.5):
            ours = power.noncentral_t_cdf(t, nu, noncentrality)
            theirs = nct_cdf(t, nu, noncentrality)
            assert math.isclose(ours, theirs, rel_tol=0, abs_tol=1e-9), (t, nu, noncentrality)
    for alpha in (0.01, 0.05, 0.2):
        ours = power.t_quantile(alpha, nu)
        assert math.isclose(ours, stats.t.ppf(1 - alpha / 2, nu), rel_tol=1e-9)


@pytest.mark.parametrize("n", [2, 3, 10, 60, 1_000, 250_000])
@pytest.mark.parametrize(("alpha", "target"), [(0.05, 0.8), (0.01, 0.9), (0.1, 0.5)])
def test_the_detectable_difference_has_the_target_power(
    n: int, alpha: float, target: float
) -> None:
    sd = 0.37
    difference = power.detectable_difference(sd, n, alpha, target)
    assert difference is not None
    assert math.isclose(scipy_power(difference, sd, n, alpha), target, abs_tol=1e-9)


@pytest.mark.parametrize(("difference", "sd"), [(0.01, 0.2), (0.05, 0.3), (0.5, 0.4), (2.0, 1.0)])
def test_the_users_needed_are_the_fewest_that_reach_the_power(difference: float, sd: float) -> None:
    n = power.users_needed(difference, sd, 0.05, 0.8)
    assert n is not None
    assert scipy_power(difference, sd, n, 0.05) >= 0.8
    if n > 2:
        assert scipy_power(difference, sd, n - 1, 0.05) < 0.8
    assert power.detectable_difference(sd, 1, 0.05, 0.8) is None  # one user: no test
    assert power.users_needed(0.0, sd, 0.05, 0.8) is None  # no difference: never


def two_models(tmp_path: Path, comparison: dict[str, Any]) -> Path:
    metrics = ["ndcg@10", "P_5", "num_rel_ret", "entropy@5"]
    return write_config(tmp_path, golden_files.two_models(metrics, comparison=comparison))


def test_a_run_states_each_comparison_s_power(tmp_path: Path) -> None:
    config = two_models(tmp_path, {"power": 0.9, "level": 0.99, "target_difference": 0.01})
    values = tmp_path / "users.csv"
    result = invoke("run", config, "-q", "--format", "json", "--per-user", values)
    assert result.exit_code == 0, result.stderr
    found = {r["metric"]: r for r in json.loads(result.stdout)["comparisons"]["results"]}
    rows = pl.read_csv(values)
    for metric in ("ndcg@10", "P_5"):
        paired = (
            rows.filter(pl.col("model") == "base")
            .select("user", pl.col(metric).alias("a"))
            .join(
                rows.filter(pl.col("model") == "other").select("user", pl.col(metric).alias("b")),
                on="user",
            )
            .drop_nulls()
        )
        d = (paired["b"] - paired["a"]).to_list()
        n, sd = len(d), float(stats.tstd(d))
        result_row = found[metric]
        assert result_row["users"] == n
        assert math.isclose(scipy_power(result_row["detectable"], sd, n, 0.01), 0.9, abs_tol=1e-9)
        needed = result_row["users_needed"]
        assert scipy_power(0.01, sd, needed, 0.01) >= 0.9 > scipy_power(0.01, sd, needed - 1, 0.01)
    counts = found["num_rel_ret"]  # a sum: its detectable difference in its own unit
    assert counts["detectable"] > 1
    assert counts["users_needed"] is None
    assert found["entropy@5"]["detectable"] is None  # one value over every list: untested


def test_every_format_shows_the_power(tmp_path: Path) -> None:
    config = two_models(tmp_path, {"target_difference": 0.01})
    heading = "the smallest difference detected with power 0.8 (the paired t-test"
    for fmt, shown in (
        ("table", heading),
        ("markdown", "| wins/ties/losses | Cohen's d [interval] | detectable difference |"),
        ("html", "Per-user outcomes, effect sizes and power"),
    ):
        result = invoke("run", config, *(["-q"] if fmt != "table" else []), "--format", fmt)
        assert result.exit_code == 0, (fmt, result.stderr)
        assert shown in " ".join(result.stdout.replace("\\", "").split()), fmt


@pytest.mark.parametrize(
    ("comparison", "key"),
    [
        ({"power": 1.0}, "comparison.power"),
        ({"target_difference": 0}, "comparison.target_difference"),
    ],
)
def test_a_power_outside_its_range_is_refused(
    tmp_path: Path, comparison: dict[str, Any], key: str
) -> None:
    assert_user_error(invoke("run", two_models(tmp_path, comparison)), key)


def test_the_effect_size_interval_is_the_noncentral_t_s(tmp_path: Path) -> None:
    """Cohen's d of paired differences (mean / sd) and its exact interval (Steiger and
    Fouladi): the noncentralities at which the observed t is the 97.5% and 2.5% quantile of
    the noncentral t, found here by scipy's root finder on scipy's distribution."""
    optimize = pytest.importorskip("scipy.optimize")
    import numpy as np

    rng = np.random.default_rng(7)
    for n in (3, 12, 80, 2_000):
        d = rng.normal(0.2, 1.0, n)
        mean, sd = float(d.mean()), float(d.std(ddof=1))
        found = power.effect_size_interval(mean, sd, n, 0.95)
        assert found is not None
        observed, nu = mean / (sd / math.sqrt(n)), n - 1

        def at(probability: float, observed: float = observed, nu: int = nu) -> float:
            return optimize.brentq(
                lambda lam: nct_cdf(observed, nu, lam) - probability, -60, 60, xtol=1e-14
            ) / math.sqrt(nu + 1)

        assert math.isclose(found[0], at(0.975), abs_tol=1e-9), n
        assert math.isclose(found[1], at(0.025), abs_tol=1e-9), n
    assert power.effect_size_interval(0.5, 0.0, 10, 0.95) is None  # no spread to scale by


def test_wins_ties_losses_and_effect_size_by_hand(tmp_path: Path) -> None:
    """Three users; the baseline's precision@1 is 1, 0, 0 and the other model's 0, 1, 1
    (their top items swapped): the other wins on two users and loses on one; the
    differences -1, 1, 1 have mean 1/3 and sd sqrt(4/3): d = 1/3 / sqrt(4/3) = 0.2887."""
    truth = tmp_path / "t.csv"
    truth.write_text("user,item\n1,a\n2,b\n3,b\n", encoding="utf-8")
    base = tmp_path / "base.csv"
    base.write_text("user,item,score\n1,a,2\n1,b,1\n2,a,2\n2,b,1\n3,a,2\n3,b,1\n", "utf-8")
    other = tmp_path / "other.csv"
    other.write_text("user,item,score\n1,a,1\n1,b,2\n2,a,1\n2,b,2\n3,a,1\n3,b,2\n", "utf-8")
    config = write_config(
        tmp_path,
        {
            "predictions": {"models": {"base": str(base), "other": str(other)}},
            "ground_truth": {"path": str(truth)},
            "metrics": ["precision@1"],
        },
    )
    result = invoke("run", config, "-q", "--format", "json")
    assert result.exit_code == 0, result.stderr
    (row,) = json.loads(result.stdout)["comparisons"]["results"]
    assert (row["wins"], row["ties"], row["losses"]) == (2, 0, 1)
    assert math.isclose(row["effect_size"], (1 / 3) / math.sqrt(4 / 3), rel_tol=1e-12)
    assert row["effect_low"] < row["effect_size"] < row["effect_high"]
    csv = invoke("run", config, "-q", "--format", "csv").stdout.splitlines()
    assert csv[0].endswith(",difference,p_adjusted,verdict,gate")  # the CSV's columns stay
