"""`receval schema`: the JSON Schema of the config file, for editors and CI checks.

The schema starts from pydantic's (`Config.model_json_schema()`) and is adjusted where
`load_config` accepts more, or less, than the bare models say: `models` given as a mapping
of paths or as a list, metric entries written as mappings, one layout per predictions
file, a gate needs a bound. Keys without a description get one, so an editor can show it.
"""

from __future__ import annotations

import json
from typing import Any, get_args

from receval_cli.config.model import Config, OutputFormat
from receval_cli.config.presets import PRESETS
from receval_cli.metrics import REGISTRY
from receval_cli.version import __version__

DIALECT = "https://json-schema.org/draft/2020-12/schema"

_FILE = {
    "path": "The file, relative to the config file's folder.",
    "columns": "The file's column names for receval's roles.",
}
# descriptions for the keys whose model field has none: {definition: {key: text}}
_DESCRIPTIONS: dict[str, dict[str, str]] = {
    "Config": {
        "predictions": "The model's recommendations: one file (path, columns), or several "
        "models (models: name: path).",
        "ground_truth": "What each user actually found relevant: a file (path, columns).",
        "catalog": "Every item that could be recommended, optionally with features "
        "(coverage, diversity).",
        "interactions": "The training log: item popularity (novelty, popularity bias) and "
        "what each user already knew.",
        "metrics": "The metrics: 'name[@k][(param=value,...)]' strings, or mappings "
        "{name, cutoffs or k, param: value}. `receval metrics` lists them.",
        "cutoffs": "The cutoffs k of every metric written without one.",
        "conventions": "The edge-case rules (ties, users without data, denominators, gains); "
        "every key is optional.",
        "gates": "Quality bars by metric (canonical name, e.g. ndcg@10): `receval run` exits "
        "1 when one fails.",
        "output": "The report's format and file.",
        "confidence": "Confidence intervals of the per-user metrics (users resampled).",
        "comparison": "Every model against the baseline model, with paired tests.",
        "segments": "A file of user attributes to split the users by (segment_by).",
    },
    "PredictionsConfig": _FILE,
    "GroundTruthConfig": _FILE,
    "CatalogConfig": _FILE,
    "InteractionsConfig": _FILE,
    "SegmentsConfig": _FILE,
    "ModelFile": {
        "path": _FILE["path"],
        "format": "Default: `predictions.format`, else the extension.",
        "separator": "Default: `predictions.separator`.",
        "list_separator": "Default: `predictions.list_separator`.",
        "columns": "Default: `predictions.columns`.",
    },
    "PredictionSet": {
        "models": "Each model's predictions file: name: path (or name: {path, columns, ...}), "
        "or a list of paths (or of {name, path, ...}); a missing name is the file's stem.",
        "format": "The models' default format.",
        "separator": "The models' default CSV field separator.",
        "list_separator": "The models' default separator of a list stored as CSV text.",
        "columns": "The models' default column names.",
    },
    "PredictionColumns": {
        "user": "The user (query) id column.",
        "item": "The item id column (score and rank layouts).",
        "score": "Score layout: items ranked by this column, descending.",
        "rank": "Rank layout: items ranked by this column, ascending.",
    },
    "TruthColumns": {"user": "The user id column.", "item": "The item id column."},
    "CatalogColumns": {"item": "The item id column."},
    "InteractionColumns": {"user": "The user id column.", "item": "The item id column."},
    "SegmentColumns": {"user": "The user id column."},
    "Gate": {"min": "Fail below this value.", "max": "Fail above this value."},
    "OutputConfig": {
        "format": f"{', '.join(get_args(OutputFormat))}.",
        "path": "Write the report to this file (relative to the config file's folder).",
    },
    "ConfidenceConfig": {
        "level": "The interval's confidence level.",
        "method": "bootstrap (users resampled) or normal.",
        "resamples": "bootstrap: the number of resamples.",
        "seed": "The random seed (results are reproducible).",
    },
    "ComparisonConfig": {
        "test": "The paired test: t, wilcoxon or permutation.",
        "correction": "Multiple-comparison correction across metrics and models.",
        "seed": "The random seed of the permutation test.",
    },
}


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


def _describe(name: str, definition: dict[str, Any]) -> None:
    for key, text in _DESCRIPTIONS.get(name, {}).items():
        definition["properties"][key].setdefault("description", text)


def config_schema() -> dict[str, Any]:
    """The JSON Schema (Draft 2020-12) of a receval config file."""
    schema = Config.model_json_schema()
    definitions: dict[str, Any] = schema.pop("$defs")
    _describe("Config", schema)
    for name, definition in definitions.items():
        _describe(name, definition)
    _metric_entries(schema["properties"]["metrics"])
    _predictions(schema)
    _models(definitions["PredictionSet"])
    _one_layout(definitions["PredictionColumns"])
    _gate_bound(definitions["Gate"])
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
