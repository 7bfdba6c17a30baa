"""Common mistakes, recognised the same way in every lesson (grading policy, "Hints").

Each factory returns a :class:`~bubblekit.course.checks._registry.Mistake`: a function that
computes, with bubblekit, the answer the mistake produces, and a sentence naming the
mistake. No message contains the expected value (or the mistaken one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import bubblekit as bk
from bubblekit.course.checks._registry import Mistake
from bubblekit.course.checks._text import msg

__all__ = [
    "megatron_overhead",
    "fraction_of_step",
    "utilisation",
    "swapped_pm",
    "swapped_items",
    "upside_down",
    "hop_off",
    "overhead_min_m",
]


def megatron_overhead(p: int, m: int, v: int = 1) -> Mistake:
    """Megatron's overhead (p-1)/(m v) given where the fraction of the step is asked."""
    return Mistake(
        lambda _e: bk.bubble_overhead(p, m, v),
        msg("that is Megatron's overhead (bubble time over busy time); this asks for the bubble as a "
            "fraction of the whole step (idle device-time over p x makespan)",
            "这是 Megatron 口径的气泡开销（气泡时间 / 忙碌时间）；这里问的是气泡比例，"
            "即气泡占整步的比例（空闲的设备时间 / (p x 单步耗时)）"),
    )


def overhead_min_m(p: int, target: float, message: str | None = None) -> Mistake:
    """The smallest m with Megatron's overhead (p - 1)/m <= ``target``, given where the fraction of the step is asked.

    The classic mistake of picking m from (p - 1)/m (01.4, 03.3, 10.20): for the same m the
    fraction of the step (p - 1)/(m + p - 1) is smaller, so fewer microbatches are enough.
    """
    def value(_e: Any) -> int:
        m = 1
        while bk.bubble_overhead(p, m) > target:
            m += 1
        return m

    return Mistake(value, message or msg(
        "that is the smallest m for which Megatron's overhead (bubble time over busy time) meets the target; "
        "the target here is the bubble as a fraction of the whole step, which is smaller for the same m, "
        "so fewer microbatches are enough",
        "这是让 Megatron 口径的气泡开销（气泡时间 / 忙碌时间）达标的最小 m；这里的目标是气泡比例"
        "（占整步的比例），同样的 m 下它更小，所以需要的微批更少"))


def fraction_of_step(p: int, m: int, v: int = 1) -> Mistake:
    """The fraction of the step given where Megatron's overhead is asked."""
    return Mistake(
        lambda _e: bk.bubble_ratio(p, m, v),
        msg("that is the bubble as a fraction of the whole step; Megatron's overhead divides the same "
            "bubble time by the busy (ideal) time instead",
            "这是气泡比例（占整步的比例）；Megatron 口径的气泡开销是用同样的气泡时间"
            "除以忙碌（理想）时间"),
    )


def utilisation() -> Mistake:
    """1 - the answer: the busy share given for the idle share."""
    return Mistake(lambda e: 1 - e, msg("that is the busy share (the utilisation); the question asks for the idle share",
                                        "这是忙碌的占比（利用率）；题目问的是空闲的占比"))


def swapped_pm(fn: Callable[[int, int], Any], p: int, m: int) -> Mistake:
    """``fn(m, p)`` given for ``fn(p, m)``: ranks and microbatches swapped."""
    return Mistake(
        lambda _e: fn(m, p),
        msg("that is what you get with p and m swapped: p counts the pipeline stages (ranks), m the microbatches",
            "这是把 p 和 m 弄反得到的结果：p 是流水级（rank）数，m 是微批数"),
    )


def swapped_items() -> Mistake:
    """The right pair in the wrong order."""
    return Mistake(lambda e: tuple(reversed(tuple(e))),
                   msg("the right numbers, in the wrong order: check the order the exercise asks for",
                       "数字都对，顺序错了：按题目要求的顺序给出"))


def upside_down() -> Mistake:
    """1 / the answer: a ratio taken the wrong way round."""
    return Mistake(lambda e: 1 / e, msg("that ratio is upside down: which of the two goes on top?",
                                        "这个比值颠倒了：两者中哪个该做分子？"))


def hop_off(fn: Callable[[int], Any], p: int) -> tuple[Mistake, Mistake]:
    """``fn(p + 1)`` and ``fn(p - 1)``: counting p links (or p - 2) where there are p - 1."""
    return (
        Mistake(lambda _e: fn(p + 1), msg("one hop too many: between p ranks there are p - 1 links, one fewer than ranks",
                                          "多算了一跳：p 个 rank 之间有 p - 1 条链路，比 rank 数少一")),
        Mistake(lambda _e: fn(p - 1), msg("one hop too few: between p ranks there are p - 1 links; count both ends",
                                          "少算了一跳：p 个 rank 之间有 p - 1 条链路；两端都要算上")),
    )
