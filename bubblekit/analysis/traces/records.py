"""What the reading steps hand to each other: the error type and the raw spans of one file.

Nothing here reads a file. Times in a :class:`RawSpan` are in the file's own unit
(microseconds for Chrome / Kineto JSON, the ``time_unit`` for CSV); :attr:`FileScan.units_per_ms`
converts them to ms.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Union

from bubblekit.actions import Action

__all__ = ["TraceError", "PathLike", "Pattern", "Thread", "RawSpan", "FileScan", "MAX_SHOWN", "shown", "first_missing"]

PathLike = Union[str, Path]
#: ``"auto"``, a family name, a regular expression (text or compiled) or a callable ``name -> Action | None``.
Pattern = Union[str, "re.Pattern[str]", Callable[[str], Union[Action, None]]]
#: A Chrome trace thread: ``(pid, tid)``; CSV files use ``("rank", r)``.
Thread = tuple[Any, Any]

#: How many files, events or actions a message lists before it says "and N more".
MAX_SHOWN = 4


class TraceError(ValueError):
    """A trace that cannot be read as a pipeline trace; the message names the file and the problem.

    Where it can, it also names the event (``traceEvents[17]``) or the CSV line, the field and the
    value. Used in lesson 06 (the reader raises it instead of returning a wrong bubble).
    """


class RawSpan(NamedTuple):
    """One candidate action found in a file, before steps and clocks are known.

    ``start`` and ``end`` are in the file's unit (us for JSON); ``stage`` is ``None`` when the
    event name has none (``Forward 3``: the stage is the rank). ``step`` is the CSV's step
    column (``None`` otherwise). ``where`` says where the event is (``traceEvents[17]``,
    ``line 4``) for messages. ``pretrimmed`` marks spans already trimmed to their operators.
    ``backward`` is set for an overlapped pair (``kind == "F&B"``, PyTorch's ``OVERLAP_F_B``):
    ``stage`` and ``mb`` are then its forward part's and ``backward`` its backward part.
    """

    family: str
    stage: int | None
    kind: str
    mb: int
    start: float
    end: float
    thread: Thread
    step: int | None
    where: str
    pretrimmed: bool = False
    backward: Action | None = None


@dataclass
class FileScan:
    """Everything one file holds that the later steps need (times in the file's unit).

    Attributes:
        path: the file, for messages.
        header: top-level JSON keys other than ``traceEvents`` (``distributedInfo``, ...).
        spans: the candidate actions, in file order.
        overlaps: ``PP:(0F3;3B1)OVERLAP_F_B`` ranges: (sub-actions text, start, end, thread, where).
        ops: per thread, the operator events' starts and ends, sorted by start (for trimming).
        thread_rank, process_rank: ranks named by ``thread_name`` / ``process_name`` metadata.
        steps: per thread, ``ProfilerStep#N`` ranges as (start, end, N).
        n_events: events read.
        units_per_ms: file units per millisecond (1000 for JSON).
        notes: what the scan ignored or repaired; they end up in the timeline's notes.
        gpu: the file's GPU side (:class:`~.gpu.GpuEvents`: kernels, copies, launches), or None.
    """

    path: str
    header: dict[str, Any] = field(default_factory=dict)
    spans: list[RawSpan] = field(default_factory=list)
    overlaps: list[tuple[str, float, float, Thread, str]] = field(default_factory=list)
    ops: dict[Thread, tuple[array, array]] = field(default_factory=dict)
    thread_rank: dict[Thread, int] = field(default_factory=dict)
    process_rank: dict[Any, int] = field(default_factory=dict)
    steps: dict[Thread, list[tuple[float, float, int]]] = field(default_factory=dict)
    n_events: int = 0
    units_per_ms: float = 1000.0
    notes: list[str] = field(default_factory=list)
    gpu: Any = None  # a gpu.GpuEvents when the file holds GPU activity (kernels, copies), else None


def shown(items: list[Any], limit: int = MAX_SHOWN) -> str:
    """``"a, b, c, d and 7 more"``: a list for a message, cut at ``limit`` items."""
    head = ", ".join(str(x) for x in items[:limit])
    return head if len(items) <= limit else f"{head} and {len(items) - limit} more"


def first_missing(present: set[int] | dict[int, Any], upto: int, limit: int = MAX_SHOWN) -> list[int]:
    """The first ``limit`` numbers in ``range(upto)`` not in ``present``, without walking all of ``range(upto)``.

    At most ``len(present) + limit`` numbers are tried, so an absurd ``upto`` (a rank or
    microbatch numbered 999999999) costs nothing.
    """
    out: list[int] = []
    k = 0
    while len(out) < limit and k < upto:
        if k not in present:
            out.append(k)
        k += 1
    return out
