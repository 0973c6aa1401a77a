"""The result types every layer above shares: the Report and the RunReport (report.py),
a gate's result and its wording (gates.py), a comparison with the baseline
(comparison.py), what identifies a run (run_info.py). They import nothing of receval but
its leaf modules, so the evaluation, the engines, the renderers and the history use them
without importing each other."""
