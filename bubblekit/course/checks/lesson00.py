"""Exercises of lesson 00 (Start here): one warm-up to try the check mechanism."""

from __future__ import annotations

import bubblekit as bk
from bubblekit.course.checks._grading import THE_STEP
from bubblekit.course.checks._mistakes import megatron_overhead, swapped_pm, utilisation
from bubblekit.course.checks._registry import exercise
from bubblekit.course.checks._text import msg


@exercise(
    "00.1",
    hint=(
        msg("Simulate bk.schedule('1f1b', p=4, m=8) with bk.simulate and read .bubble_ratio "
            "(a fraction of device-time between 0 and 1).",
            "用 bk.simulate 模拟 bk.schedule('1f1b', p=4, m=8)，读出 .bubble_ratio（设备时间中空闲的比例，介"
            "于 0 和 1 之间）。"),
        msg("The run is r = bk.simulate(bk.schedule('1f1b', p=4, m=8)); pass r.bubble_ratio itself (a fraction, "
            "not Megatron's bubble_overhead) to check.",
            "先运行 r = bk.simulate(bk.schedule('1f1b', p=4, m=8))；把 r.bubble_ratio 本身（一个比例，不是 Me"
            "gatron 口径的 bubble_overhead）传给 check。"),
    ),
    fraction_of=THE_STEP,
    mistakes=(megatron_overhead(4, 8), swapped_pm(bk.bubble_ratio, 4, 8), utilisation()),
)
def _() -> float:
    """Bubble ratio (idle / (p x makespan)) of 1F1B, p=4 ranks, m=8 microbatches, default costs."""
    return bk.simulate(bk.schedule("1f1b", p=4, m=8)).bubble_ratio
