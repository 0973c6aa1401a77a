"""`receval inspect`: a seeded sample of users (or one user), with their history, top-k
list, missed relevant items and per-user metrics.

The snapshots in tests/snapshots/inspect_*.txt and .json are reviewed by hand: after a
change, rewrite them with `UPDATE_SNAPSHOTS=1 uv run pytest tests/cli/test_inspect.py` and
read the diff line by line before committing. They are never the only check: every test
below also recomputes what is shown from sample_data/ with a few lines of plain polars
(the top-k as the k highest scores, ties by item descending; a hit as a ground-truth grade
>= 4; the missed items; titles, features and history from the catalog and the log), and
compares the metrics with the per-user values `receval run --per-user` writes. The
snapshots were checked that way, number by number, when they were written.
"""

from __future__ import annotations

import functools
import json
import os
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import assert_no_traceback, hand_case, invoke, write, write_config
from rich.cells import cell_len

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
SNAPSHOTS = Path(__file__).parents[1] / "snapshots"
QUICKSTART = "configs/quickstart.yaml"  # relative: the output names the config as given
BEYOND = "configs/beyond.yaml"
THRESHOLD = 4  # both configs' relevance_threshold


@pytest.fixture(autouse=True)
def _in_repository_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def inspect(*args: str | Path, columns: int | None = None) -> str:
    """The command's stdout, at the helpers' 120 columns or at `columns`."""
    result = invoke("inspect", *args, env=None if columns is None else {"COLUMNS": str(columns)})
    assert_no_traceback(result)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert result.stderr == ""
    return result.stdout


def inspect_json(*args: str | Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(inspect(*args, "--format", "json"))
    return data


def matches_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        write(path, text)
    assert path.exists(), f"no snapshot {path}; write it with UPDATE_SNAPSHOTS=1 and review it"
    assert text == path.read_text(encoding="utf-8")


def per_user_run(config: str, folder: Path) -> pl.DataFrame:
    """The per-user values of a full `receval run --per-user`."""
    path = folder / "per_user.parquet"
    result = invoke("run", config, "--per-user", path)
    assert result.exit_code == 0, result.stderr
    return pl.read_parquet(path)


# --- the reference: plain polars on sample_data ----------------------------------------


def predictions(path: Path = SAMPLE / "predictions.csv") -> pl.DataFrame:
    return pl.read_csv(path)


@functools.cache
def truth() -> pl.DataFrame:
    return pl.read_parquet(SAMPLE / "ground_truth.parquet")


def expected_list(preds: pl.DataFrame, user: str) -> list[tuple[int, float]]:
    """(item, score) of one user, by score descending, ties by item descending."""
    mine = preds.filter(pl.col("user_id") == user)
    ordered = mine.sort(["score", "item_id"], descending=[True, True])
    return list(zip(ordered["item_id"].to_list(), ordered["score"].to_list(), strict=True))


def grades(user: str) -> dict[int, float]:
    mine = truth().filter(pl.col("user_id") == user)
    return dict(zip(mine["item_id"].to_list(), mine["rating"].cast(pl.Float64), strict=True))


def check_user(record: dict[str, Any], k: int, per_user: pl.DataFrame, preds: pl.DataFrame) -> None:
    """One JSON record against the reference: list, hits, missed, counts and metrics."""
    user = record["user"]
    ranked = expected_list(preds, user)
    graded = grades(user)
    relevant = {item for item, grade in graded.items() if grade >= THRESHOLD}
    top = ranked[:k]
    shown = record["recommendations"]
    assert [(r["rank"], r["item"], r["score"]) for r in shown] == [
        (i + 1, item, score) for i, (item, score) in enumerate(top)
    ]
    assert [r["relevance"] for r in shown] == [graded.get(item) for item, _ in top]
    assert [r["hit"] for r in shown] == [item in relevant for item, _ in top]
    position = {item: i + 1 for i, (item, _) in enumerate(ranked)}
    missing = relevant - {item for item, _ in top}
    expected_missed = sorted(missing, key=lambda item: (-graded[item], item))
    assert [m["item"] for m in record["missed"]] == expected_missed
    assert [m["rank"] for m in record["missed"]] == [position.get(i) for i in expected_missed]
    assert [m["relevance"] for m in record["missed"]] == [graded[i] for i in expected_missed]
    assert record["recommended"] == len(ranked)
    assert record["relevant"] == len(relevant)
    row = per_user.filter(pl.col("user") == user).row(0, named=True)
    assert record["status"] == row["status"] == "evaluated"
    metrics = [c for c in per_user.columns if c not in ("model", "user", "status")]
    assert record["metrics"] == {m: row[m] for m in metrics}  # exactly, every digit


def sampled(per_user: pl.DataFrame, count: int, seed: int) -> list[str]:
    """The documented sample: sorted evaluated ids, random.Random(seed).sample, sorted."""
    evaluated = sorted(per_user.filter(pl.col("status") == "evaluated")["user"].to_list())
    return sorted(random.Random(seed).sample(evaluated, count))


# --- the snapshots ---------------------------------------------------------------------


def test_quickstart_panels_match_the_snapshot_and_the_reference(tmp_path: Path) -> None:
    """The default view (3 users, seed 0, top 10): the snapshot, and in it, per panel, the
    rank/item/score/grade/hit rows (the scores to 4 significant digits, no two of these
    lists' scores looking equal) and every metric (to 4 decimals) recomputed."""
    text = inspect(QUICKSTART)
    matches_snapshot("inspect_quickstart.txt", text)
    per_user = per_user_run(QUICKSTART, tmp_path)
    users = sampled(per_user, 3, 0)
    assert text.splitlines()[0] == (
        f"receval inspect {QUICKSTART}: model 'model', 3 of 200 evaluated users (seed 0), "
        "top 10; hit: relevance >= 4"
    )
    panels = text.split("╭─ user ")[1:]
    assert [p.split(" ", 1)[0] for p in panels] == users
    preds = predictions()
    for user, panel in zip(users, panels, strict=True):
        lines = [line.strip("│ ") for line in panel.splitlines()]
        start = next(i for i, line in enumerate(lines) if line.startswith("top 10: "))
        assert lines[start + 1].split() == ["rank", "item", "score", "rel", "hit"]
        graded = grades(user)
        for line, (rank, (item, score)) in zip(
            lines[start + 2 : start + 12],
            enumerate(expected_list(preds, user)[:10], 1),
            strict=True,
        ):
            grade = graded.get(item)
            cells = [str(rank), str(item), f"{score:#.4g}"]  # 4 significant digits
            cells += [] if grade is None else [f"{grade:g}"]
            cells += ["✓"] if grade is not None and grade >= THRESHOLD else []
            assert line.split() == cells
        start = lines.index("metrics (-: the user is not in that metric's mean)")
        shown = " ".join(lines[start + 1 :]).split()
        pairs = dict(zip(shown[0::2], shown[1::2], strict=False))
        row = per_user.filter(pl.col("user") == user).row(0, named=True)
        metrics = [c for c in per_user.columns if c not in ("model", "user", "status")]
        assert pairs == {m: f"{row[m]:.4f}" for m in metrics}


def test_quickstart_json_matches_the_snapshot_and_the_reference(tmp_path: Path) -> None:
    """Seed 0, top 10: the same users as the panels, each checked by check_user."""
    text = inspect(QUICKSTART, "--format", "json")
    matches_snapshot("inspect_quickstart.json", text)
    data = json.loads(text)
    per_user = per_user_run(QUICKSTART, tmp_path)
    assert {k: data[k] for k in ("config", "model", "k", "seed")} == {
        "config": QUICKSTART,
        "model": "model",
        "k": 10,
        "seed": 0,
    }
    assert [u["user"] for u in data["users"]] == sampled(per_user, 3, 0)
    for record in data["users"]:
        assert "history" not in record  # the config has no interactions log
        check_user(record, 10, per_user, predictions())


def catalog() -> dict[int, dict[str, Any]]:
    rows = pl.read_ndjson(SAMPLE / "catalog.jsonl").iter_rows(named=True)
    return {r["item_id"]: r for r in rows}


def check_features(row: dict[str, Any], items: dict[int, dict[str, Any]]) -> None:
    item = items[row["item"]]
    assert row["title"] == item["title"]
    assert row["category"] == item["genre"]
    assert row["tags"] == sorted(item["tags"])


def test_beyond_panels_and_json_match_the_snapshots_and_the_reference(tmp_path: Path) -> None:
    """beyond.yaml (catalog and log), 2 users, seed 1, top 5, 4 history rows: the list,
    hits, metrics (check_user), titles and features from the catalog, the history as the
    log's latest rows by timestamp, and `seen` as the item being in the user's log."""
    args = ("--users", "2", "--seed", "1", "--k", "5", "--history", "4")
    matches_snapshot("inspect_beyond.txt", inspect(BEYOND, *args))
    text = inspect(BEYOND, *args, "--format", "json")
    matches_snapshot("inspect_beyond.json", text)
    data = json.loads(text)
    per_user = per_user_run(BEYOND, tmp_path)
    assert [u["user"] for u in data["users"]] == sampled(per_user, 2, 1)
    log = pl.read_csv(SAMPLE / "interactions.csv")
    items = catalog()
    for record in data["users"]:
        check_user(record, 5, per_user, predictions())
        mine = log.filter(pl.col("user_id") == record["user"])
        latest = mine.sort("timestamp", descending=True).head(4)
        assert record["history_total"] == mine.height
        assert [(h["item"], h["timestamp"]) for h in record["history"]] == list(
            zip(latest["item_id"].to_list(), latest["timestamp"].to_list(), strict=True)
        )
        known = set(mine["item_id"].to_list())
        assert [r["seen"] for r in record["recommendations"]] == [
            r["item"] in known for r in record["recommendations"]
        ]
        for row in [*record["history"], *record["recommendations"], *record["missed"]]:
            check_features(row, items)


# --- narrow terminals ------------------------------------------------------------------


def panels_by_user(text: str) -> dict[str, list[str]]:
    """Each panel's lines, borders stripped, by the user id in its title."""
    found = {}
    for panel in text.split("╭─ user ")[1:]:
        user = panel.split(" ─", 1)[0]
        body = panel.split("\n", 1)[1].split("╰", 1)[0]
        found[user] = [line.strip().strip("│").strip() for line in body.splitlines()]
    return found


def shown_scores(scores: list[float]) -> list[str]:
    """The documented rounding: 4 significant digits, trailing zeros kept, no exponent from
    10**4 (12345.678 -> 12346), or every score of the list to more digits where two
    different ones would look equal."""

    def rounded(score: float, digits: int) -> str:
        text = f"{score:#.{digits}g}".removesuffix(".")
        return f"{score:.0f}" if "e+" in text and abs(score) < 1e15 else text

    for digits in range(4, 17):
        texts = [rounded(score, digits) for score in scores]
        if len(set(texts)) == len(set(scores)):
            return texts
    raise AssertionError(scores)


def check_fits(text: str, data: dict[str, Any], width: int) -> None:
    """No line wider than `width`, no ellipsis, and each recommendation's row whole: its
    rank, item id and rounded score on one line, in that order."""
    assert max(cell_len(line) for line in text.splitlines()) <= width
    assert "…" not in text
    shown = panels_by_user(text)
    assert list(shown) == [str(u["user"]) for u in data["users"]]
    for record in data["users"]:
        recs = record["recommendations"]
        lines = [line.split() for line in shown[str(record["user"])]]
        scores = shown_scores([r["score"] for r in recs])
        for rec, score in zip(recs, scores, strict=True):
            row = [str(rec["rank"]), str(rec["item"]), score]
            assert row in [cells[:3] for cells in lines], (row, record["user"])
        for missed in record["missed"][:10]:
            assert str(missed["item"]) in [cells[0] for cells in lines if cells]


@pytest.mark.parametrize(
    "args",
    [
        (QUICKSTART,),
        (QUICKSTART, "--k", "20"),
        (BEYOND,),
        (BEYOND, "--k", "20", "--users", "2", "--seed", "3"),
        ("configs/compare.yaml", "--users", "2"),
    ],
)
@pytest.mark.slow
@pytest.mark.parametrize("width", [80, 100])
def test_the_sample_configs_fit_80_and_100_columns(args: tuple[str, ...], width: int) -> None:
    """At 80 (and 100) columns: no line wider, no value cut with an ellipsis, and every
    shown recommendation's rank, item and score (rounded as documented) whole on its row."""
    data = inspect_json(*args)
    check_fits(inspect(*args, columns=width), data, width)


LONG_A = "item-" + "a" * 30 + "-0001"  # 40 characters
LONG_B = "item-" + "b" * 30 + "-0002"
LONG_TITLE = (
    "A remarkably long title that goes on and on about nothing much in particular and then "
    "some more"
)


def long_case(folder: Path) -> Path:
    """Two users, 40-character item ids, a long title, a catalog and a log; user `[red]u2`
    looks like rich markup."""
    write(
        folder / "predictions.csv",
        f"user,item,score\nu1,{LONG_A},0.123456789\nu1,{LONG_B},0.98765432101\nu1,c,12345.678"
        f"\nu1,d,1.5e-7\n[red]u2,c,0.5\n[red]u2,{LONG_B},0.25\n",
    )
    write(folder / "truth.csv", f"user,item,rating\nu1,{LONG_A},5\nu1,d,4\nu1,e,5\n[red]u2,c,4\n")
    items = [LONG_A, LONG_B, "c", "d", "e"]
    rows = [
        {
            "item": item,
            "title": LONG_TITLE if item in (LONG_A, "d") else f"Title {item}",
            "genre": "documentary",
            "tags": ["award", "classic", "indie", "supercalifragilisticexpialidocious"],
        }
        for item in items
    ]
    write(folder / "catalog.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    write(folder / "log.csv", f"user,item,timestamp\nu1,{LONG_A},100\nu1,c,200\n[red]u2,e,5\n")
    return write_config(
        folder,
        {
            "predictions": {"path": "predictions.csv"},
            "ground_truth": {"path": "truth.csv", "columns": {"relevance": "rating"}},
            "catalog": {
                "path": "catalog.jsonl",
                "columns": {"item": "item", "title": "title", "category": "genre", "tags": "tags"},
            },
            "interactions": {"path": "log.csv"},
            "metrics": ["ndcg@10", "precision@2"],
            "conventions": {"relevance_threshold": 4},
        },
    )


@pytest.mark.parametrize("width", [80, 100, 120])
def test_long_item_ids_and_titles_keep_the_layout(tmp_path: Path, width: int) -> None:
    """40-character item ids and a 95-character title: at 80, 100 and 120 columns every
    id whole on its row, the scores rounded (0.123456789 -> 0.1235, 12345.678 -> 12346,
    1.5e-07 -> 1.500e-07; the JSON keeps every digit), the title wrapped, not cut."""
    config = long_case(tmp_path)
    data = inspect_json(config, "--users", "2")
    (u1,) = [u for u in data["users"] if u["user"] == "u1"]
    assert [r["score"] for r in u1["recommendations"]] == [
        12345.678,
        0.98765432101,
        0.123456789,
        1.5e-7,
    ]
    text = inspect(config, "--users", "2", columns=width)
    check_fits(text, data, width)
    lines = panels_by_user(text)["u1"]
    assert ["3", LONG_A, "0.1235", "5", "✓", "✓"] in [line.split()[:6] for line in lines]
    assert {"12346", "0.9877", "1.500e-07"} <= set(" ".join(lines).split())
    words = iter(" ".join(lines).split())  # the title wrapped, beside its features or not
    assert all(word in words for word in LONG_TITLE.split())  # each word whole, in order
    assert "╭─ user [red]u2 " in text  # an id is never read as markup


def test_scores_that_would_round_alike_get_more_digits(tmp_path: Path) -> None:
    """2.24501 and 2.24499 would both be 2.245: that list shows 6 digits, every score of it."""
    config = hand_case(
        tmp_path,
        rows="user,item,score\nu1,a,2.24501\nu1,b,2.24499\nu1,c,0.5\nu2,d,0.9\n",
    )
    lines = [line.split() for line in inspect(config, "--user", "u1", columns=80).splitlines()]
    shown = [cells[1:4] for cells in lines if cells[:2] in (["│", "1"], ["│", "2"], ["│", "3"])]
    assert shown == [["1", "a", "2.24501"], ["2", "b", "2.24499"], ["3", "c", "0.500000"]]


# --- which users -----------------------------------------------------------------------


def test_same_seed_same_users_whatever_the_row_order(tmp_path: Path) -> None:
    """The files shuffled (rows in another order) give the same sample for the same seed,
    and the same lists; different seeds give different samples."""
    shuffled = predictions().sample(fraction=1.0, shuffle=True, seed=11)
    shuffled.write_csv(tmp_path / "predictions.csv")
    truth().sample(fraction=1.0, shuffle=True, seed=12).write_parquet(tmp_path / "truth.parquet")
    config = write_config(
        tmp_path,
        {
            "predictions": {
                "path": "predictions.csv",
                "columns": {"user": "user_id", "item": "item_id", "score": "score"},
            },
            "ground_truth": {
                "path": "truth.parquet",
                "columns": {"user": "user_id", "item": "item_id", "relevance": "rating"},
            },
            "metrics": ["ndcg@10"],
            "conventions": {"relevance_threshold": THRESHOLD},
        },
    )
    samples = []
    for seed in ("0", "1", "2", "3"):
        original = inspect_json(QUICKSTART, "--seed", seed)["users"]
        reordered = inspect_json(config, "--seed", seed)["users"]
        assert [u["user"] for u in reordered] == [u["user"] for u in original]
        strip = ("rank", "item", "score", "hit")
        assert [[{c: r[c] for c in strip} for r in u["recommendations"]] for u in reordered] == [
            [{c: r[c] for c in strip} for r in u["recommendations"]] for u in original
        ]
        samples.append(tuple(u["user"] for u in original))
    assert len(set(samples)) == 4


def test_more_users_than_evaluated_shows_every_evaluated_user(tmp_path: Path) -> None:
    """--users beyond the count: the 200 evaluated users (5 of them without a list, counted
    as 0), never one of the 10 users only in the predictions; every one checked."""
    per_user = per_user_run(QUICKSTART, tmp_path)
    evaluated = per_user.filter(pl.col("status") == "evaluated")["user"].sort().to_list()
    data = inspect_json(QUICKSTART, "--users", "1000")
    assert [u["user"] for u in data["users"]] == evaluated
    assert len(evaluated) == truth()["user_id"].n_unique() == 200
    without = [u for u in data["users"] if u["recommended"] == 0]
    assert len(without) == 5
    assert all(u["recommendations"] == [] for u in without)
    preds = predictions()
    for record in data["users"]:
        check_user(record, 10, per_user, preds)
    shown = [r for u in data["users"] for r in u["recommendations"]]
    judged_not_relevant = [r for r in shown if r["relevance"] is not None and not r["hit"]]
    assert judged_not_relevant  # the case of a grade below the threshold is covered
    assert all(r["relevance"] < THRESHOLD for r in judged_not_relevant)


def test_one_user_and_ties_broken_by_the_config(tmp_path: Path) -> None:
    """u019 has two items at score 1.5228, ranked 7 and 8: item 95 before 58 with
    tie_break item_desc (the default), 58 before 95 with item_asc."""
    (record,) = inspect_json(QUICKSTART, "--user", "u019")["users"]
    check_user(record, 10, per_user_run(QUICKSTART, tmp_path), predictions())
    assert [(r["item"], r["score"]) for r in record["recommendations"][6:8]] == [
        (95, 1.5228),
        (58, 1.5228),
    ]
    text = (ROOT / QUICKSTART).read_text(encoding="utf-8").replace("../sample_data", str(SAMPLE))
    text = text.replace("relevance_threshold: 4", "relevance_threshold: 4\n  tie_break: item_asc")
    config = write_config(tmp_path, text, "ascending.yaml")
    (ascending,) = inspect_json(config, "--user", "u019")["users"]
    assert [r["item"] for r in ascending["recommendations"][6:8]] == [58, 95]


def test_a_user_only_in_the_predictions_is_shown_without_metrics() -> None:
    """u203 is in the predictions only: its list, no grade, no metric value."""
    (record,) = inspect_json(QUICKSTART, "--user", "u203", "--k", "2")["users"]
    assert record["status"] == "only_in_predictions"
    assert [(r["item"], r["score"]) for r in record["recommendations"]] == expected_list(
        predictions(), "u203"
    )[:2]
    assert record["relevant"] == 0
    assert record["missed"] == []
    assert set(record["metrics"].values()) == {None}
    text = inspect(QUICKSTART, "--user", "u203", "--k", "2")
    assert "not evaluated: only in the predictions" in text


def test_integer_user_ids_are_parsed(tmp_path: Path) -> None:
    """Integer ids: --user 7 is the integer 7; --user x names the ids' type."""
    write(tmp_path / "p.csv", "user,item,score\n7,1,0.5\n7,2,0.9\n8,1,0.3\n")
    write(tmp_path / "t.csv", "user,item\n7,1\n8,1\n")
    config = write_config(
        tmp_path,
        {"predictions": {"path": "p.csv"}, "ground_truth": {"path": "t.csv"}, "metrics": ["mrr"]},
    )
    (record,) = inspect_json(config, "--user", "7")["users"]
    assert record["user"] == 7
    assert [(r["item"], r["hit"]) for r in record["recommendations"]] == [(2, False), (1, True)]
    assert record["metrics"] == {"mrr": 0.5}
    result = invoke("inspect", config, "--user", "x")
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: --user 'x' is in neither the ground truth {tmp_path / 't.csv'} nor the "
        f"predictions {tmp_path / 'p.csv'} (the user ids are integers). User ids look like: "
        "7, 8.\n"
    )


def test_several_models_default_to_the_baseline_and_model_picks_one() -> None:
    """compare.yaml: the baseline `popular` by default, `--model model` the other file."""
    default = inspect_json("configs/compare.yaml", "--user", "u001", "--k", "4")
    assert default["model"] == "popular"
    popular = predictions(SAMPLE / "popular_predictions.csv")
    assert [(r["item"], r["score"]) for r in default["users"][0]["recommendations"]] == (
        expected_list(popular, "u001")[:4]
    )
    chosen = inspect_json("configs/compare.yaml", "--user", "u001", "--k", "4", "--model", "model")
    assert chosen["model"] == "model"
    assert [(r["item"], r["score"]) for r in chosen["users"][0]["recommendations"]] == (
        expected_list(predictions(), "u001")[:4]
    )


def test_no_color_drops_the_colours() -> None:
    """With colour forced, a hit row is green; --no-color (or NO_COLOR) prints none."""
    args = ("inspect", QUICKSTART, "--users", "1")
    coloured = invoke(*args, env={"FORCE_COLOR": "1"})
    assert "\x1b[32m" in coloured.stdout
    for result in (
        invoke(*args, "--no-color", env={"FORCE_COLOR": "1"}),
        invoke("--no-color", *args, env={"FORCE_COLOR": "1"}),
        invoke(*args, env={"FORCE_COLOR": "1", "NO_COLOR": "1"}),
    ):
        assert result.exit_code == 0
        assert "\x1b[32m" not in result.stdout
        assert "✓" in result.stdout


# --- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--user", "u999"),
            "--user 'u999' is in neither the ground truth "
            "configs/../sample_data/ground_truth.parquet nor the predictions "
            "configs/../sample_data/predictions.csv. User ids look like: 'u001', 'u002', "
            "'u003'.",
        ),
        (("--users", "0"), "--users must be at least 1, found 0."),
        (("--k", "0"), "--k must be at least 1, found 0."),
        (("--history", "-1"), "--history must be 0 (no history) or more, found -1."),
        (
            ("--users", "2", "--user", "u001"),
            "--users and --user were both given: --users N shows a sample of N users, "
            "--user ID one user. Pass only one of them.",
        ),
    ],
)
def test_bad_options_exit_2_with_one_message(args: tuple[str, ...], message: str) -> None:
    result = invoke("inspect", QUICKSTART, *args)
    assert_no_traceback(result)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"error: {message}\n"


def test_unknown_model_lists_the_models() -> None:
    result = invoke("inspect", "configs/compare.yaml", "--model", "modle")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        "error: --model 'modle' is not a model of configs/compare.yaml; its models are: "
        "popular, model. Did you mean 'model'?\n"
    )
    single = invoke("inspect", QUICKSTART, "--model", "other")
    assert single.exit_code == 2
    assert "its models are: model." in single.stderr


def test_a_bad_config_is_the_run_commands_error(tmp_path: Path) -> None:
    config = write_config(tmp_path, "predictions: {path: missing.csv}\n")
    result = invoke("inspect", config)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ")
    assert result.stderr == invoke("run", config).stderr
