"""`receval schema`: the JSON Schema of the config file, for editors and CI checks.

The schema starts from pydantic's (`Config.model_json_schema()`) and is adjusted where
`load_config` accepts more, or less, than the bare models say: `models` given as a mapping
of paths or as a list, metric entries written as mappings, one layout per predictions
file, a gate needs a bound. Every key's description is its field's docstring or
description in config/model.py (the one place a key is documented).
"""

from __future__ import annotations

import json
from typing import Any

from receval_cli.config.model import Config, document_fields
from receval_cli.config.presets import PRESETS
from receval_cli.metrics import REGISTRY
from receval_cli.version import __version__

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _given(key: str, value: dict[str, Any] | None = None) -> dict[str, Any]:
    """A subschema true when `key` is present and not null (pydantic's "given")."""
    return {"required": [key], "properties": {key: value or {"not": {"type": "null"}}}}


def _cutoffs() -> dict[str, Any]:
    cutoff = {"type": "integer", "exclusiveMinimum": 0}
    return {
        "description": "One cutoff, or a list of them.",
        "anyOf": [cutoff, {"type": "array", "items": cutoff}],
    }


def _metric_entries(metrics: dict[str, Any]) -> None:
    names = ", ".join(REGISTRY)
    metrics["items"] = {
        "anyOf": [
            {
                "type": "string",
                "description": "A metric spec name[@k][(param=value,...)], e.g. ndcg@10, "
                f"map@all, fbeta@10(beta=0.5). Metrics: {names}.",
            },
            {
                "type": "object",
                "description": "A metric with its cutoffs and parameters, e.g. "
                "{name: ndcg, cutoffs: [10], gain: exponential}.",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string", "description": "The metric, e.g. ndcg."},
                    "k": _cutoffs(),
                    "cutoffs": _cutoffs(),
                },
                "additionalProperties": {
                    "type": ["string", "number", "boolean"],
                    "description": "A parameter of the metric (`receval metrics NAME`).",
                },
                "not": {"required": ["k", "cutoffs"]},
            },
        ]
    }


def _models(prediction_set: dict[str, Any]) -> None:
    entry = {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/ModelFile"}]}
    models = prediction_set["properties"]["models"]
    description = models.get("description")
    prediction_set["properties"]["models"] = {
        "description": description,
        "anyOf": [
            {"type": "object", "minProperties": 1, "additionalProperties": entry},
            {"type": "array", "minItems": 1, "items": entry},
        ],
    }


def _predictions(root: dict[str, Any]) -> None:
    """One file, or several models when `models` is there (as the model's discriminator)."""
    predictions = root["properties"]["predictions"]
    root["properties"]["predictions"] = {
        "description": predictions.get("description"),
        "if": {"type": "object", "required": ["models"]},
        "then": {"$ref": "#/$defs/PredictionSet"},
        "else": {"$ref": "#/$defs/PredictionsConfig"},
    }


def _one_layout(columns: dict[str, Any]) -> None:
    pairs = (("score", "rank"), ("score", "items"), ("rank", "items"))
    columns["not"] = {"anyOf": [{"allOf": [_given(a), _given(b)]} for a, b in pairs]}


def _gate_bound(gate: dict[str, Any]) -> None:
    bounds = [_given(b) for b in ("min", "max", "max_drop", "max_relative_drop")]
    gate["anyOf"] = [*bounds, _given("no_significant_drop", {"const": True})]


def _history_drop(drop: dict[str, Any]) -> None:
    drop["oneOf"] = [_given("relative"), _given("absolute")]


def _conventions(conventions: dict[str, Any]) -> None:
    preset = conventions["properties"]["preset"]
    preset["anyOf"] = [{"enum": sorted(PRESETS)}, {"type": "null"}]
    rules = (("unrated", "default_rating"), ("unpredicted", "default_prediction"))
    conventions["allOf"] = [
        {"if": _given(setting, {"const": "default"}), "then": _given(value)}
        for setting, value in rules
    ]


def _segments(root: dict[str, Any]) -> None:
    needs = {"required": ["segment_by"], "properties": {"segment_by": {"minItems": 1}}}
    root["allOf"] = [{"if": _given("segments"), "then": needs}]


def config_schema() -> dict[str, Any]:
    """The JSON Schema (Draft 2020-12) of a receval config file."""
    document_fields()
    schema = Config.model_json_schema()
    definitions: dict[str, Any] = schema.pop("$defs")
    _metric_entries(schema["properties"]["metrics"])
    _predictions(schema)
    _models(definitions["PredictionSet"])
    _one_layout(definitions["PredictionColumns"])
    _gate_bound(definitions["Gate"])
    _history_drop(definitions["HistoryDrop"])
    _conventions(definitions["Conventions"])
    _segments(schema)
    schema.pop("title", None)
    schema.pop("description", None)
    return {
        "$schema": DIALECT,
        "title": "receval config",
        "description": f"A receval {__version__} config file (`receval run CONFIG`); "
        "generated by `receval schema`.",
        **schema,
        "$defs": definitions,
    }


def schema_text() -> str:
    return json.dumps(config_schema(), indent=2, ensure_ascii=False) + "\n"
