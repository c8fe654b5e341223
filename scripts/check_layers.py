#!/usr/bin/env python3
"""Checks the layering of src/ (docs/design.md, "Layers"): no folder includes a folder that
includes it back, directly or through others. Prints the cycle and exits 1 when there is one.

A folder is src/<name> (src/measure/cuda counts as src/measure); an include is a quoted
"<name>/..." path that names another src/ folder. include/attnprof is the public API every layer
may use and is not a layer here."""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent / "src"
folders = sorted(p.name for p in root.iterdir() if p.is_dir())
edges = {f: set() for f in folders}
pattern = re.compile(r'#include\s+"([a-z_]+)/')
for folder in folders:
    for path in (root / folder).rglob("*"):
        if path.suffix not in {".cpp", ".hpp", ".cu", ".cuh"}:
            continue
        for match in pattern.finditer(path.read_text(errors="replace")):
            target = match.group(1)
            if target in edges and target != folder:
                edges[folder].add(target)

# Depth-first search for a cycle in the folder graph.
state = {f: 0 for f in folders}  # 0 unseen, 1 on the stack, 2 done
stack = []


def visit(f):
    state[f] = 1
    stack.append(f)
    for g in sorted(edges[f]):
        if state[g] == 1:
            cycle = stack[stack.index(g):] + [g]
            print("layering cycle: " + " -> ".join(cycle), file=sys.stderr)
            sys.exit(1)
        if state[g] == 0:
            visit(g)
    stack.pop()
    state[f] = 2


for f in folders:
    if state[f] == 0:
        visit(f)
for f in folders:
    print(f"{f}: {', '.join(sorted(edges[f])) or '-'}")
