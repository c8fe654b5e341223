#!/usr/bin/env python3
"""The HTML report, checked in a real browser (the ctest Browser.ReportsDrawEveryChart).

Makes two reports with gnuplot absent from PATH: one of a small CPU run made here, one of a
committed H200 journal (fa-bench). Opens each in headless Chromium and fails unless
  - every chart is drawn: the page's script sets <body data-charts-drawn="N/N">, N being the
    canvases in the file, each counted only with points on a painted canvas;
  - no script on the page failed (data-chart-errors, #attnprof-errors) and the browser's console
    stayed silent (--enable-logging=stderr prints each console message as a CONSOLE line);
  - the page asks for nothing over the network (no src= attribute, no http link);
  - a screenshot of the first screen is not blank;
and unless the CPU report's Markdown says in one line that its charts are in the HTML.

    check_report.py ATTNPROF_BINARY REPOSITORY

Exit 77 (ctest: skipped) when no Chromium is installed, unless ATTNPROF_REQUIRE_BROWSER=1, where
its absence fails: CI installs Chromium (scripts/install-deps.sh) and sets it (.ci/run), so the
check cannot pass there by being skipped.
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))
import png_tool  # noqa: E402  (scripts/png_tool.py: PNGs with the standard library alone)

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")
H200_JOURNAL = "bench/results/h200/2026-12-04-audits/call2-fa-bench.jsonl.gz"


def fail(message):
    print(f"check_report: FAILED: {message}")
    sys.exit(1)


def without_gnuplot(tmp):
    """The environment with a PATH on which no gnuplot is found: a folder that held one is
    replaced by a folder of links to everything else in it."""
    env = dict(os.environ)
    env.pop("ATTNPROF_GNUPLOT", None)
    shadow = tmp / "path-without-gnuplot"
    shadow.mkdir()
    dirs = []
    for d in env.get("PATH", "").split(os.pathsep):
        folder = pathlib.Path(d) if d else None
        if folder is None or not (folder / "gnuplot").exists():
            if d:
                dirs.append(d)
            continue
        for entry in folder.iterdir():
            if entry.name != "gnuplot" and not os.path.lexists(shadow / entry.name):
                (shadow / entry.name).symlink_to(entry)
        if str(shadow) not in dirs:
            dirs.append(str(shadow))
    env["PATH"] = os.pathsep.join(dirs)
    if shutil.which("gnuplot", path=env["PATH"]):
        fail("could not take gnuplot off PATH")
    return env


def run(args, env, what):
    out = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        fail(f"{what} exited {out.returncode}:\n{out.stdout}{out.stderr}")
    return out


def browser(chromium, profile, url, *flags):
    args = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--hide-scrollbars", f"--user-data-dir={profile}", *flags, url]
    return subprocess.run(args, capture_output=True, text=True, timeout=180)


def check_page(chromium, html, tmp, name):
    text = html.read_text(encoding="utf-8")
    charts = text.count("<canvas id=")
    if charts == 0:
        fail(f"{name}: the report has no charts (is the charting library installed? "
             f"`attnprof list` says where it looks)")
    if re.search(r"\ssrc\s*=", text) or re.search(r"href\s*=\s*[\"']https?:", text):
        fail(f"{name}: the page asks for something over the network")
    url = html.resolve().as_uri()
    dom = browser(chromium, tmp / f"profile-{name}", url, "--enable-logging=stderr", "--v=0",
                  "--dump-dom")
    if dom.returncode != 0:
        fail(f"{name}: chromium --dump-dom exited {dom.returncode}:\n{dom.stderr[-2000:]}")
    body = re.search(r"<body([^>]*)>", dom.stdout)
    if not body:
        fail(f"{name}: no <body> in the DOM Chromium dumped")
    attributes = body.group(1)
    drawn = re.search(r'data-charts-drawn="(\d+)/(\d+)"', attributes)
    errors = re.search(r'data-chart-errors="(\d+)"', attributes)
    box = re.search(r'<pre id="attnprof-errors"[^>]*>(.*?)</pre>', dom.stdout, re.S)
    if errors or (box and box.group(1).strip()):
        fail(f"{name}: scripts on the page failed: {box.group(1) if box else attributes}")
    if not drawn:
        fail(f"{name}: the page never said it drew its charts (a script stopped early?)")
    if drawn.group(1) != str(charts) or drawn.group(2) != str(charts):
        fail(f"{name}: {drawn.group(1)} of {drawn.group(2)} charts drawn; the file has {charts}")
    console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    if console:
        fail(f"{name}: the console was not silent:\n" + "\n".join(console))
    shot = tmp / f"{name}.png"
    out = browser(chromium, tmp / f"profile-{name}-shot", url, "--window-size=1280,1000",
                  f"--screenshot={shot}")
    if out.returncode != 0 or not shot.exists():
        fail(f"{name}: no screenshot (chromium exited {out.returncode}):\n{out.stderr[-2000:]}")
    colours = png_tool.colours(str(shot), most=100)
    if colours < 100:
        fail(f"{name}: the screenshot is blank or nearly ({colours} colours)")
    print(f"check_report: {name}: {charts}/{charts} charts drawn, console silent, "
          f"screenshot of {colours}+ colours")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, repo = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    chromium = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
    if not chromium:
        if os.environ.get("ATTNPROF_REQUIRE_BROWSER") == "1":
            fail("no Chromium on PATH and ATTNPROF_REQUIRE_BROWSER=1 (apt-get install chromium)")
        print("check_report: skipped: no Chromium on PATH (apt-get install chromium)")
        sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="attnprof-browser-") as name:
        tmp = pathlib.Path(name)
        env = without_gnuplot(tmp)
        # Its own cache: a CPU run measures the ceilings where none are cached, and figures taken
        # while the test suite loads the machine must not become the user's.
        env["XDG_CACHE_HOME"] = str(tmp / "cache")
        run([str(binary), "run", "--device", "cpu", "--in-process", "--no-history", "--no-trace",
             "--providers", "cpu.naive,cpu.flash", "--seq", "64,128,256", "--heads", "2",
             "--head-dim", "16", "--dtype", "fp32", "--min-time", "1ms", "--point-timeout", "50ms",
             "--min-samples", "3", "--out", str(tmp / "cpu.jsonl")], env, "attnprof run")
        run([str(binary), "report", str(tmp / "cpu.jsonl"), "--html", str(tmp / "cpu.html"),
             "--markdown", str(tmp / "cpu.md")], env, "attnprof report (CPU run)")
        markdown = (tmp / "cpu.md").read_text(encoding="utf-8")
        if "Charts: the charts are in the HTML report, cpu.html" not in markdown:
            fail("the CPU report's Markdown does not point to the HTML for its charts")
        run([str(binary), "report", str(repo / H200_JOURNAL), "--html", str(tmp / "h200.html")],
            env, "attnprof report (H200 journal)")
        check_page(chromium, tmp / "cpu.html", tmp, "cpu")
        check_page(chromium, tmp / "h200.html", tmp, "h200-fa-bench")


if __name__ == "__main__":
    main()
