"""Exercises of lesson 01, "What a bubble is" (``solutions/01_what_is_a_bubble.ipynb``).

Also home of two helpers the lesson 01-03 checks share:

* :func:`factory_line` simulates a forward-only pipeline (the article's car factory);
* :class:`ScheduleGoal` and :func:`compare_schedule` check a schedule the learner writes as
  text: legal (no missing action, no deadlock), and as fast as the goal, with a hint that
  names the blocked rank or the makespan gap, never the answer.

Expected values are computed by bubblekit when a learner checks; nothing here is typed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import bubblekit as bk

from .._validate import check_int
from ._registry import exercise
from ._schedules import as_schedule

__all__ = ["factory_line", "ScheduleGoal", "compare_schedule", "gap_before"]


# ----------------------------------------------------------------------------- helpers


def factory_line(stations: int, cars: int, minutes: int = 1) -> bk.SimResult:
    """Simulate the article's car factory: ``stations`` in a row, ``cars`` through each, forward only.

    Each station is a rank holding one stage; a car is a microbatch; every station takes
    ``minutes`` per car (unit ``"min"``). There is no backward pass, so the schedule is not
    a training step and is simulated with ``validate=False``.
    """
    stations = check_int("stations", stations)
    cars = check_int("cars", cars)
    text = "\n".join(f"rank {r}: " + " ".join(f"{r}F{i}" for i in range(cars)) for r in range(stations))
    line = bk.Schedule.from_text(text, validate=False, name="factory")
    return bk.simulate(line, bk.Costs(f=minutes, unit="min", name="factory"), validate=False)


def gap_before(result: bk.Timeline, rank: int, label: str) -> Any:
    """Length of the idle gap on ``rank`` that ends when the action ``label`` (e.g. ``"0B0"``) starts."""
    for gap in result.idle_intervals(rank):
        if gap.before == label:
            return gap.duration
    return 0


@dataclass(frozen=True)
class ScheduleGoal:
    """What a hand-written schedule must achieve (the expected value of a schedule exercise).

    Attributes:
        p: ranks; m: microbatches.
        costs: the cost model it is simulated under.
        makespan: the step time to reach (computed by bubblekit), in ``costs.unit``.
        max_peak: optional cap on every rank's peak activations (microbatch activations).
    """

    p: int
    m: int
    costs: bk.Costs
    makespan: Any
    max_peak: float | None = None

    def __repr__(self) -> str:  # never show the target makespan
        return f"<ScheduleGoal p={self.p} m={self.m}>"


def _time(x: Any, unit: str) -> str:
    """``3 slots``, ``1 slot``, ``2.5 ms``: a time with its unit."""
    text = f"{float(x):g}"
    return f"{text} {unit}" + ("s" if unit == "slot" and text != "1" else "")


def compare_schedule(answer: Any, goal: ScheduleGoal) -> tuple[bool, str]:
    """Simulate the learner's schedule; ``(ok, message)`` naming what is wrong, never the answer.

    Checks, in order: readable text, ``p`` ranks and ``m`` microbatches, every action exactly
    once on its rank, no deadlock (the message names each blocked rank and what it waits
    for), the makespan (the message gives the gap to the goal), and the memory cap.
    """
    sched, why = as_schedule(answer)
    if sched is None:
        return False, why
    if sched.p != goal.p:
        return False, f"your schedule has {sched.p} rank line(s); this exercise has p = {goal.p} ranks"
    if sched.m != goal.m:
        return False, f"your schedule uses {sched.m} microbatch(es); this exercise has m = {goal.m}"
    try:
        result = bk.simulate(sched, goal.costs)
    except bk.DeadlockError as exc:
        blocked = [line.strip() for line in str(exc).splitlines()[1:]]
        return False, "deadlock: " + "; ".join(blocked)
    except bk.ScheduleError as exc:
        lines = [line.strip() for line in str(exc).splitlines()]
        return False, lines[0] + " " + "; ".join(lines[1:])
    gap = result.makespan - goal.makespan
    if gap > 0:
        return False, (
            f"legal, but the step takes {_time(result.makespan, result.unit)}, "
            f"{_time(gap, result.unit)} longer than it can be: "
            f"look for the rank that waits longest (result.largest_gaps())"
        )
    if goal.max_peak is not None:
        over = [(r, pk) for r, pk in enumerate(result.peak_activations) if pk > goal.max_peak]
        if over:
            r, pk = over[0]
            return False, (
                f"legal and fast enough, but rank {r} holds {pk:g} microbatches' activations at its peak; "
                f"the cap is {goal.max_peak:g}"
            )
    return True, ""


# ----------------------------------------------------------------------------- exercises


@exercise("01.0", hint="Draw the three stations as rows and the minutes as columns, then count empty boxes.",
          rel_tol=1e-6)
def _check_yourself() -> Any:
    return factory_line(3, 4).bubble_ratio


@exercise("01.1", hint="The first car needs one minute per station; after that, one car leaves every minute.")
def _factory_makespan() -> Any:
    return factory_line(3, 10).makespan


@exercise("01.2", hint="Answer (rank, length in slots); look for the widest empty stretch in one row.")
def _longest_gap() -> Any:
    gap = bk.simulate(bk.schedule("gpipe", 4, 4), bk.preset("b=2f")).largest_gaps(1)[0]
    return (gap.rank, gap.duration)


@exercise("01.3", hint="Idle GPU-hours per day = bubble_ratio x GPUs x 24; then multiply by the price.", rel_tol=1e-6)
def _idle_money() -> Any:
    result = bk.simulate(bk.schedule("gpipe", 8, 16), bk.preset("b=2f"))
    return result.bubble_ratio * 8 * 24 * 100


@exercise("01.4", hint="Each station idles (stations - 1) minutes in total; solve (s - 1)/(m + s - 1) <= 0.1 for m.")
def _cars_for_ten_percent() -> Any:
    return bk.min_micro_batch(3, 0.1)


@exercise(
    "01.5",
    hint="Rank 1 cannot start 1F1 before rank 0 has run 0F1; reorder so no rank waits for something "
    "that comes later on another rank's list.",
    compare=compare_schedule,
)
def _repair_deadlock() -> Any:
    costs = bk.preset("b=2f")
    return ScheduleGoal(2, 2, costs, bk.simulate(bk.schedule("gpipe", 2, 2), costs).makespan)
