"""trec_eval's own test suite: receval under the trec_eval preset reproduces every line.

tests/peers/trec_eval/conformance/trec_eval/ holds NIST trec_eval 10.0's test inputs and expected
outputs
(see its README.md and LICENSE.md). For every measure trec_eval prints, each per-query
value and each average must print the same to trec_eval's 4 decimals (relstring, per-user
text, is compared as text).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import evaluate_model

import receval_cli
from receval_cli.metrics import MetricSpec
from receval_cli.metrics.tool_trec_eval import TREC_EVAL_NAMES

# trec_eval/: NIST's own tests; trec_eval_scores/: near ties that only doubles tell apart
HERE = Path(__file__).parent / "conformance"
# the README and the pages of docs/, where an exemption list would be written
DOCS = "\n".join(
    path.read_text(encoding="utf-8")
    for path in [
        Path(__file__).parents[3] / "README.md",
        *(Path(__file__).parents[3] / "docs").glob("*.md"),
    ]
)


# trec_eval measure name (as its outputs print it, parameters included) -> receval spec: the
# package's own table, which a config's trec_eval names read (metrics/tool_trec_eval.py)
_PATTERNS = TREC_EVAL_NAMES
COUNTS = {"num_rel", "num_ret", "num_rel_ret", "num_nonrel_judged_ret"}
# the run's name; the number of queries; the per-query relevance string (checked apart)
NOT_METRICS = {"runid", "num_q"}
RELSTRING = re.compile(r"relstring(?:_(\d+))?")  # relstring_20: the top 20

# expected file, run, qrels, conventions beside the preset (trec_eval's flags)
NIST = [
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
NEAR_TIES = [
    ("out.near_ties.aq", "results.near_ties", "qrels.near_ties", {}),
    ("out.near_ties.meas_params", "results.near_ties", "qrels.near_ties", {}),
]
CASES = [
    *((f"trec_eval/{e}", f"trec_eval/{r}", f"trec_eval/{q}", x) for e, r, q, x in NIST),
    *((f"trec_eval_scores/{e}", f"trec_eval_scores/{r}", f"trec_eval_scores/{q}", x)
      for e, r, q, x in NEAR_TIES),
]  # fmt: skip


def spec_for(measure: str) -> str | None:
    for pattern, template in _PATTERNS:
        match = pattern.fullmatch(measure)
        if match:
            return str(MetricSpec.parse(template(match.group(1))))  # canonical text
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
    return evaluate_model(tmp_path, config)


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
    lines = [(m, q, v) for m, q, v in expected_lines(expected) if RELSTRING.fullmatch(m)]
    for measure, query, value in lines:
        length = RELSTRING.fullmatch(measure).group(1)  # type: ignore[union-attr]
        strings = dict(
            receval_cli.relstrings(
                HERE / run,
                HERE / qrels,
                length=int(length or 10),
                conventions={"preset": "trec_eval", **extra},
            ).iter_rows()
        )
        assert f"'{strings[query]}'" == value, (measure, query)
    if expected in ("trec_eval/out.test.aq", "trec_eval/out.test.aqc", "trec_eval/out.test.aqcM"):
        assert len(lines) == 3


def test_every_measure_line_is_compared() -> None:
    """No exemption list: every measure of every expected output maps to a receval spec,
    but the run's name, the query count (checked above) and relstring (checked above)."""
    unmapped = {
        measure
        for name, *_ in CASES
        for measure, _, _ in expected_lines(name)
        if spec_for(measure) is None
        and measure not in NOT_METRICS
        and not RELSTRING.fullmatch(measure)
    }
    assert not unmapped, sorted(unmapped)
    assert "trec_eval measures receval does not implement" not in DOCS
