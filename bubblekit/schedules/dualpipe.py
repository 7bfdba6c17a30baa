"""DeepSeek's DualPipe and DualPipeV, with each overlapped forward+backward pair as ONE unit.

Notation is PyTorch's (``I`` = input gradient, ``W`` = weight gradient, ``B`` = full
backward); an overlapped pair is a :class:`~bubblekit.actions.Pair` (``0F7&7B3``, PyTorch's
``OVERLAP_F_B``), which waits for both parts' inputs, makes both parts' outputs at its end
and lasts ``Costs.fb`` (``F + B`` by default).

* ``dualpipe`` -- DualPipe (DeepSeek-V3 technical report, arXiv 2412.19437, §3.2.1;
  github.com/deepseek-ai/DualPipe ``dualpipe/dualpipe.py``): **two pipelines in opposite
  directions** on ``PP`` ranks. Half of the microbatches enter at rank 0 and run model stage
  ``s`` on rank ``s``; the other half enter at rank ``PP-1`` and run model stage ``s`` on rank
  ``PP-1-s``. So rank ``r`` holds model stages ``r`` and ``PP-1-r``: the whole model twice
  over the pipeline (2x parameters per device, two gradients to sum), ``PP + 1`` chunk
  activations at the peak. In bubblekit's numbering stages ``0..PP-1`` are the first
  direction and ``PP..2PP-1`` the second (stage ``PP+s`` is the second direction's model
  stage ``s``, on rank ``PP-1-s``), ``pipes = 2``, and microbatches ``0..m/2-1`` go the first
  way, ``m/2..m-1`` the second (DeepSeek's first and second half of the batch).
  Needs ``PP`` even, ``m`` even and ``m >= 2 PP`` (DeepSeek's assertions).
* ``dualpipev`` -- DualPipeV, the "cut-in-half" DualPipe: added to the DualPipe repository
  on 2025-03-04 (``dualpipe/dualpipev.py``), crediting Sea AI Lab's "Cut-in-half" write-up
  (not part of the DeepSeek-V3 report). One pipeline of ``2p`` stages in a V on ``p`` ranks
  (:func:`~bubblekit.schedules.base.v_placement`), one copy of the model. Same order as
  PyTorch 2.13's ``ScheduleDualPipeV``, pairs included. Needs ``m >= 2p`` (at least one
  microbatch per stage).

Both orders are DeepSeek's eight steps (port of the order logic of ``dualpipe.py`` /
``dualpipev.py``; ``tests/test_dualpipe.py`` compares them action for action with orders
recorded from DeepSeek's code): DualPipe rank ``r`` runs DualPipeV's order for position
``min(r, PP-1-r)`` of ``PP/2`` ranks with ``m/2`` microbatches, its two chunks being its two
directions ("cut in half" read backwards).

The README's bubble ``(PP/2 - 1)(F&B + B - 3W)`` is, in bubblekit's model (pairs as units,
no latency), the largest idle time of a rank over the step, exactly, when the input-gradient
pass takes as long as the forward (``I = F``, so ``B = F + W``) and ``W <= F``, for every
``F&B`` between ``max(F, B)`` and ``F + B``; ``tests/test_dualpipe.py`` checks it and shows it
failing for ``I != F``.
"""

from __future__ import annotations

from bubblekit.actions import Action, Pair
from bubblekit.i18n import register, tr
from bubblekit.schedules.base import Schedule, v_placement

register({
    "schedules.refuse.dualpipe_p": {
        "en": ("m={m} cannot run on p={p} ranks with 'dualpipe': it needs an even number of ranks "
               "(two directions meet in the middle); DualPipeV ('dualpipev') runs on any p"),
        "zh": "p = {p}（m = {m}）：DualPipe 要求 rank 数为偶数（两个方向在中间相遇），DualPipeV 则对任意 p 都能跑",
    },
    "schedules.refuse.dualpipe_m": {
        "en": ("m={m} is not allowed for 'dualpipe' with p={p}: it needs m even and m >= 2p = {twop} "
               "(half the microbatches go each way, at least p per direction; DeepSeek's rule)"),
        "zh": "p = {p} 时 m = {m} 不行，m 必须是偶数，而且 m ≥ 2p = {twop}（一半微批走一个方向，每个方向至少 p 个；这是 DeepSeek 的规则）",
    },
    "schedules.refuse.dualpipev": {
        "en": ("m={m} is too small for 'dualpipev' with p={p}: it needs m >= 2p = {twop} "
               "microbatches (at least as many microbatches as the V has stages, PyTorch's ScheduleDualPipeV rule)"),
        "zh": "p = {p} 时 m = {m} 太少，至少要 m ≥ 2p = {twop} 个微批（微批数不能少于 V 形的流水级数，这是 PyTorch ScheduleDualPipeV 的规则）",
    },
})

__all__ = ["dualpipe", "dualpipev", "dualpipe_m_rule", "dualpipev_m_rule", "dualpipe_rank_order"]

_REPO = "github.com/deepseek-ai/DualPipe"


def dualpipe_m_rule(p: int, m: int) -> str | None:
    """Why DualPipe cannot run ``m`` microbatches on ``p`` ranks, or ``None`` when it can."""
    if p % 2:
        return tr("schedules.refuse.dualpipe_p", m=m, p=p)
    if m % 2 or m < 2 * p:
        return tr("schedules.refuse.dualpipe_m", m=m, p=p, twop=2 * p)
    return None


def dualpipev_m_rule(p: int, m: int) -> str | None:
    """Why DualPipeV cannot run ``m`` microbatches on ``p`` ranks, or ``None`` when it can (m >= 2p)."""
    if m >= 2 * p:
        return None
    return tr("schedules.refuse.dualpipev", m=m, p=p, twop=2 * p)


def dualpipe_rank_order(ranks: int, n: int, h: int, chunk0: tuple[int, int], chunk1: tuple[int, int]) -> tuple[Action, ...]:
    """DeepSeek's eight steps for the rank at position ``h`` of ``ranks`` (DualPipeV numbering).

    Args:
        ranks: ranks of the V (``R``; DualPipe: ``PP/2``).
        n: microbatches through each chunk (DualPipeV: ``m``; DualPipe: ``m/2`` per direction).
        h: the rank's position, ``0 .. ranks-1``; ``ranks - 1`` is the turn of the V (DualPipe:
            the two middle ranks), whose first step-4 unit is not overlapped.
        chunk0: ``(stage, first microbatch)`` of the chunk in which the rank is at position
            ``h`` (data reaches it after ``h`` hops);
        chunk1: the same for the chunk in which it is at position ``2 ranks - 1 - h``.

    Each chunk counts its own forwards, and its own backwards (``B`` and ``I`` share the
    count); ``W`` runs the oldest pending weight gradient (a queue filled by each ``I``).
    """
    stage = (chunk0[0], chunk1[0])
    first = (chunk0[1], chunk1[1])
    n_f, n_b = [0, 0], [0, 0]
    ops: list[Action] = []
    w_queue: list[Action] = []

    def fwd(c: int) -> Action:
        a = Action(stage[c], "F", first[c] + n_f[c])
        n_f[c] += 1
        return a

    def bwd(c: int, kind: str = "B") -> Action:
        a = Action(stage[c], kind, first[c] + n_b[c])
        n_b[c] += 1
        if kind == "I":
            w_queue.append(Action(a.stage, "W", a.microbatch))
        return a

    def weight() -> Action:
        return w_queue.pop(0)

    r, last = h, ranks - 1
    ops += [fwd(0) for _ in range(2 * (last - r))]          # 1: chunk-0 forwards
    for _ in range(r + 1):                                    # 2: forwards of both chunks
        ops += [fwd(0), fwd(1)]
    for _ in range(last - r):                                 # 3: I1 W F1 (zero-bubble style)
        ops.append(bwd(1, "I"))
        ops += [weight(), fwd(1)]
    for i in range(n - 2 * ranks + r + 1):                    # 4: the main phase, overlapped pairs
        if i == 0 and r == last:                              #    the turn's first unit is not overlapped
            ops += [fwd(0), bwd(1)]
        else:
            ops.append(Pair(fwd(0), bwd(1)))
        ops.append(Pair(fwd(1), bwd(0)))
    for _ in range(last - r):                                 # 5: B1, then F1 overlapped with B0
        ops.append(bwd(1))
        ops.append(Pair(fwd(1), bwd(0)))
    split = False                                             # 6: backwards, the second half as I only
    for i in range(r + 1):
        if i == (r + 1) // 2 and r % 2 == 1:
            split = True
        ops.append(bwd(1, "I" if split else "B"))
        if i == (r + 1) // 2 and r % 2 == 0:
            split = True
        ops.append(bwd(0, "I" if split else "B"))
    for _ in range(last - r):                                 # 7: W, I0
        ops.append(weight())
        ops.append(bwd(0, "I" if split else "B"))
    ops += [weight() for _ in range(r + 1)]                   # 8: the pending W
    return tuple(ops)


def dualpipev(p: int, m: int) -> Schedule:
    """DualPipeV: DualPipe "cut in half", ``2p`` stages in a V on ``p`` ranks, pairs overlapped.

    Rank ``r`` holds stages ``r`` (chunk 0) and ``2p-1-r`` (chunk 1). DeepSeek's eight steps
    (:func:`dualpipe_rank_order`): chunk-0 forwards; forwards of both chunks; ``I1 W F1``;
    the main phase of overlapped pairs ``F0&B1`` and ``F1&B0``; ``B1`` then ``F1&B0``;
    ``B1 B0`` (the second half as ``I`` only); ``W I0``; the pending ``W``. Identical to
    DeepSeek's ``dualpipev.py`` and to PyTorch 2.13's ``ScheduleDualPipeV`` (its
    ``OVERLAP_F_B`` actions are the pairs), including the unit on the last rank that is
    deliberately not overlapped.

    Peak memory ``2p + 1`` chunk activations, ``p + 1/2`` microbatch activations (the
    DualPipe README's ``PP + 1`` with ``PP = 2p`` stages). Sends ``2 m (2p - 2)`` messages per
    step: twice 1F1B on the same ``p`` ranks, fewer than 1F1B with the same ``2p`` stages.

    Raises ``ValueError`` unless ``m >= 2p``.
    """
    problem = dualpipev_m_rule(p, m)
    if problem is not None:
        raise ValueError(problem)
    orders = tuple(dualpipe_rank_order(p, m, r, (r, 0), (2 * p - 1 - r, 0)) for r in range(p))
    return Schedule(
        "dualpipev", p, m, v_placement(p), orders,
        source=f"DualPipeV, {_REPO} dualpipev.py (2025-03-04; Sea AI Lab's 'cut-in-half'); "
               "order as PyTorch ScheduleDualPipeV",
    )


def dualpipe(p: int, m: int) -> Schedule:
    """DualPipe: two pipelines in opposite directions on ``p = PP`` ranks, pairs overlapped.

    Microbatches ``0..m/2-1`` enter at rank 0 (stages ``0..p-1``, stage ``s`` on rank ``s``);
    microbatches ``m/2..m-1`` enter at rank ``p-1`` (stages ``p..2p-1``: stage ``p+s`` is model
    stage ``s`` of the second direction, on rank ``p-1-s``). Rank ``r`` runs DeepSeek's
    eight steps (:func:`dualpipe_rank_order`) at position ``h = min(r, p-1-r)`` of ``p/2``
    with ``m/2`` microbatches per direction; its chunk 0 is the direction in which it is
    ``h`` hops from the entry.

    Each rank holds two stages that are copies of two model stages (``2/PP`` of the
    parameters, twice 1F1B's ``1/PP``; their gradients are summed after the step). Peak
    memory ``PP + 1`` microbatch activations of one stage (1F1B: ``PP``). Messages per step
    ``2 m (PP - 1)``, the same as 1F1B. With ``I = F`` and ``W <= F`` every rank idles at most
    ``(PP/2 - 1)(F&B + B - 3W)`` (the README's bubble).

    Raises ``ValueError`` unless ``p`` is even, ``m`` is even and ``m >= 2p``.
    """
    problem = dualpipe_m_rule(p, m)
    if problem is not None:
        raise ValueError(problem)
    half = m // 2
    orders = []
    for r in range(p):
        down, up = (r, 0), (2 * p - 1 - r, half)  # this rank's stage in each direction
        h = min(r, p - 1 - r)
        chunk0, chunk1 = (down, up) if r < p // 2 else (up, down)
        orders.append(dualpipe_rank_order(p // 2, half, h, chunk0, chunk1))
    return Schedule(
        "dualpipe", p, m, v_placement(p), tuple(orders), pipes=2,
        source=f"DualPipe, DeepSeek-V3 technical report (arXiv 2412.19437) and {_REPO} dualpipe.py",
    )
