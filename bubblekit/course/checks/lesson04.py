"""Exercises of lesson 04, *Schedules compared* (``solutions/04_schedules_compared.ipynb``).

Every expected value is computed with bubblekit when a learner checks an answer.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import bubblekit as bk
from bubblekit.course.checks._grading import THE_STEP, Graded
from bubblekit.course.checks._mistakes import megatron_overhead, swapped_items
from bubblekit.course.checks._registry import Mistake, exercise
from bubblekit.course.checks._schedules import as_schedule

#: The cost model of every lesson-04 exercise: forward 1 slot, backward 2 slots, no latency.
COSTS = bk.Costs(f=1, b=2)

#: Exercise 04.5: a hand-written 1F1B for p=2, m=4 with one mistake (it deadlocks).
BROKEN_1F1B = """\
rank 0: 0F0 0F1 0B0 0F2 0B1 0F3 0B2 0B3
rank 1: 1F0 1B1 1F1 1B0 1F2 1B2 1F3 1B3
"""


@exercise("04.1", hint=("Simulate both schedules with bk.Costs(f=1, b=2) and read r.peak_activations[0].",
                        "GPipe keeps every forward's activations until the backwards start; 1F1B's rank 0 starts "
                        "its first backward after its warm-up forwards."),
          mistakes=(swapped_items(),))
def _peak_rank0() -> tuple[float, float]:
    """(GPipe, 1F1B) peak activations of rank 0 for p=6, m=12."""
    return tuple(bk.simulate(bk.schedule(n, 6, 12), COSTS).peak_activations[0] for n in ("gpipe", "1f1b"))  # type: ignore[return-value]


@exercise("04.2", hint=("Use r.bubble_ratio_exact of the simulated interleaved schedule (a Fraction), not a float.",
                        "Simulate bk.schedule('interleaved', 4, 16, 4) with bk.Costs(f=1, b=2) and compare its "
                        "bubble_ratio_exact with bk.bubble_ratio_exact(p, m, v)."),
          exact=True,
          fraction_of=THE_STEP,
          mistakes=(megatron_overhead(4, 16, 4),
                    Mistake(lambda _e: bk.bubble_ratio_exact(4, 16),
                            "that is plain 1F1B's bubble (one chunk per rank); this schedule has v = 4 chunks")))
def _interleaved_bubble() -> Any:
    """Exact bubble_ratio of interleaved 1F1B, p=4, m=16, v=4, f=1, b=2."""
    return bk.simulate(bk.schedule("interleaved", 4, 16, 4), COSTS).bubble_ratio_exact


@exercise("04.3", hint=("Simulate both for p=6, m=12 with bk.Costs(f=1, b=2, comm=Fraction(1, 2)) and subtract GPipe's "
                        "makespan from 1F1B's.",
                        "Each schedule's latency cost is the number of hops on its critical path times 1/2 slot: "
                        "count the hops of each, or read r.critical_path."),
          mistakes=(Mistake(lambda e: -e, "right size, wrong sign: the difference is makespan(1F1B) minus makespan(GPipe)"),
                    Mistake(lambda _e: _gap(4, 8), "that is the lesson's p = 4, m = 8; this exercise has p = 6, m = 12")))
def _comm_gap() -> Any:
    """makespan(1F1B) - makespan(GPipe) for p=6, m=12 with a latency of 1/2 slot per hop."""
    return _gap(6, 12)


def _gap(p: int, m: int) -> Any:
    """makespan(1F1B) - makespan(GPipe) with a latency of 1/2 slot per hop (slots)."""
    c = bk.Costs(f=1, b=2, comm=Fraction(1, 2))
    return bk.simulate(bk.schedule("1f1b", p, m), c).makespan - bk.simulate(bk.schedule("gpipe", p, m), c).makespan


def mystery() -> bk.SimResult:
    """The simulated schedule drawn, without its name, in exercise 04.4."""
    return bk.simulate(bk.schedule("looped-bfs", 3, 4, 2), COSTS)


@exercise(
    "04.4",
    hint=("Read the legend and the boxes: how many chunks does each rank hold, and are all forwards of a "
          "chunk done before the next chunk starts?",
          "Two of the four schedules hold more than one chunk per rank; of those, one finishes every forward "
          "of a chunk before it starts the next chunk (breadth first), the other alternates (depth first)."),
)
def _name_the_schedule() -> str:
    return mystery().schedule.name


def _compare_repair(answer: Any, expected: Any) -> Graded:
    """Legal p=2, m=4 schedule, at most 2 activations per rank, makespan no longer than 1F1B's.

    Returns ``Graded(ok, message, kind)`` (unpacks as ``(ok, message)``); the kinds (``deadlock``, ``memory``, ``slow``, ...) select the
    hint, so a legal schedule over the memory cap is never told to read a DeadlockError.
    """
    sched, why = as_schedule(answer)
    if sched is None:
        return Graded(False, why, "unreadable")
    if sched.p != 2 or sched.m != 4 or sched.v != 1:
        return Graded(False, (f"the schedule must have p=2 ranks, m=4 microbatches and one stage per rank "
                              f"(got p={sched.p}, m={sched.m}, v={sched.v})"), "shape")
    try:
        r = bk.simulate(sched, COSTS)
    except bk.DeadlockError as err:
        return Graded(False, "it still deadlocks: " + str(err).removeprefix("deadlock: "), "deadlock")
    except bk.ScheduleError as err:
        return Graded(False, f"the schedule is not complete: {err}", "incomplete")
    worst = max(range(r.p), key=lambda q: r.peak_activations[q])
    if r.max_peak_activations > 2:
        return Graded(False, (f"legal (no deadlock), but rank {worst} holds {r.max_peak_activations:g} microbatch "
                              f"activations at its peak (at most 2 allowed)"), "memory")
    if r.makespan > expected:
        return Graded(False, f"legal and within memory, but its makespan is {r.makespan} slots: 1F1B finishes sooner", "slow")
    return Graded(True, "", "")


#: Hints of 04.5 for the deadlock it is about (and for anything not recognised).
REPAIR_HINTS = (
    "Simulate the broken text and read the DeadlockError: it names the blocked rank and the action it waits for.",
    "Rank 1 runs a backward of a microbatch whose gradient cannot exist yet: on the last rank, each "
    "backward follows the forward of the same microbatch.",
)


@exercise(
    "04.5",
    hint=REPAIR_HINTS,
    compare=_compare_repair,
    kind_hints={
        "deadlock": REPAIR_HINTS,
        "memory": ("Your schedule is legal, so the deadlock is fixed; now it keeps more than 2 microbatches alive "
                   "on one rank. Run that rank's backwards earlier, between its forwards.",
                   "Rank 0 may hold at most 2: after two forwards, every further forward must wait for a backward."),
    },
)
def _repair() -> Any:
    """The makespan to match: 1F1B, p=2, m=4."""
    return bk.simulate(bk.schedule("1f1b", 2, 4), COSTS).makespan


@exercise("04.6", hint=("Try bk.schedule('interleaved', 6, m, 2) for every m from 1 to 24 and collect the m that raise ValueError.",
                        "Wrap each call in try/except ValueError and add m to a set when it raises (or keep the m "
                        "that bk.legal_ms('interleaved', 6, 2, up_to=24) leaves out); read one error message to see "
                        "the rule."),
          mistakes=(Mistake(lambda _e: _refused_for(4, 16), "those are the m refused for the lesson's p = 4; this exercise has p = 6"),))
def _refused() -> set[int]:
    """The m in 1..24 that interleaved 1F1B refuses for p=6."""
    return _refused_for(6, 24)


def _refused_for(p: int, up_to: int) -> set[int]:
    """The m in 1..up_to that interleaved 1F1B (v=2) refuses for p ranks."""
    out: set[int] = set()
    for m in range(1, up_to + 1):
        try:
            bk.schedule("interleaved", p, m, 2)
        except ValueError:
            out.add(m)
    return out
