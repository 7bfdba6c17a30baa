"""The tuned simulation engine behind :func:`bubblekit.simulate` (private).

It follows exactly the rules of the readable engine (:func:`bubblekit.simulator.run_orders`),
which defines the semantics; ``tests/test_engines.py`` checks that both give identical
timelines, critical paths and deadlock messages. What makes it fast:

* **the rules compiled once per (stage, kind)**: :func:`bubblekit.actions.needs` and
  :func:`~bubblekit.actions.produces` are called for one representative action of each
  stage and kind; every event becomes a flat integer key
  ``(event index * n_stages + stage) * m + microbatch``, so the engine indexes lists
  instead of hashing tuples, and the latency of each input is decided from the placement
  (an overlapped pair, whose two parts have different stages and microbatches, gets its
  own entry with the microbatches built in: :func:`compile_pairs`);
* **one generator per rank**: it runs its rank's order until an input is missing, then
  yields the key it waits for and is resumed when that event is made (a wake-up chain per
  key, kept in two integer lists), so no rank is ever polled and nothing is allocated
  per action.

* **messages over links** (only when they take time on the wire: ``Costs(bandwidth=...)``):
  each event another rank needs gets a second key, ``key + size``, made when its message has
  crossed the link (:class:`~bubblekit.simulator.Links`' rule: each direction one message at a
  time, in the order sent); the receiving rank waits for that key instead.

* **lowered schedules** (messages as ``SEND``/``RECV`` actions): both ends of a message are
  needs of the compute that uses it, each with the hop latency (so it starts after the later
  one plus the latency); with links, a *meet* entry then puts the message on its link from the
  later end's time (:func:`~bubblekit.simulator._messages_cross`' rule).

* **a schedule** :meth:`~bubblekit.Schedule.lower_comms` **made** (:func:`run_lowered`): its sends
  and receives stand where the lowering put them (their places are kept with it, a
  :class:`~bubblekit.schedules.comms.Layout`), so none ever waits and each is posted when the
  compute before it on its rank ends; the engine runs the compute alone, each input from
  another rank crossing from the later of its sender's end and its receive's posting, and
  gives the sends and receives their times afterwards, in bulk (``tests/test_comms.py`` pins
  it to the lowered orders run action by action).

* **the common case** (single actions, no ``SEND``/``RECV``): a leaner loop, without the loops
  over further needs, made events and messages that only pairs and lowered schedules have.

* **large schedules of the common case, in bulk** (:func:`_swept`, with numpy): without links each
  rank's ends are a running maximum over its inputs' times (``end = D + max(0, cummax(ready -
  D_before))``, ``D`` the running sum of its durations), so the ranks are recomputed one after
  another from flat integer arrays until nothing moves (1F1B and ZB-V settle in two or three
  sweeps). With links the queues' delays would move on as a slow front, so the actions are timed
  **level by level** instead (:func:`_levelled`): an action's level is one more than its rank's
  previous action's and than its inputs' producers' (:func:`_levels`, found by the same kind of
  sweeps, 2 to 4 of them for the registered schedules), so one level's actions, at most one per rank and one message per
  link, are timed together from lower levels only, each link's messages in their rank's order
  (about 2m + 2p levels for 1F1B). A schedule :meth:`~bubblekit.Schedule.lower_comms` made runs
  the same way (:func:`_lowered_in_bulk`). Anything these cannot settle goes to the generators
  (``tests/test_engines.py`` and ``tests/test_comms.py`` force the bulk paths on every schedule
  against the readable engine).

Each action costs about 1 µs; the memory is a few lists of ``len(EVENTS) * n_stages * m``
entries (twice that with links) plus the start and end lists.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from itertools import accumulate, chain, repeat
from operator import index, itemgetter, sub
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

from bubblekit._validate import Number
from bubblekit.actions import COMM_KINDS, EVENTS, SINGLE_KINDS, Action, Event, Pair, carried, needs, produces
from bubblekit.costs import ResolvedCosts
from bubblekit.schedules._flat import COMPUTE_CODES, ComputeRows
from bubblekit.schedules.base import Schedule, codes_of, orders_view
from bubblekit.simulator import message_receivers

if TYPE_CHECKING:
    from bubblekit.schedules.comms import Layout

__all__ = ["run", "run_lowered", "FastRun", "compile_rules", "compile_pairs"]

#: ``plan[stage][kind]``: (duration, first needed key, its latency, second needed key, its
#: latency, further (key, latency) needs, first made key, further made keys, messages sent as
#: (arrival key, link, time on the wire), messages met as (receive key, send key, link, time on
#: the wire, crossing key) in a lowered schedule with links); keys at microbatch 0, -1 where
#: there is none (see :func:`compile_rules`). The pair kind ``F&B`` has no row there: a pair's
#: entry is in the pair table (:func:`compile_pairs`).
Entry = tuple[Number, int, Number, int, Number, tuple[tuple[int, Number], ...], int, tuple[int, ...],
              tuple[tuple[int, int, Number], ...], tuple[tuple[int, int, int, Number, int], ...]]
Plan = list[dict[str, Entry]]


class FastRun(NamedTuple):
    """The engine's output: starts and ends per rank (ticks), ``made_by(event)`` (the
    ``(rank, index)`` of the action that made it), and ``stuck`` (empty unless the ranks
    deadlocked: ``rank -> (index of the blocked action, the event it waits for)``)."""

    starts: list[list[Number]]
    ends: list[list[Number]]
    made_by: _MadeBy
    stuck: dict[int, tuple[int, Event]]
    #: ``crossed(event, rank)``: when its message to ``rank`` came off the wire (None: no links)
    crossed: _Crossed | None = None
    #: each rank's busy time (ticks), when the engine knows it exactly without reading every start and end
    #: (a lowered schedule run on integer ticks); None: the timeline sums its starts and ends
    busy: list[Number] | None = None


class _Keys:
    """Flat integer keys of events: ``(event index * n_stages + stage) * m + microbatch``."""

    def __init__(self, n_stages: int, m: int, links: bool = False) -> None:
        self.n_stages, self.m = n_stages, m
        self.index = {what: k for k, what in enumerate(EVENTS)}
        self.size = len(EVENTS) * n_stages * m
        #: keys in use: ``size`` made events, then (with links) ``size`` arrivals of their messages
        self.slots = 2 * self.size if links else self.size

    def key(self, event: Event) -> int:
        return (self.index[event.what] * self.n_stages + event.stage) * self.m + event.microbatch

    def event(self, key: int) -> Event:
        rest, mb = divmod(key % self.size, self.m)  # an arrival key names its event
        what, stage = divmod(rest, self.n_stages)
        return Event(EVENTS[what], stage, mb)


class _MadeBy:
    """``made_by(event) -> (rank, index)``: decodes the engine's flat producer table."""

    def __init__(self, keys: _Keys, made: list[int], offsets: list[int]) -> None:
        self._keys, self._made, self._offsets = keys, made, offsets

    def __call__(self, event: Event) -> tuple[int, int] | None:
        if not (0 <= event.stage < self._keys.n_stages and 0 <= event.microbatch < self._keys.m):
            return None
        g = int(self._made[self._keys.key(event)])  # a list's int, or numpy's (the sweeps)
        if g < 0:
            return None
        rank = bisect_right(self._offsets, g) - 1
        return rank, g - self._offsets[rank]


class _LinkPlan(NamedTuple):
    """The links that carry messages: ``numbers[(src, dst)]`` numbers each direction, ``receivers``
    is :func:`~bubblekit.simulator.message_receivers`."""

    numbers: dict[tuple[int, int], int]
    receivers: dict[tuple[str, int], tuple[int, ...]]


class _Crossed:
    """``crossed(event, rank)``: when ``event``'s message to ``rank`` came off the wire (ticks), or None."""

    def __init__(self, keys: _Keys, done: list[Number | None], remote: dict[tuple[str, int], tuple[int, ...]]) -> None:
        self._keys, self._done, self._remote = keys, done, remote

    def __call__(self, event: Event, rank: int) -> Number | None:
        if rank not in self._remote.get((event.what, event.stage), ()):
            return None
        at = self._done[self._keys.key(event) + self._keys.size]
        as_python = getattr(at, "item", None)  # numpy's int (the sweeps) as Python's
        return at if as_python is None else as_python()  # type: ignore[no-any-return]


def compile_rules(schedule: Schedule, ticks: ResolvedCosts, keys: _Keys,
                  links: _LinkPlan | None = None) -> Plan:
    """The rules as a table: ``plan[stage][kind]`` is an :data:`Entry`.

    The needed events keep the order of :func:`~bubblekit.actions.needs`, each with the
    hop's latency when its stage sits on another rank; the first two needs and the first
    made event are unrolled for speed (every kind today has at most two needs; any further
    needs and made events go through the tuples). Every event of an action has the
    action's own microbatch (checked), so ``key + microbatch`` is the event of any
    microbatch. With ``links`` (:class:`_LinkPlan`) a need from another rank waits
    for the arrival key of its message, and each made event another rank needs is sent.
    """
    plan: Plan = []
    lowered = schedule.placement if schedule.has_comms else None
    for s in range(schedule.n_stages):
        row: dict[str, Entry] = {}
        for k in (*SINGLE_KINDS, *COMM_KINDS) if lowered else SINGLE_KINDS:
            a = Action(s, k, 0)
            wanted, made = needs(a, schedule.n_stages, schedule.pipes, lowered), produces(a)
            if any(e.microbatch != 0 for e in (*wanted, *made)):  # pragma: no cover - a rule for a new kind
                raise NotImplementedError(
                    f"the fast engine needs every event of {k} to have the action's own microbatch; "
                    "use simulate(..., engine='readable')"
                )
            row[k] = _entry(schedule, keys, s, ticks.duration(s, k), wanted, made, ticks, links)
        plan.append(row)
    return plan


def _entry(schedule: Schedule, keys: _Keys, stage: int, duration: Number, wanted: tuple[Event, ...],
           made: tuple[Event, ...], ticks: ResolvedCosts, links: _LinkPlan | None) -> Entry:
    """One :data:`Entry`: the needed events with their hop latency, the made events, the messages sent."""
    place, comm = schedule.placement, ticks.comm
    here = place[stage]
    lowered = schedule.has_comms
    arrival = keys.size if links is not None else 0  # a remote need waits for its message's arrival key
    need = [(keys.key(e), comm) if carried(e) is not None  # an end of a message: the later one, + the hop
            else (keys.key(e) + arrival, comm) if place[e.stage] != here else (keys.key(e), 0) for e in wanted]
    make = [keys.key(e) for e in made]
    sends: list[tuple[int, int, Number]] = []
    meets: list[tuple[int, int, int, Number, int]] = []
    if links is not None and lowered:  # each message (receive end first, then send end) goes on its link
        for recv_end, sent_end in zip(wanted, wanted[1:]):
            what = carried(recv_end)
            if what is not None and recv_end.what.startswith("recv") and carried(sent_end) == what:
                link = links.numbers[place[sent_end.stage], here]
                meets.append((keys.key(recv_end), keys.key(sent_end), link, ticks.wire_time(what.what),
                              keys.key(what) + keys.size))
    elif links is not None:
        for e in made:
            for dst in links.receivers.get((e.what, e.stage), ()):
                if dst != here:
                    sends.append((keys.key(e) + keys.size, links.numbers[here, dst], ticks.wire_time(e.what)))
    (k1, l1), (k2, l2) = (need + [(-1, 0), (-1, 0)])[:2]
    return (duration, k1, l1, k2, l2, tuple(need[2:]), (make + [-1])[0], tuple(make[1:]), tuple(sends), tuple(meets))


def compile_pairs(schedule: Schedule, ticks: ResolvedCosts, keys: _Keys,
                  links: _LinkPlan | None = None) -> dict[Action, Entry]:
    """An :data:`Entry` for each overlapped pair of the schedule, keys at the parts' own
    microbatches (the engine adds 0): its needs are its forward's then its backward's, its
    made events both parts', its duration :meth:`~bubblekit.costs.ResolvedCosts.pair_duration`."""
    table: dict[Action, Entry] = {}
    for order in schedule.orders:
        for a in order:
            if type(a) is Pair and a not in table:
                wanted = needs(a, schedule.n_stages, schedule.pipes, schedule.placement if schedule.has_comms else None)
                made = produces(a)
                table[a] = _entry(schedule, keys, a.stage, ticks.pair_duration(a.forward.stage, a.backward.stage),
                                  wanted, made, ticks, links)
    return table


def run(schedule: Schedule, ticks: ResolvedCosts) -> FastRun:
    """Simulate ``schedule`` with integer-scaled costs ``ticks`` (see :func:`bubblekit.simulate`)."""
    keys = _Keys(schedule.n_stages, schedule.m, ticks.has_links)
    remote = message_receivers(schedule) if ticks.has_links else {}
    if any(len(dsts) > 1 for dsts in remote.values()):  # pragma: no cover - the rules send each event to one rank
        raise NotImplementedError("the fast engine keeps one arrival per event; use simulate(..., engine='readable')")
    links = None
    if ticks.has_links:  # one index per direction of each link that carries messages
        place = schedule.placement
        directions = sorted({(place[stage], dst) for (_, stage), dsts in remote.items() for dst in dsts})
        links = _LinkPlan({pair: k for k, pair in enumerate(directions)}, remote)
    link_free: list[Number] = [0] * (len(links.numbers) if links else 0)
    plan = compile_rules(schedule, ticks, keys, links)
    comm = ticks.comm
    pairs = compile_pairs(schedule, ticks, keys, links) if schedule.has_pairs else {}
    orders = orders_view(schedule)  # a schedule built as integer codes: its actions made only if the generators run
    p = len(orders)
    done: list[Number | None] = [None] * keys.slots  # when each event was made (then when each message arrived)
    made = [-1] * keys.size  # which action made it: offsets[rank] + index
    # ranks blocked on an event, as a chain without allocation: the first rank waiting for
    # event `key`, then for each rank the next one waiting for the same event (-1: none)
    first_waiting = [-1] * keys.slots
    next_waiting = [-1] * p
    starts: list[list[Number]] = [[0] * len(o) for o in orders]  # filled in place
    ends: list[list[Number]] = [[0] * len(o) for o in orders]
    ptr = [len(o) for o in orders]  # where a blocked rank stopped
    offsets = [0] * p
    for r in range(1, p):
        offsets[r] = offsets[r - 1] + len(orders[r - 1])
    stack = list(range(p - 1, -1, -1))  # ranks ready to go on, rank 0 first
    push, pop = stack.append, stack.pop

    def rank_process(r: int) -> Iterator[int]:
        """Run rank ``r``'s order; yield the key of an event it waits for."""
        order, st, en, base = orders[r], starts[r], ends[r], offsets[r]
        plan_, done_, made_, first, chain, ptr_, push_ = plan, done, made, first_waiting, next_waiting, ptr, push
        t: Number = 0
        for i, (s, k, mb) in enumerate(order):
            try:  # (free when nothing is raised)
                duration, k1, l1, k2, l2, more_needs, m1, more_makes, sends, meets = plan_[s][k]
            except KeyError:  # an overlapped pair: its own entry, microbatches built in
                duration, k1, l1, k2, l2, more_needs, m1, more_makes, sends, meets = pairs[order[i]]
                mb = 0
            if k1 >= 0:  # wait for each needed event, then start after the latest (+ latency)
                k1 += mb
                ready = done_[k1]
                while ready is None:
                    ptr_[r] = i
                    yield k1
                    ready = done_[k1]
                ready += l1
                if ready >= t:  # a tie keeps the input's time
                    t = ready
                if k2 >= 0:
                    k2 += mb
                    ready = done_[k2]
                    while ready is None:
                        ptr_[r] = i
                        yield k2
                        ready = done_[k2]
                    ready += l2
                    if ready >= t:
                        t = ready
                    for key, latency in more_needs:
                        key += mb
                        ready = done_[key]
                        while ready is None:
                            ptr_[r] = i
                            yield key
                            ready = done_[key]
                        ready += latency
                        if ready >= t:
                            t = ready
                    for kr, ks, link, wire, kc in meets:  # lowered, with links: each message on its link
                        # (a message has two ends, so its consumer has two needs or more)
                        at, sent = done_[kr + mb], done_[ks + mb]
                        if sent > at:  # type: ignore[operator]
                            at = sent
                        free = link_free[link]
                        off = (free if free > at else at) + wire  # type: ignore[operator]
                        link_free[link] = off
                        done_[kc + mb] = off
                        ready = off + comm
                        if ready >= t:
                            t = ready
            st[i] = t
            t += duration
            if m1 >= 0:  # make each event and wake the ranks waiting for it
                m1 += mb
                done_[m1] = t
                made_[m1] = base + i
                woken = first[m1]
                if woken >= 0:
                    first[m1] = -1
                    while woken >= 0:
                        push_(woken)
                        woken = chain[woken]
                for key in more_makes:  # the same for any further made event (I's i-done)
                    key += mb
                    done_[key] = t
                    made_[key] = base + i
                    woken = first[key]
                    if woken >= 0:
                        first[key] = -1
                        while woken >= 0:
                            push_(woken)
                            woken = chain[woken]
            for key, link, wire in sends:  # each message waits for its link, then crosses it
                key += mb
                free = link_free[link]
                arrived = (free if free > t else t) + wire
                link_free[link] = arrived
                done_[key] = arrived
                woken = first[key]
                if woken >= 0:
                    first[key] = -1
                    while woken >= 0:
                        push_(woken)
                        woken = chain[woken]
            en[i] = t
        ptr[r] = len(order)

    # the common case, leaner: single actions, no SEND/RECV, at most two made events and one message each
    lean: list[dict[str, tuple[Number, int, Number, int, Number, int, int, int, int, Number]]] | None = None
    if not pairs and not schedule.has_comms and all(
            not e[5] and len(e[7]) <= 1 and len(e[8]) <= 1 and not e[9] for row in plan for e in row.values()):
        lean = [{k: (e[0], e[1], e[2], e[3], e[4], e[6], (*e[7], -1)[0], *(e[8][0] if e[8] else (-1, -1, 0)))
                 for k, e in row.items()} for row in plan]

    def lean_process(r: int) -> Iterator[int]:
        """:func:`rank_process` for the common case: the same steps without the loops for the rare ones."""
        order, st, en, base = orders[r], starts[r], ends[r], offsets[r]
        plan_, done_, made_, first, chain, ptr_, push_ = lean, done, made, first_waiting, next_waiting, ptr, push
        t: Number = 0
        for i, (s, k, mb) in enumerate(order):
            duration, k1, l1, k2, l2, m1, m2, sk, link, wire = plan_[s][k]  # type: ignore[index]
            if k1 >= 0:
                k1 += mb
                ready = done_[k1]
                while ready is None:
                    ptr_[r] = i
                    yield k1
                    ready = done_[k1]
                ready += l1
                if ready >= t:
                    t = ready
                if k2 >= 0:
                    k2 += mb
                    ready = done_[k2]
                    while ready is None:
                        ptr_[r] = i
                        yield k2
                        ready = done_[k2]
                    ready += l2
                    if ready >= t:
                        t = ready
            st[i] = t
            t += duration
            en[i] = t
            if m1 >= 0:
                m1 += mb
                done_[m1] = t
                made_[m1] = base + i
                woken = first[m1]
                if woken >= 0:
                    first[m1] = -1
                    while woken >= 0:
                        push_(woken)
                        woken = chain[woken]
                if m2 >= 0:
                    m2 += mb
                    done_[m2] = t
                    made_[m2] = base + i
                    woken = first[m2]
                    if woken >= 0:
                        first[m2] = -1
                        while woken >= 0:
                            push_(woken)
                            woken = chain[woken]
            if sk >= 0:  # its message waits for its link, then crosses it
                sk += mb
                free = link_free[link]
                arrived = (free if free > t else t) + wire
                link_free[link] = arrived
                done_[sk] = arrived
                woken = first[sk]
                if woken >= 0:
                    first[sk] = -1
                    while woken >= 0:
                        push_(woken)
                        woken = chain[woken]
        ptr[r] = len(order)

    swept = _swept(orders, lean, keys, len(link_free), codes_of(schedule)) if lean is not None else None
    if swept is not None:
        starts, ends, made_a, done_a = swept
        return FastRun(starts, ends, _MadeBy(keys, made_a, offsets), {},
                       _Crossed(keys, done_a, remote) if links is not None else None)
    procs = [(rank_process if lean is None else lean_process)(r) for r in range(p)]
    blocked_on = [0] * p
    while stack:
        r = pop()
        key = next(procs[r], None)
        if key is not None:  # rank r waits for event `key`: chain it into that event's list
            blocked_on[r] = key
            next_waiting[r] = first_waiting[key]
            first_waiting[key] = r
    stuck = {r: (ptr[r], keys.event(blocked_on[r])) for r in range(p) if ptr[r] < len(orders[r])}
    return FastRun(starts, ends, _MadeBy(keys, made, offsets), stuck,
                   _Crossed(keys, done, remote) if links is not None else None)


# ------------------------------------------------- lowered by Schedule.lower_comms: the compute alone
class _LoweredMadeBy:
    """``made_by(event)`` of a lowered schedule run by :func:`run_lowered`: a compute event's action
    (its compute index turned into its index in the lowered order), a posted send's or receive's."""

    def __init__(self, keys: _Keys, made: list[int], offsets: list[int], layout: Layout,
                 placement: tuple[int, ...]) -> None:
        self._compute = _MadeBy(keys, made, offsets)
        self._keys, self._layout, self._placement = keys, layout, placement

    def __call__(self, event: Event) -> tuple[int, int] | None:
        what, stage, mb = event
        n, m = self._keys.n_stages, self._keys.m
        if not (0 <= stage < n and 0 <= mb < m):
            return None
        if what == "activation" or what == "gradient" or what == "i-done":
            found = self._compute(event)
            return None if found is None else (found[0], self._layout.pos[found[0]][found[1]])
        key = stage * m + mb + (n * m if what[-1] == "t" else 0)  # ...-gradient
        at = (self._layout.send_pos if what[0] == "s" else self._layout.recv_pos)[key]
        return None if at < 0 else (self._placement[stage], at)


def run_lowered(schedule: Schedule, ticks: ResolvedCosts) -> FastRun | None:
    """:func:`run` for a schedule :meth:`~bubblekit.Schedule.lower_comms` made, or ``None`` when it cannot help.

    Its sends and receives are where the lowering put them, so they never make their rank wait
    and each is posted when the compute before it on its rank ends (at 0 before the first): the
    engine runs the compute schedule alone, the message rule applied to each input from another
    rank (it crosses from the later of its sender's end and its receive's posting), then gives
    each send and receive the time of its place. ``None`` (run the lowered orders instead): pairs,
    or ranks that deadlock (the general engine names them).
    """
    from bubblekit.schedules.comms import layout_of

    lowered = schedule.__dict__.get("_lowered_from")
    if lowered is None or schedule.has_pairs or schedule.pipes != 1:
        return None
    base: Schedule = lowered.base
    n, m = schedule.n_stages, schedule.m
    layout = lowered.layout if lowered.layout is not None else layout_of(schedule.orders, n, m)
    has_links = ticks.has_links
    keys = _Keys(n, m, has_links)
    size = keys.size
    place = schedule.placement
    remote = message_receivers(schedule) if has_links else {}
    numbers: dict[tuple[int, int], int] = {}
    if has_links:
        directions = sorted({(place[stage], dst) for (_, stage), dsts in remote.items() for dst in dsts})
        numbers = {pair: k for k, pair in enumerate(directions)}
    link_free: list[Number] = [0] * len(numbers)
    comm = ticks.comm
    # plan[stage][kind]: (duration, local need, local need, made, made, remote need (its sender's key),
    # the receive's layout slot, link, time on the wire, crossing key); -1 where there is none
    plan: list[dict[str, tuple[Number, int, int, int, int, int, int, int, Number, int]]] = []
    for s in range(n):
        row = {}
        for k in SINGLE_KINDS:
            a = Action(s, k, 0)
            local = [keys.key(e) for e in needs(a, n, schedule.pipes) if place[e.stage] == place[s]]
            far = [e for e in needs(a, n, schedule.pipes) if place[e.stage] != place[s]]
            made_ = [keys.key(e) for e in produces(a)]
            if len(local) > 2 or len(far) > 1 or len(made_) > 2:  # pragma: no cover - a rule for a new kind
                return None
            rk = rslot = link = kc = -1
            wire: Number = 0
            if far:
                e = far[0]
                rk = keys.key(e)
                rslot = s * m + (n * m if e.what == "gradient" else 0)
                if has_links:
                    link, wire, kc = numbers[place[e.stage], place[s]], ticks.wire_time(e.what), rk + size
            local += [-1, -1]
            made_ += [-1, -1]
            row[k] = (ticks.duration(s, k), local[0], local[1], made_[0], made_[1], rk, rslot, link, wire, kc)
        plan.append(row)
    orders = orders_view(base)
    offsets = [0, *accumulate(map(len, orders))][:-1]
    bulk = _lowered_in_bulk(orders, plan, keys, layout.recv_k, comm, len(link_free), codes_of(base))  # numpy
    in_ints = bulk is not None  # the bulk path runs on integer ticks only
    if bulk is None:
        bulk = _lowered_generators(orders, plan, keys, layout.recv_k, comm, link_free, offsets)
        if bulk is None:
            return None  # a deadlock: the general engine names it
    starts, ends, made, done = bulk
    low_starts: list[Sequence[Number]] = []
    low_ends: list[Sequence[Number]] = []
    for r, length in enumerate(map(len, orders_view(schedule))):
        pos = layout.pos[r]
        st_c, en_c = starts[r], ends[r]
        if len(pos) == length:
            low_starts.append(st_c)
            low_ends.append(en_c)
            continue
        low_starts.append(LoweredTimes(pos, st_c, en_c, length))
        low_ends.append(LoweredTimes(pos, en_c, en_c, length))
    # the sends and receives take no time, so the busy time is the compute's: handed over when exact (integer
    # ticks; a sum of floats over the compute alone could differ in its last bits from the one over every entry)
    busy = [sum(en) - sum(st) for st, en in zip(starts, ends)] if in_ints else None
    return FastRun(low_starts, low_ends, _LoweredMadeBy(keys, made, offsets, layout, place), {},  # type: ignore[arg-type]
                   _Crossed(keys, done, remote) if has_links else None, busy)


def _lowered_generators(orders: Sequence[Sequence[Action]], plan: Sequence[Mapping[str, tuple[Any, ...]]], keys: _Keys,
                        recv_k: Sequence[int], comm: Number, link_free: list[Number],
                        offsets: list[int]) -> tuple[list[list[Number]], list[list[Number]], list[int], Any] | None:
    """:func:`run_lowered`'s compute timeline, one generator per rank (any size, no numpy); ``None``: a deadlock.
    Returns ``(starts, ends, made, done)``."""
    size = keys.size
    p = len(orders)
    done: list[Number | None] = [None] * keys.slots
    made = [-1] * size
    first_waiting = [-1] * keys.slots
    next_waiting = [-1] * p
    starts: list[list[Number]] = [[0] * len(o) for o in orders]
    ends: list[list[Number]] = [[0] * len(o) for o in orders]
    ptr = [len(o) for o in orders]
    stack = list(range(p - 1, -1, -1))
    push, pop = stack.append, stack.pop

    def rank_process(r: int) -> Iterator[int]:
        """Run rank ``r``'s compute; yield the key of an event it waits for."""
        order, st, en, base_ = orders[r], starts[r], ends[r], offsets[r]
        plan_, done_, made_, first, chain, ptr_, push_ = plan, done, made, first_waiting, next_waiting, ptr, push
        t: Number = 0
        for i, (s, k, mb) in enumerate(order):
            duration, k1, k2, m1, m2, rk, rslot, link, wire, kc = plan_[s][k]
            if k1 >= 0:
                k1 += mb
                ready = done_[k1]
                while ready is None:
                    ptr_[r] = i
                    yield k1
                    ready = done_[k1]
                if ready >= t:
                    t = ready
                if k2 >= 0:
                    k2 += mb
                    ready = done_[k2]
                    while ready is None:
                        ptr_[r] = i
                        yield k2
                        ready = done_[k2]
                    if ready >= t:
                        t = ready
            if rk >= 0:  # a message: from the later of its send (its sender's end) and its receive posted
                rk += mb
                at = done_[rk]
                while at is None:
                    ptr_[r] = i
                    yield rk
                    at = done_[rk]
                posted = recv_k[rslot + mb]
                if posted > 0 and en[posted - 1] > at:
                    at = en[posted - 1]
                if link >= 0:  # on its link, one message at a time
                    free = link_free[link]
                    at = (free if free > at else at) + wire  # type: ignore[operator]
                    link_free[link] = at
                    done_[kc + mb] = at
                ready = at + comm  # type: ignore[operator]
                if ready >= t:
                    t = ready
            st[i] = t
            t += duration
            en[i] = t
            if m1 >= 0:
                m1 += mb
                done_[m1] = t
                made_[m1] = base_ + i
                woken = first[m1]
                if woken >= 0:
                    first[m1] = -1
                    while woken >= 0:
                        push_(woken)
                        woken = chain[woken]
                if m2 >= 0:
                    m2 += mb
                    done_[m2] = t
                    made_[m2] = base_ + i
                    woken = first[m2]
                    if woken >= 0:
                        first[m2] = -1
                        while woken >= 0:
                            push_(woken)
                            woken = chain[woken]
        ptr[r] = len(order)

    procs = [rank_process(r) for r in range(p)]
    while stack:
        r = pop()
        key = next(procs[r], None)
        if key is not None:
            next_waiting[r] = first_waiting[key]
            first_waiting[key] = r
    if any(ptr[r] < len(orders[r]) for r in range(p)):
        return None  # a deadlock: the general engine names it
    return starts, ends, made, done


class LoweredTimes(Sequence[Number]):
    """One rank's starts (or ends) in a schedule :meth:`~bubblekit.Schedule.lower_comms` made, read from its compute's.

    A send or a receive after the c-th compute starts and ends when that compute ends (at 0
    before the first). An entry read by an integer index is looked up (a binary search over the
    compute's places); the whole list is made, and kept, on the first iteration, slice,
    comparison or ``repr``. Compares equal to the list of the same times (not to a tuple, as a list).
    """

    __slots__ = ("_pos", "_own", "_ends", "_length", "_list")

    def __init__(self, pos: Sequence[int], own: Sequence[Number], ends: Sequence[Number], length: int) -> None:
        #: the compute's places in the lowered order, its starts (or ends), its ends, the order's length
        self._pos, self._own, self._ends, self._length = pos, own, ends, length
        self._list: list[Number] | None = None

    def __len__(self) -> int:
        return self._length

    def _full(self) -> list[Number]:
        if self._list is None:
            pos, length = self._pos, self._length
            # each compute's end fills its place and the places up to the next compute; its own time then its place
            runs = list(map(sub, [*pos, length], [0, *pos]))
            out = list(chain.from_iterable(map(repeat, [0, *self._ends], runs)))
            if self._own is not self._ends:
                deque(map(out.__setitem__, pos, self._own), maxlen=0)
            self._list = out
        return self._list

    def __getitem__(self, j: Any) -> Any:
        if self._list is None and not isinstance(j, slice):
            j = index(j)  # an int, or anything that is one (numpy's integers); TypeError otherwise
            if j < 0:
                j += self._length
            if not 0 <= j < self._length:
                raise IndexError("lowered timeline index out of range")
            c = bisect_right(self._pos, j)  # computes at or before place j
            if c and self._pos[c - 1] == j:
                return self._own[c - 1]
            return self._ends[c - 1] if c else 0
        return self._full()[j]

    def __iter__(self) -> Iterator[Number]:
        return iter(self._full())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, LoweredTimes)):
            return self._full() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._full())


# ------------------------------------------- the common case in bulk: sweeps over the ranks (numpy)
#: the smallest schedule (actions) :func:`_swept` takes on; smaller ones run the generators (numpy's
#: fixed cost per call would outweigh them). The tests set it to 0 to hold the sweeps to the same timelines.
SWEEP_MIN_ACTIONS = 20_000
#: sweeps before :func:`_sweeps` or :func:`_levels` gives up (a deadlock never settles; the generators then
#: name it): the registered schedules settle in 2 to 4
MAX_SWEEPS = 12


def _np() -> ModuleType | None:
    try:
        import numpy
    except ImportError:  # the browser edition: the generators alone
        return None
    return numpy


def _swept(orders: Sequence[Sequence[Action]], lean: Sequence[Mapping[str, tuple[Number, ...]]], keys: _Keys,
           n_links: int, codes: ComputeRows | None = None) -> tuple[list[list[Number]], list[list[Number]], list[int], Any] | None:
    """The lean loop's timeline (:func:`run`), computed rank by rank in bulk; ``None`` where it cannot help.

    Without links, :func:`_sweeps` (each rank's ends a running maximum, the ranks recomputed until
    nothing moves: two or three sweeps); with links, :func:`_levelled` (the actions timed level by
    level, each link's messages in order: the sweeps would settle slowly there, the queues' delays
    moving on as a front about p actions per sweep). ``None`` (run the generators): no numpy, a
    time that is not an int, an action of no duration without links (a cycle of waits could then
    settle), an input nobody makes or an event made twice, or no settling within
    :data:`MAX_SWEEPS` sweeps (a deadlock). Returns ``(starts, ends, made, done)``.
    """
    n_actions = sum(map(len, orders))
    if n_actions < SWEEP_MIN_ACTIONS:  # numpy is imported only past here
        return None
    np = _np()
    if np is None:
        return None
    flat = _per_action(np, orders, lean, n_actions, codes)
    if flat is None:
        return None
    e, mb = flat
    dur = e[:, 0]
    if n_actions and int(dur.min()) <= (-1 if n_links else 0):
        return None
    if not _fits_int64(np, [dur, e[:, 9]], int(np.abs(e[:, [2, 4]]).max()) if n_actions else 0):
        return None
    zero = keys.slots  # a slot that stays 0: the need of an action that has none
    k1 = np.where(e[:, 1] >= 0, e[:, 1] + mb, zero)
    k2 = np.where(e[:, 3] >= 0, e[:, 3] + mb, zero)
    l1 = np.where(e[:, 1] >= 0, e[:, 2], 0)
    l2 = np.where(e[:, 3] >= 0, e[:, 4], 0)
    m1 = np.where(e[:, 5] >= 0, e[:, 5] + mb, -1)
    m2 = np.where(e[:, 6] >= 0, e[:, 6] + mb, -1)
    sk = np.where(e[:, 7] >= 0, e[:, 7] + mb, -1)
    made_keys = np.concatenate([m1[m1 >= 0], m2[m2 >= 0]])
    if len(made_keys) and int(np.bincount(made_keys).max()) > 1:  # an event made twice (validate=False)
        return None
    made_by = np.concatenate([np.flatnonzero(m1 >= 0), np.flatnonzero(m2 >= 0)])
    known = np.zeros(keys.slots + 1, dtype=bool)
    known[made_keys] = True
    known[sk[sk >= 0]] = True
    known[zero] = True
    if not (known[k1].all() and known[k2].all()):  # an input nobody makes: a deadlock the generators name
        return None
    lens = [len(o) for o in orders]
    offs = [0, *np.cumsum(lens).tolist()]
    if n_links:  # messages on links: in one pass, level by level
        levelled = _levelled(np, offs, dur, (k1, l1, k2, l2), (m1, m2), (sk, e[:, 8], e[:, 9]), None,
                             keys.slots, n_links)
        if levelled is None:
            return None
        ends, done = levelled
    else:
        swept = _sweeps(np, offs, dur, k1, l1, k2, l2, m1, m2, keys.slots)
        if swept is None:
            return None
        ends, done = swept
    starts_l = (ends - dur).tolist()
    ends_l = ends.tolist()
    made = np.full(keys.size, -1, dtype=np.int64)
    made[made_keys] = made_by
    return ([starts_l[offs[r]:offs[r + 1]] for r in range(len(orders))],
            [ends_l[offs[r]:offs[r + 1]] for r in range(len(orders))], made, done)


def _per_action(np: ModuleType, orders: Sequence[Sequence[Action]], plan: Sequence[Mapping[str, tuple[Number, ...]]],
                n_actions: int, codes: ComputeRows | None) -> tuple[Any, Any] | None:
    """Each action's plan entry (``plan[stage][kind]``, a tuple of ints) as a row of an int64 array, and its
    microbatch: ``(entries, microbatches)``; ``None`` for a time that is not an int or an entry past 2**40
    (the callers then bound the sums too: :func:`_fits_int64`).
    ``codes``: the schedule's integer codes, when it was built as codes (read instead of its actions)."""
    kinds = sorted({k for row in plan for k in row})
    kind_of = {k: j for j, k in enumerate(kinds)}
    nk = len(kinds)
    width = len(next(iter(plan[0].values()))) if plan and plan[0] else 1
    table = np.zeros((len(plan) * nk, width), dtype=np.int64)
    for s, row in enumerate(plan):
        for k, e in row.items():
            if any(type(x) is not int for x in e):
                return None
            ints = [int(x) for x in e]  # durations and wire times far from int64's end: no overflow
            if max(map(abs, ints)) > 1 << 40:
                return None
            table[s * nk + kind_of[k]] = ints
    if codes is not None:  # a schedule built as integer codes
        st, code_kind, mb = codes.arrays()
        remap = np.array([kind_of.get(k, -1) for k in COMPUTE_CODES], dtype=np.int64)
        kd = remap[code_kind]
        if len(kd) and int(kd.min()) < 0:  # pragma: no cover - a kind the plan has no entry for
            return None
        return table[st * nk + kd], mb
    every = chain.from_iterable
    try:
        kd = np.fromiter(map(kind_of.__getitem__, map(itemgetter(1), every(orders))), dtype=np.int64,
                         count=n_actions)
    except KeyError:  # pragma: no cover - a kind the plan has no entry for
        return None
    st = np.fromiter(map(itemgetter(0), every(orders)), dtype=np.int64, count=n_actions)
    mb = np.fromiter(map(itemgetter(2), every(orders)), dtype=np.int64, count=n_actions)
    return table[st * nk + kd], mb


def _fits_int64(np: ModuleType, times: Sequence[Any], latency: int) -> bool:
    """True when no time of the run can pass int64: every duration and time on the wire summed (``times``:
    arrays of them), plus one ``latency`` per action, stays under 2**62 (no chain of waits is longer)."""
    total = sum(float(np.abs(t).sum(dtype=np.float64)) for t in times) + len(times[0]) * float(latency)
    return total < 2.0 ** 62


def _lowered_in_bulk(orders: Sequence[Sequence[Action]], plan: Sequence[Mapping[str, tuple[Number, ...]]],
                     keys: _Keys, recv_k: Sequence[int], comm: Number, n_links: int,
                     codes: ComputeRows | None = None) -> tuple[list[list[Number]], list[list[Number]], Any, Any] | None:
    """:func:`run_lowered`'s compute timeline level by level (:func:`_levelled`, numpy); ``None`` where it
    cannot help (small, no numpy, times that are not ints, an input nobody makes, a deadlock).
    Returns ``(starts, ends, made, done)``."""
    n_actions = sum(map(len, orders))
    if n_actions < SWEEP_MIN_ACTIONS or type(comm) is not int:
        return None
    np = _np()
    if np is None:
        return None
    flat = _per_action(np, orders, plan, n_actions, codes)
    if flat is None:
        return None
    e, mb = flat
    if not _fits_int64(np, [e[:, 0], e[:, 8]], abs(comm)):
        return None
    zero = keys.slots
    # plan rows: (duration, local need, local need, made, made, remote need, the receive's slot, link, wire, crossing)
    k1 = np.where(e[:, 1] >= 0, e[:, 1] + mb, zero)
    k2 = np.where(e[:, 2] >= 0, e[:, 2] + mb, zero)
    m1 = np.where(e[:, 3] >= 0, e[:, 3] + mb, -1)
    m2 = np.where(e[:, 4] >= 0, e[:, 4] + mb, -1)
    far = e[:, 5] >= 0
    rk = np.where(far, e[:, 5] + mb, zero)
    made_keys = np.concatenate([m1[m1 >= 0], m2[m2 >= 0]])
    if len(made_keys) and int(np.bincount(made_keys).max()) > 1:  # pragma: no cover - validated schedules
        return None
    lens = [len(o) for o in orders]
    offs = [0, *np.cumsum(lens).tolist()]
    rank_start = np.repeat(np.asarray(offs[:-1], dtype=np.int64), lens)
    posted = np.asarray(recv_k, dtype=np.int64)[np.where(far, e[:, 6] + mb, 0)]
    post = np.where(far & (posted > 0), rank_start + posted - 1, n_actions)  # the compute whose end posts it
    zeros = np.zeros(n_actions, dtype=np.int64)
    kc = np.where(far & (e[:, 9] >= 0), e[:, 9] + mb, -1)
    levelled = _levelled(np, offs, e[:, 0], (k1, zeros, k2, zeros), (m1, m2), None,
                         (rk, post, np.where(far, comm, 0), e[:, 7], e[:, 8], kc), keys.slots, n_links)
    if levelled is None:
        return None
    ends, done = levelled
    starts_l, ends_l = (ends - e[:, 0]).tolist(), ends.tolist()
    made = np.full(keys.size, -1, dtype=np.int64)
    made[made_keys] = np.concatenate([np.flatnonzero(m1 >= 0), np.flatnonzero(m2 >= 0)])
    return ([starts_l[a:b] for a, b in zip(offs, offs[1:])], [ends_l[a:b] for a, b in zip(offs, offs[1:])],
            made, done)


def _sweeps(np: ModuleType, offs: list[int], dur: Any, k1: Any, l1: Any, k2: Any, l2: Any, m1: Any, m2: Any,
            slots: int) -> tuple[Any, Any] | None:
    """The ends of every action (flat, rank-major) and the events' times, by sweeps over the ranks (no links).

    Each rank's ends are ``D + max(0, cummax(ready - D_before))`` (``D`` the running sum of its durations),
    recomputed rank after rank (in order, then backwards) from its inputs' latest times until a whole
    sweep changes nothing; ``None`` after :data:`MAX_SWEEPS` (a deadlock never settles).
    """
    done = np.zeros(slots + 1, dtype=np.int64)
    ends = np.zeros(len(dur), dtype=np.int64)
    steps = []
    for r in range(len(offs) - 1):
        a, b = offs[r], offs[r + 1]
        if a == b:
            continue
        d_run = np.cumsum(dur[a:b])
        s1, s2 = m1[a:b] >= 0, m2[a:b] >= 0
        steps.append((a, b, k1[a:b], l1[a:b], k2[a:b], l2[a:b], d_run, d_run - dur[a:b],
                      np.flatnonzero(s1), m1[a:b][s1], np.flatnonzero(s2), m2[a:b][s2]))
    for sweep in range(MAX_SWEEPS):
        moved = False
        for a, b, n1, t1, n2, t2, d_run, d_prev, at1, key1, at2, key2 in steps if sweep % 2 == 0 else steps[::-1]:
            x = np.maximum(done[n1] + t1, done[n2] + t2)
            x -= d_prev
            np.maximum.accumulate(x, out=x)
            np.maximum(x, 0, out=x)
            x += d_run
            if not moved and not np.array_equal(x, ends[a:b]):
                moved = True
            ends[a:b] = x
            done[key1] = x[at1]
            done[key2] = x[at2]
        if not moved:
            return ends, done
    return None


def _levels(np: ModuleType, offs: list[int], producers: Sequence[Any]) -> Any | None:
    """Each action's *level*: one more than its rank's previous action's and than each of its producers'
    (``producers``: flat arrays of action indices, ``len`` meaning none), the least such numbers.

    Every input of an action then comes from a lower level, so the actions of one level can be
    timed together. Found by sweeps over the ranks (``level = j + cummax(max(0, producer's + 1 - j))``
    along a rank, ``j`` its index there) until nothing moves; ``None`` after :data:`MAX_SWEEPS`
    (a cycle of waits, a deadlock, never settles).
    """
    n = len(offs) and offs[-1]
    level = np.zeros(n + 1, dtype=np.int64)
    level[n] = -1  # "no producer": one more is 0
    parts = []
    for r in range(len(offs) - 1):
        a, b = offs[r], offs[r + 1]
        if a < b:
            parts.append((a, b, [x[a:b] for x in producers], np.arange(b - a, dtype=np.int64)))
    for sweep in range(MAX_SWEEPS):
        moved = False
        for a, b, mine, j in parts if sweep % 2 == 0 else parts[::-1]:
            x = level[mine[0]]
            for more in mine[1:]:
                np.maximum(x, level[more], out=x)
            x += 1
            x -= j
            np.maximum(x, 0, out=x)
            np.maximum.accumulate(x, out=x)
            x += j
            if not moved and not np.array_equal(x, level[a:b]):
                moved = True
            level[a:b] = x
        if not moved:
            return level[:n]
    return None


def _levelled(np: ModuleType, offs: list[int], dur: Any, local: tuple[Any, Any, Any, Any], made: tuple[Any, Any],
              sent: tuple[Any, Any, Any] | None, received: tuple[Any, Any, Any, Any, Any, Any] | None, slots: int,
              n_links: int) -> tuple[Any, Any] | None:
    """The ends of every action (flat, rank-major) and the events' times, level by level (:func:`_levels`).

    ``local``: two needed keys, each with its latency (``slots``: none, a slot that stays 0);
    ``made``: two made keys (-1: none). Messages on links, one of (flat arrays, -1: none):
    ``sent`` = (arrival key, link, time on the wire): the sender puts its message on the link when it
    ends (:func:`run`); ``received`` = (sender's key, index of the compute whose end posts the
    receive, latency, link, time on the wire, crossing key): the receiver takes it from the later
    of the two (:func:`run_lowered`). The actions of a level (at most one per rank, so at most one
    message per link) are timed together, in numpy; each link's messages go in the order of its
    one sending (or receiving) rank, as the generators' do. ``None``: an input nobody makes, or a
    level that does not settle (the generators then decide, and name a deadlock).
    """
    n = len(dur)
    k1, l1, k2, l2 = local
    m1, m2 = made
    idx = np.arange(n, dtype=np.int64)
    producer = np.full(slots + 2, n, dtype=np.int64)  # the action that makes each key (n: none)
    keys_made = [m1, m2] if sent is None else [m1, m2, sent[0]]
    for key in keys_made:
        has = key >= 0
        producer[key[has]] = idx[has]
    mine = [producer[k1], producer[k2]]
    wanted = [k1 != slots, k2 != slots]
    if received is not None:
        mine.append(producer[received[0]])
        wanted.append(received[0] != slots)
    for p_, w_ in zip(mine, wanted):  # an input nobody makes: a deadlock the generators name
        if (p_[w_] == n).any():
            return None
    level = _levels(np, offs, mine)
    if level is None:
        return None
    first = np.zeros(n, dtype=bool)
    first[[a for a, b in zip(offs, offs[1:]) if a < b]] = True
    # one array of times: the actions' ends (n + 1: "none", 0), then the events' (slots + 2: a slot that
    # stays 0 and one written by the actions that make nothing), then each link's last message (+1: none)
    e0, d0, f0 = 0, n + 1, n + slots + 3
    dump = d0 + slots + 1
    two_made = bool((m2 >= 0).any())
    rows = [idx, np.where(m1 >= 0, d0 + m1, dump)] + ([np.where(m2 >= 0, d0 + m2, dump)] if two_made else [])
    n_out = len(rows)  # the rows written with the action's end
    # the entries read (one gather per level): its rank's previous action, its two needs, then its message's
    read = [np.where(first, n, idx - 1), d0 + k1, d0 + k2]
    if sent is not None:
        sk, link, wire = sent
        on = sk >= 0
        read += [f0 + np.where(on, link, n_links)]
        more = [np.where(on, d0 + sk, dump), np.where(on, wire, 0)]
    if received is not None:
        rk, post, latency, link, wire, kc = received
        on = kc >= 0
        read += [d0 + rk, e0 + post, f0 + np.where(on, link, n_links)]
        more = [latency, np.where(on, wire, 0), np.where(on, d0 + kc, dump)]
    g0, g1 = n_out, n_out + len(read)
    rows += read + [l1, l2, dur] + (more if sent is not None or received is not None else [])
    q = g1 + 3  # the message rows after the latencies and the duration
    by = np.argsort(level, kind="stable")
    table = np.stack(rows)[:, by]
    bounds = np.concatenate([[0], np.cumsum(np.bincount(level))]).tolist()
    times = np.zeros(f0 + n_links + 1, dtype=np.int64)
    # the entry of the messages on no link (and of no message): reset to 0 where it is read for a time (a
    # lowered schedule's receives); written and never read otherwise (the sends of the actions that send nothing)
    no_link = f0 + n_links
    mx = np.maximum
    with_l1, with_l2 = bool(l1.any()), bool(l2.any())
    for a, b in zip(bounds, bounds[1:]):
        c = table[:, a:b]
        got = times[c[g0:g1]]  # every time this level reads, all from lower levels
        t = got[0]
        if with_l1:
            got[1] += c[g1]
        if with_l2:
            got[2] += c[g1 + 1]
        mx(t, got[1], out=t)
        mx(t, got[2], out=t)
        if received is not None:  # a message from the later of its send and its receive's post, then its link
            at = mx(got[3], got[4])
            mx(at, got[5], out=at)
            at += c[q + 1]
            link_row = c[g0 + 5]
            times[link_row] = at
            times[no_link] = 0
            times[c[q + 2]] = at
            at += c[q]
            mx(t, at, out=t)
        t += c[g1 + 2]
        times[c[:n_out]] = t
        if sent is not None:  # its message waits for its link, then crosses it
            at = mx(got[3], t)
            at += c[q + 1]
            times[c[g0 + 3]] = at
            times[c[q]] = at
    ends, done = times[:n], times[d0:d0 + slots + 1]
    return ends, done
