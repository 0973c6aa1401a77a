"""`receval init`: a starter config guessed from the data files, or a documented template.

Only each file's schema and its first rows are read. Columns are matched to receval's
roles by name (common synonyms), then by type; every guess that is not a plain name match
is written into the config as a CHECK comment and printed on stderr.
"""

from __future__ import annotations

import os
import re
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal, get_args, get_origin

import polars as pl
import typer
import yaml

from receval_cli import console
from receval_cli.config import Engine, FileFormat, OutputFormat
from receval_cli.conventions import Conventions
from receval_cli.errors import InputError, RecEvalError, UsageError
from receval_cli.io import detect_format, scan
from receval_cli.output import check_destination, write_atomic
from receval_cli.presets import PRESETS

SAMPLE_ROWS = 1000
CUTOFFS = (5, 10, 20)
METRICS = ("ndcg", "precision", "recall", "map", "mrr")
LIST_SEPARATORS = ("|", ";")
OPTIONS = {"predictions": "--predictions", "ground truth": "--ground-truth"}

# names are compared lower-case with everything but letters and digits removed
USER = ("user", "userid", "uid", "users", "query", "qid", "queryid", "topic", "customer",
        "customerid", "client", "clientid", "session", "sessionid", "visitor", "visitorid",
        "member", "memberid", "account", "accountid", "u")  # fmt: skip
ITEM = ("item", "itemid", "iid", "doc", "docid", "docno", "document", "documentid",
        "product", "productid", "sku", "movie", "movieid", "article", "articleid", "track",
        "trackid", "song", "songid", "video", "videoid", "i")  # fmt: skip
ITEMS = ("items", "itemids", "recommendations", "recs", "recommended", "ranking", "ranked",
         "docs", "docids", "products", "productids", "movies", "movieids", "list")  # fmt: skip
SCORE = ("score", "scores", "prediction", "pred", "predicted", "predictedscore",
         "ratingpred", "predrating", "predictedrating", "prob", "probability", "proba",
         "similarity", "sim", "logit", "yhat")  # fmt: skip
RANK = ("rank", "ranks", "position", "pos", "rnk", "place")
RELEVANCE = ("relevance", "rel", "rating", "ratings", "label", "grade", "judgment",
             "judgement", "clicked", "click", "clicks", "target", "y", "gain",
             "purchased", "bought")  # fmt: skip
RELEVANCES = ("relevances", "rels", "ratings", "grades", "labels", "gains")
PROPENSITY = ("propensity", "propensityscore", "pscore", "loggingprobability",
              "loggingprob", "behaviorprob", "behaviourprob", "policyprob")  # fmt: skip
# a name holding one of these parts matches the role too, as a guess to check
PARTS = {
    "user": ("user", "query", "customer"),
    "item": ("item", "doc", "product"),
    "items": ("items", "recs", "list"),
    "score": ("score", "pred", "prob"),
    "rank": ("rank", "position"),
    "relevance": ("relevance", "rating", "label", "grade", "click"),
}
_TIME_LIKE = ("time", "date", "epoch", "created", "updated")


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _yaml_scalar(value: str | float) -> str:
    """A value written as YAML would read it back (quoted only when it must be)."""
    text = yaml.safe_dump([value], default_flow_style=True, width=1_000_000).strip()
    return text[1:-1]


@dataclass(frozen=True)
class Sniffed:
    """A data file's format, schema and first rows."""

    role: str
    path: Path
    format: FileFormat
    format_from_content: bool
    separator: str | None
    schema: pl.Schema
    sample: pl.DataFrame

    def describe(self, column: str) -> str:
        return f"{column} ({self.schema[column]})"

    def columns_text(self) -> str:
        return ", ".join(self.describe(c) for c in self.schema.names())


def _check_file(path: Path, role: str) -> None:
    option = OPTIONS[role]
    if not path.exists():
        raise InputError(f"{role} file {path} does not exist. Check the {option} path.")
    if path.is_dir():
        raise InputError(f"{role} file {path} is a folder. Give {option} a data file.")
    if path.stat().st_size == 0:
        raise InputError(f"{role} file {path} is empty (0 bytes). Write the data first.")


def _format(path: Path, role: str) -> tuple[FileFormat, bool]:
    """The format (from the extension, else TREC by content) and whether content told it."""
    try:
        fmt = detect_format(path, None, role)
    except InputError:
        raise InputError(
            f"{role} file {path}: cannot tell the format from the extension "
            f"'{''.join(path.suffixes) or '(none)'}' nor from the content. Give the file the "
            "extension of its format: .csv, .tsv, .parquet, .jsonl (.gz or .zst for "
            "compressed CSV), or .run/.qrels for TREC."
        ) from None
    return fmt, fmt == "trec" and path.suffix.lower() not in (".run", ".qrels")


def _read(path: Path, fmt: FileFormat, separator: str | None, role: str) -> pl.LazyFrame:
    try:
        return scan(path, fmt, separator, role)
    except InputError as error:
        message = str(error).replace(
            f"(or set {'ground_truth' if role == 'ground truth' else role}.format)",
            "(or give it the extension of its format)",
        )
        raise InputError(message) from None


def sniff(path: Path, role: str) -> Sniffed:
    """Read a data file's schema and its first SAMPLE_ROWS rows."""
    _check_file(path, role)
    fmt, from_content = _format(path, role)
    frame = _read(path, fmt, None, role)
    separator = None
    names = frame.collect_schema().names()
    if fmt in ("csv", "tsv") and len(names) == 1:
        found = [s for s in (";", "\t", "|", ",") if s in names[0]]
        if found:  # the header was read as one column: another field separator
            separator = found[0]
            frame = _read(path, fmt, separator, role)
    try:
        sample = frame.head(SAMPLE_ROWS).collect()
    except pl.exceptions.PolarsError as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else "unreadable"
        raise InputError(
            f"{role} file {path} cannot be read as {fmt}: {first}. Check that the file is "
            f"complete and really {fmt}."
        ) from None
    if sample.height == 0:
        raise InputError(
            f"{role} file {path} has a header but no rows; init guesses the columns from "
            "the data. Write the data first."
        )
    return Sniffed(role, path, fmt, from_content, separator, sample.schema, sample)


Fits = Callable[[Sniffed, str], bool]  # a column-type test


@dataclass
class Guess:
    """The columns chosen for one file's roles, and what to check about them."""

    sniffed: Sniffed
    layout: str
    columns: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    list_separator: str | None = None
    graded: bool = False


class _Picker:
    """Chooses columns for roles, each column at most once."""

    def __init__(self, sniffed: Sniffed) -> None:
        self.sniffed = sniffed
        self.used: set[str] = set()

    def free(self) -> list[str]:
        return [c for c in self.sniffed.schema.names() if c not in self.used]

    def take(self, column: str) -> str:
        self.used.add(column)
        return column

    def by_name(
        self, names: tuple[str, ...], role: str, fits: Fits, prefer: str | None = None
    ) -> tuple[str | None, bool]:
        """A column named like the role: (column, exact) or (None, False)."""
        free = [c for c in self.free() if fits(self.sniffed, c)]
        if prefer is not None and prefer in free:
            return self.take(prefer), True
        for name in names:
            for column in free:
                if _norm(column) == name:
                    return self.take(column), True
        for column in free:
            if any(part in _norm(column) for part in PARTS.get(role, ())):
                return self.take(column), False
        return None, False

    def by_type(self, fits: Fits) -> str | None:
        for column in self.free():
            if fits(self.sniffed, column):
                return self.take(column)
        return None


def _text_list_separator(sniffed: Sniffed, column: str) -> str | None:
    """The separator of a text column of lists (lists of one item hold none): at least
    half of the values hold it, or any does and the column is named like a list."""
    if sniffed.schema[column] != pl.String:
        return None
    values = sniffed.sample.get_column(column).drop_nulls()
    named = _norm(column) in (*ITEMS, *RELEVANCES)
    for separator in LIST_SEPARATORS:
        holding = values.str.contains(separator, literal=True).sum()
        if holding and (named or holding >= 0.5 * values.len()):
            return separator
    return None


def _is_list(sniffed: Sniffed, column: str) -> bool:
    dtype = sniffed.schema[column]
    return isinstance(dtype, pl.List) or _text_list_separator(sniffed, column) is not None


def _is_id(sniffed: Sniffed, column: str) -> bool:
    dtype = sniffed.schema[column]
    text = dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum)
    return (dtype.is_integer() or text) and not _is_list(sniffed, column)


def _is_number(sniffed: Sniffed, column: str) -> bool:
    dtype = sniffed.schema[column]
    return dtype.is_numeric() or dtype == pl.Boolean


def _is_value(sniffed: Sniffed, column: str) -> bool:
    """A number that is not a time stamp (a guess by type only)."""
    return _is_number(sniffed, column) and not any(t in _norm(column) for t in _TIME_LIKE)


def _missing(sniffed: Sniffed, what: str, key: str) -> InputError:
    role = sniffed.role
    section = "ground_truth" if role == "ground truth" else role
    return InputError(
        f"{role} file {sniffed.path}: cannot tell which column holds the {what}; its "
        f"columns are: {sniffed.columns_text()}. Rename that column (e.g. to '{key}'), or "
        f"write the config from the template (`receval init`, no arguments) and set "
        f"{section}.columns.{key}."
    )


def _note_guess(guess: Guess, role: str, column: str, how: str) -> None:
    guess.notes.append(f"'{column}' is a guess for the {role} column ({how}): check it.")


def _pick_id(
    picker: _Picker, guess: Guess, role: str, names: tuple[str, ...], prefer: str | None
) -> str | None:
    column, exact = picker.by_name(names, role, _is_id, prefer)
    if column is not None and not exact:
        _note_guess(guess, role, column, "its name contains a usual one")
    return column


def _fallback_id(picker: _Picker, guess: Guess, role: str) -> str | None:
    column = picker.by_type(_is_id)
    if column is not None:
        _note_guess(guess, role, column, "no column has a usual name for it")
    return column


def _list_column(picker: _Picker, guess: Guess, names: tuple[str, ...], role: str) -> str | None:
    """A list column (a list type, or text joined by a list separator) for `role`."""
    column, _ = picker.by_name(names, role, _is_list)
    if column is None:
        column = picker.by_type(_is_list)
        if column is not None and role == "relevances":
            _note_guess(guess, role, column, "the only other list column")
    if column is not None:
        separator = _text_list_separator(picker.sniffed, column)
        if separator is not None:
            guess.list_separator = separator
    return column


def guess_predictions(sniffed: Sniffed) -> Guess:
    """The predictions' layout and columns; a missing mandatory role raises InputError."""
    picker = _Picker(sniffed)
    guess = Guess(sniffed, "score")
    user = _pick_id(picker, guess, "user", USER, None) or _fallback_id(picker, guess, "user")
    if user is None:
        raise _missing(sniffed, "user ids (integers or text)", "user")
    guess.columns["user"] = user
    items = _list_column(picker, guess, ITEMS, "items")
    item = _pick_id(picker, guess, "item", ITEM, None)
    if item is None and items is not None:
        guess.layout = "items"
        guess.columns["items"] = items
        return guess
    item = item or _fallback_id(picker, guess, "item")
    if item is None:
        raise _missing(sniffed, "item ids (integers or text), or a list of items", "item")
    guess.columns["item"] = item
    _value_column(picker, guess)
    return guess


def _value_column(picker: _Picker, guess: Guess) -> None:
    score, score_exact = picker.by_name(SCORE, "score", _is_number)
    rank, rank_exact = picker.by_name(RANK, "rank", _is_number)
    sniffed = guess.sniffed
    if score is not None:
        guess.columns["score"] = score
        if rank is not None and sniffed.format != "trec":
            guess.notes.append(
                f"the file also has a rank column '{rank}'; to rank by it instead, "
                f"replace `score: {score}` with `rank: {rank}`."
            )
        if not score_exact:
            _note_guess(guess, "score", score, "its name contains a usual one")
        return
    if rank is not None:
        guess.layout = "rank"
        guess.columns["rank"] = rank
        if not rank_exact:
            _note_guess(guess, "rank", rank, "its name contains a usual one")
        return
    column = picker.by_type(_is_value)
    if column is None:
        raise _missing(sniffed, "scores or ranks (numbers), or a list of items", "score")
    if sniffed.schema[column].is_integer() and _range(sniffed, column)[0] == 1:
        guess.layout = "rank"
        guess.columns["rank"] = column
        how = "integers from 1: 1 is the best"
        other = f"`score: {column}` if higher is better"
    else:
        guess.columns["score"] = column
        how = "higher is better"
        other = f"`rank: {column}` if 1 is the best"
    guess.notes.append(
        f"'{column}' is a guess for the {guess.layout} ({how}; no column has a usual name "
        f"for it): check it, or write {other}."
    )


def guess_ground_truth(sniffed: Sniffed, predictions: Guess) -> Guess:
    """The ground truth's layout and columns, preferring the predictions' column names."""
    picker = _Picker(sniffed)
    guess = Guess(sniffed, "binary")
    chosen = predictions.columns
    user = _pick_id(picker, guess, "user", USER, chosen.get("user"))
    user = user or _fallback_id(picker, guess, "user")
    if user is None:
        raise _missing(sniffed, "user ids (integers or text)", "user")
    guess.columns["user"] = user
    items = _list_column(picker, guess, ITEMS, "items")
    item = _pick_id(picker, guess, "item", ITEM, chosen.get("item"))
    if item is None and items is not None:
        guess.layout = "items"
        guess.columns["items"] = items
        relevances = _list_column(picker, guess, RELEVANCES, "relevances")
        if relevances is not None:
            guess.columns["relevances"] = relevances
            guess.graded = True
        return guess
    item = item or _fallback_id(picker, guess, "item")
    if item is None:
        raise _missing(sniffed, "item ids (integers or text), or a list of items", "item")
    guess.columns["item"] = item
    _relevance_column(picker, guess)
    propensity, exact = picker.by_name(PROPENSITY, "propensity", _is_number)
    if propensity is not None and exact:
        guess.columns["propensity"] = propensity
    return guess


def _relevance_column(picker: _Picker, guess: Guess) -> None:
    sniffed = guess.sniffed
    relevance, exact = picker.by_name(RELEVANCE, "relevance", _is_number)
    if relevance is not None and not exact:
        _note_guess(guess, "relevance", relevance, "its name contains a usual one")
    if relevance is None:
        candidates = [c for c in picker.free() if _is_value(sniffed, c)]
        small = [c for c in candidates if _range(sniffed, c)[1] <= 100]
        if not small:
            return
        relevance = picker.take(small[0])
        guess.notes.append(
            f"'{relevance}' is a guess for the relevance (grades; no column has a usual name "
            "for it): check it, or delete the `relevance:` line (every listed item then "
            "counts 1)."
        )
    guess.columns["relevance"] = relevance
    values = sniffed.sample.get_column(relevance).cast(pl.Float64).drop_nulls()
    guess.layout = "labels"
    if values.len() and not values.is_in([0.0, 1.0]).all():
        guess.layout = "graded"
        guess.graded = True
        low, high = (_number_text(v) for v in _range(sniffed, relevance))
        guess.notes.append(
            f"grades from {low} to {high} in the first {SAMPLE_ROWS} rows: precision, "
            "recall, map and mrr count an item as relevant when its grade is >= "
            "conventions.relevance_threshold (default 1): set it to the lowest relevant "
            "grade (e.g. 4 for ratings 1-5). ndcg uses the grades as gains (conventions.gain)."
        )


def _range(sniffed: Sniffed, column: str) -> tuple[float, float]:
    """The smallest and largest value of a numeric column in the sample (nulls aside)."""
    values = sniffed.sample.get_column(column).cast(pl.Float64).drop_nulls().drop_nans().sort()
    if values.len() == 0:
        return 0.0, 0.0
    return float(values[0]), float(values[-1])


def _number_text(number: float) -> str:
    return str(int(number)) if number.is_integer() else str(number)


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


def conventions_block() -> list[str]:
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
#   format: table                 # {" | ".join(get_args(OutputFormat))}
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
        *conventions_block(),
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

# segments:                       # user attributes, one row per user
#   path: path/to/users.csv
#   columns: {{user: user}}
# segment_by: [country]           # report every metric by these attributes
"""


def template() -> str:
    """The documented template: every main key, placeholder paths for the two files."""
    lines = [*_metrics_lines(graded=False), "", *conventions_block(), ""]
    return _TEMPLATE_FILES + "\n".join(lines) + "\n" + _GATES_AND_OUTPUT + _TEMPLATE_OPTIONAL


def _summary(guess: Guess) -> list[str]:
    sniffed = guess.sniffed
    lines = [f"{sniffed.role}: {sniffed.path} ({sniffed.format}; {_LAYOUTS[guess.layout]})"]
    width = max(len(role) for role in guess.columns)
    lines += [f"  {role.ljust(width)} <- {column}" for role, column in guess.columns.items()]
    lines += [f"  check: {note}" for note in guess.notes]
    return lines


def _destination(output: Path, force: bool) -> None:
    if output.is_dir():
        raise UsageError(
            f"output {output} is a folder; name a file, e.g. {output / 'receval.yaml'}."
        )
    if output.exists() and not force:
        raise UsageError(
            f"output {output} already exists; pass --force to overwrite it, or name another "
            "file with --output."
        )
    check_destination(output)


def init_command(
    predictions: Annotated[
        Path | None,
        typer.Option("--predictions", "-p", help="A predictions file to guess the columns from."),
    ] = None,
    ground_truth: Annotated[
        Path | None,
        typer.Option(
            "--ground-truth", "-g", help="The ground-truth file to guess the columns from."
        ),
    ] = None,
    output: Annotated[
        Path,
        typer.Option("--output", "-o", help="The config file to write; - for stdout."),
    ] = Path("receval.yaml"),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print no summary of the guesses.")
    ] = False,
    no_color: console.NoColorOption = False,
) -> None:
    """Write a starter config guessed from your files, or (no files) a documented template."""
    console.configure(no_color=no_color, quiet=quiet)
    to_stdout = str(output) == "-"
    summary: list[str] = []
    try:
        if (predictions is None) != (ground_truth is None):
            raise UsageError(
                "give both --predictions and --ground-truth (to guess a config from them), "
                "or neither (for a documented template)."
            )
        if not to_stdout:
            _destination(output, force)
        folder = Path.cwd() if to_stdout else output.parent
        if predictions is not None and ground_truth is not None:
            guessed = guess_predictions(sniff(predictions, "predictions"))
            truth = guess_ground_truth(sniff(ground_truth, "ground truth"), guessed)
            name = "CONFIG" if to_stdout else output.name
            text = starter_config(guessed, truth, folder, name)
            summary = [*_summary(guessed), *_summary(truth)]
        else:
            text = template()
        if to_stdout:
            sys.stdout.write(text)
        else:
            write_atomic(output, text)
    except RecEvalError as error:
        from receval_cli.cli import _fail

        raise _fail(error) from None
    if console.SETTINGS.verbosity >= 1:
        done = [] if to_stdout else [f"wrote {output}; run it with: receval run {output}"]
        console.err().print("\n".join([*summary, *done]), markup=False)
