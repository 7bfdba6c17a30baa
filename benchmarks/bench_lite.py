"""How long does a learner wait in the no-install edition before the first result?

    bash course.sh lite                                   # build _site/ first
    .venv/bin/python benchmarks/bench_lite.py             # lesson 01, English, 3 cold openings
    .venv/bin/python benchmarks/bench_lite.py --lang zh --runs 5 --site _site

Each run opens the lite site in a fresh headless Chromium (a new browser profile: nothing cached,
like a learner's first visit), with every request outside 127.0.0.1 blocked, and measures, in
seconds of wall time:

* **kernel**: from opening the lesson's URL to the Pyodide kernel saying it is idle (the page, the
  JupyterLab front end, Pyodide's interpreter and standard library loaded);
* **first result**: from opening the URL to the printed ``bubble_ratio`` of
  ``bk.simulate(bk.schedule("1f1b", 4, 8))`` run in the lesson's first cell (the kernel, the
  install of bubblekit's wheel from the site, the import and the simulation).

Prints each run, the median and the load average (on a busy, shared machine the figures grow).
Exit status 1 when the median first result is above ``--target-s``; 2 when the site or Chromium
is missing.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import statistics
import sys
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path(os.environ.get("BUBBLEKIT_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LESSON = {"en": "notebooks/01_what_is_a_bubble.ipynb", "zh": "notebooks/zh/01_what_is_a_bubble.ipynb"}


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


def one_run(pw: Any, base: str, lang: str, timeout_s: float) -> tuple[float, float]:
    """(seconds to an idle kernel, seconds to the first result) for one cold opening."""
    import bubblekit as bk

    expected = str(bk.simulate(bk.schedule("1f1b", 4, 8)).bubble_ratio)[:6]
    browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True, timeout=60_000)
    try:
        context = browser.new_context(viewport={"width": 1440, "height": 1000})

        def only_this_host(route: Any) -> None:
            if urllib.parse.urlsplit(route.request.url).hostname == "127.0.0.1":
                route.continue_()
            else:
                route.abort()

        context.route("**/*", only_this_host)
        page = context.new_page()
        page.set_default_timeout(timeout_s * 1000)
        started = time.monotonic()
        page.goto(f"{base}/lab/index.html?path={LESSON[lang]}")
        page.locator(".jp-StatusBar-TextItem", has_text="Pyodide) | Idle").first.wait_for()
        kernel = time.monotonic() - started
        cell = page.locator(".jp-NotebookPanel .jp-CodeCell").first
        cell.locator(".cm-content").click()
        page.keyboard.press("Control+End")
        page.keyboard.insert_text('\nimport bubblekit as bk\nprint(bk.simulate(bk.schedule("1f1b", 4, 8)).bubble_ratio)')
        page.keyboard.press("Shift+Enter")
        cell.locator(".jp-OutputArea-output").filter(has_text=expected).first.wait_for()
        return kernel, time.monotonic() - started
    finally:
        browser.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", type=Path, default=ROOT / "_site", help="the built site (default: _site)")
    parser.add_argument("--lang", choices=sorted(LESSON), default="en", help="lesson 01 in this language")
    parser.add_argument("--runs", type=int, default=3, help="cold openings to time (1 to 20; default 3)")
    parser.add_argument("--target-s", type=float, default=60.0, help="median first result allowed (seconds)")
    parser.add_argument("--timeout-s", type=float, default=300.0, help="give up on a run after this long")
    args = parser.parse_args(argv)
    if not 1 <= args.runs <= 20:
        parser.error(f"--runs must be between 1 and 20, got {args.runs}")
    if not args.target_s > 0 or not args.timeout_s > 0:
        parser.error(f"--target-s and --timeout-s must be positive, got {args.target_s} and {args.timeout_s}")
    if not (args.site / "lab" / "index.html").is_file():
        print(f"no built site at {args.site} (lab/index.html missing): run bash course.sh lite first", file=sys.stderr)
        return 2
    if not CHROMIUM.exists():
        print(f"no Chromium at {CHROMIUM} (Debian package 'chromium', or set BUBBLEKIT_CHROMIUM)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(args.site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    kernels: list[float] = []
    firsts: list[float] = []
    try:
        with sync_playwright() as pw:
            for run in range(1, args.runs + 1):
                kernel, first = one_run(pw, base, args.lang, args.timeout_s)
                kernels.append(kernel)
                firsts.append(first)
                print(f"run {run}: kernel idle {kernel:5.1f} s, first result {first:5.1f} s")
    finally:
        server.shutdown()
        server.server_close()
    median = statistics.median(firsts)
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"lite, lesson 01 ({args.lang}), {args.runs} cold openings: kernel idle median "
          f"{statistics.median(kernels):.1f} s; first result median {median:.1f} s "
          f"(min {min(firsts):.1f}, max {max(firsts):.1f}); load average {load} (1/5/15 min)")
    return 0 if median <= args.target_s else 1


if __name__ == "__main__":
    sys.exit(main())
