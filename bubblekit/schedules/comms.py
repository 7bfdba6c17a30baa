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

from collections.abc import Sequence

from bubblekit.actions import Action
from bubblekit.schedules.torch_csv import TorchAction, lower

__all__ = ["RECV_PLACEMENTS", "lower_rows", "defer_recv_rows", "early_recv_rows", "to_actions"]

#: Where :meth:`bubblekit.Schedule.lower_comms` posts each receive.
RECV_PLACEMENTS: dict[str, str] = {
    "asap": "where PyTorch's _add_send_recv posts it: as soon as its sender is lowered (the default runtime)",
    "deferred": "just before the compute that uses it, as defer_pp_recv=True does (_defer_recv_ops)",
    "early": "at the start of the receiving rank's order, before any compute (every message crosses as soon as "
             "it is sent)",
}


def lower_rows(orders: Sequence[Sequence[Action]], placement: Sequence[int], m: int) -> list[list[TorchAction]]:
    """PyTorch's lowering of a compute-only schedule, its compute and its sends and receives.

    The three passes of ``_prepare_schedule_with_comms`` (:func:`bubblekit.schedules.torch_csv.lower`:
    FSDP's ``UNSHARD``/``RESHARD``, ``REDUCE_GRAD``, then ``_add_send_recv``, whose round-robin walk
    counts the first two passes' actions too, so they decide where a receive lands), then the
    ``UNSHARD``/``RESHARD``/``REDUCE_GRAD`` cells dropped: they do nothing for stages without FSDP
    or data parallelism (bubblekit models the reduction as ``Costs(dp_reduce=...)``).
    """
    keep = ("UNSHARD", "RESHARD", "REDUCE_GRAD")
    return [[a for a in row if a.ctype not in keep] for row in lower(orders, placement, m)]


def _recv_peer(a: TorchAction, placement: Sequence[int]) -> int:
    return placement[a.stage - 1] if a.ctype == "RECV_F" else placement[a.stage + 1]


def _send_peer(a: TorchAction, placement: Sequence[int]) -> int:
    return placement[a.stage + 1] if a.ctype == "SEND_F" else placement[a.stage - 1]


def defer_recv_rows(rows: Sequence[Sequence[TorchAction]], placement: Sequence[int]) -> list[list[TorchAction]]:
    """PyTorch's ``_defer_recv_ops`` (``defer_pp_recv=True``): each receive as late as it may be posted.

    A receive moves to just before the compute that consumes it; before a send to a peer of a
    higher rank, the receives from that peer are posted first (PyTorch's rank-parity rule,
    issue #172668: the lower rank posts its receive first, so the two never wait for each other).
    """
    result: list[list[TorchAction]] = []
    for rank, row in enumerate(rows):
        new: list[TorchAction] = []
        deferred: dict[tuple[int, str, int | None], TorchAction] = {}
        for a in row:
            if a.ctype in ("RECV_F", "RECV_B"):
                deferred[a.stage, a.ctype, a.microbatch] = a
                continue
            if a.ctype in ("SEND_F", "SEND_B"):
                peer = _send_peer(a, placement)
                if rank < peer:
                    for key in [k for k, v in deferred.items() if _recv_peer(v, placement) == peer]:
                        new.append(deferred.pop(key))
            for sub in a.subs if a.subs is not None else (a,):
                key = (sub.stage, "RECV_F" if sub.ctype == "F" else "RECV_B", sub.microbatch)
                if sub.ctype in ("F", "B", "I") and key in deferred:
                    new.append(deferred.pop(key))
            new.append(a)
        if deferred:  # pragma: no cover - every receive of a lowered legal schedule has its consumer
            raise ValueError(f"rank {rank}: receives with no compute that uses them: {list(deferred.values())}")
        result.append(new)
    return result


def early_recv_rows(rows: Sequence[Sequence[TorchAction]]) -> list[list[TorchAction]]:
    """Every receive of a rank posted before its first action (in the order ``_add_send_recv`` posts them)."""
    return [[a for a in row if a.ctype in ("RECV_F", "RECV_B")] + [a for a in row if a.ctype not in ("RECV_F", "RECV_B")]
            for row in rows]


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
