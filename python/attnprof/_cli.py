"""The attnprof executable, from Python: where it is, how it is called, and its refusals as
exceptions.

The binary is $ATTNPROF_BIN, else the one installed with this package (`pip install .` puts both
in one environment), else the build folders of the source tree this package lies in (build/,
build-cpu/), else `attnprof` on PATH. Exit 2 (refused before any work started: docs/usage.md, "Exit
codes") raises UsageError with the CLI's one-line message; any other failure raises RunError."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

_PREFIX = "attnprof: error: "


class Error(Exception):
    """attnprof failed; the message is the CLI's own line (without its "attnprof: error: ")."""

    def __init__(self, message: str, returncode: int):
        super().__init__(message)
        self.returncode = returncode


class UsageError(Error, ValueError):
    """The CLI refused the request before any work started (exit 2): bad options, grid or
    preset, an input it cannot read, an output it may not write."""


class RunError(Error):
    """The work ran and failed (exit 1), or was stopped by a signal (128 + N)."""


def _installed_binary() -> str | None:
    """The executable recorded with the distribution this very package file came from."""
    from importlib import metadata

    try:
        dist = metadata.distribution("attnprof")
    except metadata.PackageNotFoundError:
        return None
    files = dist.files or []
    here = Path(__file__).resolve()
    if not any(Path(dist.locate_file(f)).resolve() == here for f in files if f.name == here.name):
        return None  # another attnprof is installed; this one runs from elsewhere
    for f in files:
        if f.name == "attnprof":
            return str(Path(dist.locate_file(f)).resolve())
    return None


def binary() -> str:
    if os.environ.get("ATTNPROF_BIN"):
        return os.environ["ATTNPROF_BIN"]
    repo = Path(__file__).resolve().parents[2]
    candidates = [_installed_binary()]
    if (repo / "CMakeLists.txt").is_file():
        candidates += [str(repo / build / "attnprof") for build in ("build", "build-cpu")]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("attnprof")
    if found:
        return found
    raise FileNotFoundError(
        "attnprof binary not found: this package was not installed with one (`pip install .` at "
        "the repository's root installs both), its source tree has no build/ or build-cpu/ "
        "attnprof and none is on PATH; or set ATTNPROF_BIN")


def _message(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith(_PREFIX):
            return line[len(_PREFIX):]
    return lines[-1] if lines else "no message"


def call(args: list) -> str:
    """Runs `attnprof ARGS...`; its stdout. Raises UsageError on exit 2, RunError on any other
    failure."""
    done = subprocess.run([binary(), *[str(a) for a in args]], capture_output=True, text=True)
    if done.returncode == 2:
        raise UsageError(_message(done.stderr), 2)
    if done.returncode != 0:
        raise RunError(f"attnprof {args[0]} failed ({done.returncode}): {_message(done.stderr)}",
                       done.returncode)
    return done.stdout


def options(values: dict) -> list:
    """Keyword arguments as CLI options: heads=16 -> --heads 16, seq=[1024, 2048] -> --seq
    1024,2048, in_process=True -> --in-process; False and None are left out."""
    out = []
    for key, value in values.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            out.append(flag)
        elif value is False or value is None:
            continue
        elif isinstance(value, (list, tuple)):
            out += [flag, ",".join(str(v) for v in value)]
        else:
            out += [flag, str(value)]
    return out
