"""`receval schema`: the config's JSON Schema agrees with what `load_config` accepts.

The schema asks for the canonical types: where pydantic's lax mode would coerce (the
text "5" for an integer), the schema refuses, which an editor should flag. The cases
below are ones where the two must agree; each is checked against both.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from cli_helpers import assert_user_error, invoke, write_config

from receval_cli.config.json_schema import DIALECT, config_schema
from receval_cli.config.loading import load_config
from receval_cli.config.model import Config
from receval_cli.errors import ConfigError

ROOT = Path(__file__).parents[2]
BUNDLED = sorted((ROOT / "configs").glob("*.yaml"))
SCHEMA = config_schema()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

BASE: dict[str, Any] = {
    "predictions": {"path": "p.csv", "columns": {"user": "u", "item": "i", "score": "s"}},
    "ground_truth": {"path": "t.csv"},
    "cutoffs": [5, 10],
    "metrics": ["ndcg", "precision@3"],
}


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == DIALECT
    assert SCHEMA["title"] == "receval config"
    assert set(SCHEMA["required"]) == {"predictions", "ground_truth", "metrics"}


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_every_bundled_config_validates(path: Path) -> None:
    load_config(path)  # the bundled config is valid for receval itself
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert [e.message for e in VALIDATOR.iter_errors(data)] == []


def test_the_docs_config_example_validates() -> None:
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    example = next(b for b in re.findall("```yaml\n(.*?)```", text, re.S) if "predictions:" in b)
    assert [e.message for e in VALIDATOR.iter_errors(yaml.safe_load(example))] == []


def _with(path: str, value: Any) -> dict[str, Any]:
    """BASE with `value` set at a dotted path."""
    config = json.loads(json.dumps(BASE))
    *parents, last = path.split(".")
    node = config
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value
    return config


ACCEPTED = {
    "models as a mapping of paths": _with("predictions", {"models": {"a": "a.csv", "b": "b.csv"}}),
    "models as a list of paths": _with("predictions", {"models": ["a.csv", "b.csv"]}),
    "models as a list of mappings": _with(
        "predictions", {"models": [{"name": "a", "path": "a.csv", "columns": {"rank": "r"}}]}
    ),
    "a metric mapping with cutoffs and a parameter": _with(
        "metrics", [{"name": "ndcg", "cutoffs": [10], "gain": "exponential"}]
    ),
    "a metric mapping with one k": _with("metrics", [{"name": "fbeta", "k": 10, "beta": 0.5}]),
    "a relative gate": _with("gates", {"ndcg@10": {"no_significant_drop": True}}),
    "a preset with an override": _with(
        "conventions", {"preset": "trec_eval", "tie_break": "item_asc"}
    ),
    "unrated default with its rating": _with(
        "conventions", {"unrated": "default", "default_rating": 0}
    ),
    "segments with segment_by": {
        **BASE,
        "segments": {"path": "users.csv"},
        "segment_by": ["country"],
    },
    "null optional sections": {**BASE, "catalog": None, "cutoffs": None},
    "the items layout": _with("predictions.columns", {"user": "u", "items": "recs"}),
}

# each rejected config, and where the schema's most relevant error points
REJECTED: dict[str, tuple[dict[str, Any], str]] = {
    "an unknown top-level key": ({**BASE, "metric": ["ndcg"]}, ""),
    "an unknown column key": (_with("predictions.columns.usr", "u"), "predictions.columns"),
    "an unknown convention": (_with("conventions", {"tie_breaker": "x"}), "conventions"),
    "cutoffs as text": (_with("cutoffs", "ten"), "cutoffs"),
    "a zero cutoff": (_with("cutoffs", [0, 5]), "cutoffs.0"),
    "an unknown engine": ({**BASE, "engine": "fast"}, "engine"),
    "an unknown output format": (_with("output", {"format": "pdf"}), "output.format"),
    "a gate bound as text": (_with("gates", {"ndcg@10": {"min": "high"}}), "gates.ndcg@10.min"),
    "a gate without a bound": (_with("gates", {"ndcg@10": {"model": "a"}}), "gates.ndcg@10"),
    "score and rank together": (_with("predictions.columns.rank", "r"), "predictions.columns"),
    "no metrics": (_with("metrics", []), "metrics"),
    "a metric mapping without a name": (_with("metrics", [{"cutoffs": [10]}]), "metrics.0"),
    "a metric mapping with k and cutoffs": (
        _with("metrics", [{"name": "ndcg", "k": 5, "cutoffs": [10]}]),
        "metrics.0",
    ),
    "a metric parameter given a list": (
        _with("metrics", [{"name": "ndcg", "gain": ["a"]}]),
        "metrics.0.gain",
    ),
    "a negative metric cutoff": (_with("metrics", [{"name": "ndcg", "k": -1}]), "metrics.0.k"),
    "an unknown preset": (_with("conventions", {"preset": "trec"}), "conventions.preset"),
    "a wrong convention value": (
        _with("conventions", {"tie_break": "random"}),
        "conventions.tie_break",
    ),
    "unrated default without its rating": (
        _with("conventions", {"unrated": "default"}),
        "conventions",
    ),
    "segments without segment_by": ({**BASE, "segments": {"path": "users.csv"}}, ""),
    "both a path and models": (
        _with("predictions", {"path": "p.csv", "models": {"a": "a.csv"}}),
        "predictions",
    ),
    "no models": (_with("predictions", {"models": {}}), "predictions.models"),
    "a confidence level above 1": ({**BASE, "confidence": {"level": 1.5}}, "confidence.level"),
    "a missing ground truth": ({k: v for k, v in BASE.items() if k != "ground_truth"}, ""),
}


def _load_accepts(tmp_path: Path, config: dict[str, Any]) -> bool:
    try:
        load_config(write_config(tmp_path, config))
    except ConfigError:
        return False
    return True


@pytest.mark.parametrize("config", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_accepted_by_load_config_and_by_the_schema(tmp_path: Path, config: dict[str, Any]) -> None:
    assert _load_accepts(tmp_path, config)
    assert [e.message for e in VALIDATOR.iter_errors(config)] == []


@pytest.mark.parametrize(("config", "where"), REJECTED.values(), ids=REJECTED.keys())
def test_rejected_by_load_config_and_by_the_schema(
    tmp_path: Path, config: dict[str, Any], where: str
) -> None:
    assert not _load_accepts(tmp_path, config)
    error = jsonschema.exceptions.best_match(VALIDATOR.iter_errors(config))
    assert error is not None
    assert ".".join(str(p) for p in error.absolute_path) == where, error.message


def _properties(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    found = [("(root)", key, value) for key, value in schema["properties"].items()]
    for name, definition in schema["$defs"].items():
        found += [(name, key, value) for key, value in definition.get("properties", {}).items()]
    return found


def test_every_key_has_a_description_for_editors() -> None:
    missing = [
        f"{where}.{key}" for where, key, value in _properties(SCHEMA) if "description" not in value
    ]
    assert missing == []


def test_the_models_own_descriptions_are_kept() -> None:
    """Where a pydantic field has a description, the schema shows that very text."""
    generated = Config.model_json_schema()
    own = {
        (where, key): value["description"]
        for where, key, value in _properties(generated)
        if "description" in value
    }
    shown = {(where, key): value.get("description") for where, key, value in _properties(SCHEMA)}
    assert own  # the models do describe some fields (conventions, engine, ...)
    assert {k: shown[k] for k in own} == own


def test_schema_prints_the_schema_on_stdout() -> None:
    result = invoke("schema")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == SCHEMA
    assert result.stderr == ""


def test_schema_writes_a_file(tmp_path: Path) -> None:
    target = tmp_path / "receval.schema.json"
    target.write_text("old", encoding="utf-8")
    result = invoke("schema", "--output", target)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr == f"wrote {target}\n"
    assert json.loads(target.read_text(encoding="utf-8")) == SCHEMA


def test_schema_output_in_a_missing_folder(tmp_path: Path) -> None:
    target = tmp_path / "nope" / "schema.json"
    result = invoke("schema", "-o", target)
    stderr = assert_user_error(result)
    assert stderr == (
        f"error: output {target}: the folder {target.parent} does not exist. Create it first "
        f"(mkdir -p {target.parent}).\n"
    )
    assert not target.parent.exists()


def test_schema_output_is_a_folder(tmp_path: Path) -> None:
    result = invoke("schema", "-o", tmp_path)
    stderr = assert_user_error(result)
    assert stderr == (
        f"error: output {tmp_path} is a folder; name a file, e.g. {tmp_path / 'report.json'}.\n"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_fresh_process_gives_every_docstring_as_description() -> None:
    """The field docstrings become descriptions on demand (model.document_fields), not at
    import: `receval schema` as its own process, where nothing asked before it, shows them
    all, and loading a config does not read the models' source."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "receval_cli", "schema"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == SCHEMA
    columns = SCHEMA["$defs"]["PredictionColumns"]["properties"]
    assert columns["user"]["description"]  # a docstring, not a Field(description=...)
    probe = (
        "import sys; from receval_cli.config.model import PredictionColumns as P; "
        "sys.exit(P.model_fields['user'].description is not None)"
    )
    undocumented = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, timeout=120, check=False)
    assert undocumented.returncode == 0  # no description until something asks for them
