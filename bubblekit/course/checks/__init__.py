"""Exercise self-checks: ``check("03.2", answer)`` says right or not yet, with a hint.

Learners::

    from bubblekit.course.checks import check, progress
    check("03.2", my_answer)   # "✓ 03.2 correct" or "✗ 03.2 not yet — too high; hint: ..."
    progress("03")             # which exercises of lesson 03 are done this session

Lesson authors register exercises in ``bubblekit/course/checks/lessonNN.py`` with
:func:`exercise` (see :mod:`bubblekit.course.checks._registry`). Every ``lesson*.py`` module in
this package is imported on the first :func:`check`. Expected values are computed by
bubblekit when checked, never stored; no message shows them. This package is part of the
pure core: it imports no matplotlib, widgets or torch.

Grading policy
--------------
Every exercise follows these rules unless its registration says why not (``exact=True``
where its text asks for an exact value, or its own ``compare`` for schedules, letters and
expressions, with the reason in its docstring).

Numbers
    * A number is right when it equals the expected value **rounded to the significant
      digits you gave**, and you gave at least 3. For 3/11 = 0.272727...: ``0.273``,
      ``0.2727`` and ``0.27273`` are right; ``0.274`` is too high. A value given at full
      precision (what Python computes) is right within the exercise's tolerance (relative
      1e-9 unless it says otherwise).
    * Two significant digits that round right (``0.27``) get **"close: give at least 3
      significant digits"**, never "too high" or "too low". A float forgets trailing zeros
      (``0.190`` arrives as ``0.19``), so fewer digits are right when they equal the value
      rounded to 3 (``0.19`` for 0.18987...).
    * More than 3 significant digits whose first 3 are right and whose last one is off by at
      most one unit (``5844`` for 5843.48, ``0.2728`` for 0.27273) are a rounding difference:
      right, with a note saying so.
    * One significant digit that rounds right (``0.3``) is also "close"; but a recognised
      mistake (below) is named only for an answer of at least **two** significant digits (or an
      exact one): one digit is too few to tell which mistake it was.
    * A single-digit whole number (``2``, ``"2"``) is read like its float (``2.0``): two
      digits, so ``2`` and ``2.0`` always get the same verdict (for 2.27, both are "too low").
    * "too high" / "too low" are said only when the answer is outside that rounding (or
      the tolerance), and no message ever shows the expected value. Where an exercise asks
      for an **estimate** (read off a trace), its tolerance says how far off is still right.
    * A **whole-number** expected value (a count: microbatches, ranks, messages, a makespan
      in whole slots) must be given exactly: rounding a count makes it another count.
    * Trailing zeros of a whole number (``5800``) may or may not be significant: both
      readings are tried.
    * A float type that carries fewer digits (numpy float32: 6) is read to its precision.

Percentages
    Where the answer is a fraction of something (a bubble ratio, Megatron's overhead, a
    utilisation, one peak or message count over another; every exercise whose answer is a number
    below 1 without a unit is registered with ``fraction_of``), a percentage **written with its sign**
    as text (``"27.3%"``) is read as the fraction 0.273 and accepted, with a note. A bare
    number that is 100 times the fraction (``27.3``) is not: the check answers "that looks
    like a percentage". Where the answer is not a fraction, ``"27.3%"`` is refused with
    "give a plain number", and is not counted as a try (a form problem, like a unit that is another one).

Units
    Where the question asks for a number in a unit (registered with ``unit=``: slots, ms, minutes, yuan,
    dollars, GPU-hours, microbatches, messages, microbatch activations, F, a factor), the number may be
    written with that unit in either language (``"14 ms"``, ``"27 slots"``, ``"135个"``, ``"5843.48元"``,
    ``"$176,947"``, ``"16x"``) and is read as the number. A number in another unit (``"0.3 s"`` where ms are
    asked), a unit where the answer has none, and words that are no unit are each told so, and such an answer
    is not counted as a try (no hint tier is used up). The units and how each may be written are listed in
    :mod:`bubblekit.course.checks._units`.

Exact answers
    Only where the exercise text says **exact** must the answer be exact
    (``fractions.Fraction``, an int, a sympy Rational, or text like ``"3/11"``); a float or
    decimal equal to it after rounding is then "close, but ... exact". Everywhere else a
    Fraction, a float and a decimal are all just numbers.

Types that mean the same value
    int, float, ``Fraction``, ``Decimal``, numpy scalars and arrays, sympy numbers, and text
    holding a number (``"0.273"``, ``"27.3%"``, ``"5,843"``, ``"1e-3"``, ``"3/11"``, and their full-width
    forms ``"７／１１"``, ``"17.9％"``) are numbers; a decimal comma (``"0,273"``) is read as a decimal point, with a note, and text
    such as ``"5,843"`` (a thousands comma) that is right only with its comma read as a point gets
    "that looks like a decimal comma"; a tuple and a list (or an array) are the same sequence; a set may be given as a
    list; dict keys and text answers ignore case, spaces, ``-`` and ``_`` (``"ZB-H1"`` =
    ``"zb h1"``); sympy expressions are compared by simplification, with symbols matched by
    name. ``True``/``False`` are not numbers.

Expressions written as text
    A derivation may be given as a sympy expression or as text, written the way the course prints its
    formulas: ``"(p − 1)/(m·v + p − 1)"`` (the minus sign ``−``, ``·`` and ``×`` for a product, full-width
    ``／`` and ``－``), implicit products (``"(p-1)(1-b)"``, ``"2p"``, and a name before a parenthesis:
    ``"2c(p − 1)"``, ``"t_f (m+p-1)"``), ``min``/``max`` (or ``Min``/``Max``) and ``ceiling``, ``^`` for a power and
    ``b^*`` (or ``b*``) for ``b_star``, a leading ``name =`` and a closing ``.``/``。`` or ``= name``; a name that is a run of
    one-letter symbols is their product (``"mv"`` is ``m*v``, as lesson 03 prints it). Every other name is a symbol
    (``I`` and ``E`` are not sympy's constants); one the course does not use (``P``, ``F``) is named and the
    answer is not counted as a try. Text that still cannot be read is told how to write it, and is not counted as a
    try; text that is no number where a number is asked is not counted either. A number may be written after
    ``name =``, ``≈``, ``~`` or ``约`` (``"m = 135"``, ``"约5843元"``, ``"p = 1"``) and before a closing full stop.

Picks among a few choices
    A rank, a depth or a v is right or not, never "too high / too low". A rank may be written ``"rank 1"`` or
    ``"r1"`` in every rank question (01.2, 02.5, 06.x, 10.x); text that is no number, or a number with words
    (``"4 chunks"``, ``"1 apples"``), is told so and not counted as a try, as for any other number.

Schedules written as text
    Kind letters ignore case (``"0f0"`` is ``0F0``). Text the schedule reader cannot read is told the reader's
    words, in the learner's language, and is not counted as a try; a missing action or a deadlock is a mistake.

Several right answers
    Where a question has several right answers, each is accepted (registered as ``AnyOf``).

Feedback on a part
    A wrong item of a sequence or dict is named once, 1-based, never nested: ``item 2,
    entry 5 is not right (too high)`` for the fifth number of the second list.

Hints
    The first "not yet" gives a nudge; a repeated wrong answer gets a more specific hint
    (attempts are counted per exercise in this session, the Python kernel). Recognised
    mistakes are named: a percentage, Megatron's overhead (p-1)/m given for the fraction of
    the step, p and m swapped, a schedule over its memory cap (which is not a deadlock), a
    count off by one hop, Megatron's (p - 1)/m used to pick the smallest m. Hints lead to the method
    (what to count, compare or draw), never to a function that returns the answer; hints in
    the interview bank (10.x) never state the formula that is the answer.

Marks
    ``✓`` correct, ``≈`` close, ``✗`` not yet, ``○`` no answer yet: text symbols, never emoji.
    Notebooks show them as styled HTML in fonts that have them (DejaVu Sans, Segoe UI
    Symbol, Apple Symbols, Noto Sans Symbols), beside a word that says the same; a terminal
    that cannot show them gets ``[ok]``, ``[~]``, ``[x]``, ``[ ]`` (or set
    ``BUBBLEKIT_ASCII=1``).

Autograded tests
    :func:`require` grades by the same policy and raises ``AssertionError`` (its message is
    the line ``check`` shows, with the first hint) unless the answer is right: the test cells
    of the course's nbgrader assignments call it (``require("03.2", lambda: U_v)``). It does
    not count as an attempt.

Progress
    :func:`progress` lists the exercises of a lesson and which are done this session;
    :func:`reset_progress` forgets the session's attempts.
"""

from __future__ import annotations

from bubblekit.course.checks._grading import AnyOf, Graded, Verdict, grade
from bubblekit.course.checks._registry import (
    CheckResult,
    Exercise,
    Mistake,
    Progress,
    check,
    compare_values,
    exercise,
    ids,
    load_lessons,
    progress,
    require,
    reset_progress,
)


def __getattr__(name: str) -> object:
    """``bk.checks.lesson10`` (any ``lessonNN`` module) without importing it first: loaded on first use."""
    import re

    if re.fullmatch(r"lesson\d{2}", name):
        import importlib

        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"{__name__}.{name}":  # a lesson module that exists but fails: show why
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "check",
    "require",
    "progress",
    "reset_progress",
    "exercise",
    "Mistake",
    "AnyOf",
    "Graded",
    "CheckResult",
    "Progress",
    "Exercise",
    "ids",
    "load_lessons",
    "compare_values",
    "grade",
    "Verdict",
]
