"""Exercises of lesson 01, "What a bubble is" (``solutions/01_what_is_a_bubble.ipynb``).

:func:`factory_line` (the car factory, a forward-only pipeline) lives in
:mod:`bubblekit.course.factory` and is re-exported here. Schedule exercises use :class:`ScheduleGoal` and :func:`compare_schedule` from
:mod:`bubblekit.course.checks._schedules` (re-exported here for lessons 02 and 03).

Expected values are computed by bubblekit when a learner checks; nothing here is typed.
"""

from __future__ import annotations

from typing import Any

import bubblekit as bk
from bubblekit.course.checks._grading import Graded, as_rank, grade
from bubblekit.course.checks._mistakes import overhead_min_m, swapped_items, swapped_pm, utilisation
from bubblekit.course.checks._registry import FORMAT, Mistake, compare_choice, compare_values, exercise
from bubblekit.course.checks._schedules import ScheduleGoal, compare_schedule
from bubblekit.course.checks._text import msg, shown
from bubblekit.course.checks._units import CARS, MINUTES, SLOTS, YUAN
from bubblekit.course.factory import factory_line
from bubblekit.i18n import tr

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
    hint=(msg("Draw the three stations as rows and the minutes as columns, then count empty boxes.",
              "把三个工位画成行、分钟画成列，然后数空格子。"),
          msg("Idle station-minutes over all station-minutes: how many minutes does the batch take, "
              "and how many of each station's minutes are busy?",
              "空闲的工位·分钟除以全部工位·分钟：这批车一共要多少分钟？每个工位有多少分钟在忙？")),
    rel_tol=1e-6,
    fraction_of=msg("all station-minutes", "全部工位·分钟"),
    mistakes=(utilisation(),
              Mistake(lambda _e: factory_line(3, 4).bubble_overhead,
                      msg("that is idle minutes over busy minutes (the overhead of section 3), or stations and cars "
                          "swapped; this asks for idle station-minutes over all station-minutes",
                          "这是空闲分钟除以忙碌分钟（第 3 节的开销口径），或者把工位数和车数弄反了；题目问的是空闲"
                          "的工位·分钟占全部工位·分钟的比例")),
              swapped_pm(lambda s, c: factory_line(s, c).bubble_ratio, 3, 4)),
)
def _check_yourself() -> Any:
    return factory_line(3, 4).bubble_ratio


@exercise("01.1", unit=MINUTES, hint=(msg("The first car needs one minute per station; after that, one car leaves every minute.",
                            "第一辆车在每个工位各花一分钟；之后每分钟开出一辆车。"),
                        msg("Add the first car's trip through all stations to one minute for each car after it.",
                            "第一辆车走完所有工位的时间，加上之后每辆车各一分钟。")),
          mistakes=(Mistake(lambda _e: factory_line(1, 10).makespan * 3,
                            msg("that runs every car through every station one after another; the stations "
                                "work at the same time, each on a different car",
                                "这是让每辆车依次走完所有工位、一辆接一辆的结果；而各工位是同时工作的，各自处"
                                "理不同的车")),))
def _factory_makespan() -> Any:
    return factory_line(3, 10).makespan


@exercise("01.2", hint=(msg("Answer (rank, length in slots); look for the widest empty stretch in one row.",
                            "答案写成 (rank, 时长，以时间槽计)；在同一行里找最宽的一段空白。"),
                        msg("Compare the middle wait of the top row with the drain of the bottom row; to confirm, "
                            "list one rank's idle stretches with diagram.idle_intervals(r) and compare their lengths.",
                            "比较最上面一行中间的等待和最下面一行的排空；要验证，可以用 diagram.idle_intervals(r) "
                            "列出某个 rank 的各段空闲，比一比长短。")),
          compare=lambda answer, expected: _compare_gap(answer, expected))
def _longest_gap() -> Any:
    """GPipe, p = 3, m = 5, F = 1, B = 2: (rank, slots) of the longest single idle stretch."""
    gap = bk.simulate(bk.schedule("gpipe", 3, 5), bk.preset("b=2f")).largest_gaps(1)[0]
    return (gap.rank, gap.duration)


def _compare_gap(answer: Any, expected: Any) -> Graded:
    """01.2's (rank, length): the rank is right or not, never "too high / too low" (with three ranks a
    direction gives it away); the length keeps the policy's direction; the pair swapped is named. The rank may be
    written ``"rank 0"`` (read by ``as_rank``, as 06.2 reads it); an item not read in the asked form (``"6 minutes"``,
    ``"6 apples"``) is said and not counted as a try (kind ``FORMAT``)."""
    if isinstance(answer, (list, tuple)) and len(answer) == 2 and as_rank(answer[0]) is not None:
        answer = (as_rank(answer[0]), answer[1])
    ok, message = compare_values(answer, expected, unit=(None, SLOTS))
    if ok:
        return Graded(True, "", "")
    if compare_values(answer, tuple(reversed(expected)))[0]:
        return Graded(False, shown(swapped_items().message), "")
    form = FORMAT if grade(answer, expected, unit=(None, SLOTS)).form else ""
    if isinstance(answer, (list, tuple)) and len(answer) == 2:
        other = msg("item 1 is not the rank with the longest single idle stretch",
                    "第 1 项不是单段空闲最长的那个 rank")
        item = compare_choice(answer[0], expected[0], range(3), other, rank=True)
        ok, why = item
        if not ok:
            return Graded(False, why if why == shown(other) else tr("checks.wrong_item", i=1, detail=why), item.kind)
    return Graded(False, message, form)


def _idle_money(result: bk.SimResult, measure: str = "bubble_ratio") -> Any:
    return getattr(result, measure) * 8 * 24 * 100


def _gpipe_8_16() -> bk.SimResult:
    return bk.simulate(bk.schedule("gpipe", 8, 16), bk.preset("b=2f"))


@exercise(
    "01.3", unit=YUAN,
    hint=(msg("Idle GPU-hours per day = bubble_ratio x GPUs x 24; then multiply by the price.",
              "每天空闲的 GPU 小时数 = bubble_ratio x GPU 数 x 24；再乘以单价。"),
          msg("Use the simulated run's bubble_ratio (idle over all device-time), not bubble_overhead, and "
              "all 8 GPUs for 24 hours at 100 yuan each.",
              "用模拟结果的 bubble_ratio（空闲时间 / 全部设备时间），不要用 bubble_overhead；8 张 GPU 全算上"
              "，每张 24 小时，每小时 100 元。")),
    rel_tol=1e-6,
    mistakes=(Mistake(lambda _e: _idle_money(_gpipe_8_16(), "bubble_overhead"),
                      msg("that uses Megatron's overhead (idle over busy time); the money idles for the "
                          "fraction of all GPU-hours, bubble_ratio",
                          "这用的是 Megatron 口径的气泡开销（空闲时间 / 忙碌时间）；白花的钱对应的是全部 GPU "
                          "小时中空闲的比例，即 bubble_ratio")),
              Mistake(lambda _e: round(_gpipe_8_16().bubble_ratio, 3) * 8 * 24 * 100,
                      msg("your method is right, but the ratio was rounded (to the printed percentage) before "
                          "multiplying; multiply the unrounded bubble_ratio, and round only the money",
                          "方法是对的，但比例在相乘之前就被舍入了（取了打印出来的百分数）；请用未舍入的 "
                          "bubble_ratio 相乘，只对最后的金额取整"))),
)
def _idle_money_expected() -> Any:
    return _idle_money(_gpipe_8_16())


@exercise("01.4", unit=CARS, hint=(msg("Each station idles (stations - 1) minutes in total; solve (s - 1)/(m + s - 1) <= 0.1 for m.",
                            "每个工位总共空闲 (工位数 - 1) 分钟；解 (s - 1)/(m + s - 1) <= 0.1 求 m。"),
                        msg("The smallest whole number of cars that meets the target: check it and one car fewer "
                            "with factory_line(3, cars).bubble_ratio.",
                            "求达到目标的最少整车数：用 factory_line(3, cars).bubble_ratio 检查它，再检查少一"
                            "辆车的情况。")),
          mistakes=(overhead_min_m(3, 0.1, msg(
              "that is the smallest number of cars for which the idle minutes over the busy minutes (Megatron's "
              "overhead) reach 10 %; the target is idle over all station-minutes, which is smaller for the same "
              "number of cars, so fewer cars are enough",
              "这是让空闲分钟数 / 忙碌分钟数（Megatron 口径的气泡开销）降到 10% 的最少车数；这里的目标是空闲"
              "占全部工位·分钟的比例，同样的车数下它更小，所以需要的车更少")),
                    Mistake(lambda e: e - 1, msg("that many cars miss the target by a hair: round the solution up, "
                                                 "not down",
                                                 "这么多车差一点点达不到目标：解要向上取整，不是向下"))))
def _cars_for_ten_percent() -> Any:
    return bk.min_micro_batch(3, 0.1)


#: Hints of 01.5 for the deadlock it is about (and for anything not recognised).
REPAIR_HINTS = (
    msg("Rank 1 cannot start 1F1 before rank 0 has run 0F1; reorder so no rank waits for something "
        "that comes later on another rank's list.",
        "rank 0 跑完 0F1 之前，rank 1 不能开始 1F1；调整顺序，让没有哪个 rank 去等另一个 rank 列表里排在后面"
        "的动作。"),
    msg("For each action, find the action it waits for on the other rank; an order in which every such "
        "action comes earlier cannot deadlock.",
        "对每个动作，找出它在另一个 rank 上等待的动作；只要每个被等待的动作都排在前面，这个顺序就不会死锁。"),
)


@exercise("01.5", hint=REPAIR_HINTS, compare=compare_schedule, kind_hints={"deadlock": REPAIR_HINTS})
def _repair_deadlock() -> Any:
    costs = bk.preset("b=2f")
    return ScheduleGoal(2, 2, costs, bk.simulate(bk.schedule("gpipe", 2, 2), costs).makespan)
