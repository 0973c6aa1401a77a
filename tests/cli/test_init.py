"""`receval init`: the guessed starter config, the template, their errors; shell completion.

A guessed config is checked two ways: the columns it names (read back from the YAML) are
the ones the test expects, and `receval run` on it gives exactly the metrics of a config
written by hand with those columns, on the same files.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from cli_helpers import (
    assert_no_traceback,
    assert_user_error,
    invoke,
    run_json,
    write,
    write_config,
)

from receval_cli.config.conventions import Conventions
from receval_cli.config.loading import load_config
from receval_cli.config.model import Config
from receval_cli.inputs.starter import (
    CUTOFFS,
    METRICS,
    PREDICTIONS_PLACEHOLDER,
    TRUTH_PLACEHOLDER,
    commented_conventions,
    template,
)
from receval_cli.metrics import lookup

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"

# four users, items 1-6; the scores order the items unlike their ids, so a wrong column
# mapping changes the metrics
USERS = ["a", "a", "a", "b", "b", "b", "c", "c", "d", "d"]
ITEMS = [3, 1, 5, 2, 6, 4, 1, 2, 5, 3]
SCORES = [0.9, 0.5, 0.7, 0.2, 0.8, 0.4, 0.6, 0.3, 0.1, 0.95]
TRUTH = {
    "user": ["a", "a", "b", "c", "c", "d"],
    "item": [1, 5, 6, 2, 4, 5],
    "grade": [3, 1, 2, 1, 3, 2],
}


def _ranks() -> list[int]:
    """Each item's rank within its user, by score descending."""
    frame = pl.DataFrame({"u": USERS, "s": SCORES})
    ranks = frame.select(pl.col("s").rank("ordinal", descending=True).over("u"))
    return [int(r) for r in ranks.to_series()]


def _lists() -> tuple[list[str], list[list[int]]]:
    """Each user's items in score order."""
    users: list[str] = []
    lists: list[list[int]] = []
    for user in dict.fromkeys(USERS):
        rows = [(s, i) for u, i, s in zip(USERS, ITEMS, SCORES, strict=True) if u == user]
        users.append(user)
        lists.append([i for _, i in sorted(rows, reverse=True)])
    return users, lists


def write_frame(frame: pl.DataFrame, path: Path) -> Path:
    """Write a frame as CSV (lists joined by |), Parquet or JSONL, by the extension."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".csv":
        lists = [n for n, t in frame.schema.items() if isinstance(t, pl.List)]
        text = [pl.col(n).list.eval(pl.element().cast(pl.String)).list.join("|") for n in lists]
        frame.with_columns(text).write_csv(path)
    elif path.suffix == ".parquet":
        frame.write_parquet(path)
    else:
        frame.write_ndjson(path)
    return path


# layout: (predictions frame, ground-truth frame, their columns for a hand-written config)
def _layouts() -> dict[str, tuple[pl.DataFrame, pl.DataFrame, dict[str, Any], dict[str, Any]]]:
    users, lists = _lists()
    truth = pl.DataFrame(TRUTH)
    return {
        "score": (
            pl.DataFrame({"userId": USERS, "movie_id": ITEMS, "prediction": SCORES}),
            truth.rename({"user": "userId", "item": "movie_id", "grade": "rating"}),
            {"user": "userId", "item": "movie_id", "score": "prediction"},
            {"user": "userId", "item": "movie_id", "relevance": "rating"},
        ),
        "rank": (
            pl.DataFrame({"customer": USERS, "product": ITEMS, "position": _ranks()}),
            truth.rename({"user": "customer", "item": "product"}).drop("grade"),
            {"user": "customer", "item": "product", "rank": "position"},
            {"user": "customer", "item": "product"},
        ),
        "items": (
            pl.DataFrame({"qid": users, "recommendations": lists}),
            truth.rename({"user": "qid", "item": "docno", "grade": "label"}),
            {"user": "qid", "items": "recommendations"},
            {"user": "qid", "item": "docno", "relevance": "label"},
        ),
    }


LAYOUTS = _layouts()


def init(folder: Path, predictions: Path, truth: Path, *extra: str) -> tuple[Path, str]:
    """Run `receval init` into folder/receval.yaml; the config and stderr."""
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "receval.yaml"
    result = invoke("init", "-p", predictions, "-g", truth, "-o", config, *extra)
    assert_no_traceback(result)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    return config, result.stderr


def columns(config: Path) -> tuple[dict[str, str], dict[str, str]]:
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    return data["predictions"]["columns"], data["ground_truth"]["columns"]


def same_metrics(guessed: Path, hand: dict[str, Any], folder: Path) -> dict[str, Any]:
    """Run both configs; assert the metrics agree; the guessed config's report."""
    report = run_json(guessed)
    expected = run_json(write_config(folder, hand, "hand.yaml"))
    assert report["models"]["model"]["metrics"] == expected["models"]["model"]["metrics"]
    assert list(report["models"]["model"]["metrics"]) == [
        f"{m}@{k}" for m in METRICS for k in CUTOFFS
    ]
    return report


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_guessed_config_runs_as_is(tmp_path: Path, layout: str, fmt: str) -> None:
    preds, truth, pred_columns, truth_columns = LAYOUTS[layout]
    data = tmp_path / "data"
    pred_file = write_frame(preds, data / f"predictions.{fmt}")
    truth_file = write_frame(truth, data / f"truth.{fmt}")
    config, _ = init(tmp_path / "conf", pred_file, truth_file)
    assert columns(config) == (pred_columns, truth_columns)
    assert f"path: ../data/predictions.{fmt}" in config.read_text(encoding="utf-8")
    hand = {
        "predictions": {"path": str(pred_file), "columns": pred_columns},
        "ground_truth": {"path": str(truth_file), "columns": truth_columns},
        "cutoffs": list(CUTOFFS),
        "metrics": list(METRICS),
    }
    report = same_metrics(config, hand, tmp_path)
    assert report["models"]["model"]["inputs"]["predictions"]["layout"] == layout


def test_sample_data(tmp_path: Path) -> None:
    config, stderr = init(tmp_path, SAMPLE / "predictions.csv", SAMPLE / "ground_truth.parquet")
    assert columns(config) == (
        {"user": "user_id", "item": "item_id", "score": "score"},
        {"user": "user_id", "item": "item_id", "relevance": "rating"},
    )
    text = config.read_text(encoding="utf-8")
    # the grades of the sample truth are 1-5 (sample_data/generate.py)
    assert "# CHECK: grades from 1 to 5 in the first 1000 rows" in text
    assert "  # - {name: ndcg, gain: exponential}" in text
    assert stderr.endswith(f"wrote {config}; run it with: receval run {config}\n")
    assert "  relevance <- rating\n" in stderr
    hand = {
        "predictions": {
            "path": str(SAMPLE / "predictions.csv"),
            "columns": {"user": "user_id", "item": "item_id", "score": "score"},
        },
        "ground_truth": {
            "path": str(SAMPLE / "ground_truth.parquet"),
            "columns": {"user": "user_id", "item": "item_id", "relevance": "rating"},
        },
        "cutoffs": list(CUTOFFS),
        "metrics": list(METRICS),
    }
    same_metrics(config, hand, tmp_path)


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_a_ground_truth_of_lists_with_grades(tmp_path: Path, fmt: str) -> None:
    preds, truth, pred_columns, _ = LAYOUTS["score"]
    lists = truth.group_by("userId", maintain_order=True).agg(
        pl.col("movie_id").alias("liked"), pl.col("rating").alias("ratings")
    )
    pred_file = write_frame(preds, tmp_path / "p.parquet")
    truth_file = write_frame(lists, tmp_path / f"t.{fmt}")
    config, stderr = init(tmp_path, pred_file, truth_file)
    truth_columns = {"user": "userId", "items": "liked", "relevances": "ratings"}
    assert columns(config)[1] == truth_columns
    assert "check:" not in stderr  # every column has a usual name
    hand = {
        "predictions": {"path": str(pred_file), "columns": pred_columns},
        "ground_truth": {"path": str(truth_file), "columns": truth_columns},
        "cutoffs": list(CUTOFFS),
        "metrics": list(METRICS),
    }
    report = same_metrics(config, hand, tmp_path)
    assert report["models"]["model"]["inputs"]["ground_truth"]["layout"] == "items"


def test_sample_data_lists(tmp_path: Path) -> None:
    lists = SAMPLE / "predictions_lists.jsonl"
    config, _ = init(tmp_path, lists, SAMPLE / "ground_truth.parquet")
    assert columns(config)[0] == {"user": "user_id", "items": "items"}
    assert run_json(config)["models"]["model"]["inputs"]["predictions"]["layout"] == "items"


def test_stdout_config_paths_are_relative_to_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    preds, truth, _, _ = LAYOUTS["score"]
    write_frame(preds, tmp_path / "in" / "p.csv")
    write_frame(truth, tmp_path / "in" / "t.csv")
    monkeypatch.chdir(tmp_path)
    result = invoke("init", "-p", "in/p.csv", "-g", "in/t.csv", "-o", "-")
    assert result.exit_code == 0, result.stderr
    assert "  path: in/p.csv\n" in result.stdout
    assert "#   receval run CONFIG\n" in result.stdout
    assert "wrote" not in result.stderr
    assert result.stderr.startswith("predictions: in/p.csv (csv; score layout")
    assert run_json(write_config(tmp_path, result.stdout, "c.yaml"))["models"]["model"]["metrics"]


def test_guesses_by_type_are_marked_to_check(tmp_path: Path) -> None:
    """No usual names: ids, the score and the grades are taken by type, each flagged."""
    preds = pl.DataFrame({"a": USERS, "b": ITEMS, "c": SCORES})
    truth = pl.DataFrame(TRUTH).rename({"user": "x", "item": "y", "grade": "z"})
    config, stderr = init(
        tmp_path, write_frame(preds, tmp_path / "p.csv"), write_frame(truth, tmp_path / "t.csv")
    )
    assert columns(config) == (
        {"user": "a", "item": "b", "score": "c"},
        {"user": "x", "item": "y", "relevance": "z"},
    )
    text = config.read_text(encoding="utf-8")
    for column in "abcxyz":
        assert f"# CHECK: '{column}' is a guess for the" in text, column
        assert f"  check: '{column}' is a guess for the" in stderr, column
    assert run_json(config)["models"]["model"]["metrics"]


def test_an_integer_column_from_1_is_taken_as_a_rank(tmp_path: Path) -> None:
    preds = pl.DataFrame({"user": USERS, "item": ITEMS, "n": _ranks()})
    truth = pl.DataFrame(TRUTH).drop("grade")
    config, stderr = init(
        tmp_path, write_frame(preds, tmp_path / "p.csv"), write_frame(truth, tmp_path / "t.csv")
    )
    assert columns(config)[0] == {"user": "user", "item": "item", "rank": "n"}
    assert "'n' is a guess for the rank (integers from 1: 1 is the best;" in stderr
    assert "`score: n` if higher is better" in stderr
    assert run_json(config)["models"]["model"]["inputs"]["predictions"]["layout"] == "rank"


def test_a_score_is_preferred_to_a_rank_and_the_rank_mentioned(tmp_path: Path) -> None:
    preds = pl.DataFrame({"user": USERS, "item": ITEMS, "score": SCORES, "rank": _ranks()})
    truth = pl.DataFrame(TRUTH).drop("grade")
    config, _ = init(
        tmp_path, write_frame(preds, tmp_path / "p.csv"), write_frame(truth, tmp_path / "t.csv")
    )
    assert columns(config)[0] == {"user": "user", "item": "item", "score": "score"}
    text = config.read_text(encoding="utf-8")
    assert "# CHECK: the file also has a rank column 'rank'; to rank by it instead," in text
    assert "# CHECK: grades" not in text  # no grade column: binary relevance


def test_time_stamps_and_propensities(tmp_path: Path) -> None:
    """A time stamp is never taken as grades; a propensity column is named by its name."""
    preds = pl.DataFrame({"user_id": USERS, "item_id": ITEMS, "score": SCORES})
    log = pl.DataFrame(TRUTH).rename({"user": "user_id", "item": "item_id"})
    timed = log.with_columns(timestamp=pl.lit(1_700_000_000)).drop("grade")
    clicks = log.with_columns(click=pl.lit(1), propensity=pl.lit(0.5)).drop("grade")
    pred_file = write_frame(preds, tmp_path / "p.parquet")
    config, _ = init(tmp_path, pred_file, write_frame(timed, tmp_path / "timed.parquet"))
    assert columns(config)[1] == {"user": "user_id", "item": "item_id"}
    config, _ = init(
        tmp_path, pred_file, write_frame(clicks, tmp_path / "clicks.parquet"), "--force"
    )
    expected = {"user": "user_id", "item": "item_id", "relevance": "click"}
    assert columns(config)[1] == {**expected, "propensity": "propensity"}
    assert "# relevance 0 or 1: an item is relevant when 1\n" in config.read_text("utf-8")
    assert run_json(config)["models"]["model"]["metrics"]


def test_another_csv_separator_and_names_that_need_quotes(tmp_path: Path) -> None:
    preds = pl.DataFrame({"user id": USERS, "item:id": ITEMS, "yes": SCORES})
    truth = pl.DataFrame(TRUTH).rename({"user": "user id", "item": "item:id"})
    pred_file = tmp_path / "p.csv"
    preds.write_csv(pred_file, separator=";")
    config, _ = init(tmp_path, pred_file, write_frame(truth, tmp_path / "t.jsonl"))
    text = config.read_text(encoding="utf-8")
    assert "  separator: ;\n" in text
    assert columns(config) == (
        {"user": "user id", "item": "item:id", "score": "yes"},
        {"user": "user id", "item": "item:id", "relevance": "grade"},
    )
    assert run_json(config)["models"]["model"]["metrics"]


@pytest.mark.parametrize("suffixes", [(".run", ".qrels"), (".txt", ".txt")])
def test_trec_files(tmp_path: Path, suffixes: tuple[str, str]) -> None:
    run = "".join(
        f"{u} Q0 {i} {r} {s} tag\n"
        for u, i, r, s in zip(USERS, ITEMS, _ranks(), SCORES, strict=True)
    )
    qrels = "".join(f"{u} 0 {i} {g}\n" for u, i, g in zip(*TRUTH.values(), strict=True))
    pred_file = write(tmp_path / f"p{suffixes[0]}", run)
    truth_file = write(tmp_path / f"t{suffixes[1]}", qrels)
    config, _ = init(tmp_path, pred_file, truth_file)
    text = config.read_text(encoding="utf-8")
    assert text.count("  format: trec\n") == (2 if suffixes[0] == ".txt" else 0)
    assert "rank column" not in text  # a run ranks by score, as trec_eval does
    hand = {
        "predictions": {"path": str(pred_file), "format": "trec"},
        "ground_truth": {"path": str(truth_file), "format": "trec"},
        "cutoffs": list(CUTOFFS),
        "metrics": list(METRICS),
    }
    same_metrics(config, hand, tmp_path)


# --- errors -----------------------------------------------------------------------------


def _files(tmp_path: Path) -> tuple[Path, Path]:
    preds, truth, _, _ = LAYOUTS["score"]
    return write_frame(preds, tmp_path / "p.csv"), write_frame(truth, tmp_path / "t.csv")


def init_fails(tmp_path: Path, *args: str | Path) -> str:
    """`receval init ARGS -o tmp/out.yaml` exits 2 with one message and writes nothing."""
    out = tmp_path / "out.yaml"
    result = invoke("init", *args, "-o", out)
    stderr = assert_user_error(result)
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    return stderr


def test_missing_file(tmp_path: Path) -> None:
    _, truth = _files(tmp_path)
    missing = tmp_path / "nope.csv"
    stderr = init_fails(tmp_path, "-p", missing, "-g", truth)
    assert (
        stderr
        == f"error: predictions file {missing} does not exist. Check the --predictions path.\n"
    )


def test_a_folder_given(tmp_path: Path) -> None:
    preds, _ = _files(tmp_path)
    stderr = init_fails(tmp_path, "-p", preds, "-g", tmp_path)
    assert stderr == (
        f"error: ground truth file {tmp_path} is a folder. Give --ground-truth a data file.\n"
    )


def test_an_unknown_format(tmp_path: Path) -> None:
    _, truth = _files(tmp_path)
    odd = write(tmp_path / "p.dat", "just some text\n")
    stderr = init_fails(tmp_path, "-p", odd, "-g", truth)
    assert stderr == (
        f"error: predictions file {odd}: cannot tell the format from the extension '.dat' nor "
        "from the content. Give the file the extension of its format: .csv, .tsv, .parquet, "
        ".jsonl (.gz or .zst for compressed CSV), or .run/.qrels for TREC.\n"
    )


@pytest.mark.own_process  # a polars query fails (tests/support/process_isolation.py)
def test_an_unreadable_file(tmp_path: Path) -> None:
    preds, _ = _files(tmp_path)
    fake = write(tmp_path / "t.parquet", "user,item\nu1,a\n")
    stderr = init_fails(tmp_path, "-p", preds, "-g", fake)
    assert stderr == (
        f"error: ground truth file {fake} cannot be read as parquet: it does not start with "
        "Parquet's marker 'PAR1', so it is not a Parquet file. Write it as Parquet (or give it "
        "the extension of its format).\n"
    )


def test_an_empty_file_and_a_header_only(tmp_path: Path) -> None:
    _, truth = _files(tmp_path)
    empty = write(tmp_path / "empty.csv", "")
    stderr = init_fails(tmp_path, "-p", empty, "-g", truth)
    assert stderr == f"error: predictions file {empty} is empty (0 bytes). Write the data first.\n"
    header = write(tmp_path / "header.csv", "user,item,score\n")
    stderr = init_fails(tmp_path, "-p", header, "-g", truth)
    assert stderr == (
        f"error: predictions file {header} has a header but no rows; init guesses the columns "
        "from the data. Write the data first.\n"
    )


def test_a_mandatory_column_not_found(tmp_path: Path) -> None:
    _, truth = _files(tmp_path)
    no_item = write(tmp_path / "p.csv", "user_id,score\nu1,0.5\n")
    stderr = init_fails(tmp_path, "-p", no_item, "-g", truth)
    assert stderr == (
        f"error: predictions file {no_item}: cannot tell which column holds the item ids "
        "(integers or text), or a list of items; its columns are: user_id (String), score "
        "(Float64). Rename that column (e.g. to 'item'), or write the config from the template "
        "(`receval init`, no arguments) and set predictions.columns.item.\n"
    )
    no_score = write(tmp_path / "q.csv", "user_id,item_id,note\nu1,3,good\n")
    stderr = init_fails(tmp_path, "-p", no_score, "-g", truth)
    assert "cannot tell which column holds the scores or ranks (numbers)" in stderr
    assert "set predictions.columns.score.\n" in stderr
    no_user = write(tmp_path / "u.csv", "weight\n0.5\n")
    stderr = init_fails(tmp_path, "-p", _files(tmp_path)[0], "-g", no_user)
    assert stderr.startswith(
        f"error: ground truth file {no_user}: cannot tell which column holds the user ids"
    )
    assert stderr.endswith("set ground_truth.columns.user.\n")


def test_both_files_or_neither(tmp_path: Path) -> None:
    preds, _ = _files(tmp_path)
    stderr = init_fails(tmp_path, "-p", preds)
    assert stderr == (
        "error: give both --predictions and --ground-truth (to guess a config from them), or "
        "neither (for a documented template).\n"
    )


def test_an_existing_output_needs_force(tmp_path: Path) -> None:
    preds, truth = _files(tmp_path)
    out = write(tmp_path / "receval.yaml", "mine\n")
    for args in ((), ("-p", preds, "-g", truth)):
        result = invoke("init", *args, "-o", out)
        stderr = assert_user_error(result)
        assert stderr == (
            f"error: output {out} already exists; pass --force to overwrite it, or name "
            "another file with --output.\n"
        )
        assert out.read_text(encoding="utf-8") == "mine\n"
    result = invoke("init", "-p", preds, "-g", truth, "-o", out, "--force")
    assert result.exit_code == 0, result.stderr
    assert columns(out)[0] == LAYOUTS["score"][2]


def test_an_output_that_is_a_folder(tmp_path: Path) -> None:
    result = invoke("init", "-o", tmp_path, "--force")
    stderr = assert_user_error(result)
    assert stderr == (
        f"error: output {tmp_path} is a folder; name a file, e.g. {tmp_path / 'receval.yaml'}.\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_an_output_in_a_missing_folder(tmp_path: Path) -> None:
    out = tmp_path / "no" / "receval.yaml"
    result = invoke("init", "-o", out)
    stderr = assert_user_error(result)
    assert stderr == (
        f"error: output {out}: the folder {out.parent} does not exist. Create it first "
        f"(mkdir -p {out.parent}).\n"
    )


# --- the template -----------------------------------------------------------------------


def filled_template(folder: Path) -> Path:
    """The template with its two placeholder paths pointing at real files."""
    preds = pl.DataFrame({"user": USERS, "item": ITEMS, "score": SCORES})
    truth = pl.DataFrame(TRUTH).drop("grade")
    write_frame(preds, folder / "preds.csv")
    write_frame(truth, folder / "truth.csv")
    text = template()
    assert text.count(PREDICTIONS_PLACEHOLDER) == 1
    assert text.count(TRUTH_PLACEHOLDER) == 1
    text = text.replace(PREDICTIONS_PLACEHOLDER, "preds.csv")
    return write(folder / "filled.yaml", text.replace(TRUTH_PLACEHOLDER, "truth.csv"))


def test_the_template_is_written_to_receval_yaml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke("init")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr == "wrote receval.yaml; run it with: receval run receval.yaml\n"
    assert (tmp_path / "receval.yaml").read_text(encoding="utf-8") == template()
    assert isinstance(yaml.safe_load(template()), dict)
    stdout = invoke("init", "--output", "-")
    assert stdout.exit_code == 0
    assert stdout.stdout == template()


def test_the_filled_template_loads_and_runs(tmp_path: Path) -> None:
    config = filled_template(tmp_path)
    loaded = load_config(config)
    assert loaded.config.conventions == Conventions()
    assert [str(s) for s in loaded.specs] == [f"{m}@{k}" for m in METRICS for k in CUTOFFS]
    assert run_json(config)["models"]["model"]["metrics"]


def _top_level_keys(text: str) -> set[str]:
    return set(re.findall(r"^(?:# )?([a-z_]+):", text, re.M))


def test_the_template_mentions_every_key() -> None:
    assert set(Config.model_fields) <= _top_level_keys(template())


def _commented_blocks(text: str) -> list[str]:
    """Each commented top-level section (`# key:` and its `#   ...` lines), uncommented."""
    blocks = re.findall(r"^# [a-z_]+:.*\n(?:#   .*\n)*", text, re.M)
    return ["".join(line[2:] + "\n" for line in b.splitlines()) for b in blocks]


def test_each_commented_section_is_valid_once_uncommented(tmp_path: Path) -> None:
    base = yaml.safe_load(filled_template(tmp_path).read_text(encoding="utf-8"))
    blocks = _commented_blocks(template())
    keys = [next(iter(yaml.safe_load(b))) for b in blocks]
    optional = set(Config.model_fields) - {"metrics", "cutoffs", "ground_truth"}
    assert set(keys) == optional  # predictions: the several-models form
    sections = {key: yaml.safe_load(block) for key, block in zip(keys, blocks, strict=True)}
    for key, section in sections.items():
        config = {**base, **section}
        if key == "segments":  # it names no attribute: segment_by comes with it
            config.update(sections["segment_by"])
        load_config(write_config(tmp_path, config, "section.yaml"))
    every = {k: v for section in sections.values() for k, v in section.items()}
    loaded = load_config(write_config(tmp_path, {**base, **every}, "every.yaml"))
    assert list(loaded.config.model_files()) == ["popular", "candidate"]


def test_the_conventions_block_is_every_default() -> None:
    text = "".join(line[2:] + "\n" for line in commented_conventions())
    assert yaml.safe_load(text)["conventions"] == Conventions().model_dump()


def test_the_starter_metrics_exist() -> None:
    assert [lookup(name).name for name in METRICS] == list(METRICS)


# --- shell completion -------------------------------------------------------------------


def test_show_completion_prints_the_bash_script(monkeypatch: pytest.MonkeyPatch) -> None:
    import shellingham

    monkeypatch.setattr(shellingham, "detect_shell", lambda: ("bash", "/bin/bash"))
    result = invoke("--show-completion")
    assert result.exit_code == 0, result.stderr
    assert "_RECEVAL_COMPLETE=complete_bash" in result.stdout
    assert "complete -o default -F _receval_completion receval" in result.stdout


def test_a_script_for_a_named_shell() -> None:
    result = invoke(env={"_RECEVAL_COMPLETE": "source_zsh"})
    assert result.exit_code == 0
    assert "#compdef receval" in result.stdout
    assert "_RECEVAL_COMPLETE=complete_zsh" in result.stdout


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("receval ini", "init\n"),
        ("receval sc", "schema\n"),
        ("receval init --gr", "--ground-truth\n"),
    ],
)
def test_completion_completes_commands_and_options(words: str, expected: str) -> None:
    env = {
        "_RECEVAL_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - 1),
    }
    result = invoke(env=env)
    assert result.exit_code == 0
    assert result.stdout == expected
