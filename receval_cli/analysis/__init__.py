"""Analysis over evaluated runs: several models, segments, intervals, statistics, gates,
`validate` and `inspect`."""
