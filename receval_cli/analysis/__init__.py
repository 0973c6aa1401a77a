"""Analysis over evaluated runs: several models, intervals, statistics, gates, `validate`
and `inspect`."""
