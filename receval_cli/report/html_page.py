"""The shell of every HTML page receval writes (the run's report, report/html.py, and the
history's trends, report/history_pages.py): the head with a Content-Security-Policy that forbids
every fetch, the inline style, the title, the footer.
"""

from __future__ import annotations

from receval_cli.escaping import html_text, printable

_CSP = "default-src 'none'; style-src 'unsafe-inline'"


def standalone_page(title: str, version: str, header: str, body: str) -> str:
    """A whole page: the shared head (the policy that fetches nothing, the style), the
    title, `header` under it, `body` as the main part, and the footer. A control
    character left in them (a name inside a plot's SVG) is written as printable() does:
    the page may be printed on a terminal."""
    header, body = printable(header), printable(body)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta name="generator" content="receval {html_text(version)}">\n'
        f"<title>{html_text(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f"<header>\n<h1>{html_text(title)}</h1>\n{header}</header>\n<main>\n{body}</main>\n"
        f"<footer>receval {html_text(version)}: a self-contained page (no script, "
        "nothing fetched). Hover a rounded value for its exact one.</footer>\n"
        "</body>\n</html>\n"
    )


_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0;
  color: #1a1a1a; background: #fafafa; line-height: 1.4; }
header, main, footer { max-width: 1200px; margin: 0 auto; padding: 0 1.5rem; }
header { padding-top: 1rem; }
h1 { font-size: 1.6rem; margin: 0.5rem 0; }
h2 { font-size: 1.25rem; border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; }
h3 { font-size: 1rem; }
nav a { color: #1f5fa8; }
section { margin: 1.5rem 0; }
.verdict { display: inline-block; padding: 0.2rem 0.6rem; border-radius: 4px; font-weight: 600; }
.verdict.pass { background: #dff3e1; color: #1d6b2a; }
.verdict.fail { background: #fbe0e0; color: #a11d1d; }
.verdict.none { background: #eee; color: #444; }
.verdict.waived { background: #fff3d6; color: #7a5200; }
.waived { color: #7a5200; font-weight: 600; }
.about, .note, footer { color: #555; font-size: 0.9rem; }
table { border-collapse: collapse; background: #fff; font-size: 0.9rem; margin: 0.5rem 0; }
th, td { border: 1px solid #ddd; padding: 0.25rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.whole { white-space: nowrap; }
td.best { background: #eef6ff; }
.pass { color: #1d6b2a; font-weight: 600; }
.fail { color: #a11d1d; font-weight: 600; }
small.win { color: #1d6b2a; } small.loss { color: #a11d1d; }
details > summary { cursor: pointer; color: #1f5fa8; }
pre { background: #fff; border: 1px solid #ddd; padding: 0.8rem; overflow-x: auto;
  font-size: 0.8rem; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(360px, 1fr));
  gap: 1rem; }
figure.plot { margin: 0; background: #fff; border: 1px solid #ddd; padding: 0.5rem; }
figure.plot svg { width: 100%; height: auto; display: block; }
figure.plot svg * { stroke-linejoin: round; stroke-linecap: butt; }
.wide figure.plot { max-width: 760px; }
.plots.small { grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); }
.plots.trends { grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); }
figcaption { font-size: 0.85rem; color: #444; margin-top: 0.3rem; }
footer { padding: 1.5rem; }
ul.headline { font-size: 1rem; line-height: 1.6; }
ul.headline li.fail::marker { color: #a11d1d; }
"""
