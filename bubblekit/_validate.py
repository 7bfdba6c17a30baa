"""Input validation shared by every public function.

Each helper raises a ``TypeError`` or ``ValueError`` whose message names the
parameter, the value received and what is allowed, so a learner can fix the
call without reading the source.
"""

from __future__ import annotations

import numbers
from fractions import Fraction
from typing import Any, Union

__all__ = ["Number", "check_int", "check_number", "check_fraction_open"]

#: The numbers bubblekit computes with: ints and Fractions stay exact, floats are measured values.
Number = Union[int, float, Fraction]


def check_int(name: str, value: Any, *, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` if it is an ``int`` in ``[minimum, maximum]``; raise otherwise.

    ``bool`` is rejected even though it is an ``int`` subclass, and floats are
    rejected even when integral (``4.0``): a pipeline has a whole number of
    stages and microbatches.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{name} must be a whole number (int) >= {minimum}, got {value!r} "
            f"of type {type(value).__name__}"
        )
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_number(
    name: str, value: Any, *, minimum: float = 0.0, allow_equal: bool = True
) -> int | float | Fraction:
    """Return ``value`` if it is a real number above ``minimum``; raise otherwise.

    Ints and ``Fraction`` are kept as they are (exact arithmetic); other reals
    become ``float``. NaN and infinities are rejected.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a number, got {value!r} of type {type(value).__name__}"
        )
    if not isinstance(value, (int, Fraction)):
        value = float(value)
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    ok = value >= minimum if allow_equal else value > minimum
    if not ok:
        relation = ">=" if allow_equal else ">"
        raise ValueError(f"{name} must be {relation} {minimum}, got {value!r}")
    return value


def check_fraction_open(name: str, value: Any) -> float:
    """Return ``value`` as a float if it lies strictly between 0 and 1; raise otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a number strictly between 0 and 1, got {value!r} "
            f"of type {type(value).__name__}"
        )
    f = float(value)
    if not 0.0 < f < 1.0:
        raise ValueError(f"{name} must be strictly between 0 and 1 (e.g. 0.2 for 20%), got {value!r}")
    return f
