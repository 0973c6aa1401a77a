"""The hypothesis profile every property test runs under: no deadline and no health check.

Hypothesis times each example (a deadline, 200 ms by default) and the generation of the
inputs (the too_slow health check): on a loaded machine either fails a test whose values
are right. Loaded on import, by tests/conftest.py for the pytest process and its workers,
and by the fork server of tests/support/process_isolation.py (and each child it forks) for the
tests that run in a process of their own, where conftest.py is not imported. A test's own
@settings changes how many examples it draws, never these two (tests/test_clock_free.py
checks that no test sets them again).
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

PROFILE = "receval"

settings.register_profile(PROFILE, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(PROFILE)
