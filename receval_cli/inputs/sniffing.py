"""Sniff a data file for `receval init`: its format, its columns and types, and a guess of
each column's role (user, item, score, rank, items, relevance, ...).
Over 400 lines: one job, a file's schema read and its columns' roles guessed; the
guessers share one picker (_Picker) and its notes.

Only the schema and the first rows are read. Columns are matched to roles by name (common
synonyms), then by type; every guess that is not a plain name match carries a note.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from receval_cli.errors import InputError
from receval_cli.inputs.diagnosis import check_header_encoding
from receval_cli.inputs.scanning import ReadFormat, detect_format, not_a_file, scan
from receval_cli.wording import setting

SAMPLE_ROWS = 1000
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


@dataclass(frozen=True)
class Sniffed:
    """A data file's format, schema and first rows."""

    role: str
    path: Path
    format: ReadFormat
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
    special = not_a_file(path)
    if special is not None:
        fix = f"Give {option} a regular file (save a pipe's or a device's data to a file first)."
        raise InputError(f"{role} file {path} {special[0]}. {fix}", path=path, fix=fix)
    if not path.exists():
        fix = f"Check the {option} path."
        raise InputError(f"{role} file {path} does not exist. {fix}", path=path, fix=fix)
    if path.is_dir():
        fix = f"Give {option} a data file."
        raise InputError(f"{role} file {path} is a folder. {fix}", path=path, fix=fix)
    if path.stat().st_size == 0:
        fix = "Write the data first."
        raise InputError(f"{role} file {path} is empty (0 bytes). {fix}", path=path, fix=fix)


def _format(path: Path, role: str) -> tuple[ReadFormat, bool]:
    """The format (from the extension, else TREC by content) and whether content told it."""
    try:
        fmt = detect_format(path, None, role)
    except InputError:
        extension = "".join(path.suffixes) or "(none)"
        fix = (
            "Give the file the extension of its format: .csv, .tsv, .parquet, .jsonl (.gz or "
            ".zst for compressed CSV), or .run/.qrels for TREC."
        )
        raise InputError(
            f"{role} file {path}: cannot tell the format from the extension '{extension}' nor "
            f"from the content. {fix}",
            path=path,
            found=extension,
            fix=fix,
        ) from None
    return fmt, fmt == "trec" and path.suffix.lower() not in (".run", ".qrels")


def _read(path: Path, fmt: ReadFormat, separator: str | None, role: str) -> pl.LazyFrame:
    try:
        return scan(path, fmt, separator, role)
    except InputError as error:
        setting_text = f"(or set {'ground_truth' if role == 'ground truth' else role}.format)"
        option_text = "(or give it the extension of its format)"
        worded = InputError(str(error).replace(setting_text, option_text))
        worded.fields = {  # the reader's fields, worded the same way
            name: value.replace(setting_text, option_text) if isinstance(value, str) else value
            for name, value in error.fields.items()
        }
        raise worded from None


def sniff(path: Path, role: str) -> Sniffed:
    """Read a data file's schema and its first SAMPLE_ROWS rows."""
    _check_file(path, role)
    fmt, from_content = _format(path, role)
    frame = _read(path, fmt, None, role)
    separator = None
    names = frame.collect_schema().names()
    check_header_encoding(path, role, names)  # UTF-16 or UTF-32: NUL bytes in the names
    if fmt in ("csv", "tsv") and len(names) == 1:
        found = [s for s in (";", "\t", "|", ",") if s in names[0]]
        if found:  # the header was read as one column: another field separator
            separator = found[0]
            frame = _read(path, fmt, separator, role)
    try:
        sample = frame.head(SAMPLE_ROWS).collect()
    except pl.exceptions.PolarsError as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else "unreadable"
        fix = f"Check that the file is complete and really {fmt}."
        raise InputError(
            f"{role} file {path} cannot be read as {fmt}: {first}. {fix}", path=path, fix=fix
        ) from None
    if sample.height == 0:
        fix = "Write the data first."
        raise InputError(
            f"{role} file {path} has a header but no rows; init guesses the columns from "
            f"the data. {fix}",
            path=path,
            fix=fix,
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
    name = setting(section, "columns", key)
    fix = (
        f"Rename that column (e.g. to '{key}'), or write the config from the template "
        f"(`receval init`, no arguments) and set {name}."
    )
    return InputError(
        f"{role} file {sniffed.path}: cannot tell which column holds the {what}; its "
        f"columns are: {sniffed.columns_text()}. {fix}",
        path=sniffed.path,
        key=name,
        found=sniffed.schema.names(),
        fix=fix,
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
        low, high = (number_text(v) for v in _range(sniffed, relevance))
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


def number_text(number: float) -> str:
    return str(int(number)) if number.is_integer() else str(number)
