#!/usr/bin/env python3
"""Writes an example of README.md into a folder, as the README shows it: the ```python block
whose first line is `# NAME` or `# NAME: ...`, as FOLDER/NAME. CI runs the README's examples so.

    python3 scripts/readme_example.py mine_numpy.py /tmp/examples
"""
import pathlib
import re
import sys


def main(argv: list) -> int:
    if len(argv) != 2:
        print("usage: readme_example.py NAME FOLDER", file=sys.stderr)
        return 2
    name, folder = argv
    readme = pathlib.Path(__file__).resolve().parent.parent / "README.md"
    blocks = re.findall(r"^```python\n(.*?)^```", readme.read_text(), re.S | re.M)
    found = [b for b in blocks if re.match(rf"# {re.escape(name)}(:|\n)", b)]
    if len(found) != 1:
        print(f"readme_example: README.md has {len(found)} python blocks headed '# {name}', "
              "not one", file=sys.stderr)
        return 2
    out = pathlib.Path(folder) / name
    if out.exists():
        print(f"readme_example: {out} exists; not replaced", file=sys.stderr)
        return 2
    out.write_text(found[0])
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
