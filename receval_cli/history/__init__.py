"""The history store: every run's values appended to a folder of Parquet files
(store.py), the trends read back from it (trends.py) and shown (pages.py)."""
