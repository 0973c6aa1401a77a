"""Text files in UTF-16 or UTF-32, `convert --tag`, and segment_by with many values.

Encodings and tags: a UTF-16 file without a byte-order mark was read as UTF-8 with a NUL byte
beside every letter, and the error offered "Did you mean 'u\\x00s\\x00e\\x00r\\x00'?". The
encoding is now named, with the command that converts the file. `convert --tag` wrote a tag
with white space as several fields (7 or 5 per line, or two lines): it is refused as ids are.

Many segments: each value of a segment_by attribute was one more full evaluation (3,000
values took minutes on tiny data). The segments now come from the run's own pass over the
inputs, and their numbers are still those of a run on the inputs filtered to their users.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import (
    PREDICTIONS_CSV,
    TRUTH_CSV,
    assert_user_error,
    hand_case,
    invoke,
    run_json,
    write,
    write_config,
)

from receval_cli.evaluation import assembly, plan

# (Python's codec, the encoding the message names, with a byte-order mark, iconv's -f)
ENCODINGS = [
    pytest.param("utf-16-le", "UTF-16LE", False, "UTF-16LE", id="utf16le-no-bom"),
    pytest.param("utf-16-be", "UTF-16BE", False, "UTF-16BE", id="utf16be-no-bom"),
    pytest.param("utf-16", "UTF-16LE", True, "UTF-16", id="utf16-bom"),  # Python writes LE
    pytest.param("utf-32", "UTF-32LE", True, "UTF-32", id="utf32-bom"),
]


def encoding_message(role: str, path: Path, encoding: str, bom: bool, source: str) -> str:
    converted = path.with_name(f"{path.stem}.utf8{path.suffix}")
    mark = "with" if bom else "without"
    return (
        f"error: {role} file {path} is {encoding} text ({mark} a byte-order mark); receval "
        f"reads UTF-8 only. Convert it, e.g. iconv -f {source} -t UTF-8 {path} > {converted}, "
        "and use the converted file.\n"
    )


# encodings and tags
@pytest.mark.parametrize(("codec", "encoding", "bom", "source"), ENCODINGS)
@pytest.mark.parametrize(
    ("role", "name"), [("predictions", "predictions.csv"), ("ground truth", "truth.csv")]
)
def test_a_utf16_or_utf32_csv_names_its_encoding(
    tmp_path: Path, codec: str, encoding: str, bom: bool, source: str, role: str, name: str
) -> None:
    config = hand_case(tmp_path)
    text = PREDICTIONS_CSV if role == "predictions" else TRUTH_CSV
    path = write(tmp_path / name, text.encode(codec))
    result = invoke("run", config)
    assert_user_error(result)
    assert result.stderr == encoding_message(role, path, encoding, bom, source)
    assert "Did you mean" not in result.stderr


# encodings and tags
def test_polars_reads_a_utf16_bom_as_two_replacement_characters(tmp_path: Path) -> None:
    """What the check relies on: polars reads any UTF-16 CSV without an error, so the
    encoding shows only in the column names (the BOM as U+FFFD twice, then NUL bytes)."""
    path = write(tmp_path / "p.csv", PREDICTIONS_CSV.encode("utf-16"))
    names = pl.scan_csv(path).collect_schema().names()
    assert names[0] == "\ufffd\ufffdu\x00s\x00e\x00r\x00"
    assert names[1] == "\x00i\x00t\x00e\x00m\x00"


# encodings and tags
@pytest.mark.own_process  # a polars query fails (tests/support/process_isolation.py)
def test_a_utf16_jsonl_file_names_its_encoding(tmp_path: Path) -> None:
    """JSON Lines in UTF-16 fails to read: the failure is explained the same way."""
    config = hand_case(tmp_path, predictions={"path": "p.jsonl"})
    rows = '{"user": "u1", "item": "b", "score": 0.9}\n{"user": "u2", "item": "d", "score": 0.9}\n'
    path = write(tmp_path / "p.jsonl", rows.encode("utf-16-le"))
    result = invoke("run", config)
    assert_user_error(result)
    assert result.stderr == encoding_message("predictions", path, "UTF-16LE", False, "UTF-16LE")


# encodings and tags
@pytest.mark.parametrize("command", ["init", "validate", "convert"])
def test_other_commands_name_the_encoding(tmp_path: Path, command: str) -> None:
    config = hand_case(tmp_path)
    path = write(tmp_path / "predictions.csv", PREDICTIONS_CSV.encode("utf-16-be"))
    args: dict[str, tuple[str | Path, ...]] = {
        "init": ("init", "-p", path, "-g", tmp_path / "truth.csv", "-o", tmp_path / "c.yaml"),
        "validate": ("validate", config),
        "convert": ("convert", path, "-o", tmp_path / "p.run"),
    }
    result = invoke(*args[command])
    assert_user_error(result)
    assert result.stderr == encoding_message("predictions", path, "UTF-16BE", False, "UTF-16BE")


# encodings and tags
def test_a_utf16_segments_file_names_its_encoding(tmp_path: Path) -> None:
    config = hand_case(tmp_path, segments={"path": "users.csv"}, segment_by=["group"])
    path = write(tmp_path / "users.csv", "user,group\nu1,a\nu2,b\n".encode("utf-16-le"))
    result = invoke("run", config)
    assert_user_error(result)
    assert result.stderr == encoding_message("segments", path, "UTF-16LE", False, "UTF-16LE")


# encodings and tags
@pytest.mark.parametrize(
    ("data", "words"),
    [
        # Latin-1: the header's bad byte is a replacement character, no NUL: not UTF-16
        (b"us\xe9r,item,score\nu1,a,0.9\n", ["has no column 'user'", "not UTF-8"]),
        # a header that really lacks the column
        (b"who,item,score\nu1,a,0.9\n", ["has no column 'user'", "Its columns are: who"]),
    ],
)
def test_other_header_problems_keep_their_message(
    tmp_path: Path, data: bytes, words: list[str]
) -> None:
    config = hand_case(tmp_path)
    write(tmp_path / "predictions.csv", data)
    stderr = assert_user_error(invoke("run", config), *words)
    assert "UTF-16" not in stderr


# encodings and tags
def test_utf8_with_a_bom_still_reads(tmp_path: Path) -> None:
    config = hand_case(tmp_path)
    write(tmp_path / "predictions.csv", PREDICTIONS_CSV.encode("utf-8-sig"))
    result = invoke("run", config, "--format", "json")
    assert result.exit_code == 0, result.stderr


# ------------------------------------------------------------------ convert --tag


# encodings and tags
@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        (
            "my run",
            "error: --tag 'my run' holds white space (' '): TREC fields are separated by "
            "white space, so the tag would not stay one field of one line. Give a tag without "
            "white space or control characters, e.g. --tag my_run.\n",
        ),
        (
            "",
            "error: --tag is empty, and a TREC run line needs a tag as its sixth field. Give "
            "one, e.g. --tag receval.\n",
        ),
        (
            "run\nnext",
            "error: --tag 'run\\nnext' holds white space ('\\n'): TREC fields are separated "
            "by white space, so the tag would not stay one field of one line. Give a tag "
            "without white space or control characters, e.g. --tag run_next.\n",
        ),
        (
            "run\tnext",
            "error: --tag 'run\\tnext' holds white space ('\\t'): TREC fields are separated "
            "by white space, so the tag would not stay one field of one line. Give a tag "
            "without white space or control characters, e.g. --tag run_next.\n",
        ),
        (
            "run\x1bnext",
            "error: --tag 'run\\x1bnext' holds a control character ('\\x1b'), which a TREC "
            "run line cannot carry. Give a tag without white space or control characters, "
            "e.g. --tag run_next.\n",
        ),
    ],
)
def test_a_tag_that_is_not_one_field_is_refused(tmp_path: Path, tag: str, expected: str) -> None:
    source = write(tmp_path / "p.csv", PREDICTIONS_CSV)
    run = tmp_path / "p.run"
    result = invoke("convert", source, "-o", run, "--tag", tag)
    assert_user_error(result)
    assert result.stderr == expected
    assert not run.exists()


# encodings and tags
@pytest.mark.parametrize("tag", ["receval", "bm25.v2-final_run", "été"])
def test_a_valid_tag_writes_six_fields(tmp_path: Path, tag: str) -> None:
    source = write(tmp_path / "p.csv", PREDICTIONS_CSV)
    run = tmp_path / "p.run"
    result = invoke("convert", source, "-o", run, "--tag", tag)
    assert result.exit_code == 0, result.stderr
    lines = run.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 5
    assert all(len(line.split()) == 6 and line.split()[5] == tag for line in lines)


# ------------------------------------------------------------------ many segments

USERS = 1000
VALUES = 300
METRICS = ["ndcg@5", "precision@3", "recall@5", "mrr", "num_rel_ret", "catalog_coverage@5"]


def many_segments(folder: Path) -> tuple[Path, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """1,000 users: 900 in 300 segments of 1 to 5 users, 100 without a value; 30 items:
    the predictions rank 6 items per user, the ground truth grades 3."""
    users = [f"u{i:04d}" for i in range(USERS)]
    predictions = pl.DataFrame(
        {
            "user": [u for u in users for _ in range(6)],
            "item": [f"i{(7 * i + 3 * j) % 30:02d}" for i in range(USERS) for j in range(6)],
            "score": [
                round(1.0 - 0.1 * j - 0.001 * (i % 7), 4) for i in range(USERS) for j in range(6)
            ],
        }
    )
    truth = pl.DataFrame(
        {
            "user": [u for u in users for _ in range(3)],
            "item": [f"i{(5 * i + 11 * j) % 30:02d}" for i in range(USERS) for j in range(3)],
            "rating": [(i + j) % 5 + 1 for i in range(USERS) for j in range(3)],
        }
    )
    sizes = [1 + i % 5 for i in range(VALUES)]  # 900 users
    group: list[str | None] = [f"g{v:03d}" for v, size in enumerate(sizes) for _ in range(size)]
    group += [None] * (USERS - len(group))
    table = pl.DataFrame({"user": users, "group": group})
    predictions.write_csv(folder / "predictions.csv")
    truth.write_csv(folder / "truth.csv")
    table.write_csv(folder / "users.csv")
    write(folder / "catalog.csv", "item\n" + "".join(f"i{j:02d}\n" for j in range(40)))
    config = write_config(
        folder,
        {
            "predictions": {"path": "predictions.csv"},
            "ground_truth": {"path": "truth.csv", "columns": {"relevance": "rating"}},
            "catalog": {"path": "catalog.csv"},
            "segments": {"path": "users.csv"},
            "segment_by": ["group"],
            "metrics": METRICS,
            "conventions": {"relevance_threshold": 3},
        },
    )
    return config, predictions, truth, table


# many segments
@pytest.mark.slow
def test_many_segments_equal_runs_on_the_filtered_inputs(tmp_path: Path) -> None:
    config, predictions, truth, table = many_segments(tmp_path)
    report = run_json(config)
    found = report["models"]["model"]["segments"]
    assert len(found) == VALUES + 1  # every value, and group=(none)
    # a sample: segments of every size (1 to 5 users), the first and last, and (none)
    sample = ["group=g000", "group=g001", "group=g002", "group=g003", "group=g004"]
    sample += ["group=g157", "group=g299", "group=(none)"]
    for name in sample:
        value = name.split("=", 1)[1]
        column = table.get_column("group")
        if value == "(none)":
            users = table.filter(column.is_null()).get_column("user")
        else:
            users = table.filter(column == value).get_column("user")
        inside = pl.col("user").is_in(users.implode())
        folder = tmp_path / value
        folder.mkdir()
        predictions.filter(inside).write_csv(folder / "predictions.csv")
        truth.filter(inside).write_csv(folder / "truth.csv")
        write(folder / "catalog.csv", (tmp_path / "catalog.csv").read_text())
        alone = write_config(
            folder,
            {
                "predictions": {"path": "predictions.csv"},
                "ground_truth": {"path": "truth.csv", "columns": {"relevance": "rating"}},
                "catalog": {"path": "catalog.csv"},
                "metrics": METRICS,
                "conventions": {"relevance_threshold": 3},
            },
        )
        result = invoke("run", alone, "--format", "json")
        if "not_evaluated" in found[name]:  # e.g. no user with a relevant item
            assert_user_error(result)
            assert result.stderr == f"error: {found[name]['not_evaluated']}\n"
            continue
        assert result.exit_code == 0, result.stderr
        filtered = json.loads(result.stdout)
        assert found[name]["metrics"] == filtered["models"]["model"]["metrics"], name
        assert found[name]["users"] == filtered["models"]["model"]["users"]["evaluated"], name


# many segments
def test_segments_are_not_one_evaluation_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The per-user table is built once, for the run and all its segments together, not
    once per value (timing-free: the builds are counted). It used to be built a second
    time for the segments; they now come from the run's own pass."""
    config, *_ = many_segments(tmp_path)
    builds: list[int] = []
    build = plan.per_user_frame

    def counted(*args: Any, **kwargs: Any) -> plan.Plan:
        builds.append(1)
        return build(*args, **kwargs)

    monkeypatch.setattr(plan, "per_user_frame", counted)
    monkeypatch.setattr(assembly, "per_user_frame", counted)
    report = run_json(config)
    assert len(report["models"]["model"]["segments"]) == VALUES + 1
    assert len(builds) == 1


# many segments
def test_a_segment_with_no_user_in_the_data_is_not_evaluated(tmp_path: Path) -> None:
    """A value whose users are in no input: the reason a run on no rows gives."""
    write(tmp_path / "users.csv", "user,group\nu1,a\nu2,b\nzz,c\n")
    config = hand_case(tmp_path, segments={"path": "users.csv"}, segment_by=["group"])
    report = run_json(config)
    assert report["models"]["model"]["segments"]["group=a"]["metrics"]["precision@1"] == 0.0
    assert report["models"]["model"]["segments"]["group=b"]["metrics"]["precision@1"] == 1.0
    assert (
        "group=(none)" not in report["models"]["model"]["segments"]
    )  # every user of the data has a value
    reason = report["models"]["model"]["segments"]["group=c"]["not_evaluated"]
    assert reason.startswith("no user appears in both ")


# many segments
def test_a_one_user_segment_equals_a_run_on_that_user(tmp_path: Path) -> None:
    """polars divides a column of one value exactly and a longer one by multiplying with
    the reciprocal: 3 / 5 is 0.6 for one user, 3 * 0.2 = 0.6000000000000001 among several.
    A segment's per-user values are computed on its own users, as a run on them alone."""
    rows = "user,item,score\n" + "".join(
        f"{user},{item},{1 - rank / 10}\n"
        for user in ("u1", "u2", "u3")
        for rank, item in enumerate("abcde")
    )
    truth = "user,item\nu1,a\nu1,b\nu1,c\nu2,a\nu3,b\nu3,c\nu3,d\n"
    write(tmp_path / "users.csv", "user,group\nu1,x\nu2,y\nu3,z\n")
    config = hand_case(
        tmp_path,
        rows,
        truth,
        metrics=["precision@5", "recall@5"],
        segments={"path": "users.csv"},
        segment_by=["group"],
    )
    report = run_json(config)
    assert report["models"]["model"]["segments"]["group=x"]["metrics"]["precision@5"] == 3 / 5
    for user, value in (("u1", "x"), ("u2", "y"), ("u3", "z")):
        alone = hand_case(
            tmp_path / user,
            only(rows, user),
            only(truth, user),
            metrics=["precision@5", "recall@5"],
        )
        assert (
            report["models"]["model"]["segments"][f"group={value}"]["metrics"]
            == run_json(alone)["models"]["model"]["metrics"]
        )


def only(csv: str, user: str) -> str:
    """The CSV text's header and the rows of one user."""
    header, *lines = csv.splitlines(keepends=True)
    return header + "".join(line for line in lines if line.startswith(f"{user},"))
