"""Reading a schedule the learner wrote, for the checks that grade schedules.

Shared by every lesson's schedule exercises so that a learner gets the same words for the
same mistake everywhere: :func:`as_schedule` reads an answer; :class:`ScheduleGoal` and
:func:`compare_schedule` grade it (legal, no deadlock, as fast as the goal, within a memory
cap), with a hint that names the blocked rank or the makespan gap, never the answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import bubblekit as bk
from bubblekit.course.checks._grading import Graded

__all__ = ["as_schedule", "ScheduleGoal", "compare_schedule"]


def as_schedule(answer: Any) -> tuple[bk.Schedule | None, str]:
    """``(schedule, "")`` for a ``bk.Schedule`` or readable text, else ``(None, why)``.

    Text is read with :meth:`bubblekit.Schedule.from_text` without validation: missing or
    duplicate actions are reported later by :func:`bubblekit.simulate`, next to deadlocks.
    """
    if isinstance(answer, bk.Schedule):
        return answer, ""
    if not isinstance(answer, str):
        return None, (
            "give the schedule as text ('rank 0: 0F0 0F1 ...') or a bk.Schedule, "
            f"got {type(answer).__name__}"
        )
    try:
        return bk.Schedule.from_text(answer, validate=False), ""
    except bk.ScheduleError as exc:
        return None, f"the text cannot be read as a schedule: {exc}"


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


def compare_schedule(answer: Any, goal: ScheduleGoal) -> Graded:
    """Simulate the learner's schedule; ``Graded(ok, message, kind)`` naming what is wrong, never the answer.

    Checks, in order: readable text (kind ``"unreadable"``), ``p`` ranks and ``m``
    microbatches (``"shape"``), every action exactly once on its rank (``"incomplete"``), no
    deadlock (``"deadlock"``: the message names each blocked rank and what it waits for), the
    memory cap (``"memory"``: a legal schedule over the cap is not a deadlock) and the makespan
    (``"slow"``: the message gives the gap to the goal). The kinds select the hint
    (:data:`bubblekit.course.checks._registry.KIND_HINTS`).
    """
    sched, why = as_schedule(answer)
    if sched is None:
        return Graded(False, why, "unreadable")
    if sched.p != goal.p:
        return Graded(False, f"your schedule has {sched.p} rank line(s); this exercise has p = {goal.p} ranks", "shape")
    if sched.m != goal.m:
        return Graded(False, f"your schedule uses {sched.m} microbatch(es); this exercise has m = {goal.m}", "shape")
    try:
        result = bk.simulate(sched, goal.costs)
    except bk.DeadlockError as exc:
        blocked = [line.strip() for line in str(exc).splitlines()[1:]]
        return Graded(False, "deadlock: " + "; ".join(blocked), "deadlock")
    except bk.ScheduleError as exc:
        lines = [line.strip() for line in str(exc).splitlines()]
        return Graded(False, lines[0] + " " + "; ".join(lines[1:]), "incomplete")
    if goal.max_peak is not None:
        over = [(r, pk) for r, pk in enumerate(result.peak_activations) if pk > goal.max_peak]
        if over:
            r, pk = over[0]
            return Graded(False, (
                f"legal (no deadlock), but rank {r} holds {pk:g} microbatches' activations at its peak; "
                f"the cap is {goal.max_peak:g}"
            ), "memory")
    gap = result.makespan - goal.makespan
    if gap > 0:
        return Graded(False, (
            f"legal, but the step takes {_time(result.makespan, result.unit)}, "
            f"{_time(gap, result.unit)} longer than it can be: "
            f"look for the rank that waits longest (result.largest_gaps())"
        ), "slow")
    return Graded(True, "", "")
