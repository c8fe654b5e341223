#!/usr/bin/env bash
# Stages a Python package too large for one device call (a call carries 64 MiB with the working
# tree) to the lent GPU machine in parts, over back-to-back calls (../shared/DEVICE.md, "Staging
# large wheels"; a warm machine keeps /tmp between calls, 30 s idle or 30 min held at most).
#
# Here (the CPU machine):
#   scripts/device/stage.sh pack NAME SPEC[,SPEC...] [DROP...]
#       pip downloads each SPEC (wheels for the GPU machine's Python 3.12, no dependencies: name
#       every package the GPU machine lacks), unpacks them into one tree, drops the paths DROP
#       (relative to the wheel's root), xz-compresses the rest and splits it into parts of
#       ATTNPROF_STAGE_PART_MB (36) under .stage/NAME/ (ignored by git); prints the calls to make.
# There (each call carries one part: carry [".stage/NAME/partNN"]):
#   scripts/device/stage.sh receive NAME    copies the carried parts to /tmp/stage/NAME/
#   scripts/device/stage.sh unpack NAME     once every part is there: /tmp/site/NAME/, and prints
#                                           what to put on PYTHONPATH; says which parts are missing
#   scripts/device/stage.sh path NAME       what to put on PYTHONPATH ("" when not staged)
# What to put on PYTHONPATH: the site folder and the folders its .pth files add (PYTHONPATH
# entries are not site folders: their .pth files, nvidia-cutlass-dsl's among them, would not run).
# The GPU machine has no xz binary: Python's lzma unpacks. A fresh machine starts bare: `path`
# says "" there and the parts must travel again.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cmd=${1:?usage: stage.sh pack|receive|unpack|path NAME ...}
name=${2:?usage: stage.sh $cmd NAME}
stage=$root/.stage/$name
remote=/tmp/stage/$name
site=/tmp/site/$name

# The site folder and what its .pth files add to sys.path, joined with ':'.
python_path() {
  python3 -c "
import site, sys
before = list(sys.path)
site.addsitedir(sys.argv[1])
print(':'.join([sys.argv[1]] + [p for p in sys.path if p not in before and p != sys.argv[1]]))" "$1"
}

case $cmd in
  pack)
    spec=${3:?usage: stage.sh pack NAME SPEC [DROP...]}
    shift 3
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    IFS=, read -ra specs <<<"$spec"
    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
      --platform manylinux_2_24_x86_64 --platform manylinux2014_x86_64 \
      -q -d "$work/wheel" "${specs[@]}"
    mkdir -p "$work/tree"
    for wheel in "$work"/wheel/*.whl; do
      (cd "$work/tree" && python3 -m zipfile -e "$wheel" .)
    done
    for drop in "$@"; do rm -rf "${work:?}/tree/$drop"; done
    rm -rf "$stage"
    mkdir -p "$stage"
    tar cf - -C "$work/tree" . | xz -9e -T2 > "$work/all.tar.xz"
    split -b "${ATTNPROF_STAGE_PART_MB:-36}M" -d -a 2 "$work/all.tar.xz" "$stage/part"
    (cd "$stage" && sha256sum part* > SHA256SUMS)
    ls -l "$stage"
    echo "Now, back to back (each within 30 s of the last), one device call per part:"
    for p in "$stage"/part*; do
      echo "  run(carry: [\".stage/$name/$(basename "$p")\", \".stage/$name/SHA256SUMS\"], command: \"bash scripts/device/stage.sh receive $name\")"
    done
    echo "then, in the call that uses it: bash scripts/device/stage.sh unpack $name"
    ;;
  receive)
    mkdir -p "$remote"
    cp "$stage"/part* "$stage"/SHA256SUMS "$remote"/
    ls -l "$remote"
    ;;
  unpack)
    if [[ -d $site ]]; then
      python_path "$site"
      exit 0
    fi
    [[ -f $remote/SHA256SUMS ]] || { echo "stage.sh: nothing of $name staged in $remote" >&2; exit 1; }
    missing=$(cd "$remote" && awk '{print $2}' SHA256SUMS | while read -r p; do [[ -f $p ]] || echo "$p"; done)
    if [[ -n $missing ]]; then
      echo "stage.sh: $name lacks $(echo $missing) (a call per part; the machine may have been returned)" >&2
      exit 1
    fi
    (cd "$remote" && sha256sum -c --quiet SHA256SUMS)
    mkdir -p "$site.partial"
    cat "$remote"/part* | python3 -c "
import lzma, sys, tarfile
with lzma.open(sys.stdin.buffer) as f:
    tarfile.open(fileobj=f, mode='r|').extractall(sys.argv[1], filter='data')" "$site.partial"
    mv "$site.partial" "$site"
    python_path "$site"
    ;;
  path)
    if [[ -d $site ]]; then python_path "$site"; else echo ""; fi
    ;;
  *)
    echo "stage.sh: unknown command $cmd (pack, receive, unpack, path)" >&2
    exit 2
    ;;
esac
