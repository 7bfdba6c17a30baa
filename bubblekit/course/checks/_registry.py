"""The exercise registry behind :func:`bubblekit.course.checks.check`.

Lesson authors register one function per exercise in ``bubblekit/checks/lessonNN.py``::

    import bubblekit as bk
    from bubblekit.course.checks._registry import exercise

    @exercise("03.2", hint="Count the idle slots of rank 0 first.")
    def _():
        return bk.bubble_ratio(8, 16)     # computed by bubblekit, never a typed literal

The function takes no arguments and returns the *expected* value; it is only called
when a learner checks an answer, so importing the lesson modules is cheap.

Comparison rules (see :func:`compare_values`):

* numbers: ``math.isclose(answer, expected, rel_tol, abs_tol)``;
* :class:`~fractions.Fraction`: exactly (a float answer is "close but not exact");
* ``bool``: exactly;
* strings: ignoring case and all whitespace;
* sequences (list, tuple, range, arrays with ``tolist``): same length, element by element;
* sets: same elements; dicts: same keys, values compared by these rules;
* sympy expressions: ``simplify(answer - expected) == 0``;
* anything else: ``==``;
* or the exercise's own ``compare(answer, expected) -> (ok, message)``.

No text produced here (messages, reprs, HTML, exceptions) contains the expected value,
and :class:`CheckResult` does not store it.
"""

from __future__ import annotations

import difflib
import functools
import html
import importlib
import inspect
import math
import numbers
import re
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

__all__ = [
    "Exercise",
    "CheckResult",
    "REGISTRY",
    "exercise",
    "check",
    "ids",
    "unregister",
    "compare_values",
]

#: Exercise ids: two-digit lesson, a dot, the exercise number, an optional letter (``"03.2"``, ``"07.4b"``).
ID_PATTERN = re.compile(r"^\d{2}\.\d+[a-z]?$")

Compare = Callable[[Any, Any], Any]
Status = Literal["correct", "wrong", "missing"]


@dataclass(frozen=True)
class Exercise:
    """One registered exercise.

    Attributes:
        id: ``"NN.k"`` (lesson ``NN``, exercise ``k``).
        expected: zero-argument function computing the expected value with bubblekit.
        hint: one sentence shown with every "not yet" (never the answer).
        rel_tol: relative tolerance for numbers (default ``1e-9``).
        abs_tol: absolute tolerance for numbers (default ``0``).
        compare: optional ``compare(answer, expected)`` returning ``(ok, message)`` or a bool;
            ``message`` must not contain the expected value.
    """

    id: str
    expected: Callable[[], Any]
    hint: str
    rel_tol: float = 1e-9
    abs_tol: float = 0.0
    compare: Compare | None = None

    @property
    def origin(self) -> str:
        """``module:line`` of the registered function (for duplicate-id errors)."""
        code = getattr(self.expected, "__code__", None)
        line = code.co_firstlineno if code is not None else "?"
        return f"{getattr(self.expected, '__module__', '?')}:{line}"


#: Every registered exercise by id. Lesson modules fill it; tests may add and remove entries.
REGISTRY: dict[str, Exercise] = {}


def exercise(
    id: str,
    *,
    hint: str,
    rel_tol: float = 1e-9,
    abs_tol: float = 0,
    compare: Compare | None = None,
) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
    """Register the decorated zero-argument function as the expected value of exercise ``id``.

    Args:
        id: ``"NN.k"``: two-digit lesson number, dot, exercise number, optional letter.
        hint: a nudge shown whenever the answer is not yet right. Never the answer itself.
        rel_tol: relative tolerance for numeric answers (``math.isclose``), >= 0.
        abs_tol: absolute tolerance for numeric answers, >= 0 (in the answer's unit).
        compare: optional ``compare(answer, expected) -> (ok, message)`` for answers the
            default rules do not cover (schedules, free text, sets of actions, ...).

    Returns the function unchanged. Registering an id twice from a different place raises
    ``ValueError``; re-registering from the same module and line (a module reload) replaces.
    """
    if not isinstance(id, str) or not ID_PATTERN.match(id):
        raise ValueError(f"exercise id must look like 'NN.k' (e.g. '03.2' or '07.4b'), got {id!r}")
    if not isinstance(hint, str) or not hint.strip():
        raise ValueError(f"exercise {id}: hint must be a non-empty string, got {hint!r}")
    for name, tol in (("rel_tol", rel_tol), ("abs_tol", abs_tol)):
        if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not (0 <= float(tol) < math.inf):
            raise ValueError(f"exercise {id}: {name} must be a finite number >= 0, got {tol!r}")
    if compare is not None and not callable(compare):
        raise TypeError(f"exercise {id}: compare must be a callable (answer, expected) -> (ok, message), got {compare!r}")

    def register(fn: Callable[[], Any]) -> Callable[[], Any]:
        if not callable(fn):
            raise TypeError(f"exercise {id}: @exercise must decorate a function, got {fn!r}")
        entry = Exercise(id, fn, hint.strip(), float(rel_tol), float(abs_tol), compare)
        old = REGISTRY.get(id)
        if old is not None and old.origin != entry.origin:
            raise ValueError(f"exercise id {id!r} registered twice: at {old.origin} and at {entry.origin}")
        REGISTRY[id] = entry
        return fn

    return register


def unregister(id: str) -> None:
    """Remove exercise ``id`` from the registry (for tests); unknown ids are ignored."""
    REGISTRY.pop(id, None)


_loaded = False


def load_lessons() -> None:
    """Import every ``bubblekit/checks/lesson*.py`` module once (they register exercises)."""
    global _loaded
    if _loaded:
        return
    import pkgutil

    package = importlib.import_module(__package__ or "bubblekit.course.checks")
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name.startswith("lesson"):
            importlib.import_module(f"{__package__}.{info.name}")
    _loaded = True


def ids() -> list[str]:
    """All registered exercise ids, sorted (lesson modules are imported first)."""
    load_lessons()
    return sorted(REGISTRY, key=_id_key)


def _id_key(id: str) -> tuple[int, int, str]:
    match = re.match(r"^(\d+)\.(\d+)(.*)$", id)
    if match is None:
        return (10**9, 0, id)
    return (int(match.group(1)), int(match.group(2)), match.group(3))


# ----------------------------------------------------------------------------- result


@dataclass(frozen=True)
class CheckResult:
    """The outcome of :func:`check`: truthy when the answer is right.

    Attributes:
        id: the exercise id.
        status: ``"correct"``, ``"wrong"`` or ``"missing"`` (no answer yet).
        detail: what is wrong, in words (empty when correct); never the expected value.
        hint: the exercise's hint (shown unless correct).

    Displays as ``✅ 03.2 correct`` or ``❌ 03.2 not yet — hint: ...`` in a notebook.
    """

    id: str
    status: Status
    detail: str = ""
    hint: str = ""

    def __bool__(self) -> bool:
        return self.status == "correct"

    @property
    def correct(self) -> bool:
        """True when the answer is right."""
        return self.status == "correct"

    @property
    def message(self) -> str:
        """One line: mark, id, verdict, and (unless correct) what is wrong and the hint."""
        if self.status == "correct":
            return f"✅ {self.id} correct"
        mark, verdict = ("✏️", "no answer yet") if self.status == "missing" else ("❌", "not yet")
        detail = f"{self.detail}; " if self.detail else ""
        return f"{mark} {self.id} {verdict} — {detail}hint: {self.hint}"

    def __repr__(self) -> str:
        return self.message

    __str__ = __repr__

    def _repr_html_(self) -> str:
        colour = {"correct": "#009E73", "wrong": "#D55E00", "missing": "#0072B2"}[self.status]
        return (
            f'<div class="bubblekit-check bubblekit-check-{self.status}" '
            f'style="border-left:4px solid {colour};padding:2px 8px">{html.escape(self.message)}</div>'
        )


# ----------------------------------------------------------------------------- check


def check(id: str, answer: Any) -> CheckResult:
    """Check ``answer`` for exercise ``id`` and return a :class:`CheckResult` (truthy when right).

    The result displays itself in a notebook (``✅``/``❌`` with a hint); ``print(result)``
    shows the same line. ``None``, ``...``, ``NotImplemented`` or an answer function that still raises
    ``NotImplementedError`` give "no answer yet". A zero-argument function is called and
    its return value checked, unless the exercise has its own ``compare``.

    Raises ``ValueError`` (listing close ids) for an unknown ``id``.
    """
    if not isinstance(id, str):
        raise TypeError(f"id must be an exercise id string like '03.2', got {id!r} of type {type(id).__name__}")
    load_lessons()
    key = id.strip()
    if key not in REGISTRY:
        raise ValueError(_unknown_id_message(id))
    ex = REGISTRY[key]
    try:
        if ex.compare is None and _is_answer_function(answer):
            answer = answer()
        if answer is None or answer is Ellipsis or answer is NotImplemented:
            return CheckResult(ex.id, "missing", "", ex.hint)
        try:
            expected = ex.expected()
        except Exception as err:  # an authoring bug: say where, never show the value
            raise RuntimeError(
                f"exercise {ex.id}: computing its expected value failed ({type(err).__name__}); "
                f"this is a bug in {ex.origin}, not in your answer"
            ) from None
        if ex.compare is not None:
            ok, detail = _normalise_verdict(ex.compare(answer, expected), ex.id)
        else:
            ok, detail = compare_values(answer, expected, rel_tol=ex.rel_tol, abs_tol=ex.abs_tol)
    except NotImplementedError:
        return CheckResult(ex.id, "missing", "", ex.hint)
    return CheckResult(ex.id, "correct" if ok else "wrong", "" if ok else detail, "" if ok else ex.hint)


def _is_answer_function(answer: Any) -> bool:
    """Plain functions and lambdas count as answer functions, classes and objects do not."""
    return inspect.isfunction(answer) or inspect.ismethod(answer) or isinstance(answer, functools.partial)


def _normalise_verdict(verdict: Any, id: str) -> tuple[bool, str]:
    if isinstance(verdict, tuple) and len(verdict) == 2:
        return bool(verdict[0]), str(verdict[1])
    if isinstance(verdict, bool):
        return verdict, ""
    raise TypeError(f"exercise {id}: compare must return (ok, message) or a bool, got {type(verdict).__name__}")


def _unknown_id_message(id: str) -> str:
    known = ids()
    close = difflib.get_close_matches(id.strip(), known, n=5, cutoff=0.5)
    lesson = id.strip()[:2]
    same_lesson = [k for k in known if k.startswith(lesson + ".")]
    shown = close or same_lesson
    text = f"unknown exercise id {id!r}"
    if shown:
        text += f"; close ids: {', '.join(shown)}"
    elif known:
        text += f"; known ids: {', '.join(known[:30])}{' ...' if len(known) > 30 else ''}"
    else:
        text += "; no exercises are registered"
    return text


# ----------------------------------------------------------------------------- comparison


def _is_number(x: Any) -> bool:
    if isinstance(x, bool) or type(x).__name__ == "bool_":
        return False
    if isinstance(x, numbers.Number):
        return isinstance(x, numbers.Real)
    return bool(getattr(x, "is_number", False)) and bool(getattr(x, "is_real", False))  # sympy numbers


def _as_fraction(x: Any) -> Fraction | None:
    """Exact value of ``x`` if it is an int, Fraction or sympy Rational; else None."""
    if isinstance(x, bool):
        return None
    if isinstance(x, numbers.Rational):
        return Fraction(int(x.numerator), int(x.denominator))
    if getattr(x, "is_Rational", False):
        return Fraction(int(x.p), int(x.q))
    if isinstance(x, numbers.Integral):
        return Fraction(int(x))
    return None


def _is_sympy_expr(x: Any) -> bool:
    return hasattr(x, "free_symbols") and hasattr(x, "subs") and not _is_number(x)


def compare_values(answer: Any, expected: Any, *, rel_tol: float = 1e-9, abs_tol: float = 0.0) -> tuple[bool, str]:
    """Compare ``answer`` with ``expected`` by the module's rules; return ``(ok, message)``.

    ``message`` says what is wrong (type, length, which item, too high/low) and never
    contains the expected value.
    """
    if hasattr(answer, "tolist") and not isinstance(answer, (str, bytes)) and not _is_number(answer):
        answer = answer.tolist()
    if hasattr(expected, "tolist") and not isinstance(expected, (str, bytes)) and not _is_number(expected):
        expected = expected.tolist()

    if isinstance(expected, bool) or type(expected).__name__ == "bool_":
        if isinstance(answer, bool) or type(answer).__name__ == "bool_":
            return bool(answer) == bool(expected), "not the right truth value"
        return False, f"expected True or False, got {type(answer).__name__}"

    if isinstance(expected, Fraction):
        if not _is_number(answer):
            return False, f"expected a number (an exact fractions.Fraction), got {type(answer).__name__}"
        exact = _as_fraction(answer)
        if exact is None:
            close = math.isclose(float(answer), float(expected), rel_tol=1e-9)
            return False, ("close, but this exercise wants the exact value: use fractions.Fraction" if close
                           else _direction(float(answer), float(expected)))
        return exact == expected, _direction(float(exact), float(expected))

    if _is_number(expected):
        if isinstance(answer, str):
            return False, "expected a number, got a string (drop the quotes)"
        if not _is_number(answer):
            return False, f"expected a number, got {type(answer).__name__}"
        a, e = float(answer), float(expected)
        if math.isnan(a):
            return False, "your answer is NaN (not a number)"
        if math.isclose(a, e, rel_tol=rel_tol, abs_tol=abs_tol):
            return True, ""
        if 0 < abs(e) <= 1 and math.isclose(a / 100, e, rel_tol=max(rel_tol, 1e-6), abs_tol=abs_tol / 100):
            return False, "this looks like a percentage: give a fraction (0.25, not 25)"
        return False, _direction(a, e)

    if isinstance(expected, str):
        if not isinstance(answer, str):
            return False, f"expected text (a str), got {type(answer).__name__}"
        return _norm_text(answer) == _norm_text(expected), "not the expected text"

    if _is_sympy_expr(expected):
        try:
            import sympy

            diff = sympy.simplify(sympy.sympify(answer) - expected)
        except Exception:
            return False, f"could not read your answer as a sympy expression (got {type(answer).__name__})"
        return diff == 0, "not equal to the expected expression"

    if isinstance(expected, Mapping):
        if not isinstance(answer, Mapping):
            return False, f"expected a dict, got {type(answer).__name__}"
        if set(answer) != set(expected):
            missing = len(set(expected) - set(answer))
            extra = len(set(answer) - set(expected))
            return False, f"the keys are not right ({missing} missing, {extra} unexpected)"
        for key in expected:
            ok, why = compare_values(answer[key], expected[key], rel_tol=rel_tol, abs_tol=abs_tol)
            if not ok:
                return False, f"the value for key {key!r} is not right ({why})"
        return True, ""

    if isinstance(expected, Set):
        if not isinstance(answer, (Set, list, tuple)):
            return False, f"expected a set, got {type(answer).__name__}"
        got = set(answer)
        if got == set(expected):
            return True, ""
        missing, extra = len(set(expected) - got), len(got - set(expected))
        return False, f"{missing} element(s) missing, {extra} that should not be there"

    if isinstance(expected, (list, tuple, range)):
        if isinstance(answer, (str, bytes)) or not isinstance(answer, (Sequence, range)):
            return False, f"expected a sequence (list or tuple), got {type(answer).__name__}"
        if len(answer) != len(expected):
            return False, f"expected {len(expected)} items, got {len(answer)}"
        for i, (a, e) in enumerate(zip(answer, expected)):
            ok, why = compare_values(a, e, rel_tol=rel_tol, abs_tol=abs_tol)
            if not ok:
                return False, f"item {i} is not right ({why})"
        return True, ""

    try:
        ok = bool(answer == expected)
    except Exception:
        ok = False
    return ok, "" if ok else f"not the expected {type(expected).__name__}"


def _direction(answer: float, expected: float) -> str:
    if answer > expected:
        return "too high"
    if answer < expected:
        return "too low"
    return "not exact"


def _norm_text(text: str) -> str:
    return "".join(text.split()).casefold()
