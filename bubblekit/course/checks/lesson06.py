"""Exercises of lesson 06, *Profiling practice* (``solutions/06_profiling_practice.ipynb``).

The exercises read one small "profiled" step: a 3-rank 1F1B pipeline with 4 microbatches,
unequal stages, per-action jitter, overhead and latency, written as bubblekit's trace CSV
by :func:`write_example_csv`. It is generated deterministically (a fixed seed) from a
simulation; every expected value is computed from it with bubblekit when a learner checks.
"""

from __future__ import annotations

import random
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import bubblekit as bk
from bubblekit.analysis import calibrate, traces
from bubblekit.course.checks._grading import THE_STEP, Graded
from bubblekit.course.checks._mistakes import utilisation
from bubblekit.course.checks._registry import Mistake, exercise
from bubblekit.course.checks._schedules import as_schedule

#: Ranks and microbatches of the example step.
P, M = 3, 4
#: Mean forward time per stage (ms) of the example step; backward is 2.1 x forward.
STAGE_F_MS = (2.0, 2.6, 2.1)
SEED = 6


def _example_timeline() -> bk.Timeline:
    sim = bk.simulate(bk.schedule("1f1b", P, M), bk.Costs(f=list(STAGE_F_MS), b=[2.1 * f for f in STAGE_F_MS], unit="ms"))
    rng = random.Random(SEED)
    starts, ends, labels = [], [], []
    for r in range(P):
        s, e, lb = sim.arrays(r)
        starts.append(s)
        ends.append([a + (b - a) * rng.uniform(0.95, 1.25) for a, b in zip(s, e)])
        labels.append(list(lb))
    noisy = bk.Timeline(starts, ends, labels, unit="ms", may_overlap=True)
    return calibrate.replay(noisy, overhead=0.08, latency=0.35)


def write_example_csv(path: str | Path) -> Path:
    """Write the example profiled step as bubblekit's trace CSV (ms) at ``path``; return the path."""
    return traces.write_csv(_example_timeline(), path)


@lru_cache(maxsize=1)
def example_step() -> traces.MeasuredTimeline:
    """The example step as :func:`bubblekit.analysis.traces.read_csv` returns it (what the learner reads)."""
    with tempfile.TemporaryDirectory() as tmp:
        return traces.read_csv(write_example_csv(Path(tmp) / "example_step.csv"))


@exercise(
    "06.1",
    hint=("Sum every rank's idle time inside the step window, then divide by (ranks x makespan); step.idle gives "
          "the per-rank idle times.",
          "Idle time of a rank = step.makespan - its busy time (step.busy[r]); add them over the ranks and divide "
          "by step.p x step.makespan."),
    rel_tol=1e-6,
    fraction_of=THE_STEP,
    mistakes=(Mistake(lambda _e: sum(example_step().idle) / sum(example_step().busy),
                      "that divides the idle time by the busy time (Megatron's overhead); the article divides by "
                      "all device-time, ranks x makespan"),
              utilisation()),
)
def _bubble() -> float:
    """Measured bubble ratio of the example step."""
    return example_step().bubble_ratio


@exercise(
    "06.2",
    hint=("step.utilization_per_rank lists each rank's busy share: collect the ranks below 0.8 in a set, and take "
          "the index of the largest share.",
          "Answer (set_of_ranks, rank): a set of ints, then one int, the rank with the largest busy share."),
)
def _below_80() -> tuple[set[int], int]:
    """(ranks of the example step busy less than 80% of the step, the busiest rank)."""
    util = example_step().utilization_per_rank
    return ({r for r, u in enumerate(util) if u < 0.8}, max(range(len(util)), key=lambda r: util[r]))


@exercise("06.3", hint=("traces.explain_gaps(step, n=None) lists gaps longest first; find rank 0's first one and read from_rank.",
                        "Rank 0's longest gap ends with a backward: whose gradient does that backward need?"))
def _waits_for() -> int | None:
    """The rank that rank 0 waits for in its longest gap."""
    gap = next(g for g in traces.explain_gaps(example_step(), n=None) if g.rank == 0)
    return gap.from_rank


@exercise(
    "06.4",
    hint=("Calibrate costs from the step (bk.calibrate.calibrate) and simulate 1F1B with them while you double m "
          "from 2; the formula alone ignores what the calibration measured.",
          "costs, report = bk.calibrate.calibrate(step); bk.calibrate.predict(costs, '1f1b', 3, [2, 4, 8, ...]) "
          "tabulates the bubble_ratio per m: take the first m whose bubble_ratio is at most 0.2."),
    mistakes=(Mistake(lambda _e: bk.min_micro_batch(P, 0.2),
                      "that is the formula's m for equal stages; the calibrated simulation needs more"),),
)
def _m_for_20() -> int | None:
    """Smallest m in 2, 4, 8, ..., 256 whose calibrated 1F1B simulation has bubble_ratio <= 20%."""
    costs, _ = calibrate.calibrate(example_step())
    sweep = calibrate.predict(costs, "1f1b", P, [2**k for k in range(1, 9)])
    return next((row["m"] for row in sweep if row["bubble_ratio"] <= 0.2), None)


def _compare_orders(answer: Any, expected: Any) -> Graded:
    """The learner's text must be a legal schedule with exactly the executed per-rank orders.

    Returns ``Graded(ok, message, kind)`` (unpacks as ``(ok, message)``) (kinds as in :data:`bubblekit.course.checks._registry.KIND_HINTS`).
    """
    sched, why = as_schedule(answer)
    if sched is None:
        return Graded(False, why, "unreadable")
    try:
        bk.simulate(sched, bk.Costs(f=1, b=2))
    except bk.DeadlockError as err:
        return Graded(False, f"these orders deadlock, so they cannot be what ran: {err}", "deadlock")
    except bk.ScheduleError as err:
        return Graded(False, f"these orders are not a complete schedule: {err}", "incomplete")
    if sched.p != len(expected):
        return Graded(False, f"the profile has {len(expected)} ranks, your text has {sched.p}", "shape")
    for r, (got, want) in enumerate(zip(sched.orders, expected)):
        if tuple(got) != tuple(want):
            k = next((k for k, (x, y) in enumerate(zip(got, want)) if x != y), min(len(got), len(want)))
            return Graded(False, f"rank {r} differs from the profile at position {k} (counting from 0): sort its spans by start time", "")
    return Graded(True, "", "")


@exercise(
    "06.5",
    hint=("Read each rank's spans in order of their start time (sorted(step.spans(r), key=...)) and write "
          "'rank r: ...' lines.",
          "sorted(step.spans(r), key=lambda sp: sp.start) gives rank r's spans in time order; join their .label "
          "with spaces after 'rank r: '."),
    compare=_compare_orders,
    kind_hints={"deadlock": ("What ran cannot have deadlocked: compare your order with the picture, span by span.",)},
)
def _executed_orders() -> tuple[tuple[bk.Action, ...], ...]:
    """The per-rank orders the example step executed."""
    return example_step().orders


@exercise("06.6", hint=("bk.min_micro_batch(p, target) with target 0.2; check it with (p-1)/(m+p-1).",
                        "The smallest whole m with (p - 1)/(m + p - 1) <= 0.2 for p = 12: check m and m - 1."),
          mistakes=(Mistake(lambda e: e - 1, "that m misses the target by a hair: round the solution up, not down"),))
def _min_m_p12() -> int | None:
    """Smallest m for a 20% bubble ratio with p = 12 (plain 1F1B)."""
    return bk.min_micro_batch(12, 0.2)


#: The effects of :func:`bubblekit.analysis.calibrate.compare_measured`'s ladder, by the names the exercise
#: accepts (the pickup row is the calibrated simulation).
EFFECTS = {"durations": "durations", "duration": "durations", "overhead": "overhead", "latency": "latency",
           "pickup": "calibrated", "calibrated": "calibrated"}


@lru_cache(maxsize=1)
def _ladder() -> dict[str, Any]:
    """The example step's comparison, ``{row key: bubble_ratio}``."""
    return calibrate.compare_measured(example_step(), "1f1b", draws=1).as_dict()


def _ladder_steps() -> dict[str, float]:
    """How much each effect adds to the bubble_ratio of the row above it (durations: over the textbook row)."""
    d = _ladder()
    keys = ("textbook", *calibrate.LADDER)
    return {k: d[k] - d[prev] for prev, k in zip(keys, keys[1:])}


def _compare_effect(answer: Any, expected: Any) -> Graded:
    """The learner names one effect of the ladder (case, spaces, ``+`` and ``_`` ignored; ``pickup`` or
    ``calibrated`` for the last row). Returns ``Graded(ok, message, kind)``."""
    if not isinstance(answer, str):
        return Graded(False, "answer with the name of one row: durations, overhead, latency or pickup", "unreadable")
    key = EFFECTS.get(answer.strip().lstrip("+").strip().lower().replace("_", " ").split(" ")[0])
    if key is None:
        return Graded(False, f"{answer!r} is not a row of the ladder: durations, overhead, latency or pickup",
                      "unreadable")
    if key == expected:
        return Graded(True, "", "")
    if _ladder()[key] == max(_ladder()[k] for k in calibrate.LADDER):
        return Graded(False, "that row has the highest bubble_ratio, but it stands on all the rows above it: "
                             "compare each row with the one just above it", "")
    return Graded(False, "another row adds more to the one above it", "")


@exercise(
    "06.7",
    hint=("compare_measured(step, '1f1b') adds one measured effect per row; for each row, subtract the "
          "bubble_ratio of the row above it.",
          "d = cmp.as_dict(): the first effect's step is measured from d['textbook'], each later one from the "
          "row before it in bk.calibrate.LADDER; the answer is the effect with the largest difference."),
    compare=_compare_effect,
)
def _biggest_effect() -> str:
    """The effect of the ladder that adds the most bubble_ratio to the row above it, on the example step."""
    steps = _ladder_steps()
    return max(steps, key=lambda k: steps[k])
