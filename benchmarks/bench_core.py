"""Core speed: actions simulated per second, bubblekit end to end vs PyTorch's own path.

bubblekit, per configuration (best of ``--repeat`` runs):
    build the schedule (``bk.schedule``), simulate it (validation included) and read the
    metrics ``makespan``, ``bubble_ratio``, ``peak_activations`` and ``critical_path``.

PyTorch 2.13 (``torch.distributed.pipelining.schedules``), when torch is importable, one run:
    construct the schedule class on fake stage objects (no process group; the constructor
    computes every rank's ``pipeline_order`` and, for the multi-stage classes, lowers it
    with communication), then lower the compute actions with ``_add_send_recv`` and
    dry-run them with ``_simulate_comms_compute``, PyTorch's closest simulation utility
    (unit time steps; it computes no makespan in time units, no memory, no critical path).
    ``Schedule1F1B``'s static ``pipeline_order`` lists the last rank wrongly (F1..Fm), which
    would never finish; its last rank is replaced by the runtime order (F0 B0 F1 B1 ...)
    before lowering (see tests/test_torch_orders.py).

"actions" are compute actions (F, B, I, W) over all ranks, the same count on both sides.
Each configuration runs twice on bubblekit's side: with the textbook costs, and with messages
that take time on the wire (one message at a time per link direction) and a data-parallel
reduction at the step's end (``WIRED``), against the same PyTorch run; then lowered (``Schedule.lower_comms()``: a SEND and a
RECV action per hop, where PyTorch's ``_add_send_recv`` puts them) with the same costs, twice:
``lowered sim`` times the simulation and the metrics of the lowered schedule (built and lowered
before the clock starts: the engines with the new actions present), ``lowered all`` times
building and lowering too (PyTorch's side lowers as well).
The same run with the readable engine (``bk.simulate(..., engine="readable")``, the one the
lessons point to) is printed too: it gives the same timeline, more slowly.
Both wall-clock and CPU time are printed: on a shared machine CPU time is the steadier one.

Run: ``.venv/bin/python benchmarks/bench_core.py [--repeat 3] [--no-torch]``.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from typing import Any

import bubblekit as bk

CONFIGS: list[tuple[str, int, int]] = [("1f1b", 64, 1024), ("zbv", 32, 256)]
TARGET = 500_000  # actions/s, end to end
TORCH_FACTOR = 10  # bubblekit's end-to-end rate must be at least this many times PyTorch's
#: the costs of the second run: a latency, 2 bytes per message on links of 1 byte per slot, a reduction per stage
WIRED = bk.Costs(f=1, b=2, comm=1, activation_bytes=2, bandwidth=1, dp_reduce=3)
#: (label, costs, lowered: "" (no), "sim" (lowered before the clock starts) or "all" (lowering timed))
COST_MODELS: list[tuple[str, bk.Costs | None, str]] = [("", None, ""), (" +wire+dp", WIRED, ""),
                                                        (" lowered sim +wire+dp", WIRED, "sim"),
                                                        (" lowered all +wire+dp", WIRED, "all")]


def _timed(fn: Callable[..., Any], *args: Any) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds, result) of ``fn(*args)``; garbage collection counts too."""
    gc.collect()
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn(*args)
    return time.perf_counter() - w0, time.process_time() - c0, out


def bubblekit_run(name: str | bk.Schedule, p: int, m: int, engine: str = "fast", costs: bk.Costs | None = None,
                  lowered: str = "") -> int:
    """Build (and lower, with ``lowered="all"``), simulate and read the four metrics; return the compute actions.

    ``name`` may be a schedule built (and lowered) before the clock started (``lowered="sim"``).
    """
    s = name if isinstance(name, bk.Schedule) else bk.schedule(name, p, m)
    r = bk.simulate(s.lower_comms() if lowered == "all" else s, costs, engine=engine)
    _ = (r.makespan, r.bubble_ratio, r.peak_activations, r.critical_path)
    return s.compute_only().n_actions if s.has_comms else s.n_actions


class _FakeStage:
    """What PyTorch's schedule constructors read from a stage (no process group)."""

    def __init__(self, stage_index: int, num_stages: int, group_size: int) -> None:
        self.stage_index = stage_index
        self.num_stages = num_stages
        self.group_size = group_size
        self.group_rank = 0
        self.submod = None
        self.is_first = stage_index == 0
        self.is_last = stage_index == num_stages - 1


def torch_run(name: str, p: int, m: int) -> int:
    """PyTorch's path for the same configuration; return the number of compute actions."""
    from torch.distributed.pipelining import schedules as S

    compute = {"FORWARD", "FULL_BACKWARD", "BACKWARD_INPUT", "BACKWARD_WEIGHT"}
    if name == "1f1b":
        sched: Any = S.Schedule1F1B(_FakeStage(0, p, p), m)
        n_stages = p
        stage_to_rank: Callable[[int], int] = lambda s: s  # noqa: E731
    elif name == "zbv":
        n_stages = 2 * p
        sched = S.ScheduleZBVZeroBubble([_FakeStage(0, n_stages, p), _FakeStage(n_stages - 1, n_stages, p)], m)
        mapping = sched.stage_index_to_group_rank
        stage_to_rank = lambda s: mapping[s]  # noqa: E731
    else:
        raise ValueError(f"no PyTorch path for {name!r} in this benchmark")
    orders = {
        r: [a for a in row if a is not None and a.computation_type.name in compute]
        for r, row in sched.pipeline_order.items()
    }
    if name == "1f1b":  # repair the static IR's last rank (see the module docstring)
        last = p - 1
        orders[last] = [
            S._Action(last, kind, k) for k in range(m) for kind in (S.FORWARD, S.FULL_BACKWARD)
        ]
    n_actions = sum(len(row) for row in orders.values())
    lowered = S._add_send_recv(orders, stage_to_rank=stage_to_rank, num_stages=n_stages)
    S._simulate_comms_compute(lowered, stage_to_rank, n_stages)
    return n_actions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="bubblekit runs per configuration (best kept)")
    ap.add_argument("--no-torch", action="store_true", help="skip PyTorch's path")
    args = ap.parse_args()

    # bubblekit first, before torch is imported: torch's ~300,000 Python objects make every
    # full garbage collection slower, which would bill bubblekit for torch's import.
    ours: list[tuple[str, tuple[float, float, int]]] = []
    for name, p, m in CONFIGS:
        for label, costs, lowered in COST_MODELS:
            what: str | bk.Schedule = bk.schedule(name, p, m).lower_comms() if lowered == "sim" else name
            runs = [_timed(bubblekit_run, what, p, m, "fast", costs, lowered) for _ in range(max(1, args.repeat))]
            ours.append((label, (min(r[0] for r in runs), min(r[1] for r in runs), runs[0][2])))

    readable: list[tuple[float, float, int]] = []
    for name, p, m in CONFIGS:
        wall, cpu, n = _timed(bubblekit_run, name, p, m, "readable")
        readable.append((wall, cpu, n))

    have_torch = False
    if not args.no_torch:
        try:
            import torch.distributed.pipelining.schedules  # noqa: F401

            have_torch = True
        except ImportError:
            print("torch is not importable: PyTorch's path is skipped")

    print(f"{'config':<33}{'actions':>8} | {'bubblekit wall s':>16}{'cpu s':>7}{'actions/s':>11}{'(cpu)':>11}", end="")
    print(f" | {'torch wall s':>12}{'cpu s':>7}{'actions/s':>10}{'(cpu)':>9} | {'ratio':>6}{'(cpu)':>7}" if have_torch else "")
    all_ok = all_ok_cpu = True
    torch_times: dict[tuple[str, int, int], tuple[float, float, int]] = {}
    for (name, p, m), (label, (wall, cpu, n)) in zip([c for c in CONFIGS for _ in COST_MODELS], ours):
        rate, rate_cpu = n / wall, n / cpu
        all_ok &= rate >= TARGET
        all_ok_cpu &= rate_cpu >= TARGET
        line = f"{name} p={p} m={m}{label}".ljust(33) + f"{n:>8} | {wall:>16.3f}{cpu:>7.3f}{rate:>11,.0f}{rate_cpu:>11,.0f}"
        if have_torch:
            if (name, p, m) not in torch_times:
                torch_times[name, p, m] = _timed(torch_run, name, p, m)
            t_wall, t_cpu, t_n = torch_times[name, p, m]
            if t_n != n:
                raise AssertionError(f"PyTorch has {t_n} compute actions, bubblekit {n}")
            t_rate, t_rate_cpu = t_n / t_wall, t_n / t_cpu
            all_ok &= rate >= TORCH_FACTOR * t_rate
            all_ok_cpu &= rate_cpu >= TORCH_FACTOR * t_rate_cpu
            line += (
                f" | {t_wall:>12.3f}{t_cpu:>7.3f}{t_rate:>10,.0f}{t_rate_cpu:>9,.0f}"
                f" | {rate / t_rate:>5.1f}x{rate_cpu / t_rate_cpu:>6.1f}x"
            )
        print(line)
    for (name, p, m), (wall, cpu, n) in zip(CONFIGS, readable):
        print(f"readable engine, {name} p={p} m={m}: {wall:.3f} s wall, {cpu:.3f} s cpu, "
              f"{n / wall:,.0f} actions/s ({n / cpu:,.0f} cpu)")
    goal = f">= {TARGET:,} actions/s" + (f" and >= {TORCH_FACTOR}x PyTorch" if have_torch else "")
    print(f"target {goal}: wall-clock {'met' if all_ok else 'NOT met'}, CPU time {'met' if all_ok_cpu else 'NOT met'}")
    print("(a shared machine inflates wall-clock time; CPU time counts this process only)")


if __name__ == "__main__":
    main()
