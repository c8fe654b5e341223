#!/usr/bin/env python3
"""Fails when a test that is not labelled gpu was skipped for a reason tests/allowed_skips.toml
does not give, or when no test ran: a CPU test whose library CI installs must run, so a skip
cannot hide a failure (a probe that stopped matching once turned a test into a silent skip).

Usage: check_skips.py BUILD_DIR JUNIT_XML [--preset NAME]
  BUILD_DIR   the ctest build folder (its tests' labels: `ctest --show-only=json-v1`)
  JUNIT_XML   what `ctest --output-junit` wrote
  --preset    the preset the tests ran under (default, asan): allow-list entries may name one
Prints one line per unexpected skip, with the test's own reason, and exits 1; else a summary."""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def labels(build_dir: str) -> dict[str, list[str]]:
    listing = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build_dir, check=True,
                             capture_output=True, text=True).stdout
    out = {}
    for test in json.loads(listing)["tests"]:
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        out[test["name"]] = props.get("LABELS", [])
    return out


def skip_reason(case: ET.Element) -> str:
    """The test's own words: gtest's line after "Skipped", or a script's "skipped: ..." line."""
    text = case.findtext("system-out") or ""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.rstrip().endswith(": Skipped") and i + 1 < len(lines):
            return lines[i + 1].strip()
        if line.startswith("skipped: "):
            return line[len("skipped: "):].strip()
    return text.strip().splitlines()[-1] if text.strip() else "(no reason given)"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("build_dir")
    ap.add_argument("junit")
    ap.add_argument("--preset", default="default")
    args = ap.parse_args()
    with open(os.path.join(ROOT, "tests", "allowed_skips.toml"), "rb") as f:
        allowed = tomllib.load(f).get("allow", [])
    by_label = labels(args.build_dir)
    cases = ET.parse(args.junit).getroot().iter("testcase")
    ran = skipped = 0
    unexpected = []
    for case in cases:
        name = case.get("name", "")
        if case.get("status") != "notrun" or case.find("skipped") is None:
            ran += 1
            continue
        skipped += 1
        if "gpu" in by_label.get(name, []):
            continue  # a GPU test skips cleanly without a GPU
        reason = skip_reason(case)
        ok = any(fnmatch.fnmatchcase(name, a["test"]) and a["when"] in reason and
                 args.preset in a.get("presets", [args.preset]) for a in allowed)
        if not ok:
            unexpected.append(f"{name}: {reason}")
    for line in unexpected:
        print(f"check_skips: unexpected skip (not in tests/allowed_skips.toml): {line}",
              file=sys.stderr)
    if ran == 0:
        print("check_skips: no test ran", file=sys.stderr)
    if unexpected or ran == 0:
        return 1
    print(f"check_skips: {ran} tests ran, {skipped} skipped, every skip allowed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
