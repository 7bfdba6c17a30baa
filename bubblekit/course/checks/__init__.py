"""Exercise self-checks: ``check("03.2", answer)`` says right or not yet, with a hint.

Learners::

    from bubblekit.course.checks import check
    check("03.2", my_answer)        # displays "✅ 03.2 correct" or "❌ 03.2 not yet — hint: ..."

Lesson authors register exercises in ``bubblekit/checks/lessonNN.py`` with
:func:`exercise` (see :mod:`bubblekit.course.checks._registry` for the comparison rules). Every
``lesson*.py`` module in this package is imported on the first :func:`check`.

Expected values are computed by bubblekit when checked; no message shows them.
This package is part of the pure core: it imports no matplotlib, widgets or torch.
"""

from __future__ import annotations

from bubblekit.course.checks._registry import CheckResult, Exercise, check, compare_values, exercise, ids, load_lessons

__all__ = ["check", "exercise", "CheckResult", "Exercise", "ids", "load_lessons", "compare_values"]
