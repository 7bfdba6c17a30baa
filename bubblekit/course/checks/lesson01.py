"""Exercises of lesson 01, "What a bubble is" (``solutions/01_what_is_a_bubble.ipynb``).

:func:`factory_line` (the car factory, a forward-only pipeline) lives in
:mod:`bubblekit.course.factory` and is re-exported here. Schedule exercises use :class:`ScheduleGoal` and :func:`compare_schedule` from
:mod:`bubblekit.course.checks._schedules` (re-exported here for lessons 02 and 03).

Expected values are computed by bubblekit when a learner checks; nothing here is typed.
"""

from __future__ import annotations

from typing import Any

import bubblekit as bk
from bubblekit.course.checks._mistakes import swapped_items, swapped_pm, utilisation
from bubblekit.course.checks._registry import Mistake, exercise
from bubblekit.course.checks._schedules import ScheduleGoal, compare_schedule
from bubblekit.course.factory import factory_line

__all__ = ["factory_line", "ScheduleGoal", "compare_schedule", "gap_before"]


# ----------------------------------------------------------------------------- helpers


def gap_before(result: bk.Timeline, rank: int, label: str) -> Any:
    """Length of the idle gap on ``rank`` that ends when the action ``label`` (e.g. ``"0B0"``) starts."""
    for gap in result.idle_intervals(rank):
        if gap.before == label:
            return gap.duration
    return 0


# ----------------------------------------------------------------------------- exercises


@exercise(
    "01.0",
    hint=("Draw the three stations as rows and the minutes as columns, then count empty boxes.",
          "Idle station-minutes over all station-minutes: how many minutes does the batch take, "
          "and how many of each station's minutes are busy?"),
    rel_tol=1e-6,
    fraction_of="all station-minutes",
    mistakes=(utilisation(), swapped_pm(lambda s, c: factory_line(s, c).bubble_ratio, 3, 4)),
)
def _check_yourself() -> Any:
    return factory_line(3, 4).bubble_ratio


@exercise("01.1", hint=("The first car needs one minute per station; after that, one car leaves every minute.",
                        "Add the first car's trip through all stations to one minute for each car after it."),
          mistakes=(Mistake(lambda _e: factory_line(1, 10).makespan * 3,
                            "that runs every car through every station one after another; the stations "
                            "work at the same time, each on a different car"),))
def _factory_makespan() -> Any:
    return factory_line(3, 10).makespan


@exercise("01.2", hint=("Answer (rank, length in slots); look for the widest empty stretch in one row.",
                        "Compare the middle wait of the top row with the drain of the bottom row; "
                        "diagram.largest_gaps(1) confirms your reading."),
          mistakes=(swapped_items(),))
def _longest_gap() -> Any:
    """GPipe, p = 3, m = 5, F = 1, B = 2: (rank, slots) of the longest single idle stretch."""
    gap = bk.simulate(bk.schedule("gpipe", 3, 5), bk.preset("b=2f")).largest_gaps(1)[0]
    return (gap.rank, gap.duration)


def _idle_money(result: bk.SimResult, measure: str = "bubble_ratio") -> Any:
    return getattr(result, measure) * 8 * 24 * 100


def _gpipe_8_16() -> bk.SimResult:
    return bk.simulate(bk.schedule("gpipe", 8, 16), bk.preset("b=2f"))


@exercise(
    "01.3",
    hint=("Idle GPU-hours per day = bubble_ratio x GPUs x 24; then multiply by the price.",
          "Use the simulated run's bubble_ratio (idle over all device-time), not bubble_overhead, and "
          "all 8 GPUs for 24 hours at 100 yuan each."),
    rel_tol=1e-6,
    mistakes=(Mistake(lambda _e: _idle_money(_gpipe_8_16(), "bubble_overhead"),
                      "that uses Megatron's overhead (idle over busy time); the money idles for the "
                      "fraction of all GPU-hours, bubble_ratio"),),
)
def _idle_money_expected() -> Any:
    return _idle_money(_gpipe_8_16())


@exercise("01.4", hint=("Each station idles (stations - 1) minutes in total; solve (s - 1)/(m + s - 1) <= 0.1 for m.",
                        "The smallest whole number of cars that meets the target: check it and one car fewer "
                        "with factory_line(3, cars).bubble_ratio."))
def _cars_for_ten_percent() -> Any:
    return bk.min_micro_batch(3, 0.1)


#: Hints of 01.5 for the deadlock it is about (and for anything not recognised).
REPAIR_HINTS = (
    "Rank 1 cannot start 1F1 before rank 0 has run 0F1; reorder so no rank waits for something "
    "that comes later on another rank's list.",
    "For each action, find the action it waits for on the other rank; an order in which every such "
    "action comes earlier cannot deadlock.",
)


@exercise("01.5", hint=REPAIR_HINTS, compare=compare_schedule, kind_hints={"deadlock": REPAIR_HINTS})
def _repair_deadlock() -> Any:
    costs = bk.preset("b=2f")
    return ScheduleGoal(2, 2, costs, bk.simulate(bk.schedule("gpipe", 2, 2), costs).makespan)
