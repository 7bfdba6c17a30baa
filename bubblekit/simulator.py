"""Event simulation of a schedule under a cost model: the engine, written to be read.

The whole semantics (lessons 02 and 04 explain it):

1. Each rank runs its actions one at a time, in the order the schedule gives.
2. An action waits for the events it needs (:func:`bubblekit.actions.needs`: the previous
   stage's activation, the next stage's gradient, ...; an overlapped pair ``F&B`` waits
   for what both of its parts need).
3. It starts at the latest of: the moment its rank is free, and the end of each input
   (plus the communication latency when that input ran on another rank).
4. It lasts its cost, and when it ends it makes its own events
   (:func:`bubblekit.actions.produces`; a pair makes both parts' events at its end), which
   may let other ranks go on.

A *lowered* schedule (:meth:`bubblekit.Schedule.lower_comms`) carries its messages as actions:
``SEND`` and ``RECV`` take no time and never hold their rank (posting them is free, as PyTorch's
``isend``/``irecv``), and a message crosses only when both its send and its receive are posted
(:func:`bubblekit.actions.carried`): the compute that uses it starts no earlier than the later
of the two, plus the time on the wire and the latency. A receive posted late idles its rank.

With a link bandwidth (``Costs(bandwidth=..., activation_bytes=...)``) an event another rank
needs travels as a message: it goes on the link from its rank to that rank when the link is
free (each direction carries one message at a time, in the order they were sent), stays
``bytes / bandwidth`` on the wire, and arrives the latency later (:class:`Links`). With
``Costs(dp_reduce=...)`` each stage's data-parallel gradient reduction runs after the stage's
last backward or weight-gradient action, beside the compute, and the step ends when the last
one does (:func:`dp_reductions`).

Times are exact: when every cost is an int or a Fraction, :func:`simulate` scales them to
integer *ticks* (``ticks_per_unit`` of them per time unit), so no rounding ever decides a
start. A schedule whose ranks wait for each other forever raises :class:`DeadlockError`,
naming each blocked rank, the action it waits for and what that one waits for in turn.
The *critical path* walks back from the last action through whatever made each action
start when it did.

Two engines follow these rules: :func:`run_orders` below, about a hundred lines a learner
can read, and a tuned one (``bubblekit._fast_engine``, the same rules compiled to flat
arrays, about ten times faster than PyTorch's own dry run). :func:`simulate` uses the tuned
one, ``simulate(..., engine="readable")`` this one; ``tests/test_engines.py`` checks that
they give identical timelines, critical paths and deadlock messages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from itertools import accumulate
from operator import itemgetter
from typing import NamedTuple

from bubblekit._gc import gc_paused
from bubblekit._validate import Number
from bubblekit.actions import (
    COMM_KINDS,
    SINGLE_KINDS,
    Action,
    Event,
    Pair,
    carried,
    memory_delta,
    needs,
    parts,
    producers,
    produces,
)
from bubblekit.costs import Costs, ResolvedCosts
from bubblekit.i18n import register, tr
from bubblekit.schedules._flat import COMPUTE_CODES
from bubblekit.schedules.base import Schedule, ScheduleError, codes_of, orders_view
from bubblekit.timeline import Timeline

__all__ = [
    "simulate", "simulate_readable", "SimResult", "DeadlockError",
    "run_orders", "cost_timing", "Arrival", "Run", "Timing", "explain_deadlock", "critical_path",
    "ENGINES", "Links", "message_receivers", "dp_reductions", "Reduction",
]

#: The engines :func:`simulate` can use.
ENGINES: tuple[str, ...] = ("fast", "readable")


class DeadlockError(ScheduleError):
    """The schedule's dependencies can never all be met: some ranks wait forever.

    Used in lessons 01, 02 and 04.
    """


# ============================================================== the readable engine
class Arrival(NamedTuple):
    """An input of an action: the ``event``, where it was made (``rank``, ``position`` in
    that rank's order), when (``end``, in ticks) and, for a message over a link with a
    bandwidth, when it came off the wire (``crossed``, ticks; ``None`` without a bandwidth
    and on the same rank). The hop's latency comes on top of ``crossed``."""

    event: Event
    rank: int
    position: int
    end: Number
    crossed: Number | None = None


#: ``timing(rank, action, free, arrivals) -> (start, end)``: when an action runs, given
#: when its rank became free (``None`` before its first action) and its inputs.
Timing = Callable[[int, Action, "Number | None", "list[Arrival]"], "tuple[Number, Number]"]


class Run(NamedTuple):
    """What :func:`run_orders` returns: per rank, start and end times of each action, and
    for each event the ``(rank, index)`` of the action that made it."""

    starts: list[list[Number]]
    ends: list[list[Number]]
    made_by: dict[Event, tuple[int, int]]
    #: ``(event, receiving rank) -> when its message came off the wire`` (ticks), with links
    crossed: dict[tuple[Event, int], Number] | None = None


def message_receivers(schedule: Schedule) -> dict[tuple[str, int], tuple[int, ...]]:
    """``(event kind, stage) -> the other ranks that need that stage's event``: where its messages go.

    By the dependency rule (:func:`bubblekit.actions.needs`) and the placement: an activation
    goes to the rank of the next stage, a gradient to the rank of the previous one, when that
    rank is not the event's own. The same for every microbatch.
    """
    if not isinstance(schedule, Schedule):
        raise TypeError(f"schedule must be a bubblekit Schedule, got {type(schedule).__name__}")
    place = schedule.placement
    out: dict[tuple[str, int], list[int]] = {}
    for s in range(schedule.n_stages):
        for k in SINGLE_KINDS:
            for e in needs(Action(s, k, 0), schedule.n_stages, schedule.pipes):
                to = out.setdefault((e.what, e.stage), [])
                if place[s] != place[e.stage] and place[s] not in to:
                    to.append(place[s])
    return {key: tuple(sorted(ranks)) for key, ranks in out.items() if ranks}


class Links:
    """The point-to-point links between ranks, for messages that take time on the wire.

    Each direction of a link carries one message at a time, in the order they were sent:
    :meth:`send` puts a message on the link ``src -> dst`` at the moment its event is made,
    and it goes on the wire when the messages sent before it have left. ``wire(kind)`` is
    the time on the wire of a message carrying an event of that kind (ticks).

    ``Links(lambda kind: 3).send(e, 0, 1, 1)`` is 4 (made at 1, 3 on the wire); a second message
    made at 2 on the same link waits until 4 and comes off at 7.
    """

    def __init__(self, wire: Callable[[str], Number]) -> None:
        if not callable(wire):
            raise TypeError(f"wire must be a function of an event kind returning a time, got {type(wire).__name__}")
        self.wire = wire
        self.free: dict[tuple[int, int], Number] = {}  # (src, dst) -> when that direction is next free

    def send(self, event: Event, src: int, dst: int, at: Number) -> Number:
        """Send ``event``'s message made at ``at``; return when it comes off the wire at ``dst``."""
        free = self.free.get((src, dst), at)
        end = (free if free > at else at) + self.wire(event.what)
        self.free[src, dst] = end
        return end


def cost_timing(duration: Callable[[Action], Number], latency: Number) -> Timing:
    """The simulator's timing rule: start at the latest of the rank's free time and each
    input's end (+ ``latency`` when it came from another rank, or when it is one end of a
    message of a lowered schedule: then from when the message crossed); end
    ``duration(action)`` later."""

    def timing(rank: int, action: Action, free: Number | None, arrivals: list[Arrival]) -> tuple[Number, Number]:
        start: Number = 0 if free is None else free
        for a in arrivals:
            if a.crossed is not None:  # a message: from when it came off the wire, plus the hop
                ready = a.crossed + latency
            else:
                ready = a.end + latency if a.rank != rank else a.end
            if ready >= start:  # a tie keeps the input's time (same value)
                start = ready
        return start, start + duration(action)

    return timing


def run_orders(
    orders: Sequence[Sequence[Action]],
    n_stages: int,
    timing: Timing,
    *,
    placement: Sequence[int] | None = None,
    missing_inputs: str = "wait",
    pipes: int = 1,
    links: Links | None = None,
    receivers: dict[tuple[str, int], tuple[int, ...]] | None = None,
    lowered: bool = False,
) -> Run:
    """Run each rank's order under the dependency rule; ``timing`` says when each action runs.

    Ranks take turns: each runs as many of its next actions as have every input, then the
    next rank goes, until a whole round makes no progress. (The times do not depend on
    the turns, only ``timing``'s calls do: one per action, in this order.)

    Args:
        orders: per rank, the actions in execution order.
        n_stages: stages of the model (``p * v``).
        timing: the timing rule (:func:`cost_timing` for costs; calibration passes its own).
        placement: the rank of each stage, to name the rank a deadlock waits on.
        missing_inputs: ``"wait"`` (an input no action makes is waited for: a deadlock) or
            ``"given"`` (it is taken as there from the start: a measured step with some
            actions missing).
        pipes: independent pipelines over the stages (2 for DualPipe; see
            :class:`~bubblekit.Schedule`).
        links: messages that take time on the wire (:class:`Links`), sent when their event is
            made to each rank ``receivers`` names (:func:`message_receivers`); ``None``: a
            message costs only the latency the timing rule adds.
        lowered: the orders carry their messages as ``SEND``/``RECV`` actions (needs
            ``placement``): a message crosses (on its link, with ``links``) when both of its
            ends are posted.

    Raises :class:`DeadlockError` when some ranks can never go on.
    """
    if missing_inputs not in ("wait", "given"):
        raise ValueError(f"missing_inputs must be 'wait' or 'given', got {missing_inputs!r}")
    if lowered and placement is None:
        raise ValueError("a lowered schedule needs its placement (whose ranks its messages join)")
    made_somewhere = {e for order in orders for a in order for e in produces(a)}
    lowered_at = placement if lowered else None

    def waits_for(action: Action) -> list[Event]:
        return [e for e in needs(action, n_stages, pipes, lowered_at) if missing_inputs == "wait" or e in made_somewhere]

    done: dict[Event, tuple[int, int]] = {}  # event -> (rank, index) of the action that made it
    crossed: dict[tuple[Event, int], Number] = {}  # (event, receiving rank) -> when its message came off the wire
    nxt = [0] * len(orders)  # next action of each rank
    starts: list[list[Number]] = [[] for _ in orders]
    ends: list[list[Number]] = [[] for _ in orders]
    progress = True
    while progress:
        progress = False
        for r, order in enumerate(orders):
            while nxt[r] < len(order):
                action = order[nxt[r]]
                wanted = waits_for(action)
                if any(e not in done for e in wanted):
                    break  # rank r waits until another rank makes what it needs
                arrivals = [Arrival(e, *done[e], ends[done[e][0]][done[e][1]], crossed.get((e, r))) for e in wanted]
                if lowered:  # each message crosses once both of its ends are posted
                    arrivals = _messages_cross(arrivals, r, links, crossed)
                free = ends[r][-1] if ends[r] else None
                start, end = timing(r, action, free, arrivals)
                starts[r].append(start)
                ends[r].append(end)
                for e in produces(action):
                    done[e] = (r, nxt[r])
                    if links is not None and receivers and not lowered:  # its messages go on their links now
                        for dst in receivers.get((e.what, e.stage), ()):
                            if dst != r:
                                crossed[e, dst] = links.send(e, r, dst, end)
                nxt[r] += 1
                progress = True
    stuck = {}
    for r, order in enumerate(orders):
        if nxt[r] < len(order):
            waited = next(e for e in waits_for(order[nxt[r]]) if e not in done)
            stuck[r] = (nxt[r], waited)
    if stuck:
        raise DeadlockError(explain_deadlock(orders, stuck, placement))
    return Run(starts, ends, done, crossed)


def _messages_cross(arrivals: list[Arrival], rank: int, links: Links | None,
                    crossed: dict[tuple[Event, int], Number]) -> list[Arrival]:
    """The message rule: the two ends of each message (its send and its receive posted) cross together.

    A message starts when the later of its two ends is posted; with ``links`` it then waits for its
    link and spends its time on the wire (:class:`Links`), in the order the receiving rank uses
    its messages. Both ends get the time it came off the wire (``crossed``).
    """
    posted: dict[Event, tuple[Number, int]] = {}  # carried event -> (when both ends are posted, the sender's rank)
    for a in arrivals:
        what = carried(a.event)
        if what is not None:
            at, src = posted.get(what, (a.end, a.rank))
            posted[what] = (a.end if a.end > at else at, a.rank if a.event.what.startswith("sent") else src)
    off = {}
    for what, (at, src) in posted.items():
        off[what] = links.send(what, src, rank, at) if links is not None else at
        crossed[what, rank] = off[what]
    return [a._replace(crossed=off[w]) if (w := carried(a.event)) is not None else a for a in arrivals]


register({
    # the deadlock explanation: a learner reads it (lessons 01, 02, 04 and their exercises), so both languages
    "deadlock.head": {"en": "deadlock: these ranks wait forever (each waits for an action that cannot run):",
                      "zh": "死锁：以下 rank 都卡住了，谁也跑不下去："},
    "deadlock.in_pair": {"en": "{action} (in the pair {pair})", "zh": "{action}（在 F&B 对 {pair} 里）"},
    "deadlock.later": {"en": "which rank {rank} itself runs later in its own order",
                       "zh": "可它在 rank {rank} 自己的顺序里排在后面"},
    "deadlock.stuck": {"en": "which rank {rank} has not run: it is stuck at {at}, waiting for {need}",
                       "zh": "而 rank {rank} 自己也卡在 {at} 上，在等 {need}"},
    "deadlock.nobody": {"en": "which no rank runs", "zh": "可没有哪个 rank 会运行它"},
    "deadlock.never": {"en": "which rank {rank} never runs", "zh": "可 rank {rank} 永远不会运行它"},
    # positions count from 1, as all feedback does (seventeenth review, W1)
    "deadlock.line": {"en": "  rank {rank} is blocked at {at} (action {index} of {total} in its order): waits for {need}, {why}",
                      "zh": "  rank {rank} 卡在 {at}（它的顺序里第 {index} 个动作，共 {total} 个）：要等 {need}，{why}"},
})


def explain_deadlock(
    orders: Sequence[Sequence[Action]], stuck: dict[int, tuple[int, Event]], placement: Sequence[int] | None = None
) -> str:
    """The deadlock message: each blocked rank, the action it waits for, and why that never runs.

    ``stuck[rank] = (index of the blocked action, the event it waits for)``. An action
    inside an overlapped pair is named with its pair (``7B3 (in the pair 0F7&7B3)``).
    """
    where = {x: r for r, order in enumerate(orders) for a in order for x in parts(a)}
    pair_of = {x: a for order in orders for a in order if type(a) is Pair for x in parts(a)}

    def maker(event: Event) -> tuple[Action | str, int | None]:
        found = [a for a in producers(event) if a in where]
        action = found[0] if found else producers(event)[0]
        rank = where.get(action, placement[event.stage] if placement is not None else None)
        if action in pair_of:
            return tr("deadlock.in_pair", action=action, pair=pair_of[action]), rank
        return action, rank

    lines = [tr("deadlock.head")]
    for r in sorted(stuck):
        index, event = stuck[r]
        need, owner = maker(event)
        if owner == r:
            why = tr("deadlock.later", rank=r)
        elif owner in stuck:
            o_index, o_event = stuck[owner]
            why = tr("deadlock.stuck", rank=owner, at=orders[owner][o_index], need=maker(o_event)[0])
        elif owner is None:
            why = tr("deadlock.nobody")
        else:
            why = tr("deadlock.never", rank=owner)
        lines.append(tr("deadlock.line", rank=r, at=orders[r][index], index=index + 1, total=len(orders[r]), need=need,
                        why=why))
    return "\n".join(lines)


def critical_path(
    orders: Sequence[Sequence[Action]],
    n_stages: int,
    starts: Sequence[Sequence[Number]],
    ends: Sequence[Sequence[Number]],
    made_by: Callable[[Event], tuple[int, int] | None],
    latency: Number,
    pipes: int = 1,
    crossed: Callable[[Event, int], Number | None] | None = None,
    placement: Sequence[int] | None = None,
) -> list[tuple[int, int]]:
    """The chain of actions that sets the makespan, first to last, as ``(rank, index)``.

    Start from the action that ends last and walk back: to the input that made the action
    start when it did (the latest input, with its latency; it wins a tie with the rank's
    own previous end, and a later input in :func:`~bubblekit.actions.needs` wins a tie with
    an earlier one), else to the rank's previous action when the action started right at
    its end, else stop. ``crossed(event, rank)``: when a message came off its link's wire
    (:class:`Links`; ``None``: when it was made), the latency comes on top. ``placement`` is
    given for a lowered schedule: a message's input is then the later of its send and its
    receive (a tie: the send), ready when the message crossed plus the latency.
    """
    return [(r, i) for r, i, _ in _walk_back(orders, n_stages, starts, ends, made_by, latency, pipes, crossed,
                                             placement)]


def _walk_back(
    orders: Sequence[Sequence[Action]],
    n_stages: int,
    starts: Sequence[Sequence[Number]],
    ends: Sequence[Sequence[Number]],
    made_by: Callable[[Event], tuple[int, int] | None],
    latency: Number,
    pipes: int,
    crossed: Callable[[Event, int], Number | None] | None,
    placement: Sequence[int] | None,
) -> list[tuple[int, int, Action]]:
    """:func:`critical_path`'s walk, each step with its action: ``(rank, index, action)``, first to last."""
    r = max(range(len(ends)), key=lambda q: ends[q][-1] if ends[q] else -1)
    i = len(ends[r]) - 1
    action = orders[r][i]
    path = [(r, i, action)]
    # needs of (stage, kind) at microbatch 0, each with the message it carries (lowered), or None when a
    # need's microbatch is not the action's own (then the rule is asked again)
    rules: dict[tuple[int, str], tuple[tuple[str, int, tuple[str, int] | None], ...] | None] = {}
    lowered = placement is not None
    while True:
        free = ends[r][i - 1] if i else 0
        cause, cause_ready = None, None
        rule = rules.get(action[:2], ()) if type(action) is Action else None
        if rule == ():  # not seen yet: the rule's events, kept when each has the action's own microbatch
            template = needs(Action(action[0], action[1], 0), n_stages, pipes, placement)
            rule = rules[action[:2]] = None if any(e.microbatch for e in template) else tuple(
                (e.what, e.stage, None if (msg := carried(e)) is None or not lowered else (msg.what, msg.stage))
                for e in template)
        found: list[tuple[Event, tuple[int, int] | None, Event | None]]
        if rule is None:
            found = [(e, made_by(e), carried(e) if lowered else None)
                     for e in needs(action, n_stages, pipes, placement)]
        else:
            mb = action[2]
            found = []
            for need_what, need_stage, message in rule:
                e = Event(need_what, need_stage, mb)
                found.append((e, made_by(e), None if message is None else Event(message[0], message[1], mb)))
        posted: dict[Event, Number] = {}  # lowered: carried event -> when the later of its two ends was posted
        for _event, src, what in found if lowered else ():
            if what is not None and src is not None:
                t = ends[src[0]][src[1]]
                posted[what] = t if what not in posted or t > posted[what] else posted[what]
        for event, src, what in found:
            if src is None:
                continue
            ready = ends[src[0]][src[1]]
            if what is not None:  # one end of a message: only the later one made it wait
                if ready < posted[what]:
                    continue
                off = crossed(what, r) if crossed else None
                ready = (ready if off is None else off) + latency
            elif src[0] != r:
                off = crossed(event, r) if crossed else None
                ready = (ready if off is None else off) + latency
            if cause_ready is None or ready >= cause_ready:
                cause, cause_ready = src, ready
        if cause is not None and cause_ready >= free:  # type: ignore[operator]
            r, i = cause
        elif i > 0 and starts[r][i] == ends[r][i - 1] and starts[r][i] > 0:
            i -= 1
        else:
            break
        action = orders[r][i]
        path.append((r, i, action))
    path.reverse()
    return path


# ============================================================ the step's end: dp reductions
class Reduction(NamedTuple):
    """A stage's data-parallel gradient reduction: on ``rank``, from ``start`` to ``end``."""

    rank: int
    stage: int
    start: Number
    end: Number


def dp_reductions(orders: Sequence[Sequence[Action]], ends: Sequence[Sequence[Number]],
                  times: Sequence[Number], placement: Sequence[int] | None = None) -> list[Reduction]:
    """When each stage's gradient reduction runs, given the step's timeline (any time unit).

    A stage's reduction (``times[stage]`` long; 0: none) becomes ready when the stage's last
    action that computes weight gradients ends (``B``, ``W``, or the backward of an ``F&B``
    pair). Each rank runs its reductions beside its compute, one at a time, in the order
    they become ready (a tie: the lower stage first). The compute never waits for them;
    the step ends when the last one ends. With ``placement`` (the rank of each stage) each
    rank's order is read from its end until each of its stages has been seen.
    """
    out: list[Reduction] = []
    for name, value in (("orders", orders), ("ends", ends), ("times", times)):
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise TypeError(f"{name} must be a sequence (per rank, or per stage for times), got {type(value).__name__}")
    if len(ends) != len(orders) or any(len(e) != len(o) for e, o in zip(ends, orders)):
        raise ValueError("ends must give one end time per action of orders, rank by rank")
    if not any(times):
        return out
    for r, order in enumerate(orders):
        ready: dict[int, Number] = {}
        left = None if placement is None else sum(1 for x in placement if x == r)
        for k in range(len(order) - 1, -1, -1):  # from the end: each stage's last B or W
            for x in parts(order[k]):
                if x.kind in ("B", "W") and x.stage not in ready:
                    ready[x.stage] = ends[r][k]
                    if left is not None:
                        left -= 1
            if left == 0:
                break
        free: Number | None = None
        for stage, at in sorted(ready.items(), key=lambda kv: (kv[1], kv[0])):
            if stage >= len(times) or not times[stage]:
                continue
            start = at if free is None or free < at else free
            free = start + times[stage]
            out.append(Reduction(r, stage, start, free))
    return out


# ===================================================================== the result
class SimResult(Timeline):
    """A simulated step: a :class:`Timeline` plus the schedule, the costs and memory.

    Extra attributes: ``schedule``, ``costs`` (the :class:`Costs` given), ``resolved``
    (per-stage numbers), ``engine`` (which engine ran). Memory is in microbatch
    activations (see :mod:`bubblekit.costs`).
    """

    def __init__(
        self,
        schedule: Schedule,
        costs: Costs,
        resolved: ResolvedCosts,
        starts: list[list[Number]],
        ends: list[list[Number]],
        ticks_per_unit: int,
        made_by: Callable[[Event], tuple[int, int] | None],
        latency_ticks: Number,
        engine: str = "fast",
        crossed: Callable[[Event, int], Number | None] | None = None,
        reductions: Sequence[Reduction] = (),
        busy: Sequence[Number] | None = None,
    ) -> None:
        # the engines hand over fresh lists (or, for a lowered schedule, views of its compute's times that
        # make the lists when first read in full), and each rank's ends grow along its order
        last = max(e[-1] for e in ends if e) if any(ends) else None
        self._compute_end = last
        if reductions and last is not None:
            last = max(last, max(x.end for x in reductions))
        # the labels: a lowered schedule's own actions are made only when a span is read (orders_view)
        self._own(starts, ends, orders_view(schedule), costs.unit, ticks_per_unit, 0, last, False,
                  f"simulated {schedule.name}")
        if busy is not None:  # known to the engine: each rank's time in its compute (its sends and receives take none)
            self.__dict__["_busy_ticks"] = list(busy)
        self._reductions = tuple(reductions)
        self._crossed = crossed
        self.schedule = schedule
        self.costs = costs
        self.resolved = resolved
        self.engine = engine
        self._made_by = made_by
        self._latency_ticks = latency_ticks

    # ------------------------------------------------------ the step's end
    @property
    def reductions(self) -> list[Reduction]:
        """Each stage's data-parallel gradient reduction (``Costs(dp_reduce=...)``), in the
        timeline's unit, by start; empty without ``dp_reduce``. See :func:`dp_reductions`."""
        real = self._real
        return [Reduction(x.rank, x.stage, real(x.start), real(x.end))
                for x in sorted(self._reductions, key=lambda x: (x.start, x.rank, x.stage))]

    @property
    def exposed_reduction(self) -> Number:
        """How long the step runs past its last compute action, waiting for reductions (unit)."""
        end = self._compute_end if self._compute_end is not None else self._t1
        return self._real(self._t1 - end)

    # --------------------------------------------------------------- memory
    def _memory_table(self) -> dict[tuple[int, str], tuple[float, float]]:
        """``(stage, kind) -> (allocated at start, freed at end)``, by the memory rule, as floats.

        Single kinds only: a pair's entry comes from its parts (:meth:`_delta`).
        """
        act = [float(a) for a in self.resolved.activation]
        wh = float(self.resolved.w_held)
        return {(s, k): memory_delta(Action(s, k, 0), act, wh) for s in range(len(act))  # type: ignore[misc]
                for k in (*SINGLE_KINDS, *COMM_KINDS)}

    @staticmethod
    def _delta(table: dict[tuple[int, str], tuple[float, float]], a: Action) -> tuple[float, float]:
        """``(allocated, freed)`` of any action: a pair allocates its forward's and frees its backward's."""
        if type(a) is Pair:
            return table[a.forward.stage, "F"][0], table[a.backward.stage, a.backward.kind][1]
        return table[a.stage, a.kind]

    @cached_property
    def memory_curves(self) -> list[list[tuple[Number, float]]]:
        """Per rank, the step curve of activations held: ``[(time, held_after_time), ...]``.

        By the memory rule (:func:`bubblekit.actions.memory_delta`): a forward allocates its
        stage's activations when it starts; a full backward frees them when it ends; a
        split backward frees ``1 - w_held`` of them when ``I`` ends and the rest when ``W``
        ends. Time in the timeline's unit, memory in microbatch activations. Changes at
        the same instant (a backward ending as the next forward starts) are merged into
        one point, so the curve shows a level rather than a spike; the peak is unchanged
        because a rank frees before it allocates at one instant.
        """
        table = self._memory_table()
        real = self._real
        curves: list[list[tuple[Number, float]]] = []
        delta = self._delta
        for r, order in enumerate(orders_view(self.schedule)):
            held = 0.0
            pts: list[tuple[Number, float]] = [(0, 0.0)]
            for a, st, en in zip(order, self._starts[r], self._ends[r]):
                alloc, free = delta(table, a)
                for t, change in ((st, alloc), (en, -free)):
                    if not change:
                        continue
                    held += change
                    t = real(t)
                    if len(pts) > 1 and pts[-1][0] == t:
                        pts[-1] = (t, held)
                    else:
                        pts.append((t, held))
            curves.append(pts)
        return curves

    @cached_property
    def peak_activations(self) -> tuple[float, ...]:
        """Peak activations held on each rank, in microbatch activations."""
        table = self._memory_table()
        # a send or a receive holds nothing: a lowered schedule's peaks are its compute's
        lowered = self.schedule.__dict__.get("_lowered_from")
        compute = self.schedule if lowered is None else lowered.base
        orders, codes = orders_view(compute), codes_of(compute)
        if not self.schedule.has_pairs and all(not alloc or not free for alloc, free in table.values()):
            # every action only allocates or only frees: the peak is a running sum's maximum
            net = {key: alloc - free for key, (alloc, free) in table.items()}
            summed = None
            if codes is not None:  # the sums over the integer codes (numpy), no action made
                summed = codes.running_peaks([net[s, k] for k in COMPUTE_CODES for s in range(codes.n)])
            if summed is not None:
                return tuple(round(x, 9) for x in summed)
            if len(set(self.resolved.activation)) == 1:  # the same on every stage: look up by kind
                by_kind = {k: x for (s, k), x in net.items() if s == 0}
                deltas = [map(by_kind.__getitem__, map(itemgetter(1), order)) for order in orders]
            else:
                deltas = [map(net.__getitem__, map(itemgetter(0, 1), order)) for order in orders]
            return tuple(round(max(accumulate(d, initial=0.0)), 9) for d in deltas)
        peaks = []
        for order in orders:
            held = top = 0.0
            for a in order:
                alloc, free = self._delta(table, a)
                held += alloc
                top = max(top, held)
                held -= free
            peaks.append(round(top, 9))
        return tuple(peaks)

    @property
    def max_peak_activations(self) -> float:
        """The largest per-rank peak: what sets the memory budget."""
        return max(self.peak_activations)

    # -------------------------------------------------------- critical path
    @cached_property
    def critical_path(self) -> list[tuple[int, Action]]:
        """The chain of actions that sets the makespan, first to last, as ``(rank, action)``.

        See :func:`critical_path`: each step goes to whatever made the action start when
        it did, an input (plus its latency) or the rank's previous action; ties prefer
        the input, to show the pipeline's chain. (A schedule simulated with
        ``validate=False`` that repeats an action links to its last copy.)
        """
        orders = orders_view(self.schedule)
        with gc_paused():  # its steps make small objects that die young: no need to walk the timeline's lists
            path = _walk_back(orders, self.schedule.n_stages, self._starts, self._ends, self._made_by,
                              self._latency_ticks, self.schedule.pipes, self._crossed,
                              self.schedule.placement if self.schedule.has_comms else None)
        return [(r, a) for r, _, a in path]

    def __repr__(self) -> str:
        return (
            f"<SimResult {self.schedule.name} p={self.schedule.p} m={self.schedule.m} v={self.schedule.v} "
            f"makespan={self.makespan} {self.unit} bubble_ratio={self.bubble_ratio:.4f} "
            f"bubble_overhead={self.bubble_overhead:.4f}>"
        )


# =================================================================== the entry points
def simulate(
    schedule: Schedule, costs: Costs | None = None, *, validate: bool = True, engine: str = "fast"
) -> SimResult:
    """Run ``schedule`` under ``costs`` (default ``Costs()``: F = 1, B = 2 slots, no latency).

    Returns a :class:`SimResult` with makespan, bubble ratio and overhead, per-rank busy and
    idle intervals, memory curves, the critical path and Chrome-trace export.

    Args:
        schedule: what each rank runs, in order (:func:`bubblekit.schedule`, or
            :meth:`bubblekit.Schedule.from_text`).
        costs: durations, latency and activation memory (:class:`bubblekit.Costs`).
        validate: first check that every action appears exactly once, on its rank.
        engine: ``"fast"`` (the tuned engine) or ``"readable"`` (:func:`run_orders`);
            both give the same result.

    Cost: about 2 µs and 250 bytes per action, end to end, with the fast engine (the
    readable one is about five times slower). Schedules are limited in size where they
    are built (:data:`bubblekit.schedules.MAX_ACTIONS`).

    Raises:
        ScheduleError: a missing, duplicate or misplaced action (when ``validate``), or an
            action outside the schedule's stages and microbatches (always).
        DeadlockError: dependencies that can never be met.

    Used in every lesson.
    """
    if not isinstance(schedule, Schedule):
        raise TypeError(f"schedule must be a bubblekit Schedule, got {type(schedule).__name__}")
    if costs is None:
        costs = Costs()
    elif not isinstance(costs, Costs):
        raise TypeError(f"costs must be a bubblekit Costs, got {type(costs).__name__}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {list(ENGINES)}, got {engine!r}")
    if validate:
        schedule.validate()
    else:
        schedule.check_ranges()
    resolved = costs.resolve(schedule.n_stages, schedule.chunks_per_microbatch)
    ticks, scale = resolved.scaled_to_integers()
    if engine == "readable":
        timing = cost_timing(ticks.time, ticks.comm)
        links = Links(ticks.wire_time) if ticks.has_links else None
        run = run_orders(schedule.orders, schedule.n_stages, timing, placement=schedule.placement,
                         pipes=schedule.pipes, links=links, receivers=message_receivers(schedule) if links else None,
                         lowered=schedule.has_comms)
        crossed = run.crossed or {}
        return SimResult(schedule, costs, resolved, run.starts, run.ends, scale, run.made_by.get, ticks.comm,
                         engine="readable", crossed=(lambda e, r: crossed.get((e, r))) if links else None,
                         reductions=dp_reductions(schedule.orders, run.ends, ticks.dp_reduce, schedule.placement))
    from bubblekit import _fast_engine

    with gc_paused():  # the engine's lists live as long as the result
        out = _fast_engine.run_lowered(schedule, ticks) if schedule.has_comms else None
        if out is None:
            out = _fast_engine.run(schedule, ticks)
    if out.stuck:
        raise DeadlockError(explain_deadlock(schedule.orders, out.stuck, schedule.placement))
    return SimResult(schedule, costs, resolved, out.starts, out.ends, scale, out.made_by, ticks.comm,
                     crossed=out.crossed, busy=out.busy,
                     reductions=dp_reductions(orders_view(schedule), out.ends, ticks.dp_reduce, schedule.placement))


def simulate_readable(schedule: Schedule, costs: Costs | None = None, *, validate: bool = True) -> SimResult:
    """:func:`simulate` with the readable engine (:func:`run_orders`): the one lessons point to."""
    return simulate(schedule, costs, validate=validate, engine="readable")
