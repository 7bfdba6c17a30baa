"""Exercises of lesson 03, "The bubble formula" (``solutions/03_the_bubble_formula.ipynb``).

Expected values are computed by bubblekit (formulas, the simulator, or :mod:`bubblekit.symbolic`)
when a learner checks; nothing here is typed. Times in abstract slots.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import bubblekit as bk
from bubblekit.course.checks._grading import THE_STEP
from bubblekit.course.checks._mistakes import megatron_overhead, swapped_items, swapped_pm, utilisation
from bubblekit.course.checks._registry import Mistake, exercise
from bubblekit.course.checks._schedules import ScheduleGoal, compare_schedule

#: Values tried when two expressions do not simplify to the same one (floor or ceiling terms):
#: every whole p, m, v in these ranges and each listed time and target.
_GRID = {"p": range(1, 9), "m": range(1, 17), "v": (1, 2, 3), "t_f": (1, 3), "t_b": (2, 1),
         "c": (Fraction(1, 2), 3), "b^*": (Fraction(3, 10), Fraction(2, 7))}


def _symbols() -> dict[str, Any]:
    from bubblekit import symbolic as sb

    return {s.name: s for s in (sb.p, sb.m, sb.v, sb.t_f, sb.t_b, sb.comm, sb.target)}


def _read_expression(answer: Any) -> tuple[Any, str]:
    """The answer as a sympy expression in bubblekit.symbolic's symbols, or (None, why not)."""
    import sympy as sp

    if isinstance(answer, bool) or answer is None:
        return None, f"could not read your answer as a sympy expression (got {type(answer).__name__})"
    try:
        expr = sp.nsimplify(sp.sympify(answer), rational=True)
    except (sp.SympifyError, TypeError, ValueError):
        return None, f"could not read your answer as a sympy expression (got {type(answer).__name__})"
    table = _symbols()
    unknown = sorted(s.name for s in expr.free_symbols if s.name not in table)
    if unknown:
        names = "p, m, v, t_f, t_b, c (the latency) and b_star"
        return None, f"unknown symbol(s) {unknown}: use the symbols of bubblekit.symbolic ({names})"
    return expr.subs({s: table[s.name] for s in expr.free_symbols}), ""


def _same(a: Any, b: Any) -> bool:
    """True when ``a`` and ``b`` simplify to the same expression or agree on the whole grid."""
    import sympy as sp

    try:
        if sp.simplify(a - b) == 0:
            return True
    except (TypeError, ValueError):  # pragma: no cover - sympy failing on odd input
        return False
    table = _symbols()
    used = sorted({s.name for s in (a - b).free_symbols})
    ranges = [_GRID[name] for name in used]
    for values in itertools.product(*ranges):
        subs = {table[name]: sp.Rational(val) for name, val in zip(used, values)}
        try:
            x, y = a.subs(subs), b.subs(subs)
        except (TypeError, ValueError, ZeroDivisionError):
            return False
        if not (x.is_finite and y.is_finite) or (x != y and sp.simplify(x - y) != 0):
            return False
    return True


def expression_compare(*mistakes: tuple[Callable[[], Any], str]) -> Callable[[Any, Any], tuple[bool, str]]:
    """A ``compare`` for answers that are sympy expressions, with recognised mistakes.

    Symbols are matched by *name* (``p``, ``m``, ``v``, ``t_f``, ``t_b``, ``c``, ``b^*``), so
    ``sp.symbols("p m")`` works as well as ``bubblekit.symbolic``'s. Two expressions are equal
    when ``sympy.simplify`` says so or, failing that, when they agree on a grid of whole
    ``p, m, v`` and a few times (forms with ``floor`` and ``ceiling`` that sympy cannot
    simplify). ``mistakes`` are ``(expression builder, message)`` pairs: an answer equal to a
    mistaken expression gets its message. No message contains the expected expression.
    """
    def compare(answer: Any, expected: Any) -> tuple[bool, str]:
        expr, why = _read_expression(answer)
        if expr is None:
            return False, why
        if _same(expr, expected):
            return True, ""
        for build, message in mistakes:
            if _same(expr, build()):
                return False, message
        missing = sorted(s.name for s in expected.free_symbols if s not in expr.free_symbols)
        if missing:
            return False, f"not equal to the expected expression; it does not use {missing}"
        return False, "not equal to the expected expression (evaluate it for a case you can count and compare)"

    return compare


def compare_expression(answer: Any, expected: Any) -> tuple[bool, str]:
    """Compare a sympy expression by symbol names (see :func:`expression_compare`), no known mistakes."""
    return expression_compare()(answer, expected)


@exercise("03.0", hint=("Give the bubble ratio of lesson 03 for these p and m as an exact fractions.Fraction "
                        "(not a float).",
                        "Count one rank's idle slots per direction and all of its slots per direction "
                        "(lesson 03, step 2), then divide them as a Fraction."),
          exact=True,
          fraction_of=THE_STEP,
          mistakes=(megatron_overhead(4, 12), swapped_pm(bk.bubble_ratio_exact, 4, 12), utilisation()))
def _check_yourself() -> Any:
    return bk.bubble_ratio_exact(4, 12)


@exercise("03.1", hint=("Count the hatched grey (idle) boxes of each rank in the picture, in slots, and add "
                        "up the ranks.",
                        "Every rank idles the same time, before, between or after its work: count one rank's "
                        "idle slots in the forward wave and in the backward wave, then take all the ranks."),
          mistakes=(Mistake(lambda _e: _gpipe_3_5().idle[0], "that is one rank's idle time; add it up over all the ranks"),))
def _count_idle() -> Any:
    return _gpipe_3_5().total_idle


def _gpipe_3_5() -> bk.SimResult:
    return bk.simulate(bk.schedule("gpipe", 3, 5), bk.preset("b=2f"))


def _sb() -> Any:
    from bubblekit import symbolic as sb

    return sb


@exercise("03.2", hint=("Start from the interleaved makespan (exercise 03.10) and one rank's busy time: the "
                        "utilisation is the busy share of the step.",
                        "sb.bubble_fraction(makespan, sb.busy_per_rank()) gives the idle share; the busy share "
                        "is what is left. sb.evaluate(expr, p=4, m=8, v=2) checks one case against the simulator."),
          compare=expression_compare(
              (lambda: _sb().INTERLEAVED_RATIO, "that is the idle share (the bubble); the utilisation is the busy share"),
              (lambda: _sb().UTILIZATION, "that is the utilisation without chunks: v must appear"),
          ))
def _interleaved_utilization() -> Any:
    sb = _sb()
    return _factor(1 - sb.bubble_fraction(sb.makespan_interleaved(), sb.busy_per_rank()))


def _factor(expr: Any) -> Any:
    """``sympy.factor`` (sympy is imported when an exercise is checked, not when the module loads)."""
    import sympy as sp

    return sp.factor(expr)


@exercise("03.3", hint=("Solve b(m) <= target for m (lesson 03, step 4), then round up; the article's loop "
                        "stops at 128.",
                        "sb.solve_min_m() gives the root as an expression: substitute p = 16 and a 5 % target "
                        "(.subs({sb.p: 16, sb.b_star: sp.Rational(1, 20)})), then round it up."),
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


@exercise("03.6", hint=("Answer (m, b): first the smallest whole m whose Megatron overhead is at most 25 %, "
                        "then that configuration's bubble as a fraction of the step.",
                        "bk.bubble_overhead(8, m) for a few m finds the first number; for the second, both "
                        "measures divide the same idle time: the step is the busy time plus that idle time."),
          fraction_of=THE_STEP,
          mistakes=(Mistake(lambda _e: _megatron_quarter()[:2],
                            "the second number is Megatron's overhead again; convert it to the fraction of the step"),
                    swapped_items()))
def _megatron_quarter_expected() -> Any:
    m, _, b = _megatron_quarter()
    return (m, b)


# ----------------------------------------------------------------------------- the derivation, step by step
# The lesson's own cells (03.7 - 03.11): the learner writes each step as a sympy expression in the
# symbols of bubblekit.symbolic; the expected one is built from the named pieces of the diagram.


@exercise("03.7", hint=("Follow the last microbatch: when does it leave rank 0, and how many forwards does it "
                        "still need on the other ranks? The backward wave mirrors the forward wave.",
                        "Count slots in the p = 4, m = 4 picture: the forward wave lasts a number of forward "
                        "slots that grows by one per extra microbatch and by one per extra rank. Write that "
                        "count with p and m, times t_f, then add the backward wave's count times t_b."),
          compare=expression_compare(
              (lambda: _sb().busy_per_rank(), "that is one rank's busy time: the step also lasts while the last "
                                              "microbatch crosses the other ranks"),
              (lambda: _sb().wave(_sb().t_f), "that is only the forward wave: the backward wave follows it"),
              (lambda: _sb().makespan_gpipe() + _sb().t_f + _sb().t_b,
               "one slot too many per wave: between p ranks a microbatch crosses one link fewer than there are ranks"),
          ))
def _makespan() -> Any:
    sb = _sb()
    return sb.wave(sb.t_f) + sb.wave(sb.t_b)


@exercise("03.8", hint=("b is idle device-time over total device-time: each of the p ranks idles for the part of "
                        "the makespan in which it is not working.",
                        "With your makespan T and busy = m*(t_f + t_b): total device-time is p*T, idle "
                        "device-time p*(T - busy); divide them and let sp.simplify cancel what cancels."),
          compare=expression_compare(
              (lambda: _sb().MEGATRON_OVERHEAD, "that is Megatron's overhead (idle over busy time); b divides the "
                                                "idle time by the whole step, p x makespan"),
              (lambda: _sb().UTILIZATION, "that is the busy share (the utilisation); b is the idle share"),
              (lambda: _sb().idle_per_rank(_sb().makespan_gpipe()),
               "that is one rank's idle time; divide it by the step to get a fraction"),
          ))
def _ratio() -> Any:
    sb = _sb()
    return sb.bubble_fraction(sb.makespan_gpipe(), sb.busy_per_rank())


@exercise("03.9", hint=("Set b(m) equal to b_star and solve for m: multiply both sides by the denominator and "
                        "collect the terms in m (or let sp.solve(sp.Eq(my_b, b_star), m) do it).",
                        "b falls as m grows, so the root is the boundary. Test your expression at p = 8, "
                        "b_star = 1/5: the first whole m at or above it must give a simulated bubble of at "
                        "most 20 %, and the m just below it more."),
          compare=expression_compare(
              (lambda: _ceiling(_sb().solve_min_m()), "that is the smallest whole m (rounded up); give the root "
                                                      "itself, the m at which b equals b_star"),
              (lambda: _sb().solve_min_m() + _sb().p - 1, "that root counts the p - 1 crossing slots too: it solves "
                                                          "for m + p - 1, not for m"),
              (lambda: 1 / _sb().solve_min_m(), "that is upside down: which of the two goes on top?"),
          ))
def _min_m_root() -> Any:
    sb = _sb()
    return sb.solve_min_m(sb.bubble_fraction(sb.makespan_gpipe(), sb.busy_per_rank()), sb.b_star)


def _ceiling(expr: Any) -> Any:
    import sympy as sp

    return sp.ceiling(expr)


@exercise("03.10", hint=("A rank still runs its whole share for every microbatch; what changes is the length "
                         "of one step of the crossing: how long does one chunk action take?",
                         "Start from one rank's work (step 1); the crossing still passes the other p - 1 ranks, "
                         "but each of its steps is now one chunk action, forward and backward."),
          compare=expression_compare(
              (lambda: _sb().makespan_gpipe(), "that is the makespan without chunks: with v chunks per rank the "
                                               "crossing goes in chunk-sized steps"),
              (lambda: _sb().makespan_gpipe() / _sb().v, "each rank still does all of its share's work for every "
                                                         "microbatch: only the crossing shrinks with v"),
          ))
def _makespan_interleaved() -> Any:
    sb = _sb()
    return sb.busy_per_rank() + sb.crossing(sb.chunk(sb.t_f)) + sb.crossing(sb.chunk(sb.t_b))


@exercise("03.11", hint=("The compute does not change; add c once per hop on the critical path. Count the round "
                         "trips first: each turn moves the path at most p microbatches on.",
                         "Between two consecutive actions on the critical path there is either a hop or a step on "
                         "the same rank, and there are two such steps per round trip, less one. Count the links "
                         "between the path's actions and subtract those steps (sp.ceiling is available)."),
          compare=expression_compare(
              (lambda: _sb().makespan_gpipe(comm=_sb().c), "that is GPipe's latency term: 1F1B's critical path "
                                                            "zig-zags and crosses more links"),
              (lambda: _sb().makespan_gpipe(), "that has no latency: add c for each hop on the critical path"),
          ))
def _makespan_1f1b_latency() -> Any:
    sb = _sb()
    return sb.makespan_gpipe() + sb.hops_1f1b() * sb.c
