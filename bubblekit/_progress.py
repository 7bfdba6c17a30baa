"""Progress lines for long searches, plans and sweeps (standard library only).

A job first estimates how long it will take; :func:`reporter` then decides whether to
report: never for quick jobs (so notebooks stay quiet), to standard error for long ones,
or through the caller's function.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Union

__all__ = ["Progress", "reporter", "REPORT_ABOVE_S"]

#: With ``progress=None``, jobs estimated to take longer than this (seconds) report progress.
REPORT_ABOVE_S = 3.0

#: What a caller may pass: ``None`` (report when long), ``True``/``False``, or a function of one line.
Progress = Union[bool, Callable[[str], None], None]


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def reporter(progress: Progress, what: str, total: int, expected_s: float) -> Callable[[int], None]:
    """A function ``step(done)`` that reports ``what: done of total`` at most once a second.

    ``progress``: ``None`` reports (to standard error) only when ``expected_s`` exceeds
    :data:`REPORT_ABOVE_S`; ``True`` always; ``False`` never; a callable receives the lines.
    """
    if progress is False or (progress is None and expected_s <= REPORT_ABOVE_S):
        return lambda done: None
    if progress is not None and progress is not True and not callable(progress):
        raise TypeError(f"progress must be None, True, False or a function of one line of text, got {progress!r}")
    emit: Callable[[str], None] = _to_stderr if progress is None or progress is True else progress  # type: ignore[assignment]
    start = time.monotonic()
    last = [start - 1.0]

    def step(done: int) -> None:
        now = time.monotonic()
        if done < total and now - last[0] < 1.0:
            return
        last[0] = now
        elapsed = now - start
        eta = elapsed / done * (total - done) if done else expected_s
        emit(f"{what}: {done} of {total} ({done / total:.0%}), {elapsed:.0f} s so far, about {eta:.0f} s to go")

    return step
