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

from collections.abc import Callable, Iterator
from fractions import Fraction
from functools import cached_property
from itertools import accumulate
from operator import itemgetter
from typing import Union

from bubblekit.actions import Action
from bubblekit.costs import Costs, ResolvedCosts
from bubblekit.schedules.base import Schedule, ScheduleError
from bubblekit.timeline import Number, Timeline

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
        binding: list[list[tuple[int, int] | None]] | None,
        ticks_per_unit: int,
    ) -> None:
        super().__init__(
            starts, ends, schedule.orders,  # Timeline copies each row into a list
            unit=costs.unit, ticks_per_unit=ticks_per_unit, t0=0,
            source=f"simulated {schedule.name}",
        )
        self.schedule = schedule
        self.costs = costs
        self.resolved = resolved
        # binding[r][i]: (rank, index) of the dependency that made action i of rank r start
        # when it did, or None; computed lazily from the producers' positions when not given
        self._binding_given = binding
        self._positions: tuple[list[int], list[int], list[int]] | None = None
        self._comm_ticks: tuple[list[Number], list[Number]] = ([], [])

    # --------------------------------------------------------------- memory
    @cached_property
    def memory_curves(self) -> list[list[tuple[Number, float]]]:
        """Per rank, the step curve of activations held: ``[(time, held_after_time), ...]``.

        A forward allocates its stage's activations when it starts; a full backward frees
        them when it ends; a split backward frees ``1 - w_held`` of them when ``I`` ends and
        the rest when ``W`` ends. Time in the timeline's unit, memory in microbatch activations.
        Changes at the same instant (a backward ending as the next forward starts) are merged
        into one point, so the curve shows a level rather than a spike; the peak is unchanged
        because a rank frees before it allocates at one instant.
        """
        deltas = self._memory_deltas()
        real = self._real
        curves: list[list[tuple[Number, float]]] = []
        for r, order in enumerate(self.schedule.orders):
            held = 0.0
            pts: list[tuple[Number, float]] = [(0, 0.0)]
            append = pts.append
            for (s, k, _), st, en in zip(order, self._starts[r], self._ends[r]):
                held += deltas[s, k]
                t = real(st if k == "F" else en)
                if len(pts) > 1 and pts[-1][0] == t:
                    pts[-1] = (t, held)
                else:
                    append((t, held))
            curves.append(pts)
        return curves

    def _memory_deltas(self) -> dict[tuple[int, str], float]:
        """``(stage, kind) -> change in activations held`` (the same float operations as the curve)."""
        act = self.resolved.activation
        wh = float(self.resolved.w_held)
        out: dict[tuple[int, str], float] = {}
        for s, a in enumerate(act):
            x = float(a)
            out[s, "F"] = x
            out[s, "B"] = -x
            out[s, "I"] = -(x * (1.0 - wh))
            out[s, "W"] = -(x * wh)
        return out

    @cached_property
    def peak_activations(self) -> tuple[float, ...]:
        """Peak activations held on each rank, in microbatch activations."""
        deltas = self._memory_deltas()
        key = itemgetter(0, 1)
        if len(set(self.resolved.activation)) == 1:  # same activations on every stage: by kind
            by_kind = {k: deltas[0, k] for k in "FBIW"}
            return tuple(
                round(max(accumulate(map(by_kind.__getitem__, map(itemgetter(1), order)), initial=0.0)), 9)
                for order in self.schedule.orders
            )
        return tuple(
            round(max(accumulate(map(deltas.__getitem__, map(key, order)), initial=0.0)), 9)
            for order in self.schedule.orders
        )

    @property
    def max_peak_activations(self) -> float:
        """The largest per-rank peak: what sets the memory budget."""
        return max(self.peak_activations)

    # -------------------------------------------------------- critical path
    def _bind(self, r: int, i: int) -> tuple[int, int] | None:
        """The dependency ``(rank, index)`` that set the start of action ``i`` of rank ``r``.

        The dependency counts when it was ready no earlier than the rank was free (ties
        go to the dependency); for ``B``/``I`` the gradient wins a tie with the forward.
        """
        if self._binding_given is not None:
            return self._binding_given[r][i]
        assert self._positions is not None
        f_pos, g_pos, i_pos = self._positions
        comm_f, comm_b = self._comm_ticks
        sched = self.schedule
        m, place, ends = sched.m, sched.placement, self._ends
        s, k, mb = sched.orders[r][i]
        idx = s * m + mb
        t: Number = ends[r][i - 1] if i else 0
        if k == "F":
            if not s:
                return None
            dep = (place[s - 1], f_pos[idx - m])
            return dep if ends[dep[0]][dep[1]] + comm_f[s] >= t else None
        if k == "W":
            dep = (place[s], i_pos[idx])
            return dep if ends[dep[0]][dep[1]] >= t else None
        fdep = (place[s], f_pos[idx])
        ready = ends[fdep[0]][fdep[1]]
        bind = fdep if ready >= t else None
        if s < len(place) - 1:
            gdep = (place[s + 1], g_pos[idx + m])
            d2 = ends[gdep[0]][gdep[1]] + comm_b[s]
            if d2 >= ready and d2 >= t:
                bind = gdep
        return bind

    @cached_property
    def critical_path(self) -> list[tuple[int, Action]]:
        """The chain of actions that sets the makespan, first to last, as ``(rank, action)``.

        Walks back from the last action to finish: each step goes to whatever made the
        action start when it did, the rank's previous action or a dependency (plus its
        communication latency). Ties prefer the dependency, to show the pipeline's chain.
        (A schedule simulated with ``validate=False`` that repeats an action links to its
        last copy.)
        """
        best_r = max(range(self.p), key=lambda r: self._ends[r][-1] if self._ends[r] else -1)
        r, i = best_r, len(self._ends[best_r]) - 1
        path: list[tuple[int, Action]] = []
        while True:
            path.append((r, self.schedule.orders[r][i]))
            b = self._bind(r, i)
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
    dur_f, dur_b, dur_i, dur_w = rc.f, rc.b, rc.i, rc.w
    comm = rc.comm
    comm_f = [comm if s > 0 and placement[s - 1] != placement[s] else 0 for s in range(n_stages)]
    comm_b = [comm if s < n_stages - 1 and placement[s + 1] != placement[s] else 0 for s in range(n_stages)]
    last = n_stages - 1
    size = n_stages * m
    # Events, indexed by stage * m + microbatch: end time of the forward (f_done), of the
    # gradient sent to the previous stage by B or I (g_done), of I (i_done); *_pos is the
    # producing action's index in its rank's order (its rank is placement[stage]).
    f_done: list[Number | None] = [None] * size
    g_done: list[Number | None] = [None] * size
    i_done: list[Number | None] = [None] * size
    f_pos = [0] * size
    g_pos = [0] * size
    i_pos = [0] * size
    # waiting[tag * size + idx]: ranks blocked on that event (tags _F, _G, _I)
    waiting: list[list[int] | None] = [None] * (3 * size)
    orders = schedule.orders
    starts: list[list[Number]] = [[0] * len(o) for o in orders]  # filled in place
    ends: list[list[Number]] = [[0] * len(o) for o in orders]
    ptr = [len(o) for o in orders]  # where each rank stopped; set when it blocks
    blocked_on = [0] * p  # the waiting key of a blocked rank
    stack = list(range(p - 1, -1, -1))
    events = (f_done, g_done, i_done, f_pos, g_pos, i_pos, waiting, stack.extend)
    costs_ = (dur_f, dur_b, dur_i, dur_w, comm_f, comm_b)
    # one generator per rank: it runs the rank's order and yields the key it waits on
    procs = [
        _rank_process(r, orders[r], starts[r], ends[r], m, last, size, ptr, *events, *costs_)
        for r in range(p)
    ]
    pop = stack.pop
    while stack:
        r = pop()
        key = next(procs[r], None)
        if key is not None:
            blocked_on[r] = key
            w = waiting[key]
            if w is None:
                waiting[key] = [r]
            else:
                w.append(r)
    blocked = {r: divmod(blocked_on[r], size) for r in range(p) if ptr[r] < len(orders[r])}
    if blocked:
        raise DeadlockError(_deadlock_message(schedule, ptr, blocked))
    result = SimResult(schedule, costs, resolved, starts, ends, None, scale)  # type: ignore[arg-type]
    result._positions = (f_pos, g_pos, i_pos)
    result._comm_ticks = (comm_f, comm_b)
    return result


def _rank_process(
    r: int,
    order: tuple[Action, ...],
    st: list[Number],
    en: list[Number],
    m: int,
    last: int,
    size: int,
    ptr: list[int],
    f_done: list[Number | None],
    g_done: list[Number | None],
    i_done: list[Number | None],
    f_pos: list[int],
    g_pos: list[int],
    i_pos: list[int],
    waiting: list[list[int] | None],
    push: Callable[[list[int]], None],
    dur_f: tuple[Number, ...],
    dur_b: tuple[Number, ...],
    dur_i: tuple[Number, ...],
    dur_w: tuple[Number, ...],
    comm_f: list[Number],
    comm_b: list[Number],
) -> Iterator[int]:
    """Run rank ``r``'s order, filling ``st``/``en`` (start and end ticks) in place.

    Each action starts when the rank is free and its inputs are there (ties keep the
    input's time). When an input is missing the generator records where it stopped in
    ``ptr[r]`` and yields the event's waiting key (``tag * size + stage * m + mb``);
    :func:`simulate` resumes it once the producer has pushed ``r`` back on the stack.
    Producing an event pushes the ranks waiting for it.
    """
    g_base, i_base = _G * size, _I * size
    t: Number = 0
    for i in range(len(order)):
        s, k, mb = order[i]
        idx = s * m + mb
        if k == "F":
            if s:
                d = f_done[idx - m]
                while d is None:
                    ptr[r] = i
                    yield idx - m
                    d = f_done[idx - m]
                d += comm_f[s]
                if d >= t:
                    t = d
            st[i] = t
            t += dur_f[s]
            f_done[idx] = t
            f_pos[idx] = i
            w = waiting[idx]
            if w is not None:
                waiting[idx] = None
                push(w)
        elif k == "W":
            d = i_done[idx]
            while d is None:
                ptr[r] = i
                yield i_base + idx
                d = i_done[idx]
            if d >= t:
                t = d
            st[i] = t
            t += dur_w[s]
        else:  # B or I
            d = f_done[idx]
            while d is None:
                ptr[r] = i
                yield idx
                d = f_done[idx]
            if d >= t:
                t = d
            if s < last:
                d = g_done[idx + m]
                while d is None:
                    ptr[r] = i
                    yield g_base + idx + m
                    d = g_done[idx + m]
                d += comm_b[s]
                if d >= t:
                    t = d
            st[i] = t
            if k == "I":
                t += dur_i[s]
                i_done[idx] = t
                i_pos[idx] = i
                w = waiting[i_base + idx]
                if w is not None:
                    waiting[i_base + idx] = None
                    push(w)
            else:
                t += dur_b[s]
            g_done[idx] = t
            g_pos[idx] = i
            w = waiting[g_base + idx]
            if w is not None:
                waiting[g_base + idx] = None
                push(w)
        en[i] = t
    ptr[r] = len(order)


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
