"""Config errors carry what they are about as fields (path, key, found, fix), each worded
into the message as it stands: the message is built from the same values."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import hand_case, write_config
from message_words import assert_plain

from receval_cli.config.loading import load_config
from receval_cli.errors import ConfigError

VALID_YAML = (
    "predictions: {path: predictions.csv}\n"
    "ground_truth: {path: truth.csv}\n"
    "metrics: [precision@1, ndcg@2]\n"
)


def _fields(config: Path) -> tuple[str, dict[str, object]]:
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    message = assert_plain(str(caught.value))
    fields = caught.value.fields
    for name in ("path", "key", "fix"):
        if name in fields:
            assert str(fields[name]) in message, (name, fields[name], message)
    return message, fields


def test_a_duplicate_yaml_key(tmp_path: Path) -> None:
    config = write_config(tmp_path, VALID_YAML + "metrics: [ndcg@2]\n")
    message, fields = _fields(config)
    assert message == (
        f"{config}: line 4: the key 'metrics' appears twice in the same mapping; YAML would "
        "silently keep only the last. Remove one of them."
    )
    assert fields == {"path": str(config), "found": "metrics", "fix": "Remove one of them."}


def test_a_nested_gate_bound_that_is_not_a_number(tmp_path: Path) -> None:
    config = hand_case(tmp_path, gates={"ndcg@2": {"min": True}})
    message, fields = _fields(config)
    assert message == (
        f"{config}: the config is not valid:\n  gates.ndcg@2.min: Input should be a valid "
        "number (found True)."
    )
    assert fields == {"key": "gates.ndcg@2.min", "path": str(config), "found": True}


def test_a_non_finite_value_is_found_as_its_repr(tmp_path: Path) -> None:
    config = write_config(tmp_path, VALID_YAML + "gates: {ndcg@2: {max: .inf}}\n")
    _, fields = _fields(config)
    assert fields == {"key": "gates.ndcg@2.max", "path": str(config), "found": "inf"}


def test_an_unknown_key_names_the_fix(tmp_path: Path) -> None:
    config = hand_case(tmp_path, gates={"ndcg@2": {"mni": 0.1}})
    message, fields = _fields(config)
    fix = (
        "Did you mean 'min'? Valid keys here: max, max_drop, max_relative_drop, min, model, "
        "no_significant_drop, on_null, segment."
    )
    assert message == (
        f"{config}: the config is not valid:\n  gates.ndcg@2.mni: unknown key 'mni'. {fix}"
    )
    assert fields == {"key": "gates.ndcg@2.mni", "path": str(config), "found": "mni", "fix": fix}


def test_a_validator_names_its_top_level_key(tmp_path: Path) -> None:
    config = hand_case(tmp_path, segments={"path": "segments.csv"})
    message, fields = _fields(config)
    assert message.endswith(
        "(top level): segments gives user attributes, and segment_by names none of them; "
        "add segment_by: [an attribute column]."
    )
    assert fields == {"key": "segment_by", "path": str(config), "found": []}


def test_an_unknown_metric_name(tmp_path: Path) -> None:
    config = hand_case(tmp_path, metrics=["precision@1", "ndgc@2"])
    message, fields = _fields(config)
    assert message.startswith(f"{config}: metrics[1]: unknown metric 'ndgc'.")
    assert fields == {"key": "metrics[1]", "path": str(config), "found": "ndgc@2"}


def test_a_cutoff_of_zero(tmp_path: Path) -> None:
    config = hand_case(tmp_path, metrics=[{"name": "ndcg", "cutoffs": [10, 0]}])
    message, fields = _fields(config)
    assert message == f"{config}: metrics[0]: cutoff 0 is not a positive integer"
    assert fields == {
        "key": "metrics[0]",
        "path": str(config),
        "found": {"name": "ndcg", "cutoffs": [10, 0]},
    }


def test_a_gate_on_a_metric_the_config_does_not_compute(tmp_path: Path) -> None:
    config = hand_case(tmp_path, gates={"ndcg@5": {"min": 0.1}})
    message, fields = _fields(config)
    fix = "Gate one of: precision@1, ndcg@2; or add 'ndcg@5' to metrics."
    assert message.endswith(fix)
    assert fields == {"key": "gates.ndcg@5", "path": str(config), "found": "ndcg@5", "fix": fix}


def test_a_config_that_is_not_utf8(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_bytes(VALID_YAML.encode() + b"# caf\xe9\n")
    message, fields = _fields(config)
    assert message == (
        f"{config}: the config is not UTF-8 text (byte 0xe9 at line 4, column 6). Save it as UTF-8."
    )
    assert fields == {"path": str(config), "found": "0xe9", "fix": "Save it as UTF-8."}


@pytest.mark.parametrize(
    ("section", "valid"),
    [
        ("confidence", "level, method, resamples, seed"),
        (
            "comparison",
            "baseline, correction, level, lists, power, resamples, seed, target_difference, test",
        ),
        ("unknown_items", "check, max, warn"),
        ("catalog", "columns, format, list_separator, path, separator"),
    ],
)
def test_an_unknown_key_in_an_optional_section_lists_its_keys(
    tmp_path: Path, section: str, valid: str
) -> None:
    """An optional section (`confidence: ConfidenceConfig | None`) names its valid keys
    like any other (it said "Valid keys here: ." before)."""
    given = {"path": "c.csv", "zzz": 1} if section == "catalog" else {"zzz": 1}
    config = hand_case(tmp_path, **{section: given})
    message, fields = _fields(config)
    fix = f"Valid keys here: {valid}."
    assert message.endswith(f"  {section}.zzz: unknown key 'zzz'. {fix}")
    assert fields == {"path": str(config), "key": f"{section}.zzz", "found": "zzz", "fix": fix}


def test_a_history_drop_s_own_check_is_named_by_its_key(tmp_path: Path) -> None:
    """The check of a max_drop against the history: the key as the YAML writes it, not
    pydantic's `max_drop.function-after[_one_limit(), HistoryDrop]`."""
    drop = {"vs": "history", "relative": 0.1, "runs": 3, "min_runs": 50}
    config = hand_case(tmp_path, gates={"ndcg@2": {"max_drop": drop}})
    message, fields = _fields(config)
    assert message == (
        f"{config}: the config is not valid:\n  gates.ndcg@2.max_drop: min_runs 50 is above runs 3."
    )
    assert fields == {"key": "gates.ndcg@2.max_drop", "path": str(config), "found": drop}


def test_a_value_of_neither_form_says_what_each_form_takes(tmp_path: Path) -> None:
    """max_drop is a number or a history mapping: one line says both, not one line per
    pydantic member (`max_drop.constrained-float: Input should be a valid number.`)."""
    config = hand_case(tmp_path, gates={"ndcg@2": {"max_drop": "abc"}})
    message, fields = _fields(config)
    assert message == (
        f"{config}: the config is not valid:\n  gates.ndcg@2.max_drop: Input should be a "
        "number or a mapping with the keys vs, runs, stat, relative, absolute, min_runs "
        "(found 'abc')."
    )
    assert fields == {"key": "gates.ndcg@2.max_drop", "path": str(config), "found": "abc"}


@pytest.mark.parametrize(
    ("drop", "line"),
    [
        (-1, "gates.ndcg@2.max_drop: Input should be greater than or equal to 0 (found -1)."),
        (
            {"vs": "history", "relative": 0.1, "zz": 1},
            "gates.ndcg@2.max_drop.zz: unknown key 'zz'. Valid keys here: absolute, min_runs, "
            "relative, runs, stat, vs.",
        ),
        (
            {"vs": "history", "relative": 0.1, "runs": "x"},
            "gates.ndcg@2.max_drop.runs: Input should be a valid integer (found 'x').",
        ),
    ],
)
def test_a_union_s_error_is_the_member_of_the_value_s_type(
    tmp_path: Path, drop: object, line: str
) -> None:
    """A number is checked as the number form only, a mapping as the history form only."""
    config = hand_case(tmp_path, gates={"ndcg@2": {"max_drop": drop}})
    message, _ = _fields(config)
    assert message == f"{config}: the config is not valid:\n  {line}"


def test_a_section_that_is_not_a_mapping_names_no_class(tmp_path: Path) -> None:
    config = hand_case(tmp_path, spark="abc")
    message, _ = _fields(config)
    assert (
        message
        == f"{config}: the config is not valid:\n  spark: Input should be a mapping (found 'abc')."
    )
