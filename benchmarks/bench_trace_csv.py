"""Rows per second of reading a large bubblekit CSV trace (``read_trace`` / ``read_csv``).

Writes a CSV of ``--rows`` rows (default 400,000: 1F1B with p = 8 and m = 25, 400 actions a
step, repeated for 1,000 steps) to a temporary folder, then reads it ``--repeat`` times with
:func:`bubblekit.analysis.traces.read_trace` and prints, for the best run, the wall-clock and
CPU time (``time.process_time``: on a shared machine wall-clock time mostly measures the
other processes) and the rows per second of both. ``--steps-only`` reads every step
(``read_trace_steps``) instead of the last one; both do the same work.

    .venv/bin/python benchmarks/bench_trace_csv.py                 # 400,000 rows
    .venv/bin/python benchmarks/bench_trace_csv.py --rows 100000 --repeat 5

Target (issue 20): at least 100,000 rows/s, and time linear in the number of rows (the
figures for ``--rows 100000`` and ``400000`` have about the same rate). Prints figures;
asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import bubblekit as bk
from bubblekit.analysis.traces import read_trace, read_trace_steps


def write_big_csv(path: Path, rows: int, p: int = 8, m: int = 25) -> int:
    """A CSV of about ``rows`` rows: one 1F1B step (p x m x 2 actions) repeated; returns the rows written."""
    step = bk.simulate(bk.schedule("1f1b", p, m))
    spans = [(sp.rank, sp.action.stage, sp.action.kind, sp.action.microbatch, float(sp.start), float(sp.end))
             for sp in step.spans()]
    period = float(step.makespan) + 1.0
    n_steps = max(1, rows // len(spans))
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("# bubblekit pipeline timeline; times in ms\nrank,stage,kind,microbatch,start,end,step\n")
        for k in range(n_steps):
            t = k * period
            fh.writelines(f"{r},{s},{kind},{mb},{a + t:.6f},{b + t:.6f},{k}\n" for r, s, kind, mb, a, b in spans)
    return n_steps * len(spans)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=400_000, help="rows to write (default 400,000)")
    ap.add_argument("--repeat", type=int, default=3, help="reads; the best is reported (default 3)")
    ap.add_argument("--steps-only", action="store_true", help="time read_trace_steps (every step) instead")
    args = ap.parse_args()
    if args.rows < 1 or args.repeat < 1:
        ap.error("--rows and --repeat must be >= 1")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.csv"
        rows = write_big_csv(path, args.rows)
        size_mb = path.stat().st_size / 1e6
        best_wall = best_cpu = float("inf")
        for _ in range(args.repeat):
            w0, c0 = time.perf_counter(), time.process_time()
            got = read_trace_steps(path) if args.steps_only else read_trace(path)
            best_wall = min(best_wall, time.perf_counter() - w0)
            best_cpu = min(best_cpu, time.process_time() - c0)
    last = got[-1] if isinstance(got, list) else got
    print(f"{rows:,} rows ({size_mb:.1f} MB, {last.n_steps:,} steps of {last.n_spans} actions), best of {args.repeat}:")
    print(f"  wall {best_wall:.2f} s = {rows / best_wall:,.0f} rows/s")
    print(f"  CPU  {best_cpu:.2f} s = {rows / best_cpu:,.0f} rows/s")
    print(f"  last step: bubble_ratio {last.bubble_ratio:.4f}, notes: {len(last.notes)}")
    print("target: >= 100,000 rows/s")


if __name__ == "__main__":
    main()
