"""Exercises of lesson 00 (Start here): one warm-up to try the check mechanism."""

from __future__ import annotations

import bubblekit as bk
from bubblekit.course.checks._mistakes import megatron_overhead, swapped_pm, utilisation
from bubblekit.course.checks._registry import exercise


@exercise(
    "00.1",
    hint=(
        "Simulate bk.schedule('1f1b', p=4, m=8) with bk.simulate and read .bubble_ratio "
        "(a fraction of device-time between 0 and 1).",
        "The run is r = bk.simulate(bk.schedule('1f1b', p=4, m=8)); pass r.bubble_ratio itself (a fraction, "
        "not Megatron's bubble_overhead) to check.",
    ),
    fraction_of="the step",
    mistakes=(megatron_overhead(4, 8), swapped_pm(bk.bubble_ratio, 4, 8), utilisation()),
)
def _() -> float:
    """Bubble ratio (idle / (p x makespan)) of 1F1B, p=4 ranks, m=8 microbatches, default costs."""
    return bk.simulate(bk.schedule("1f1b", p=4, m=8)).bubble_ratio
