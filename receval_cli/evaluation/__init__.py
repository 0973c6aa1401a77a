"""Evaluation: the per-user plan, the one assembly (bucket -> Partial -> merge -> finish),
the recs table's side columns, the rating, global and click metrics' evaluation, unknown
items."""
