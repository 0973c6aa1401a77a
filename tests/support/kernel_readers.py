"""Which of the compiled core's two readers gave tables in a run (evaluation/kernel_core.py:
`evaluate_compiled`, the inputs read whole; `evaluate_batches`, the predictions in batches)."""

from __future__ import annotations

from typing import Any

import pytest

from receval_cli.evaluation import kernel_core


def watch_readers(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The list each reader's name is added to whenever it gives KernelTables (not None or
    UNORDERED: the run then went on elsewhere)."""
    ran: list[str] = []
    for function in ("evaluate_compiled", "evaluate_batches"):
        original = getattr(kernel_core, function)

        def watched(*args: Any, _original: Any = original, _name: str = function) -> Any:
            result = _original(*args)
            if isinstance(result, kernel_core.KernelTables):
                ran.append(_name)
            return result

        monkeypatch.setattr(kernel_core, function, watched)
    return ran
