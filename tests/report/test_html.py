"""`receval run --format html`: one self-contained page with the metrics and the figures.

The bundled configs (quickstart: one model, several cutoffs; compare: two models with
intervals and comparisons; beyond: beyond-accuracy metrics with a catalog; segments: two
models by country and by new users) are rendered
once each (module fixture) and checked against the JSON report of the same run, the
per-user Parquet file and plain polars computations on the sample files. The Chromium
tests render the pages headless: no console message (the page has no script, so any
message is an error: a blocked fetch, a parse error), and a screenshot that is not blank.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from cli_helpers import NDCG_2, PRECISION_1, hand_case, invoke, write, write_config
from html_pages import (
    CONFIGS,
    EXACT,
    HOSTILE,
    REPRODUCIBLE,
    ROOT,
    SAMPLE,
    WINDOW,
    Run,
    exact,
    expected_figures,
    figures,
    models_of,
    needs_chromium,
    render_in_chromium,
    top_10_exposure,
)

pytestmark = pytest.mark.slow  # left out of `uv run pytest`; .ci/run runs it


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    folder = tmp_path_factory.mktemp("html")
    found = {}
    for name in CONFIGS:
        config = ROOT / "configs" / f"{name}.yaml"
        page = folder / f"{name}.html"
        # the page shows the run's start and id: fixed by SOURCE_DATE_EPOCH
        written = invoke(
            "run", config, "--format", "html", "--output", page, "--quiet", env=REPRODUCIBLE
        )
        assert written.exit_code == 0, written.stderr
        printed = invoke("run", config, "--format", "html", env=REPRODUCIBLE)
        assert printed.exit_code == 0, printed.stderr
        parquet = folder / f"{name}.parquet"
        as_json = invoke("run", config, "--format", "json", "--per-user", parquet)
        assert as_json.exit_code == 0, as_json.stderr
        per_user = pl.read_parquet(parquet)
        columns = per_user.columns
        segment_attributes = yaml.safe_load(config.read_text(encoding="utf-8")).get(
            "segment_by", []
        )
        found[name] = Run(
            per_user=per_user,
            page=page.read_text(encoding="utf-8"),
            printed=printed.stdout,
            report=json.loads(as_json.stdout),
            # the metric columns (not the segment attributes beside them)
            per_user_metrics=[
                c for c in columns if c not in ("model", "user", "status", *segment_attributes)
            ],
        )
    return found


@pytest.mark.parametrize("name", CONFIGS)
def test_page_shows_every_value_of_the_json_report(runs: dict[str, Run], name: str) -> None:
    """Every metric of every model (4 decimals, exact in the tooltip), every interval and
    comparison difference, the user counts and one verdict per gate, as in the JSON."""
    run = runs[name]
    page, report = run.page, run.report
    for model in models_of(report).values():
        for metric, value in model["metrics"].items():
            assert exact(value) in page, (metric, value)
        for metric, (low, high) in model.get("confidence", {}).get("intervals", {}).items():
            assert f"[{exact(low)}, {exact(high)}]" in page, metric
        for key in ("in_ground_truth", "evaluated", "only_in_predictions"):
            assert f"<td>{key}</td>" + f'<td class="num">{model["users"][key]}</td>' in page
    for result in report.get("comparisons", {}).get("results", []):
        assert exact(result["difference"], signed=True) in page, result
    gates = report["gates"]["results"]
    assert page.count('<td class="pass">pass</td>') == sum(g["passed"] for g in gates)
    assert page.count('<td class="fail">FAIL</td>') == sum(not g["passed"] for g in gates)
    several = len(report["models"]) > 1  # the best is marked among several models only
    for metric, best in report["best"].items():
        value = report["models"][best[0]]["metrics"][metric]
        assert (f"<strong>{exact(value)}*</strong>" in page) == several, metric


@pytest.mark.parametrize("name", CONFIGS)
def test_one_svg_per_expected_figure(runs: dict[str, Run], name: str) -> None:
    """A curve per metric family at 2+ cutoffs, a histogram per per-user metric, the
    exposure figures with beyond-accuracy metrics, a comparison figure with a baseline;
    each figure is one inline SVG and the page has no other."""
    run = runs[name]
    found = figures(run.page)
    shown: dict[str, set[str]] = {}
    for kind, figure_name, body in found:
        assert body.count("<svg ") == 1, (kind, figure_name)
        assert figure_name not in shown.get(kind, set()), (kind, figure_name)
        shown.setdefault(kind, set()).add(figure_name)
    expected = expected_figures(run)
    assert {k: v for k, v in shown.items() if v} == {k: v for k, v in expected.items() if v}
    assert run.page.count("<svg ") == len(found)
    if name == "quickstart":  # the families, written out once
        assert expected["curve"] == {
            f"{m}@k" for m in ("ndcg", "precision", "recall", "map", "mrr", "hit_rate")
        }


@pytest.mark.parametrize("name", CONFIGS)
def test_histograms_hold_the_users_of_each_mean(runs: dict[str, Run], name: str) -> None:
    """Each histogram's caption: per model, the users in the metric's mean (as the JSON's
    users block counts them) and their mean, which is the metric's value."""
    run = runs[name]
    models = models_of(run.report)
    for kind, metric, body in figures(run.page):
        if kind != "histogram":
            continue
        caption = body.split("<figcaption>")[1]
        summaries = re.findall(r"(?:([^;:>]+): )?(\d+) users, mean " + EXACT.pattern, caption)
        assert len(summaries) == len(models), caption
        for (model_name, users, mean), (expected_name, model) in zip(
            summaries, models.items(), strict=True
        ):
            if len(models) > 1:
                assert html.unescape(model_name.strip()) == expected_name
            counted = model["users"].get("evaluated_per_metric", {}).get(metric)
            assert int(users) == (counted or model["users"]["evaluated"]), metric
            assert float(mean) == pytest.approx(model["metrics"][metric], rel=1e-12), metric


def test_exposure_figures_match_an_independent_count(runs: dict[str, Run]) -> None:
    """beyond.yaml: the long tail's caption (catalog size, most exposed item, items never
    recommended) and the Lorenz curve's Gini, against the top-10 exposure counted here over
    the catalog, the Gini formula written out, and the JSON's gini@10."""
    run = runs["beyond"]
    exposure = top_10_exposure()
    catalog = pl.read_ndjson(SAMPLE / "catalog.jsonl").select("item_id")
    counts = sorted(
        catalog.join(exposure, on="item_id", how="left").get_column("lists").fill_null(0)
    )
    n, total = len(counts), sum(counts)
    gini = sum((2 * j - n - 1) * x for j, x in enumerate(counts, start=1)) / (n * total)
    assert gini == pytest.approx(run.report["models"]["model"]["metrics"]["gini@10"], rel=1e-12)
    kinds = {kind: body for kind, _, body in figures(run.page)}
    never = sum(1 for c in counts if c == 0)
    assert (
        f"{n} items, the most exposed in {max(counts)} lists, {never} never recommended"
        in (kinds["long_tail"])
    )
    shown = re.search(r"Gini " + EXACT.pattern, kinds["lorenz"])
    assert shown is not None
    assert float(shown.group(1)) == pytest.approx(gini, rel=1e-12)
    assert f"in the top-10 lists over the catalog ({n} items)" in kinds["lorenz"]


@pytest.mark.parametrize("name", CONFIGS)
def test_page_fetches_nothing(runs: dict[str, Run], name: str) -> None:
    """No URL, no src=, only in-page links (#...), no stylesheet or script to load, and a
    Content-Security-Policy that forbids every fetch."""
    page = runs[name].page
    assert "http://" not in page
    assert "https://" not in page
    assert re.search(r"\ssrc\s*=", page) is None
    hrefs = re.findall(r'href="([^"]*)"', page)
    assert hrefs
    assert all(h.startswith("#") for h in hrefs), {h for h in hrefs if not h.startswith("#")}
    assert set(re.findall(r"url\((.)", page)) <= {"#"}
    for tag in ("<script", "<link", "<img", "<iframe", "@import"):
        assert tag not in page
    assert "default-src 'none'" in page.split("</head>")[0]


@pytest.mark.parametrize("name", CONFIGS)
def test_same_run_same_bytes(runs: dict[str, Run], name: str) -> None:
    """Two runs (one written to a file, one printed on stdout) with the same
    SOURCE_DATE_EPOCH give the same bytes."""
    run = runs[name]
    assert run.page.encode("utf-8") == run.printed.encode("utf-8")
    assert run.page.startswith("<!DOCTYPE html>")


def test_names_and_paths_from_the_data_are_escaped(tmp_path: Path) -> None:
    """A model named like a script tag, read from a path that holds one, a model named
    like mathtext with markup, and one with a leading underscore (which matplotlib hides
    from legends): shown as text everywhere, in the tables and in the figures' text."""
    hand_case(tmp_path)
    hostile_file = write(tmp_path / "<script>alert(1)<" / "script>.csv", "")
    shutil.copy(tmp_path / "predictions.csv", hostile_file)
    assert str(hostile_file).endswith(HOSTILE + ".csv")
    config = write_config(
        tmp_path,
        {
            "predictions": {
                "models": {
                    HOSTILE: str(hostile_file),
                    "$x^2$ & <b>": "predictions.csv",
                    "_under": "predictions.csv",
                }
            },
            "ground_truth": {"path": "truth.csv"},
            "metrics": ["precision@1", "ndcg@1", "ndcg@2"],
        },
        "hostile.yaml",
    )
    page_path = tmp_path / "page.html"
    result = invoke("run", config, "--output", page_path, "--quiet")
    assert result.exit_code == 0, result.stderr
    page = page_path.read_text(encoding="utf-8")
    assert "<script" not in page
    assert "<b>" not in page
    escaped = html.escape(HOSTILE)
    assert f"<th>{escaped}</th>" in page  # the metric table's column
    assert f"{escaped}.csv" in page  # the inputs and the config
    svg_texts = re.findall(r"<text [^>]*>([^<]*)</text>", page)
    assert escaped in svg_texts  # a legend
    assert "$x^2$ &amp; &lt;b&gt;" in svg_texts  # no mathtext, no markup
    assert "\u200b_under" in svg_texts  # in the legend, not hidden


def test_segments_are_tabled(tmp_path: Path) -> None:
    """segment_by: one column per segment (with its users), its values as in the JSON."""
    config = hand_case(tmp_path, segment_by=["group"])
    write(tmp_path / "truth.csv", "user,item,group\nu1,b,a\nu2,d,b\nu2,f,b\n")
    page_path = tmp_path / "page.html"
    assert invoke("run", config, "--output", page_path, "--quiet").exit_code == 0
    page = page_path.read_text(encoding="utf-8")
    report = json.loads(invoke("run", config, "--format", "json").stdout)
    section = page.split('<section id="segments">')[1].split("</section>")[0]
    for name, segment in report["models"]["model"]["segments"].items():
        assert f"<th>{name}<br><small>{segment['users']} users</small></th>" in section
        for value in segment["metrics"].values():
            assert exact(value) in section, name


def test_a_partitioned_run_draws_the_same_page_as_one_pass(tmp_path: Path) -> None:
    """partitions: 2 keeps the per-user rows for the HTML report: the same figures as a
    single pass (the distributions included), and the same values."""
    metrics = ["precision@1", "ndcg@1", "ndcg@2"]
    pages = {}
    for partitions in (1, 2):
        config = hand_case(tmp_path / str(partitions), partitions=partitions, metrics=metrics)
        page_path = tmp_path / f"page-{partitions}.html"
        assert invoke("run", config, "--output", page_path, "--quiet").exit_code == 0
        pages[partitions] = page_path.read_text(encoding="utf-8")
    assert exact(PRECISION_1) in pages[2]
    assert exact(NDCG_2) in pages[2]
    kinds = [kind for kind, _, _ in figures(pages[2])]
    assert kinds == [kind for kind, _, _ in figures(pages[1])]
    assert "kept no per-user values" not in pages[2]


def test_other_formats_do_not_import_matplotlib() -> None:
    """matplotlib is imported for --format html only (a fresh interpreter)."""
    code = (
        "import sys; from typer.testing import CliRunner; from receval_cli.cli.app import app; "
        f"r = CliRunner().invoke(app, ['run', {str(ROOT / 'configs' / 'quickstart.yaml')!r}, "
        "'--format', 'json']); assert r.exit_code == 0, r.output; "
        "print('matplotlib' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "False"


@needs_chromium
def test_console_detection_flags_a_broken_page(tmp_path: Path) -> None:
    """The negative control: a page that logs an error, throws, and tries a fetch that its
    Content-Security-Policy blocks. The helper must report all three."""
    page = write(
        tmp_path / "broken.html",
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; script-src 'unsafe-inline'\">"
        "<title>control</title></head><body><p>control</p>"
        '<script>console.error("receval-control-error");</script>'
        '<script>throw new Error("receval-control-throw");</script>'
        '<img src="http://example.invalid/receval-control.png" alt="">'
        "</body></html>",
    )
    messages = render_in_chromium(page, tmp_path / "broken.png", tmp_path / "profile")
    joined = "\n".join(messages)
    assert "receval-control-error" in joined
    assert "receval-control-throw" in joined
    assert "example.invalid/receval-control.png" in joined
    assert (tmp_path / "broken.png").is_file()


@needs_chromium
@pytest.mark.parametrize("name", CONFIGS)
def test_page_renders_in_chromium(runs: dict[str, Run], name: str, tmp_path: Path) -> None:
    """No console message; a screenshot of the requested size that is not blank: many
    distinct colours (text, figures) and a fair share of non-background pixels."""
    page = write(tmp_path / f"{name}.html", runs[name].page)
    screenshot = tmp_path / f"{name}.png"
    assert render_in_chromium(page, screenshot, tmp_path / "profile") == []
    from matplotlib.image import imread  # here: collecting the module stays light

    image = imread(screenshot)
    assert image.shape[:2] == (WINDOW[1], WINDOW[0])
    pixels = np.round(image[..., :3] * 255).astype(np.uint8).reshape(-1, 3)
    colours, counts = np.unique(pixels, axis=0, return_counts=True)
    assert len(colours) >= 100, len(colours)
    assert 1 - counts.max() / len(pixels) >= 0.05  # not one colour over 95% of the page


def test_pr_curve_draws_the_interpolated_precision_at_11_recall_levels(tmp_path: Path) -> None:
    """pr_curve: true adds iprec_at_recall at the levels 0, 0.1, ..., 1 to the report, and
    the page draws them as one curve per model. The hand case (cli_helpers): u1 finds its
    one relevant item at rank 2, so 1/2 at every level; u2 finds d (rank 1) of d, f, so 1
    while round(2 L) <= 1 (L <= 0.7) and 0 from L = 0.8. A second model lists b first."""
    write(tmp_path / "other.csv", "user,item,score\nu1,b,0.9\nu2,e,0.9\nu2,d,0.1\n")
    config = hand_case(
        tmp_path,
        predictions={"models": {"first": "predictions.csv", "other": "other.csv"}},
        pr_curve=True,
    )
    report = json.loads(invoke("run", config, "--format", "json").stdout)
    levels = [f"iprec_at_recall(level={i / 10!r})" for i in range(11)]
    first = report["models"]["first"]["metrics"]
    assert [first[m] for m in levels] == [0.75] * 8 + [0.25] * 3
    # other: u1 1 at every level; u2 d at rank 2: 1/2 up to L = 0.7, then 0
    other = report["models"]["other"]["metrics"]
    assert [other[m] for m in levels] == [0.75] * 8 + [0.5] * 3
    page_path = tmp_path / "page.html"
    assert invoke("run", config, "--output", page_path, "--quiet").exit_code == 0
    page = page_path.read_text(encoding="utf-8")
    drawn = [(name, body) for kind, name, body in figures(page) if kind == "pr_curve"]
    assert [name for name, _ in drawn] == ["iprec_at_recall"]
    svg = drawn[0][1]
    assert ">first<" in svg  # the legend: one line per model
    assert ">other<" in svg
    assert "recall levels 0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1" in svg


def test_no_pr_curve_without_two_recall_levels(tmp_path: Path) -> None:
    config = hand_case(tmp_path, metrics=["precision@1", "iprec_at_recall(level=0.5)"])
    page_path = tmp_path / "page.html"
    assert invoke("run", config, "--output", page_path, "--quiet").exit_code == 0
    page = page_path.read_text(encoding="utf-8")
    assert '<section id="pr_curve">' not in page


def test_a_geometric_mean_histogram_shows_the_geometric_mean(tmp_path: Path) -> None:
    """map(mean=geometric): u1 finds b at rank 1 (AP 1), u2 finds d at rank 2 of its two
    relevant items (AP 1/4): the caption's mean is sqrt(1 * 1/4) = 1/2, the metric's value,
    not the arithmetic 5/8."""
    rows = "user,item,score\nu1,b,0.9\nu2,e,0.9\nu2,d,0.1\n"
    config = hand_case(tmp_path, rows=rows, metrics=["map(mean=geometric)"])
    report = json.loads(invoke("run", config, "--format", "json").stdout)
    assert report["models"]["model"]["metrics"]["map(mean=geometric)"] == pytest.approx(0.5)
    page_path = tmp_path / "page.html"
    assert invoke("run", config, "--output", page_path, "--quiet").exit_code == 0
    page = page_path.read_text(encoding="utf-8")
    (body,) = [b for kind, _, b in figures(page) if kind == "histogram"]
    caption = body.split("<figcaption>")[1]
    shown = re.search(r"2 users, geometric mean " + EXACT.pattern, caption)
    assert shown is not None, caption
    assert float(shown.group(1)) == pytest.approx(0.5, abs=1e-15)
