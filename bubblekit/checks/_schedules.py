"""Reading a schedule the learner wrote, for the checks that grade schedules.

Shared by every lesson's schedule exercises so that a learner gets the same words for the
same mistake everywhere.
"""

from __future__ import annotations

from typing import Any

import bubblekit as bk

__all__ = ["as_schedule"]


def as_schedule(answer: Any) -> tuple[bk.Schedule | None, str]:
    """``(schedule, "")`` for a ``bk.Schedule`` or readable text, else ``(None, why)``.

    Text is read with :meth:`bubblekit.Schedule.from_text` without validation: missing or
    duplicate actions are reported later by :func:`bubblekit.simulate`, next to deadlocks.
    """
    if isinstance(answer, bk.Schedule):
        return answer, ""
    if not isinstance(answer, str):
        return None, (
            "give the schedule as text ('rank 0: 0F0 0F1 ...') or a bk.Schedule, "
            f"got {type(answer).__name__}"
        )
    try:
        return bk.Schedule.from_text(answer, validate=False), ""
    except bk.ScheduleError as exc:
        return None, f"the text cannot be read as a schedule: {exc}"
