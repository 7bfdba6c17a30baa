"""How fast does the pipeline explorer redraw after a control change?

    .venv/bin/python benchmarks/bench_explorer.py            # p=8, m=32, v=2 interleaved, 20 changes
    .venv/bin/python benchmarks/bench_explorer.py --changes 40 --target-ms 150
    .venv/bin/python benchmarks/bench_explorer.py --layout presenter   # classroom --presenter's pictures

One *redraw* is what a slider move costs in the kernel: build the schedule, simulate it,
update the readouts, draw the diagram and the memory curves with matplotlib (Agg) and
encode the PNG sent to the browser (``PipelineExplorer.last_redraw_ms``). Changes cycle
through m (32 <-> 40), the forward cost F (1 <-> 1.25 slots) and the communication
latency (0 <-> 0.1 slots), the kinds of move a class makes. Prints the median, the
spread, the CPU time of the process (close to the wall time on an idle machine) and the
load average (the headline figure is wall time: on a busy, shared machine it grows).
Exit status 1 when the median is above ``--target-ms``.

``--breakdown`` says where a redraw's time goes, part by part (median ms over the changes),
drawn twice: with matplotlib's plain Agg canvas and Pillow's PNG encoder (how the explorers
drew before :mod:`bubblekit.presentation.textcache`) and with the explorers' own canvas and
encoder (each distinct text rasterized once; unfiltered RGB rows). The parts: the simulation (schedule + simulate, both panels when
``--compare`` is given), the matplotlib artists (plot_pipeline / plot_memory into the kept
axes), Agg's rendering of the figure, the PNG encoding, and the widgets (the readouts' HTML and
the PNG handed to the Image widget; without a browser nothing is sent).

``--browser N`` measures what a learner waits for: N presses of the ``m`` slider's arrow keys
in Chromium, on the explorer served by classroom mode's Voila (see :func:`browser_ms`), each
from the key press to the new picture painted and the readout changed: the kernel's redraw
plus the widget round trip (the message to the kernel, the PNG back, decoding, painting).

    .venv/bin/python benchmarks/bench_explorer.py --schedule 1f1b -p 4 -m 8 --compare gpipe --breakdown   # lesson 04
    .venv/bin/python benchmarks/bench_explorer.py --schedule 1f1b -p 4 -m 8 --compare gpipe --browser 15 --target-ms 300
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("MPLBACKEND", "Agg")

from bubblekit.presentation.explorers import DPI, LAYOUTS, PRESENTER_DPI, pipeline_explorer  # noqa: E402


def reference_ms(repeats: int = 7) -> float:
    """CPU ms to draw and encode an *empty* two-panel figure of the same size: the machine's yardstick.

    Matplotlib's fixed cost (axes, ticks, titles, PNG) on this machine right now; the redraw
    divided by it is a ratio that does not depend on how busy the machine is.
    """
    from matplotlib.figure import Figure

    from bubblekit.presentation.explorers import render_png

    fig = Figure(figsize=(12.0, 7.5))
    times = []
    for _ in range(repeats):
        c = time.process_time()
        fig.clear()
        top, bottom = fig.add_axes((0.1, 0.55, 0.67, 0.38)), fig.add_axes((0.1, 0.08, 0.67, 0.3))
        top.set_title("title\nsecond line", loc="left")
        bottom.set_title("title\nsecond line", loc="left")
        top.set_yticks(range(8), [f"rank {r}" for r in range(8)])
        render_png(fig)
        times.append((time.process_time() - c) * 1e3)
    return statistics.median(times)


def _pillow_png(rgba: object) -> bytes:
    """matplotlib's own PNG path (``savefig``: Pillow, RGBA, zlib level 1), as the explorers encoded before."""
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(rgba, "RGBA").save(buf, format="png", compress_level=1)  # type: ignore[arg-type]
    return buf.getvalue()


def breakdown(ex: object, moves: list[tuple[str, float]], changes: int, plain: bool = False) -> dict[str, float]:
    """Median CPU ms of each part of a redraw, over ``changes`` control changes of ``moves``.

    The redraw is replayed by hand, part by part, with the explorer's own functions: its
    ``_simulate`` (schedule + simulation, for the main and the compared schedule), its ``_draw``
    with the PNG step replaced (the matplotlib artists), then Agg's ``canvas.draw()`` with the
    figure's canvas, the PNG encoding of the rendered pixels (``render_png``'s: RGB when opaque,
    zlib level 1) and the widgets (``_readouts`` and the Image widget's new value).

    ``plain``: draw with matplotlib's plain Agg canvas and encode with Pillow (RGBA), as the
    explorers did before (the figure is built by today's plotting code all the same).
    """
    import numpy as np

    from bubblekit.presentation import explorers

    parts: dict[str, list[float]] = {k: [] for k in ("simulation", "matplotlib artists", "Agg rendering",
                                                     "PNG encoding", "widgets (readouts, image)")}
    real_render = explorers.render_png
    try:
        explorers.render_png = lambda fig, dpi=None, **kw: b""  # type: ignore[assignment]
        for k in range(changes):
            key, value = moves[k % len(moves)]
            ex.controls[key].value = value  # type: ignore[attr-defined]  # (the real redraw, untimed)
            c = time.process_time()
            res = ex._simulate(ex.controls["schedule"].value)  # type: ignore[attr-defined]
            comp = ex.controls["compare"].value  # type: ignore[attr-defined]
            other = None if comp == explorers._NONE else ex._simulate(comp)  # type: ignore[attr-defined]
            parts["simulation"].append((time.process_time() - c) * 1e3)
            c = time.process_time()
            ex._draw(res, other, None)  # type: ignore[attr-defined]
            parts["matplotlib artists"].append((time.process_time() - c) * 1e3)
            fig = ex.figure  # type: ignore[attr-defined]
            fig.set_dpi(ex.look.dpi)  # type: ignore[attr-defined]
            c = time.process_time()
            fig.canvas.draw()
            parts["Agg rendering"].append((time.process_time() - c) * 1e3)
            c = time.process_time()
            rgba = np.asarray(fig.canvas.buffer_rgba())
            if plain or not hasattr(explorers, "_png"):
                png = _pillow_png(rgba)
            else:
                png = explorers._png(rgba[..., :3] if bool((rgba[..., 3] == 255).all()) else rgba, 1)
            parts["PNG encoding"].append((time.process_time() - c) * 1e3)
            c = time.process_time()
            ex._readouts(res, other)  # type: ignore[attr-defined]
            ex.image.value = png  # type: ignore[attr-defined]
            parts["widgets (readouts, image)"].append((time.process_time() - c) * 1e3)
    finally:
        explorers.render_png = real_render  # type: ignore[assignment]
    return {name: statistics.median(times) for name, times in parts.items()}


_BROWSER_JS_SETUP = """() => {
    const box = document.querySelector('.bk-pipeline-explorer');
    const img = box.querySelector('img.bk-figure');
    const ro = box.querySelector('.bk-readout-bubble_ratio');
    window.__bk = {key: [], shown: [], readout: []};
    document.addEventListener('keydown', () => window.__bk.key.push(performance.now()), true);
    // painted: the frame after the new picture has loaded
    img.addEventListener('load', () => requestAnimationFrame(() => window.__bk.shown.push(performance.now())));
    new MutationObserver(() => window.__bk.readout.push(performance.now()))
        .observe(ro, {subtree: true, childList: true, characterData: true});
}"""


def browser_ms(call: str, moves: int, timeout_s: float = 120.0) -> list[float]:
    """In-browser redraw times (ms) of ``moves`` presses of the ``m`` slider's arrow keys.

    Serves a one-cell notebook holding ``call`` with classroom mode's Voila command (the
    course's template and environment) on a free port of 127.0.0.1, opens it in Debian's
    Chromium (``/usr/bin/chromium`` or ``$BUBBLEKIT_CHROMIUM``) through the Python
    ``playwright`` package, and presses ArrowRight / ArrowLeft on the ``m`` slider in turn.
    One redraw is from the key press (the page's ``keydown``) to the later of: the frame
    after the new picture has loaded, and the bubble_ratio readout's change; the whole widget
    round trip (browser -> kernel -> simulate, draw, PNG -> browser -> decoded and painted).
    """
    import json
    import shutil
    import socket
    import subprocess
    import tempfile
    from pathlib import Path

    from playwright.sync_api import sync_playwright

    from bubblekit.presentation import classroom

    chromium = os.environ.get("BUBBLEKIT_CHROMIUM", "/usr/bin/chromium")
    if not Path(chromium).exists():
        raise SystemExit(f"--browser needs Chromium at {chromium} (Debian package 'chromium')")
    tmp = Path(tempfile.mkdtemp(prefix="bench-explorer-"))
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": "explorer", "metadata": {}, "outputs": [],
                     "source": f"import bubblekit as bk\n{call}"}],
          "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    (tmp / "explorer.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    env = classroom.voila_env(False, {**os.environ, "MPLBACKEND": "Agg"})
    log = open(tmp / "voila.log", "wb")  # noqa: SIM115 - closed below
    server = subprocess.Popen(classroom.voila_command(tmp / "explorer.ipynb", port), cwd=tmp, env=env,
                              stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    out: list[float] = []
    pw = sync_playwright().start()
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"voila did not start:\n{(tmp / 'voila.log').read_text(errors='replace')[-2000:]}")
            time.sleep(0.3)
        browser = pw.chromium.launch(executable_path=chromium, headless=True,
                                     args=["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"])
        page = browser.new_page(viewport={"width": 1440, "height": 1000}, device_scale_factor=1)
        page.goto(f"http://127.0.0.1:{port}/", timeout=timeout_s * 1000)
        page.wait_for_function("() => { const i = document.querySelector('.bk-pipeline-explorer img.bk-figure');"
                               " return i && i.naturalWidth > 0; }", timeout=timeout_s * 1000)
        page.wait_for_timeout(1000)
        page.evaluate(_BROWSER_JS_SETUP)
        handle = page.locator(".bk-pipeline-explorer .bk-control-m .noUi-handle").first
        handle.scroll_into_view_if_needed()
        handle.focus()
        for k in range(moves + 1):  # the first move warms the kernel up (not counted)
            page.keyboard.press("ArrowRight" if k % 2 == 0 else "ArrowLeft")
            try:
                page.wait_for_function(
                    "n => { const b = window.__bk, t = b.key[n]; return t !== undefined"
                    " && b.shown.some(x => x > t) && b.readout.some(x => x > t); }", arg=k, timeout=timeout_s * 1000)
            except Exception:
                state = page.evaluate("() => JSON.stringify(window.__bk)")
                raise SystemExit(f"move {k + 1}: no new picture and readout within {timeout_s:.0f} s ({state}):\n"
                                 f"{(tmp / 'voila.log').read_text(errors='replace')[-2000:]}") from None
            page.wait_for_timeout(400)  # let the readouts settle before the next press
            if k:
                out.append(page.evaluate(
                    "n => { const b = window.__bk, t = b.key[n];"
                    " return Math.max(b.shown.find(x => x > t), b.readout.find(x => x > t)) - t; }", k))
        browser.close()
    finally:
        pw.stop()
        if server.poll() is None:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, 9)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--schedule", default="interleaved")
    ap.add_argument("-p", type=int, default=8)
    ap.add_argument("-m", type=int, default=32)
    ap.add_argument("-v", type=int, default=2)
    ap.add_argument("--changes", type=int, default=20, help="number of control changes timed (default 20)")
    ap.add_argument("--target-ms", type=float, default=150.0, help="median redraw target in ms (default 150)")
    ap.add_argument("--compare", default=None, help="a second schedule drawn below (lesson 04: gpipe)")
    ap.add_argument("--breakdown", action="store_true",
                    help="time the parts of a redraw (simulation, matplotlib artists, Agg rendering, PNG encoding, "
                         "widgets), with plain Agg and with the explorers' text-caching canvas")
    ap.add_argument("--browser", type=int, default=0, metavar="N",
                    help="also time N slider moves in Chromium (classroom mode's Voila); the target then applies "
                         "to the in-browser median")
    ap.add_argument("--layout", choices=LAYOUTS, default="notebook",
                    help="explorer layout (presenter: larger letters, 100 dpi pictures)")
    args = ap.parse_args(argv)

    t = time.perf_counter()
    kw = {"compare": args.compare} if args.compare else {}
    ex = pipeline_explorer(args.schedule, p=args.p, m=args.m, v=args.v, layout=args.layout, **kw)
    build_ms = (time.perf_counter() - t) * 1e3
    if ex.error:
        print(f"explorer error: {ex.error}")
        return 2
    moves = [("m", args.m + args.p), ("m", args.m), ("f", 1.25), ("f", 1.0), ("comm", 0.1), ("comm", 0.0)]
    ex.controls["m"].value = args.m + args.p  # warm-up (font cache, first PNG)
    ex.controls["m"].value = args.m
    times: list[float] = []
    wall: list[float] = []
    cpu: list[float] = []
    for k in range(args.changes):
        key, value = moves[k % len(moves)]
        t, c = time.perf_counter(), time.process_time()
        ex.controls[key].value = value
        wall.append((time.perf_counter() - t) * 1e3)
        cpu.append((time.process_time() - c) * 1e3)
        times.append(ex.last_redraw_ms)
        if ex.error:
            print(f"explorer error after {key}={value}: {ex.error}")
            return 2
    med = statistics.median(wall)
    ref = reference_ms()
    spans = ex.result.n_spans if ex.result is not None else 0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    dpi = PRESENTER_DPI if args.layout == "presenter" else DPI
    print(f"pipeline explorer ({args.layout}), {args.schedule} p={args.p} m={args.m} v={args.v} ({spans} actions), dpi {dpi}, "
          f"PNG {len(ex.image.value) / 1024:.0f} KiB")
    print(f"  first build            {build_ms:8.1f} ms")
    print(f"  redraw median          {med:8.1f} ms   over {len(wall)} changes")
    print(f"  redraw min / max       {min(wall):8.1f} / {max(wall):.1f} ms")
    print(f"  CPU time median        {statistics.median(cpu):8.1f} ms   (what it costs on an idle machine)")
    print(f"  (update() alone, median {statistics.median(times):.1f} ms wall)")
    print(f"  load average (1 min)   {load:8.2f} on {os.cpu_count()} CPUs")
    print(f"  yardstick: an empty two-panel figure costs {ref:.1f} ms CPU here; "
          f"a redraw is {statistics.median(cpu) / ref:.2f} x that")
    if args.breakdown:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        own = type(ex.figure.canvas)
        FigureCanvasAgg(ex.figure)  # how the explorers drew before bubblekit.presentation.textcache
        before = breakdown(ex, moves, args.changes, plain=True)
        own(ex.figure)
        after = breakdown(ex, moves, args.changes)
        print("  where a redraw's time goes (median ms, CPU of this process): "
              f"plain Agg and Pillow's PNG -> the explorers' own ({own.__name__})")
        for name in after:
            print(f"    {name:<27} {before[name]:7.1f} -> {after[name]:7.1f} ms  ({after[name] / sum(after.values()):6.1%})")
        print(f"    {'sum':<27} {sum(before.values()):7.1f} -> {sum(after.values()):7.1f} ms")
    if args.browser > 0:
        extra = f", compare={args.compare!r}" if args.compare else ""
        call = (f"bk.explorers.pipeline_explorer({args.schedule!r}, p={args.p}, m={args.m}, v={args.v}, "
                f"layout={args.layout!r}{extra})")
        load0 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        got = browser_ms(call, args.browser)
        load1 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        med = statistics.median(got)
        print(f"  in the browser (Chromium, Voila; key press -> picture painted and readout changed): {call}")
        print(f"    redraw median          {med:8.1f} ms   over {len(got)} moves of m")
        print(f"    redraw min / max       {min(got):8.1f} / {max(got):.1f} ms")
        print(f"    load average (1 min)   {load0:8.2f} before, {load1:.2f} after")
    ok = med <= args.target_ms
    print(f"  target {args.target_ms:.0f} ms: {'met' if ok else 'NOT met'} (ratio {med / args.target_ms:.2f})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
