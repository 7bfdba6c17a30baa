"""Schedule search at its documented limit: is ``MAX_SEARCH_SECONDS`` true on this machine?

For a few rank counts ``p``, take the largest ``m`` that :func:`bubblekit.analysis.search.search_schedule`
accepts with its default limits (``3 p m <= MAX_SEARCH_ACTIONS`` and an estimated time of at most
``MAX_SEARCH_SECONDS``), run the search once (default memory cap ``p``; then a cap of ``p + 4``, which
adds warm-up rules), and print the estimate, the wall-clock and CPU times and whether the run stayed
within the documented limit. The case of the hostile-input report, ``search_schedule(40, 100,
mem_cap=80)`` (103 s before the time limit existed), is shown as refused with its estimate.

Run: ``.venv/bin/python benchmarks/bench_search.py [--ps 4 8 16]``.
"""

from __future__ import annotations

import argparse
import time

from bubblekit.analysis import search as S


def largest_m(p: int, n_rules: int) -> int:
    """The largest m accepted for p ranks and n_rules greedy rules (0 when none is)."""
    m = S.MAX_SEARCH_ACTIONS // (3 * p)
    while m > 0 and S._search_seconds(p, m, n_rules) > S.MAX_SEARCH_SECONDS:
        m -= max(1, m // 50)
    return m


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ps", type=int, nargs="+", default=[4, 8, 16])
    args = ap.parse_args()
    print(f"limits: MAX_SEARCH_ACTIONS={S.MAX_SEARCH_ACTIONS:,} actions, MAX_SEARCH_SECONDS={S.MAX_SEARCH_SECONDS:g} s")
    print(f"{'p':>4} {'m':>6} {'cap':>5} {'rules':>5} {'actions':>8} {'estimate s':>10} {'wall s':>8} {'cpu s':>8}  within")
    worst = 0.0
    for p in args.ps:
        for extra in (0, 4):
            cap = p + extra
            n_rules = len(S.POLICIES) + 3 * max(0, min(cap, 2 * p - 1) - p)
            m = largest_m(p, n_rules)
            if m < 1:
                continue
            w0, c0 = time.perf_counter(), time.process_time()
            S.search_schedule(p, m, mem_cap=cap, method="greedy", improve=False, progress=False)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            worst = max(worst, wall)
            print(f"{p:>4} {m:>6} {cap:>5} {n_rules:>5} {3 * p * m:>8,} {S._search_seconds(p, m, n_rules):>10.1f} "
                  f"{wall:>8.1f} {cpu:>8.1f}  {'yes' if wall <= S.MAX_SEARCH_SECONDS else 'NO'}")
    try:
        S.search_schedule(40, 100, mem_cap=80)
        print("search_schedule(40, 100, mem_cap=80): accepted (unexpected)")
    except ValueError as err:
        print(f"search_schedule(40, 100, mem_cap=80): refused up front ({str(err).split(', more than')[0]})")
    print(f"slowest accepted run: {worst:.1f} s (documented limit {S.MAX_SEARCH_SECONDS:g} s)")


if __name__ == "__main__":
    main()
