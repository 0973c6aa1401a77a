"""What `receval inspect` shows (the Inspection): the run's context and one record per
sampled user; analysis/inspect.py computes it, report/inspection_panels.py renders it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Inspection:
    """Everything `inspect` shows: the run's context and one record per user."""

    config: Path
    model: str
    k: int
    seed: int | None
    evaluated: int  # users evaluated in the whole run
    relevance_threshold: float
    max_depth: int | None  # the lists are cut there (conventions.max_depth)
    has_history: bool
    has_score: bool
    users: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "config": str(self.config),
            "model": self.model,
            "k": self.k,
            "seed": self.seed,
            "users": self.users,
        }
