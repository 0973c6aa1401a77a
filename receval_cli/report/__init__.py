"""Saved reports, renderers (table, JSON, Markdown, CSV, JUnit, GitHub, HTML and its
plots), the per-user table, destinations and atomic writing; the Report itself is in
results/."""
