"""Exercises of lesson 05, *Shrinking bubbles* (``solutions/05_shrinking_bubbles.ipynb``).

Every expected value is computed with bubblekit when a learner checks an answer.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import bubblekit as bk
from bubblekit.analysis import balance, planner
from bubblekit.course.checks._grading import THE_STEP, Graded
from bubblekit.course.checks._mistakes import swapped_items
from bubblekit.course.checks._registry import Mistake, exercise
from bubblekit.course.checks._schedules import as_schedule

#: Exercise 05.4: the latency to hide (slots per hop) with F = 1, B = 2.
HIDE_COMM = Fraction(1, 4)
#: Exercise 05.4: the memory cap (microbatch activations per rank).
HIDE_CAP = 4


@exercise("05.1", hint=("bk.bubble_ratio(p, m) for p = 8: the article's demo uses p = 8, its prose example does not.",
                        "Two fractions of 1, p = 8 in both: (p - 1)/(m + p - 1) at m = 4 and at m = 32."),
          fraction_of=THE_STEP,
          mistakes=(Mistake(lambda _e: (bk.bubble_ratio(4, 4), bk.bubble_ratio(4, 32)),
                            "those are the article's prose numbers, for p = 4; the question asks for p = 8"),
                    Mistake(lambda _e: (bk.bubble_overhead(8, 4), bk.bubble_overhead(8, 32)),
                            "those are Megatron's overheads (bubble over busy time); give fractions of the whole step"),
                    swapped_items()))
def _p8() -> tuple[float, float]:
    """(bubble_ratio at m=4, at m=32) for p=8."""
    return (bk.bubble_ratio(8, 4), bk.bubble_ratio(8, 32))


@exercise("05.2", hint=("bk.min_micro_batch(p, target, v=...) answers both; check one by hand with (p-1)/(m*v+p-1).",
                        "Solve (p - 1)/(m v + p - 1) <= 0.1 for m with p = 6, once with v = 1 and once with v = 2, "
                        "and round each up to a whole m."),
          mistakes=(swapped_items(),))
def _min_m() -> tuple[int | None, int | None]:
    """Smallest m with bubble_ratio <= 10% for p=6, with v=1 and with v=2."""
    return (bk.min_micro_batch(6, 0.1), bk.min_micro_batch(6, 0.1, v=2))


@exercise("05.3", hint=("Simulate 1F1B (v=1) and interleaved v=2, 4, 8 with bk.Costs(f=1, b=2, comm=Fraction(1, 8)) and compare makespans.",
                        "More chunks shrink the ramps but add hops; give the v (an int) whose simulated makespan "
                        "is the smallest, the smaller v on a tie."))
def _best_v() -> int:
    """The v in (1, 2, 4, 8) with the shortest makespan, p=4, m=8, comm=1/8 slot."""
    c = bk.Costs(f=1, b=2, comm=Fraction(1, 8))
    spans = {}
    for v in (1, 2, 4, 8):
        s = bk.schedule("1f1b", 4, 8) if v == 1 else bk.schedule("interleaved", 4, 8, v)
        spans[v] = bk.simulate(s, c).makespan
    return min(spans, key=lambda v: (spans[v], v))


def hide_floor(p: int = 3, m: int = 6) -> Any:
    """(m + p - 1)(f + b) + 2(p - 1) comm for F = 1, B = 2, comm = HIDE_COMM: the shortest step of a schedule
    with one stage per rank (lesson 05, section 3; schedules with several chunks per rank can beat it)."""
    return (m + p - 1) * 3 + 2 * (p - 1) * HIDE_COMM


def _compare_hidden(answer: Any, expected: Any) -> Graded:
    """A legal p=3, m=6 schedule that reaches :func:`hide_floor` with at most HIDE_CAP activations per rank.

    Returns ``Graded(ok, message, kind)`` (unpacks as ``(ok, message)``) (kinds as in :data:`bubblekit.course.checks._registry.KIND_HINTS`).
    """
    sched, why = as_schedule(answer)
    if sched is None:
        return Graded(False, why, "unreadable")
    if sched.p != 3 or sched.m != 6 or sched.v != 1:
        return Graded(False, (f"the schedule must have p=3 ranks, m=6 microbatches, one stage per rank "
                              f"(got p={sched.p}, m={sched.m}, v={sched.v})"), "shape")
    try:
        r = bk.simulate(sched, bk.Costs(f=1, b=2, comm=HIDE_COMM))
    except bk.DeadlockError as err:
        return Graded(False, "it deadlocks: " + str(err).removeprefix("deadlock: "), "deadlock")
    except bk.ScheduleError as err:
        return Graded(False, f"the schedule is not complete: {err}", "incomplete")
    if r.max_peak_activations > HIDE_CAP:
        worst = max(range(r.p), key=lambda q: r.peak_activations[q])
        return Graded(False, (f"legal (no deadlock), but rank {worst} holds {r.max_peak_activations:g} microbatch "
                              f"activations at its peak (at most {HIDE_CAP})"), "memory")
    if r.makespan > expected:
        blocked = max(r.idle_intervals(), key=lambda g: g.duration)
        return Graded(False, (f"legal and within memory, but the makespan is {r.makespan} slots: latency is still on the "
                              f"critical path (the longest wait is on rank {blocked.rank}, before {blocked.before})"), "slow")
    return Graded(True, "", "")


#: Hints of 05.4 (also for a legal schedule that is still too slow: the latency is not hidden yet).
HIDE_HINTS = (
    "Start from 1F1B for p=3, m=6 and give the ranks that wait for gradients one more forward to run while they wait.",
    "Rank 0 waits longest for its first gradient: let it start one more forward than 1F1B before its "
    "first backward, and rank 1 too, within the cap of 4.",
)


@exercise("05.4", hint=HIDE_HINTS, compare=_compare_hidden, kind_hints={"slow": HIDE_HINTS})
def _hide() -> Any:
    return hide_floor()


def head_model() -> list[balance.Layer]:
    """Exercise 05.5: 6 measured layers (h=4096, seq=4096) as attention/MLP pieces plus a hypothetical output head.

    The head is *not measured*: it is made up as twice an MLP block, to show what a heavy last
    piece does to a count-based split.
    """
    layers = balance.measured_layers(6, hidden=4096, seq=4096)
    mlp = layers[1]
    layers.append(balance.Layer("head (hypothetical)", f=2 * mlp.f, b=2 * mlp.b))
    return layers


@exercise("05.5", hint=("balance.partition(layers, 4).to_costs() gives per-stage costs; simulate bk.schedule('1f1b', 4, 8) with them.",
                        "Give the makespan in ms of the balanced split (balance.partition), not of the split by "
                        "count (balance.even_partition)."),
          rel_tol=1e-9,
          mistakes=(Mistake(lambda _e: _step_ms(balance.even_partition(head_model(), 4)),
                            "that is the split by count (even_partition); the exercise asks for the balanced split"),))
def _balanced_step() -> Any:
    """Makespan (ms) of 1F1B, p=4, m=8, with the optimal 4-stage partition of head_model()."""
    return _step_ms(balance.partition(head_model(), 4))


def _step_ms(part: balance.Partition) -> Any:
    """Makespan (ms) of 1F1B, p=4, m=8, with the stage costs of ``part``."""
    return bk.simulate(bk.schedule("1f1b", 4, 8), part.to_costs()).makespan


@exercise("05.6", hint=("planner.plan(8, costs=..., recompute=..., memory_budget=4, ms=(8, 16, 32)).best.time_per_microbatch",
                        "Give the time per microbatch (step time / m, in slots) of the best configuration that "
                        "fits the budget of 4, not its step time."),
          rel_tol=1e-9)
def _plan_best() -> Any:
    """Best time per microbatch (slots) for p=8, F=1, B=2, recompute 1/16 activations at +0.7 F, budget 4."""
    base = bk.Costs(f=1, b=2)
    rc = planner.with_recompute(base, activation=Fraction(1, 16), extra_backward=Fraction(7, 10))
    best = planner.plan(8, costs=base, recompute=rc, memory_budget=4, ms=(8, 16, 32)).best
    return None if best is None else best.time_per_microbatch


def _recompute_steps() -> tuple[Any, Any]:
    """Makespans (ms) of 1F1B, p=8, m=32, with the measured h=4096, seq=4096 costs: plain, recomputed."""
    plain, recomputed = planner.h200_recompute_costs(4096, 4096)
    return tuple(bk.simulate(bk.schedule("1f1b", 8, 32), c).makespan for c in (plain, recomputed))  # type: ignore[return-value]


def _extra_backward() -> float:
    """The backward's growth with full recomputation, in plain forwards (h=4096: the lesson's table)."""
    rec = next(c for c in planner.load_h200_recompute_costs()["configs"] if c["hidden"] == 4096)
    return float((rec["full"]["bwd_ms"] - rec["none"]["bwd_ms"]) / rec["none"]["F_ms"])


@exercise("05.7", hint=("Simulate bk.schedule('1f1b', 8, 32) once with each of the two costs that "
                        "planner.h200_recompute_costs(4096, 4096) returns, and compare the makespans.",
                        "Give how much longer the recomputed step is, as a fraction of the plain step: "
                        "recomputed makespan / plain makespan - 1."),
          rel_tol=1e-3, fraction_of="the plain step",
          mistakes=(Mistake(lambda e: e + 1, "that is the ratio of the two steps; give how much longer: the ratio minus 1"),
                    Mistake(lambda _e: _extra_backward(),
                            "that is one backward's growth in plain forwards; the question asks about the whole step")))
def _recompute_step() -> float:
    """How much longer (a fraction) 1F1B's step is with full recomputation, p=8, m=32, h=4096, seq=4096 (measured)."""
    plain, recomputed = _recompute_steps()
    return float(recomputed / plain - 1)
