"""Exercises of lesson 09, *Misconceptions* (``solutions/09_misconceptions.ipynb``)."""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any

import bubblekit as bk
from bubblekit.analysis import planner
from bubblekit.costs import load_h200_layer_costs
from bubblekit.course import published
from bubblekit.course.checks._grading import THE_STEP, Graded, grade, read_number
from bubblekit.course.checks._mistakes import swapped_pm, upside_down, utilisation
from bubblekit.course.checks._registry import FORMAT, Mistake, exercise
from bubblekit.course.checks._text import msg
from bubblekit.course.checks._units import FACTOR, MESSAGES
from bubblekit.i18n import register, tr


@exercise("09.1", hint=(msg("The fraction of the step is (p-1)/(m+p-1), not (p-1)/m; give an exact Fraction.",
                            "占整步的比例是 (p-1)/(m+p-1)，不是 (p-1)/m；给出精确的 Fraction。"),
                        msg("Count the fill and drain against the whole step in units of one microbatch's slot, and "
                            "build a Fraction from the two counts (a float is not exact).",
                            "以一个微批的时间槽为单位，数出填充和排空占了多少、整步有多少，再用这两个数构造 "
                            "Fraction（float 不是精确值）。")),
          exact=True,
          fraction_of=THE_STEP,
          mistakes=(Mistake(lambda _e: Fraction(8 - 1, 4),
                            msg("that is (p - 1)/m, the misconception itself (Megatron's overhead, idle over busy time)",
                                "这就是 (p - 1)/m，正是这个误区本身（Megatron 口径的气泡开销，空闲时间 / 忙碌"
                                "时间）")),
                    swapped_pm(bk.bubble_ratio_exact, 8, 4), utilisation()))
def _e091() -> Fraction:
    return bk.bubble_ratio_exact(8, 4)


def fixed_gpu_step_times(gpus: int = 16, batch: int = 32, f_model: int = 16, b_model: int = 32) -> dict[int, Fraction]:
    """Step time (slots) for each pipeline depth p dividing ``gpus`` at a fixed global batch.

    ``gpus / p`` data-parallel replicas share ``batch`` sequences (micro-batch 1), so each
    pipeline runs ``m = batch * p / gpus`` microbatches; each stage does ``1/p`` of the
    model's forward ``f_model`` and backward ``b_model``. 1F1B, no communication cost.
    """
    out: dict[int, Fraction] = {}
    for p in (1, 2, 4, 8, 16):
        if gpus % p:
            continue
        m = batch * p // gpus
        costs = bk.Costs(f=Fraction(f_model, p), b=Fraction(b_model, p))
        out[p] = Fraction(bk.simulate(bk.schedule("1f1b", p, m), costs).makespan)
    return out



def fixed_gpu_table(gpus: int = 16, batch: int = 32, f_model: int = 16, b_model: int = 32) -> bk.Table:
    """:func:`fixed_gpu_step_times` as a table: ``p``, ``pipelines`` (``gpus / p``), ``m``, the step time, each
    rank's compute per step (``m·(F + B)/p``) and its idle time (the rest of the step).

    Used in lesson 09 (misconception 2).
    """
    times = fixed_gpu_step_times(gpus, batch, f_model, b_model)
    rows = []
    for p, t in times.items():
        m = batch * p // gpus
        work = m * Fraction(f_model + b_model, p)  # each rank's compute per step
        rows.append({"p": p, "pipelines": gpus // p, "m": m, "step": t, "work": work, "idle": t - work})
    return bk.Table(
        rows, formats={"step": "decimal", "work": "decimal", "idle": "decimal"},
        headers={"pipelines": tr("checks.l09.pipelines_header"), "step": tr("checks.l09.step_header"),
                 "work": tr("checks.l09.work_header"), "idle": tr("checks.l09.idle_header")},
        title=tr("checks.l09.table_title", gpus=gpus, batch=batch),
        note=tr("checks.l09.table_note", f=f_model, b=b_model),
    )


register({
    "checks.l09.pipelines_header": {"en": "pipelines", "zh": "流水线数"},
    "checks.l09.step_header": {"en": "step (slots)", "zh": "单步耗时（时间槽）"},
    "checks.l09.work_header": {"en": "compute per rank", "zh": "每个 rank 的计算"},
    "checks.l09.idle_header": {"en": "idle per rank", "zh": "每个 rank 的空闲"},
    "checks.l09.table_title": {"en": "{gpus} GPUs, {batch} sequences per step, micro-batch 1, 1F1B",
                               "zh": "{gpus} 张 GPU，每步 {batch} 条序列，微批大小 1，1F1B"},
    "checks.l09.table_note": {"en": "the whole model costs F = {f}, B = {b} slots per sequence; each stage does 1/p of it",
                              "zh": "整个模型每条序列耗时 F = {f}、B = {b} 个时间槽；每个流水级承担其中的 1/p"},
})


def _id_ranges(items: list) -> str:  # type: ignore[type-arg]
    """The questions' ids as runs of neighbours in the bank: ``'10.28–10.34, 10.43–10.44'``."""
    from bubblekit.course.checks import lesson10

    runs: list[list[int]] = []
    for k in (lesson10.BANK.index(item) for item in items):
        if runs and runs[-1][1] == k - 1:
            runs[-1][1] = k
        else:
            runs.append([k, k])
    return ", ".join(lesson10.BANK[a].id + (f"–{lesson10.BANK[b].id}" if b > a else "") for a, b in runs)


def interview_bank_table() -> bk.Table:
    """The interview bank (``solutions/10_interview_bank.ipynb``) by category, in the bank's order.

    Columns: ``category`` (in the current language), ``questions``, ``ids`` (runs of
    neighbouring ids) and ``self-checking`` (how many a ``check`` grades). Used in lesson 09.
    """
    from bubblekit.course.checks import lesson10
    from bubblekit.i18n import get_language

    zh = get_language() == "zh"
    rows = [{"category": lesson10.CATEGORIES[key][1 if zh else 0], "questions": len(items),
             "ids": _id_ranges(items), "self-checking": sum(i.checked for i in items)}
            for key, items in lesson10.by_category().items()]
    return bk.Table(rows, headers={"category": tr("checks.l09.bank_category"), "questions": tr("checks.l09.bank_questions"),
                                   "ids": tr("checks.l09.bank_ids"), "self-checking": tr("checks.l09.bank_checked")},
                    title=tr("checks.l09.bank_title"))


register({
    "checks.l09.bank_category": {"en": "category", "zh": "类别"},
    "checks.l09.bank_questions": {"en": "questions", "zh": "题数"},
    "checks.l09.bank_ids": {"en": "ids", "zh": "题号"},
    "checks.l09.bank_checked": {"en": "self-checking", "zh": "可自动检查"},
    "checks.l09.bank_title": {"en": "The interview bank, in its order", "zh": "面试题库（按题库顺序）"},
})


#: The pipeline depths 09.2 compares: the divisors of its 16 GPUs.
DEPTHS = (1, 2, 4, 8, 16)

register({
    "checks.l09.depth_not_int": {"en": "{answer!r} is not a pipeline depth: give p as a whole number",
                                 "zh": "{answer!r} 不是流水线深度：请把 p 写成一个整数"},
    "checks.l09.depth_divides": {"en": "p must divide the 16 GPUs: 1, 2, 4, 8 or 16",
                                 "zh": "p 必须能整除 16 张 GPU：只能是 1、2、4、8 或 16"},
    "checks.l09.depth_other": {"en": "that depth is not the shortest step: simulate all five depths and compare their "
                                     "makespans",
                               "zh": "这个深度的单步耗时不是最短的：把五种深度都模拟一遍，比较它们的单步耗时"},
    "checks.l09.depth_deepest": {"en": "the deepest pipeline: it runs the most microbatches, but its fill and drain add "
                                       "p - 1 stage times to every step",
                                 "zh": "这是最深的流水线：它跑的微批最多，但填充和排空会给每一步多加 p - 1 个流水级的耗时"},
})


def _compare_depth(answer: Any, expected: Any) -> Graded:
    """09.2's answer is one of five depths: right or not, never "too high / too low" (with five choices a
    direction would give the answer away, as for 06.3's rank). Text is read as every numeric check reads it
    (``"p = 1"``, ``"1。"``); text that is no number, or a number with words (``"1 GPU"``), is said and not
    counted as a try (kind ``FORMAT``). Returns ``Graded(ok, message, kind)``."""
    written = answer
    if isinstance(answer, str):
        reading = read_number(answer)
        if isinstance(reading, str):  # "two": no number at all
            return Graded(False, tr("checks.l09.depth_not_int", answer=written), FORMAT)
        verdict = grade(answer, expected)
        if verdict.form:  # "1 GPU": a number with words
            return Graded(False, verdict.detail, FORMAT)
        answer = reading.value
    if isinstance(answer, bool):
        return Graded(False, tr("checks.l09.depth_not_int", answer=written), "")
    if isinstance(answer, numbers.Real) and not isinstance(answer, numbers.Integral):
        if not math.isfinite(float(answer)) or not float(answer).is_integer():
            return Graded(False, tr("checks.l09.depth_not_int", answer=written), "")
        answer = int(float(answer))
    elif not isinstance(answer, numbers.Integral):
        try:
            answer = int(str(answer).strip())
        except ValueError:
            return Graded(False, tr("checks.l09.depth_not_int", answer=written), "")
    answer = int(answer)
    if answer == expected:
        return Graded(True, "", "")
    if answer not in DEPTHS:
        return Graded(False, tr("checks.l09.depth_divides"), "")
    if answer == max(DEPTHS):
        return Graded(False, tr("checks.l09.depth_deepest"), "")
    return Graded(False, tr("checks.l09.depth_other"), "")


@exercise("09.2", hint=(msg("Simulate 1F1B for each p with m = 32 p / 16 microbatches and per-stage costs 16/p, 32/p.",
                            "对每个 p 模拟 1F1B，微批数 m = 32 p / 16，每个流水级耗时 16/p、32/p。"),
                        msg("Compare the simulated makespans of p = 1, 2, 4, 8, 16 and give the p (an int) with the "
                            "shortest step.",
                            "比较 p = 1, 2, 4, 8, 16 模拟出的单步耗时，给出单步耗时最短的 p（int）。")),
          compare=lambda answer, expected: _compare_depth(answer, expected))
def _e092() -> int:
    times = fixed_gpu_step_times()
    return min(times, key=lambda p: (times[p], p))


@exercise("09.3", hint=(msg("Count every rank's idle time from the start to the end of the whole step, the corners "
                            "before its first and after its last action included, and divide by p x makespan.",
                            "把每个 rank 从单步开始到结束的空闲时间都算上，包括它第一个动作之前和最后一个动作之后"
                            "的两角，再除以 p x 单步耗时。"),
                        msg("Simulate zb-h2 with F = I = W = 1 and add result.idle over the ranks; divide by "
                            "p x result.makespan.",
                            "用 F = I = W = 1 模拟 zb-h2，把 result.idle 各 rank 的值加起来，再除以 "
                            "p x result.makespan。")),
          fraction_of=THE_STEP,
          mistakes=(Mistake(lambda _e: published.stage_span_bubble_rate(_zb_h2()),
                            msg("that is the per-rank-span rate (zero inside each rank's span); this asks for idle over "
                                "ranks x makespan, the corners included",
                                "这是按每个 rank 自身跨度算的比率（在各 rank 的跨度内为零）；这里问的是空闲时"
                                "间 / (rank 数 x 单步耗时)，两端的空闲也要算")),))
def _e093() -> float:
    return _zb_h2().bubble_ratio


def _zb_h2() -> bk.SimResult:
    return bk.simulate(bk.schedule("zb-h2", 4, 8), bk.Costs(f=1, i=1, w=1))


@exercise("09.4", unit=MESSAGES, hint=(msg("Every stage boundary between two ranks carries one activation and one gradient per microbatch.",
                            "两个 rank 之间的每个流水级边界，每个微批都要传一次激活、一次梯度。"),
                        msg("With v = 2 there are p v = 8 stages: count the boundaries between consecutive stages that "
                            "sit on different ranks, then the messages over them.",
                            "v = 2 时共有 p v = 8 个流水级：数出相邻流水级位于不同 rank 的边界，再数经过它们"
                            "的消息。")),
          mistakes=(Mistake(lambda e: e // 2, msg("that counts one direction only: gradients travel back over every "
                                                  "boundary too",
                                                  "这只数了一个方向：梯度也要经过每个边界传回来")),
                    Mistake(lambda _e: planner.hops_per_step(bk.schedule("1f1b", 4, 8)),
                            msg("that is plain 1F1B's count (p - 1 boundaries); interleaving adds boundaries",
                                "这是普通 1F1B 的数目（p - 1 个边界）；交错会增加边界"))))
def _e094() -> int:
    return planner.hops_per_step(bk.schedule("interleaved", 4, 8, 2))


def _measured_ratio(hidden: int, seq: int) -> float:
    for cfg in load_h200_layer_costs()["configs"]:
        if cfg["hidden"] == hidden and cfg["seq"] == seq:
            layer = cfg["layer"]
            return float(layer["full_backward_ms"] / layer["F_ms"])
    raise KeyError((hidden, seq))


@exercise("09.5", unit=FACTOR, hint=(msg("Read the 'layer' entry of the h=4096, seq=8192 configuration: full_backward_ms / F_ms.",
                            "读 h=4096, seq=8192 配置里的 'layer' 项：full_backward_ms / F_ms。"),
                        msg("Pick the configuration with c['hidden'] == 4096 and c['seq'] == 8192, then divide its "
                            "layer's full_backward_ms by its F_ms.",
                            "选出 c['hidden'] == 4096 且 c['seq'] == 8192 的配置，用它的 layer 的 full_backwa"
                            "rd_ms 除以 F_ms。")),
          rel_tol=1e-9,
          mistakes=(upside_down(),
                    Mistake(lambda _e: 2,
                            msg("that is the textbook's 2x, the misconception this exercise measures: read the "
                                "measured ratio",
                                "这正是课本里的 2 倍，也就是本题要实测的那个误区：读出实测的比值"))))
def _e095() -> float:
    return _measured_ratio(4096, 8192)


@exercise("09.6", unit=MESSAGES, hint=(msg("DualPipeV puts 2p stages on p ranks in a V (rank r holds stages r and 2p-1-r). Count the "
                            "boundaries between consecutive stages that sit on different ranks.",
                            "DualPipeV 把 2p 个流水级按 V 形放在 p 个 rank 上（rank r 持有流水级 r 和 2p-1-r"
                            "）。数出相邻流水级位于不同 rank 的边界。"),
                        msg("Write the V's stages in order with the rank that holds each, and mark which consecutive "
                            "stages share a rank; every crossing boundary carries one activation forward and one "
                            "gradient back per microbatch.",
                            "按顺序写出 V 形的各个流水级和持有它的 rank，标出哪些相邻流水级在同一个 rank 上；每个跨 "
                            "rank 的边界，每个微批都要向前传一次激活、向后传一次梯度。")),
          mistakes=(Mistake(lambda _e: planner.hops_per_step(bk.schedule("1f1b", 4, 16)),
                            msg("that is 1F1B's count on the same 4 devices (p - 1 boundaries), or one direction only: "
                                "the V has 2p stages on p ranks",
                                "这是同样 4 张卡上 1F1B 的数目（p - 1 个边界），或者只数了一个方向：V 形在 p "
                                "个 rank 上有 2p 个流水级")),
                    Mistake(lambda _e: planner.hops_per_step(bk.schedule("1f1b", 8, 16)),
                            msg("that is 1F1B's count on the same 8 stages, one per rank: in the V, two consecutive "
                                "stages share a rank",
                                "这是同样 8 个流水级、每个 rank 一个时 1F1B 的数目：在 V 形中，有两个相邻流水"
                                "级在同一个 rank 上"))))
def _e096() -> int:
    return planner.hops_per_step(bk.schedule("dualpipev", 4, 16))
