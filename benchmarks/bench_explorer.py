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

``--breakdown`` says where a redraw's time goes, part by part (median ms over the changes):
the simulation (schedule + simulate, both panels when ``--compare`` is given), the
matplotlib artists (plot_pipeline / plot_memory into the kept axes), Agg's rendering of the
figure, and the PNG encoding; the widget round trip (kernel -> browser -> picture shown) is
what ``tests/test_browser_course.py`` and ``--browser`` see on top of it.

    .venv/bin/python benchmarks/bench_explorer.py --schedule 1f1b -p 4 -m 8 --compare gpipe --breakdown   # lesson 04
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


def breakdown(ex: object, moves: list[tuple[str, float]], changes: int) -> dict[str, float]:
    """Median CPU ms of each part of a redraw, over ``changes`` control changes of ``moves``.

    The redraw is replayed by hand, part by part, with the explorer's own functions: its
    ``_simulate`` (schedule + simulation, for the main and the compared schedule), its ``_draw``
    with the PNG step replaced (the matplotlib artists), then Agg's ``canvas.draw()`` and the PNG
    encoding of the rendered pixels (Pillow, zlib level 1, as ``render_png``).
    """
    import io

    from PIL import Image

    from bubblekit.presentation import explorers

    sim: list[float] = []
    artists: list[float] = []
    agg: list[float] = []
    png: list[float] = []
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
            sim.append((time.process_time() - c) * 1e3)
            c = time.process_time()
            ex._draw(res, other, None)  # type: ignore[attr-defined]
            artists.append((time.process_time() - c) * 1e3)
            fig = ex.figure  # type: ignore[attr-defined]
            fig.set_dpi(ex.look.dpi)  # type: ignore[attr-defined]
            c = time.process_time()
            fig.canvas.draw()
            agg.append((time.process_time() - c) * 1e3)
            c = time.process_time()
            buf = io.BytesIO()
            Image.frombuffer("RGBA", fig.canvas.get_width_height(), fig.canvas.buffer_rgba()).save(
                buf, format="png", compress_level=1)
            png.append((time.process_time() - c) * 1e3)
    finally:
        explorers.render_png = real_render  # type: ignore[assignment]
    return {"simulation": statistics.median(sim), "matplotlib artists": statistics.median(artists),
            "Agg rendering": statistics.median(agg), "PNG encoding": statistics.median(png)}


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
                    help="time the parts of a redraw: simulation, matplotlib artists, Agg rendering, PNG encoding")
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
        parts = breakdown(ex, moves, args.changes)
        total = sum(parts.values())
        print("  where a redraw's time goes (median ms, CPU of this process):")
        for name, ms in parts.items():
            print(f"    {name:<26} {ms:8.1f} ms  {ms / total:6.1%}")
    ok = med <= args.target_ms
    print(f"  target {args.target_ms:.0f} ms: {'met' if ok else 'NOT met'} (ratio {med / args.target_ms:.2f})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
