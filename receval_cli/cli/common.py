"""What every command shares: plain help, the one-line failure, the output options."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from receval_cli import console
from receval_cli.errors import (
    RecEvalError,
)


def plain_metavars(params: list[Any], ctx: Any) -> None:
    """Help as shells show it: `--quiet` (a flag) with no `<bool>`, `--output PATH`,
    `--format FORMAT` (the choices are in its help), `CONFIG PATH`, `REPORTS PATH...`."""
    for param in params:
        if param.metavar is not None:
            continue
        shown = _plain_type(str(param.display_type_rich(ctx)))
        if getattr(param, "param_type_name", "") == "argument":
            param.metavar = str(param.name).upper()
            # typer shows an argument's type from its annotation, not from its metavar
            param.display_type_rich = lambda ctx, shown=shown: shown
        elif param.is_flag:
            param.metavar = ""
        elif "|" in shown:  # choices: the help text lists them
            param.metavar = str(param.name).upper()
        else:
            param.metavar = shown


def _plain_type(shown: str) -> str:
    """`<path>` -> PATH, `<list[Path]>` -> PATH..., `<int>` -> INTEGER."""
    bare = shown.strip("<>")
    several = bare.startswith("list[")
    name = bare.removeprefix("list[").removesuffix("]")
    if "|" not in name:
        name = _METAVARS.get(name.lower(), name.upper())
    return name + ("..." if several else "")


_METAVARS = {"path": "PATH", "str": "TEXT", "int": "INTEGER", "float": "NUMBER"}


class PlainHelp:
    """Help with plain metavars (see plain_metavars), for a command and the group."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        plain_metavars(self.get_params(ctx), ctx)  # type: ignore[attr-defined]
        load_help_renderer()
        super().format_help(ctx, formatter)  # type: ignore[misc]


# typer's help renderer imports two rich modules at its top that receval's help never uses
# (Markdown, for markup_mode="markdown"; Traceback, for pretty exceptions, which are off):
# about 40 ms of the 0.16 s that `receval --help` takes.
_UNUSED_BY_HELP = {"rich.markdown": "Markdown", "rich.traceback": "Traceback"}


def load_help_renderer() -> None:
    """Import typer's rich help renderer with each unused class as a stand-in that imports
    the real class when it is first touched (called, or an attribute read), so nothing
    breaks if a later typer does use it. The stand-in modules are gone from sys.modules
    once the renderer is loaded: a later import of rich.markdown gets the real module."""
    if "typer.rich_utils" in sys.modules:
        return
    standing_in = [name for name in _UNUSED_BY_HELP if name not in sys.modules]
    for name in standing_in:
        module = ModuleType(name)
        setattr(module, _UNUSED_BY_HELP[name], _LoadedOnUse(name, _UNUSED_BY_HELP[name]))
        sys.modules[name] = module
    try:
        import typer.rich_utils  # noqa: F401
    finally:
        for name in standing_in:
            del sys.modules[name]


class _LoadedOnUse:
    """A class from `module`, imported when it is called or an attribute is read."""

    def __init__(self, module: str, name: str) -> None:
        self._where = (module, name)

    def _real(self) -> Any:
        import importlib

        module, name = self._where
        return getattr(importlib.import_module(module), name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._real()(*args, **kwargs)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._real(), attribute)

    def __or__(self, other: Any) -> Any:  # annotations such as `Markdown | Text`
        return Any

    __ror__ = __or__


class UnsetWithoutPydantic:
    """Typer coerces each parameter's value with a pydantic adapter that it builds on first
    use, even for an option left out: `receval run --help` would import pydantic for the
    group's unset options, and shell completion for every option. An unset value (None)
    becomes what typer makes of it (None; () for a repeatable option) without the adapter,
    and completion (which parses leniently and runs nothing) keeps the words as typed; a
    value given to a command that runs is typer's to coerce, as before."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        for param in self.get_params(ctx):  # type: ignore[attr-defined]
            build = getattr(param, "get_runtime_param", None)
            if build is not None and not isinstance(build, _Deferred):
                param.get_runtime_param = _Deferred(build)
        return super().parse_args(ctx, args)  # type: ignore[misc,no-any-return]


class _Deferred:
    """A parameter's `get_runtime_param`: the coercion of an unset value, else typer's."""

    def __init__(self, build: Any) -> None:
        self.build = build

    def __call__(self) -> _Deferred:
        return self

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        if value is None:
            return () if param.multiple or param.nargs == -1 else None
        if ctx.resilient_parsing:
            return value
        return self.build().coerce(value, param=param, ctx=ctx)


class OptionOrder:
    """Keeps the order in which the options came on the command line (click collects a
    repeated option's values per option): `option_order(ctx)` lists the parameter names,
    one per occurrence, so that each `--format` can be paired with the `--output` after
    it (output_pairs.py)."""

    def make_parser(self, ctx: Any) -> Any:
        parser = super().make_parser(ctx)  # type: ignore[misc]
        parse = parser.parse_args

        def parse_in_order(args: list[str]) -> Any:
            opts, rest, order = parse(args=args)
            ctx.meta[_ORDER] = [param.name for param in order]
            return opts, rest, order

        parser.parse_args = parse_in_order
        return parser


_ORDER = "receval.option_order"


def option_order(ctx: Any) -> list[str]:
    """The names of the parameters given, in command-line order (see OptionOrder)."""
    return list(ctx.meta.get(_ORDER, []))


class Command(OptionOrder, UnsetWithoutPydantic, PlainHelp, TyperCommand):
    """A command whose help shows plain metavars and that keeps its options' order."""


def unexpected(error: BaseException) -> str:
    """An exception receval did not expect, as one line for the user and the bug report."""
    text = " ".join(str(error).split())
    if len(text) > 300:
        text = text[:300] + "..."
    return (
        f"internal error: {type(error).__name__}: {text or '(no message)'}. This is a bug in "
        "receval; please report it with the command, the config and a sample of the data."
    )


def error_exit(error: RecEvalError) -> typer.Exit:
    return console.fail(error, error.exit_code)


OutputOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--output",
        "-o",
        help="Write the report here (atomically); - for standard output; FORMAT:PATH names "
        "its format (markdown:$GITHUB_STEP_SUMMARY, github:-). Repeat it for several files: "
        "each file's format comes from its extension (.json, .md, .csv, .xml for JUnit, .txt "
        "for the table, .html); one --format names the format of - and of a name without a "
        "known extension; with several, each names the format of the --output after it.",
    ),
]


AllowDifferentConventions = Annotated[
    bool,
    typer.Option(
        "--allow-different-conventions",
        help="Compare with reports computed under other conventions (refused otherwise, "
        "exit 2: their deltas mix the conventions' effect with the models').",
    ),
]
SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="Set a config key for this run: KEY=VALUE, the key dotted as in the config, "
        "the value YAML (repeat it), e.g. --set predictions.path=today.parquet --set "
        "conventions.relevance_threshold=4. ${NAME} in the config reads an environment "
        "variable.",
    ),
]
AppendOption = Annotated[
    bool,
    typer.Option(
        "--append",
        help="Add the report to the end of the --output files instead of replacing them "
        '(table, markdown, csv and github; e.g. -o "$GITHUB_STEP_SUMMARY" --append).',
    ),
]
