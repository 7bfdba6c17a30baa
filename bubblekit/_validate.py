"""Input validation shared by every public function.

Each helper raises a ``TypeError`` or ``ValueError`` whose message names the
parameter, the value received and what is allowed, so a learner can fix the
call without reading the source.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from fractions import Fraction
from typing import Any, Union

__all__ = [
    "Number", "check_int", "check_number", "check_fraction_open", "check_str", "check_choice", "check_bool",
    "check_sequence", "check_keywords", "exact_decimal", "MAX_RANGE",
]

#: The longest range of whole numbers a function walks one by one (``legal_ms(..., up_to=...)``):
#: a hundred thousand values take well under a second; larger ones are refused with this limit named.
MAX_RANGE = 100_000

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
    value = int(value)  # numpy ints become plain ints
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
    if isinstance(value, numbers.Integral):
        value = int(value)  # numpy ints become plain ints (exact)
    elif not isinstance(value, Fraction):
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


def check_bool(name: str, value: Any) -> bool:
    """Return ``value`` if it is ``True`` or ``False`` (a numpy bool too); raise ``TypeError`` otherwise."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {value!r} of type {type(value).__name__}")


def check_str(name: str, value: Any, *, empty: bool = False) -> str:
    """Return ``value`` if it is a string (non-empty unless ``empty``); raise otherwise."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {value!r} of type {type(value).__name__}")
    if not empty and not value.strip():
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    return value


def check_choice(name: str, value: Any, choices: Sequence[Any]) -> Any:
    """Return ``value`` if it is one of ``choices``; raise a ``ValueError`` listing them otherwise.

    A value of another type than the choices (``None``, a number for a name) is a ``TypeError``.
    """
    kinds = {type(c) for c in choices}
    if kinds and not isinstance(value, tuple(kinds)):
        raise TypeError(f"{name} must be one of {list(choices)}, got {value!r} of type {type(value).__name__}")
    if value not in choices:
        import difflib

        close = difflib.get_close_matches(value, [c for c in choices if isinstance(c, str)], n=3) \
            if isinstance(value, str) else []
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}{hint}")
    return value


def check_sequence(name: str, value: Any, *, empty: bool = False) -> tuple[Any, ...]:
    """``value`` as a tuple: a list, tuple, range or one-dimensional numpy array (its items as plain Python).

    Strings, bytes, dicts, sets and scalars are refused (``TypeError``); an empty sequence is a
    ``ValueError`` unless ``empty``.
    """
    if hasattr(value, "ndim") and hasattr(value, "tolist"):  # a numpy array, without importing numpy
        if value.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional, got an array of shape {getattr(value, 'shape', '?')}")
        value = value.tolist()
    if isinstance(value, (str, bytes, Mapping, AbstractSet)) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a list or tuple, got {value!r} of type {type(value).__name__}")
    if not empty and len(value) == 0:
        raise ValueError(f"{name} must not be empty")
    return tuple(value)


def check_keywords(where: str, given: Iterable[str], allowed: Iterable[str]) -> None:
    """Raise a ``TypeError`` naming each keyword of ``given`` that is not ``allowed`` (and the allowed ones)."""
    allowed = list(allowed)
    unknown = [k for k in given if k not in allowed]
    if unknown:
        import difflib

        close = [c for k in unknown for c in difflib.get_close_matches(k, allowed, n=1)]
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise TypeError(f"{where} got unknown option(s) {', '.join(map(repr, unknown))}: allowed are "
                        f"{', '.join(allowed)}{hint}")


def exact_decimal(name: str, value: Any) -> Fraction:
    """A real number as the decimal a person wrote: ``0.3`` is 3/10, ``numpy.float32(0.7)`` is 7/10.

    Ints and Fractions are exact already; a float (numpy's too) is read from its shortest
    repr (``str``), so the binary rounding of ``0.3`` or of a float32 decides nothing. NaN
    and infinities are refused.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {value!r} of type {type(value).__name__}")
    if isinstance(value, numbers.Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    x = float(value)
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    try:
        return Fraction(str(value))
    except ValueError:
        return Fraction(repr(x))
