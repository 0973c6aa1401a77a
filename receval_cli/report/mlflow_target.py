"""Where `receval run` logs a run to MLflow: the config's `tracking: {mlflow: {uri,
experiment}}`, or --mlflow-uri and --mlflow-experiment (which override those keys), checked
before any row is read, and by `receval validate`, without contacting anything and
without importing MLflow: the mlflow extra installed, and a URI MLflow takes.

The URIs taken (docs/tracking.md): `sqlite:///PATH` (an embedded database file; relative
to the config file's folder, or from the command line to the working directory; its
folder must exist; a new experiment keeps its artifacts in `mlartifacts/` beside it),
`http(s)://HOST[:PORT][/PATH]` (a tracking server; credentials go in MLflow's variables,
not the URI, which the config, its report and a command line show), and a folder
(`file:///PATH` or a path: MLflow's file store, which MLflow 3 opens only with
MLFLOW_ALLOW_FILE_STORE=true).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from receval_cli.errors import UsageError
from receval_cli.report.renderers import installed

if TYPE_CHECKING:  # the config's models load pydantic: imported when a run starts
    from urllib.parse import SplitResult

    from receval_cli.config.loading import LoadedConfig

MLFLOW_INSTALL = (
    "Install receval's mlflow extra: `uv sync --extra mlflow` (or `pip install "
    "'.[mlflow]'`) in receval's folder."
)
_FORMS = (
    "sqlite:///PATH.db (a database file), http(s)://HOST[:PORT] (a tracking server) or a folder"
)


@dataclass(frozen=True)
class MlflowTarget:
    """Where a run is logged: the tracking URI as MLflow gets it (a sqlite file's or a
    folder's path made absolute), the experiment, the setting that named the URI
    (`tracking.mlflow.uri` or `--mlflow-uri`: the error's key), and where a new
    experiment keeps its artifacts (None: the store's own choice)."""

    uri: str
    experiment: str
    key: str
    artifacts: str | None = None


def mlflow_target(
    loaded: LoadedConfig, uri: str | None = None, experiment: str | None = None
) -> MlflowTarget | None:
    """The run's MLflow target, checked (exit 2 with the fix; nothing contacted), from the
    command line's --mlflow-uri and --mlflow-experiment over the config's tracking.mlflow
    block; None when neither asks for tracking."""
    block = loaded.config.tracking.mlflow if loaded.config.tracking is not None else None
    if uri is None and block is None:
        if experiment is not None:
            fix = "Give a tracking URI: --mlflow-uri sqlite:///mlflow.db, or tracking.mlflow.uri."
            raise UsageError(
                f"--mlflow-experiment {experiment!r} names an experiment but no tracking URI. "
                f"{fix}",
                key="--mlflow-experiment",
                found=experiment,
                fix=fix,
            )
        return None
    if uri is not None:  # from the command line: a relative path is the working directory's
        given, key, base = uri, "--mlflow-uri", Path.cwd()
    else:
        assert block is not None
        given, key, base = block.uri, "tracking.mlflow.uri", loaded.path.parent
    named = experiment if experiment is not None else block.experiment if block else "receval"
    if not named.strip():
        where = "--mlflow-experiment" if experiment is not None else "tracking.mlflow.experiment"
        fix = f"Name the experiment, e.g. {where} nightly."
        raise UsageError(f"{where} is empty. {fix}", key=where, found=named, fix=fix)
    if not installed("mlflow"):
        raise UsageError(
            f"{key} asks to log the run to MLflow, which is not installed. {MLFLOW_INSTALL}",
            key=key,
            found=given,
            fix=MLFLOW_INSTALL,
        )
    resolved, artifacts = _checked_uri(given, key, base.absolute())
    return MlflowTarget(resolved, named, key, artifacts)


def _checked_uri(text: str, key: str, base: Path) -> tuple[str, str | None]:
    """The URI as MLflow gets it and a new experiment's artifact folder, or a UsageError."""
    import urllib.parse  # only where a run is tracked: every run checks its outputs here

    if not text.strip():
        _refuse(text, key, "is empty", f"Write {_FORMS}.")
    split = urllib.parse.urlsplit(text.strip())
    scheme = split.scheme.lower()
    if scheme in ("http", "https"):
        if not split.hostname:
            _refuse(text, key, "names no host", f"Write {scheme}://HOST[:PORT].")
        if split.username is not None or split.password is not None:
            _refuse(
                text,
                key,
                "holds credentials, which a config, its report and a command line show",
                "Leave them out of the URI and set MLFLOW_TRACKING_USERNAME and "
                "MLFLOW_TRACKING_PASSWORD (or MLFLOW_TRACKING_TOKEN) instead.",
            )
        try:
            split.port  # noqa: B018 (a port that is not a number raises here)
        except ValueError:
            _refuse(text, key, "has a port that is not a number", "Write HOST:PORT.")
        return text.strip(), None
    if scheme == "sqlite":
        return _sqlite_uri(text, split, key, base)
    if scheme == "file" or len(scheme) < 2:  # a path (C:/ is a drive, not a scheme)
        return _folder_uri(text, split, key, base), None
    _refuse(text, key, f"has a scheme ({scheme}:) receval does not log to", f"Write {_FORMS}.")


def _sqlite_uri(text: str, split: SplitResult, key: str, base: Path) -> tuple[str, str | None]:
    """sqlite:///relative.db or sqlite:////absolute.db, its folder present."""
    if split.netloc or not split.path.startswith("/") or split.query or split.fragment:
        _refuse(text, key, "is not a sqlite file URI", "Write sqlite:///PATH.db.")
    from urllib.parse import unquote

    given = unquote(split.path[1:])  # the part after sqlite:///
    if not given or given == ":memory:":
        _refuse(
            text,
            key,
            "names no database file (an in-memory database keeps nothing)",
            "Write sqlite:///PATH.db.",
        )
    path = Path(given) if Path(given).is_absolute() else base / given
    if path.is_dir():
        _refuse(text, key, f"names a folder ({path}), not a database file", "Add a file name.")
    if not path.parent.is_dir():
        _refuse(
            text,
            key,
            f"names a database in {path.parent}, which does not exist",
            "Make that folder, or name a file in an existing one.",
        )
    return f"sqlite:///{path}", (path.parent / "mlartifacts").as_uri()


def _folder_uri(text: str, split: SplitResult, key: str, base: Path) -> str:
    """A folder store (a path, or file:///PATH): MLflow 3 opens it only when asked to."""
    if split.scheme:
        if split.netloc not in ("", "localhost"):
            _refuse(text, key, "names a folder on another host", "Write file:///PATH.")
        from urllib.parse import unquote

        given = Path(unquote(split.path))
    else:
        given = Path(text.strip())
    path = given if given.is_absolute() else base / given
    if path.exists() and not path.is_dir():
        _refuse(text, key, f"names a file ({path}), not a folder", f"Write {_FORMS}.")
    if not path.parent.is_dir():
        _refuse(text, key, f"names a folder in {path.parent}, which does not exist", "Make it.")
    if os.environ.get("MLFLOW_ALLOW_FILE_STORE", "").strip().lower() not in ("true", "1"):
        _refuse(
            text,
            key,
            "names a folder: MLflow's file store, which MLflow 3 opens only with "
            "MLFLOW_ALLOW_FILE_STORE=true",
            f"Log to a database file instead (sqlite:///{path.name or 'mlflow'}.db), or "
            "set MLFLOW_ALLOW_FILE_STORE=true.",
        )
    return path.as_uri()


def _refuse(text: str, key: str, problem: str, fix: str) -> NoReturn:
    raise UsageError(
        f"{key} {text!r} {problem}. {fix}",
        key=key,
        found=text,
        fix=fix,
    )
