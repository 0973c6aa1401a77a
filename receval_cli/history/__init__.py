"""The history store: every run's values appended to a folder of Parquet files
(store.py) and the trends read back from it (trends.py), as data (report/history_pages.py
shows them)."""
