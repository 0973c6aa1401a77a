"""User segments: which users fall in `attribute=value`, for every attribute of segment_by.

The attributes come from the `segments` file (one row per user), else from columns of the
ground truth (each user must have one value). A segment's metrics are the run's metrics
on the predictions and ground truth restricted to its users: the same numbers as filtering
the input files first (the interactions, catalog and baseline are not restricted: item
popularity stays the whole log's). Each attribute splits the users on its own; combine
attributes in one column for a cross of two. A user without a value is in `attribute=(none)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from receval_cli.config import LoadedConfig, SegmentsConfig
from receval_cli.errors import InputError
from receval_cli.io import Input, detect_format, read_ground_truth, scan
from receval_cli.read_errors import READ_ERRORS, read_failure

NONE = "(none)"


@dataclass(frozen=True)
class Segment:
    name: str  # attribute=value
    users: pl.Series  # the users' ids, as text
    complement: bool = False  # attribute=(none): every user but these

    def restrict(self, source: Input) -> None:
        """Keep only this segment's users in an input (ids compared as text)."""
        listed = pl.col("user").cast(pl.String).is_in(self.users.implode())
        source.frame = source.frame.filter(~listed if self.complement else listed)


def user_attributes(loaded: LoadedConfig) -> pl.DataFrame | None:
    """(user as text, one column per segment_by attribute), or None without segments."""
    config = loaded.config
    if not config.segment_by:
        return None
    if config.segments is not None:
        path = loaded.resolve_path(config.segments.path)
        return _from_file(config.segments, path, config.segment_by)
    truth = read_ground_truth(config.ground_truth, loaded.resolve_path(config.ground_truth.path))
    return _from_truth(truth, config.segment_by)


def _from_file(config: SegmentsConfig, path: Path, attributes: list[str]) -> pl.DataFrame:
    role = "segments"
    fmt = detect_format(path, config.format, role)
    frame = scan(path, fmt, config.separator, role)
    names = frame.collect_schema().names()
    for column in (config.columns.user, *attributes):
        if column not in names:
            key = "segments.columns.user" if column == config.columns.user else "segment_by"
            raise InputError(
                f"segments file {path} has no column '{column}' (named by {key}). Its "
                f"columns are: {', '.join(names)}."
            )
    try:
        table = frame.select(
            pl.col(config.columns.user).cast(pl.String).alias("user"),
            *(pl.col(a).cast(pl.String) for a in attributes),
        ).collect()
    except READ_ERRORS as error:
        raise read_failure(path, fmt, config.separator, role, error) from None
    repeated = table.height - table.get_column("user").n_unique()
    if repeated:
        raise InputError(
            f"segments file {path}: {repeated} row(s) repeat a user already listed; give each "
            "user one row."
        )
    return table


def _from_truth(truth: Input, attributes: list[str]) -> pl.DataFrame:
    names = truth.raw.collect_schema().names()
    missing = [a for a in attributes if a not in names]
    if missing:
        raise InputError(
            f"segment_by names '{missing[0]}', which is not a column of the ground truth "
            f"{truth.path} (its columns: {', '.join(names)}), and the config gives no segments "
            "file. Add a segments file (segments.path) with that column, or fix segment_by."
        )
    user = truth.columns["user"]
    try:
        per_user = (
            truth.raw.select(
                pl.col(user).cast(pl.String).alias("user"),
                *(pl.col(a).cast(pl.String) for a in attributes),
            )
            .group_by("user")
            .agg(*(pl.col(a).drop_nulls().unique().alias(a) for a in attributes))
            .collect()
        )
    except READ_ERRORS as error:
        raise truth.read_failure(error) from None
    for attribute in attributes:
        several = per_user.filter(pl.col(attribute).list.len() > 1)
        if several.height:
            example = several.row(0, named=True)
            raise InputError(
                f"segment_by '{attribute}': user {example['user']!r} has several values in "
                f"the ground truth {truth.path} ({', '.join(example[attribute])}); a segment "
                "attribute needs one value per user. Use a segments file instead."
            )
    return per_user.with_columns(pl.col(a).list.first() for a in attributes)


def segments_of(attributes: pl.DataFrame, names: list[str]) -> list[Segment]:
    """Every attribute=value, in attribute order then value order; attribute=(none) holds
    the users without a value (a null, or absent from the segments file) when there are."""
    found = []
    for attribute in names:
        values = attributes.get_column(attribute)
        for value in sorted(values.drop_nulls().unique().to_list()):
            users = attributes.filter(values == value).get_column("user")
            found.append(Segment(f"{attribute}={value}", users))
        valued = attributes.filter(values.is_not_null()).get_column("user")
        found.append(Segment(f"{attribute}={NONE}", valued, complement=True))
    return found
