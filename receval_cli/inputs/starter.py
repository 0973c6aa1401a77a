"""`receval init`: a starter config guessed from the data files, or a documented template.

Only each file's schema and its first rows are read. Columns are matched to receval's
roles by name (common synonyms), then by type; every guess that is not a plain name match
is written into the config as a CHECK comment and printed on stderr.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Literal, get_args, get_origin

import yaml

from receval_cli.config.conventions import Conventions
from receval_cli.config.model import Engine
from receval_cli.config.presets import PRESETS
from receval_cli.formats import RUN_FORMATS
from receval_cli.inputs.sniffing import Guess

CUTOFFS = (5, 10, 20)
METRICS = ("ndcg", "precision", "recall", "map", "mrr")


def _yaml_scalar(value: str | float) -> str:
    """A value written as YAML would read it back (quoted only when it must be)."""
    text = yaml.safe_dump([value], default_flow_style=True, width=1_000_000).strip()
    return text[1:-1]


_LAYOUTS = {
    "score": "score layout: each user's items ranked by score, descending",
    "rank": "rank layout: each user's items ranked by rank, ascending",
    "items": "items layout: one row per user, the items in list order",
    "binary": "every listed item counts as relevant (no grade column)",
    "labels": "relevance 0 or 1: an item is relevant when 1",
    "graded": "graded: an item's relevance is its grade",
}


def _relative(path: Path, folder: Path) -> str:
    try:
        return Path(os.path.relpath(path.resolve(), folder.resolve())).as_posix()
    except ValueError:  # another drive (Windows)
        return path.resolve().as_posix()


def _comment(text: str, indent: str) -> list[str]:
    return textwrap.wrap(
        text, width=92, initial_indent=f"{indent}# CHECK: ", subsequent_indent=f"{indent}#   "
    )


def _file_section(key: str, guess: Guess, folder: Path) -> list[str]:
    sniffed = guess.sniffed
    lines = [f"{key}:", f"  path: {_yaml_scalar(_relative(sniffed.path, folder))}"]
    if sniffed.format_from_content:
        lines.append("  format: trec")
    if sniffed.separator is not None:
        lines.append(f"  separator: {_yaml_scalar(sniffed.separator)}")
    if guess.list_separator not in (None, "|"):
        lines.append(f"  list_separator: {_yaml_scalar(str(guess.list_separator))}")
    lines.append(f"  columns:                       # {_LAYOUTS[guess.layout]}")
    lines += [f"    {role}: {_yaml_scalar(column)}" for role, column in guess.columns.items()]
    for note in guess.notes:
        lines += _comment(note, "  ")
    return lines


def commented_conventions() -> list[str]:
    """Every convention at its default, commented out, with its choices."""
    lines = ["# conventions:".ljust(40) + "# the defaults; uncomment a line to change it"]
    for name, info in Conventions.model_fields.items():
        value = "null" if info.default is None else _yaml_scalar(info.default)
        lines.append(f"#   {name}: {value}".ljust(40) + f"# {_choices(name, info.annotation)}")
    return lines


def _choices(name: str, annotation: object) -> str:
    if name == "preset":
        return "a tool to reproduce: " + ", ".join(PRESETS)
    for option in (annotation, *get_args(annotation)):
        if get_origin(option) is Literal:
            return " | ".join(str(v) for v in get_args(option))
    return "a positive integer" if name == "max_depth" else "a number"


def _metrics_lines(graded: bool) -> list[str]:
    lines = [
        f"cutoffs: [{', '.join(str(k) for k in CUTOFFS)}]"
        "              # every metric below that takes a cutoff, at each of these",
        "metrics:                          # `receval metrics` lists them all",
        *(f"  - {name}" for name in METRICS),
    ]
    if graded:
        lines.append("  # - {name: ndcg, gain: exponential}   # graded: 2^grade - 1 as the gain")
    return lines


_GATES_AND_OUTPUT = f"""\
# gates:                          # `receval run` exits 1 when one fails
#   ndcg@10: {{min: 0.3}}
#   precision@5: {{min: 0.1, max: 0.95}}

# output:
#   format: table                 # {" | ".join(RUN_FORMATS)}
#   path: report.json             # relative to this file's folder
"""


def starter_config(predictions: Guess, truth: Guess, folder: Path, name: str) -> str:
    """A commented config that runs as it is; paths relative to `folder`."""
    header = [
        "# receval config written by `receval init` from "
        f"{predictions.sniffed.path.name} and {truth.sniffed.path.name}.",
        f"#   receval run {name}",
        "# Paths are relative to this file's folder. CHECK lines are guesses to confirm.",
        "# Every key: `receval init` (no arguments) writes a commented template;",
        "# `receval schema` prints the JSON Schema for an editor.",
    ]
    lines = [
        *header,
        "",
        *_file_section("predictions", predictions, folder),
        "",
        *_file_section("ground_truth", truth, folder),
        "",
        *_metrics_lines(truth.graded),
        "",
        *commented_conventions(),
        "",
    ]
    return "\n".join(lines) + "\n" + _GATES_AND_OUTPUT


PREDICTIONS_PLACEHOLDER = "path/to/predictions.csv"
TRUTH_PLACEHOLDER = "path/to/ground_truth.csv"

_TEMPLATE_FILES = f"""\
# receval config: every key, with its default or an example. Fill in the two paths,
# uncomment what you need, then run `receval run` on this file. `receval init
# --predictions FILE --ground-truth FILE` guesses the columns from your data instead;
# `receval schema` prints the JSON Schema (completion and checks in an editor).
# Paths are relative to this file's folder.

predictions:                      # the model's recommendations
  path: {PREDICTIONS_PLACEHOLDER}
  # format: csv                   # csv, tsv, parquet, jsonl or trec (default: the extension)
  # separator: ","                # CSV field separator (default , or tab for tsv)
  # list_separator: "|"           # separator of a list stored as CSV text
  columns:                        # one layout: score, rank or items
    user: user
    item: item
    score: score                  # items ranked by score, descending
    # rank: rank                  # or ranked by rank, ascending (instead of score)
    # items: items                # or one row per user, a list of items (instead of item, score)

# predictions:                    # or several models against the same ground truth
#   columns: {{user: user, item: item, score: score}}
#   models:
#     popular: path/to/popular.csv
#     candidate: path/to/candidate.csv

ground_truth:                     # what each user actually found relevant
  path: {TRUTH_PLACEHOLDER}
  columns:
    user: user
    item: item
    # relevance: rating           # grades (default: a column named relevance, else all 1)
    # items: items                # or one row per user, a list of items (instead of item)
    # relevances: ratings         # with items: a list of grades
    # propensity: propensity      # logged data: the logging policy's probability (ctr)

"""

_TEMPLATE_OPTIONAL = f"""
# catalog:                        # every item that could be recommended (coverage, diversity)
#   path: path/to/catalog.jsonl
#   columns: {{item: item, category: genre, tags: tags, embedding: embedding}}

# interactions:                   # the training log (novelty, popularity, what users knew)
#   path: path/to/interactions.csv
#   columns: {{user: user, item: item}}

# baseline:                       # an obvious recommender (default: the most popular items)
#   path: path/to/popular.csv

# pr_curve: true                  # add iprec_at_recall at recall 0, 0.1, ..., 1: the HTML
#                                 # report draws the interpolated precision-recall curve

# confidence:                     # intervals for every per-user metric
#   level: 0.95
#   method: bootstrap             # or normal
#   resamples: 1000
#   seed: 0

# comparison:                     # every model against the baseline model, user by user
#   baseline: popular             # a model's name (default: the first)
#   test: t                       # t, wilcoxon or permutation
#   correction: holm              # holm, bonferroni or none
#   level: 0.95

# engine: auto                    # {" | ".join(get_args(Engine))}
# partitions: 1                   # users in N hash buckets, one after the other

# spark:                          # engine: spark, a session receval starts
#   master: local[4]              # or spark://host:7077, yarn (default: Spark's)
#   conf: {{spark.driver.memory: 8g}}

# segments:                       # user attributes, one row per user
#   path: path/to/users.csv
#   columns: {{user: user}}
# segment_by: [country]           # report every metric by these attributes

# fairness:                       # item groups and segments compared (RSP, REO, exposure)
#   k: 10
#   groups: popularity            # the log's short head and long tail, or category
#   pop_ratio: 0.8                # popularity: the head's share of the log's pairs
#   metrics: [recall, ndcg]       # compared between the segment_by segments
#   level: 0.95

# unknown_items:                  # recommended items unknown to the catalog / log / truth
#   warn: 0.9                     # warn above this share (a join-key bug shows as ~1)
#   max: 0.5                      # a gate: exit 1 above this share (default: none)
#   check: true                   # false: skip the count (a pass over the lists)

# history: runs/history           # append each run's values here (receval history PATH)

# tracking:                       # log each run to MLflow (the mlflow extra: docs/tracking.md)
#   mlflow:
#     uri: sqlite:///mlflow.db    # a database file beside this config, or http://HOST:PORT
#     experiment: receval         # made when missing
"""


def template() -> str:
    """The documented template: every main key, placeholder paths for the two files."""
    lines = [*_metrics_lines(graded=False), "", *commented_conventions(), ""]
    return _TEMPLATE_FILES + "\n".join(lines) + "\n" + _GATES_AND_OUTPUT + _TEMPLATE_OPTIONAL


def guess_summary(guess: Guess) -> list[str]:
    sniffed = guess.sniffed
    lines = [f"{sniffed.role}: {sniffed.path} ({sniffed.format}; {_LAYOUTS[guess.layout]})"]
    width = max(len(role) for role in guess.columns)
    lines += [f"  {role.ljust(width)} <- {column}" for role, column in guess.columns.items()]
    lines += [f"  check: {note}" for note in guess.notes]
    return lines
