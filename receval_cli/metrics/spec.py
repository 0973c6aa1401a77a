"""A metric spec: `name[@k][(param=value, ...)]`, a frozen value whose string round-trips.

>>> spec = MetricSpec.parse("ndcg@10(gain=exponential)")
>>> spec.name, spec.k, spec.params
('ndcg', 10, (('gain', 'exponential'),))
>>> str(spec)
'ndcg@10(gain=exponential)'
>>> str(MetricSpec.parse("map@all"))
'map'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ParamValue = str | int | float

_SPEC = re.compile(
    r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"(?:@(?P<k>[^()\s]+))?"
    r"(?:\((?P<params>[^()]*)\))?$"
)
_PARAM_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

MAX_CUTOFF = 2**32 - 1  # polars' list lengths and ranks are 32-bit


class SpecSyntaxError(ValueError):
    """The text is not a well-formed metric spec; the message says why."""


def parse_value(text: str) -> ParamValue:
    """Read a parameter value: an int, else a float, else the bare word."""
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def format_param(value: ParamValue) -> str:
    return repr(value) if isinstance(value, float) else str(value)


@dataclass(frozen=True, order=True)
class MetricSpec:
    """One metric at one cutoff with explicit parameters (sorted by name). A name in
    another tool's notation (metrics/dialects.py) sets `tool` and `label`, its name there
    (trec_eval's `P_10`), which is then the spec's text and the report's key."""

    name: str
    k: int | None = None
    params: tuple[tuple[str, ParamValue], ...] = ()
    label: str = ""
    tool: str = ""

    def __post_init__(self) -> None:
        if self.k is not None and self.k <= 0:
            raise SpecSyntaxError(f"cutoff must be a positive integer, got {self.k}")
        if self.k is not None and self.k > MAX_CUTOFF:
            raise SpecSyntaxError(
                f"cutoff {self.k} is larger than any list receval can hold ({MAX_CUTOFF:,}); "
                "leave the cutoff out to use whole lists"
            )
        object.__setattr__(self, "params", tuple(sorted(self.params)))

    @classmethod
    def parse(cls, text: str) -> MetricSpec:
        match = _SPEC.match(text.strip())
        if match is None:
            raise SpecSyntaxError(
                f"'{text}' is not a metric spec; write name[@k][(param=value, ...)], "
                "e.g. ndcg@10 or ndcg@10(gain=exponential)"
            )
        return cls(
            match["name"].lower(), _parse_k(match["k"], text), _parse_params(match["params"])
        )

    def param_dict(self) -> dict[str, ParamValue]:
        return dict(self.params)

    def __str__(self) -> str:
        if self.label:
            return self.label
        text = self.name if self.k is None else f"{self.name}@{self.k}"
        if self.params:
            text += "(" + ",".join(f"{n}={format_param(v)}" for n, v in self.params) + ")"
        return text


def _parse_k(raw: str | None, text: str) -> int | None:
    if raw is None or raw.lower() == "all":
        return None
    if not raw.isdigit() or int(raw) <= 0:
        raise SpecSyntaxError(
            f"the cutoff in '{text}' is '{raw}'; it must be a positive integer (or 'all' "
            "for the whole list)"
        )
    return int(raw)


def _parse_params(raw: str | None) -> tuple[tuple[str, ParamValue], ...]:
    if raw is None or not raw.strip():
        return ()
    params: dict[str, ParamValue] = {}
    for part in raw.split(","):
        name, sep, value = (s.strip() for s in part.partition("="))
        if not sep or not _PARAM_NAME.match(name) or not value:
            raise SpecSyntaxError(f"'{part.strip()}' is not a parameter; write name=value")
        if name in params:
            raise SpecSyntaxError(f"parameter '{name}' is given twice")
        params[name] = parse_value(value)
    return tuple(params.items())
