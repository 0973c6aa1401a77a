#!/usr/bin/env python3
"""Convert receval's golden CSVs to trec_eval's TREC input files (standard library only).

usage: to_trec.py DATA_DIR OUT_DIR DATASET [DATASET ...]

For each DATASET reads DATA_DIR/<DATASET>_truth.csv (user,item,relevance) and
DATA_DIR/<DATASET>_predictions.csv (user,item,score) and writes
  OUT_DIR/<DATASET>.qrels      `user 0 item grade`, grade text as in the CSV
  OUT_DIR/<DATASET>.qrels_ret  the same lines, kept only for users that have at least
                               one prediction (trec_eval 10.0 without -c exits when a
                               qrels query has no results; see NOTES.md)
  OUT_DIR/<DATASET>.run        `user Q0 item rank score receval`, score text as in the
                               CSV, rank = 1-based line number within the user
Rows keep their order in the CSV files.
"""

import csv
import os
import sys


def read(path, fields):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != fields:
            sys.exit(f"{path}: header {reader.fieldnames}, expected {fields}")
        rows = [tuple(r[k] for k in fields) for r in reader]
    for row in rows:
        for v in row:
            if not v or any(c.isspace() for c in v):
                sys.exit(f"{path}: empty field or whitespace in {row}")
    return rows


def convert(data_dir, out_dir, name):
    truth = read(os.path.join(data_dir, f"{name}_truth.csv"), ["user", "item", "relevance"])
    preds = read(os.path.join(data_dir, f"{name}_predictions.csv"), ["user", "item", "score"])
    rank = {}
    with open(os.path.join(out_dir, f"{name}.run"), "w", newline="\n") as f:
        for user, item, score in preds:
            rank[user] = rank.get(user, 0) + 1
            f.write(f"{user} Q0 {item} {rank[user]} {score} receval\n")
    with (
        open(os.path.join(out_dir, f"{name}.qrels"), "w", newline="\n") as f,
        open(os.path.join(out_dir, f"{name}.qrels_ret"), "w", newline="\n") as g,
    ):
        for user, item, grade in truth:
            line = f"{user} 0 {item} {grade}\n"
            f.write(line)
            if user in rank:
                g.write(line)


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    for ds in sys.argv[3:]:
        convert(sys.argv[1], sys.argv[2], ds)
