"""Zero-bubble schedules: backward split into ``I`` (input gradient) and ``W`` (weight gradient).

Notation is PyTorch's: ``I`` is what the zero-bubble paper calls ``B``; ``W`` is the same in
both. A full backward ``B`` (= ``I`` + ``W``) appears only in DualPipe(V). Times below are in
the cost model's unit (slots or ms) and assume equal stages; memory is in *microbatch
activations* (1.0 = one microbatch through one rank's whole share of the model).

Schedules (registry name, source, constraints):

* ``zb-h1`` -- Qi et al., "Zero Bubble Pipeline Parallelism" (ICLR 2024), handcrafted ZB-H1.
  Same order as PyTorch's ``ScheduleInterleavedZeroBubble`` with one local stage per rank
  (``_get_1f1b_rank_ops(enable_zero_bubble=True)``, warm-up factor 1, ``W`` delayed by
  ``rank`` microbatches). Any ``m >= 1``.
  Bubble time per rank, comm 0: ``(p-1)(F+I-W)`` (the paper's ``(p-1)(T_F+T_B-T_W)``),
  exactly, when ``m >= p`` and ``W <= min(F, I)``; the simulator measures more otherwise.
  Peak memory: ``p`` microbatch activations on every rank when ``m >= p`` (1F1B holds
  ``p - r`` on rank ``r``); the largest peak equals 1F1B's, ``min(p, m)``, for every ``m``.
* ``zb-h2`` -- the same paper's handcrafted ZB-H2. Built here by a rule, not copied from a
  figure (see :func:`zb_h2`). Any ``m >= 1``. With ``m >= 2p-1``, F = I = W and comm 0 no
  rank is ever idle between its first and last action (the paper's "zero bubble": only
  the start-up and flush triangle remains, ``(p-1)F`` per rank); with general costs the
  largest such idle time over ranks is ``(p-1)(F+I-2W)`` (the paper's ZB-H2 bubble) when
  ``W <= min(F, I)``. Peak memory ``2p-1`` microbatch activations (the paper's
  ``(2p-1) M_B``).
* ``zbv`` -- ZB-V from the same paper (section 6 of the arXiv version): two chunks per rank
  in a V (:func:`~bubblekit.schedules.base.v_placement`). Port of PyTorch 2.13's
  ``ScheduleZBVZeroBubble._calculate_single_rank_operations`` (idle ``None`` slots dropped).
  Any ``m >= 1`` (PyTorch pads to ``2p-1`` microbatches and drops the padding; so do we).
  Peak memory ``min(p, m)`` microbatch activations, the same as 1F1B. With ``m >= 2p-1``,
  F = I = W and comm 0: no idle inside any rank's span, step ``3mF + (p-1)F/2``.
* ``dualpipe`` and ``dualpipev`` (DeepSeek's DualPipe family, overlapped ``F&B`` pairs) live
  in :mod:`bubblekit.schedules.dualpipe`; ``v-half`` and ``v-min`` (controllable memory) in
  :mod:`bubblekit.schedules.controllable_memory`.

``tests/test_torch_orders.py`` checks every order against PyTorch where torch is installed;
``tests/test_zero_bubble.py`` checks the closed forms.
"""

from __future__ import annotations

from bubblekit.actions import Action
from bubblekit.schedules._flat import KIND_CODES
from bubblekit.schedules.base import Schedule, from_codes, v_placement

__all__ = ["zb_h1", "zb_h2", "zbv"]

_ZB_PAPER = "Qi et al., Zero Bubble Pipeline Parallelism (ICLR 2024)"


def zb_h1(p: int, m: int) -> Schedule:
    """ZB-H1: 1F1B with the backward split, each rank's ``W`` passes delayed to fill bubbles.

    Rank ``r`` runs ``min(p-1-r, m)`` warm-up forwards, then pairs ``F, I`` (one forward,
    one input-gradient backward), adding one ``W`` after each pair once ``r`` pairs have
    run; the flush runs the remaining ``I`` then ``W`` passes. So rank ``r`` keeps ``r``
    weight-gradient passes pending and holds at most ``p`` microbatches' activations, the
    same peak as 1F1B (whose rank 0 holds ``p``).

    Bubble time per rank with comm 0: ``(p-1)(F+I-W)`` (paper: ``(p-1)(T_F+T_B-T_W)``,
    a third of 1F1B's ``(p-1)(T_F+T_B+T_W)`` when all three are equal), exact when
    ``m >= p`` and ``W <= min(F, I)``.

    Identical, action for action, to PyTorch's ``ScheduleInterleavedZeroBubble`` with one
    local stage per rank (PyTorch also demands ``m % max(1, m // p) == 0``, a rule that
    only matters for several stages per rank; bubblekit accepts every ``m >= 1``).
    """
    orders: list[tuple[Action, ...]] = []
    for r in range(p):
        warm = min(p - 1 - r, m)
        ops: list[Action] = [Action(r, "F", k) for k in range(warm)]
        nf, ni, nw = warm, 0, 0
        for op in range(warm, m + warm):
            if op < m:
                ops.append(Action(r, "F", nf))
                nf += 1
            ops.append(Action(r, "I", ni))
            ni += 1
            if op - warm >= r:
                ops.append(Action(r, "W", nw))
                nw += 1
        ops.extend(Action(r, "W", k) for k in range(nw, m))
        orders.append(tuple(ops))
    return Schedule(
        "zb-h1", p, m, tuple(range(p)), tuple(orders),
        source=f"{_ZB_PAPER}, ZB-H1; order as PyTorch ScheduleInterleavedZeroBubble (one stage per rank)",
    )


def zb_h2(p: int, m: int) -> Schedule:
    """ZB-H2: more warm-up forwards and late ``W`` passes; zero idle inside each rank's span.

    The paper draws ZB-H2 for ``T_F = T_B = T_W``: "more F passes during the warm-up phase"
    and "the W passes at the tail reordered", turning 1F1B's trapezoid into a
    parallelogram. bubblekit builds the order with one rule, applied by a unit-time list
    scheduler (F = I = W = 1 slot, comm 0): whenever rank ``r`` is free it runs

    1. the next ``I`` if its gradient has arrived, else
    2. the next ``F`` if its input has arrived and the rank holds fewer than ``2p-1``
       microbatches (forwards done minus ``W`` done), else
    3. the oldest pending ``W``.

    The order found is then fixed and can be simulated under any costs. It gives rank
    ``r`` ``2(p-1-r)+1`` warm-up forwards and ``2r+1`` trailing ``W`` passes.

    Properties (checked in ``tests/test_zero_bubble.py``): peak memory ``2p-1`` microbatch
    activations (paper: ``(2p-1) M_B``); with ``m >= 2p-1``, F = I = W and comm 0, no rank
    is idle between its first and last action, so the step takes ``3m`` slots plus the
    ``(p-1)`` start-up triangle; with other costs the largest idle time inside a rank's
    span is ``(p-1)(F+I-2W)`` (the paper's ZB-H2 bubble) when ``W <= min(F, I)``. Smaller
    ``m`` is legal but leaves idle time. No PyTorch counterpart.

    Note: with every rank's step measured from the first start to the last end (bubblekit's
    makespan), ZB-H2 at F = I = W takes ``3m + (p-1)`` slots, exactly as long as ZB-H1: its
    idle time has moved from inside the ranks' spans to the start-up and flush triangle.
    The gain is real only when consecutive steps interlock, which is why the paper drops
    the optimizer's synchronisation (its "post-validation" step).
    """
    cap = 2 * p - 1
    never = 1 << 62
    f_end = [[never] * m for _ in range(p)]  # step at which F of (rank, mb) is done
    i_end = [[never] * m for _ in range(p)]
    nf, ni, nw = [0] * p, [0] * p, [0] * p
    orders: list[list[Action]] = [[] for _ in range(p)]
    remaining = p * m  # W passes still to run
    t = 0
    limit = 3 * m * p + p + 3  # a sequential run would finish well before this
    while remaining:
        if t > limit:  # pragma: no cover - the rule always progresses
            raise RuntimeError(f"zb-h2 construction did not finish for p={p}, m={m}")
        for r in range(p):
            k = ni[r]
            if k < nf[r] and f_end[r][k] <= t and (r == p - 1 or i_end[r + 1][k] <= t):
                i_end[r][k] = t + 1
                orders[r].append(Action(r, "I", k))
                ni[r] = k + 1
                continue
            k = nf[r]
            if k < m and k - nw[r] < cap and (r == 0 or f_end[r - 1][k] <= t):
                f_end[r][k] = t + 1
                orders[r].append(Action(r, "F", k))
                nf[r] = k + 1
                continue
            k = nw[r]
            if k < ni[r]:
                orders[r].append(Action(r, "W", k))
                nw[r] = k + 1
                remaining -= 1
        t += 1
    return Schedule(
        "zb-h2", p, m, tuple(range(p)), tuple(tuple(o) for o in orders),
        source=f"{_ZB_PAPER}, ZB-H2 (built by bubblekit's list-scheduling rule at F=I=W)",
    )


def zbv(p: int, m: int) -> Schedule:
    """ZB-V: two chunks per rank in a V; forward down the ranks and back up, then backward.

    Qi et al. (arXiv 2401.10241 v2, section 6). Rank ``r`` holds stages ``r`` (chunk 0) and
    ``2p-1-r`` (chunk 1), so rank 0 holds the first and the last stage. Port of PyTorch
    2.13's ``ScheduleZBVZeroBubble._calculate_single_rank_operations``:

    * warm-up: ``2(p-r)-1`` chunk-0 forwards; ``r`` pairs (chunk-1 F, chunk-0 F);
      ``p-r`` triples (chunk-1 F, I, W);
    * steady: chunk-0 ``F I W`` then chunk-1 ``F I W`` until all forwards are done;
    * cool-down: ``r`` pairs of ``I`` (chunk 0, chunk 1), ``p-r`` chunk-0 ``I W``, then the
      remaining ``W`` of chunk 1, then of chunk 0.

    Like PyTorch, builds the order for ``max(m, 2p-1)`` microbatches and drops the actions
    of microbatches ``>= m``, so every ``m >= 1`` works. Peak memory ``min(p, m)``
    microbatch activations (each chunk holds ``1/2``), the same as 1F1B. With
    ``m >= 2p-1``, F = I = W and comm 0, no rank is idle between its first and last action
    (the paper's "zero bubble") and the step takes ``3m F + (p-1) F/2``: the start-up
    triangle is made of chunk forwards, half of ZB-H2's.
    """
    n_micro = max(2 * p - 1, m)
    n_stages = 2 * p
    codes: list[list[int]] = []  # each action as its integer code (from_codes): (kind * n_stages + stage) * m + mb
    for r in range(p):
        s0, s1 = r, n_stages - 1 - r
        ops: list[int] = []

        def put(stage: int, kind: str, mb: int, ops: list[int] = ops) -> None:
            if mb < m:  # the order is built for n_micro microbatches; those >= m are dropped
                ops.append((KIND_CODES[kind] * n_stages + stage) * m + mb)

        f0 = f1 = b0 = b1 = 0
        for _ in range(2 * (p - r) - 1):
            put(s0, "F", f0)
            f0 += 1
        for _ in range(r):
            put(s1, "F", f1)
            f1 += 1
            put(s0, "F", f0)
            f0 += 1
        for _ in range(p - r):
            put(s1, "F", f1)
            f1 += 1
            put(s1, "I", b1)
            put(s1, "W", b1)
            b1 += 1
        while f1 < f0 or f0 < n_micro:
            if f0 < n_micro:
                put(s0, "F", f0)
                f0 += 1
            put(s0, "I", b0)
            put(s0, "W", b0)
            b0 += 1
            put(s1, "F", f1)
            f1 += 1
            put(s1, "I", b1)
            put(s1, "W", b1)
            b1 += 1
        w0, w1 = b0, b1
        for _ in range(r):
            put(s0, "I", b0)
            b0 += 1
            put(s1, "I", b1)
            b1 += 1
        for _ in range(p - r):
            put(s0, "I", b0)
            b0 += 1
            put(s0, "W", w0)
            w0 += 1
        for k in range(w1, b1):
            put(s1, "W", k)
        for k in range(w0, b0):
            put(s0, "W", k)
        if not (w0 <= b0 == f0 == n_micro and b1 == f1 == n_micro):  # pragma: no cover
            raise AssertionError(f"zbv port lost count for p={p}, m={m}, rank {r}")
        codes.append(ops)
    return from_codes(
        "zbv", p, m, v_placement(p), codes,
        source=f"{_ZB_PAPER}, ZB-V; order as PyTorch ScheduleZBVZeroBubble",
    )
