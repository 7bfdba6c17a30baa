"""The bubble formulas in sympy: symbols and building blocks for deriving them in front of the learner.

Lesson 03 derives ``b = (p-1)/(m+p-1)`` step by step from a *counted* makespan instead of
quoting it. This module gives the pieces; the notebook does the algebra in its own cells
and checks every result against :func:`bubblekit.simulate`.

Symbols (all positive; ``p``, ``m``, ``v`` integers):

* ``p`` pipeline stages (ranks), ``m`` microbatches per step, ``v`` chunks per rank;
* ``t_f``, ``t_b``: forward and full-backward time of **one rank's share** of the model for one
  microbatch (any time unit: abstract slots or ms);
* ``comm`` (printed ``c``): latency of one hop between neighbouring ranks, same unit;
* ``target`` (printed ``b^*``): the largest bubble fraction we accept.

Conventions (the course's, stated in lesson 00 and the README): ``b`` is the *fraction of total device-time* that is idle,
idle / (p x makespan), the source article's ``b``; Megatron-LM's ``(p-1)/m`` is bubble time over
*ideal* time, ``b / (1 - b)`` (:data:`MEGATRON_OVERHEAD`).

This is the only bubblekit module that imports sympy.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any

import sympy as sp

from bubblekit._validate import check_int

__all__ = [
    "p", "m", "v", "t_f", "t_b", "comm", "target",
    "makespan_gpipe", "makespan_1f1b", "makespan_interleaved", "busy_per_rank",
    "bubble_fraction", "overhead_of",
    "BUBBLE_RATIO", "UTILIZATION", "INTERLEAVED_RATIO", "MEGATRON_OVERHEAD",
    "solve_min_m", "min_micro_batch", "evaluate",
]

#: Pipeline stages (ranks), a positive integer.
p = sp.Symbol("p", positive=True, integer=True)
#: Microbatches per training step, a positive integer.
m = sp.Symbol("m", positive=True, integer=True)
#: Chunks (virtual stages) per rank, a positive integer.
v = sp.Symbol("v", positive=True, integer=True)
#: Forward time of one rank's share of the model for one microbatch (slots or ms).
t_f = sp.Symbol("t_f", positive=True)
#: Full-backward time of one rank's share for one microbatch (slots or ms).
t_b = sp.Symbol("t_b", positive=True)
#: Latency of one hop between neighbouring ranks (same unit as ``t_f``); prints as ``c``.
comm = sp.Symbol("c", nonnegative=True)
#: The largest acceptable bubble fraction, strictly between 0 and 1; prints as ``b^*``.
target = sp.Symbol("b^*", positive=True)


def makespan_gpipe(
    p: Any = p, m: Any = m, t_f: Any = t_f, t_b: Any = t_b, comm: Any = 0
) -> sp.Expr:
    """Makespan of all-forward-all-backward (GPipe) with equal stages, counted from the diagram.

    The forward wave needs ``m + p - 1`` forward slots: ``p - 1`` to fill the pipeline, then
    one per microbatch. The backward wave mirrors it. Each of the ``p - 1`` hops is crossed
    once on the way down and once on the way up by the critical path, adding ``2 (p - 1) c``::

        T = (m + p - 1)(t_f + t_b) + 2 (p - 1) c

    Exact for :func:`bubblekit.simulate` with ``Costs(f=t_f, b=t_b, comm=c)``. With ``comm = 0``
    it is also 1F1B's makespan.

    Used in lesson 03.
    """
    return (m + p - 1) * (t_f + t_b) + 2 * (p - 1) * comm


def makespan_1f1b(
    p: Any = p, m: Any = m, t_f: Any = t_f, t_b: Any = t_b, comm: Any = comm
) -> sp.Expr:
    """Makespan of 1F1B with equal stages and a per-hop latency ``c`` (bubblekit's latency model).

    Without latency it equals GPipe's. With latency, 1F1B's steady state alternates F and B,
    so the critical path zig-zags between neighbouring ranks and crosses extra hops: counting
    the hops on :attr:`SimResult.critical_path` gives ``2 (p - 1) + 2 floor((m - 1)(p - 1) / p)``::

        T = (m + p - 1)(t_f + t_b) + 2 (p - 1) c + 2 floor((m - 1)(p - 1) / p) c

    Latency model: a hop delays the receiver by ``c`` but does not occupy either rank
    (asynchronous send). Verified against :func:`bubblekit.simulate` in lesson 03.

    Used in lesson 03.
    """
    extra = 2 * sp.floor((m - 1) * (p - 1) / p) * comm
    return (m + p - 1) * (t_f + t_b) + 2 * (p - 1) * comm + extra


def makespan_interleaved(p: Any = p, m: Any = m, v: Any = v, t_f: Any = t_f, t_b: Any = t_b) -> sp.Expr:
    """Makespan of interleaved 1F1B with ``v`` chunks per rank, no latency, ``m >= p``.

    A chunk action costs ``t / v`` (each rank's share is split into ``v`` chunks), so filling
    and draining take ``p - 1`` *chunk* slots: ``T = (m + (p - 1)/v)(t_f + t_b)``.
    For ``m < p`` the schedule cannot keep the pipe full and the simulator gives more.

    Used in lesson 03.
    """
    return (m + (p - 1) / v) * (t_f + t_b)


def busy_per_rank(m: Any = m, t_f: Any = t_f, t_b: Any = t_b) -> sp.Expr:
    """Work of one rank in one step: ``m (t_f + t_b)`` (every rank does the same with equal stages).

    Used in lesson 03.
    """
    return m * (t_f + t_b)


def bubble_fraction(makespan: Any, busy: Any, ranks: Any = p) -> sp.Expr:
    """Idle device-time over total device-time, ``(ranks*T - ranks*busy) / (ranks*T)``, simplified.

    Args:
        makespan: the step time ``T`` (an expression or a number).
        busy: work of one rank, when every rank does the same (see :func:`busy_per_rank`).
        ranks: number of ranks; it cancels, which is why ``b`` does not depend on it directly.

    Used in lesson 03.
    """
    total = ranks * makespan
    return sp.factor(sp.simplify((total - ranks * busy) / total))


def overhead_of(ratio: Any) -> sp.Expr:
    """Megatron's convention from a fraction-of-total ``b``: ``b / (1 - b)``, simplified.

    Used in lesson 03.
    """
    return sp.factor(sp.simplify(ratio / (1 - ratio)))


#: The article's ``b = (p - 1)/(m + p - 1)``: fraction of total device-time that is idle.
BUBBLE_RATIO: sp.Expr = (p - 1) / (m + p - 1)
#: Utilisation ``U = 1 - b = m / (m + p - 1)``.
UTILIZATION: sp.Expr = m / (m + p - 1)
#: Interleaved 1F1B: ``(p - 1)/(m v + p - 1)`` (fraction of total, ``m >= p``).
INTERLEAVED_RATIO: sp.Expr = (p - 1) / (m * v + p - 1)
#: Megatron-LM's bubble: bubble time over ideal time, ``(p - 1)/m`` (can exceed 1).
MEGATRON_OVERHEAD: sp.Expr = (p - 1) / m


def _rational(name: str, value: Any) -> sp.Rational:
    """An exact sympy Rational for ``value``; a float is read as the decimal it prints as (0.3 -> 3/10)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, sp.Basic)):
        raise TypeError(f"{name} must be a number, got {value!r} of type {type(value).__name__}")
    if isinstance(value, sp.Basic):
        if not value.is_number:
            raise TypeError(f"{name} must be a number, got the expression {value}")
        return sp.nsimplify(value, rational=True)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite, got {value!r}")
        return sp.Rational(repr(value))
    fr = Fraction(value) if isinstance(value, numbers.Rational) else Fraction(float(value))
    return sp.Rational(fr.numerator, fr.denominator)


def solve_min_m(ratio: Any = BUBBLE_RATIO, bound: Any = target) -> sp.Expr:
    """Solve ``ratio(m) = bound`` for ``m`` with :func:`sympy.solve`; return the (real) root.

    ``ratio`` decreases in ``m``, so every ``m`` at or above the root meets ``ratio <= bound``;
    the smallest whole one is the ceiling. For the default arguments the root is
    ``(p - 1)(1 - b^*) / b^*``.

    Used in lesson 03.
    """
    roots = sp.solve(sp.Eq(ratio, bound), m)
    if len(roots) != 1:
        raise ValueError(f"expected one root for m, got {roots}")
    return sp.factor(roots[0])


def min_micro_batch(p_value: int, target_value: Any = Fraction(1, 5), v_value: int = 1) -> int:
    """Smallest whole ``m`` with ``(p-1)/(m v + p-1) <= target``, by sympy: solve, then ceiling.

    Args:
        p_value: stages, int >= 1.
        target_value: the largest acceptable bubble fraction, strictly between 0 and 1. A float is
            read as the decimal it prints as (``0.3`` means exactly 3/10), so ``m = 7`` meets a 30 %
            target at ``p = 4`` (its bubble is exactly 3/10).
        v_value: chunks per rank (interleaved), int >= 1.

    Cross-check: :func:`bubblekit.min_micro_batch` gives the same for targets that are exact
    binary fractions or whose float sits above the decimal (0.1, 0.2, 0.25, 0.5).

    Used in lesson 03.
    """
    pv = check_int("p", p_value)
    vv = check_int("v", v_value)
    t = _rational("target", target_value)
    if not 0 < t < 1:
        raise ValueError(f"target must be strictly between 0 and 1 (e.g. 0.2 for 20%), got {target_value!r}")
    root = solve_min_m(INTERLEAVED_RATIO, target).subs({p: pv, v: vv, target: t})
    return max(1, int(sp.ceiling(root)))


def evaluate(expr: Any, **values: Any) -> Fraction | float:
    """Substitute ``values`` (by symbol name: ``p``, ``m``, ``v``, ``t_f``, ``t_b``, ``comm``, ``target``).

    Returns an exact :class:`~fractions.Fraction` when the result is rational (ints and
    Fractions in, a simulator's exact makespan to compare with), else a float. Raises
    ``ValueError`` naming any unknown name or a symbol left without a value.

    Used in lesson 03.
    """
    table = {"p": p, "m": m, "v": v, "t_f": t_f, "t_b": t_b, "comm": comm, "c": comm, "target": target}
    subs = {}
    for key, val in values.items():
        if key not in table:
            raise ValueError(f"unknown symbol name {key!r}; use one of {sorted(table)}")
        subs[table[key]] = _rational(key, val)
    out = sp.sympify(expr).subs(subs)
    if out.free_symbols:
        raise ValueError(f"no value given for {sorted(str(s) for s in out.free_symbols)}")
    if out.is_Rational:
        return Fraction(int(out.p), int(out.q))
    return float(out)
