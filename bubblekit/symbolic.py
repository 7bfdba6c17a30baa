"""The bubble formulas in sympy, built in front of the learner from named pieces of the diagram.

Lesson 03 derives ``b = (p-1)/(m+p-1)`` step by step instead of quoting it. This module gives
the *pieces* a pipeline diagram shows (one rank's work, the crossing of the other ranks, a
wave, a chunk, the hops on the critical path); the makespans are sums of those pieces, and
:func:`confirm` checks any expression against :func:`bubblekit.simulate` over a grid of
configurations, so that every step of the derivation is confirmed twice: by sympy (the
learner's expression equals the one built from the pieces) and by the simulator.

Symbols (all positive; ``p``, ``m``, ``v`` integers):

* ``p`` pipeline stages (ranks), ``m`` microbatches per step, ``v`` chunks per rank;
* ``t_f``, ``t_b``: forward and full-backward time of **one rank's share** of the model for one
  microbatch (any time unit: abstract slots or ms);
* ``comm`` (alias ``c``, printed ``c``): latency of one hop between neighbouring ranks, same unit;
* ``target`` (alias ``b_star``, printed ``b^*``): the largest bubble fraction we accept.

Conventions (the course's, stated in lesson 00 and the README): ``b`` is the *fraction of total
device-time* that is idle, idle / (p x makespan), the source article's ``b`` (``bubble_ratio``);
Megatron-LM's ``(p-1)/m`` is bubble time over *busy* time, ``b / (1 - b)`` (``bubble_overhead``,
:data:`MEGATRON_OVERHEAD`). All stages are equal (every rank's share costs ``t_f`` and ``t_b``).

This is the only bubblekit module that imports sympy.
"""

from __future__ import annotations

import math
import numbers
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Union

import sympy as sp

from bubblekit._validate import check_int, exact_decimal
from bubblekit.actions import Action
from bubblekit.costs import Costs
from bubblekit.i18n import all_messages, get_language, register, tr
from bubblekit.schedules import schedule as build_schedule
from bubblekit.schedules import spec
from bubblekit.simulator import SimResult, simulate
from bubblekit.text import Table

__all__ = [
    "p", "m", "v", "t_f", "t_b", "comm", "c", "target", "b_star",
    "work", "crossing", "wave", "chunk", "busy_per_rank", "idle_per_rank",
    "gpipe_hops", "round_trips_1f1b", "hops_1f1b",
    "makespan_gpipe", "makespan_1f1b", "makespan_interleaved",
    "bubble_fraction", "overhead_of",
    "BUBBLE_RATIO", "UTILIZATION", "INTERLEAVED_RATIO", "MEGATRON_OVERHEAD",
    "solve_min_m", "min_micro_batch", "evaluate",
    "critical_hops", "round_trips", "confirm", "Confirmation", "Case", "QUANTITIES", "CONDITIONS",
]

register({
    # confirm()'s report and table (lesson 03); quantity names and the grid stay as code writes them
    "symbolic.agree": {"en": "{quantity}: sympy = simulator in all {n} cases",
                       "zh": "{quantity}：全部 {n} 组取值下 sympy 与模拟器一致"},
    "symbolic.differ": {"en": "{quantity}: sympy ≠ simulator in {bad} of {n} cases (simulator larger in {larger})",
                        "zh": "{quantity}：共 {n} 组取值，sympy 与模拟器不一致的有 {bad} 组，其中模拟值更大的有 {larger} 组"},
    "symbolic.differ.all_larger": {"en": "{quantity}: sympy ≠ simulator in {bad} of {n} cases, the simulator larger in all of them",
                                   "zh": "{quantity}：共 {n} 组取值，sympy 与模拟器不一致的有 {bad} 组，全部是模拟值更大"},
    "symbolic.differ.every": {"en": "{quantity}: sympy ≠ simulator in all {n} cases, the simulator larger in every one",
                              "zh": "{quantity}：全部 {n} 组取值下 sympy 与模拟器都不一致，且都是模拟值更大"},
    "symbolic.refused": {"en": "; {refused} refused by the schedule's m rule",
                         "zh": "；另有 {refused} 组取值不满足该调度对 m 的要求，未比较"},
    "symbolic.a_condition": {"en": "a condition", "zh": "自定义条件"},
    # a named condition after the m range: "m = 1..12, m >= p" / "m = 1..12 且 m ≥ p"
    "symbolic.where.m >= p": {"en": ", m >= p", "zh": " 且 m ≥ p"},
    "symbolic.where.m < p": {"en": ", m < p", "zh": " 且 m < p"},
    "symbolic.where.m % p == 0": {"en": ", m % p == 0", "zh": " 且 m 是 p 的倍数"},
    "symbolic.where.m % p != 0": {"en": ", m % p != 0", "zh": " 且 m 不是 p 的倍数"},
    # what confirm() compared, as the report names it (the keys of QUANTITIES stay the API's)
    "symbolic.quantity.makespan": {"en": "makespan", "zh": "单步耗时"},
    "symbolic.quantity.bubble_ratio": {"en": "bubble_ratio", "zh": "bubble_ratio（气泡比例）"},
    "symbolic.quantity.bubble_overhead": {"en": "bubble_overhead", "zh": "bubble_overhead（气泡开销）"},
    "symbolic.quantity.idle_per_rank": {"en": "idle_per_rank", "zh": "每个 rank 的空闲时间"},
    "symbolic.quantity.hops": {"en": "hops", "zh": "关键路径上的跳数"},
    "symbolic.quantity.round_trips": {"en": "round_trips", "zh": "往返次数"},
    "symbolic.title.every": {"en": "{quantity}, every case", "zh": "{quantity}，全部情形"},
    "symbolic.title.every_same": {"en": "{quantity}, every case ({same})", "zh": "{quantity}，全部情形（{same}）"},
    "symbolic.title.differ": {"en": "{quantity}, cases that differ", "zh": "{quantity}，不一致的情形"},
    "symbolic.title.differ_same": {"en": "{quantity}, cases that differ ({same})",
                                   "zh": "{quantity}，不一致的情形（{same}）"},
    "symbolic.simulator": {"en": "simulator", "zh": "模拟器"},
    "symbolic.equal": {"en": "equal", "zh": "一致"},
})

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
#: Short name of :data:`comm`.
c = comm
#: The largest acceptable bubble fraction, strictly between 0 and 1; prints as ``b^*``.
target = sp.Symbol("b^*", positive=True)
#: Short name of :data:`target`.
b_star = target


def _arg(name: str, value: Any, kind: str) -> Any:
    """Check a piece's argument: a sympy expression with symbols passes; a number must fit ``kind``.

    ``kind`` is the symbol's assumption: ``"whole"`` (an int >= 1: ``p``, ``m``, ``v``),
    ``"positive"`` (> 0: a time), ``"nonnegative"`` (>= 0: a latency) or ``"ratio"`` (in
    ``[0, 1)``). Returns ``value`` unchanged; raises ``TypeError`` / ``ValueError`` naming it.
    """
    if isinstance(value, sp.Basic) and not value.is_number:
        return value
    num = _rational(name, value)
    ok = {"whole": num.is_integer and num >= 1, "positive": num > 0, "nonnegative": num >= 0,
          "ratio": 0 <= num < 1}[kind]
    if not ok:
        allowed = {"whole": "a whole number >= 1", "positive": "a number > 0", "nonnegative": "a number >= 0",
                   "ratio": "a fraction in [0, 1)"}[kind]
        raise ValueError(f"{name} must be {allowed} (or a sympy expression), got {value!r}")
    return value


# ============================================================ the pieces of a diagram
def work(t: Any = t_f, m: Any = m) -> sp.Expr:
    """One rank's work in one direction: ``m`` actions of duration ``t``, i.e. ``m t``.

    ``work(t_f)`` is the time rank 0 needs to start the last microbatch's forward plus that
    forward; ``work(t_f) + work(t_b)`` is everything one rank does in a step
    (:func:`busy_per_rank`). Used in lesson 03.
    """
    _arg("t", t, "positive")
    _arg("m", m, "whole")
    return sp.sympify(m) * t


def crossing(t: Any = t_f, p: Any = p) -> sp.Expr:
    """The time one microbatch needs to cross the ``p - 1`` ranks after the first: ``(p - 1) t``.

    In the forward wave the last microbatch leaves rank 0 and still has ``p - 1`` forwards to
    run, one per remaining rank, each of duration ``t``; the backward wave mirrors it. Used in
    lesson 03.
    """
    _arg("t", t, "positive")
    _arg("p", p, "whole")
    return (sp.sympify(p) - 1) * t


def wave(t: Any = t_f, p: Any = p, m: Any = m) -> sp.Expr:
    """One wave of GPipe (all forwards, or all backwards): ``work(t) + crossing(t) = (m + p - 1) t``.

    Returned factored, ``(m + p - 1) t``. Used in lesson 03.
    """
    _arg("t", t, "positive")
    _arg("p", p, "whole")
    _arg("m", m, "whole")
    return sp.factor(work(t, m) + crossing(t, p))


def chunk(t: Any = t_f, v: Any = v) -> sp.Expr:
    """One chunk action when each rank's share is cut into ``v`` chunks: ``t / v``. Used in lesson 03."""
    _arg("t", t, "positive")
    _arg("v", v, "whole")
    return t / sp.sympify(v)


def busy_per_rank(m: Any = m, t_f: Any = t_f, t_b: Any = t_b) -> sp.Expr:
    """Work of one rank in one step: ``work(t_f) + work(t_b) = m (t_f + t_b)`` (every rank the same).

    Used in lesson 03.
    """
    _arg("m", m, "whole")
    _arg("t_f", t_f, "positive")
    _arg("t_b", t_b, "positive")
    return sp.factor(work(t_f, m) + work(t_b, m))


def idle_per_rank(makespan: Any, busy: Any = None) -> sp.Expr:
    """Idle time of one rank: ``makespan - busy`` (default busy: :func:`busy_per_rank`), factored.

    Used in lesson 03.
    """
    busy = busy_per_rank() if busy is None else busy
    return sp.factor(sp.simplify(sp.sympify(makespan) - busy))


# ============================================================ hops on the critical path
def gpipe_hops(p: Any = p) -> sp.Expr:
    """Hops on GPipe's critical path: ``2 (p - 1)``.

    The critical path runs forwards down the ranks and backwards up them; GPipe never runs a
    backward before a forward on the same rank, so the path can go down only in the forward
    wave and up only in the backward wave: ``p - 1`` links each way. Used in lesson 03.
    """
    _arg("p", p, "whole")
    return 2 * (sp.sympify(p) - 1)


def round_trips_1f1b(p: Any = p, m: Any = m) -> sp.Expr:
    """Round trips on 1F1B's critical path with latency: ``1 + ceiling((m - 1) / p)``.

    A round trip is one microbatch's forward going down to the last rank and its backward
    coming back up. Between two round trips the path turns on some rank ``r`` from a backward
    ``B_j`` to the forward that follows it in 1F1B's steady state, ``F_{j + p - r}``: a turn
    moves the path at most ``p`` microbatches on. The path must get from microbatch 0 to
    microbatch ``m - 1``, so it needs at least ``ceiling((m - 1) / p)`` turns, and the longest
    path takes the fewest (see :func:`hops_1f1b`). Used in lesson 03.
    """
    _arg("p", p, "whole")
    _arg("m", m, "whole")
    return 1 + sp.ceiling((sp.sympify(m) - 1) / p)


def hops_1f1b(p: Any = p, m: Any = m) -> sp.Expr:
    """Hops on 1F1B's critical path with latency: ``2 (m + p - 1 - round trips)``.

    The critical path runs ``m + p - 1`` forwards and as many backwards (the compute is the same
    as without latency). Between consecutive actions it either hops to a neighbour (latency
    ``c``) or stays on its rank; it stays exactly twice per round trip less one (at the bottom,
    ``F -> B`` on the last rank; at each turn, ``B -> F``), so
    ``hops = 2(m + p - 1) - 1 - (2 E - 1) = 2 (m + p - 1 - E)`` with ``E`` round trips. Fewer
    round trips mean more hops: the longest path has ``E =`` :func:`round_trips_1f1b`.
    Equal to ``2 (p - 1) + 2 floor((m - 1)(p - 1) / p)`` for whole ``p, m >= 1``.
    Used in lesson 03.
    """
    _arg("p", p, "whole")
    _arg("m", m, "whole")
    return 2 * (sp.sympify(m) + p - 1 - round_trips_1f1b(p, m))


# ============================================================ makespans
def makespan_gpipe(
    p: Any = p, m: Any = m, t_f: Any = t_f, t_b: Any = t_b, comm: Any = 0
) -> sp.Expr:
    """Makespan of GPipe with equal stages: ``wave(t_f) + wave(t_b) + gpipe_hops(p) c``.

    ``T = (m + p - 1)(t_f + t_b) + 2 (p - 1) c``: the forward wave, the backward wave, and a
    latency ``c`` on each hop of the critical path. Exact for :func:`bubblekit.simulate` with
    ``Costs(f=t_f, b=t_b, comm=c)``. With ``comm = 0`` it is also 1F1B's makespan.

    Used in lesson 03.
    """
    _arg("p", p, "whole")
    _arg("m", m, "whole")
    _arg("t_f", t_f, "positive")
    _arg("t_b", t_b, "positive")
    _arg("comm", comm, "nonnegative")
    compute = sp.factor(wave(t_f, p, m) + wave(t_b, p, m))
    return compute + gpipe_hops(p) * comm


def makespan_1f1b(
    p: Any = p, m: Any = m, t_f: Any = t_f, t_b: Any = t_b, comm: Any = comm
) -> sp.Expr:
    """Makespan of 1F1B with equal stages and a per-hop latency ``c``: compute plus ``hops_1f1b c``.

    ``T = (m + p - 1)(t_f + t_b) + 2 (m + p - 1 - E) c`` with ``E = 1 + ceiling((m - 1)/p)``
    round trips (:func:`round_trips_1f1b`). Latency model: a hop delays the receiver by ``c``
    but occupies neither rank (asynchronous send). Exact for :func:`bubblekit.simulate`
    (``tests/test_symbolic.py``), also for ``c`` larger than a slot.

    Used in lesson 03.
    """
    _arg("p", p, "whole")
    _arg("m", m, "whole")
    _arg("t_f", t_f, "positive")
    _arg("t_b", t_b, "positive")
    _arg("comm", comm, "nonnegative")
    compute = sp.factor(wave(t_f, p, m) + wave(t_b, p, m))
    return compute + hops_1f1b(p, m) * comm


def makespan_interleaved(p: Any = p, m: Any = m, v: Any = v, t_f: Any = t_f, t_b: Any = t_b) -> sp.Expr:
    """Makespan of interleaved 1F1B with ``v`` chunks per rank, no latency, ``m >= p``.

    Each rank still does all of its work, ``work(t_f) + work(t_b)``; only the crossing is made
    in chunk steps, ``crossing(chunk(t_f)) + crossing(chunk(t_b))``:
    ``T = (m + (p - 1)/v)(t_f + t_b)``. Exact for every ``m >= p`` that PyTorch's schedule
    accepts; for ``m < p`` the pipeline runs dry between chunk rounds and the simulator gives
    more.

    Used in lesson 03.
    """
    _arg("p", p, "whole")
    _arg("m", m, "whole")
    _arg("v", v, "whole")
    _arg("t_f", t_f, "positive")
    _arg("t_b", t_b, "positive")
    busy = busy_per_rank(m, t_f, t_b)
    return sp.factor(busy + crossing(chunk(t_f, v), p) + crossing(chunk(t_b, v), p))


# ============================================================ ratios
def bubble_fraction(makespan: Any, busy: Any, ranks: Any = p) -> sp.Expr:
    """Idle device-time over total device-time, ``(ranks*T - ranks*busy) / (ranks*T)``, simplified.

    Args:
        makespan: the step time ``T`` (an expression or a number).
        busy: work of one rank, when every rank does the same (see :func:`busy_per_rank`).
        ranks: number of ranks; it cancels, which is why ``b`` does not depend on it directly.

    Used in lesson 03.
    """
    _arg("makespan", makespan, "positive")
    _arg("ranks", ranks, "whole")
    if not isinstance(busy, sp.Basic):
        _arg("busy", busy, "nonnegative")
    total = ranks * makespan
    return sp.factor(sp.simplify((total - ranks * busy) / total))


def overhead_of(ratio: Any) -> sp.Expr:
    """Megatron's convention from a fraction-of-total ``b``: ``b / (1 - b)``, simplified.

    Used in lesson 03.
    """
    _arg("ratio", ratio, "ratio")
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
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    fr = exact_decimal(name, value)  # numpy.float32(0.7) is 7/10, as bubblekit.min_micro_batch reads it
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


_NAMES = {"p": p, "m": m, "v": v, "t_f": t_f, "t_b": t_b, "comm": comm, "c": comm, "target": target,
          "b_star": target}


def _expr(expr: Any) -> sp.Expr:
    """``expr`` as a sympy expression: one already, a number, or text in the symbols' names (``"(p-1)/m"``)."""
    if isinstance(expr, sp.Basic):
        return expr  # type: ignore[return-value]
    if isinstance(expr, str):
        if not expr.strip():
            raise ValueError("expr must be a sympy expression or its text, got an empty string")
        try:
            out = sp.sympify(expr, locals=dict(_NAMES))
        except (sp.SympifyError, SyntaxError, TypeError, ValueError, AttributeError, NameError) as err:
            why = (str(err).strip().splitlines() or [type(err).__name__])[-1]
            raise ValueError(f"cannot read expr {expr!r} as a formula in {', '.join(sorted(_NAMES))}: {why}") from None
        if not isinstance(out, sp.Basic):
            raise ValueError(f"expr {expr!r} is not a formula (it reads as {type(out).__name__})")
        return out  # type: ignore[return-value]
    if isinstance(expr, numbers.Real) and not isinstance(expr, bool):
        return sp.sympify(expr)  # type: ignore[no-any-return]
    raise TypeError(f"expr must be a sympy expression (e.g. bubblekit.symbolic.BUBBLE_RATIO) or its text, got "
                    f"{expr!r} of type {type(expr).__name__}")


#: What each name's value must be: the symbol's assumptions (``p, m, v`` whole, times positive, ...).
_KINDS = {"p": "whole", "m": "whole", "v": "whole", "t_f": "positive", "t_b": "positive", "comm": "nonnegative",
          "c": "nonnegative", "target": "target", "b_star": "target"}


def evaluate(expr: Any, **values: Any) -> Fraction | float:
    """Substitute ``values`` (by name: ``p``, ``m``, ``v``, ``t_f``, ``t_b``, ``comm`` or ``c``, ``target``).

    ``expr`` is a sympy expression or its text in those names (``"(p - 1)/(m + p - 1)"``).
    Each value must be what its symbol stands for: ``p``, ``m``, ``v`` whole numbers >= 1,
    ``t_f``, ``t_b`` > 0, ``comm`` >= 0, ``target`` strictly between 0 and 1 (``ValueError``
    otherwise, so that ``p = -3`` cannot give a "bubble" of 2).

    Returns an exact :class:`~fractions.Fraction` when the result is rational (ints and
    Fractions in, a simulator's exact makespan to compare with), else a float. Raises
    ``ValueError`` naming any unknown name, a symbol left without a value, or a result that
    is not a finite real number.

    Used in lesson 03.
    """
    e = _expr(expr)
    subs = {}
    for key, val in values.items():
        if key not in _NAMES:
            raise ValueError(f"unknown symbol name {key!r}; use one of {sorted(_NAMES)}")
        r = _rational(key, val)
        kind = _KINDS[key]
        if kind == "target":
            if not 0 < r < 1:
                raise ValueError(f"{key} must be strictly between 0 and 1 (a bubble fraction), got {val!r}")
        else:
            _arg(key, r, kind)
        subs[_NAMES[key]] = r
    out = e.subs(subs)
    if out.free_symbols:
        raise ValueError(f"no value given for {sorted(str(s) for s in out.free_symbols)}")
    if out.is_Rational:
        return Fraction(int(out.p), int(out.q))
    if not (out.is_real and out.is_finite):
        given = ", ".join(f"{k}={v!r}" for k, v in values.items())
        raise ValueError(f"{e} has no finite real value at {given} (got {out})")
    return float(out)


# ============================================================ the simulator's side
def critical_hops(result: SimResult) -> int:
    """How many times the simulated critical path changes rank: the latencies the makespan pays.

    Used in lesson 03 (the simulator confirms :func:`gpipe_hops` and :func:`hops_1f1b`).
    """
    if not isinstance(result, SimResult):
        raise TypeError(f"result must be a SimResult (bk.simulate(...)), got {type(result).__name__}")
    path = result.critical_path
    return sum(1 for (r1, _), (r2, _) in zip(path, path[1:]) if r1 != r2)


def round_trips(result: SimResult) -> int:
    """Round trips on the simulated critical path: its steps from a forward to a backward on one rank.

    Each round trip turns once at the bottom, from a microbatch's forward to a backward on the
    same rank. Used in lesson 03 (the simulator confirms :func:`round_trips_1f1b`).
    """
    if not isinstance(result, SimResult):
        raise TypeError(f"result must be a SimResult (bk.simulate(...)), got {type(result).__name__}")
    path = result.critical_path
    return sum(1 for (r1, a1), (r2, a2) in zip(path, path[1:])
               if r1 == r2 and _kind(a1) == "F" and _kind(a2) in ("B", "I"))


def _kind(action: Action | str) -> str:
    return action.kind if isinstance(action, Action) else str(action)


#: What :func:`confirm` can compare, each read from a :class:`~bubblekit.SimResult`.
QUANTITIES: dict[str, Callable[[SimResult], Any]] = {
    "makespan": lambda r: r.makespan,
    "bubble_ratio": lambda r: r.bubble_ratio_exact,
    "bubble_overhead": lambda r: r.bubble_overhead_exact,
    "idle_per_rank": lambda r: r.idle[0] if len(set(r.idle)) == 1 else tuple(r.idle),
    "hops": critical_hops,
    "round_trips": round_trips,
}

#: Named conditions on ``(p, m, v)`` for :func:`confirm`'s ``where``.
CONDITIONS: dict[str, Callable[[int, int, int], bool]] = {
    "m >= p": lambda p, m, v: m >= p,
    "m < p": lambda p, m, v: m < p,
    "m % p == 0": lambda p, m, v: m % p == 0,
    "m % p != 0": lambda p, m, v: m % p != 0,
}

#: :func:`confirm` refuses grids larger than this many simulations (it would take minutes).
MAX_CASES = 5000

_Cost = Union[int, Fraction]


@dataclass(frozen=True)
class Case:
    """One configuration compared by :func:`confirm`: the formula's value and the simulator's."""

    schedule: str
    p: int
    m: int
    v: int
    t_f: _Cost
    t_b: _Cost
    c: _Cost
    formula: Any
    simulated: Any

    @property
    def equal(self) -> bool:
        """True when the two values are equal (exactly: the simulator works in whole ticks)."""
        return bool(self.formula == self.simulated)


@dataclass(frozen=True)
class Confirmation:
    """What :func:`confirm` found: truthy when sympy and the simulator agree in every case.

    Attributes:
        quantity: what was compared (a key of :data:`QUANTITIES`).
        schedules: display names of the schedules simulated.
        grid: the grid in words (for the printed line).
        cases: every configuration compared, in order.
        refused: configurations the schedule does not accept (its ``m`` rule), not compared.
    """

    quantity: str
    schedules: tuple[str, ...]
    grid: str
    cases: tuple[Case, ...]
    refused: int = 0

    @property
    def mismatches(self) -> tuple[Case, ...]:
        """The cases where the formula and the simulator differ."""
        return tuple(k for k in self.cases if not k.equal)

    def __bool__(self) -> bool:
        return bool(self.cases) and not self.mismatches

    def table(self, *, all_cases: bool = False, limit: int = 12) -> Table:
        """The cases that differ (or every case) as a :class:`~bubblekit.text.Table`.

        At most ``limit`` rows; a setting that is the same in every row (the schedule, ``v``,
        the costs) moves from the columns into the title. Columns ``sympy`` and ``simulator``
        hold the two values (exact) and ``equal`` whether they agree.
        """
        limit = check_int("limit", limit)
        rows = list(self.cases if all_cases else self.mismatches)[:limit]
        settings = ["schedule", "p", "m", "v", "t_f", "t_b", "c"]
        fixed = [k for k in settings if k not in ("p", "m") and rows
                 and len({getattr(r, k) for r in rows}) == 1]
        cols = [k for k in settings if k not in fixed] + ["formula", "simulated", "equal"]
        comma = "，" if get_language() == "zh" else ", "
        same = comma.join(str(getattr(rows[0], k)) if k == "schedule" else f"{k} = {getattr(rows[0], k)}"
                          for k in fixed)
        key = "symbolic.title." + ("every" if all_cases else "differ") + ("_same" if same else "")
        title = tr(key, quantity=self._quantity_words(), same=same)
        return Table([{k: getattr(r, k) for k in cols} for r in rows], cols,
                     formats={"formula": "exact", "simulated": "exact"},
                     headers={"formula": "sympy", "simulated": tr("symbolic.simulator"), "equal": tr("symbolic.equal")},
                     title=title)

    def _quantity_words(self) -> str:
        """The compared quantity as the report names it (Chinese: ``单步耗时`` for ``makespan``)."""
        key = f"symbolic.quantity.{self.quantity}"
        return tr(key) if key in all_messages() else self.quantity

    def __repr__(self) -> str:
        n, bad = len(self.cases), len(self.mismatches)
        if not bad:
            head = tr("symbolic.agree", quantity=self._quantity_words(), n=n)
        else:
            larger = sum(1 for k in self.mismatches if _larger(k.simulated, k.formula))
            key = ("symbolic.differ" if larger < bad else "symbolic.differ.all_larger" if bad < n
                   else "symbolic.differ.every")
            head = tr(key, quantity=self._quantity_words(), bad=bad, n=n, larger=larger)
        zh = get_language() == "zh"
        grid = ("、".join(self.schedules) + "；" + self.grid.replace("; ", "；")) if zh else f"{', '.join(self.schedules)}; {self.grid}"
        if self.refused:
            grid += tr("symbolic.refused", refused=self.refused)
        if zh:  # textwrap breaks at spaces, which Chinese text has only around numbers
            return head + "\n  " + grid
        return head + "\n" + textwrap.fill(grid, width=88, initial_indent="  ", subsequent_indent="  ")

    __str__ = __repr__


def _larger(a: Any, b: Any) -> bool:
    try:
        return bool(a > b)
    except TypeError:
        return False


def _span(values: Sequence[Any]) -> str:
    """``1..8`` for a run of whole numbers, else the values joined by commas."""
    vals = list(values)
    if len(vals) > 2 and all(isinstance(x, int) for x in vals) and vals == list(range(vals[0], vals[-1] + 1)):
        return f"{vals[0]}..{vals[-1]}"
    return ", ".join(str(x) for x in vals)


def _whole_numbers(name: str, values: Iterable[Any]) -> list[int]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a list or range of whole numbers, got {values!r}")
    out = [check_int(name, x) for x in values]
    if not out:
        raise ValueError(f"{name} must not be empty")
    return out


def confirm(
    expr: Any,
    schedules: str | Sequence[str],
    quantity: str = "makespan",
    *,
    p: Iterable[int] = range(1, 9),
    m: Iterable[int] = range(1, 13),
    v: Iterable[int] = (2, 3, 4),
    costs: Iterable[tuple[_Cost, _Cost]] = ((1, 1), (1, 2), (2, 3)),
    comm: Iterable[_Cost] = (0,),
    where: str | Callable[[int, int, int], bool] | None = None,
) -> Confirmation:
    """Compare a sympy expression with the simulator over a grid of configurations.

    For every schedule, ``p``, ``m``, ``v`` (only for schedules with several chunks per rank;
    the others use ``v = 1``), ``(t_f, t_b)`` in ``costs`` and latency ``c`` in ``comm`` that
    ``where`` admits, simulate with ``Costs(f=t_f, b=t_b, comm=c)`` and compare ``quantity``
    (see :data:`QUANTITIES`: ``makespan`` in slots, ``bubble_ratio``, ``bubble_overhead``,
    ``idle_per_rank``, ``hops`` or ``round_trips`` on the critical path) with ``expr``
    evaluated exactly (:func:`evaluate`). Configurations the schedule refuses (its ``m`` rule)
    are counted in ``refused``, not compared.

    Args:
        expr: a sympy expression in ``p, m, v, t_f, t_b, c``.
        schedules: a registry name (``"gpipe"``) or a list of them.
        quantity: a key of :data:`QUANTITIES`.
        p, m, v: whole numbers to try; costs: ``(t_f, t_b)`` pairs; comm: latencies (ints or
            Fractions: exact arithmetic).
        where: a key of :data:`CONDITIONS` (``"m >= p"``, ``"m < p"``, ...) or a function
            ``(p, m, v) -> bool``.

    Returns a :class:`Confirmation`: truthy when every compared case agrees; it prints as one
    short line and ``.table()`` lists the cases that differ. Raises ``ValueError`` when no case
    is left to compare or the grid exceeds :data:`MAX_CASES` simulations.

    Used in lesson 03.
    """
    if quantity not in QUANTITIES:
        raise ValueError(f"quantity must be one of {sorted(QUANTITIES)}, got {quantity!r}")
    if not isinstance(schedules, str) and (isinstance(schedules, bytes) or not isinstance(schedules, Iterable)):
        raise TypeError(f"schedules must be a schedule name or a list of names, got {schedules!r}")
    names = [schedules] if isinstance(schedules, str) else list(schedules)
    if not names:
        raise ValueError("schedules must name at least one schedule")
    entries = [spec(n) for n in names]
    ps, ms, vs = _whole_numbers("p", p), _whole_numbers("m", m), _whole_numbers("v", v)
    expr = _expr(expr)
    cost_pairs = _cost_pairs(costs)
    latencies = _latencies(comm)
    if where is None:
        keep: Callable[[int, int, int], bool] = lambda _p, _m, _v: True  # noqa: E731
        where_text = ""
    elif isinstance(where, str):
        if where not in CONDITIONS:
            raise ValueError(f"where must be one of {sorted(CONDITIONS)} or a function (p, m, v) -> bool, got {where!r}")
        keep, where_text = CONDITIONS[where], tr(f"symbolic.where.{where}")
    elif callable(where):
        keep, where_text = where, ", " + tr("symbolic.a_condition")
    else:
        raise TypeError(f"where must be a condition name or a function (p, m, v) -> bool, got {where!r}")
    configs = [(e, pp, mm, vv) for e in entries for pp in ps for mm in ms
               for vv in (vs if e.chunks == "many" else [1]) if keep(pp, mm, vv)]
    total = len(configs) * len(cost_pairs) * len(latencies)
    if total > MAX_CASES:
        raise ValueError(f"the grid has {total} simulations, more than MAX_CASES = {MAX_CASES}: try fewer values")
    read = QUANTITIES[quantity]
    cases: list[Case] = []
    refused = 0
    for e, pp, mm, vv in configs:
        try:
            sched = build_schedule(e.name, pp, mm, vv if e.chunks == "many" else None)
        except ValueError:
            refused += len(cost_pairs) * len(latencies)
            continue
        for f, b in cost_pairs:
            for lat in latencies:
                sim = read(simulate(sched, Costs(f=_plain(f), b=_plain(b), comm=_plain(lat))))
                formula = evaluate(expr, p=pp, m=mm, v=vv, t_f=f, t_b=b, comm=lat)
                cases.append(Case(e.display_name, pp, mm, vv, _plain(f), _plain(b), _plain(lat), formula, sim))
    if not cases:
        raise ValueError("no configuration left to compare: widen the grid or the condition")
    parts = [f"p = {_span(ps)}", f"m = {_span(ms)}" + where_text]
    if any(e.chunks == "many" for e in entries):
        parts.append(f"v = {_span(vs)}")
    parts.append("(t_f, t_b) = " + " ".join(f"({_plain(f)}, {_plain(b)})" for f, b in cost_pairs))
    parts.append(f"c = {_span([_plain(x) for x in latencies])}")
    return Confirmation(quantity, tuple(dict.fromkeys(e.display_name for e in entries)), "; ".join(parts),
                        tuple(cases), refused)


def _cost_pairs(costs: Any) -> list[tuple[Fraction, Fraction]]:
    """``confirm``'s ``costs``: a non-empty list of ``(t_f, t_b)`` pairs of numbers > 0, as exact Fractions."""
    if isinstance(costs, (str, bytes)) or not isinstance(costs, Iterable):
        raise TypeError(f"costs must be a list of (t_f, t_b) pairs, e.g. [(1, 2)], got {costs!r}")
    out = []
    for k, pair in enumerate(costs):
        if isinstance(pair, (str, bytes)) or not isinstance(pair, Iterable) or len(tuple(pair)) != 2:
            raise ValueError(f"costs[{k}] must be a pair (t_f, t_b) of numbers > 0, got {pair!r}")
        f, b = tuple(pair)
        out.append(tuple(_exact_cost(f"costs[{k}][{j}]", x, positive=True) for j, x in enumerate((f, b))))
    if not out:
        raise ValueError("costs must give at least one (t_f, t_b) pair, got an empty list")
    return out  # type: ignore[return-value]


def _latencies(comm: Any) -> list[Fraction]:
    """``confirm``'s ``comm``: a non-empty list of latencies >= 0, as exact Fractions."""
    if isinstance(comm, (str, bytes)) or not isinstance(comm, Iterable):
        raise TypeError(f"comm must be a list of latencies (numbers >= 0), e.g. [0, 1], got {comm!r}")
    out = [_exact_cost(f"comm[{k}]", x, positive=False) for k, x in enumerate(comm)]
    if not out:
        raise ValueError("comm must give at least one latency, got an empty list")
    return out


def _exact_cost(name: str, value: Any, *, positive: bool) -> Fraction:
    """A time for ``confirm``: an exact number (a float as its decimal), > 0 or >= 0."""
    x = exact_decimal(name, value)
    if x < 0 or (positive and x == 0):
        raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'}, got {value!r}")
    return x


def _plain(x: Fraction) -> _Cost:
    """A whole Fraction as an int (for Costs and for printing), else the Fraction."""
    return int(x) if x.denominator == 1 else x
