"""The Python worker: `python3 -m attnprof._worker --lib LIB [--provider-file SPEC]... -- ARGS`.

Started by the supervisor for the Python providers' worker group. It loads the providers, then
hands the process to libattnprof_py.so, which speaks the worker protocol on stdin/stdout (ARGS
are `attnprof worker`'s: --device, --threads, --parent) and calls back for every provider
operation. stdout becomes stderr there: what providers print cannot break the protocol."""
from __future__ import annotations

import argparse
import ctypes
import importlib.util
import json
import sys

from . import _abi, _loader
from ._host import Host


def main(argv: list) -> int:
    if "--" in argv:
        split = argv.index("--")
        ours, worker_args = argv[:split], argv[split + 1:]
    else:
        ours, worker_args = argv, []
    parser = argparse.ArgumentParser(prog="attnprof._worker")
    parser.add_argument("--lib", required=True)
    parser.add_argument("--provider-file", action="append", default=[])
    args = parser.parse_args(ours)

    # PyTorch first: its CUDA libraries (cudart, cuBLAS) are then the ones the library binds to,
    # so the process holds one copy of each.
    if importlib.util.find_spec("torch") is not None:
        import torch  # noqa: F401

    providers = _loader.load(args.provider_file)
    host = Host(providers)
    described = json.dumps([_loader.describe(p) for p in providers])
    lib = _abi.load(args.lib)
    callback = _abi.CALLBACK(host.dispatch)
    encoded = [a.encode() for a in worker_args]
    argv_c = (ctypes.c_char_p * (len(encoded) + 1))(*encoded, None)
    return int(lib.attnprof_py_serve(len(encoded), argv_c, described.encode(), callback))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
