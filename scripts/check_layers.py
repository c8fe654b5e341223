#!/usr/bin/env python3
"""Checks the layering of src/ and include/attnprof/ (docs/design.md, "Layers").

Every file in src/<layer>/ (src/measure/cuda counts as src/measure) and every public header in
include/attnprof/ belongs to a layer: its src/ folder, or for a public header the src/ folder that
implements it (HEADERS below). An include names a layer too: a quoted "attnprof/x.hpp" through
HEADERS, a quoted "<folder>/..." when <folder> is a src/ folder. A file may include its own layer
and the layers below it in LAYERS; an include of a higher layer (an upward include) fails, one line
per include, as does a cycle between layers, a public header missing from HEADERS, or an
ALLOWED entry that no longer occurs. apps/ may include anything and tests/ are not checked.
Exits 0 and prints each layer's includes when all is well."""
import pathlib
import re
import sys

# The layers, lowest first: a file may include its own layer and those before it.
LAYERS = ["core", "cuda", "measure", "providers", "registry", "report", "run", "trace", "python"]

# Each public header's layer: the src/ folder that implements it. Header-only types take the
# lowest layer that they need and that every user may include.
HEADERS = {
    # core: the problem, the row and the interfaces every layer shares.
    "audit.hpp": "core",
    "command_line.hpp": "core",
    "device.hpp": "core",
    "digest.hpp": "core",
    "env.hpp": "core",
    "fault.hpp": "core",
    "axes.hpp": "core",
    "grid.hpp": "core",
    "inputs.hpp": "core",  # header-only
    "io.hpp": "core",
    "memory.hpp": "core",  # header-only
    "model.hpp": "core",
    "paging.hpp": "core",
    "parse_units.hpp": "core",
    "provider.hpp": "core",  # header-only: the Provider interface
    "provider_settings.hpp": "core",
    "ragged.hpp": "core",
    "reference.hpp": "core",
    "result.hpp": "core",
    "result_json.hpp": "core",
    "spec.hpp": "core",
    "trace_events.hpp": "core",
    "traits.hpp": "core",
    "verify.hpp": "core",
    # measure: engines, statistics, ceilings.
    "engine.hpp": "measure",
    "peaks.hpp": "measure",
    "physics.hpp": "measure",
    "stats.hpp": "measure",
    # registry
    "registry.hpp": "registry",
    # report: sinks and the row codec, journals read back, reports, compare, history.
    "compare.hpp": "report",
    "history.hpp": "report",
    "journal.hpp": "report",
    "report.hpp": "report",
    "sink.hpp": "report",
    # run: the point lifecycle, sweep, supervisor, worker, tuner.
    "child_process.hpp": "run",
    "interrupt.hpp": "run",
    "journal_lock.hpp": "run",
    "merge.hpp": "run",
    "runner.hpp": "run",
    "supervisor.hpp": "run",
    "sweep.hpp": "run",
    "tune.hpp": "run",
    "worker.hpp": "run",
    # trace
    "ncu.hpp": "trace",
    "trace.hpp": "trace",
    # python
    "python.hpp": "python",
}

# Upward includes kept on purpose, each with its reason: (file, include). Keep this short; an
# entry that no longer occurs fails the check.
ALLOWED = {
    # ("src/x/y.cpp", "attnprof/z.hpp"): "why",
}

repo = pathlib.Path(__file__).resolve().parent.parent
src = repo / "src"
public = repo / "include" / "attnprof"
rank = {layer: i for i, layer in enumerate(LAYERS)}
include_re = re.compile(r'^\s*#\s*include\s+(?:"([^"]+)"|<(attnprof/[^>]+)>)', re.MULTILINE)
suffixes = {".cpp", ".hpp", ".h", ".cu", ".cuh"}
errors = []

folders = sorted(p.name for p in src.iterdir() if p.is_dir())
for folder in folders:
    if folder not in rank:
        errors.append(f"src/{folder}: a folder that is no layer (add it to LAYERS in "
                      f"scripts/check_layers.py)")
for name in sorted(set(HEADERS) - {p.name for p in public.iterdir()}):
    errors.append(f"include/attnprof/{name}: in HEADERS but no such header")

files = []  # (path relative to the repository, its layer)
for path in sorted(public.iterdir()):
    if path.suffix not in suffixes:
        continue
    if path.name not in HEADERS:
        errors.append(f"include/attnprof/{path.name}: no layer (add it to HEADERS in "
                      f"scripts/check_layers.py)")
        continue
    files.append((path, HEADERS[path.name]))
for folder in folders:
    if folder in rank:
        files += [(p, folder) for p in sorted((src / folder).rglob("*")) if p.suffix in suffixes]

edges = {layer: set() for layer in LAYERS}
seen_allowed = set()
for path, layer in files:
    rel = path.relative_to(repo).as_posix()
    for match in include_re.finditer(path.read_text(errors="replace")):
        target = match.group(1) or match.group(2)
        head, _, rest = target.partition("/")
        if head == "attnprof" and "/" not in rest:
            if rest not in HEADERS:
                if (public / rest).exists():
                    continue  # reported above as a header without a layer
                errors.append(f"{rel}: includes {target}, which does not exist")
                continue
            to = HEADERS[rest]
        elif head in rank and rest:
            to = head
        else:
            continue  # a header next to the file, or a library's
        if to == layer:
            continue
        edges[layer].add(to)
        if rank[to] > rank[layer]:
            if (rel, target) in ALLOWED:
                seen_allowed.add((rel, target))
                continue
            errors.append(f"{rel}: includes {target} (layer {to}) from layer {layer}: "
                          f"an upward include")

for rel, target in sorted(set(ALLOWED) - seen_allowed):
    errors.append(f"{rel}: ALLOWED lists its include of {target}, which no longer occurs")

# Depth-first search for a cycle in the layer graph (only ALLOWED includes can make one).
state = {layer: 0 for layer in LAYERS}  # 0 unseen, 1 on the stack, 2 done
stack = []


def visit(f):
    state[f] = 1
    stack.append(f)
    for g in sorted(edges[f]):
        if state[g] == 1:
            errors.append("layering cycle: " + " -> ".join(stack[stack.index(g):] + [g]))
        elif state[g] == 0:
            visit(g)
    stack.pop()
    state[f] = 2


for layer in LAYERS:
    if state[layer] == 0:
        visit(layer)

if errors:
    for line in errors:
        print(line, file=sys.stderr)
    sys.exit(1)
for layer in LAYERS:
    print(f"{layer}: {', '.join(sorted(edges[layer], key=rank.get)) or '-'}")
