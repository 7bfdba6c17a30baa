"""The result of reading a trace: a :class:`~bubblekit.Timeline` that remembers where it came from.

Times are in **ms**, with 0 at the step's earliest action across ranks. ``notes`` list what the
reader did or ignored (trimmed ranges, shifted clocks, skipped steps, ignored copies of
events): a result read from an imperfect trace always says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bubblekit.actions import Action
from bubblekit.i18n import register, tr
from bubblekit.timeline import Timeline

__all__ = ["MeasuredTimeline"]

register({
    # the repr a notebook shows for a read trace (lesson 06); family is the event-name family (compute, pp, ...)
    "traces.measured.repr": {
        "en": "<MeasuredTimeline ranks={p} spans={spans} step={step}/{n_steps} makespan={makespan:.3f} ms "
              "bubble_ratio={ratio:.4f} ({family})>",
        "zh": "<实测时间线：{p} 个 rank，{spans} 个动作，第 {step} 步（共 {n_steps} 步），单步耗时 {makespan:.3f} ms，"
              "气泡比例 {ratio:.4f}（事件名：{family}）>",
    },
})


class MeasuredTimeline(Timeline):
    """A :class:`Timeline` read from a measured trace (times in ms, 0 = step start).

    Used in lesson 06 (the recorded run's orders, ``m`` and ``notes``).

    Extra attributes:
        files: per rank, the file it came from.
        family: which event names were mapped (``compute``, ``pp``, ``gpipe``, ``action``,
            ``csv``, ``user``, ``lab``).
        step, n_steps: this step's index among the complete steps found, and how many.
        offsets_ms: per rank, the clock shift applied (0 when clocks agreed).
        includes_wait: True when the spans still contain receive waits (not trimmed).
        notes: human-readable remarks on what the reader did: trimmed ranges, shifted clocks,
            skipped steps, ignored copies of events or operators without a usable time.
        origin: the step's start on the original clock (trace units converted to ms).
        clock: ``"gpu"`` when each action was timed by the GPU kernels it launched (a GPU
            trace), ``"cpu"`` when by its CPU-side range (a CPU run, a CSV, bubblekit's export).
    """

    def __init__(
        self,
        starts: list[list[float]],
        ends: list[list[float]],
        labels: list[list[Action | str]],
        *,
        files: Sequence[str],
        family: str,
        step: int,
        n_steps: int,
        offsets_ms: Sequence[float],
        includes_wait: bool,
        notes: Sequence[str],
        origin: float = 0.0,
        source: str = "",
        clock: str = "cpu",
    ) -> None:
        super().__init__(starts, ends, labels, unit="ms", may_overlap=True, source=source or "measured trace")
        self.files = tuple(files)
        self.family = family
        self.step = step
        self.n_steps = n_steps
        self.offsets_ms = tuple(offsets_ms)
        self.includes_wait = includes_wait
        self.notes = list(notes)
        self.origin = origin
        if clock not in ("cpu", "gpu"):
            raise ValueError(f"clock must be 'cpu' or 'gpu', got {clock!r}")
        self.clock = clock

    @property
    def orders(self) -> tuple[tuple[Action, ...], ...]:
        """Per rank, the actions in the order they started (string-labelled spans skipped)."""
        out = []
        for r in range(self.p):
            pairs = sorted(zip(self._starts[r], self._labels[r]), key=lambda x: x[0])
            out.append(tuple(lb for _, lb in pairs if isinstance(lb, Action)))
        return tuple(out)

    @property
    def placement(self) -> tuple[int, ...]:
        """``placement[s]`` = the rank that ran stage ``s`` (from the data)."""
        where: dict[int, int] = {}
        for r, order in enumerate(self.orders):
            for a in order:
                where.setdefault(a.stage, r)
        n = max(where) + 1 if where else self.p
        return tuple(where.get(s, s % self.p) for s in range(n))

    @property
    def m(self) -> int:
        """Microbatches seen (largest microbatch index + 1)."""
        return 1 + max((a.microbatch for o in self.orders for a in o), default=-1)

    def to_schedule(self, name: str = "measured") -> Any:
        """The executed per-rank orders as a :class:`bubblekit.Schedule` (for simulation)."""
        from bubblekit.schedules.base import Schedule

        return Schedule(name, self.p, self.m, self.placement, self.orders, source=self.source)

    def __repr__(self) -> str:
        return tr("traces.measured.repr", p=self.p, spans=self.n_spans, step=self.step, n_steps=self.n_steps,
                  makespan=float(self.makespan), ratio=self.bubble_ratio, family=self.family)


