"""Measured bubble vs formula vs calibrated simulation on real pipelines (needs torch).

For 2 ranks, GPipe and 1F1B, and m in 4, 8, 16, 32 this runs ``bubblekit.lab`` (CPU, gloo,
one process per rank) and prints, per configuration:

* the measured bubble ratio (idle / (ranks x makespan)): median over the measured steps,
  with the range;
* the formula ``(p - 1) / (m + p - 1)``;
* the calibrated simulation: each step calibrated on its own (per-stage mean durations,
  mean per-action overhead, mean per-hop latency) and simulated; the median over steps;
* the calibrated simulation with measured jitter: durations and gaps drawn from the
  step's measured ones (30 draws, mean), the median over steps;
* the mean forward / backward durations (ms; a split backward's is I + W), the overhead and the latency.

    .venv/bin/python benchmarks/bench_lab.py                   # the full table (minutes)
    .venv/bin/python benchmarks/bench_lab.py --ms 4 8 --steps 5 --hidden 128

Target: calibrated simulation within 0.05 of the median measurement when actions take at
least 10 ms. On a busy machine (other processes on the cores) a few long stalls make
the measurement noisy: the jitter column models them; the mean-cost column cannot.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bubblekit import lab  # noqa: E402
from bubblekit.formulas import bubble_ratio  # noqa: E402


def _kind_mean(durations: list, kind: str) -> float:
    """Mean duration (ms) of ``kind``'s actions over every stage (0.0 when the schedule has none)."""
    found = [s.mean for s in durations if s.kind == kind]
    return statistics.fmean(found) if found else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--schedules", nargs="+", default=["1F1B", "GPipe"])
    ap.add_argument("--ms", nargs="+", type=int, default=[4, 8, 16, 32], help="microbatch counts")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5, help="measured steps (median over them)")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--layers", type=int, default=2, help="blocks per stage (2: actions of tens of ms on one core)")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--save", default=None, help="folder to save each run's record (JSON) in")
    ap.add_argument("--load", default=None, help="recompute the table from records saved with --save")
    args = ap.parse_args()
    p = args.ranks
    print(f"bubblekit lab benchmark: p={p}, hidden={args.hidden}, seq={args.seq}, batch={args.batch}, "
          f"layers/stage={args.layers}, {args.steps} measured steps after {args.warmup} warm-up, CPU gloo")
    head = (f"{'schedule':<8} {'m':>3}  {'measured (median)':>17} {'range':>13}  {'formula':>7}  {'calibrated':>10}  "
            f"{'|cal-meas|':>10}  {'+jitter':>7} {'|jit-meas|':>10}  {'F ms':>6} {'B ms':>6} {'ovh ms':>6} {'lat ms':>6}  {'wall s':>6}")
    print(head)
    print("-" * len(head))
    rows = []
    for name in args.schedules:
        for m in args.ms:
            t = time.perf_counter()
            saved = Path(args.load or args.save or ".") / f"{name}-p{p}-m{m}.json"
            if args.load:
                res = lab.LabResult.load(saved)
            else:
                res = lab.run(name, ranks=p, microbatches=m, hidden=args.hidden, seq=args.seq, batch=args.batch,
                              layers=args.layers, steps=args.steps, warmup=args.warmup, timeout_s=args.timeout)
                if args.save:
                    saved.parent.mkdir(parents=True, exist_ok=True)
                    res.save(saved)
            wall = time.perf_counter() - t
            meas = res.bubble_ratios
            comps = [res.compare(k) for k in range(len(res.steps))]
            cal = statistics.median(c.calibrated for c in comps)
            jit = statistics.median(c.jitter for c in comps)
            durs = [st for c in comps for st in c.report.durations.values()]
            f_ms = _kind_mean(durs, "F")
            b_ms = _kind_mean(durs, "B") if any(s.kind == "B" for s in durs) else _kind_mean(durs, "I") + _kind_mean(durs, "W")
            ovh = statistics.median(c.report.overhead for c in comps)
            lat = statistics.median(c.report.latency for c in comps)
            med = statistics.median(meas)
            rows.append((name, m, med, cal, jit))
            print(f"{name:<8} {m:>3}  {med:>17.4f} {min(meas):>6.3f}-{max(meas):<6.3f}  {bubble_ratio(p, m):>7.4f}  "
                  f"{cal:>10.4f}  {abs(cal - med):>10.4f}  {jit:>7.4f} {abs(jit - med):>10.4f}  {f_ms:>6.1f} {b_ms:>6.1f} {ovh:>6.2f} {lat:>6.2f}  {wall:>6.1f}",
                  flush=True)
    worst = max(abs(c - mm) for _, _, mm, c, _ in rows)
    worst_j = max(abs(j - mm) for _, _, mm, _, j in rows)
    print(f"largest |calibrated - measured median| = {worst:.4f}; with measured jitter {worst_j:.4f} "
          f"(target <= 0.05 for actions of >= 10 ms)")


if __name__ == "__main__":
    main()
