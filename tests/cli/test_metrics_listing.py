"""`receval metrics --format json | markdown`: the machine-readable metric listing.

The CLI runs as a subprocess (`python -m receval_cli`) with stdout a pipe, as a tool or a
docs build would run it. Expected values are facts about the metrics (ndcg is in [0, 1],
rmse is an error, trec_eval calls precision@k `P_k`, ...), not the listing's own code.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
from typing import Any

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from receval_cli.formats import ListingFormat
from receval_cli.metrics import REGISTRY, MetricSpec, SpecError, resolve
from receval_cli.report.metric_listing import markdown_table, metric_entry

ENTRY_KEYS = [
    "name",
    "aliases",
    "takes_cutoff",
    "scope",
    "direction",
    "bounds",
    "summary",
    "formula",
    "parameters",
    "presets",
    "tools",
]
PARAM_KEYS = ["name", "doc", "default", "required", "convention", "choices"]
COLUMNS = 7  # metric, definition, parameters, better, range, scope, tools


def receval(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "COLUMNS")}
    return subprocess.run(
        [sys.executable, "-m", "receval_cli", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,  # stdout and stderr are pipes, not a terminal
        text=True,
        encoding="utf-8",
        env={**env, "NO_COLOR": "1"},
        timeout=120,
    )


def _no_constants(name: str) -> Any:
    raise AssertionError(f"{name} is not valid JSON")


def parse_json(text: str) -> Any:
    """Strict JSON: NaN and Infinity (which json.loads accepts by default) fail."""
    return json.loads(text, parse_constant=_no_constants)


@pytest.fixture(scope="module")
def listing_run() -> subprocess.CompletedProcess[str]:
    return receval("metrics", "--format", "json")


@pytest.fixture(scope="module")
def entries(listing_run: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    document = parse_json(listing_run.stdout)
    return {entry["name"]: entry for entry in document["metrics"]}


@pytest.fixture(scope="module")
def markdown_run() -> subprocess.CompletedProcess[str]:
    return receval("metrics", "--format", "markdown")


# --- JSON -----------------------------------------------------------------------------


def test_json_listing_is_one_clean_document(listing_run: subprocess.CompletedProcess[str]) -> None:
    assert listing_run.returncode == 0, listing_run.stderr
    assert listing_run.stderr == ""
    document = parse_json(listing_run.stdout)
    assert list(document) == ["metrics"]
    assert isinstance(document["metrics"], list)
    # indent=2, keys in their fixed order (not sorted), one trailing newline
    assert listing_run.stdout == json.dumps(document, indent=2) + "\n"
    assert not listing_run.stdout.endswith("\n\n")
    assert "\x1b[" not in listing_run.stdout  # no terminal styling


def test_json_lists_exactly_the_registered_metrics(
    listing_run: subprocess.CompletedProcess[str],
) -> None:
    names = [entry["name"] for entry in parse_json(listing_run.stdout)["metrics"]]
    assert len(names) == len(set(names))
    assert set(names) == set(REGISTRY)
    assert names == list(REGISTRY)  # registry order, as the table shows them


def test_every_entry_has_the_documented_keys_in_order(entries: dict[str, Any]) -> None:
    for name, entry in entries.items():
        assert list(entry) == ENTRY_KEYS, name
        assert list(entry["bounds"]) == ["lower", "upper"], name
        assert entry["direction"] in {"higher", "lower", "count"}, name
        for param in entry["parameters"]:
            assert list(param) == PARAM_KEYS, (name, param)
        low, high = entry["bounds"]["lower"], entry["bounds"]["upper"]
        if low is not None and high is not None:
            assert low < high, name


def test_ndcg_entry(entries: dict[str, Any]) -> None:
    ndcg = entries["ndcg"]
    assert ndcg["takes_cutoff"] is True
    assert ndcg["direction"] == "higher"
    assert ndcg["bounds"] == {"lower": 0, "upper": 1}
    assert ndcg["scope"] == "user"
    assert "IDCG" in ndcg["formula"]
    params = {p["name"]: p for p in ndcg["parameters"]}
    assert params["gain"]["convention"] == "gain"
    assert params["gain"]["default"] == "linear"  # the gain convention's default
    assert set(params["gain"]["choices"]) == {"linear", "exponential", "binary"}
    assert params["gain"]["required"] is False
    # per-user metric: which users count is a parameter too
    assert params["users_without_relevant"]["default"] == "skip"
    assert ndcg["presets"]["trec_eval"] == "ndcg_cut_k"


def test_error_metrics_are_lower_is_better_and_unbounded_above(entries: dict[str, Any]) -> None:
    for name in ("mae", "mse", "rmse"):
        entry = entries[name]
        assert entry["direction"] == "lower", name
        assert entry["takes_cutoff"] is False, name
        assert entry["bounds"] == {"lower": 0, "upper": None}, name
    # r2 can be any negative number, at most 1
    assert entries["r2"]["bounds"] == {"lower": None, "upper": 1}
    assert entries["r2"]["direction"] == "higher"


def test_counts_aliases_and_preset_measures(entries: dict[str, Any]) -> None:
    assert entries["num_rel"]["direction"] == "count"
    assert entries["num_rel"]["bounds"]["upper"] is None
    assert "ap" in entries["map"]["aliases"]
    assert {"success", "hr"} <= set(entries["hit_rate"]["aliases"])
    assert {"rr", "recip_rank"} <= set(entries["mrr"]["aliases"])
    assert entries["precision"]["presets"]["trec_eval"] == "P_k"
    assert entries["r_precision"]["presets"]["trec_eval"] == "Rprec"
    assert entries["r_precision"]["takes_cutoff"] is False
    assert entries["rmse"]["presets"] == {}


def test_tools_are_the_presets_and_the_peer_table(entries: dict[str, Any]) -> None:
    from receval_cli.metrics import REGISTRY
    from receval_cli.metrics.peer_names import PEER_MEASURES

    assert set(PEER_MEASURES) <= set(REGISTRY)  # the table names registered metrics only
    for entry in entries.values():
        assert entry["presets"].items() <= entry["tools"].items(), entry["name"]
    assert entries["ndcg"]["tools"]["trec_eval"] == "ndcg_cut_k"
    assert entries["ndcg"]["tools"]["ir_measures"] == "nDCG@k"
    # a tool whose measure is a parametrised form of the metric: the spec and its measure
    assert entries["unexpectedness"]["presets"]["replay"] == (
        "unexpectedness@k(expected=history): Novelty@k (a user without recommendations "
        "scores 1 there); unexpectedness@k(denominator=k): Unexpectedness@k (a user without "
        "a baseline list scores 0 there)"
    )
    assert entries["serendipity"]["presets"]["recommenders"].startswith(
        "serendipity@k(denominator=list_length,relevance=ignored,unexpected=history): "
    )


def test_fixed_and_required_parameter_defaults(entries: dict[str, Any]) -> None:
    head = next(p for p in entries["long_tail_share"]["parameters"] if p["name"] == "head")
    assert head["default"] == 0.2  # beyond.py: Param("head", ..., default=0.2)
    assert head["convention"] is None
    assert head["required"] is False
    beta = next(p for p in entries["fbeta"]["parameters"] if p["name"] == "beta")
    assert beta["required"] is True
    assert beta["default"] is None
    max_weight = next(p for p in entries["ctr"]["parameters"] if p["name"] == "max_weight")
    assert max_weight["required"] is False  # optional: ctr then does not clip
    assert max_weight["default"] is None


def test_every_listed_parameter_and_choice_is_accepted_by_the_spec_checker(
    entries: dict[str, Any],
) -> None:
    """The listing agrees with what a config may write: each listed choice resolves, and a
    metric accepts no parameter the listing leaves out."""
    for name, entry in entries.items():
        k = 10 if entry["takes_cutoff"] else None
        required = tuple((p["name"], 1.0) for p in entry["parameters"] if p["required"])
        for param in entry["parameters"]:
            for choice in param["choices"]:
                resolve(MetricSpec(name, k, ((param["name"], choice), *required)))
        with pytest.raises(SpecError, match="has no parameter"):
            resolve(MetricSpec(name, k, (("not_a_listed_parameter", 1.0), *required)))
        if not entry["takes_cutoff"]:
            with pytest.raises(SpecError, match="takes no cutoff"):
                resolve(MetricSpec(name, 10, required))


def test_an_infinite_bound_is_written_as_null() -> None:
    unbounded = dataclasses.replace(REGISTRY["rmse"], upper_bound=math.inf)
    entry = metric_entry(unbounded)
    assert entry["bounds"] == {"lower": 0.0, "upper": None}
    json.dumps(entry, allow_nan=False)  # would raise on inf


@pytest.mark.parametrize(
    ("given", "canonical"), [("ndcg", "ndcg"), ("ap", "map"), ("hr", "hit_rate")]
)
@pytest.mark.slow
def test_one_metric_by_name_or_alias_is_its_entry_alone(
    given: str, canonical: str, entries: dict[str, Any]
) -> None:
    done = receval("metrics", given, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.endswith("}\n")
    assert parse_json(done.stdout) == entries[canonical]


# --- Markdown -------------------------------------------------------------------------


def _table_tokens(text: str) -> list[Token]:
    tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(text)  # GFM
    assert [t.type for t in tokens].count("table_open") == 1
    return tokens


def _cell_text(inline: Token) -> str:
    """A cell's text as a reader sees it: <br> as a line break, code spans as their text."""
    parts = []
    for child in inline.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type == "html_inline":
            assert child.content == "<br>", child.content
            parts.append("\n")
        else:  # emphasis, a link, ...: text that escaped its escaping
            raise AssertionError(f"unexpected {child.type} in {inline.content!r}")
    return "".join(parts)


def _rows(tokens: list[Token]) -> tuple[list[str], list[list[str]]]:
    """The header's cells and the body rows' cells, as text."""
    header: list[str] = []
    rows: list[list[str]] = []
    in_body = False
    for index, token in enumerate(tokens):
        if token.type == "tbody_open":
            in_body = True
        elif token.type == "tr_open" and in_body:
            rows.append([])
        elif token.type == "inline" and tokens[index - 1].type in ("th_open", "td_open"):
            (rows[-1] if in_body else header).append(_cell_text(token))
    return header, rows


def test_markdown_is_one_table_with_one_row_per_metric(
    markdown_run: subprocess.CompletedProcess[str],
) -> None:
    assert markdown_run.returncode == 0, markdown_run.stderr
    assert markdown_run.stderr == ""
    assert markdown_run.stdout.endswith(" |\n")
    lines = markdown_run.stdout.splitlines()
    assert len(lines) == 2 + len(REGISTRY)  # header, delimiter row, one line per metric
    header, rows = _rows(_table_tokens(markdown_run.stdout))
    assert len(header) == COLUMNS
    assert len(rows) == len(REGISTRY)
    for row in rows:
        assert len(row) == COLUMNS, row  # an unescaped | would add a cell
    expected = [d.name + ("@k" if d.takes_cutoff else "") for d in REGISTRY.values()]
    assert [row[0].split("\n")[0] for row in rows] == expected


def test_markdown_cells_read_as_the_registry_text(
    markdown_run: subprocess.CompletedProcess[str],
) -> None:
    """Every definition renders back to the summary and the formula exactly: the escaping
    of |, *, \\, [ ], < and _ loses nothing and turns nothing into markup."""
    _, rows = _rows(_table_tokens(markdown_run.stdout))
    by_name = {row[0].split("\n")[0].removesuffix("@k"): row for row in rows}
    for name, definition in REGISTRY.items():
        row = by_name[name]
        assert row[1] == f"{definition.summary}\n{definition.formula}", name
        for param in definition.all_params():
            assert f"{param.name}: {param.doc}" in row[2], (name, param.name)
    assert "|R|" in by_name["recall"][1]
    assert "ap" in by_name["map"][0].split("\n")[1]
    assert by_name["ndcg"][3] == "higher"
    assert by_name["rmse"][3] == "lower"
    assert by_name["num_rel"][3] == "count"
    assert by_name["ndcg"][4] == "[0, 1]"
    assert by_name["rmse"][4] == "[0, inf]"
    assert "trec_eval: P_k" in by_name["precision"][6].split("\n")
    # a preset measure with | in it stays one cell and reads whole
    assert "matching|ips|dr" in by_name["ctr"][6]


def test_markdown_names_every_tool_that_defines_a_metric(
    markdown_run: subprocess.CompletedProcess[str],
) -> None:
    """The last column is the entry's `tools`: the presets' measures, then the peer
    libraries' (ir_measures writes nDCG@k, torchmetrics has a class for it)."""
    _, rows = _rows(_table_tokens(markdown_run.stdout))
    by_name = {row[0].split("\n")[0].removesuffix("@k"): row for row in rows}
    tools = by_name["ndcg"][6].split("\n")
    assert tools[0] == "trec_eval: ndcg_cut_k"  # a preset's first
    assert "ir_measures: nDCG@k" in tools
    assert "torchmetrics: RetrievalNormalizedDCG" in tools


def test_markdown_is_the_table_of_the_docs(
    markdown_run: subprocess.CompletedProcess[str],
) -> None:
    """docs/metrics.md holds what the command writes, verbatim, as its generated block."""
    from pathlib import Path

    from receval_cli.cli.doc_blocks import END, START

    docs = Path(__file__).parents[2] / "docs" / "metrics.md"
    block = START.format("receval metrics --format markdown") + markdown_run.stdout + END
    assert block in docs.read_text(encoding="utf-8")


def test_markdown_keeps_any_text_in_its_cell() -> None:
    """Line breaks, pipes, backslashes and Markdown syntax in a definition stay text in
    one cell (no metric has them all today; a new one may)."""
    summary = "two\nlines, *not emphasis* _nor this_ <b>no html</b> [no](link) `no code`"
    formula = "|a| \\| b \\ ~~c~~ &amp; d|"
    odd = dataclasses.replace(REGISTRY["recall"], summary=summary, formula=formula)
    text = markdown_table([metric_entry(odd)])
    assert len(text.splitlines()) == 3
    _, rows = _rows(_table_tokens(text))
    assert len(rows) == 1
    assert len(rows[0]) == COLUMNS
    assert rows[0][1] == f"{summary}\n{formula}"


def test_markdown_for_one_metric_by_alias() -> None:
    done = receval("metrics", "rprec", "-f", "markdown")
    assert done.returncode == 0, done.stderr
    _, rows = _rows(_table_tokens(done.stdout))
    assert len(rows) == 1
    assert rows[0][0] == "r_precision\naliases: rprec"


# --- errors, and the default ----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["json", "markdown", "table"])
def test_unknown_metric_is_a_usage_error(fmt: str) -> None:
    done = receval("metrics", "ndgc", "--format", fmt)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("error: unknown metric 'ndgc'")
    assert "Did you mean 'ndcg'" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1  # one line


def test_unknown_format_is_a_usage_error() -> None:
    done = receval("metrics", "--format", "yaml")
    assert done.returncode == 2
    assert done.stdout == ""
    assert "'yaml' is not one of" in done.stderr  # the option parser's own usage error
    for fmt in ListingFormat:
        assert fmt.value in done.stderr
    assert "Traceback" not in done.stderr


def test_help_names_every_format() -> None:
    done = receval("metrics", "--help")
    assert done.returncode == 0
    for fmt in ListingFormat:
        assert fmt.value in done.stdout


def test_table_stays_the_default() -> None:
    done = receval("metrics")
    assert done.returncode == 0, done.stderr
    assert "receval metrics" in done.stdout  # the rich table's title
    assert "ndcg@k" in done.stdout
    assert not done.stdout.lstrip().startswith(("{", "|"))
    assert done.stdout == receval("metrics", "--format", "table").stdout
