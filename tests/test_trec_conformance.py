"""trec_eval's own test suite: receval under the trec_eval preset reproduces every line.

tests/conformance/trec_eval/ holds NIST trec_eval 10.0's test inputs and expected outputs
(see its README.md and LICENSE.md). For every measure receval implements, each per-query
value and each average must print the same to trec_eval's 4 decimals; the measures it does
not implement are listed in the README.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

import receval_cli
from receval_cli.analysis.runs import evaluate_config as evaluate
from receval_cli.config.loading import load_config

HERE = Path(__file__).parent / "conformance" / "trec_eval"
README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")

# trec_eval measure name -> receval metric spec
_PATTERNS = [
    (re.compile(r"P_(\d+)"), "precision@{}"),
    (re.compile(r"recall_(\d+)"), "recall@{}"),
    (re.compile(r"ndcg_cut_(\d+)"), "ndcg@{}"),
    (re.compile(r"map_cut_(\d+)"), "map@{}"),
    (re.compile(r"success_(\d+)"), "hit_rate@{}"),
    (re.compile(r"(ndcg)"), "ndcg"),
    (re.compile(r"(map)"), "map"),
    (re.compile(r"(recip_rank)"), "mrr"),
    (re.compile(r"(Rprec)"), "r_precision"),
    (re.compile(r"(num_rel)"), "num_rel"),
    (re.compile(r"(num_ret)"), "num_ret"),
    (re.compile(r"(num_rel_ret)"), "num_rel_ret"),
    (re.compile(r"(bpref)"), "bpref"),
    (re.compile(r"(infAP)"), "infap"),
    (re.compile(r"unj_(\d+)"), "unj@{}"),
    (re.compile(r"(num_nonrel_judged_ret)"), "num_nonrel_judged_ret"),
    (re.compile(r"(G)"), "g"),
    (re.compile(r"(binG)"), "bing"),
    (re.compile(r"(ndcg_rel)"), "ndcg_rel"),
    (re.compile(r"(Rndcg)"), "rndcg"),
    (re.compile(r"(rbp)"), "rbp"),
    (re.compile(r"(rbp_resid)"), "rbp_resid"),
    # trec_eval's gain map ndcg.1=3,2=9,4=4.5 (printed ndcg_1=3,2=9,4=4.5)
    (re.compile(r"ndcg_((?:\d+=[-\d.]+,?)+)"), "ndcg(gains={})"),
]
COUNTS = {"num_rel", "num_ret", "num_rel_ret", "num_nonrel_judged_ret"}
# the run's name; the number of queries; the per-query relevance string (checked apart)
NOT_METRICS = {"runid", "num_q", "relstring"}

# expected file, run, qrels, conventions beside the preset (trec_eval's flags)
CASES = [
    ("out.test", "results.test", "qrels.test", {}),
    ("out.test.a", "results.test", "qrels.test", {}),
    ("out.test.aq", "results.test", "qrels.test", {}),
    ("out.test.aqc", "results.trunc", "qrels.test", {"users_without_recommendations": "zero"}),
    (
        "out.test.aqcM",
        "results.trunc",
        "qrels.test",
        {"users_without_recommendations": "zero", "max_depth": 100},
    ),
    ("out.test.aql", "results.test", "qrels.rel_level", {"relevance_threshold": 2}),
    ("out.test.meas_params", "results.test", "qrels.test", {}),
]


def spec_for(measure: str) -> str | None:
    for pattern, template in _PATTERNS:
        match = pattern.fullmatch(measure)
        if match:
            return template.format(match.group(1).replace("=", ":").replace(",", ";"))
    return None


def expected_lines(name: str) -> list[tuple[str, str, str]]:
    rows = []
    for line in (HERE / name).read_text().splitlines():
        measure, query, value = (part.strip() for part in line.split("\t"))
        rows.append((measure, query, value))
    return rows


def run_receval(tmp_path: Path, run: str, qrels: str, extra: dict[str, Any], specs: list[str]):
    config = {
        "predictions": {"path": str(HERE / run)},  # no extension: detected as TREC by content
        "ground_truth": {"path": str(HERE / qrels)},
        "metrics": specs,
        "conventions": {"preset": "trec_eval", **extra},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return evaluate(load_config(path)).models["model"]  # a one-file config's model


def printed(measure: str, value: float) -> str:
    return str(round(value)) if measure in COUNTS else f"{value:.4f}"


@pytest.mark.parametrize(("expected", "run", "qrels", "extra"), CASES, ids=[c[0] for c in CASES])
def test_every_implemented_line_matches(
    tmp_path: Path, expected: str, run: str, qrels: str, extra: dict[str, Any]
) -> None:
    rows = expected_lines(expected)
    specs = sorted({s for m, _, _ in rows if (s := spec_for(m)) is not None})
    report = run_receval(tmp_path, run, qrels, extra, specs)
    per_user = {row["user"]: row for row in report.per_user.iter_rows(named=True)}
    compared = 0
    mismatches = []
    for measure, query, value in rows:
        spec = spec_for(measure)
        if measure == "num_q":
            assert int(value) == report.users["evaluated"]
            continue
        if spec is None:
            continue
        if query == "all":
            got = report.metrics[spec]
        else:
            assert per_user[query]["status"] == "evaluated", query
            got = per_user[query][spec]
        compared += 1
        if printed(measure, got) != value:
            mismatches.append(f"{measure} {query}: trec_eval {value}, receval {got!r}")
    assert not mismatches, "\n".join(mismatches)
    assert compared >= 9


@pytest.mark.parametrize(("expected", "run", "qrels", "extra"), CASES, ids=[c[0] for c in CASES])
def test_relstring_lines_match(expected: str, run: str, qrels: str, extra: dict[str, Any]) -> None:
    """trec_eval -q prints `relstring <query> '<grades of the top 10>'`: receval_cli.relstrings
    gives the same string for every query it prints."""
    lines = [(q, v) for m, q, v in expected_lines(expected) if m == "relstring"]
    strings = dict(
        receval_cli.relstrings(
            HERE / run, HERE / qrels, conventions={"preset": "trec_eval", **extra}
        ).iter_rows()
    )
    for query, value in lines:
        assert f"'{strings[query]}'" == value, query
    if expected in ("out.test.aq", "out.test.aqc", "out.test.aqcM"):
        assert len(lines) == 3


def test_unimplemented_measures_are_listed_in_the_readme() -> None:
    section = README.split("### trec_eval measures receval does not implement")[1]
    section = section.split("\n## ")[0].split("\n### ")[0]
    listed = set(re.findall(r"`([^`]+)`", section))
    missing = set()
    for name, *_ in CASES:
        for measure, _, _ in expected_lines(name):
            if spec_for(measure) is None and measure not in NOT_METRICS:
                family = re.sub(r"(_[-\d.,=]+)+$", "", measure)
                if family not in listed:
                    missing.add(measure)
    assert not missing, sorted(missing)
