"""Communication as actions: a schedule *lowered* to carry its messages as ``SEND`` / ``RECV`` actions.

PyTorch's runtime for schedules given as a file (``_PipelineScheduleRuntime``, torch 2.13,
``torch/distributed/pipelining/schedules.py``) does not infer its messages at run time: its
lowering pass ``_add_send_recv`` writes them into each rank's order (the ``compute_comms``
format), and the runtime executes them as they come:

* ``SEND_F`` / ``SEND_B``: ``isend`` posted, not waited for (``send_ops.append(_batch_p2p(...))``
  in ``_step_microbatches``' ``_perform_action``; the sends are waited for at the step's end);
* ``RECV_F`` / ``RECV_B``: ``irecv`` posted, not waited for (``self.fwd_recv_ops[(stage_idx,
  mb_index)] = _batch_p2p(...)``);
* the compute that uses a received tensor waits for it right before it runs
  (``_wait_batch_p2p(self.fwd_recv_ops.pop((stage_idx, mb_index)))`` before
  ``forward_one_chunk``; the same for the backward).

Where the receive is posted is the schedule's choice. ``_add_send_recv`` posts it as soon as
its sender is lowered (``comm_actions[stage_to_rank(recv.stage_index)].append(recv)``): early,
so the message crosses while the receiving rank still computes. ``defer_pp_recv=True``
(``_defer_recv_ops``, PyTorch issue #172668; #188833 shows the head-of-line bubble of
front-loaded receives it answers) moves each receive to just before the compute that uses it
(and, on the lower-ranked side, before the next send to that peer): the message can then
cross only once the rank has finished its previous compute, so its wire time and latency
land on the rank's critical path. bubblekit simulates exactly that
(:func:`bubblekit.actions.carried`, the message rule): a message crosses when both its send
and its receive are posted. Lesson 07 shows the bubble and its fix.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial
from itertools import repeat
from types import ModuleType
from typing import NamedTuple

from bubblekit.actions import Action, Pair, parts
from bubblekit.schedules.torch_csv import TorchAction, lower

_new_action = partial(tuple.__new__, Action)


def _actions(stage: int, kind: str, microbatches: Iterable[int]) -> list[Action]:
    """``[Action(stage, kind, i) for i in microbatches]``, built in bulk."""
    return list(map(tuple.__new__, repeat(Action), zip(repeat(stage), repeat(kind), microbatches)))

__all__ = ["RECV_PLACEMENTS", "lower_rows", "lower_actions", "lower_with_layout", "Layout", "layout_of", "defer_recv_rows", "early_recv_rows", "to_actions"]

#: Where :meth:`bubblekit.Schedule.lower_comms` posts each receive.
RECV_PLACEMENTS: dict[str, str] = {
    "asap": "where PyTorch's _add_send_recv posts it: as soon as its sender is lowered (the default runtime)",
    "deferred": "just before the compute that uses it, as defer_pp_recv=True does (_defer_recv_ops)",
    "early": "at the start of the receiving rank's order, before any compute (every message crosses as soon as "
             "it is sent)",
}


def lower_rows(orders: Sequence[Sequence[Action]], placement: Sequence[int], m: int) -> list[list[TorchAction]]:
    """PyTorch's lowering of a compute-only schedule, its compute and its sends and receives (the reference).

    The three passes of ``_prepare_schedule_with_comms`` (:func:`bubblekit.schedules.torch_csv.lower`:
    FSDP's ``UNSHARD``/``RESHARD``, ``REDUCE_GRAD``, then ``_add_send_recv``, whose round-robin walk
    counts the first two passes' actions too, so they decide where a receive lands), then the
    ``UNSHARD``/``RESHARD``/``REDUCE_GRAD`` cells dropped: they do nothing for stages without FSDP
    or data parallelism (bubblekit models the reduction as ``Costs(dp_reduce=...)``).
    :func:`lower_actions` gives the same orders about ten times faster (``tests/test_comms.py``).
    """
    keep = ("UNSHARD", "RESHARD", "REDUCE_GRAD")
    return [[a for a in row if a.ctype not in keep] for row in lower(orders, placement, m)]


def _fillers(order: Sequence[Action], m: int, max_active: int = 3) -> tuple[list[int], list[int], int]:
    """How many cells PyTorch's first two passes put before and after each compute action, and at the end.

    ``_add_unshard_reshard`` evicts and prefetches stages before an action (the next ``max_active``
    stages stay unsharded), and ``_add_reduce_grad`` puts a ``REDUCE_GRAD`` after a stage's
    ``m``-th ``B`` or ``W``; the walk of ``_add_send_recv`` takes one step per cell, so only their
    number matters here (the passes themselves: :mod:`bubblekit.schedules.torch_csv`).
    """
    if len({a[0] for a in order}) == 1 and not any(type(a) is Pair for a in order):  # one stage: the common case
        before, after = [0] * len(order), [0] * len(order)
        if order:
            before[0] = 1  # its UNSHARD; its RESHARD at the end
            done = [k for k, a in enumerate(order) if a[1] in ("B", "W")]
            if len(done) >= m:
                after[done[m - 1]] = 1  # its REDUCE_GRAD
        return before, after, 1 if order else 0
    stages_of = [tuple(dict.fromkeys(x.stage for x in parts(a))) for a in order]
    upcoming: list[tuple[int, ...]] = [()] * len(order)
    first: list[tuple[int, int]] = []  # (stage, position of the action bringing it), first occurrence from i on
    for i in range(len(order) - 1, -1, -1):
        mine = stages_of[i]
        first = [(st, i) for st in mine] + [e for e in first if e[0] not in mine]
        ret = []
        for k, (st, at) in enumerate(first):
            ret.append(st)
            if len(ret) >= max_active and (k + 1 == len(first) or first[k + 1][1] != at):
                break
        upcoming[i] = tuple(ret)
    before, after = [0] * len(order), [0] * len(order)
    active: set[int] = set()
    count: dict[int, int] = {}
    for i, a in enumerate(order):
        nxt = upcoming[i]
        fetch = [x for x in nxt if x not in active]
        evict = [x for x in active if x not in nxt]
        before[i] = len(fetch) + len(evict)
        active.difference_update(evict)
        active.update(fetch)
        for x in parts(a):
            if x.kind in ("B", "W"):
                count[x.stage] = count.get(x.stage, 0) + 1
                if count[x.stage] == m:
                    after[i] += 1
    return before, after, len(active)


class Layout(NamedTuple):
    """Where a lowered order's compute and receives stand (for the tuned engine; built with the orders).

    ``pos[r][c]``: the index in rank ``r``'s lowered order of its ``c``-th compute action. For the
    receive of each message, by its receiving stage ``s`` and microbatch ``i`` (key ``s * m + i`` for
    an activation, ``n_stages * m + s * m + i`` for a gradient; -1 where there is no message):
    ``recv_k[key]``, the number of compute actions its rank runs before posting it, and
    ``recv_pos[key]``, its index in that rank's lowered order; ``send_pos`` the same for its send,
    by the sending stage (key ``s * m + i`` for an activation, ``n_stages * m + s * m + i`` for a gradient).
    """

    pos: list[list[int]]
    recv_k: list[int]
    recv_pos: list[int]
    send_pos: list[int]


def layout_of(rows: Sequence[Sequence[Action]], n_stages: int, m: int) -> Layout:
    """The :class:`Layout` of lowered orders, read from the orders (any receive placement; no pairs)."""
    size = n_stages * m
    pos: list[list[int]] = []
    recv_k, recv_pos, send_pos = [-1] * (2 * size), [-1] * (2 * size), [-1] * (2 * size)
    for row in rows:
        mine: list[int] = []
        for j, (s, k, i) in enumerate(row):
            if k == "RECV_F" or k == "RECV_B":
                key = s * m + i + (size if k == "RECV_B" else 0)
                recv_k[key], recv_pos[key] = len(mine), j
            elif k == "SEND_F" or k == "SEND_B":
                send_pos[s * m + i + (size if k == "SEND_B" else 0)] = j
            else:
                mine.append(j)
        pos.append(mine)
    return Layout(pos, recv_k, recv_pos, send_pos)


def _rows_with_fillers(orders: Sequence[Sequence[Action]], m: int, fast: bool = True) -> list[list[Action | None]]:
    """Each rank's cells for the walk: its compute actions and the first two passes' cells (``None``).

    ``fast``: a rank of at most ``3`` stages (``_add_unshard_reshard``'s ``max_active``) and no pairs
    keeps every stage it holds unsharded from its first action to the stage's last (:func:`_few_stages`);
    otherwise (and with ``fast=False``, the reference) :func:`_fillers` follows PyTorch's passes step by step.
    """
    items: list[list[Action | None]] = []
    for order in orders:
        sparse = _few_stages(order, m) if fast else None
        if sparse is not None:
            places, tail = sparse
            row: list[Action | None] = []
            prev = 0
            for k in sorted(places):
                b, c = places[k]
                row.extend(order[prev:k])
                row.extend([None] * b)
                row.append(order[k])
                row.extend([None] * c)
                prev = k + 1
            row.extend(order[prev:])
            row.extend([None] * tail)
            items.append(row)
            continue
        before, after, tail = _fillers(order, m)
        row = []
        for a, b, c in zip(order, before, after):
            row.extend([None] * b)
            row.append(a)
            row.extend([None] * c)
        row.extend([None] * tail)
        items.append(row)
    return items


def _few_stages(order: Sequence[Action], m: int, max_active: int = 3) -> tuple[dict[int, list[int]], int] | None:
    """:func:`_fillers` for a rank of at most ``max_active`` stages and no pairs, sparse: ``({index: [before,
    after]}, tail)`` for the actions with cells around them, or ``None`` for any other rank.

    Every stage is among the next ``max_active`` from the first action on, so all are fetched before it;
    a stage is evicted before the action after its last one; a ``REDUCE_GRAD`` follows a stage's ``m``-th
    ``B`` or ``W``; at the end only the last action's stage is still active.
    """
    if not order or any(type(a) is Pair for a in order):
        return None
    last: dict[int, int] = {}
    for k, a in enumerate(order):
        last[a[0]] = k
    if len(last) > max_active:
        return None
    places: dict[int, list[int]] = {0: [len(last), 0]}
    for k in last.values():
        if k + 1 < len(order):
            places.setdefault(k + 1, [0, 0])[0] += 1
    count: dict[int, int] = {}
    for k, (s, kind, _) in enumerate(order):
        if kind == "B" or kind == "W":
            c = count[s] = count.get(s, 0) + 1
            if c == m:
                places.setdefault(k, [0, 0])[1] += 1
    return places, 1


def lower_actions(orders: Sequence[Sequence[Action]], placement: Sequence[int], m: int) -> list[list[Action]]:
    """:func:`lower_rows` on bubblekit's actions, fast: PyTorch's ``_add_send_recv`` walk, step by step.

    Each round visits the ranks in order and takes each one's next cell when it is ready
    (``_ready_to_schedule``: a forward once the previous stage's forward of its microbatch has
    been taken, a backward once the next stage's backward; a ``W`` and a filler cell always);
    taking a compute whose result another rank needs appends its send here and its receive
    there. Raises ``ValueError`` when no rank can go on (PyTorch's "Malformed compute schedule").
    """
    return lower_with_layout(orders, placement, m)[0]


def lower_with_layout(orders: Sequence[Sequence[Action]], placement: Sequence[int],
                      m: int) -> tuple[list[list[Action]], Layout | None]:
    """:func:`lower_actions`, and the :class:`Layout` of its result (``None`` for a schedule with pairs)."""
    if any(type(a) is Pair for order in orders for a in order):
        return _walk(_rows_with_fillers(orders, m), placement, m), None
    bulk = flat_lowering()
    try:
        if bulk is not None:
            flat = bulk.lower_flat(orders, placement, m)
            return flat.rows(), flat.layout
    except (KeyError, TypeError, IndexError):  # a kind that is not F, B, I or W: the walk cell by cell
        pass
    return _walk_singles(_rows_with_fillers(orders, m), placement, m)


def flat_lowering() -> ModuleType | None:
    """:mod:`bubblekit.schedules._flat` (the lowering on integer arrays), or ``None`` without numpy (the
    browser edition, which walks cell by cell: :func:`_walk_singles`, the same orders)."""
    try:
        import numpy  # noqa: F401
    except ImportError:
        return None
    from bubblekit.schedules import _flat

    return _flat


def _no_progress(items: Sequence[Sequence[Action | None]], pending: Sequence[int], cursor: Sequence[int]) -> ValueError:
    stuck = ", ".join(f"rank {r} at {items[r][cursor[r]]}" for r in pending)
    return ValueError(f"PyTorch cannot place the sends and receives of this schedule: no rank can go on "
                      f"({stuck}); an action waits for one that comes later")


def _walk_singles(items: list[list[Action | None]], placement: Sequence[int],
                  m: int) -> tuple[list[list[Action]], Layout]:
    """:func:`_walk` for orders of single actions (no pairs): one readiness test per cell, and the layout."""
    n = len(placement)
    size = n * m
    done = bytearray(2 * size)  # taken by the walk: a forward at stage * m + microbatch, a backward size later
    # per stage: the rank its activation / gradient goes to (-1: none), and the comm actions, one per microbatch
    to_next = [placement[s + 1] if s + 1 < n and placement[s + 1] != placement[s] else -1 for s in range(n)]
    to_prev = [placement[s - 1] if s and placement[s - 1] != placement[s] else -1 for s in range(n)]
    mbs = range(m)
    send_f = [_actions(s, "SEND_F", mbs) if to_next[s] >= 0 else [] for s in range(n)]
    recv_f = [_actions(s + 1, "RECV_F", mbs) if to_next[s] >= 0 else [] for s in range(n)]
    send_b = [_actions(s, "SEND_B", mbs) if to_prev[s] >= 0 else [] for s in range(n)]
    recv_b = [_actions(s - 1, "RECV_B", mbs) if to_prev[s] >= 0 else [] for s in range(n)]
    out: list[list[Action]] = [[] for _ in items]
    pos: list[list[int]] = [[] for _ in items]
    recv_k, recv_pos, send_pos = [-1] * (2 * size), [-1] * (2 * size), [-1] * (2 * size)
    pending = [r for r in range(len(items)) if items[r]]
    cursor = [0] * len(items)
    lengths = [len(row) for row in items]
    last = n - 1
    while pending:
        progress = finished = False
        for rank in pending:
            c = cursor[rank]
            item = items[rank][c]
            if item is not None:
                s, k, i = item
                b = s * m + i
                if k == "F":
                    if s and not done[b - m]:
                        continue
                    done[b] = 1
                    here = out[rank]
                    pos[rank].append(len(here))
                    here.append(item)
                    peer = to_next[s]
                    if peer >= 0:
                        send_pos[b] = len(here)
                        here.append(send_f[s][i])
                        there = out[peer]
                        recv_k[b + m] = len(pos[peer])
                        recv_pos[b + m] = len(there)
                        there.append(recv_f[s][i])
                elif k == "W":
                    here = out[rank]
                    pos[rank].append(len(here))
                    here.append(item)
                else:  # B or I
                    b += size
                    if s != last and not done[b + m]:
                        continue
                    done[b] = 1
                    here = out[rank]
                    pos[rank].append(len(here))
                    here.append(item)
                    peer = to_prev[s]
                    if peer >= 0:
                        send_pos[b] = len(here)
                        here.append(send_b[s][i])
                        there = out[peer]
                        recv_k[b - m] = len(pos[peer])
                        recv_pos[b - m] = len(there)
                        there.append(recv_b[s][i])
            c += 1
            cursor[rank] = c
            progress = True
            if c == lengths[rank]:
                finished = True
        if not progress:
            raise _no_progress(items, pending, cursor)
        if finished:
            pending = [r for r in pending if cursor[r] < lengths[r]]
    return out, Layout(pos, recv_k, recv_pos, send_pos)


def _walk(items: list[list[Action | None]], placement: Sequence[int], m: int) -> list[list[Action]]:
    """The walk of ``_add_send_recv`` over each rank's cells (any actions, pairs too)."""
    n = len(placement)
    size = n * m
    act_done, grad_done = bytearray(size), bytearray(size)  # stage * m + microbatch: taken by the walk
    out: list[list[Action]] = [[] for _ in items]
    pending = [r for r in range(len(items)) if items[r]]
    cursor = [0] * len(items)
    new = _new_action
    while pending:
        progress = False
        for rank in pending:
            item = items[rank][cursor[rank]]
            if item is not None:
                leaves = parts(item)
                ready = True
                for s, k, i in leaves:
                    if (k == "F" and s and not act_done[(s - 1) * m + i]) or \
                            (k in ("B", "I") and s != n - 1 and not grad_done[(s + 1) * m + i]):
                        ready = False
                        break
                if not ready:
                    continue
                here = out[rank]
                here.append(item)
                for s, k, i in leaves:
                    if k == "F":
                        act_done[s * m + i] = 1
                        if s != n - 1 and placement[s + 1] != placement[s]:
                            here.append(new((s, "SEND_F", i)))
                            out[placement[s + 1]].append(new((s + 1, "RECV_F", i)))
                    elif k in ("B", "I"):
                        grad_done[s * m + i] = 1
                        if s and placement[s - 1] != placement[s]:
                            here.append(new((s, "SEND_B", i)))
                            out[placement[s - 1]].append(new((s - 1, "RECV_B", i)))
            cursor[rank] += 1
            progress = True
        if not progress:
            raise _no_progress(items, pending, cursor)
        pending = [r for r in pending if cursor[r] < len(items[r])]
    return out


def _recv_peer(a: Action, placement: Sequence[int]) -> int:
    return placement[a.stage - 1] if a.kind == "RECV_F" else placement[a.stage + 1]


def _send_peer(a: Action, placement: Sequence[int]) -> int:
    return placement[a.stage + 1] if a.kind == "SEND_F" else placement[a.stage - 1]


def defer_recv_rows(rows: Sequence[Sequence[Action]], placement: Sequence[int]) -> list[list[Action]]:
    """PyTorch's ``_defer_recv_ops`` (``defer_pp_recv=True``): each receive as late as it may be posted.

    A receive moves to just before the compute that consumes it; before a send to a peer of a
    higher rank, the receives from that peer are posted first (PyTorch's rank-parity rule,
    issue #172668: the lower rank posts its receive first, so the two never wait for each other).
    """
    result: list[list[Action]] = []
    for rank, row in enumerate(rows):
        new: list[Action] = []
        deferred: dict[tuple[int, str, int], Action] = {}
        for a in row:
            if a.kind in ("RECV_F", "RECV_B"):
                deferred[a.stage, a.kind, a.microbatch] = a
                continue
            if a.kind in ("SEND_F", "SEND_B"):
                peer = _send_peer(a, placement)
                if rank < peer:
                    for key in [k for k, v in deferred.items() if _recv_peer(v, placement) == peer]:
                        new.append(deferred.pop(key))
            for sub in parts(a):
                key = (sub.stage, "RECV_F" if sub.kind == "F" else "RECV_B", sub.microbatch)
                if sub.kind in ("F", "B", "I") and key in deferred:
                    new.append(deferred.pop(key))
            new.append(a)
        if deferred:  # pragma: no cover - every receive of a lowered legal schedule has its consumer
            raise ValueError(f"rank {rank}: receives with no compute that uses them: {list(deferred.values())}")
        result.append(new)
    return result


def early_recv_rows(rows: Sequence[Sequence[Action]]) -> list[list[Action]]:
    """Every receive of a rank posted before its first action (in the order ``_add_send_recv`` posts them)."""
    recv = ("RECV_F", "RECV_B")
    return [[a for a in row if a.kind in recv] + [a for a in row if a.kind not in recv] for row in rows]


def to_actions(rows: Sequence[Sequence[TorchAction]]) -> tuple[tuple[Action, ...], ...]:
    """PyTorch's actions as bubblekit's: ``1RECV_F3`` is ``Action(1, "RECV_F", 3)``; a pair a :class:`Pair`."""
    from bubblekit.actions import Pair

    out = []
    for row in rows:
        acts: list[Action] = []
        for a in row:
            if a.subs is not None:
                f, b = (Action(x.stage, x.ctype, x.microbatch) for x in a.subs)  # type: ignore[arg-type]
                acts.append(Pair(f, b))
            else:
                acts.append(Action(a.stage, a.ctype, a.microbatch))  # type: ignore[arg-type]
        out.append(tuple(acts))
    return tuple(out)
