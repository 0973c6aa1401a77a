"""`receval validate` lists the segments input among the inputs it checks and shows, as
it does the others (its file, columns, rows, nulls and user id type), and the segments
the run reports."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import hand_case, invoke, write

USERS_CSV = "user,country\nu1,DE\nu2,\nu3,FR\n"


def test_the_segments_file_is_an_input_of_the_summary(tmp_path: Path) -> None:
    write(tmp_path / "users.csv", USERS_CSV)
    config = hand_case(tmp_path, segments={"path": "users.csv"}, segment_by=["country"])
    result = invoke("validate", config, "--format", "json")
    assert result.exit_code == 0, result.output
    health = json.loads(result.stdout)
    assert health["optional"]["segments"] == {
        "path": str(tmp_path / "users.csv"),
        "format": "csv",
        "layout": "segments",
        "columns": {"user": "user", "country": "country"},
        "rows": 3,
        "users": 3,
        "nulls": {"user": 0, "country": 1},
        "id_types": {"user": "String"},
    }
    assert health["segments"] == {
        "by": ["country"],
        "from": "segments file",
        "segments": ["country=DE", "country=FR", "country=(none)"],
        "users_with_a_value": {"country": 2},
    }
    table = invoke("validate", config)
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    assert any(line.startswith("segments ") and "users.csv" in line for line in lines)
    assert "segments (segment_by country, from the segments file): country=DE, country=FR, " in (
        table.stdout
    )


def test_segments_from_the_ground_truth_are_listed(tmp_path: Path) -> None:
    truth = "user,item,country\nu1,b,DE\nu2,d,FR\nu2,f,FR\n"
    config = hand_case(tmp_path, truth_rows=truth, segment_by=["country"])
    result = invoke("validate", config, "--format", "json")
    assert result.exit_code == 0, result.output
    health = json.loads(result.stdout)
    assert "segments" not in health["optional"]  # no file of its own
    assert health["segments"]["from"] == "ground truth"
    assert health["segments"]["segments"] == ["country=DE", "country=FR", "country=(none)"]
