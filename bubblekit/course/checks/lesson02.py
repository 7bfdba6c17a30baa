"""Exercises of lesson 02, "Why bubbles appear" (``solutions/02_why_bubbles_appear.ipynb``).

Each expected value is simulated by bubblekit when a learner checks; nothing here is typed.
Costs are in abstract slots (F = 1, B = 2 unless an exercise says otherwise).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import bubblekit as bk
from bubblekit.course.checks._mistakes import hop_off, swapped_items
from bubblekit.course.checks._registry import Mistake, exercise
from bubblekit.course.checks._schedules import ScheduleGoal, compare_schedule
from bubblekit.course.checks.lesson01 import gap_before

#: The unbalanced pipeline of exercises 02.4 and 02.5 (not the lesson's, so the lesson does not answer
#: them): stage 1 holds three times the work of stage 0, stage 3 twice; GPipe with ``UNEVEN_M`` microbatches.
UNEVEN_F = (1, 3, 1, 2)
UNEVEN_B = tuple(2 * f for f in UNEVEN_F)
UNEVEN_M = 6


def uneven_result() -> bk.SimResult:
    """GPipe, p = 4, m = ``UNEVEN_M``, forward costs ``UNEVEN_F`` and backward twice that (slots)."""
    return bk.simulate(bk.schedule("gpipe", 4, UNEVEN_M), bk.Costs(f=UNEVEN_F, b=UNEVEN_B))


def _gap_0b0(p: int, m: int) -> Any:
    """Rank 0's wait before ``0B0`` in GPipe with ``p`` ranks, ``m`` microbatches, F = 1, B = 2 (slots)."""
    return gap_before(bk.simulate(bk.schedule("gpipe", p, m), bk.preset("b=2f")), 0, "0B0")


@exercise("02.0", hint=("The gradient of microbatch 0 must travel down and back: count the stages it crosses.",
                        "Microbatch 0's forward goes from rank 0 to the last rank, its backward comes back: "
                        "each crossing of a rank costs that rank's F or B."),
          mistakes=hop_off(lambda p: _gap_0b0(p, 8), 4))
def _check_yourself() -> Any:
    return _gap_0b0(4, 8)


@exercise("02.1", hint=("Give two lists of 5 numbers: each rank's wait before its first action (fill), "
                        "and its idle time after its last action (drain).",
                        "Rank r waits for r forwards before it starts, and finishes r backwards before the "
                        "step ends: read them with result.spans(r)."),
          mistakes=(swapped_items(),))
def _fill_and_drain() -> Any:
    result = bk.simulate(bk.schedule("gpipe", 5, 3), bk.preset("b=2f"))
    fill = [list(result.spans(r))[0].start for r in range(result.p)]
    drain = [result.makespan - list(result.spans(r))[-1].end for r in range(result.p)]
    return (fill, drain)


@exercise("02.2", hint=("Between its last forward and its first backward, rank 0 waits for the forward to reach "
                        "the last stage and the gradient to come back.",
                        "Measure it: the gap in result.idle_intervals(0) whose .before is '0B0'."),
          mistakes=hop_off(lambda p: _gap_0b0(p, 4), 6))
def _middle_gap() -> Any:
    return _gap_0b0(6, 4)


@exercise("02.3", hint=("Answer (extra time for GPipe, extra time for 1F1B), in slots; simulate both with and "
                        "without comm and subtract.",
                        "GPipe pays the latency only on the first forward's way down and the last backward's way "
                        "up; 1F1B's alternation puts more hops on its critical path."),
          mistakes=(swapped_items(),))
def _comm_extra() -> Any:
    extra = []
    for name in ("gpipe", "1f1b"):
        sched = bk.schedule(name, 4, 8)
        with_comm = bk.simulate(sched, bk.Costs(f=1, b=2, comm=0.25)).makespan
        extra.append(with_comm - bk.simulate(sched, bk.Costs(f=1, b=2)).makespan)
    return tuple(extra)


def _mean_stage_makespan() -> Any:
    """GPipe's makespan if every stage cost the mean of ``UNEVEN_F`` (the mistake in 02.4)."""
    mean_f = sum(UNEVEN_F) / len(UNEVEN_F)
    return bk.simulate(bk.schedule("gpipe", 4, UNEVEN_M), bk.Costs(f=mean_f, b=2 * mean_f)).makespan


@exercise("02.4", hint=("The forward wave takes the sum of the stage times plus (m - 1) times the slowest stage; "
                        "the backward wave the same with backward times.",
                        "Simulate it: bk.simulate(bk.schedule('gpipe', 4, m), bk.Costs(f=uneven_f, b=uneven_b)) "
                        "and compare with your prediction."),
          mistakes=(Mistake(lambda _e: _mean_stage_makespan(),
                            "that is what equal stages of the average cost would take; once the pipeline is "
                            "full, the slowest stage sets the pace"),))
def _uneven_makespan() -> Any:
    return uneven_result().makespan


@exercise("02.5", hint=("Count how many actions of each rank lie on result.critical_path.",
                        "Counter(rank for rank, _ in result.critical_path) counts them; give the rank with "
                        "the most, as an int."))
def _critical_rank() -> Any:
    counts = Counter(rank for rank, _ in uneven_result().critical_path)
    return counts.most_common(1)[0][0]


@exercise(
    "02.6",
    hint=("A rank cannot run the backward of a microbatch before its own forward of it, and the last rank "
          "should start each backward as soon as it has finished that microbatch's forward.",
          "Rank r of 1F1B runs p - r forwards before its first backward, then alternates one backward and "
          "one forward, then runs its remaining backwards (the cool-down)."),
    compare=compare_schedule,
)
def _repair_1f1b() -> Any:
    costs = bk.preset("b=2f")
    return ScheduleGoal(3, 3, costs, bk.simulate(bk.schedule("1f1b", 3, 3), costs).makespan)
