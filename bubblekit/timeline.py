"""Timelines: per-rank busy intervals, from a simulation or from a measured trace.

A :class:`Timeline` is what every metric and every picture reads. The simulator builds
one; :mod:`bubblekit.analysis.traces` builds one from profiler files. Times are stored as numbers
in *ticks*; ``ticks_per_unit`` converts them to the timeline's ``unit`` (the simulator
scales fractional costs to integer ticks so that arithmetic stays exact and fast).

Bubble conventions (stated in lesson 00 and the README):

* :attr:`Timeline.bubble_ratio` = idle device-time / (ranks x makespan), the article's b;
* :attr:`Timeline.bubble_overhead` = idle device-time / busy device-time, Megatron's
  (p - 1) / m for GPipe and 1F1B with uniform costs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

from bubblekit._validate import Number, check_bool, check_int, check_number, check_sequence, check_str
from bubblekit.actions import Action
from bubblekit.i18n import register, tr
from bubblekit.text import Table, format_number, plural

__all__ = ["Timeline", "Span", "Gap", "compare_timelines"]

#: Two floats closer than this (relative) are one time: an "overlap" that small is rounding, not two actions at once.
_ROUNDING = 1e-9

register({
    # the timeline's tables (column keys stay English in both languages)
    "timeline.busy": {"en": "busy ({unit})", "zh": "忙碌（{unit}）"},
    "timeline.fill": {"en": "fill ({unit})", "zh": "填充（{unit}）"},
    "timeline.middle": {"en": "middle ({unit})", "zh": "中段空闲（{unit}）"},
    "timeline.drain": {"en": "drain ({unit})", "zh": "排空（{unit}）"},
    "timeline.idle": {"en": "idle ({unit})", "zh": "空闲（{unit}）"},
    "timeline.idle_note": {
        "en": "fill: idle before the rank's first action; drain: idle after its last; "
              "middle: idle in between; idle = fill + middle + drain",
        "zh": "填充：rank 第一个动作之前的空闲；排空：最后一个动作之后的空闲；中段空闲：两者之间的空闲；"
              "空闲 = 填充 + 中段空闲 + 排空",
    },
    "timeline.makespan": {"en": "makespan ({unit})", "zh": "单步耗时（{unit}）"},
    "timeline.idle_per_rank": {"en": "idle per rank ({unit})", "zh": "每个 rank 的空闲（{unit}）"},
    "timeline.gaps_per_rank": {"en": "gaps per rank", "zh": "每个 rank 的空闲区间数"},
    "timeline.name": {"en": "name", "zh": "情形"},
    "timeline.measures_note": {
        "en": "bubble_ratio = idle / (p × makespan), the fraction of the step; "
              "bubble_overhead = idle / busy (Megatron's measure, (p − 1)/m for ideal 1F1B)",
        "zh": "bubble_ratio（气泡比例）= 空闲 / (p × 单步耗时)，即整步里空闲所占的比例；"
              "bubble_overhead（气泡开销，Megatron 口径）= 空闲 / 忙碌，理想 1F1B 下等于 (p − 1)/m",
    },
})



class Span(NamedTuple):
    """One busy interval on one rank, in the timeline's unit."""

    rank: int
    start: Number
    end: Number
    action: Action | None
    label: str

    @property
    def duration(self) -> Number:
        """``end - start``."""
        return self.end - self.start


class Gap(NamedTuple):
    """One idle interval on one rank, in the timeline's unit.

    ``before`` is the span that ended the gap (what the rank was waiting to run), or
    ``None`` for idle time at the end of the step.
    """

    rank: int
    start: Number
    end: Number
    before: str | None

    @property
    def duration(self) -> Number:
        """``end - start``."""
        return self.end - self.start


def _per_rank(name: str, value: Any) -> tuple[Any, ...]:
    """One list per rank (lists, tuples or one-dimensional numpy arrays), as a tuple of tuples."""
    ranks = check_sequence(name, value, empty=True)
    return tuple(check_sequence(f"{name}[{r}]", x, empty=True) for r, x in enumerate(ranks))


def _time(name: str, x: Any) -> Number:
    """A finite time (an int, Fraction or float; numpy numbers become plain ones)."""
    t = type(x)
    if t is int or (t is float and x - x == 0):  # the common case, fast; x - x == 0 refuses nan and inf
        return x  # type: ignore[no-any-return]
    return check_number(name, x, minimum=float("-inf"))


class Timeline:
    """Busy intervals per rank.

    Args:
        starts, ends: per rank, interval start and end times in ticks (finite numbers, each end
            >= its start; lists, tuples or numpy arrays).
        labels: per rank, an :class:`Action` or a text label for each interval.
        unit: time unit of ``ticks / ticks_per_unit`` (``"slot"``, ``"ms"``, ``"us"``), a non-empty string.
        ticks_per_unit: integer scale >= 1 (1 unless the simulator scaled fractions).
        t0, t1: the step's window (``t0 <= t1``); default earliest start and latest end over ranks.
        may_overlap: intervals on one rank may overlap (traces); busy time is then their union,
            clipped to the window. Without it the intervals of one rank must not overlap and the
            window must contain them all.

    A timeline checks all of this when it is built (``TypeError`` / ``ValueError`` naming the
    rank and interval), so its bubble is always in ``[0, 1]``. A step of zero length (``t0 ==
    t1``) has no bubble: :attr:`bubble_ratio` and the other ratios raise ``ValueError``.
    """

    def __init__(
        self,
        starts: Sequence[Sequence[Number]],
        ends: Sequence[Sequence[Number]],
        labels: Sequence[Sequence[Action | str]],
        *,
        unit: str = "slot",
        ticks_per_unit: int = 1,
        t0: Number | None = None,
        t1: Number | None = None,
        may_overlap: bool = False,
        source: str = "",
    ) -> None:
        starts_, ends_, labels_ = (_per_rank(name, x) for name, x in
                                   (("starts", starts), ("ends", ends), ("labels", labels)))
        if not (len(starts_) == len(ends_) == len(labels_)):
            raise ValueError(
                f"starts, ends and labels must have one list per rank, got {len(starts_)}, {len(ends_)} and "
                f"{len(labels_)} lists"
            )
        if not starts_:
            raise ValueError("a timeline needs at least one rank: starts, ends and labels are empty")
        unit = check_str("unit", unit)
        ticks_per_unit = check_int("ticks_per_unit", ticks_per_unit, minimum=1)
        may_overlap = check_bool("may_overlap", may_overlap)
        source = check_str("source", source, empty=True)
        st_all, en_all = [], []
        for r, (st, en, lb) in enumerate(zip(starts_, ends_, labels_)):
            if not (len(st) == len(en) == len(lb)):
                raise ValueError(
                    f"rank {r} has {len(st)} starts, {len(en)} ends and {len(lb)} labels: each interval needs "
                    f"one of each"
                )
            st = [_time(f"starts[{r}][{k}]", x) for k, x in enumerate(st)]
            en = [_time(f"ends[{r}][{k}]", x) for k, x in enumerate(en)]
            for k, (a, b) in enumerate(zip(st, en)):
                if b < a:
                    raise ValueError(f"rank {r}'s interval {k} ends before it starts (start {a!r}, end {b!r}): "
                                     f"an end must be >= its start")
            for k, x in enumerate(lb):
                if not isinstance(x, (Action, str)):
                    raise TypeError(f"labels[{r}][{k}] must be an Action or a string, got {x!r} of type "
                                    f"{type(x).__name__}")
            if not may_overlap:
                order = sorted(range(len(st)), key=lambda k: (st[k], en[k]))
                for a, b in zip(order, order[1:]):
                    if st[b] < en[a] and isinstance(st[b], float) and en[a] - st[b] <= _ROUNDING * max(1.0, abs(en[a])):
                        st[b] = en[a]  # floating-point rounding (a sum computed two ways), not an overlap
                        if en[b] < st[b]:
                            en[b] = st[b]
                    if st[b] < en[a]:
                        raise ValueError(
                            f"rank {r}'s intervals {a} [{st[a]!r}, {en[a]!r}] and {b} [{st[b]!r}, {en[b]!r}] "
                            f"overlap: one rank runs one action at a time (pass may_overlap=True for measured "
                            f"traces, whose busy time is then the union)"
                        )
            st_all.append(st)
            en_all.append(en)
        if not any(st_all):
            raise ValueError("a timeline needs at least one interval: every rank's list is empty")
        first = min(min(s) for s in st_all if s)
        last = max(max(e) for e in en_all if e)
        if t0 is not None:
            t0 = _time("t0", t0)
        if t1 is not None:
            t1 = _time("t1", t1)
        lo, hi = (first if t0 is None else t0), (last if t1 is None else t1)
        if hi < lo:
            raise ValueError(f"the step window ends before it starts (t0={lo!r}, t1={hi!r}): t0 must be <= t1")
        if not may_overlap and (lo > first or hi < last):
            raise ValueError(
                f"the step window [t0={lo!r}, t1={hi!r}] (ticks) must contain every interval "
                f"([{first!r}, {last!r}]); pass may_overlap=True to clip intervals to the window"
            )
        self._own(st_all, en_all, [list(x) for x in labels_], unit, ticks_per_unit, lo, hi, may_overlap, source)

    def _own(
        self, starts: list[list[Number]], ends: list[list[Number]], labels: Sequence[Sequence[Action | str]],
        unit: str, ticks_per_unit: int, t0: Number | None, t1: Number | None, may_overlap: bool, source: str,
    ) -> None:
        """Take the lists as they are (no copy): the constructor's second half, used by the simulator."""
        self._starts, self._ends, self._labels = starts, ends, labels
        self.unit = unit
        self.ticks_per_unit = ticks_per_unit
        self.may_overlap = may_overlap
        self.source = source
        firsts = [s[0] for s in self._starts if s]
        if not firsts:
            raise ValueError("a timeline needs at least one interval")
        self._t0 = min(firsts) if t0 is None else t0
        self._t1 = max(max(e) for e in self._ends if e) if t1 is None else t1

    # -------------------------------------------------------------- helpers
    def _real(self, ticks: Number) -> Number:
        if self.ticks_per_unit == 1:
            return ticks
        if isinstance(ticks, int):
            q = Fraction(ticks, self.ticks_per_unit)
            return q.numerator if q.denominator == 1 else q
        return ticks / self.ticks_per_unit

    @property
    def p(self) -> int:
        """Number of ranks."""
        return len(self._starts)

    @property
    def n_spans(self) -> int:
        """Number of busy intervals over all ranks."""
        return sum(len(s) for s in self._starts)

    @property
    def t0(self) -> Number:
        """Start of the step window, in the timeline's unit."""
        return self._real(self._t0)

    @property
    def t1(self) -> Number:
        """End of the step window, in the timeline's unit."""
        return self._real(self._t1)

    def _ranks(self, rank: int | None) -> Sequence[int]:
        """All ranks, or the one asked for: an int in ``0..p-1`` (``TypeError``/``ValueError`` otherwise)."""
        if rank is None:
            return range(self.p)
        return (check_int("rank", rank, minimum=0, maximum=self.p - 1),)

    def spans(self, rank: int | None = None) -> Iterator[Span]:
        """Busy intervals (of one rank, or all ranks rank by rank), in the timeline's unit.

        Used in lessons 02, 06, 09 and 10.
        """
        ranks = self._ranks(rank)
        for r in ranks:
            for s, e, lb in zip(self._starts[r], self._ends[r], self._labels[r]):
                act = lb if isinstance(lb, Action) else None
                yield Span(r, self._real(s), self._real(e), act, str(lb))

    def arrays(self, rank: int) -> tuple[list[float], list[float], Sequence[Action | str]]:
        """Float starts, ends (in the unit) and labels of one rank: fast access for plotting."""
        k = float(self.ticks_per_unit)
        return (
            [float(s) / k for s in self._starts[rank]],
            [float(e) / k for e in self._ends[rank]],
            self._labels[rank],
        )

    # -------------------------------------------------------------- metrics
    @cached_property
    def _busy_ticks(self) -> list[Number]:
        out: list[Number] = []
        for st, en in zip(self._starts, self._ends):
            if not self.may_overlap:
                out.append(sum(en) - sum(st) if st else 0)
                continue
            total: Number = 0
            cur_s: Number | None = None
            cur_e: Number = 0
            for s, e in sorted(zip(st, en)):
                s, e = max(s, self._t0), min(e, self._t1)
                if e <= s:
                    continue
                if cur_s is None or s > cur_e:
                    if cur_s is not None:
                        total += cur_e - cur_s
                    cur_s, cur_e = s, e
                elif e > cur_e:
                    cur_e = e
            if cur_s is not None:
                total += cur_e - cur_s
            out.append(total)
        return out

    @property
    def makespan(self) -> Number:
        """Length of the step window ``t1 - t0``, in the timeline's unit."""
        return self._real(self._t1 - self._t0)

    @property
    def busy(self) -> tuple[Number, ...]:
        """Busy time per rank (union of its intervals), in the timeline's unit."""
        return tuple(self._real(b) for b in self._busy_ticks)

    @property
    def idle(self) -> tuple[Number, ...]:
        """Idle time per rank inside the step window, in the timeline's unit."""
        span = self._t1 - self._t0
        # a sum of float durations can pass the window by a rounding error (-4e-16): idle is never negative
        return tuple(self._real(span - b if span >= b else span - span) for b in self._busy_ticks)

    @property
    def total_idle(self) -> Number:
        """Idle device-time summed over ranks, in the timeline's unit."""
        return self._real(self.p * (self._t1 - self._t0) - sum(self._busy_ticks))

    def _span_ticks(self, what: str) -> Number:
        """``t1 - t0`` in ticks, or a ``ValueError`` when the step has zero length (no ratio is defined)."""
        span = self._t1 - self._t0
        if span <= 0:
            raise ValueError(
                f"{what} is undefined for a step of zero length (t0 = t1 = {self.t0!r} {self.unit}): every "
                f"interval has zero duration; check the durations (or pass t1 = the step's end)"
            )
        return span

    def _busy_total(self, what: str) -> Number:
        """Busy device-time in ticks, or a ``ValueError`` when it is 0 (idle / busy is undefined)."""
        busy = sum(self._busy_ticks)
        if busy <= 0:
            raise ValueError(f"{what} (idle / busy) is undefined when no rank is busy inside the step "
                             f"(every interval has zero duration or lies outside [t0, t1])")
        return busy

    @property
    def utilization_per_rank(self) -> tuple[float, ...]:
        """Busy / makespan for each rank."""
        span = self._span_ticks("utilization_per_rank")
        return tuple(float(b / span) for b in self._busy_ticks)

    @property
    def bubble_ratio_exact(self) -> Fraction:
        """Idle device-time / (ranks x makespan) as an exact fraction (floats converted exactly)."""
        self._span_ticks("bubble_ratio_exact")
        span = Fraction(self._t1) - Fraction(self._t0)
        idle = self.p * span - sum(Fraction(b) for b in self._busy_ticks)
        # a sum of float durations can pass the window by a rounding error: the ratio stays in [0, 1]
        return min(Fraction(1), max(Fraction(0), idle / (self.p * span)))

    @property
    def bubble_ratio(self) -> float:
        """Idle device-time / (ranks x makespan): the article's ``b``, a fraction of total time, in [0, 1].

        Raises ``ValueError`` for a step of zero length (``t0 == t1``).
        """
        span = self._span_ticks("bubble_ratio")
        ratio = float((self.p * span - sum(self._busy_ticks)) / (self.p * span))
        return min(1.0, max(0.0, ratio))  # float rounding of a sum of float durations stays inside [0, 1]

    @property
    def bubble_overhead_exact(self) -> Fraction:
        """Idle device-time / busy device-time as an exact fraction."""
        self._busy_total("bubble_overhead_exact")
        busy = sum(Fraction(b) for b in self._busy_ticks)
        span = Fraction(self._t1) - Fraction(self._t0)
        return (self.p * span - busy) / busy

    @property
    def bubble_overhead(self) -> float:
        """Idle / busy device-time: Megatron's convention, ``(p - 1) / m`` for 1F1B, uniform costs."""
        busy = self._busy_total("bubble_overhead")
        span = self._t1 - self._t0
        return float((self.p * span - busy) / busy)

    @property
    def utilization(self) -> float:
        """``1 - bubble_ratio``: busy device-time over ranks x makespan."""
        return 1.0 - self.bubble_ratio

    def idle_intervals(self, rank: int | None = None, *, min_duration: Number = 0) -> list[Gap]:
        """Idle gaps (of one rank, or of all ranks) inside the step window, in the timeline's unit.

        Each gap names the interval that ended it (``before``): what the rank was waiting
        to run. Gaps shorter than ``min_duration`` (in the unit) are dropped.

        Used in lessons 02, 03, 04 and 06.
        """
        ranks = self._ranks(rank)
        check_number("min_duration", min_duration, minimum=0)
        out: list[Gap] = []
        for r in ranks:
            pairs = sorted(zip(self._starts[r], self._ends[r], self._labels[r]), key=lambda x: (x[0], x[1]))
            cursor = self._t0
            for s, e, lb in pairs:
                if s > cursor:
                    out.append(Gap(r, self._real(cursor), self._real(s), str(lb)))
                if e > cursor:
                    cursor = e
            if cursor < self._t1:
                out.append(Gap(r, self._real(cursor), self._real(self._t1), None))
        if min_duration:
            out = [g for g in out if g.duration >= min_duration]
        return out

    def largest_gaps(self, n: int = 5) -> list[Gap]:
        """The ``n`` longest idle gaps over all ranks, longest first (``n``: an int >= 0).

        Used in lessons 01 and 10.
        """
        n = check_int("n", n, minimum=0)
        return sorted(self.idle_intervals(), key=lambda g: g.duration, reverse=True)[:n]

    def idle_parts(self, rank: int) -> tuple[Number, Number, Number]:
        """``(fill, middle, drain)`` idle time of one rank, in the timeline's unit.

        * **fill**: idle from the start of the step to the rank's first action;
        * **drain**: idle from the rank's last action to the end of the step;
        * **middle**: the rest of its idle time, between its first and its last action.

        The three add up to ``idle[rank]``. A rank with no action in the step window is idle
        for the whole step, counted as fill. Used in lessons 01 and 02.
        """
        (r,) = self._ranks(rank)
        span = self._t1 - self._t0
        inside = [(s, e) for s, e in zip(self._starts[r], self._ends[r]) if e > self._t0 and s < self._t1]
        if not inside:
            return (self._real(span), 0, 0)
        first = max(min(s for s, _ in inside), self._t0)
        last = min(max(e for _, e in inside), self._t1)
        fill, drain = first - self._t0, self._t1 - last
        middle = span - self._busy_ticks[r] - fill - drain
        return (self._real(fill), self._real(middle), self._real(drain))

    def idle_table(self) -> Table:
        """Per rank: busy time and where its idle time sits (fill, middle, drain), as a :class:`Table`.

        Columns ``rank``, ``busy``, ``fill``, ``middle``, ``drain``, ``idle``, in the timeline's
        unit (see :meth:`idle_parts`); the raw values stay available for asserts
        (``t.column("fill")``). Used in lessons 01 and 02.
        """
        rows = []
        for r in range(self.p):
            fill, middle, drain = self.idle_parts(r)
            rows.append({"rank": r, "busy": self.busy[r], "fill": fill, "middle": middle, "drain": drain,
                         "idle": self.idle[r]})
        unit = plural(self.unit)
        return Table(
            rows,
            headers={name: tr(f"timeline.{name}", unit=unit) for name in ("busy", "fill", "middle", "drain", "idle")},
            note=tr("timeline.idle_note"),
        )

    # ------------------------------------------------- phases and partial windows
    def phases(self) -> dict[str, tuple[float, float]]:
        """Fill, steady and drain windows, in the timeline's unit (floats); plots mark them.

        Definitions (they hold for any timeline, simulated or measured):

        * **fill** runs from the start of the step until the *last rank starts its first
          action* (every rank has work from then on);
        * **drain** runs from the moment the *first rank finishes its last action* to the end;
        * **steady** is what lies between; it is absent (zero length) when the two overlap.

        For 1F1B and GPipe with uniform costs and no communication, fill lasts ``(p-1) F``
        and drain ``(p-1) B``: together exactly the per-rank bubble ``(p-1)(F+B)``.
        """
        t0, t1 = float(self.t0), float(self.t1)
        firsts, lasts = [], []
        for r in range(self.p):
            st, en, _ = self.arrays(r)
            if st:
                firsts.append(min(st))
                lasts.append(max(en))
        fill_end = max(firsts) if firsts else t0
        drain_start = min(lasts) if lasts else t1
        steady = (fill_end, drain_start) if drain_start > fill_end else (fill_end, fill_end)
        return {"fill": (t0, fill_end), "steady": steady, "drain": (drain_start, t1)}

    @cached_property
    def _gap_bounds(self) -> list[tuple[float, float]]:
        return [(float(g.start), float(g.end)) for g in self.idle_intervals()]

    def bubble_so_far(self, t: Number) -> float:
        """Bubble ratio of the window ``[t0, t]``: idle device-time there / (p x (t - t0)).

        ``t`` in the timeline's unit (a finite number); 0 at ``t <= t0``, :attr:`bubble_ratio`
        at ``t = t1`` and after it (the step ends at ``t1``: the time after it is neither busy
        nor idle, so a ``t`` past the end means the whole step). What the animation's readout
        shows (lesson 01).
        """
        t = min(float(check_number("t", t, minimum=float("-inf"))), float(self.t1))
        t0 = float(self.t0)
        if t <= t0:
            return 0.0
        idle = sum(max(min(end, t) - start, 0.0) for start, end in self._gap_bounds)
        return idle / (self.p * (t - t0))

    # ------------------------------------------- the zero-bubble paper's measures
    @property
    def stage_spans(self) -> tuple[tuple[float, float], ...]:
        """Per rank, ``(its first start, its last end)`` in the timeline's unit (floats)."""
        out = []
        for r in range(self.p):
            starts, ends, _ = self.arrays(r)
            if not starts:
                raise ValueError(f"rank {r} has no actions: a per-stage span is undefined")
            out.append((min(starts), max(ends)))
        return tuple(out)

    @property
    def stage_span_bubble_rate(self) -> float:
        """The zero-bubble paper's bubble rate: ``(cost - ideal) / cost``, a fraction.

        ``cost`` is the largest *per-rank* span (its last end minus its own first start),
        ``ideal`` the largest per-rank busy time (``m (T_F + T_B + T_W)`` for equal stages);
        Qi et al. 2024, §5.3. Unlike :attr:`bubble_ratio` it ignores the idle time before a
        rank's first action and after its last one.

        Used in lessons 07, 09 and 10.
        """
        cost = max(e - s for s, e in self.stage_spans)
        if cost <= 0:
            raise ValueError("stage_span_bubble_rate is undefined when every rank's span has zero length")
        ideal = max(float(b) for b in self.busy)
        return (cost - ideal) / cost

    @property
    def stage_span_overhead(self) -> float:
        """Bubble time over ideal time on the busiest rank, per-stage spans: ``(cost - ideal) / ideal``.

        The zero-bubble README's "bubble rate" from November 2023 to July 2024 ((p-1)/m for 1F1B) is this
        overhead; since July 2024 it reads (p-1)/(m+p-1), which is :attr:`stage_span_bubble_rate`.
        """
        cost = max(e - s for s, e in self.stage_spans)
        ideal = max(float(b) for b in self.busy)
        if ideal <= 0:
            raise ValueError("stage_span_overhead is undefined when no rank is busy (zero-length intervals)")
        return (cost - ideal) / ideal

    @property
    def max_rank_bubble_time(self) -> float:
        """Largest idle time of one rank between its own first start and last end (time unit).

        Used in lessons 07 and 10.
        """
        return max((e - s) - float(b) for (s, e), b in zip(self.stage_spans, self.busy))

    def summary(self) -> dict[str, Any]:
        """Plain-Python metrics for printing: makespan, bubble ratio and overhead, per-rank numbers.

        Used in lesson 06.
        """
        return {
            "ranks": self.p,
            "makespan": self.makespan,
            "unit": self.unit,
            "bubble_ratio": self.bubble_ratio,
            "bubble_overhead": self.bubble_overhead,
            "busy": self.busy,
            "idle": self.idle,
        }

    # --------------------------------------------------------------- export
    def to_chrome_trace(self, path: str | Path | None = None, *, us_per_unit: float | None = None) -> dict[str, Any]:
        """Chrome trace JSON (Perfetto and chrome://tracing open it): one thread per rank.

        Args:
            path: where to write the JSON; not written when ``None``.
            us_per_unit: microseconds per time unit, a finite number > 0; default 1000 for ``ms``
                and for abstract slots (one slot shows as 1 ms), 1 for ``us``.
        """
        if path is not None and not isinstance(path, (str, Path)):
            raise TypeError(f"path must be a file name (str or pathlib.Path) or None, got {path!r}")
        if us_per_unit is None:
            us_per_unit = {"us": 1.0, "s": 1e6}.get(self.unit, 1000.0)
        us_per_unit = float(check_number("us_per_unit", us_per_unit, minimum=0, allow_equal=False))
        k = us_per_unit / self.ticks_per_unit
        events: list[dict[str, Any]] = [
            {"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "pipeline"}},
        ]
        for r in range(self.p):
            events.append({"name": "thread_name", "ph": "M", "pid": 0, "tid": r, "args": {"name": f"rank {r}"}})
            for s, e, lb in zip(self._starts[r], self._ends[r], self._labels[r]):
                ev: dict[str, Any] = {
                    "name": str(lb), "ph": "X", "pid": 0, "tid": r,
                    "ts": float(s) * k, "dur": float(e - s) * k,
                }
                if isinstance(lb, Action):
                    ev["cat"] = lb.kind
                    ev["args"] = {"stage": lb.stage, "microbatch": lb.microbatch, "kind": lb.kind}
                events.append(ev)
        doc = {"traceEvents": events, "displayTimeUnit": "ms"}
        if path is not None:
            Path(path).write_text(json.dumps(doc), encoding="utf-8")
        return doc

    def __repr__(self) -> str:
        return (
            f"<Timeline ranks={self.p} spans={self.n_spans} makespan={self.makespan} {self.unit} "
            + (f"bubble_ratio={self.bubble_ratio:.4f}>" if self._t1 > self._t0 else "(a step of zero length)>")
        )


def _numbers(values: Sequence[Any]) -> str:
    """A tuple of numbers as the course prints them: ``(24, 9, 1.5)``, not ``(24.0, 9.0, 1.5)``."""
    return "(" + ", ".join(format_number(x, fractions=False) for x in values) + ")"


def compare_timelines(named: Mapping[str, Timeline]) -> Table:
    """Timelines side by side, under names you choose: ``{"GPipe": r1, "1F1B": r2}``.

    For timelines you already have (one schedule under two cost models, a forward-only run, a
    measured trace); :func:`bubblekit.compare` builds and simulates schedules by name instead.
    Returns a :class:`~bubblekit.text.Table` with one row per timeline: ``name``,
    ``makespan``, ``idle`` (per rank, a tuple), ``gaps`` (per rank, how many separate idle
    stretches), ``bubble_ratio`` and ``bubble_overhead``. Times are in the timelines' unit,
    which must be the same for all. Used in lesson 02.
    """
    if not isinstance(named, Mapping) or not named:
        raise TypeError(f"named must be a non-empty dict of name -> Timeline, got {named!r}")
    units = set()
    rows: list[dict[str, Any]] = []
    for name, tl in named.items():
        if not isinstance(tl, Timeline):
            raise TypeError(f"named[{name!r}] must be a Timeline (e.g. bk.simulate(...)), got {type(tl).__name__}")
        units.add(tl.unit)
        rows.append({
            "name": str(name),
            "makespan": tl.makespan,
            "idle": tl.idle,
            "gaps": tuple(len(tl.idle_intervals(r)) for r in range(tl.p)),
            "bubble_ratio": tl.bubble_ratio,
            "bubble_overhead": tl.bubble_overhead,
        })
    if len(units) != 1:
        raise ValueError(f"named's timelines must share one time unit, got {sorted(units)}")
    unit = plural(units.pop())
    return Table(
        rows,
        formats={"makespan": "decimal", "idle": _numbers, "gaps": _numbers, "bubble_ratio": "percent",
                 "bubble_overhead": "percent"},
        headers={"name": tr("timeline.name"), "makespan": tr("timeline.makespan", unit=unit),
                 "idle": tr("timeline.idle_per_rank", unit=unit), "gaps": tr("timeline.gaps_per_rank")},
        note=tr("timeline.measures_note"),
    )
