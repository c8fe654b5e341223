"""The CLI's verbs from Python: run, profile, tune, report, compare, providers.

Each calls the attnprof executable (_cli.py: which one, and its refusals as UsageError) with the
keyword arguments as its options (heads=16 -> --heads 16, seq=[1024, 2048] -> --seq 1024,2048,
in_process=True -> --in-process) and reads back what the CLI writes: rows as dicts (the JSONL
journal, docs/results.md), the tuner's and the comparison's JSON, the `list --json` lines."""
from __future__ import annotations

import inspect
import json
import os
import tempfile

from . import _cli


def _rows(path: str) -> list:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def _listed(value) -> list:
    if value is None:
        return []
    return [value] if isinstance(value, (str, os.PathLike, dict)) else list(value)


def run(py_provider=None, **options) -> list:
    """`attnprof run` (providers="cudnn.sdpa", heads=16, seq=[1024, 2048], dtype="bf16",
    preset="cpu-small", ...); `py_provider`: one --py-provider FILE.py[:NAME] or a list. One dict
    per row."""
    with tempfile.TemporaryDirectory(prefix="attnprof-") as folder:
        journal = os.path.join(folder, "rows.jsonl")
        args = ["run", "--out", journal, "--no-history"]
        for spec in _listed(py_provider):
            args += ["--py-provider", spec]
        _cli.call(args + _cli.options(options))
        return _rows(journal)


def _function(fn, name: str | None, device: str | None) -> dict:
    """The options that add a function, a function made a provider with @attnprof.provider, or
    a Provider class, defined at module level in a file, to a run: py_provider FILE.py:NAME, its
    name as providers, and the device it runs on: `device`, else the one declared, else the CPU
    for a function that takes numpy arrays (tried here on tiny ones: _inference.py), else the
    CLI's choice (a GPU where one answers), where the worker finds its tensors. The worker
    imports that file, so a script guards its own work with `if __name__ == "__main__":`."""
    from ._inference import NUMPY, trial
    from ._loader import _as_provider
    from .function_provider import FunctionProvider

    target = fn.fn if hasattr(fn, "fn") else fn
    path = inspect.getsourcefile(target)
    attribute = name or getattr(fn, "__name__", None) or target.__name__
    if path is None:
        raise ValueError("a function given to attnprof must be defined in a file")
    module = inspect.getmodule(target)
    if module is not None and not hasattr(module, attribute):
        raise ValueError(f"{attribute} is not a module-level name of {path}")
    provider = _as_provider(getattr(module, attribute) if module is not None else fn, attribute)
    if not device and not isinstance(provider, FunctionProvider):
        device = provider.device
    elif not device:
        # Only the numpy trial runs in this process: no torch import, no CUDA context here.
        device = provider.declared_device
        undeclared = provider.declared_framework in (None, NUMPY.framework)
        if device is None and undeclared and not trial(NUMPY, provider.call):
            device = NUMPY.device
    return {"py_provider": f"{path}:{attribute}", "providers": provider.name, "device": device}


def profile(fn, name: str | None = None, compare="", **options) -> list:
    """Runs `fn(q, k, v[, spec]) -> o` as a provider beside those in `compare` (names or globs,
    a string or a list), with run()'s options, on the function's device unless `device=` says
    otherwise. Its device and framework are found by calling it on tiny inputs where
    @attnprof.provider does not declare them (function_provider.py)."""
    added = _function(fn, name, options.pop("device", None))
    added["providers"] = ",".join([added["providers"], *_listed(compare or None)])
    return run(**options, **added)


def tune(fn_or_providers, max_memory=None, p95=None, json_path=None, **options) -> list:
    """`attnprof tune`: per provider and shape, the largest batch within `max_memory` ("1GiB")
    and `p95` ("50ms"), the throughput-optimal one among those, and why the next batch did not
    fit. `fn_or_providers`: a function (as profile() takes it, run on its device) or provider
    names or globs (a string or a list); the grid as run()'s options (heads=, seq=, head_dim=,
    dtype=, ...). `json_path` keeps the summary (for report(tune=...)). Returns its `results`:
    one dict per provider and shape with provider, shape, largest, optimal, fits, boundary (why
    the search stopped above `largest`) and curve (every batch tried: value, status, fits,
    why_not, median_us, p95_us, samples, peak_bytes, tokens_per_s)."""
    if isinstance(fn_or_providers, (str, list, tuple)):
        options["providers"] = ",".join(_listed(fn_or_providers))
    else:
        options.update(_function(fn_or_providers, None, options.pop("device", None)))
    with tempfile.TemporaryDirectory(prefix="attnprof-") as folder:
        summary = os.fspath(json_path) if json_path else os.path.join(folder, "tune.json")
        limits = {"max_memory": max_memory, "p95": p95, "json": summary}
        _cli.call(["tune"] + _cli.options({**limits, **options}))
        with open(summary) as f:
            return json.load(f)["results"]


def _sources(rows_or_journals, folder: str) -> list:
    """CLI sources for rows (a list of dicts: written to a journal in `folder`), journal paths
    or run ids (a string, a path, or a list of them)."""
    items = _listed(rows_or_journals)
    if items and all(isinstance(r, dict) for r in items):
        path = os.path.join(folder, f"rows{len(os.listdir(folder))}.jsonl")
        with open(path, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in items)
        return [path]
    if any(isinstance(r, dict) for r in items):
        raise ValueError("give rows (dicts), or journals and run ids, not both")
    return [os.fspath(r) for r in items]


def report(rows_or_journals, html=None, markdown=None, **options) -> list:
    """`attnprof report`: plots, a roofline, findings and tables of rows (run()'s dicts),
    journals or run ids, written to `html` and/or `markdown` (tune="tune.json", title=...,
    baseline=..., force=True to replace them). Returns the paths written."""
    with tempfile.TemporaryDirectory(prefix="attnprof-") as folder:
        args = ["report", *_sources(rows_or_journals, folder)]
        _cli.call(args + _cli.options({"html": html, "markdown": markdown, **options}))
    return [os.fspath(p) for p in (html, markdown) if p]


def compare(base, new, **options) -> dict:
    """`attnprof compare`: each point of `new` against `base` (rows, a journal or a run id
    each), judged against both runs' noise (threshold="5%"). Returns the comparison: summary
    (counts by verdict, geomean_ratio, broken, missing, regression), rows (provider, shape,
    base_median_us, new_median_us, ratio, noise, verdict), changes, missing, only_base,
    only_new, env_differences."""
    with tempfile.TemporaryDirectory(prefix="attnprof-") as folder:
        sources = _sources(base, folder) + _sources(new, folder)
        if len(sources) != 2:
            raise ValueError("compare takes one run on each side")
        path = os.path.join(folder, "compare.json")
        _cli.call(["compare", *sources, "--json", path] + _cli.options(options))
        with open(path) as f:
            return json.load(f)


def providers(py_provider=None, **options) -> list:
    """`attnprof list --json`: every provider, available or not, one dict each: provider,
    available, reason, traits, settings."""
    args = ["list", "--json"]
    for spec in _listed(py_provider):
        args += ["--py-provider", spec]
    out = _cli.call(args + _cli.options(options))
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def rows_frame(rows: list):
    """The rows as a pandas DataFrame (flattened: timing.median_us, spec.q_len, ...)."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("rows_frame needs pandas: pip install 'attnprof[pandas]'") from None
    return pd.json_normalize(rows)
