"""attnprof.run and attnprof.profile: the CLI's `run`, called from Python, rows back as dicts.

The binary is found as $ATTNPROF_BIN, else `attnprof` on PATH, else the repository's build
folders next to this package (build/, build-cpu/)."""
from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import tempfile


def _binary() -> str:
    if os.environ.get("ATTNPROF_BIN"):
        return os.environ["ATTNPROF_BIN"]
    found = shutil.which("attnprof")
    if found:
        return found
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for build in ("build", "build-cpu"):
        candidate = os.path.join(repo, build, "attnprof")
        if os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError("attnprof binary not found: set ATTNPROF_BIN or put it on PATH")


def _option(key: str, value) -> list:
    flag = "--" + key.replace("_", "-")
    if value is True:
        return [flag]
    if value is False or value is None:
        return []
    if isinstance(value, (list, tuple)):
        value = ",".join(str(v) for v in value)
    return [flag, str(value)]


def run(**options) -> list:
    """`attnprof run` with the keyword arguments as its options (providers="cudnn.sdpa",
    heads=16, seq=[1024, 2048], dtype="bf16", py_provider="file.py:fn", ...). Returns one dict per
    row (docs/results.md); raises RuntimeError with the CLI's message when the run fails."""
    py_providers = options.pop("py_provider", None) or []
    if isinstance(py_providers, str):
        py_providers = [py_providers]
    with tempfile.TemporaryDirectory(prefix="attnprof-") as folder:
        journal = os.path.join(folder, "rows.jsonl")
        command = [_binary(), "run", "--out", journal, "--no-history"]
        for spec in py_providers:
            command += ["--py-provider", spec]
        for key, value in options.items():
            command += _option(key, value)
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0 and not os.path.exists(journal):
            message = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise RuntimeError(f"attnprof run failed ({done.returncode}): {message}")
        with open(journal) as f:
            return [json.loads(line) for line in f if line.strip()]


def profile(fn, name: str | None = None, compare: str = "", **options) -> list:
    """Profiles `fn(q, k, v[, spec]) -> o` (or a Provider class or a function made a provider
    with @attnprof.provider) beside the providers in `compare`. The worker imports fn's file, so
    the script must guard its own work with `if __name__ == "__main__":`."""
    target = fn.fn if hasattr(fn, "fn") else fn
    path = inspect.getsourcefile(target)
    attribute = name or getattr(fn, "__name__", None) or target.__name__
    if path is None:
        raise ValueError("profile() needs a function defined in a file")
    module = inspect.getmodule(target)
    if module is not None and not hasattr(module, attribute):
        raise ValueError(f"{attribute} is not a module-level name of {path}")
    providers = _provider_name(fn, module, attribute)
    if compare:
        providers += "," + compare
    return run(py_provider=f"{path}:{attribute}", providers=providers, **options)


def _provider_name(fn, module, attribute) -> str:
    from ._loader import _as_provider

    obj = getattr(module, attribute) if module is not None else fn
    return _as_provider(obj, attribute).name


def rows_frame(rows: list):
    """The rows as a pandas DataFrame (flattened: timing.median_us, spec.q_len, ...)."""
    import pandas as pd

    return pd.json_normalize(rows)
