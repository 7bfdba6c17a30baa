"""Closed-form bubble formulas (pure Python, no dependencies).

Conventions (stated in lesson 00 and the README):

* ``bubble_ratio`` is the *fraction of total device-time* that is idle:
  idle / (p x makespan). This is the source article's ``b``.
* ``bubble_overhead`` is *bubble time over ideal time*: Megatron-LM's
  ``(p - 1) / m``. It is ``b / (1 - b)``.

The three names from the source article are kept with their meaning:
``bubble_ratio(p, m, v=1)``, ``utilization(p, m)`` and ``min_micro_batch(p, target)``.
All assume equal stages, no communication cost and the same forward and
backward cost on every stage; the simulator (:func:`bubblekit.simulate`) drops
those assumptions.
"""

from __future__ import annotations

from fractions import Fraction

from bubblekit._validate import check_fraction_open, check_int, check_number, exact_decimal

__all__ = [
    "bubble_ratio",
    "bubble_ratio_exact",
    "utilization",
    "bubble_overhead",
    "min_micro_batch",
    "ratio_from_overhead",
    "overhead_from_ratio",
]

#: Largest microbatch count :func:`min_micro_batch` searches by default (the article used 128).
DEFAULT_MAX_M = 1 << 20


def bubble_ratio_exact(p: int, m: int, v: int = 1) -> Fraction:
    """Exact bubble fraction ``(p - 1) / (m*v + p - 1)`` as a :class:`~fractions.Fraction`.

    ``v = 1`` is GPipe / 1F1B; ``v >= 2`` is interleaved 1F1B with ``v`` chunks per rank
    (Narayanan et al., 2021). Fraction of total device-time, not Megatron's overhead.

    Used in lessons 03 and 04.
    """
    p = check_int("p", p)
    m = check_int("m", m)
    v = check_int("v", v)
    return Fraction(p - 1, m * v + p - 1)


def bubble_ratio(p: int, m: int, v: int = 1) -> float:
    """Fraction of device-time spent idle: ``(p-1)/(m+p-1)``, or ``(p-1)/(m*v+p-1)`` for v > 1.

    Args:
        p: pipeline stages (ranks), an int >= 1.
        m: microbatches per training step, an int >= 1.
        v: virtual stages (chunks) per rank; 1 means an ordinary schedule.

    Unlike the source article's demo, ``v`` must be a whole number >= 1: the article's
    ``if v <= 1`` silently accepted ``v = 0`` or ``v = -3``.

    Used in lessons 00, 03, 05, 06, 08, 09 and 10.
    """
    return float(bubble_ratio_exact(p, m, v))


def utilization(p: int, m: int, v: int = 1) -> float:
    """Fraction of device-time doing useful work: ``1 - bubble_ratio = m*v / (m*v + p - 1)``.

    Used in lesson 03.
    """
    return float(1 - bubble_ratio_exact(p, m, v))


def bubble_overhead(p: int, m: int, v: int = 1) -> float:
    """Megatron's convention: bubble time over ideal time, ``(p - 1) / (m * v)``.

    This is *not* a fraction of the step: with p = 8, m = 4 it is 1.75 (175 %),
    while :func:`bubble_ratio` is 0.636.

    Used in lessons 00, 03, 05 and 09.
    """
    p = check_int("p", p)
    m = check_int("m", m)
    v = check_int("v", v)
    return float(Fraction(p - 1, m * v))


def overhead_from_ratio(ratio: float) -> float:
    """Convert a fraction-of-total ``b`` into Megatron's overhead ``b / (1 - b)``.

    ``ratio`` must be a number in ``[0, 1)``.

    Used in lessons 03 and 06.
    """
    r = check_number("ratio", ratio, minimum=0)
    if not r < 1:
        raise ValueError(f"ratio must be in [0, 1) (a fraction of the step), got {ratio!r}")
    return float(r) / (1.0 - float(r))


def ratio_from_overhead(overhead: float) -> float:
    """Convert Megatron's overhead ``o`` into a fraction of total time ``o / (1 + o)``.

    ``overhead`` must be a finite number >= 0.

    Used in lesson 03.
    """
    o = float(check_number("overhead", overhead, minimum=0))
    return o / (1.0 + o)


def _exact_target(target: object) -> Fraction:
    """The target as the number a person wrote: a Fraction exactly, a float as its shortest decimal.

    ``0.3`` means 3/10 (not the nearest binary float), ``Fraction(1, 3)`` means 1/3, and
    ``numpy.float32(0.7)`` means 0.7 (its own shortest decimal, not 0.699999988...): with
    ``p = 8`` that makes ``m = 3`` the answer (its bubble is exactly 7/10), as
    :func:`bubblekit.symbolic.min_micro_batch` finds too (both read it with ``exact_decimal``).
    """
    return exact_decimal("target", target)


def min_micro_batch(p: int, target: float = 0.2, v: int = 1, max_m: int = DEFAULT_MAX_M) -> int | None:
    """Smallest ``m`` with ``bubble_ratio(p, m, v) <= target``, or ``None`` above ``max_m``.

    Solved in closed form, ``m >= (p - 1)(1 - t) / (t v)``, then checked exactly with
    fractions, reading ``target`` as the decimal it was written as (``0.3`` is 3/10). The
    article's linear search compares floats instead; the two agree except where float
    rounding decides a tie, and the article searched only m <= 128 (``None`` beyond).

    Args:
        p: pipeline stages, int >= 1.
        target: largest acceptable bubble fraction, strictly between 0 and 1.
        v: chunks per rank (interleaved), int >= 1.
        max_m: the search limit; ``None`` is returned when the answer is larger.

    Used in lessons 01, 03, 05, 06 and 10.
    """
    p = check_int("p", p)
    check_fraction_open("target", target)
    v = check_int("v", v)
    max_m = check_int("max_m", max_m)
    # Read the target as the number a person typed (0.3 means 3/10, not the nearest binary
    # float), so an exact hit such as p = 4, m = 7, b = 3/10 counts as meeting 0.3.
    tf = _exact_target(target)
    # Smallest integer m with (p-1)/(m v + p - 1) <= t.
    need = (p - 1) * (1 - tf) / (tf * v)
    m = max(1, -(-need.numerator // need.denominator))  # ceil
    while m > 1 and Fraction(p - 1, (m - 1) * v + p - 1) <= tf:
        m -= 1
    while Fraction(p - 1, m * v + p - 1) > tf:
        m += 1
    return m if m <= max_m else None
