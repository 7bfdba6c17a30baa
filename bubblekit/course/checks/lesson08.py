"""Exercises of lesson 08, *Case studies* (``solutions/08_case_studies.ipynb``).

Every expected value comes from :mod:`bubblekit.course.published` (the published configuration
plus the assumptions it states) and the simulator.
"""

from __future__ import annotations

from bubblekit.course import published
from bubblekit.course.checks._registry import exercise


@exercise("08.1", hint="Microbatches per pipeline = global batch / (data-parallel replicas x micro-batch size).")
def _e081() -> int:
    return published.case_microbatches(published.CASES["BLOOM-176B"])


@exercise("08.2", hint="BLOOM ran a plain (non-interleaved) schedule: use (p-1)/(m+p-1) or simulate 1f1b.")
def _e082() -> float:
    return published.case_estimate("BLOOM-176B").bubble_ratio


@exercise("08.3", hint="Idle GPU-hours = bubble_ratio x all GPU-hours of the run (1,082,990 for BLOOM).",
          rel_tol=1e-6)
def _e083() -> float:
    est = published.case_estimate("BLOOM-176B")
    assert est.idle_gpu_hours is not None
    return est.idle_gpu_hours


@exercise("08.4", hint="Keep M = 16 microbatches and change only V: (PP-1)/(V*M+PP-1) as a fraction of the step.")
def _e084() -> float:
    return published.case_estimate("Llama 3 405B", v=4).bubble_ratio


@exercise("08.5", hint="DualPipe's bubble per device is (PP/2-1)(F&B+B-3W); perfect overlap makes F&B = max(F, B).")
def _e085() -> float:
    return published.dualpipe_bubble_time(16, 1, 2, 1, fb=2)


@exercise("08.6", hint="Halve the micro-batch: m doubles; then idle GPU-hours saved = (old ratio - new ratio) x GPU-hours.",
          rel_tol=1e-6)
def _e086() -> float:
    old = published.case_estimate("BLOOM-176B")
    new = published.case_estimate("BLOOM-176B", micro_batch=1)
    assert old.idle_gpu_hours is not None and new.idle_gpu_hours is not None
    return old.idle_gpu_hours - new.idle_gpu_hours
