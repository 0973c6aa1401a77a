"""The robustness tests' shared fixtures: `big_config` (tests/support/fault_cases.py), a
run long enough to be stopped mid-way, used by test_faults.py and
test_signals_and_streams.py. A fixture is found in a test module's or a conftest's
names, so it is imported here once rather than into each module (where an unused-import
check would take it out)."""

from fault_cases import big_config

__all__ = ["big_config"]
