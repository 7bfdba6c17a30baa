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
from bubblekit.course.checks._text import msg
from bubblekit.course.checks._units import FORWARDS, GPU_HOURS, MICROBATCHES


def _bloom() -> published.CaseEstimate:
    return published.case_estimate("BLOOM-176B")


def _bloom_idle_hours(measure: str) -> float:
    """BLOOM's GPU-hours times its ``bubble_ratio`` or (the mistake) its ``bubble_overhead``."""
    est = _bloom()
    hours = est.case.gpu_hours
    assert hours is not None
    return float(getattr(est, measure)) * hours


_OVERHEAD_HOURS = msg("that uses Megatron's overhead (idle over busy time); the idle GPU-hours are the fraction "
                      "of all GPU-hours, bubble_ratio",
                      "这用的是 Megatron 口径的气泡开销（空闲时间 / 忙碌时间）；空闲 GPU 小时对应的是全部 GPU 小时中"
                      "空闲的比例，即 bubble_ratio")


@exercise("08.1", unit=MICROBATCHES, hint=(msg("Microbatches per pipeline = global batch / (data-parallel replicas x micro-batch size).",
                            "每条流水线的微批数 = 全局 batch / (数据并行副本数 x 微批大小)。"),
                        msg("Each data-parallel replica gets an equal share of the global batch and runs it one "
                            "microbatch at a time; read the three numbers from the case's fields.",
                            "每个数据并行副本分到全局 batch 中相同的一份，再按微批逐个处理；三个数都从案例的字段里读。")),
          mistakes=(Mistake(lambda _e: published.CASES["BLOOM-176B"].global_batch // published.CASES["BLOOM-176B"].dp,
                            msg("that counts sequences per replica; a microbatch holds micro_batch sequences",
                                "这数的是每个副本的序列数；一个微批包含 micro_batch 条序列")),))
def _e081() -> int:
    return published.case_microbatches(published.CASES["BLOOM-176B"])


@exercise("08.2", hint=(msg("BLOOM ran a plain (non-interleaved) schedule: use (p-1)/(m+p-1) or simulate 1f1b.",
                            "BLOOM 用的是普通（非交错式）调度：用 (p-1)/(m+p-1)，或者模拟 1f1b。"),
                        msg("p = bloom.pp stages and the m of 08.1; give a fraction of the step (0.05, or '5%' as text).",
                            "p = bloom.pp 个流水级，m 取 08.1 的结果；给出占整步的比例（0.05，或字符串 '5"
                            "%'）。")),
          fraction_of=THE_STEP,
          mistakes=(Mistake(lambda _e: _bloom().bubble_overhead,
                            msg("that is Megatron's overhead (bubble over busy time); this asks for the fraction of the "
                                "whole step",
                                "这是 Megatron 口径的气泡开销（气泡时间 / 忙碌时间）；这里问的是占整步的比例")),
                    utilisation()))
def _e082() -> float:
    return _bloom().bubble_ratio


@exercise("08.3", unit=GPU_HOURS, hint=(msg("Idle GPU-hours = bubble_ratio x all GPU-hours of the run (1,082,990 for BLOOM).",
                            "空闲 GPU 小时 = bubble_ratio x 整个训练的全部 GPU 小时（BLOOM 是 1,082,990）。"),
                        msg("Multiply the fraction of 08.2 (not a percentage) by bloom.gpu_hours.",
                            "用 08.2 的比例（不是百分数）乘以 bloom.gpu_hours。")),
          rel_tol=1e-6,
          mistakes=(Mistake(lambda _e: _bloom_idle_hours("bubble_overhead"), _OVERHEAD_HOURS),))
def _e083() -> float:
    est = _bloom()
    assert est.idle_gpu_hours is not None
    return est.idle_gpu_hours


@exercise("08.4", hint=(msg("Keep M = 16 microbatches and change only V: (PP-1)/(V*M+PP-1) as a fraction of the step.",
                            "保持 M = 16 个微批，只改 V：(PP-1)/(V*M+PP-1)，即占整步的比例。"),
                        msg("Only V changes: lesson 04's interleaved bubble with PP = 16 ranks, M = 16 microbatches and "
                            "4 chunks per rank (or simulate that schedule).",
                            "只有 V 变了：用第 04 课交错式调度的气泡，取 PP = 16 个 rank、M = 16 个微批、每个 rank "
                            "4 个 chunk（或者模拟这个调度）。")),
          fraction_of=THE_STEP,
          mistakes=(Mistake(lambda _e: published.case_estimate("Llama 3 405B").bubble_ratio,
                            msg("that is the published configuration (V = 8); the question halves the chunks",
                                "这是公开的配置（V = 8）；题目把 chunk 数减半了")),
                    Mistake(lambda _e: published.case_estimate("Llama 3 405B", v=4).bubble_overhead,
                            msg("that is Megatron's overhead (bubble over busy time); give the fraction of the step",
                                "这是 Megatron 口径的气泡开销（气泡时间 / 忙碌时间）；要给出占整步的比例"))))
def _e084() -> float:
    return published.case_estimate("Llama 3 405B", v=4).bubble_ratio


@exercise("08.5", unit=FORWARDS, hint=(msg("DualPipe's bubble per device is (PP/2-1)(F&B+B-3W); perfect overlap makes F&B = max(F, B).",
                            "DualPipe 每张卡的气泡是 (PP/2-1)(F&B+B-3W)；完全重叠时 F&B = max(F, B)。"),
                        msg("With PP = 16: PP/2 - 1 chunks of idle, each F&B + B - 3W long, where F&B is the larger of "
                            "F and B.",
                            "PP = 16 时：有 PP/2 - 1 段空闲，每段长 F&B + B - 3W，其中 F&B 取 F 和 B 中较大的"
                            "那个。")),
          mistakes=(Mistake(lambda _e: published.dualpipe_bubble_time(16, 1, 2, 1),
                            msg("that takes F&B = F + B (no overlap at all); the question assumes a perfect overlap",
                                "这是取 F&B = F + B（完全没有重叠）的结果；题目假设完全重叠")),))
def _e085() -> float:
    return published.dualpipe_bubble_time(16, 1, 2, 1, fb=2)


@exercise("08.6", unit=GPU_HOURS, hint=(msg("Halve the micro-batch: m doubles; then idle GPU-hours saved = (old ratio - new ratio) x GPU-hours.",
                            "微批大小减半，m 就翻倍；省下的空闲 GPU 小时 = (原比例 - 新比例) x GPU 小时。"),
                        msg("With a micro-batch of 1, m = 2048 / (8 x 1); work out BLOOM's bubble_ratio at both m and "
                            "multiply the difference by the run's GPU-hours.",
                            "微批大小为 1 时 m = 2048 / (8 x 1)；分别算出两种 m 下 BLOOM 的气泡比例，再用两者之差乘以"
                            "整个训练的 GPU 小时。")),
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


@exercise("08.7", hint=(msg("Three steps, as in the lesson's worksheets: DP = GPUs / (TP x PP), then m = GBS / (DP x b), "
                            "then the bubble of interleaved 1F1B with p = PP ranks and v = 4.",
                            "和课文的演算表一样分三步：DP = GPU 数 / (TP x PP)，然后 m = GBS / (DP x b)，最后算"
                            " p = PP 个 rank、v = 4 的交错式 1F1B 的气泡。"),
                        msg("TP takes GPUs too: each pipeline stage uses TP GPUs. With DP and m, the interleaved bubble "
                            "of lesson 04 (or a simulation of interleaved 1F1B, backward = 2 x forward) finishes it.",
                            "TP 也要占 GPU：每个流水级用 TP 张 GPU。有了 DP 和 m，再用第 04 课交错式调度的气泡公式"
                            "（或者模拟反向 = 2 x 前向的交错式 1F1B）就能算出来。")),
          fraction_of=THE_STEP,
          mistakes=(Mistake(lambda _e: _own_configuration(count_tp=False),
                            msg("that divides the GPUs by PP only: every stage also spans TP GPUs, so there are fewer "
                                "pipelines and more microbatches each",
                                "这只用 PP 去除 GPU 数：每个流水级还横跨 TP 张 GPU，所以流水线更少，每条流水"
                                "线的微批更多")),
                    Mistake(lambda _e: _own_configuration(v=1),
                            msg("that is plain 1F1B (v = 1); the run interleaves v = 4 chunks per rank",
                                "这是普通 1F1B（v = 1）；这次训练每个 rank 交错 v = 4 个 chunk"))))
def _e087() -> float:
    return _own_configuration()
