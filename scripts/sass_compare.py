#!/usr/bin/env python3
"""Whether two builds' CUDA kernels are the same machine code: compares `cuobjdump -sass` of each
object file function by function (per architecture), so a change that only reorders template
instantiations in the fat binary still compares equal, and any instruction that differs does not.

    scripts/sass_compare.py dump BUILD_DIR OUT_DIR    # cuobjdump -sass of every .cu.o under BUILD_DIR
    scripts/sass_compare.py compare BEFORE_DIR AFTER_DIR

cuobjdump and nvdisasm come with a full CUDA toolkit, or from PyPI (nvidia-cuda-cuobjdump,
nvidia-cuda-nvdisasm wheels: their nvidia/cu13/bin on PATH). Exit 1 when a function differs or
is missing on one side."""
import pathlib
import re
import subprocess
import sys

HEADER = re.compile(r"(Fatbin|====|arch = |code version|host = |compile_size|compressed|ptxasOptions)")


def functions(path: pathlib.Path) -> dict:
    """(arch, mangled name) -> the function's non-blank SASS lines."""
    out, arch, current = {}, None, None
    for line in path.read_text().splitlines():
        if m := re.match(r"\s*code for (sm_\w+)", line):
            arch, current = m.group(1), None
        elif HEADER.match(line):
            current = None
        elif m := re.match(r"\s*Function : (\S+)", line):
            current = (arch, m.group(1))
            out[current] = []
        elif current and line.strip():
            out[current].append(line)
    return out


def dump(build: str, out: str) -> int:
    pathlib.Path(out).mkdir(parents=True, exist_ok=True)
    for obj in sorted(pathlib.Path(build).rglob("*.cu.o")):
        text = subprocess.run(["cuobjdump", "-sass", str(obj)], check=True, capture_output=True,
                              text=True).stdout
        (pathlib.Path(out) / (obj.name + ".sass")).write_text(text)
    return 0


def compare(before: str, after: str) -> int:
    bad = 0
    for b in sorted(pathlib.Path(before).glob("*.sass")):
        a = pathlib.Path(after) / b.name
        old, new = functions(b), functions(a) if a.exists() else {}
        missing = sorted(set(old) ^ set(new))
        differ = sorted(k for k in old.keys() & new.keys() if old[k] != new[k])
        archs = ", ".join(sorted({k[0] for k in old}))
        if missing or differ:
            bad += 1
            print(f"DIFFERS {b.name}: {len(differ)} functions differ, {len(missing)} on one side "
                  f"only; first: {(differ + missing)[0]}")
        else:
            print(f"identical {b.name}: {len(old)} functions ({archs})")
    print(f"{bad} object file(s) differ" if bad else "every function identical")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("dump", "compare"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit((dump if sys.argv[1] == "dump" else compare)(sys.argv[2], sys.argv[3]))
