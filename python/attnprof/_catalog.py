"""`python3 -m attnprof._catalog [--provider-file SPEC]...`: one JSON line describing this
interpreter and every Python provider it has (traits, availability with the reason, fingerprint).
`attnprof list`, run, tune and trace read it; nothing heavy is imported here."""
from __future__ import annotations

import argparse
import json
import platform
import sys

from . import _abi, _loader


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(prog="attnprof._catalog")
    parser.add_argument("--provider-file", action="append", default=[])
    args = parser.parse_args(argv)
    out = {
        "abi": _abi.ABI_VERSION,
        "python": sys.executable,
        "python_version": platform.python_version(),
        "providers": [],
        "error": "",
    }
    try:
        builtin = {p.name for p in _loader.builtin()}
        out["providers"] = [dict(_loader.describe(p), added=p.name not in builtin)
                            for p in _loader.load(args.provider_file)]
    except _loader.LoadError as e:
        out["error"] = str(e)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
