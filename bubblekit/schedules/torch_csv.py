"""PyTorch's schedule files, written and read with the standard library (no torch import).

``torch.distributed.pipelining`` (2.13) keeps a schedule as one CSV row per rank, one
action per cell, in ``_Action``'s text form: ``0F3`` (stage 0, forward, microbatch 3),
``1I0`` / ``1W0`` / ``1B0`` (input / weight / full backward), ``(0F7;7B3)OVERLAP_F_B`` (an
overlapped pair), an empty cell for an idle slot. Two kinds of file:

* **compute only**: what ``PipelineScheduleMulti._dump_csv(path)`` (or
  ``_PipelineScheduleRuntime._dump_csv(path, format="compute_only")``) writes and
  ``_load_csv(path)`` reads: the compute actions of each rank, in order.
* **with communication**: what ``_PipelineScheduleRuntime._dump_csv(path)`` writes after
  ``_load_csv`` lowered a compute-only file (``format="compute_comms"``): PyTorch's three
  lowering passes add ``UNSHARD`` / ``RESHARD`` (FSDP prefetch, at most 3 stages active),
  ``REDUCE_GRAD`` (after a stage's last backward) and ``SEND_F`` / ``RECV_F`` / ``SEND_B`` /
  ``RECV_B`` (between stages on different ranks). :func:`lower` re-does those passes
  (``_add_unshard_reshard``, ``_add_reduce_grad``, ``_add_send_recv`` in
  ``torch/distributed/pipelining/schedules.py``), so the file is byte for byte PyTorch's.

:meth:`Schedule.to_torch_csv <bubblekit.schedules.base.Schedule.to_torch_csv>` and
:meth:`Schedule.from_torch_csv <bubblekit.schedules.base.Schedule.from_torch_csv>` are the
public doors; ``tests/test_torch_csv.py`` compares them with torch's own functions on every
registered schedule PyTorch can express. What PyTorch cannot express: a schedule with two
pipelines (DualPipe's ``pipes=2``): PyTorch's stages form one chain ``0 -> 1 -> ... ->
n-1``, so the last stage of one direction would feed the first of the other, and every
stage must carry every microbatch (DualPipe's carry half each).
"""

from __future__ import annotations

import csv
import io
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import NamedTuple

from bubblekit.actions import Action, Pair

__all__ = ["TorchAction", "COMPUTE_TYPES", "COMM_TYPES", "torch_problem", "compute_rows", "lower", "write_rows",
           "read_rows", "parse_torch_action"]

#: PyTorch's compute computation types (``_ComputationType`` values) and the overlapped pair.
COMPUTE_TYPES = ("F", "I", "W", "B", "OVERLAP_F_B")
#: The non-compute types PyTorch's lowering adds (FSDP, gradient reduction, point-to-point).
COMM_TYPES = ("UNSHARD", "RESHARD", "REDUCE_GRAD", "SEND_F", "RECV_F", "SEND_B", "RECV_B")

#: One cell: ``<stage><type>[<microbatch>]`` (``2F0``, ``1UNSHARD``, ``3SEND_F1``), ASCII digits,
#: the whole cell (PyTorch's own reader matches only a prefix, so it takes ``0F3junk`` for ``0F3``).
_CELL_RE = re.compile(r"([0-9]+)(F|I|B|W|UNSHARD|RESHARD|REDUCE_GRAD|SEND_F|RECV_F|SEND_B|RECV_B)([0-9]*)")
_PAIR_RE = re.compile(r"\(([^()]*)\)([A-Z_]*)")


class TorchAction(NamedTuple):
    """PyTorch's ``_Action``: ``str(a)`` is its ``__repr__`` (``0F3``, ``1UNSHARD``, ``(0F7;7B3)OVERLAP_F_B``)."""

    stage: int
    ctype: str
    microbatch: int | None = None
    subs: tuple[TorchAction, ...] | None = None

    def __str__(self) -> str:
        if self.subs is not None:
            return f"({';'.join(map(str, self.subs))}){self.ctype}"
        return f"{self.stage}{self.ctype}{'' if self.microbatch is None else self.microbatch}"


def _of(a: Action) -> TorchAction:
    if type(a) is Pair:
        return TorchAction(-1, "OVERLAP_F_B", None, (_of(a.forward), _of(a.backward)))  # type: ignore[attr-defined]
    return TorchAction(a.stage, a.kind, a.microbatch)


def torch_problem(pipes: int) -> str | None:
    """Why PyTorch cannot express a schedule with ``pipes`` pipelines, or ``None`` when it can."""
    if pipes == 1:
        return None
    return (f"it runs {pipes} pipelines over its stages (DualPipe's two directions); PyTorch's schedules are one "
            f"chain of stages 0 -> 1 -> ... in which every stage carries every microbatch, so the last stage of one "
            f"direction would feed the first stage of the other")


def compute_rows(orders: Sequence[Sequence[Action]]) -> list[list[TorchAction]]:
    """Per rank, the compute actions as PyTorch's ``_Action`` (a pair is one ``OVERLAP_F_B``)."""
    return [[_of(a) for a in order] for order in orders]


# ---------------------------------------------------------------- PyTorch's lowering passes
def _next_stages(actions: list[TorchAction], count: int) -> list[list[int]]:
    """For each position ``i``, PyTorch's ``next_stage_indices(count, actions[i:])``, in one backward pass.

    PyTorch scans forward from every position (quadratic in a rank's actions: hours for a long
    step); the answer is the stages in order of their first action from ``i`` on, cut after the
    first action that brings the count to ``count`` or more (a pair brings both of its stages).
    Walking backward keeps that order by moving each action's stages to the front.
    """
    first: list[tuple[int, int]] = []  # (stage, position of the action that brings it), first occurrence order
    out: list[list[int]] = [[] for _ in actions]
    for i in range(len(actions) - 1, -1, -1):
        a = actions[i]
        mine = [x.stage for x in a.subs] if a.ctype == "OVERLAP_F_B" and a.subs is not None else [a.stage]
        mine = list(dict.fromkeys(mine))
        first = [(st, i) for st in mine] + [e for e in first if e[0] not in mine]
        ret: list[int] = []
        for k, (st, at) in enumerate(first):
            ret.append(st)
            if len(ret) >= count and (k + 1 == len(first) or first[k + 1][1] != at):
                break  # the whole action that reached ``count`` is in
        out[i] = ret
    return out


def _unshard_reshard(actions: list[TorchAction], max_active_stages: int = 3) -> list[TorchAction]:
    """``_add_unshard_reshard``: prefetch the next ``max_active_stages`` stages, evict the others."""
    upcoming = _next_stages(actions, max_active_stages)
    active: set[int] = set()
    out: list[TorchAction] = []
    for i, action in enumerate(actions):
        next_n = upcoming[i]
        fetch = [s for s in next_n if s not in active]
        evict = [s for s in active if s not in next_n]  # a set's order, as PyTorch iterates it
        for s in evict:
            active.remove(s)
            out.append(TorchAction(s, "RESHARD"))
        for s in fetch:
            active.add(s)
            out.append(TorchAction(s, "UNSHARD"))
        out.append(action)
    for s in list(active):
        active.remove(s)
        out.append(TorchAction(s, "RESHARD"))
    return out


def _reduce_grad(actions: list[TorchAction], m: int) -> list[TorchAction]:
    """``_add_reduce_grad``: ``sREDUCE_GRAD`` right after stage ``s``'s ``m``-th ``B`` or ``W``."""
    out: list[TorchAction] = []
    count: dict[int, int] = defaultdict(int)
    for a in actions:
        out.append(a)
        due: list[int] = []
        for leaf in (a.subs if a.ctype == "OVERLAP_F_B" and a.subs is not None else (a,)):
            if leaf.ctype in ("W", "B"):
                count[leaf.stage] += 1
                if count[leaf.stage] == m:
                    due.append(leaf.stage)
        out.extend(TorchAction(s, "REDUCE_GRAD") for s in due)
    return out


def _send_recv(rows: dict[int, list[TorchAction]], stage_to_rank: Callable[[int], int],
               n_stages: int) -> dict[int, list[TorchAction]]:
    """``_add_send_recv``: after each action whose result another rank needs, its send, and the receive there."""
    out: dict[int, list[TorchAction]] = {r: [] for r in rows}
    done: dict[int, set[TorchAction]] = {r: set() for r in rows}

    def has_comms(a: TorchAction) -> bool:
        if a.ctype == "F":
            return a.stage != n_stages - 1 and stage_to_rank(a.stage + 1) != stage_to_rank(a.stage)
        if a.ctype in ("I", "B"):
            return a.stage != 0 and stage_to_rank(a.stage - 1) != stage_to_rank(a.stage)
        return False

    def ready(a: TorchAction, prev: set[TorchAction]) -> bool:
        s, i = a.stage, a.microbatch
        if a.ctype == "F" and s != 0:
            return TorchAction(s, "RECV_F", i) in prev or TorchAction(s - 1, "F", i) in prev
        if a.ctype in ("I", "B") and s != n_stages - 1:
            return (TorchAction(s, "RECV_B", i) in prev or TorchAction(s + 1, "I", i) in prev
                    or TorchAction(s + 1, "B", i) in prev)
        return True

    pending = {r: list(acts) for r, acts in rows.items() if acts}
    cursor = dict.fromkeys(pending, 0)
    while pending:
        progress = False
        for rank in sorted(pending):
            action = pending[rank][cursor[rank]]
            leaves = action.subs if action.subs is not None else (action,)
            if not all(ready(a, done[rank]) for a in leaves):
                continue
            out[rank].append(action)
            for a in leaves:
                done[rank].add(a)
                if has_comms(a):
                    forward = a.ctype == "F"
                    send = TorchAction(a.stage, "SEND_F" if forward else "SEND_B", a.microbatch)
                    recv = TorchAction(a.stage + 1 if forward else a.stage - 1, "RECV_F" if forward else "RECV_B",
                                       a.microbatch)
                    out[rank].append(send)
                    done[rank].add(send)
                    peer = stage_to_rank(recv.stage)
                    out[peer].append(recv)
                    done[peer].add(recv)
            cursor[rank] += 1
            if cursor[rank] == len(pending[rank]):
                del pending[rank]
            progress = True
        if not progress:
            stuck = ", ".join(f"rank {r} at {pending[r][cursor[r]]}" for r in sorted(pending))
            raise ValueError(f"PyTorch cannot place the sends and receives of this schedule: no rank can go on "
                             f"({stuck}); an action waits for one that comes later")
    return out


def lower(orders: Sequence[Sequence[Action]], placement: Sequence[int], m: int) -> list[list[TorchAction]]:
    """The compute-and-communication schedule PyTorch makes of ``orders`` (``_prepare_schedule_with_comms``).

    ``placement[s]`` is stage ``s``'s rank and ``m`` the microbatches (``REDUCE_GRAD`` comes after
    a stage's ``m``-th backward). A rank that has no action must be kept out by the caller (PyTorch's
    pass would stop with an ``AssertionError``); ``ValueError`` when the sends cannot be placed.
    """
    rows = {r: _reduce_grad(_unshard_reshard(acts), m) for r, acts in enumerate(compute_rows(orders))}
    lowered = _send_recv(rows, lambda s: placement[s], len(placement))
    return [lowered[r] for r in range(len(orders))]


# ---------------------------------------------------------------- the file
def write_rows(rows: Sequence[Sequence[TorchAction]]) -> str:
    """The CSV text of ``rows`` exactly as PyTorch's ``_dump_csv`` writes it (``csv.writer``, ``\\r\\n`` lines)."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    for row in rows:
        writer.writerow([str(a) for a in row])
    return buffer.getvalue()


def parse_torch_action(text: str) -> TorchAction | None:
    """One cell of a PyTorch schedule file: a :class:`TorchAction`, or ``None`` for an empty (idle) cell.

    Stricter than PyTorch's ``_Action.from_str``: the whole cell must be an action (PyTorch reads
    ``0F3junk`` as ``0F3``), a compute action needs its microbatch, and a pair holds exactly
    a forward and a full backward. Raises ``ValueError`` naming the cell and what is allowed.
    """
    cell = text.strip()
    if not cell:
        return None
    pair = _PAIR_RE.fullmatch(cell)
    if pair is not None:
        if pair.group(2) != "OVERLAP_F_B":
            raise ValueError(f"cannot read {text!r}: a bracketed cell is an overlapped pair, written "
                             f"(0F7;7B3)OVERLAP_F_B, not ...{pair.group(2) or '(nothing)'}")
        subs = [parse_torch_action(part) for part in pair.group(1).split(";")]
        if len(subs) != 2 or any(s is None or s.ctype not in COMPUTE_TYPES[:4] for s in subs):
            raise ValueError(f"cannot read {text!r}: an overlapped pair holds two compute actions, a forward and a "
                             f"full backward, e.g. (0F7;7B3)OVERLAP_F_B")
        return TorchAction(-1, "OVERLAP_F_B", None, tuple(s for s in subs if s is not None))
    match = _CELL_RE.fullmatch(cell)
    if match is None:
        raise ValueError(f"cannot read {text!r}: a cell is <stage><type>[<microbatch>] with type one of "
                         f"{', '.join(COMPUTE_TYPES[:4] + COMM_TYPES)} (e.g. 0F3, 1SEND_B2, 0UNSHARD), a pair "
                         f"(0F7;7B3)OVERLAP_F_B, or empty (an idle slot)")
    stage, ctype, mb = match.groups()
    if ctype in COMPUTE_TYPES and not mb:
        raise ValueError(f"cannot read {text!r}: a compute action names its microbatch, e.g. {stage}{ctype}0")
    return TorchAction(int(stage), ctype, int(mb) if mb else None)


def read_rows(text: str, *, where: str = "the file") -> list[list[TorchAction | None]]:
    """The rows of a PyTorch schedule file (``None`` for idle cells); ``ValueError`` naming the row and cell."""
    if "\x00" in text:
        raise ValueError(f"{where} holds NUL bytes: it is not a CSV schedule file")
    rows: list[list[TorchAction | None]] = []
    try:
        for number, row in enumerate(csv.reader(io.StringIO(text, newline=""), strict=True), start=1):
            cells: list[TorchAction | None] = []
            for column, cell in enumerate(row, start=1):
                try:
                    cells.append(parse_torch_action(cell))
                except ValueError as exc:
                    raise ValueError(f"{where}, row {number} (rank {number - 1}), cell {column}: {exc}") from None
            rows.append(cells)
    except csv.Error as exc:
        raise ValueError(f"{where} is not a readable CSV file: {exc}") from None
    return rows
