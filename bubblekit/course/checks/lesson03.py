"""Exercises of lesson 03, "The bubble formula" (``solutions/03_the_bubble_formula.ipynb``).

Expected values are computed by bubblekit (formulas, the simulator, or :mod:`bubblekit.symbolic`)
when a learner checks; nothing here is typed. Times in abstract slots.
"""

from __future__ import annotations

from typing import Any

import bubblekit as bk
from bubblekit.course.checks._mistakes import megatron_overhead, swapped_items, swapped_pm, utilisation
from bubblekit.course.checks._registry import Mistake, exercise
from bubblekit.course.checks._schedules import ScheduleGoal, compare_schedule


def compare_expression(answer: Any, expected: Any) -> tuple[bool, str]:
    """Compare a sympy expression by symbol *names* (``p``, ``m``, ``v``...), whatever their assumptions.

    A learner who writes ``sp.symbols("p m v")`` gets symbols without the assumptions of
    :mod:`bubblekit.symbolic`; they are renamed to those before ``simplify(answer - expected)``.
    """
    import sympy as sp

    from bubblekit import symbolic as sb

    try:
        expr = sp.sympify(answer)
    except (sp.SympifyError, TypeError):
        return False, f"could not read your answer as a sympy expression (got {type(answer).__name__})"
    table = {s.name: s for s in (sb.p, sb.m, sb.v, sb.t_f, sb.t_b, sb.comm, sb.target)}
    unknown = sorted(s.name for s in expr.free_symbols if s.name not in table)
    if unknown:
        return False, f"unknown symbol(s) {unknown}: use p, m and v"
    missing = sorted(s.name for s in expected.free_symbols - {table[s.name] for s in expr.free_symbols})
    expr = expr.subs({s: table[s.name] for s in expr.free_symbols})
    if sp.simplify(expr - expected) == 0:
        return True, ""
    if missing:
        return False, f"not equal to the expected expression; it does not use {missing}"
    return False, "not equal to the expected expression (try a few numbers against the simulator)"


@exercise("03.0", hint=("Use the formula with exact fractions: fractions.Fraction(p - 1, m + p - 1).",
                        "b counts the idle share of the whole step: p - 1 idle slots per direction against "
                        "m + p - 1 slots in all. Give it as a Fraction, not a float."),
          exact=True,
          fraction_of="the step",
          mistakes=(megatron_overhead(4, 12), swapped_pm(bk.bubble_ratio_exact, 4, 12), utilisation()))
def _check_yourself() -> Any:
    return bk.bubble_ratio_exact(4, 12)


@exercise("03.1", hint=("Every rank idles the same time: (p - 1) slots of forward plus (p - 1) slots of "
                        "backward; add over the ranks.",
                        "One rank idles (p - 1)(t_f + t_b); the question asks for the total over all p ranks."),
          mistakes=(Mistake(lambda _e: _gpipe_3_5().idle[0], "that is one rank's idle time; add it up over all the ranks"),))
def _count_idle() -> Any:
    return _gpipe_3_5().total_idle


def _gpipe_3_5() -> bk.SimResult:
    return bk.simulate(bk.schedule("gpipe", 3, 5), bk.preset("b=2f"))


@exercise("03.2", hint=("U = 1 - b with the interleaved b; build it from sb.p, sb.m, sb.v.",
                        "Start from sb.bubble_fraction(sb.makespan_interleaved(), sb.busy_per_rank()) and "
                        "subtract it from 1; sb.evaluate(expr, p=4, m=8, v=2) checks one case."),
          compare=compare_expression)
def _interleaved_utilization() -> Any:
    from bubblekit import symbolic as sb

    return 1 - sb.INTERLEAVED_RATIO


@exercise("03.3", hint=("Solve (p-1)/(m+p-1) <= target for m, then round up; the article's loop stops at 128.",
                        "m >= (p - 1)(1 - target)/target: evaluate it for p = 16 and a 5 % target, then take "
                        "the next whole number (sb.min_micro_batch(16, 0.05) does it exactly)."),
          mistakes=(Mistake(lambda e: e - 1, "that m misses the target by a hair: round the solution up, not down"),))
def _min_m_five_percent() -> Any:
    return bk.min_micro_batch(16, 0.05)


@exercise("03.4", hint=('Answer {"gpipe": makespan, "1f1b": makespan} in slots; 1F1B crosses more hops than '
                        "GPipe when there is latency.",
                        "Simulate both with bk.Costs(f=1, b=2, comm=Fraction(1, 2)) and compare with "
                        "sb.makespan_gpipe(comm=sb.comm) and sb.makespan_1f1b()."))
def _comm_makespans() -> Any:
    costs = bk.Costs(f=1, b=2, comm=0.5)
    return {name: bk.simulate(bk.schedule(name, 6, 12), costs).makespan for name in ("gpipe", "1f1b")}


@exercise(
    "03.5",
    hint=("Warm up rank r with (p - r) forwards, then alternate one backward and one forward, then drain "
          "the backwards.",
          "The last rank runs each backward right after its forward; each earlier rank starts one more "
          "forward before its first backward."),
    compare=compare_schedule,
)
def _write_1f1b() -> Any:
    costs = bk.preset("b=2f")
    best = bk.simulate(bk.schedule("gpipe", 3, 6), costs).makespan
    return ScheduleGoal(3, 6, costs, best, max_peak=3)


def _megatron_quarter(p: int = 8, overhead: float = 0.25) -> tuple[int, float, float]:
    """(smallest m with Megatron's overhead <= ``overhead``, its overhead, its fraction of the step)."""
    m = next(m for m in range(1, 10_000) if bk.bubble_overhead(p, m) <= overhead)
    return m, bk.bubble_overhead(p, m), bk.ratio_from_overhead(bk.bubble_overhead(p, m))


@exercise("03.6", hint=("Answer (m, b): Megatron's overhead is (p - 1)/m; a fraction of the step is "
                        "overhead / (1 + overhead).",
                        "First the smallest whole m with (p - 1)/m <= 0.25 for p = 8; then b = (p - 1)/(m + p - 1) "
                        "at that m."),
          fraction_of="the step",
          mistakes=(Mistake(lambda _e: _megatron_quarter()[:2],
                            "the second number is Megatron's overhead again; convert it to the fraction of the step"),
                    swapped_items()))
def _megatron_quarter_expected() -> Any:
    m, _, b = _megatron_quarter()
    return (m, b)
