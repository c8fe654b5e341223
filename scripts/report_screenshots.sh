#!/usr/bin/env bash
# The report screenshots under docs/img, from committed journals: `attnprof report` writes each
# page, headless Chromium photographs it with all but the named sections hidden (a style added to a
# copy of the page; nothing else changes), and scripts/png_tool.py cuts the blank rows below.
#   H200 fa-bench: the answer and the findings (the first screen)
#   H200 decode: the same
#   H200 seed-000 + seed-003 with the tune: the answer, findings and the seeds' comparison; then
#     the roofline with its measured ceilings beside the batch to deploy
#   CPU (the 2-core VM's cpu.flash against cpu.naive, with its tune): the first screen and a chart
# Usage: scripts/report_screenshots.sh [path/to/attnprof]   (needs chromium and libjs-chart.js)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/attnprof}
chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
h200=bench/results/h200

# report NAME TITLE ARGS...: the page of ARGS as $tmp/NAME.html.
report() {
  local name=$1 title=$2
  shift 2
  "$bin" report "$@" --title "$title" --html "$tmp/$name.html" >/dev/null
}

# shot NAME IMAGE CSS: NAME's page, with CSS added, as docs/img/IMAGE.png (1280 pixels wide).
shot() {
  local name=$1 image=$2 css=$3
  sed "s|</head>|<style>$css footer { display: none; }</style></head>|" "$tmp/$name.html" \
    >"$tmp/$image.html"
  "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$tmp/profile" --window-size=1280,4000 \
    --screenshot="$tmp/$image.png" "file://$tmp/$image.html" 2>/dev/null
  python3 scripts/png_tool.py trim "$tmp/$image.png" "docs/img/$image.png"
  echo "wrote docs/img/$image.png"
}

only() {  # CSS that hides every section but those named
  local keep=""
  for id in "$@"; do keep+=":not(#$id)"; done
  echo "body > section$keep { display: none; }"
}

report fa-bench "attnprof report: fa-bench on an NVIDIA H200" \
  "$h200/2026-12-04-audits/call2-fa-bench.jsonl.gz"
shot fa-bench report-h200-fa-bench "$(only answer findings)"

report decode "attnprof report: decode on an NVIDIA H200" \
  "$h200/2026-12-04-audits/call2-decode.jsonl.gz"
shot decode report-h200-decode "$(only answer findings)"

seeds=$h200/2026-11-30-answers
report seeds "attnprof report: the seeds' shapes on an NVIDIA H200" \
  "$seeds/seed-000.jsonl.gz" "$seeds/seed-003.jsonl.gz" --tune "$seeds/tune.json"
shot seeds report-h200-seeds "$(only answer findings seeds)"
shot seeds report-h200-roofline-tune "$(only charts batch-to-deploy-attnprof-tune) \
  #charts > p, #charts h3, #charts figure:not([id\$='-roofline']) { display: none; }"

cpu=bench/results/cpu
report cpu "attnprof report: cpu.flash against cpu.naive on a 2-core VM" \
  "$cpu/flash-vs-naive.jsonl" --tune "$cpu/tune-2026-11-30/after.json"
shot cpu report-cpu "$(only answer findings charts) #charts > p, #charts h3 ~ h3, \
  #charts figure:not([id\$='-latency']):not([id\$='-memory']) { display: none; }"
