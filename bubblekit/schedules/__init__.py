"""Schedule generators and the registry behind :func:`bubblekit.schedule`.

The registrations below are the one table of schedule facts: generator, display name,
aliases, the ``m`` each accepts, closed forms (bubble, peak memory), source and PyTorch
class (see :mod:`bubblekit.schedules.registry`). Add a schedule by writing a generator
``fn(p, m[, v]) -> Schedule`` and registering it (see CONTRIBUTING.md).
"""

from __future__ import annotations

from fractions import Fraction

from bubblekit.schedules.base import MAX_ACTIONS, Schedule, ScheduleError, looped_placement, v_placement
from bubblekit.schedules.classic import gpipe, interleaved_1f1b, interleaved_m_rule, looped_bfs, one_f_one_b
from bubblekit.schedules.controllable_memory import v_half, v_half_peak, v_min, v_min_peak, v_zb
from bubblekit.schedules.dualpipe import dualpipe, dualpipe_m_rule, dualpipev, dualpipev_m_rule
from bubblekit.schedules.registry import (
    REGISTRY,
    ScheduleSpec,
    display_name,
    legal_ms,
    names,
    register,
    schedule,
    spec,
)
from bubblekit.schedules.zero_bubble import zb_h1, zb_h2, zbv

__all__ = [
    "Schedule", "ScheduleError", "ScheduleSpec", "schedule", "spec", "register", "REGISTRY",
    "names", "display_name", "legal_ms", "looped_placement", "v_placement", "MAX_ACTIONS", "v_zb",
]


def _fill_drain(p: int, m: int, v: int) -> Fraction:
    """``(p-1)/(m+p-1)``: GPipe and 1F1B with equal stages and no latency, any F/B ratio."""
    return Fraction(p - 1, m + p - 1)


def _interleaved_bubble(p: int, m: int, v: int) -> Fraction | None:
    """``(p-1)/(m v+p-1)`` (Megatron-LM) for every accepted ``m >= p`` (a multiple of ``p`` or
    not, PyTorch's rule); with ``m < p`` the chunks cannot keep the pipe full and the bubble
    is larger: no closed form."""
    return Fraction(p - 1, m * v + p - 1) if m >= p else None


def _interleaved_peak(p: int, m: int, v: int) -> Fraction:
    """Rank 0's warm-up, PyTorch's rule: ``(v-1)`` rounds of ``m // rounds`` chunk forwards plus
    ``2(p-1)``, then one more, at most ``m v``; each chunk holds ``1/v``."""
    per_round = m // max(1, m // p)
    return Fraction(min((v - 1) * per_round + 2 * p - 1, m * v), v)


register(ScheduleSpec(
    "gpipe", gpipe, "one", False,
    "all forwards, then all backwards (the article's 'naive' schedule)",
    "Huang et al., GPipe, NeurIPS 2019", "ScheduleGPipe",
    display="GPipe", aliases=("naive", "afab"),
    bubble=_fill_drain, bubble_text="(p−1)/(m+p−1)",
    peak=lambda p, m, v: m, peak_text="m",
))
register(ScheduleSpec(
    "1f1b", one_f_one_b, "one", False,
    "one forward, one backward: same bubble as GPipe, at most p microbatches in memory",
    "Narayanan et al., PipeDream-Flush (ICML 2021)", "Schedule1F1B",
    display="1F1B", aliases=("pipedream-flush",),
    bubble=_fill_drain, bubble_text="(p−1)/(m+p−1)",
    peak=lambda p, m, v: min(p, m), peak_text="min(p, m)",
))
register(ScheduleSpec(
    "interleaved", interleaved_1f1b, "many", False,
    "1F1B over v chunks per rank (virtual stages): bubble (p-1)/(m*v+p-1)",
    "Narayanan et al., Megatron-LM (SC 2021)", "ScheduleInterleaved1F1B",
    display="interleaved 1F1B", aliases=("interleaved-1f1b",),
    m_rule="m < 2p, or m a multiple of m // p (PyTorch's rounds must divide m)", m_problem=interleaved_m_rule,
    bubble=_interleaved_bubble, bubble_text="(p−1)/(m·v+p−1)",
    peak=_interleaved_peak, peak_text="min((v−1)·m/rounds + 2p−1, m·v)/v, rounds = max(1, m // p)",
))
register(ScheduleSpec(
    "looped-bfs", looped_bfs, "many", False,
    "breadth-first over v chunks per rank: all microbatches through a chunk, then the next",
    "Lamy-Poirier, Breadth-First Pipeline Parallelism (MLSys 2023)", "ScheduleLoopedBFS",
    display="looped BFS", aliases=("bfs", "loopedbfs"),
    bubble=_interleaved_bubble, bubble_text="(p−1)/(m·v+p−1)",   # the same fill and drain as interleaved 1F1B (m >= p)
    peak=lambda p, m, v: m, peak_text="m",
))
register(ScheduleSpec(
    "zb-h1", zb_h1, "one", True,
    "1F1B with backward split into I and W, W delayed to fill bubbles: bubble (p-1)(F+I-W), 1F1B's memory",
    "Qi et al., Zero Bubble Pipeline Parallelism (ICLR 2024), ZB-H1", "ScheduleInterleavedZeroBubble",
    display="ZB-H1", aliases=("zbh1", "zb1p"),
    peak=lambda p, m, v: min(p, m), peak_text="min(p, m)",
))
register(ScheduleSpec(
    "zb-h2", zb_h2, "one", True,
    "more warm-up forwards, late W passes: no idle inside each rank's span at F=I=W, 2p-1 in memory",
    "Qi et al., Zero Bubble Pipeline Parallelism (ICLR 2024), ZB-H2", None,
    display="ZB-H2", aliases=("zbh2",),
    peak=lambda p, m, v: min(2 * p - 1, m), peak_text="min(2p−1, m)",
))
register(ScheduleSpec(
    "zbv", zbv, "two", True,
    "zero bubble over two chunks per rank in a V shape, 1F1B's memory",
    "Qi et al., Zero Bubble Pipeline Parallelism (ICLR 2024 / arXiv 2401.10241), ZB-V", "ScheduleZBVZeroBubble",
    display="ZB-V", aliases=("zb-v",),
    peak=lambda p, m, v: min(p, m), peak_text="min(p, m)",
))
register(ScheduleSpec(
    "v-half", v_half, "two", True,
    "V shape with about half of 1F1B's activation memory ((p+2)//2), bubble about half of 1F1B's at F=I=W",
    "Qi, Wan, Amar, Lin, Pipeline Parallelism with Controllable Memory (NeurIPS 2024), V-Half", None,
    display="V-Half", aliases=("vhalf",),
    peak=lambda p, m, v: v_half_peak(p, m), peak_text="min((p+2)//2, m)",
))
register(ScheduleSpec(
    "v-min", v_min, "two", True,
    "V shape with about a third of 1F1B's activation memory ((p+4)//3), bubble about 2/3 of 1F1B's at F=I=W",
    "Qi, Wan, Amar, Lin, Pipeline Parallelism with Controllable Memory (NeurIPS 2024), V-Min", None,
    display="V-Min", aliases=("vmin",),
    peak=lambda p, m, v: v_min_peak(p, m), peak_text="min((p+4)//3, m)",
))
register(ScheduleSpec(
    "dualpipev", dualpipev, "two", True,
    "DualPipe cut in half: 2p stages in a V on p ranks, overlapped F&B pairs, one copy of the model; m >= 2p",
    "DualPipeV, github.com/deepseek-ai/DualPipe (added 2025-03-04), from Sea AI Lab's 'cut-in-half' DualPipe",
    "ScheduleDualPipeV",
    display="DualPipeV", aliases=("dualpipe-v",),
    m_rule="m >= 2p", m_problem=dualpipev_m_rule,
    peak=lambda p, m, v: Fraction(2 * p + 1, 2), peak_text="p + 1/2 (2p+1 chunk activations: the README's PP+1)",
))
register(ScheduleSpec(
    "dualpipe", dualpipe, "two", True,
    "two pipelines in opposite directions on p ranks, overlapped F&B pairs: 2x parameters, "
    "bubble (PP/2-1)(F&B+B-3W) when I = F",
    "DeepSeek-AI, DeepSeek-V3 Technical Report (arXiv 2412.19437, 2024), DualPipe", None,
    display="DualPipe", aliases=("dual-pipe", "bidirectional-dualpipe"),
    m_rule="p even, m even and m >= 2p", m_problem=dualpipe_m_rule,
    peak=lambda p, m, v: p + 1, peak_text="p + 1 (the README's PP+1 stage activations)",
))
