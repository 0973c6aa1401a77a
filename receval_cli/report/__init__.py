"""The Report as data, saved reports, renderers (table, JSON, Markdown, CSV, JUnit,
GitHub, HTML and its plots), the per-user table, destinations and atomic writing."""
