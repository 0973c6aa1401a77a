"""The gate matrix: every gate kind in every state, its data and its outputs."""

from __future__ import annotations

import csv
import functools
import io
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from cli_helpers import write, write_config
from lazy_modules import lazy
from model_comparisons import two_models

from receval_cli.formats import Format
from receval_cli.report.destinations import REPORT_EXTENSIONS
from receval_cli.results.gates import BOUNDS, HISTORY_BOUNDS, STATES

xmlschema = lazy("xmlschema")  # loaded by the first test that reads it (lazy_modules.py)


# the hand case (cli_helpers) ranked better and worse (as in test_history)
HAND = "user,item,score\nu1,a,0.9\nu1,b,0.8\nu1,c,0.7\nu2,d,0.9\nu2,e,0.5\n"


BETTER = "user,item,score\nu1,b,0.9\nu1,a,0.8\nu1,c,0.7\nu2,d,0.9\nu2,e,0.5\n"


WORSE = "user,item,score\nu1,c,0.9\nu1,a,0.8\nu1,b,0.7\nu2,e,0.9\nu2,d,0.5\n"


# the hand case's ground truth with a rated non-relevant item per user (auc has a value)
TRUTH_CSV = "user,item,relevance\nu1,b,1\nu1,a,0\nu2,d,1\nu2,f,1\nu2,e,0\n"


# only the relevant items scored: auc has no value (as in test_no_value)
ONE_CLASS = "user,item,score\nu1,b,0.9\nu2,d,0.9\nu2,f,0.5\n"


GROUPS = {"u1": "a", "u2": "b"}  # the segment attribute, in the ground truth


METRICS = ["precision@1", "ndcg@2", "auc"]


CONVENTIONS = {"unpredicted": "ignore"}  # auc scores the predicted pairs only


@functools.cache
def junit_schema() -> Any:
    """The JUnit format's schema, read once (by the first test that validates)."""
    return xmlschema.XMLSchema(Path(__file__).parents[1] / "schemas" / "junit.xsd")


SCOPES = ("model", "segment")  # a min gate on one model of several, on one segment


KINDS = (*BOUNDS, *SCOPES)


MATRIX_STATES = (*STATES, "null")


def exists(kind: str, state: str) -> bool:
    """The combinations that can exist: only a gate against the history is waived (too
    few past runs); no_significant_drop tests per-user values, and the metrics that can
    have no value (auc, gauc, r2) are one value over all users, refused for it (exit 2)."""
    if state == "waived":
        return kind in HISTORY_BOUNDS
    if state == "null":
        return kind != "no_significant_drop"
    return True


CASES = [(k, s) for k in KINDS for s in MATRIX_STATES if exists(k, s)]


def truth_text(rows: str) -> str:
    """The ground truth with a `group` column (the segment attribute)."""
    lines = rows.strip().splitlines()
    out = [f"{lines[0]},group"]
    out += [f"{line},{GROUPS[line.split(',')[0]]}" for line in lines[1:]]
    return "\n".join(out) + "\n"


@dataclass
class Scenario:
    """One run: its config, the predictions of each model, the history store's past."""

    gates: dict[str, Any]
    models: dict[str, str]  # name -> predictions text (one: a one-file config)
    extra: dict[str, Any]
    past: bool = False  # a store with past runs (history gates)


def scenario(kind: str, state: str) -> Scenario:
    """The config that puts a gate of `kind` in `state`."""
    metric = "auc" if state == "null" else "ndcg@2"
    today = ONE_CLASS if state == "null" else WORSE if state == "failed" else BETTER
    if kind in ("min", "max", "segment"):
        bar = {"min": 0.1 if state != "failed" else 0.99}
        if kind == "max":
            bar = {"max": 0.99 if state != "failed" else 0.1}
        if kind == "segment":
            bar["segment"] = "group=a"
        return Scenario({metric: bar}, {"model": today}, {"segment_by": ["group"]})
    if kind in ("max_drop", "max_relative_drop", "model"):
        bar = {kind: 0.01} if kind != "model" else {"min": 0.1, "model": "new"}
        if kind == "model" and state == "failed":
            bar["min"] = 0.99
        base = ONE_CLASS if state == "null" else BETTER if state == "failed" else HAND
        comparison = {"baseline": "base"}
        return Scenario({metric: bar}, {"base": base, "new": today}, {"comparison": comparison})
    if kind in HISTORY_BOUNDS:
        limit = "relative" if kind == "history_relative_drop" else "absolute"
        bar = {"vs": "history", "runs": 7 if state == "waived" else 2, limit: 0.01}
        return Scenario({metric: {"max_drop": bar}}, {"model": today}, {}, past=True)
    assert kind == "no_significant_drop", kind
    return Scenario({"ndcg@10": {"no_significant_drop": True}}, {}, {})


def sample_config(folder: Path, state: str) -> Path:
    """no_significant_drop needs users to test: the sample model against the popular one
    (a significant loss with the model as the baseline, none the other way)."""
    baseline = "model" if state == "failed" else "popular"
    return two_models(
        folder,
        metrics=["ndcg@10"],
        comparison={"baseline": baseline},
        gates={"ndcg@10": {"no_significant_drop": True}},
    )


def build(folder: Path, kind: str, state: str, past: Path) -> tuple[Path, Path]:
    """The scenario's config and its history store (a copy of `past` for history gates,
    else a store yet to be created)."""
    store = folder / "history"
    if kind == "no_significant_drop":
        return sample_config(folder, state), store
    found = scenario(kind, state)
    write(folder / "truth.csv", truth_text(TRUTH_CSV))
    paths = {}
    for name, rows in found.models.items():
        paths[name] = str(write(folder / f"{name}.csv", rows).name)
    predictions: dict[str, Any] = (
        {"path": paths["model"]} if list(paths) == ["model"] else {"models": paths}
    )
    config = {
        "predictions": predictions,
        "ground_truth": {"path": "truth.csv"},
        "metrics": METRICS,
        "conventions": CONVENTIONS,
        **found.extra,
        "gates": found.gates,
    }
    if found.past:
        shutil.copytree(past, store)
    return write_config(folder, config), store


def outputs(folder: Path) -> tuple[list[str], dict[str, Path | None]]:
    """`-o` arguments for every format: a file by its extension (the code's own map), or
    stdout for the one without (github): its path None."""
    by_format: dict[str, str] = {}
    for extension, fmt in REPORT_EXTENSIONS.items():
        by_format.setdefault(fmt, extension)
    args: list[str] = []
    places: dict[str, Path | None] = {}
    for fmt in Format:
        if fmt.value in by_format:
            path = folder / f"report{by_format[fmt.value]}"
            args += ["-o", str(path)]
            places[fmt.value] = path
        else:
            assert None not in places.values(), "two formats without an extension"
            args += ["-f", fmt.value, "-o", "-"]
            places[fmt.value] = None
    return args, places


def _table(text: str, state: str, gate: dict[str, Any]) -> None:
    cell = {"passed": "ok ", "failed": "FAIL ", "null": "FAIL ", "waived": "waived: "}[state]
    assert cell in text, text
    if state == "waived":
        assert f"{gate['runs']} of {gate['runs_needed']} past runs" in text
        assert "gate waived:" in text
    if state in ("failed", "null"):
        assert "gate failed:" in text


def _markdown(text: str, state: str, gate: dict[str, Any]) -> None:
    if state in ("failed", "null"):
        for words in ("❌", "### Failed gates", "failed"):
            assert words in text, text
    elif state == "waived":
        assert "### Waived gates" in text, text
        assert "1 gate waived" in text, text
        assert "gates passed" not in text
    else:
        assert "✅" in text, text
        assert "1 gate passed" in text, text


def _csv(text: str, state: str, gate: dict[str, Any]) -> None:
    rows = list(csv.DictReader(io.StringIO(text)))
    verdicts = [row["gate"] for row in rows if row["gate"]]
    assert len(verdicts) == 1, rows
    word = {"passed": "passed ", "failed": "FAILED ", "null": "FAILED ", "waived": "waived: "}
    assert verdicts[0].startswith(word[state]), verdicts


def _junit(text: str, state: str, gate: dict[str, Any]) -> None:
    junit_schema().validate(text)  # <skipped message=...> included: the format's schema
    suite = ElementTree.fromstring(text).find("testsuite")
    assert suite is not None
    (case,) = suite.findall("testcase")
    failed, skipped = case.find("failure"), case.find("skipped")
    assert suite.get("failures") == str(int(state in ("failed", "null")))
    assert suite.get("skipped") == str(int(state == "waived"))
    assert (failed is not None) == (state in ("failed", "null"))
    assert (skipped is not None) == (state == "waived")
    if skipped is not None:
        assert "waived" in (skipped.get("message") or "")
    if state == "null":
        assert failed is not None
        assert "no value" in (failed.get("message") or "")


def _github(text: str, state: str, gate: dict[str, Any]) -> None:
    last = text.splitlines()[-1]
    assert ("::error title=receval gate failed" in text) == (state in ("failed", "null"))
    assert ("::notice title=receval gate waived" in text) == (state == "waived")
    word = {"passed": "1 gate passed", "failed": "1 of 1 gate failed", "waived": "1 gate waived"}
    assert word[state if state != "null" else "failed"] in last, last


def _html(text: str, state: str, gate: dict[str, Any]) -> None:
    # html.py is another engineer's: its verdict words as it has them, the reason below
    word = {"passed": "pass", "failed": "FAIL", "null": "FAIL", "waived": "waived"}[state]
    assert word in text


def _latex(text: str, state: str, gate: dict[str, Any]) -> None:
    comments = [line for line in text.splitlines() if line.startswith("% ")]
    verdict = {
        "passed": "% gate passed: ",
        "failed": "% gate failed: ",
        "null": "% gate failed: ",
        "waived": "% gate waived: ",
    }[state]
    assert any(line.startswith(verdict) for line in comments), comments
    word = {"passed": "1 gate passed", "failed": "1 of 1 gate failed", "waived": "1 gate waived"}
    told = f"% gates: {word[state if state != 'null' else 'failed']}"
    assert any(line.startswith(told) for line in comments), comments
    if state == "null":
        assert "no value" in text
    assert "\\begin{tabular}" in text  # the table, still
    assert "\\bottomrule" in text


def _json(text: str, state: str, gate: dict[str, Any]) -> None:
    assert ("waived" in gate) == (state == "waived")


CHECKS: dict[str, Callable[[str, str, dict[str, Any]], None]] = {
    "table": _table,
    "json": _json,
    "markdown": _markdown,
    "csv": _csv,
    "junit": _junit,
    "github": _github,
    "html": _html,
    "latex": _latex,
}


# every format with the gate failing; the CI formats (no table) with it waived too
PROCESS_CASES = [(f.value, "failed") for f in Format]
PROCESS_CASES += [(f.value, "waived") for f in Format if f.value in ("junit", "github")]
