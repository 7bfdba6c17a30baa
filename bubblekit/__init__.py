"""bubblekit: schedules, an exact event simulator, formulas and pictures for pipeline bubbles.

The core (this namespace) imports no matplotlib, widgets or torch::

    import bubblekit as bk
    s = bk.schedule("1f1b", p=4, m=8)
    r = bk.simulate(s, bk.Costs(f=1, b=2))
    r.makespan, r.bubble_ratio, r.bubble_overhead, r.peak_activations

Pictures live in :mod:`bubblekit.plotting`, explorers in :mod:`bubblekit.explorers`,
trace reading in :mod:`bubblekit.traces`, real runs in :mod:`bubblekit.lab`.
"""

from __future__ import annotations

from .actions import KINDS, Action, parse_action
from .costs import PRESETS, Costs, h200_costs, preset
from .formulas import (
    bubble_overhead,
    bubble_ratio,
    bubble_ratio_exact,
    min_micro_batch,
    overhead_from_ratio,
    ratio_from_overhead,
    utilization,
)
from .schedules import REGISTRY, Schedule, ScheduleError, ScheduleSpec, names, register, schedule
from .simulator import DeadlockError, SimResult, simulate
from .timeline import Gap, Span, Timeline

__version__ = "0.1.0"

__all__ = [
    "Action", "KINDS", "parse_action",
    "Costs", "PRESETS", "preset", "h200_costs",
    "bubble_ratio", "bubble_ratio_exact", "utilization", "bubble_overhead", "min_micro_batch",
    "overhead_from_ratio", "ratio_from_overhead",
    "Schedule", "ScheduleError", "ScheduleSpec", "schedule", "names", "register", "REGISTRY",
    "simulate", "SimResult", "DeadlockError",
    "Timeline", "Span", "Gap",
    "__version__",
]
