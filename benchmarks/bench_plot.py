"""Benchmark: draw + render time of a pipeline diagram with about 100,000 actions.

Run: ``MPLBACKEND=Agg .venv/bin/python benchmarks/bench_plot.py [--p 50] [--m 1000] [--save out.png]``

Prints the simulation time, the time to build the figure (``plot_pipeline``), the time to
render it with Agg (``canvas.draw()``) and their sum, which should stay under 2 s for
1F1B with p = 50, m = 1000 (100,000 actions). Also times a small labelled diagram and
a PNG save, for comparison.
"""

from __future__ import annotations

import argparse
import time

import matplotlib

matplotlib.use("Agg")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402

import bubblekit as bk  # noqa: E402
from bubblekit.presentation.plotting import plot_pipeline  # noqa: E402


def _time_draw(result: bk.Timeline, **kw: object) -> tuple[float, float, int]:
    t = time.perf_counter()
    fig = plot_pipeline(result, **kw)  # type: ignore[arg-type]
    build = time.perf_counter() - t
    canvas = FigureCanvasAgg(fig)
    t = time.perf_counter()
    canvas.draw()
    render = time.perf_counter() - t
    n_labels = sum(1 for a in fig.axes for x in a.texts if x.get_gid() == "box-label")
    return build, render, n_labels


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schedule", default="1f1b")
    ap.add_argument("--p", type=int, default=50)
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--save", default=None, help="also save the big figure to this path")
    args = ap.parse_args()

    t = time.perf_counter()
    big = bk.simulate(bk.schedule(args.schedule, args.p, args.m), bk.Costs(f=1, b=2))
    sim = time.perf_counter() - t
    print(f"simulate {args.schedule} p={args.p} m={args.m}: {big.n_spans} actions, "
          f"{len(big.idle_intervals())} idle gaps, {sim:.3f} s")
    _time_draw(bk.simulate(bk.schedule("1f1b", 2, 2)))  # warm up imports and font cache
    best = None
    for k in range(args.repeat):
        build, render, n_labels = _time_draw(big)
        total = build + render
        print(f"  run {k + 1}: build {build:.3f} s + render {render:.3f} s = {total:.3f} s "
              f"({n_labels} labels)")
        best = total if best is None else min(best, total)
    assert best is not None
    print(f"best draw+render for {big.n_spans} actions: {best:.3f} s  (budget 2 s: "
          f"{'OK' if best < 2.0 else 'OVER'}; {best / 2.0:.0%} of budget)")

    small = bk.simulate(bk.schedule("interleaved", 4, 8, 2), bk.Costs(f=1, b=2))
    build, render, n_labels = _time_draw(small, critical_path=True, phases=True)
    print(f"small labelled diagram (interleaved p=4 m=8 v=2, {small.n_spans} actions): "
          f"build {build:.3f} s + render {render:.3f} s, {n_labels} labels")
    if args.save:
        fig = plot_pipeline(big)
        t = time.perf_counter()
        fig.savefig(args.save)
        print(f"saved {args.save} in {time.perf_counter() - t:.3f} s")


if __name__ == "__main__":
    main()
