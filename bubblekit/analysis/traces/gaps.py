"""Step 5, gap reports: the idle gaps of a timeline and what each rank was waiting for.

Works on any timeline whose spans are labelled with actions, measured or simulated. What a
gap waited for comes from the pipeline's dependency rule, :func:`bubblekit.actions.inputs`.
Times are in the timeline's unit (ms for a measured trace).
"""

from __future__ import annotations

from typing import NamedTuple

from bubblekit._validate import check_int, check_number
from bubblekit.actions import Action, inputs, parse_action
from bubblekit.timeline import Gap, Timeline

__all__ = ["GapReport", "explain_gaps", "bubble_report"]


class GapReport(NamedTuple):
    """One idle gap and what the rank was waiting for (times in the timeline's unit).

    ``reason`` is one of ``"fill"`` (before the rank's first action), ``"drain"`` (after
    its last), ``"waiting"`` (for data from ``from_rank``: ``waiting_for`` ended at
    ``ready``), ``"overhead"`` (every input had arrived before the gap began: framework
    overhead, launch cost or a slow receive) or ``"unknown"`` (the span after the gap is not
    labelled with an action). Used in lesson 06 (:meth:`describe` in the exercise).
    """

    rank: int
    start: float
    end: float
    next_action: str | None
    waiting_for: str | None
    from_rank: int | None
    ready: float | None
    reason: str

    @property
    def duration(self) -> float:
        """``end - start``."""
        return self.end - self.start

    def describe(self, unit: str = "") -> str:
        """One sentence; ``unit`` (e.g. ``"ms"``) is appended to durations."""
        u = f" {unit}" if unit else ""
        head = f"rank {self.rank} idle {self.duration:.3f}{u} [{self.start:.3f}, {self.end:.3f}]"
        if self.reason == "drain":
            return f"{head}: drain, its last action is done and it waits for the step to end"
        if self.waiting_for is None:
            return f"{head}: before {self.next_action} ({self.reason})"
        where = f"rank {self.from_rank}" if self.from_rank is not None and self.from_rank != self.rank else "itself"
        if self.reason == "overhead":
            return (f"{head}: before {self.next_action}; its input {self.waiting_for} ({where}) was ready at "
                    f"{self.ready:.3f}, so the gap is overhead")
        lag = self.end - (self.ready if self.ready is not None else self.end)
        tail = f", then {lag:.3f}{u} more until it started (latency and overhead)" if lag > 0 else ""
        return (f"{head}: {self.reason}, {self.next_action} waits for {self.waiting_for} from {where}, "
                f"done at {self.ready:.3f}{tail}")


def _explain(g: Gap, where: dict[Action, tuple[int, float, float]], first_start: dict[int, float],
             n_stages: int) -> GapReport:
    """What one gap waited for: the latest-finishing input of the action that ended it."""
    start, end = float(g.start), float(g.end)
    if g.before is None:
        return GapReport(g.rank, start, end, None, None, None, None, "drain")
    try:
        act = parse_action(g.before)
    except ValueError:
        return GapReport(g.rank, start, end, g.before, None, None, None, "unknown")
    is_fill = end <= first_start.get(g.rank, end) + 1e-9  # before the rank's first action
    deps = [d for d in inputs(act, n_stages, lambda a: a in where) if d in where]
    if not deps:
        return GapReport(g.rank, start, end, str(act), None, None, None, "fill" if is_fill else "overhead")
    dep = max(deps, key=lambda d: where[d][2])
    dep_rank, _, ready = where[dep]
    reason = "waiting" if ready > start + 1e-9 else "overhead"
    if reason == "waiting" and is_fill and start <= first_start.get(g.rank, start):
        reason = "fill"
    return GapReport(g.rank, start, end, str(act), str(dep), dep_rank, ready, reason)


def explain_gaps(timeline: Timeline, n: int | None = 5, *, min_duration: float = 0.0) -> list[GapReport]:
    """The ``n`` longest idle gaps (all when ``None``), longest first, each with what its rank waited for.

    Works on any timeline whose spans are labelled with actions (measured or simulated); times
    are in the timeline's unit, and gaps no longer than ``min_duration`` are left out. Used in
    lesson 06 (the exercise: which rank did rank 0 wait for first?).
    """
    if not isinstance(timeline, Timeline):
        raise TypeError(f"timeline must be a bubblekit Timeline (e.g. from read_trace or bk.simulate), "
                        f"got {type(timeline).__name__}")
    if n is not None:
        check_int("n", n, minimum=0)
    check_number("min_duration", min_duration, minimum=0.0)
    where: dict[Action, tuple[int, float, float]] = {}
    first_start: dict[int, float] = {}
    for sp in timeline.spans():
        if sp.action is not None:
            where[sp.action] = (sp.rank, float(sp.start), float(sp.end))
        first_start[sp.rank] = min(first_start.get(sp.rank, float("inf")), float(sp.start))
    n_stages = 1 + max((a.stage for a in where), default=0)
    out: list[GapReport] = []
    for g in sorted(timeline.idle_intervals(), key=lambda g: g.duration, reverse=True):
        if n is not None and len(out) >= n:
            break
        if float(g.duration) > min_duration:
            out.append(_explain(g, where, first_start, n_stages))
    return out


def bubble_report(timeline: Timeline, n_gaps: int = 5) -> str:
    """A text report: bubble ratio (the article's b), per-rank idle time and the ``n_gaps`` largest gaps explained.

    Times in the timeline's unit (ms for a measured trace); the timeline's ``notes`` (what the
    trace reader repaired or ignored) end the report. Used in lesson 06.
    """
    if not isinstance(timeline, Timeline):
        raise TypeError(f"timeline must be a bubblekit Timeline (e.g. from read_trace or bk.simulate), "
                        f"got {type(timeline).__name__}")
    check_int("n_gaps", n_gaps, minimum=0)
    u = timeline.unit
    lines = [
        f"{timeline.source or 'timeline'}: {timeline.p} ranks, makespan {float(timeline.makespan):.3f} {u}",
        f"bubble_ratio = idle / (ranks x makespan) = {float(timeline.total_idle):.3f} / "
        f"({timeline.p} x {float(timeline.makespan):.3f}) = {timeline.bubble_ratio:.4f}",
        f"bubble_overhead = idle / busy = {timeline.bubble_overhead:.4f}",
    ]
    for r in range(timeline.p):
        lines.append(
            f"  rank {r}: busy {float(timeline.busy[r]):.3f} {u}, idle {float(timeline.idle[r]):.3f} {u} "
            f"({1 - timeline.utilization_per_rank[r]:.1%} of the step)"
        )
    gaps = explain_gaps(timeline, n_gaps)
    if gaps:
        lines.append(f"largest gaps ({len(gaps)}):")
        lines.extend("  " + g.describe(u) for g in gaps)
    for note in getattr(timeline, "notes", []):
        lines.append(f"note: {note}")
    return "\n".join(lines)


