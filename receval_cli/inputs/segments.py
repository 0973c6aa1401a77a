"""User segments read: each user's value of every attribute of segment_by, checked.

The attributes come from the `segments` file (one row per user), else from columns of the
ground truth (each user must have one value). A segment's metrics are the run's metrics
on the predictions and ground truth restricted to its users: the same numbers as filtering
the input files first (the interactions, catalog and baseline are not restricted: item
popularity stays the whole log's). Each attribute splits the users on its own; combine
attributes in one column for a cross of two. A user without a value is in `attribute=(none)`.

The run planner (engines/run_plan.py) turns these values into the segment list and checks
the gates on segments; the segments are computed in the run's own pass, by every engine's
buckets (evaluation/segment_split.py): a segment's numbers, checks and messages are those
of a run on its users alone.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from receval_cli.config.loading import LoadedConfig
from receval_cli.config.model import SegmentsConfig
from receval_cli.errors import InputError
from receval_cli.inputs.diagnosis import READ_ERRORS, check_header_encoding, read_failure
from receval_cli.inputs.readers import Input, read_ground_truth
from receval_cli.inputs.scanning import detect_format, scan
from receval_cli.wording import setting


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


def segments_input(config: SegmentsConfig, path: Path, attributes: list[str]) -> Input:
    """The segments file scanned and its columns checked (its rows not read): `frame` has
    `user` (the id as text) and the attributes as text."""
    role = "segments"
    fmt = detect_format(path, config.format, role)
    raw = scan(path, fmt, config.separator, role, id_columns=(config.columns.user,))
    return map_segments(raw, config, path, attributes, fmt)


def map_segments(
    raw: pl.LazyFrame, config: SegmentsConfig, path: Path, attributes: list[str], fmt: str
) -> Input:
    """The segments file's columns checked and selected: `user` (the id as text) and each
    attribute as text. `fmt` "spark": a Spark table's or URI's schema (a probe)."""
    names = raw.collect_schema().names()
    for column in (config.columns.user, *attributes):
        if column not in names:
            if fmt != "spark":
                check_header_encoding(path, "segments", names)  # UTF-16 or UTF-32: NUL bytes
            named_by = ("segments", "columns", "user")
            key = setting(*named_by) if column == config.columns.user else setting("segment_by")
            raise InputError(
                f"segments file {path} has no column '{column}' (named by {key}). Its "
                f"columns are: {', '.join(names)}.",
                key=key,
                path=path,
                column=column,
                found=names[:50],
            )
    schema = raw.collect_schema()
    for attribute in attributes:
        if schema[attribute].is_nested():
            raise nested_attribute(attribute, str(schema[attribute]), path, "segments")
    frame = raw.select(
        pl.col(config.columns.user).cast(pl.String).alias("user"),
        *(pl.col(a).cast(pl.String) for a in attributes),
    )
    columns = {"user": config.columns.user}
    return Input("segments", path, fmt, "segments", columns, frame, raw, config.separator)


def _from_file(config: SegmentsConfig, path: Path, attributes: list[str]) -> pl.DataFrame:
    source = segments_input(config, path, attributes)
    try:
        table = source.frame.collect()
    except READ_ERRORS as error:
        raise read_failure(path, source.format, config.separator, "segments", error) from None
    repeated = table.height - table.get_column("user").n_unique()
    if repeated:
        users = table.get_column("user")
        examples = users.filter(users.is_duplicated()).unique(maintain_order=True).head(3)
        raise repeated_users(path, repeated, examples.to_list())
    return table


def repeated_users(path: Path | str, repeated: int, examples: list[str]) -> InputError:
    fix = "give each user one row."
    return InputError(
        f"segments file {path}: {repeated} row(s) repeat a user already listed; {fix}",
        path=path,
        found={"rows": repeated, "examples": examples},
        fix=fix,
    )


def _from_truth(truth: Input, attributes: list[str]) -> pl.DataFrame:
    schema = truth.raw.collect_schema()
    require_truth_columns(schema.names(), attributes, truth.path)
    for attribute in attributes:
        if schema[attribute].is_nested():
            raise nested_attribute(attribute, str(schema[attribute]), truth.path, "ground truth")
    user = truth.columns["user"]
    try:
        per_user = (
            truth.raw.select(
                pl.col(user).cast(pl.String).alias("user"),
                *(pl.col(a).cast(pl.String) for a in attributes),
            )
            .group_by("user")
            .agg(*(pl.col(a).drop_nulls().unique().sort().alias(a) for a in attributes))
            .collect()
        )
    except READ_ERRORS as error:
        raise truth.read_failure(error) from None
    for attribute in attributes:
        several = per_user.filter(pl.col(attribute).list.len() > 1).sort("user")
        if several.height:
            example = several.row(0, named=True)
            raise several_values(attribute, example["user"], example[attribute], truth.path)
    return per_user.with_columns(pl.col(a).list.first() for a in attributes)


def require_truth_columns(names: list[str], attributes: list[str], path: Path | str) -> None:
    """Attributes taken from the ground truth must be columns of it."""
    missing = [a for a in attributes if a not in names]
    if missing:
        key = setting("segment_by")
        fix = f"Add a segments file ({setting('segments', 'path')}) with that column, or fix {key}."
        raise InputError(
            f"{key} names '{missing[0]}', which is not a column of the ground truth "
            f"{path} (its columns: {', '.join(names)}), and the config gives no segments "
            f"file. {fix}",
            key=key,
            path=path,
            column=missing[0],
            found=names[:50],
            fix=fix,
        )


def nested_attribute(attribute: str, type_name: str, path: Path | str, role: str) -> InputError:
    """A segment attribute whose column holds lists or structs: a segment is one value."""
    key = setting("segment_by")
    fix = f"Give '{attribute}' one value per user (text or a number), or drop it from {key}."
    return InputError(
        f"{key} names '{attribute}', a column of the {role} file {path} of type "
        f"{type_name}; a segment attribute needs one plain value per user, not a list or a "
        f"struct. {fix}",
        key=key,
        path=path,
        column=attribute,
        found=type_name,
        fix=fix,
    )


def several_values(attribute: str, user: str, values: list[str], path: Path | str) -> InputError:
    """A user with several values of an attribute in the ground truth (the smallest such
    user, as text, and its values in order)."""
    key = setting("segment_by")
    fix = "Use a segments file instead."
    return InputError(
        f"{key} '{attribute}': user {user!r} has several values in the ground truth {path} "
        f"({', '.join(values)}); a segment attribute needs one value per user. {fix}",
        key=key,
        path=path,
        column=attribute,
        found={"user": user, "values": list(values)},
        fix=fix,
    )
