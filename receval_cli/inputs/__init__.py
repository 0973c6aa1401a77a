"""Reading the inputs: readers and column mapping, the optional inputs, TREC files, row
checks, failure diagnosis, the change watch, and `convert`."""
