"""Event simulation of a schedule under a cost model.

Each rank runs its actions in the given order. An action starts when its rank is free and
its dependencies are done, plus the communication latency when a dependency ran on
another rank. Dependencies (stage ``s`` of ``S``, microbatch ``i``):

* ``sFi`` needs ``(s-1)Fi`` (the activation from the previous stage);
* ``sBi`` / ``sIi`` need ``sFi`` and the gradient from stage ``s+1`` (``(s+1)Bi`` or ``(s+1)Ii``);
* ``sWi`` needs ``sIi``.

Because each rank's order is fixed, the simulation is exact: no event queue is needed,
only a wake-up list for ranks blocked on a dependency. A schedule whose dependencies can
never be met raises :class:`DeadlockError` naming each blocked rank, the action it waits
for, and what that action waits for in turn.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cached_property
from typing import Union

from .actions import Action
from .costs import Costs, ResolvedCosts
from .schedules.base import Schedule, ScheduleError
from .timeline import Number, Timeline

__all__ = ["simulate", "SimResult", "DeadlockError"]

_F, _G, _I = 0, 1, 2  # produced-event tags: forward output, input gradient, I done


class DeadlockError(ScheduleError):
    """The schedule's dependencies can never all be met: some ranks wait forever."""


class SimResult(Timeline):
    """A simulated step: a :class:`Timeline` plus the schedule, the costs and memory.

    Extra attributes: ``schedule``, ``costs`` (the :class:`Costs` given), ``resolved``
    (per-stage numbers). Memory is in microbatch activations (see :mod:`bubblekit.costs`).
    """

    def __init__(
        self,
        schedule: Schedule,
        costs: Costs,
        resolved: ResolvedCosts,
        starts: list[list[int]],
        ends: list[list[int]],
        binding: list[list[tuple[int, int] | None]],
        ticks_per_unit: int,
    ) -> None:
        super().__init__(
            starts, ends, [list(o) for o in schedule.orders],
            unit=costs.unit, ticks_per_unit=ticks_per_unit, t0=0,
            source=f"simulated {schedule.name}",
        )
        self.schedule = schedule
        self.costs = costs
        self.resolved = resolved
        self._binding = binding

    # --------------------------------------------------------------- memory
    @cached_property
    def memory_curves(self) -> list[list[tuple[Number, float]]]:
        """Per rank, the step curve of activations held: ``[(time, held_after_time), ...]``.

        A forward allocates its stage's activations when it starts; a full backward frees
        them when it ends; a split backward frees ``1 - w_held`` of them when ``I`` ends and
        the rest when ``W`` ends. Time in the timeline's unit, memory in microbatch activations.
        """
        act = self.resolved.activation
        wh = float(self.resolved.w_held)
        curves: list[list[tuple[Number, float]]] = []
        for r, order in enumerate(self.schedule.orders):
            held = 0.0
            pts: list[tuple[Number, float]] = [(0, 0.0)]
            st, en = self._starts[r], self._ends[r]
            for a, s, e in zip(order, st, en):
                k = a.kind
                if k == "F":
                    held += float(act[a.stage])
                    pts.append((self._real(s), held))
                elif k == "B":
                    held -= float(act[a.stage])
                    pts.append((self._real(e), held))
                elif k == "I":
                    held -= float(act[a.stage]) * (1.0 - wh)
                    pts.append((self._real(e), held))
                else:
                    held -= float(act[a.stage]) * wh
                    pts.append((self._real(e), held))
            curves.append(pts)
        return curves

    @property
    def peak_activations(self) -> tuple[float, ...]:
        """Peak activations held on each rank, in microbatch activations."""
        return tuple(round(max(v for _, v in c), 9) for c in self.memory_curves)

    @property
    def max_peak_activations(self) -> float:
        """The largest per-rank peak: what sets the memory budget."""
        return max(self.peak_activations)

    # -------------------------------------------------------- critical path
    @cached_property
    def critical_path(self) -> list[tuple[int, Action]]:
        """The chain of actions that sets the makespan, first to last, as ``(rank, action)``.

        Walks back from the last action to finish: each step goes to whatever made the
        action start when it did, the rank's previous action or a dependency (plus its
        communication latency). Ties prefer the dependency, to show the pipeline's chain.
        """
        best_r = max(range(self.p), key=lambda r: self._ends[r][-1] if self._ends[r] else -1)
        r, i = best_r, len(self._ends[best_r]) - 1
        path: list[tuple[int, Action]] = []
        while True:
            path.append((r, self.schedule.orders[r][i]))
            b = self._binding[r][i]
            if b is not None:
                r, i = b
            elif i > 0 and self._starts[r][i] == self._ends[r][i - 1] and self._starts[r][i] > 0:
                i -= 1
            else:
                break
        path.reverse()
        return path

    def __repr__(self) -> str:
        return (
            f"<SimResult {self.schedule.name} p={self.schedule.p} m={self.schedule.m} v={self.schedule.v} "
            f"makespan={self.makespan} {self.unit} bubble_ratio={self.bubble_ratio:.4f} "
            f"bubble_overhead={self.bubble_overhead:.4f}>"
        )


def simulate(schedule: Schedule, costs: Costs | None = None, *, validate: bool = True) -> SimResult:
    """Run ``schedule`` under ``costs`` (default ``Costs()``: F = 1, B = 2 slots, no latency).

    Returns a :class:`SimResult` with makespan, bubble ratio and overhead, per-rank busy and
    idle intervals, memory curves, the critical path and Chrome-trace export.

    Raises:
        ScheduleError: a missing, duplicate or misplaced action (when ``validate``).
        DeadlockError: dependencies that can never be met.
    """
    if not isinstance(schedule, Schedule):
        raise TypeError(f"schedule must be a bubblekit Schedule, got {type(schedule).__name__}")
    if costs is None:
        costs = Costs()
    elif not isinstance(costs, Costs):
        raise TypeError(f"costs must be a bubblekit Costs, got {type(costs).__name__}")
    if validate:
        schedule.validate()
    n_stages, m, p = schedule.n_stages, schedule.m, schedule.p
    placement = schedule.placement
    resolved = costs.resolve(n_stages, schedule.v)
    rc, scale = resolved.scaled_to_integers()
    dur = {"F": rc.f, "B": rc.b, "I": rc.i, "W": rc.w}
    comm = rc.comm
    comm_f = [comm if s > 0 and placement[s - 1] != placement[s] else 0 for s in range(n_stages)]
    comm_b = [comm if s < n_stages - 1 and placement[s + 1] != placement[s] else 0 for s in range(n_stages)]
    last = n_stages - 1
    size = n_stages * m
    # done[tag][stage*m + mb] = end time; where[...] = (rank, index) of the producing action
    done: list[list[Number | None]] = [[None] * size for _ in range(3)]
    where: list[list[tuple[int, int] | None]] = [[None] * size for _ in range(3)]
    waiters: dict[tuple[int, int], list[int]] = {}
    orders = schedule.orders
    starts: list[list[Number]] = [[] for _ in range(p)]
    ends: list[list[Number]] = [[] for _ in range(p)]
    binding: list[list[tuple[int, int] | None]] = [[] for _ in range(p)]
    ptr = [0] * p
    clock: list[Number] = [0] * p
    blocked: dict[int, tuple[int, int]] = {}
    f_done, g_done, i_done = done
    f_where, g_where, i_where = where
    stack = list(range(p - 1, -1, -1))
    while stack:
        r = stack.pop()
        order = orders[r]
        n = len(order)
        i = ptr[r]
        t = clock[r]
        st, en, bd = starts[r], ends[r], binding[r]
        while i < n:
            s, k, mb = order[i]
            idx = s * m + mb
            bind: tuple[int, int] | None = None
            if k == "F":
                ready: Number = 0
                if s:
                    d = f_done[idx - m]
                    if d is None:
                        key = (_F, idx - m)
                        break
                    ready = d + comm_f[s]
                    if ready >= t:
                        bind = f_where[idx - m]
                start = t if t > ready else ready
                end = start + dur["F"][s]
                f_done[idx] = end
                f_where[idx] = (r, i)
                key_done = (_F, idx)
            elif k == "W":
                d = i_done[idx]
                if d is None:
                    key = (_I, idx)
                    break
                if d >= t:
                    bind = i_where[idx]
                start = t if t > d else d
                end = start + dur["W"][s]
                key_done = None
            else:  # B or I
                d = f_done[idx]
                if d is None:
                    key = (_F, idx)
                    break
                ready = d
                if d >= t:
                    bind = f_where[idx]
                if s < last:
                    d2 = g_done[idx + m]
                    if d2 is None:
                        key = (_G, idx + m)
                        break
                    d2 = d2 + comm_b[s]
                    if d2 >= ready:
                        ready = d2
                        if d2 >= t:
                            bind = g_where[idx + m]
                start = t if t > ready else ready
                end = start + dur[k][s]
                g_done[idx] = end
                g_where[idx] = (r, i)
                key_done = (_G, idx)
                if k == "I":
                    i_done[idx] = end
                    i_where[idx] = (r, i)
                    w = waiters.pop((_I, idx), None)
                    if w:
                        stack.extend(w)
            st.append(start)
            en.append(end)
            bd.append(bind)
            t = end
            i += 1
            if key_done is not None:
                w = waiters.pop(key_done, None)
                if w:
                    stack.extend(w)
        else:
            ptr[r] = i
            clock[r] = t
            blocked.pop(r, None)
            continue
        ptr[r] = i
        clock[r] = t
        blocked[r] = key
        waiters.setdefault(key, []).append(r)
    if blocked:
        raise DeadlockError(_deadlock_message(schedule, ptr, blocked))
    return SimResult(schedule, costs, resolved, starts, ends, binding, scale)  # type: ignore[arg-type]


def _needed(tag: int, idx: int, m: int, schedule: Schedule) -> str:
    """Describe the event ``(tag, idx)`` as the action that produces it."""
    s, mb = divmod(idx, m)
    if tag == _F:
        return str(Action(s, "F", mb))
    if tag == _I:
        return str(Action(s, "I", mb))
    kinds = {a.kind for a in schedule.orders[schedule.placement[s]] if a.stage == s and a.microbatch == mb}
    kind = "I" if "I" in kinds else "B"
    return str(Action(s, kind, mb))


def _deadlock_message(schedule: Schedule, ptr: list[int], blocked: dict[int, tuple[int, int]]) -> str:
    m = schedule.m
    lines = ["deadlock: these ranks wait forever (each waits for an action that cannot run):"]
    for r in sorted(blocked):
        tag, idx = blocked[r]
        act = schedule.orders[r][ptr[r]]
        need = _needed(tag, idx, m, schedule)
        owner = schedule.placement[idx // m]
        if owner == r:
            why = f"which rank {r} itself runs later in its own order"
        elif owner in blocked:
            o_act = schedule.orders[owner][ptr[owner]]
            o_tag, o_idx = blocked[owner]
            why = (
                f"which rank {owner} has not run: it is stuck at {o_act}, "
                f"waiting for {_needed(o_tag, o_idx, m, schedule)}"
            )
        else:
            why = f"which rank {owner} never runs"
        lines.append(f"  rank {r} is blocked at {act} (action #{ptr[r]} in its order): waits for {need}, {why}")
    return "\n".join(lines)


Numberish = Union[int, float, Fraction]
