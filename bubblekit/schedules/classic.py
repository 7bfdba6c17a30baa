"""Classic schedules with a full backward: GPipe, 1F1B, interleaved 1F1B, looped BFS.

Each generator returns a :class:`~bubblekit.schedules.base.Schedule`. Orders match
PyTorch's ``torch.distributed.pipelining`` (2.13) action for action, idle ``None`` slots
dropped; ``tests/test_torch_orders.py`` checks it where torch is installed.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain, count
from typing import Any

from bubblekit.actions import Action
from bubblekit.i18n import register, tr
from bubblekit.schedules._flat import KIND_CODES, compute_codes
from bubblekit.schedules.base import Schedule, from_codes, looped_placement

register({
    # the m rules' refusals (a learner meets them in the planner's tables and in bk.schedule)
    "schedules.refuse.interleaved": {
        "en": ("m={m} is not allowed for p={p} with interleaving: PyTorch runs the microbatches in "
               "max(1, m // p) = {rounds} rounds of equal size, so m must be below 2p = {twop} or a multiple "
               "of m // p, and {rounds} does not divide {m} (nearest allowed: m = {below} or {above})"),
        "zh": ("m={m} 不能用于 p={p} 的交错式 1F1B：PyTorch 把微批分成 max(1, m // p) = {rounds} 轮，每轮一样多，"
               "所以 m 要么小于 2p = {twop}，要么是 m // p 的整数倍；而 {rounds} 除不尽 {m}（最近的可用值：m = {below} 或 {above}）"),
    },
    "schedules.group.range": {
        "en": ("microbatch_group_size={group} is not allowed for p={p}, m={m}: Megatron-Core asks for "
               "p <= microbatch_group_size <= m (here {p}..{m})"),
        "zh": "microbatch_group_size={group} 不能用于 p={p}、m={m}：Megatron-Core 要求 p <= microbatch_group_size <= m（这里是 {p}..{m}）",
    },
    "schedules.group.rest": {
        "en": ("microbatch_group_size={group} is not allowed for p={p}, m={m}: the last group would hold "
               "m % {group} = {rest} microbatches, fewer than p = {p} (Megatron-Core refuses it: those "
               "microbatches would wait on their own forwards); pick a size that divides m or leaves >= p"),
        "zh": ("microbatch_group_size={group} 不能用于 p={p}、m={m}：最后一组只剩 m % {group} = {rest} 个微批，少于 p = {p}"
               "（Megatron-Core 会拒绝：这些微批得等自己的前向）；请选一个能整除 m、或余数不小于 p 的组大小"),
    },
})

__all__ = ["gpipe", "one_f_one_b", "interleaved_1f1b", "looped_bfs", "interleaved_m_rule", "megatron_schedule_table",
           "microbatch_group_rule"]


def gpipe(p: int, m: int) -> Schedule:
    """All forwards, then all backwards (GPipe; the source article's "naive" schedule).

    Huang et al., "GPipe", NeurIPS 2019. Rank ``r`` runs ``rF0 .. rF(m-1)`` then
    ``rB0 .. rB(m-1)`` (PyTorch's ``ScheduleGPipe`` order), so it holds the activations of
    all ``m`` microbatches at its peak.
    """
    codes = [[*compute_codes(p, m, r, "F"), *compute_codes(p, m, r, "B")] for r in range(p)]
    return from_codes("gpipe", p, m, tuple(range(p)), codes, source="Huang et al., GPipe (2019)")


def one_f_one_b(p: int, m: int) -> Schedule:
    """One-forward-one-backward (PipeDream-Flush / 1F1B).

    Narayanan et al., "Memory-Efficient Pipeline-Parallel DNN Training" (2021). Rank ``r``
    runs ``min(p - r, m)`` warm-up forwards, then alternates one backward and one forward,
    then drains the remaining backwards. Same bubble as GPipe, but rank ``r`` holds at most
    ``min(p - r, m)`` microbatches' activations instead of ``m``.
    """
    codes = []
    for r in range(p):
        warm = min(p - r, m)
        forwards, backwards = compute_codes(p, m, r, "F"), compute_codes(p, m, r, "B")
        steady = chain.from_iterable(zip(backwards, forwards[warm:]))  # B k, F warm+k
        codes.append([*forwards[:warm], *steady, *backwards[m - warm:]])
    return from_codes("1f1b", p, m, tuple(range(p)), codes, source="Narayanan et al., PipeDream-Flush / 1F1B (2021)")


def interleaved_m_rule(p: int, m: int) -> str | None:
    """Why ``m`` microbatches cannot be interleaved over ``p`` ranks, or ``None`` when they can.

    PyTorch's rule (``ScheduleInterleaved1F1B``, ``ScheduleInterleavedZeroBubble``): the
    microbatches run in ``rounds = max(1, m // p)`` rounds of equal size, so the rounds
    must divide ``m``. Every ``m < 2p`` is allowed (one round); from ``2p`` on, ``m`` must
    be a multiple of ``m // p`` (with p = 4: 8, 10, 12, 15, 16, 20, ... but not 9, 11, 13, 14).
    """
    def rounds_divide(k: int) -> bool:
        return k % max(1, k // p) == 0

    if rounds_divide(m):
        return None
    below = next(k for k in range(m - 1, 0, -1) if rounds_divide(k))
    above = next(k for k in count(m + 1) if rounds_divide(k))  # k = p * (m // p + 1) at the latest
    return tr("schedules.refuse.interleaved", m=m, p=p, rounds=m // p, twop=2 * p, below=below, above=above)


def _rounds(p: int, m: int) -> tuple[int, int]:
    """PyTorch's flexible rounds: ``(number_of_rounds, microbatches_per_round)``."""
    problem = interleaved_m_rule(p, m)
    if problem is not None:
        raise ValueError(problem)
    rounds = max(1, m // p)
    return rounds, m // rounds


def warmup_ops(rank: int, v: int, per_round: int, p: int, m: int, factor: int) -> int:
    """Warm-up forwards on ``rank`` for interleaved schedules (PyTorch's ``_get_warmup_ops``)."""
    return min((v - 1) * per_round + factor * (p - 1 - rank), m * v)


def megatron_schedule_table(m: int, v: int, group: int) -> list[tuple[int, int]]:
    """The forward order of one rank's ``(microbatch, chunk)`` pairs, in groups of ``group`` microbatches.

    Port of Megatron-Core's ``get_schedule_table(num_microbatches, num_model_chunks,
    microbatch_group_size_per_vp_stage)`` (``megatron/core/pipeline_parallel/schedules.py``): a
    rank runs ``group`` consecutive microbatches through chunk 0, the same ones through chunk 1,
    ..., then the next group; the last group takes what is left. The backward order is the same
    table with the chunks reversed. ``group = p`` (Megatron's default) is depth-first interleaving;
    ``group = m`` runs every microbatch through a chunk before the next chunk (breadth-first).
    """
    table: list[tuple[int, int]] = []
    for first in range(0, m, group):
        last = m if first + group >= m else first + group
        table.extend((mb, chunk) for chunk in range(v) for mb in range(first, last))
    return table


def microbatch_group_rule(p: int, m: int, group: int) -> str | None:
    """Megatron-Core's rules for ``microbatch_group_size_per_vp_stage``, or ``None`` when ``group`` is allowed.

    From ``forward_backward_pipelining_with_interleaving``: ``p <= group <= m``, and the last
    group (``m % group`` microbatches) is empty or holds at least ``p`` (a smaller one would
    wait on its own forwards: Megatron raises rather than run those dependency bubbles).
    """
    if not p <= group <= m:
        return tr("schedules.group.range", group=group, p=p, m=m)
    rest = m % group
    if 0 < rest < p:
        return tr("schedules.group.rest", group=group, p=p, m=m, rest=rest)
    return None


def interleaved_rank_ops(
    rank: int, p: int, m: int, v: int, *, zero_bubble: bool = False, group: int | None = None, codes: bool = False
) -> list[Action] | list[int]:
    """One rank's order for interleaved 1F1B (or its zero-bubble variant, ZB1P).

    Port of PyTorch's ``_get_1f1b_rank_ops`` with the stage-index rules of
    ``ScheduleInterleaved1F1B`` / ``ScheduleInterleavedZeroBubble``, written over Megatron-Core's
    schedule table (:func:`megatron_schedule_table`): PyTorch's rounds of ``m // rounds``
    microbatches are Megatron's groups of that size. ``group`` (Megatron's
    ``microbatch_group_size_per_vp_stage``) replaces the round size; warm-up is Megatron's
    ``2(p - 1 - rank) + (v - 1)·group`` forwards (``factor`` 1 instead of 2 for ZB1P), capped at ``m·v``.
    ``codes=True`` gives each action as its integer code (:func:`~bubblekit.schedules.base.from_codes`).
    """
    if group is None:
        _, group = _rounds(p, m)
    table = megatron_schedule_table(m, v, group)
    warm = warmup_ops(rank, v, group, p, m, 1 if zero_bubble else 2)
    total_mb_ops = v * m
    steady = total_mb_ops - warm
    cooldown = total_mb_ops - steady

    def code(stage: int, kind: str, mb: int) -> int:
        return (KIND_CODES[kind] * p * v + stage) * m + mb

    make: Callable[[int, str, int], Any] = code if codes else Action

    def fwd(step: int) -> Any:
        mb, chunk = table[step]
        return make(chunk * p + rank, "F", mb)

    def back(index: int, kind: str) -> Any:
        mb, chunk = table[index]
        return make((v - 1 - chunk) * p + rank, kind, mb)

    back_kind = "I" if zero_bubble else "B"
    n_1f1b = rank  # ZB1P delays W by `rank` microbatches
    n_back = 0
    w_count = 0
    ops: list[Any] = []

    for step in range(warm + steady + cooldown):
        if step < warm + steady:
            ops.append(fwd(step))
        if step < warm:
            continue
        ops.append(back(n_back, back_kind))
        n_back += 1
        if zero_bubble and step - warm >= n_1f1b:
            ops.append(back(w_count, "W"))
            w_count += 1
    while zero_bubble and w_count < n_back:
        ops.append(back(w_count, "W"))
        w_count += 1
    return ops


def interleaved_1f1b(p: int, m: int, v: int = 2, microbatch_group_size: int | None = None) -> Schedule:
    """Interleaved 1F1B with ``v`` chunks per rank, looped placement (stage s on rank s mod p).

    Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
    Megatron-LM" (SC 2021): bubble (p-1)/(m*v + p - 1) with equal stages and no latency, for
    every accepted m >= p (Megatron asks for a multiple of p; PyTorch's flexible rule also takes
    m with rounds = max(1, m // p) dividing m, and refuses the others); m < p leaves a larger bubble.

    ``microbatch_group_size`` is Megatron-Core's ``microbatch_group_size_per_vp_stage`` (the
    depth-first ↔ breadth-first knob): ``None`` is PyTorch's order (groups of ``m // rounds``,
    which is ``p`` whenever ``p`` divides ``m``, Megatron's default); a larger size goes
    breadth-first, with more warm-up forwards (more memory) and the same bubble at equal
    costs. Its rules: :func:`microbatch_group_rule`.
    """
    if v < 2:
        raise ValueError(f"v must be >= 2 for the interleaved schedule, got v={v} (v=1 is plain 1F1B)")
    if microbatch_group_size is not None:
        from bubblekit._validate import check_int

        group = check_int("microbatch_group_size", microbatch_group_size)
        problem = microbatch_group_rule(p, m, group)
        if problem is not None:
            raise ValueError(problem)
    codes = [interleaved_rank_ops(r, p, m, v, group=microbatch_group_size, codes=True) for r in range(p)]
    source = "Narayanan et al., Megatron-LM interleaved 1F1B (2021); order as PyTorch ScheduleInterleaved1F1B"
    if microbatch_group_size is not None:
        source = (f"Megatron-Core interleaved 1F1B, microbatch_group_size_per_vp_stage={microbatch_group_size} "
                  "(get_schedule_table)")
    return from_codes("interleaved", p, m, looped_placement(p, v), codes, source=source)  # type: ignore[arg-type]


def looped_bfs(p: int, m: int, v: int = 2) -> Schedule:
    """Breadth-first looped schedule (Lamy-Poirier, "Breadth-First Pipeline Parallelism", 2022).

    Each rank runs all microbatches through its first chunk, then its second, ...; then
    the backwards chunk by chunk in reverse (PyTorch's ``ScheduleLoopedBFS``). Same
    placement as interleaved 1F1B, but every rank holds all ``m`` microbatches of every
    chunk at its peak, like GPipe.
    """
    codes = []
    for r in range(p):
        stages = range(r, p * v, p)
        order = [c for s in stages for c in compute_codes(p * v, m, s, "F")]
        order += [c for s in reversed(stages) for c in reversed(compute_codes(p * v, m, s, "B"))]
        codes.append(order)
    return from_codes(
        "looped-bfs", p, m, looped_placement(p, v), codes,
        source="Lamy-Poirier, Breadth-First Pipeline Parallelism (2022); order as PyTorch ScheduleLoopedBFS",
    )


Generator = Callable[..., Schedule]
