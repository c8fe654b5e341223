#!/usr/bin/env python3
"""Merges attnprof JSONL journals into one, for `attnprof report`: a row of a later journal
replaces the row of an earlier one with the same provider and spec (a point re-run after a fix
replaces its failed row; journals of one timing mode, as failed rows carry none); rows keep their
own `env`, so each still names its build.

    python3 bench/merge_journals.py OUT.jsonl first.jsonl later.jsonl ...

Prints, per input, how many rows it added and how many it replaced.
"""
import gzip
import json
import sys


def _open(path):
    """A journal, gzip-compressed where its name ends in .gz (bench/results keeps large ones so)."""
    return gzip.open(path, "rt") if str(path).endswith(".gz") else open(path)


def point_key(row):
    spec = json.dumps(row.get("spec", {}), sort_keys=True)
    return (row.get("provider"), spec)


def main(out_path, inputs):
    rows, order = {}, []
    for path in inputs:
        added = replaced = 0
        with _open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                row = json.loads(line)
                k = point_key(row)
                if k in rows:
                    replaced += 1
                else:
                    order.append(k)
                    added += 1
                rows[k] = row
        print(f"{path}: {added} rows added, {replaced} replaced")
    with open(out_path, "w") as f:
        for k in order:
            f.write(json.dumps(rows[k], separators=(",", ":")) + "\n")
    print(f"{out_path}: {len(order)} rows")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
