"""Engines: which polars engine, users in partitions, Spark."""
