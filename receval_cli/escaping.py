"""Text from data or a config (ids, model and segment names, titles, warnings that quote
them) made safe for each output format, so a value is shown, never obeyed:

- terminal: control characters (ESC, BEL, CR, ...) as repr() writes them;
- Markdown: every character Markdown or inline HTML could read escaped with a backslash
  (`![t](http://x)` and `<img>` show as text, a `|` cannot end a table cell);
- CSV: control characters as for a terminal (a CSV report may be printed), and a text cell
  that a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, a tab or a carriage
  return first) starts with `'`;
- XML (JUnit): characters XML 1.0 forbids (most controls) and the C1 controls it
  discourages (U+007F-U+009F, which a terminal may obey: U+009B starts a CSI) as `\\xNN`;
- HTML: `<`, `>`, `&` and quotes as entities, control characters as for a terminal (an
  HTML report may be printed);
- JSON written with ensure_ascii=False: the C1 controls (U+007F-U+009F) as `\\u00XX`
  (json.dumps escapes the others);
- GitHub workflow commands: `%`, CR and LF (and `:` and `,` in a property) %-encoded.
"""

from __future__ import annotations

import html
import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~&])")
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _as_repr(found: re.Match[str]) -> str:
    return repr(found.group())[1:-1]


def printable(text: object) -> str:
    """For a terminal: control characters written as repr() writes them (`\\x1b`);
    newlines and tabs stay."""
    return _CONTROL.sub(_as_repr, str(text))


def example(value: object, limit: int = 40) -> str:
    """A value quoted in a message (repr), cut after `limit` characters: an id or a line
    of data may be megabytes long."""
    shown = repr(value)
    if len(shown) <= limit:
        return shown
    return f"{shown[:limit]}... ({len(shown) - limit:,} more characters)"


def markdown_text(text: object, line_break: str = " ") -> str:
    """For Markdown prose or a table cell: every special character escaped, the lines
    joined by `line_break` (a space; `<br>` keeps them apart in a table cell)."""
    lines = printable(text).splitlines()
    return line_break.join(_MARKDOWN.sub(r"\\\1", line) for line in lines)


def markdown_code(text: object) -> str:
    """A name as a Markdown code span (a metric name), or escaped text when a backtick,
    a `|` or a line break would end the span or the table cell."""
    flat = printable(text)
    if any(c in flat for c in "`|\n\r"):
        return markdown_text(flat)
    return f"`{flat}`"


def csv_cell(value: object) -> object:
    """For a CSV cell: control characters as printable() writes them, and a text that
    starts like a formula gets a leading `'`; numbers and None are left as they are."""
    if not isinstance(value, str):
        return value
    if value.startswith(_FORMULA_START):
        value = "'" + value
    return printable(value)


def html_text(text: object, quote: bool = True) -> str:
    """For HTML text or an attribute value: html.escape of the printable text."""
    return html.escape(printable(text), quote=quote)


_C1 = re.compile(r"[\x7f-\x9f]")


def json_text(text: str) -> str:
    """A JSON document written with ensure_ascii=False, its C1 controls (raw there, and
    U+009B starts a terminal's CSI) as \\u escapes: they can only be inside strings."""
    return _C1.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def xml_text(text: object) -> str:
    """For XML 1.0 text or an attribute: the characters it forbids as `\\xNN`."""
    return _NOT_XML.sub(_as_repr, str(text))


def github_data(text: str) -> str:
    """A workflow command's message: %, CR and LF escaped as GitHub's runner expects."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """A workflow command's property value: also `:` and `,` escaped."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")
