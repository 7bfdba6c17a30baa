"""Numbers and units as the course writes them: the one place for printed numbers.

Used by :meth:`bubblekit.Costs.describe`, the pictures (:mod:`bubblekit.presentation.plotting`),
the explorers' readouts and the command line.
"""

from __future__ import annotations

from fractions import Fraction

from bubblekit._validate import Number

__all__ = ["format_number", "plural", "time_label"]

#: Whole floats below this print as integers (``12.0`` -> ``12``); larger ones keep their exponent.
_WHOLE_BELOW = 1e12


def format_number(x: Number, digits: int = 4, *, fractions: bool = True) -> str:
    """A number for a label or a readout.

    Whole numbers print as integers (``2``, ``Fraction(4, 2)`` -> ``2``, ``12.0`` -> ``12``);
    a Fraction prints exactly (``3/2``), or as a decimal with ``fractions=False``; any
    other number gets ``digits`` significant digits (``2.734`` for 2.734175...).
    """
    if isinstance(x, Fraction):
        if x.denominator == 1:
            return str(x.numerator)
        if fractions:
            return str(x)
        x = float(x)
    if isinstance(x, int):
        return str(x)
    xf = float(x)
    if xf.is_integer() and abs(xf) < _WHOLE_BELOW:
        return str(int(xf))
    return f"{xf:.{digits}g}"


def plural(unit: str) -> str:
    """A time unit after a number other than one: ``"slot"`` -> ``"slots"``; ``"ms"`` stays."""
    return "slots" if unit == "slot" else unit


def time_label(unit: str) -> str:
    """Axis label for a time unit: ``"time (slots)"``, ``"time (ms)"``, ``"time (µs)"``."""
    return {"slot": "time (slots)", "slots": "time (slots)", "ms": "time (ms)", "us": "time (µs)",
            "s": "time (s)", "ns": "time (ns)"}.get(unit, f"time ({unit})")
