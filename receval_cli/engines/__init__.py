"""Engines: the run planner (the engine chosen, every refusal made), which polars engine,
users in partitions, Spark."""
