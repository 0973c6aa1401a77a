"""`receval run --format latex`: a booktabs table for a paper, as ranx's
to_latex prints one: a row per model, a column per metric, the best in bold, a
significant win or loss against the baseline marked, the run and its gates in comments."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from cli_helpers import hand_case, invoke, write

from receval_cli.report.latex import latex_text

ROOT = Path(__file__).resolve().parents[2]


def latex(*args: str | Path) -> str:
    result = invoke("run", *args, "-q", "--format", "latex")
    assert result.exit_code == 0, result.stderr
    return result.stdout


def table_rows(text: str) -> list[str]:
    body = text.split("\\midrule\n")[1].split("\\bottomrule")[0]
    return body.strip().splitlines()


def test_one_model_by_hand(tmp_path: Path) -> None:
    """The hand case: precision@1 0.5 (u1 misses, u2 hits); ndcg@2: u1 has b at rank 2
    (1/log2 3 against an ideal 1), u2 has d at rank 1 (1 against an ideal 1 + 1/log2 3,
    its two relevant items d and f)."""
    text = latex(hand_case(tmp_path))
    assert "\\begin{tabular}{lrr}\n\\toprule\n" in text
    assert "Model & \\texttt{precision@1} & \\texttt{ndcg@2} \\\\\n\\midrule\n" in text
    third = 1 / math.log2(3)
    ndcg = (third / 1.0 + 1.0 / (1.0 + third)) / 2
    assert table_rows(text) == [f"model & 0.5000 & {ndcg:.4f} \\\\"]
    assert "\\textbf" not in text  # one model: no best to show
    assert "Evaluated by receval" in text
    assert "over 2 users." in text


def test_several_models_bold_the_best_and_mark_significant_wins() -> None:
    text = latex(ROOT / "configs" / "compare.yaml")
    rows = table_rows(text)
    assert rows[0].startswith("popular & 0.0820 & 0.0735 ")
    assert rows[1].startswith(
        "model & \\textbf{0.5348}$^{\\dagger}$ & \\textbf{0.4320}$^{\\dagger}$"
    )
    assert "\\texttt{hit\\_rate@10}" in text
    assert (
        "$^{\\dagger}$/$^{\\ddagger}$: a significant win/loss against popular (paired t "
        "test, holm correction over 6 comparisons, level 0.95)." in text
    )
    assert "% gates: all 3 gates passed" in text


def test_a_tex_output_is_latex(tmp_path: Path) -> None:
    out = tmp_path / "table.tex"
    result = invoke("run", hand_case(tmp_path), "-q", "-o", out)
    assert result.exit_code == 0, result.stderr
    assert out.read_text(encoding="utf-8").rstrip().endswith("\\end{table}")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hit_rate@10", "hit\\_rate@10"),
        ("a&b%c$d#e", "a\\&b\\%c\\$d\\#e"),
        ("{x}~^\\", "\\{x\\}\\textasciitilde{}\\textasciicircum{}\\textbackslash{}"),
        ("two\nlines\tand\x1b", "two lines and\\textbackslash{}x1b"),
    ],
)
def test_latex_text_escapes_what_latex_reads(text: str, expected: str) -> None:
    assert latex_text(text) == expected


def test_a_model_name_is_escaped_in_the_table(tmp_path: Path) -> None:
    config = hand_case(tmp_path)
    write(tmp_path / "other.csv", (tmp_path / "predictions.csv").read_text())
    text = config.read_text().replace(
        "predictions:\n  path: predictions.csv",
        "predictions:\n  models:\n    a_b&c: predictions.csv\n    x%y: other.csv",
    )
    config.write_text(text)
    rows = table_rows(latex(config))
    assert [row.split(" & ")[0] for row in rows] == ["a\\_b\\&c", "x\\%y"]
