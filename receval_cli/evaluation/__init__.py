"""Evaluation: the per-user plan, the one assembly (bucket -> Partial -> merge -> finish),
exact sums, the rating, global and click metrics' evaluation, unknown items."""
