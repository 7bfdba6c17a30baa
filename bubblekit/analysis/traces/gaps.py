"""Step 5, gap reports: the idle gaps of a timeline and what each rank was waiting for.

Works on any timeline whose spans are labelled with actions, measured or simulated. What a
gap waited for comes from the pipeline's dependency rule, :func:`bubblekit.actions.inputs`.
Times are in the timeline's unit (ms for a measured trace).
"""

from __future__ import annotations

from typing import NamedTuple

from bubblekit._validate import check_int, check_number
from bubblekit.actions import Action, inputs, parse_action
from bubblekit.i18n import register, tr
from bubblekit.timeline import Gap, Timeline

__all__ = ["GapReport", "explain_gaps", "bubble_report"]

register({
    # GapReport.describe and bubble_report (lesson 06); a gap's reason stays a code word in the data
    "traces.reason.fill": {"en": "fill", "zh": "填充"},
    "traces.reason.drain": {"en": "drain", "zh": "排空"},
    "traces.reason.waiting": {"en": "waiting", "zh": "等待"},
    "traces.reason.overhead": {"en": "overhead", "zh": "开销"},
    "traces.reason.unknown": {"en": "unknown", "zh": "未知"},
    "traces.gap.head": {"en": "rank {rank} idle {duration:.3f}{u} [{start:.3f}, {end:.3f}]",
                        "zh": "rank {rank} 空闲 {duration:.3f}{u} [{start:.3f}, {end:.3f}]"},
    "traces.gap.drain": {"en": "{head}: drain, its last action is done and it waits for the step to end",
                         "zh": "{head}：排空，最后一个动作已完成，等待这一步结束"},
    "traces.gap.before": {"en": "{head}: before {action} ({reason})", "zh": "{head}：在 {action} 之前（{reason}）"},
    "traces.gap.overhead_rank": {"en": "{head}: before {action}; its input {dep} (rank {src}) was ready at {ready:.3f}{u}, "
                                       "so the gap is overhead",
                                 "zh": "{head}：在 {action} 之前；它的输入 {dep}（来自 rank {src}）在 {ready:.3f}{u} 已就绪，"
                                       "所以这段间隙是开销"},
    "traces.gap.overhead_self": {"en": "{head}: before {action}; its input {dep} (itself) was ready at {ready:.3f}{u}, "
                                       "so the gap is overhead",
                                 "zh": "{head}：在 {action} 之前；它的输入 {dep}（来自本 rank）在 {ready:.3f}{u} 已就绪，"
                                       "所以这段间隙是开销"},
    "traces.gap.lag": {"en": ", then {lag:.3f}{u} more until {action} started (latency and overhead)",
                       "zh": "，{action} 又过了 {lag:.3f}{u} 才开始（延迟和开销）"},
    "traces.gap.waits_rank": {"en": "{head}: {reason}, {action} waits for {dep} from rank {src}; {dep} was done at {ready:.3f}{u}{tail}",
                              "zh": "{head}：{reason}，{action} 在等 rank {src} 的 {dep}；{dep} 在 {ready:.3f}{u} 完成{tail}"},
    "traces.gap.waits_self": {"en": "{head}: {reason}, {action} waits for {dep} from itself; {dep} was done at {ready:.3f}{u}{tail}",
                              "zh": "{head}：{reason}，{action} 在等本 rank 的 {dep}；{dep} 在 {ready:.3f}{u} 完成{tail}"},
    "traces.report.head": {"en": "{source}: {p} ranks, makespan {makespan:.3f} {u}",
                           "zh": "{source}：{p} 个 rank，单步耗时 {makespan:.3f} {u}"},
    "traces.report.timeline": {"en": "timeline", "zh": "时间线"},
    "traces.report.ratio": {"en": "bubble_ratio = idle / (ranks x makespan) = {idle:.3f} / ({p} x {makespan:.3f}) = {b:.4f}",
                            "zh": "bubble_ratio（气泡比例）= 空闲 / (rank 数 × 单步耗时) = {idle:.3f} / ({p} × {makespan:.3f}) "
                                  "= {b:.4f}"},
    "traces.report.overhead": {"en": "bubble_overhead = idle / busy = {o:.4f}",
                               "zh": "bubble_overhead（气泡开销，Megatron 口径）= 空闲 / 忙碌 = {o:.4f}"},
    "traces.report.rank": {"en": "  rank {r}: busy {busy:.3f} {u}, idle {idle:.3f} {u} ({share:.1%} of the step)",
                           "zh": "  rank {r}：忙碌 {busy:.3f} {u}，空闲 {idle:.3f} {u}（占单步耗时的 {share:.1%}）"},
    "traces.report.gaps": {"en": "largest gaps ({n}):", "zh": "最长的空闲间隙（{n} 个）："},
    "traces.report.note": {"en": "note: {note}", "zh": "注：{note}"},
})


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
        head = tr("traces.gap.head", rank=self.rank, duration=self.duration, u=u, start=self.start, end=self.end)
        reason = tr(f"traces.reason.{self.reason}")
        if self.reason == "drain":
            return tr("traces.gap.drain", head=head)
        if self.waiting_for is None:
            return tr("traces.gap.before", head=head, action=self.next_action, reason=reason)
        where = "rank" if self.from_rank is not None and self.from_rank != self.rank else "self"
        if self.reason == "overhead":
            return tr(f"traces.gap.overhead_{where}", head=head, action=self.next_action, dep=self.waiting_for,
                      src=self.from_rank, ready=self.ready, u=u)
        lag = self.end - (self.ready if self.ready is not None else self.end)
        tail = tr("traces.gap.lag", lag=lag, u=u, action=self.next_action) if lag > 0 else ""
        return tr(f"traces.gap.waits_{where}", head=head, reason=reason, action=self.next_action, dep=self.waiting_for,
                  src=self.from_rank, ready=self.ready, u=u, tail=tail)


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
        tr("traces.report.head", source=timeline.source or tr("traces.report.timeline"), p=timeline.p,
           makespan=float(timeline.makespan), u=u),
        tr("traces.report.ratio", idle=float(timeline.total_idle), p=timeline.p, makespan=float(timeline.makespan),
           b=timeline.bubble_ratio),
        tr("traces.report.overhead", o=timeline.bubble_overhead),
    ]
    for r in range(timeline.p):
        lines.append(tr("traces.report.rank", r=r, busy=float(timeline.busy[r]), idle=float(timeline.idle[r]), u=u,
                        share=1 - timeline.utilization_per_rank[r]))
    gaps = explain_gaps(timeline, n_gaps)
    if gaps:
        lines.append(tr("traces.report.gaps", n=len(gaps)))
        lines.extend("  " + g.describe(u) for g in gaps)
    for note in getattr(timeline, "notes", []):
        lines.append(tr("traces.report.note", note=note))
    return "\n".join(lines)


