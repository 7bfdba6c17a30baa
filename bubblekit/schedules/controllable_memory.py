"""V-Half and V-Min: V-shape schedules with controllable activation memory.

Qi, Wan, Amar, Lin, "Pipeline Parallelism with Controllable Memory" (NeurIPS 2024, arXiv
2405.15362; Sea AI Lab). Each rank holds two chunks in a V (stage ``r`` and stage ``2p-1-r``,
:func:`~bubblekit.schedules.base.v_placement`). A microbatch's six passes on a rank (``F`` and
``I`` of both chunks, and their two ``W``) are laid out by a *building block* that repeats
every 6 slots; how long a chunk's activations live in the block (its *lifespan*) sets the
peak memory, about lifespan / 6 microbatches:

* ``v-half``: about half of 1F1B's peak, exactly ``(p + 2) // 2`` microbatch activations
  (1F1B: ``p``); bubble about half of 1F1B's with F = I = W.
* ``v-min``: about a third, exactly ``(p + 4) // 3``; bubble about two thirds of 1F1B's.

"1/2" and "1/3" are the limits for large ``p`` (at ``p = 4``: 3/4 and 1/2 of 1F1B).

The order is built as the authors' generator builds it (sail-sg/zero-bubble-pipeline-parallelism,
``zbv_greedy.py``; re-implemented here from its description, checked action for action
against orders recorded from it in ``tests/test_vshape.py``): place the repeating block for
every microbatch in unit slots, put each ``W`` into the first free slot after its ``I``, then
*squeeze*: visit the passes in slot order and move every pass of the warm-up (before rank 0's
first chunk-0 ``I``) and of the cool-down (after the last microbatch's first forward) to the
earliest free slot after its inputs, as long as the rank's peak does not grow; then squeeze the
cool-down again without the ``W`` passes and put them back, one per free slot (chunk 1's
first). Like the authors' runtime, the order is built for F = I = W (it does not depend on the
costs given to the simulator).
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import merge

from bubblekit.actions import Action
from bubblekit.schedules.base import Schedule, v_placement

__all__ = ["v_half", "v_min", "v_half_peak", "v_min_peak"]

_PAPER = "Qi, Wan, Amar, Lin, Pipeline Parallelism with Controllable Memory (NeurIPS 2024)"

# The passes of one microbatch on one rank, in the generator's order. Types 0..3 are
# F of chunk 0, F of chunk 1, I of chunk 1, I of chunk 0; with the W passes: type 4 is W
# (either chunk) while squeezing, then W of chunk 1 (4) and of chunk 0 (5) at the end.
_F0, _F1, _I1, _I0, _W = 0, 1, 2, 3, 4
_MEMORY = (1, 1, 0, 0, -1)  # chunk activations: an F allocates one, a W frees one

Slots = list[list[int]]  # per pass type, the slot of microbatch 0, 1, ... (increasing)


def v_half_peak(p: int, m: int) -> int:
    """V-Half's largest per-rank peak, microbatch activations: ``(p + 2) // 2``, at most ``m``."""
    return min((p + 2) // 2, m)


def v_min_peak(p: int, m: int) -> int:
    """V-Min's largest per-rank peak, microbatch activations: ``(p + 4) // 3``, at most ``m``."""
    return min((p + 4) // 3, m)


def _block_half(p: int, r: int) -> list[int]:
    """V-Half's building block on rank ``r``: the slots of microbatch 0's F0, F1, I1, I0."""
    g = 3 if p % 2 == 0 else 0
    return [2 * r, 3 * p - 2 - r, 3 * p + g + 2 * r - 1, 6 * p + g - r - 2]


def _block_min(p: int, r: int) -> list[int]:
    """V-Min's building block on rank ``r``."""
    g = 2 if p % 3 == 0 else 0
    return [r, 2 * p - 1 - r, 2 * p + g + r, 4 * p + g - 1 - r]


def _peak(rank: Slots) -> int:
    """The rank's peak in chunk activations; without W lists, each free slot runs a pending W."""
    explicit_w = len(rank) > 4
    events = merge(*[[(t, k) for t in slots] for k, slots in enumerate(rank)])
    held = top = pending = 0
    prev = -1
    for t, k in events:
        if not explicit_w and pending:  # implicit W passes in the free slots before this one
            freed = min(pending, t - prev - 1)
            held -= freed
            pending -= freed
        held += _MEMORY[k]
        if k in (_I1, _I0):
            pending += 1
        top = max(top, held)
        prev = t
    return top


def _put_w(rank: Slots, split: bool) -> Slots:
    """Add the W passes: each free slot takes a pending one (chunk 1's first when ``split``)."""
    out = [list(s) for s in rank[:4]] + ([[], []] if split else [[]])
    pending = [0, 0]
    slot_of = {t: k for k, slots in enumerate(rank[:4]) for t in slots}
    last = max(slot_of)
    for t in range(last + 1):
        k = slot_of.get(t)
        if k is not None:
            if k in (_I1, _I0):
                pending[k - _I1 if split else 0] += 1
            continue
        for c in (0, 1):
            if pending[c]:
                out[4 + c].append(t)
                pending[c] -= 1
                break
    t = last
    for c in (0, 1):
        for _ in range(pending[c]):
            t += 1
            out[4 + c].append(t)
    return out


def _visit(slots: list[Slots]) -> list[tuple[int, int, int, int]]:
    """Every pass as ``(slot, rank, type, microbatch)`` in the generator's visiting order.

    The order is by slot, then rank, type and microbatch; a pass moved while visiting keeps
    its place in the order (passes are only moved earlier, below every unvisited slot).
    """
    return sorted((t, r, k, j) for r, rank in enumerate(slots) for k, ts in enumerate(rank) for j, t in enumerate(ts))


def _replay(slots: list[Slots]) -> list[Slots]:
    """Start slot of every pass when each rank runs its passes in slot order as early as
    its inputs allow (unit time, no latency): the compacted layout."""
    p = len(slots)
    end: dict[tuple[int, int, int], int] = {}
    last_end = [0] * p
    out: list[Slots] = [[[0] * len(ts) for ts in rank] for rank in slots]
    for _, r, k, j in _visit(slots):
        ready = last_end[r]
        if k in (_F0, _I1) and r > 0:
            ready = max(ready, end[r - 1, k, j])
        if k in (_F1, _I0) and r + 1 < p:
            ready = max(ready, end[r + 1, k, j])
        if 0 < k < 4:
            ready = max(ready, end[r, k - 1, j])
        if j > 0:
            ready = max(ready, end[r, k, j - 1])
        end[r, k, j] = last_end[r] = ready + 1
        out[r][k][j] = ready
    return out


def _squeeze(slots: list[Slots], with_w: bool) -> list[Slots]:
    """Move the warm-up (when ``with_w``) and cool-down passes as early as inputs and memory allow."""
    if with_w:
        slots = [_put_w(rank, split=False) for rank in slots]
    slots = [[list(ts) for ts in rank] for rank in slots]
    p, m = len(slots), len(slots[0][0])
    budget = max(_peak(rank) for rank in slots)
    taken: list[set[int]] = [set() for _ in range(p)]
    phase = 0  # 0 warm-up, 1 steady (kept), 2 cool-down
    for t, r, k, j in _visit(slots):
        if phase == 0 and k == _I0 and r == 0:
            phase = 1
        if phase == 1 or (phase == 0 and not with_w):
            if phase == 1 and k == _F0 and j == m - 1:
                phase = 2
            taken[r].add(t)
            continue
        rank = slots[r]
        earliest = -1
        if k in (_F0, _I1) and r > 0:
            earliest = max(earliest, slots[r - 1][k][j])
        if k in (_F1, _I0) and r + 1 < p:
            earliest = max(earliest, slots[r + 1][k][j])
        if 0 < k < 4:
            earliest = max(earliest, rank[k - 1][j])
        if k == _W:  # the j-th W follows the j-th I of either chunk
            earliest = max(earliest, sorted(rank[_I1] + rank[_I0])[j])
        if j > 0:
            earliest = max(earliest, rank[k][j - 1])
        for s in range(earliest + 1, t):
            if s not in taken[r]:
                rank[k][j] = s
                if _peak(rank) <= budget:
                    break
        else:
            rank[k][j] = t
        taken[r].add(rank[k][j])
    if not with_w:
        slots = [_put_w(rank, split=False) for rank in slots]
    return _replay(slots)


def _build(name: str, p: int, m: int, block: Callable[[int, int], list[int]]) -> Schedule:
    base = [[[x + 6 * j for j in range(m)] for x in block(p, r)] for r in range(p)]
    first = [rank[:4] for rank in _squeeze(base, with_w=True)]
    second = [_put_w(rank[:4], split=True) for rank in _squeeze(first, with_w=False)]
    orders = []
    for r, rank in enumerate(second):
        stage = (r, 2 * p - 1 - r, 2 * p - 1 - r, r, 2 * p - 1 - r, r)
        kind = ("F", "F", "I", "I", "W", "W")
        passes = sorted((t, k, j) for k, ts in enumerate(rank) for j, t in enumerate(ts))
        orders.append(tuple(Action(stage[k], kind[k], j) for _, k, j in passes))
    return Schedule(name, p, m, v_placement(p), tuple(orders),
                    source=f"{_PAPER}, {name.upper()}; order as sail-sg zbv_greedy.py")


def v_half(p: int, m: int) -> Schedule:
    """V-Half: a V-shape schedule with about half of 1F1B's activation memory.

    Peak ``(p + 2) // 2`` microbatch activations (1F1B: ``p``); with F = I = W and no latency
    its bubble is about half of 1F1B's. Any ``m >= 1``. See the module docstring for how the
    order is built.
    """
    return _build("v-half", p, m, _block_half)


def v_min(p: int, m: int) -> Schedule:
    """V-Min: a V-shape schedule with about a third of 1F1B's activation memory.

    Peak ``(p + 4) // 3`` microbatch activations; with F = I = W its bubble is about two
    thirds of 1F1B's, and it degrades when F, I and W differ (the authors' README: "V-Min
    (and only V-Min) suffers a performance degradation when F/B/W are not balanced"). Any
    ``m >= 1``.
    """
    return _build("v-min", p, m, _block_min)


