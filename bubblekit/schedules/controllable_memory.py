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

"1/2" and "1/3" are the limits for large ``p`` (at ``p = 4``: 3/4 and 1/2 of 1F1B). The family's
third member, V-ZB (1F1B's memory, zero bubble), is :func:`v_zb`: ZB-V up to its cool-down, so only
ZB-V is registered.

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

__all__ = ["v_half", "v_min", "v_zb", "v_half_peak", "v_min_peak"]

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




# ----------------------------------------------------------------------------------- V-ZB
# The third member of the family, V-ZB: 1F1B's peak (p microbatches) and, at F = I = W, no
# idle time inside any rank. The authors build it by greedy list scheduling with costs; the
# order below is theirs at the fixed costs their runtime also uses for V-Half and V-Min
# (F = I = W = 1000, a hop of 1; activations per chunk pass: F +194, I -162, W -32, a cap of 2p
# forwards). Passes are indexed by kind (0 F, 1 I, 2 W) and by the authors' chunk numbering:
# for F, chunk 0 is stage r and chunk 1 stage 2p-1-r; for I and W it is the other way round.
_VZB_COST = (1000, 1000, 1000)
_VZB_HOP = 1
_VZB_MEM = (194, -162, -32)


class _VZB:
    """One greedy attempt of V-ZB's construction (see :func:`v_zb`)."""

    def __init__(self, p: int, m: int, fill_f: bool, fill_b: bool, approved: list[int] | None) -> None:
        self.p, self.m, self.fill_f, self.fill_b = p, m, fill_f, fill_b
        self.end: dict[tuple[int, int, int, int], int] = {}
        self.now = [0] * p
        self.mem = [0] * p
        self.bubble = [0] * p
        self.count = [[0] * 6 for _ in range(p)]
        self.pending: list[list[tuple[int, int]]] = [[] for _ in range(p)]
        self.order: list[list[tuple[int, int, int]]] = [[] for _ in range(p)]
        self.approved = approved if approved is not None else [-1] * p
        self.max_approved = max(self.approved)
        self.cap = _VZB_MEM[0] * 2 * p

    def ended(self, key: tuple[int, int, int, int] | None) -> int:
        """End time of a pass, -1 before it runs. ``None`` stands for the authors' index -1,
        the very last pass (the last rank's last chunk-0 W), which runs only at the end."""
        if key is None:
            key = (2, 1, self.p - 1, self.m - 1)
        return self.end.get(key, -1)

    def worst_bubble(self, rank: int = -1) -> int:
        worst = max(self.bubble)
        if rank >= 0:
            worst = max(worst, self.max_approved - self.approved[rank])
        return worst

    def put(self, kind: int, chunk: int, rank: int) -> None:
        n = self.count[rank][kind * 2 + chunk]
        ready = self.now[rank] + _VZB_COST[kind]
        t = ready
        if kind < 2 and chunk == 1 and rank < self.p - 1:
            t = max(t, self.end[kind, 1, rank + 1, n] + _VZB_HOP + _VZB_COST[kind])
        if kind < 2 and chunk == 0 and rank > 0:
            t = max(t, self.end[kind, 0, rank - 1, n] + _VZB_HOP + _VZB_COST[kind])
        if self.count[rank][0] > 0:
            self.bubble[rank] += t - ready
        self.end[kind, chunk, rank, n] = t
        self.now[rank] = t
        self.mem[rank] += _VZB_MEM[kind]
        self.order[rank].append((kind, chunk, n))
        if kind == 1:
            self.pending[rank].append((chunk, n))
        self.count[rank][kind * 2 + chunk] += 1

    def put_w(self, rank: int) -> None:
        chunk, _ = self.pending[rank].pop(0)
        self.put(2, chunk, rank)

    def fill(self, rank: int, key: tuple[int, int, int, int] | None, always: bool) -> None:
        """Run pending W passes while the next pass's input would arrive later anyway, and one more
        when the wait exceeds the bubble this rank may still take (``always`` allows it)."""
        while self.pending[rank] and key is not None and self.ended(key) + _VZB_HOP >= self.now[rank] + _VZB_COST[2]:
            self.put_w(rank)
        if self.pending[rank] and self.ended(key) + _VZB_HOP - self.now[rank] > \
                self.worst_bubble(rank) - self.bubble[rank] and always:
            self.put_w(rank)

    def run(self) -> None:
        p, m, count = self.p, self.m, self.count
        for r in range(p):  # warm-up: a first forward everywhere, then as many as memory allows
            self.put(0, 0, r)
        for r in range(p - 1, -1, -1):
            if r == p - 1:
                self.put(0, 1, r)
                continue
            arrive = self.end[0, 1, r + 1, 0] + _VZB_HOP
            while (self.mem[r] + _VZB_MEM[0] * (2 + 2 * r) <= self.cap and self.now[r] + _VZB_COST[0] <= arrive
                   and count[r][0] < m):
                for j in range(r + 1):
                    self.put(0, 0, j)
            self.put(0, 1, r)
        chunk = 0
        for r in range(1, p):
            while count[r][0] + count[r][1] < count[r - 1][0] + count[r - 1][1] or count[r][1] <= count[r - 1][1] < m:
                for j in range(p - 1, r - 1, -1):
                    if count[j][chunk] < m:
                        self.put(0, chunk, j)
                chunk = 1 - chunk
        for _ in range(2 * m):
            for r in range(p):
                while self.mem[r] + _VZB_MEM[1] > self.cap:
                    self.put_w(r)
            b0, b1 = [], []
            for r in range(p):
                if count[r][3] >= count[r][2]:
                    b0.append(r)
                elif r == p - 1 or self.ended((1, 1, r + 1, count[r][3])) >= 0 or count[r][2] >= m:
                    b1.append(r)
                else:
                    b0.append(r)
            for r, c in [(r, 1) for r in reversed(b1)] + [(r, 0) for r in b0]:
                key = None
                if c == 1 and r < p - 1:
                    key = (1, 1, r + 1, count[r][3])
                if c == 0 and r > 0:
                    key = (1, 0, r - 1, count[r][2])
                self.fill(r, key, c == 1 or self.fill_b)
                self.put(1, c, r)
            for r in range(p):
                if count[r][1] >= m:
                    continue
                item = None
                if count[r][1] >= count[r][0]:
                    item = 0
                elif r == p - 1 or self.ended((0, 1, r + 1, count[r][1])) >= 0:
                    item = 1
                elif count[r][0] < m and (r == 0 or self.ended((0, 0, r - 1, count[r][0])) >= 0):
                    item = 0
                if item is None:
                    continue
                while self.mem[r] + _VZB_MEM[0] > self.cap:
                    self.put_w(r)
                key = None
                if item == 0 and r > 0:
                    key = (0, 0, r - 1, count[r][0])
                if item == 1 and r < p - 1:
                    key = (0, 1, r + 1, count[r][1])
                self.fill(r, key, self.fill_f)
                self.put(0, item, r)
        for r in range(p):
            while self.pending[r]:
                self.put_w(r)


def _vzb_attempt(p: int, m: int, fill_f: bool, fill_b: bool, approved: list[int] | None = None) -> _VZB:
    """An attempt, retried once with its own per-rank bubbles as the allowance when that helps."""
    first = _VZB(p, m, fill_f, fill_b, approved)
    first.run()
    worst = first.worst_bubble()
    if first.max_approved < 0 or worst < first.max_approved:
        again = _vzb_attempt(p, m, fill_f, fill_b, list(first.bubble))
        if again.worst_bubble() < worst:
            return again
    return first


def v_zb(p: int, m: int) -> Schedule:
    """V-ZB: the V shape with 1F1B's memory (``p`` microbatches) and zero bubble at F = I = W.

    The authors' construction (sail-sg ``zbv.py``, re-implemented from its description): a greedy
    list scheduler that fills each rank's waits with pending ``W`` passes under a cap of ``2p``
    chunk activations, tried with and without filling before ``F`` and before chunk-0 ``I`` passes,
    keeping the attempt with the smallest worst per-rank bubble. At the fixed equal costs used
    here it runs ZB-V's order (:func:`~bubblekit.schedules.zero_bubble.zbv`, PyTorch's) up to each
    rank's last forward and places the cool-down ``W`` passes differently. Any ``m >= 1``.

    Not registered (``bk.schedule("zbv")`` is the family's zero-bubble member in the menus): it
    would duplicate ZB-V there, and its cap counts memory the authors' way, an ``I`` freeing all
    but the weight gradient's share (``Costs(w_held=32/194)``: peak ``min(p, m)`` for every ``m``);
    with bubblekit's default rule (``W`` frees everything) the peak exceeds ``p`` by up to about
    ``p/8`` when ``p < m < 2p - 1``. Used in lesson 07's tests and its companion notebook.
    """
    best: _VZB | None = None
    for fill_b in (True, False):
        for fill_f in (True, False):
            attempt = _vzb_attempt(p, m, fill_f, fill_b)
            if best is None or attempt.worst_bubble() < best.worst_bubble():
                best = attempt
    assert best is not None
    orders = []
    for r, passes in enumerate(best.order):
        first, last = r, 2 * p - 1 - r
        ops = []
        for kind, chunk, n in passes:
            if kind == 0:
                stage = first if chunk == 0 else last
            else:
                stage = last if chunk == 0 else first
            ops.append(Action(stage, "FIW"[kind], n))
        orders.append(tuple(ops))
    return Schedule("v-zb", p, m, v_placement(p), tuple(orders),
                    source=f"{_PAPER}, V-ZB; order as sail-sg zbv.py at equal costs")
