"""Exercises of lesson 08, *Case studies* (``solutions/08_case_studies.ipynb``).

Every expected value comes from :mod:`bubblekit.course.published` (the published configuration
plus the assumptions it states) and the simulator; 08.7 is a configuration stated in its text.
"""

from __future__ import annotations

import bubblekit as bk
from bubblekit.course import published
from bubblekit.course.checks._grading import THE_STEP
from bubblekit.course.checks._mistakes import utilisation
from bubblekit.course.checks._registry import Mistake, exercise


def _bloom() -> published.CaseEstimate:
    return published.case_estimate("BLOOM-176B")


def _bloom_idle_hours(measure: str) -> float:
    """BLOOM's GPU-hours times its ``bubble_ratio`` or (the mistake) its ``bubble_overhead``."""
    est = _bloom()
    hours = est.case.gpu_hours
    assert hours is not None
    return float(getattr(est, measure)) * hours


_OVERHEAD_HOURS = ("that uses Megatron's overhead (idle over busy time); the idle GPU-hours are the fraction "
                   "of all GPU-hours, bubble_ratio")


@exercise("08.1", hint=("Microbatches per pipeline = global batch / (data-parallel replicas x micro-batch size).",
                        "bloom.global_batch // (bloom.dp * bloom.micro_batch): every replica runs its share of the "
                        "batch, one microbatch of bloom.micro_batch sequences at a time."),
          mistakes=(Mistake(lambda _e: published.CASES["BLOOM-176B"].global_batch // published.CASES["BLOOM-176B"].dp,
                            "that counts sequences per replica; a microbatch holds micro_batch sequences"),))
def _e081() -> int:
    return published.case_microbatches(published.CASES["BLOOM-176B"])


@exercise("08.2", hint=("BLOOM ran a plain (non-interleaved) schedule: use (p-1)/(m+p-1) or simulate 1f1b.",
                        "p = bloom.pp stages and the m of 08.1; give a fraction of the step (0.05, or '5%' as text)."),
          fraction_of=THE_STEP,
          mistakes=(Mistake(lambda _e: _bloom().bubble_overhead,
                            "that is Megatron's overhead (bubble over busy time); this asks for the fraction of the "
                            "whole step"),
                    utilisation()))
def _e082() -> float:
    return _bloom().bubble_ratio


@exercise("08.3", hint=("Idle GPU-hours = bubble_ratio x all GPU-hours of the run (1,082,990 for BLOOM).",
                        "Multiply the fraction of 08.2 (not a percentage) by bloom.gpu_hours."),
          rel_tol=1e-6,
          mistakes=(Mistake(lambda _e: _bloom_idle_hours("bubble_overhead"), _OVERHEAD_HOURS),))
def _e083() -> float:
    est = _bloom()
    assert est.idle_gpu_hours is not None
    return est.idle_gpu_hours


@exercise("08.4", hint=("Keep M = 16 microbatches and change only V: (PP-1)/(V*M+PP-1) as a fraction of the step.",
                        "published.case_estimate('Llama 3 405B', v=4).bubble_ratio, or the interleaved formula "
                        "with PP = 16, M = 16, V = 4."),
          fraction_of=THE_STEP,
          mistakes=(Mistake(lambda _e: published.case_estimate("Llama 3 405B").bubble_ratio,
                            "that is the published configuration (V = 8); the question halves the chunks"),
                    Mistake(lambda _e: published.case_estimate("Llama 3 405B", v=4).bubble_overhead,
                            "that is Megatron's overhead (bubble over busy time); give the fraction of the step")))
def _e084() -> float:
    return published.case_estimate("Llama 3 405B", v=4).bubble_ratio


@exercise("08.5", hint=("DualPipe's bubble per device is (PP/2-1)(F&B+B-3W); perfect overlap makes F&B = max(F, B).",
                        "With PP = 16: PP/2 - 1 chunks of idle, each F&B + B - 3W long, where F&B is the larger of "
                        "F and B."),
          mistakes=(Mistake(lambda _e: published.dualpipe_bubble_time(16, 1, 2, 1),
                            "that takes F&B = F + B (no overlap at all); the question assumes a perfect overlap"),))
def _e085() -> float:
    return published.dualpipe_bubble_time(16, 1, 2, 1, fb=2)


@exercise("08.6", hint=("Halve the micro-batch: m doubles; then idle GPU-hours saved = (old ratio - new ratio) x GPU-hours.",
                        "published.case_estimate('BLOOM-176B', micro_batch=1) gives the new estimate; subtract its "
                        "idle_gpu_hours from the old one's."),
          rel_tol=1e-6)
def _e086() -> float:
    old = published.case_estimate("BLOOM-176B")
    new = published.case_estimate("BLOOM-176B", micro_batch=1)
    assert old.idle_gpu_hours is not None and new.idle_gpu_hours is not None
    return old.idle_gpu_hours - new.idle_gpu_hours


def _own_configuration(count_tp: bool = True, v: int = 4) -> float:
    """08.7: 1024 GPUs, TP 8, PP 8, global batch 1024, micro-batch 1, interleaved ``v``: the bubble_ratio.

    ``count_tp=False`` is the mistake of dividing the GPUs by PP only.
    """
    gpus, tp, pp, batch, micro_batch = 1024, 8, 8, 1024, 1
    dp = gpus // ((tp if count_tp else 1) * pp)
    m = batch // (dp * micro_batch)
    name = "interleaved" if v > 1 else "1f1b"
    return bk.simulate(bk.schedule(name, pp, m, v if v > 1 else None), bk.Costs(f=1, b=2)).bubble_ratio


@exercise("08.7", hint=("Three steps, as in the lesson's worksheets: DP = GPUs / (TP x PP), then m = B / (DP x b), "
                        "then the bubble of interleaved 1F1B with p = PP ranks and v = 4.",
                        "TP takes GPUs too: each pipeline stage uses TP GPUs. With DP and m, simulate "
                        "bk.schedule('interleaved', 8, m, 4) under bk.Costs(f=1, b=2), or use bk.bubble_ratio(p, m, v)."),
          fraction_of=THE_STEP,
          mistakes=(Mistake(lambda _e: _own_configuration(count_tp=False),
                            "that divides the GPUs by PP only: every stage also spans TP GPUs, so there are fewer "
                            "pipelines and more microbatches each"),
                    Mistake(lambda _e: _own_configuration(v=1),
                            "that is plain 1F1B (v = 1); the run interleaves v = 4 chunks per rank")))
def _e087() -> float:
    return _own_configuration()
