"""Exercises of lesson 06, *Profiling practice* (``solutions/06_profiling_practice.ipynb``).

The exercises read one small "profiled" step: a 3-rank 1F1B pipeline with 4 microbatches,
unequal stages, per-action jitter, overhead and latency, written as bubblekit's trace CSV
by :func:`write_example_csv`. It is generated deterministically (a fixed seed) from a
simulation; every expected value is computed from it with bubblekit when a learner checks.
"""

from __future__ import annotations

import math
import numbers
import random
import re
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import bubblekit as bk
from bubblekit.analysis import calibrate, traces
from bubblekit.course.checks._grading import THE_STEP, Graded, as_rank, grade, read_number
from bubblekit.course.checks._mistakes import overhead_min_m, utilisation
from bubblekit.course.checks._registry import FORMAT, Mistake, exercise
from bubblekit.course.checks._schedules import as_schedule, unreadable
from bubblekit.course.checks._text import msg
from bubblekit.course.checks._units import MICROBATCHES
from bubblekit.i18n import register, tr

#: Ranks and microbatches of the example step.
P, M = 3, 4
#: Mean forward time per stage (ms) of the example step; backward is 2.1 x forward.
STAGE_F_MS = (2.0, 2.6, 2.1)
SEED = 6


def _example_timeline() -> bk.Timeline:
    sim = bk.simulate(bk.schedule("1f1b", P, M), bk.Costs(f=list(STAGE_F_MS), b=[2.1 * f for f in STAGE_F_MS], unit="ms"))
    rng = random.Random(SEED)
    starts, ends, labels = [], [], []
    for r in range(P):
        s, e, lb = sim.arrays(r)
        starts.append(s)
        ends.append([a + (b - a) * rng.uniform(0.95, 1.25) for a, b in zip(s, e)])
        labels.append(list(lb))
    noisy = bk.Timeline(starts, ends, labels, unit="ms", may_overlap=True)
    return calibrate.replay(noisy, overhead=0.08, latency=0.35)


def write_example_csv(path: str | Path) -> Path:
    """Write the example profiled step as bubblekit's trace CSV (ms) at ``path``; return the path."""
    return traces.write_csv(_example_timeline(), path)


@lru_cache(maxsize=1)
def example_step() -> traces.MeasuredTimeline:
    """The example step as :func:`bubblekit.analysis.traces.read_csv` returns it (what the learner reads)."""
    with tempfile.TemporaryDirectory() as tmp:
        return traces.read_csv(write_example_csv(Path(tmp) / "example_step.csv"))


@exercise(
    "06.1",
    hint=(msg("Sum every rank's idle time inside the step window, then divide by (ranks x makespan); step.idle gives "
              "the per-rank idle times.",
              "把每个 rank 在这一步时间窗口内的空闲时间加起来，再除以 (rank 数 x 单步耗时)；step.idle 给出每"
              "个 rank 的空闲时间。"),
          msg("Idle time of a rank = step.makespan - its busy time (step.busy[r]); add them over the ranks and divide "
              "by step.p x step.makespan.",
              "一个 rank 的空闲时间 = step.makespan - 它的忙碌时间（step.busy[r]）；对所有 rank 求和，再除以 "
              "step.p x step.makespan。")),
    rel_tol=1e-6,
    fraction_of=THE_STEP,
    mistakes=(Mistake(lambda _e: sum(example_step().idle) / sum(example_step().busy),
                      msg("that divides the idle time by the busy time (Megatron's overhead); the article divides by "
                          "all device-time, ranks x makespan",
                          "这是用空闲时间除以忙碌时间（Megatron 口径的气泡开销）；原文除的是全部设备时间，即 "
                          "rank 数 x 单步耗时")),
              utilisation()),
)
def _bubble() -> float:
    """Measured bubble ratio of the example step."""
    return example_step().bubble_ratio


def _compare_below_80(answer: Any, expected: Any) -> Graded:
    """06.2 by the policy, with its second item read as a rank as 06.3 and 10.35 read one (``"rank 1"``)."""
    if isinstance(answer, (tuple, list)) and len(answer) == 2 and isinstance(answer[1], str) \
            and as_rank(answer[1]) is not None:
        answer = (answer[0], as_rank(answer[1]))
    verdict = grade(answer, expected)
    return Graded(verdict.status == "right", verdict.detail, FORMAT if verdict.form else "")


@exercise(
    "06.2",
    hint=(msg("step.utilization_per_rank lists each rank's busy share: collect the ranks below 0.8 in a set, and take "
              "the index of the largest share.",
              "step.utilization_per_rank 列出每个 rank 的忙碌占比：把低于 0.8 的 rank 放进一个集合，再取占比"
              "最大的那个下标。"),
          msg("Answer (set_of_ranks, rank): a set of ints, then one int, the rank with the largest busy share.",
              "答案写成 (set_of_ranks, rank)：先是一个由 int 组成的集合，再是一个 int，即忙碌占比最大的 rank"
              "。")),
    compare=lambda answer, expected: _compare_below_80(answer, expected),
)
def _below_80() -> tuple[set[int], int]:
    """(ranks of the example step busy less than 80% of the step, the busiest rank)."""
    util = example_step().utilization_per_rank
    return ({r for r, u in enumerate(util) if u < 0.8}, max(range(len(util)), key=lambda r: util[r]))


def _compare_rank(answer: Any, expected: Any) -> Graded:
    """06.3's answer is a rank: right or not, never "too high / too low" (with three ranks a direction
    would give the answer away). Returns ``Graded(ok, message, kind)``."""
    rank = as_rank(answer)
    if rank is None:
        fractional = (isinstance(answer, numbers.Real) and not isinstance(answer, bool)
                      and math.isfinite(float(answer)) and not float(answer).is_integer())
        reading = read_number(answer) if isinstance(answer, str) else None
        words = isinstance(reading, str) or (reading is not None and bool(reading.unit))  # "1 apples": not counted
        return Graded(False, tr("checks.l06.rank_not_whole" if fractional else "checks.l06.rank_not_int",
                                answer=answer), FORMAT if words else "")
    answer = rank
    if answer == expected:
        return Graded(True, "", "")
    if not 0 <= answer < P:
        return Graded(False, tr("checks.l06.rank_range", answer=answer, last=P - 1), "")
    return Graded(False, tr("checks.l06.rank_other"), "")


@exercise("06.3", hint=(msg("traces.explain_gaps(step, n=None) lists gaps longest first; find rank 0's first one and read from_rank.",
                            "traces.explain_gaps(step, n=None) 按从长到短列出空闲段；找到 rank 0 的第一段，读"
                            "它的 from_rank。"),
                        msg("Rank 0's longest gap ends with a backward: whose gradient does that backward need?",
                            "rank 0 最长的空闲段以一个反向结束：这个反向需要谁的梯度？")),
          compare=lambda answer, expected: _compare_rank(answer, expected))
def _waits_for() -> int | None:
    """The rank that rank 0 waits for in its longest gap."""
    gap = next(g for g in traces.explain_gaps(example_step(), n=None) if g.rank == 0)
    return gap.from_rank


@exercise(
    "06.4", unit=MICROBATCHES,
    hint=(msg("Calibrate costs from the step (bk.calibrate.calibrate) and simulate 1F1B with them while you double m "
              "from 2; the formula alone ignores what the calibration measured.",
              "从这一步标定出耗时（bk.calibrate.calibrate），用它模拟 1F1B，m 从 2 开始逐次翻倍；光用公式会忽"
              "略标定测到的东西。"),
          msg("costs, report = bk.calibrate.calibrate(step); bk.calibrate.predict(costs, '1f1b', 3, [2, 4, 8, ...]) "
              "tabulates the bubble_ratio per m: take the first m whose bubble_ratio is at most 0.2.",
              "costs, report = bk.calibrate.calibrate(step)；bk.calibrate.predict(costs, '1f1b', 3, [2, 4, 8,"
              " ...]) 列出每个 m 的 bubble_ratio：取第一个 bubble_ratio 不超过 0.2 的 m。")),
    mistakes=(Mistake(lambda _e: bk.min_micro_batch(P, 0.2),
                      msg("that is the formula's m for equal stages; the calibrated simulation needs more",
                          "这是公式在各流水级耗时相等时给出的 m；按标定结果模拟，需要更多")),),
)
def _m_for_20() -> int | None:
    """Smallest m in 2, 4, 8, ..., 256 whose calibrated 1F1B simulation has bubble_ratio <= 20%."""
    costs, _ = calibrate.calibrate(example_step())
    sweep = calibrate.predict(costs, "1f1b", P, [2**k for k in range(1, 9)])
    return next((row["m"] for row in sweep if row["bubble_ratio"] <= 0.2), None)


#: What 06.5's and 06.7's checks say, in both languages (fetched when an answer is graded).
register({
    "checks.l06.rank_not_int": {"en": "{answer!r} is not a rank: give a whole number",
                                "zh": "{answer!r} 不是 rank 编号：请给出一个整数"},
    "checks.l06.rank_not_whole": {"en": "{answer!r} is not a rank: ranks are whole numbers",
                                  "zh": "{answer!r} 不是 rank 编号：rank 编号都是整数"},
    "checks.l06.rank_range": {"en": "the step has ranks 0 to {last}, not {answer}",
                              "zh": "这一步只有 rank 0 到 {last}，没有 {answer}"},
    "checks.l06.rank_other": {"en": "not the rank it waits for: take the action rank 0 runs right after its longest gap, "
                                    "then the rank that produces that action's input",
                              "zh": "不是它在等的 rank：找到 rank 0 最长空闲段之后紧接着执行的动作，再看这个动作的输入由哪个 rank 产生"},
    "checks.l06.deadlock": {"en": "these orders deadlock, so they cannot be what ran: {error}",
                            "zh": "这些顺序会死锁，所以不可能是实际运行的顺序：{error}"},
    "checks.l06.incomplete": {"en": "these orders are not a complete schedule: {error}",
                              "zh": "这些顺序不是一个完整的调度：{error}"},
    "checks.l06.ranks": {"en": "the profile has {want} ranks, your text has {got}",
                         "zh": "profile 里有 {want} 个 rank，你的文本有 {got} 个"},
    "checks.l06.position": {
        "en": "rank {rank} differs from the profile at position {k} (counting from 0): sort its spans by start time",
        "zh": "rank {rank} 在第 {k} 个位置（从 0 数起）与 profile 不一致：按开始时间给它的 span 排序"},
    "checks.l06.not_text": {"en": "answer with the name of one row: durations, overhead, latency or pickup",
                            "zh": "请回答某一行的名字：durations、overhead、latency 或 pickup（接收滞后）"},
    "checks.l06.not_a_row": {"en": "{answer!r} names no effect of the ladder (the textbook and measured rows are its "
                                   "two ends): durations, overhead, latency or pickup",
                             "zh": "{answer!r} 没有说出逐项叠加表里新加入的任何一个因素（教科书模拟那一行和实测那一行是逐项叠加表的"
                                   "两端）：应为 durations、overhead、latency 或 pickup（接收滞后）"},
    "checks.l06.several_rows": {"en": "{answer!r} names more than one row of the ladder: name the one row that adds most",
                                "zh": "{answer!r} 说出了逐项叠加表中不止一行：只说增加最多的那一行"},
    "checks.l06.highest": {
        "en": "that row's bubble_ratio is as high as any effect's, but it stands on all the rows above it: "
              "compare each row with the one just above it",
        "zh": "这一行的 bubble_ratio 和各因素行里最高的一样高，但它是在上面所有行的基础上叠加出来的：每一行要和紧挨着的上一行比较"},
    "checks.l06.another": {"en": "another row adds more to the one above it",
                           "zh": "另有一行比它的上一行增加得更多"},
})


def _compare_orders(answer: Any, expected: Any) -> Graded:
    """The learner's text must be a legal schedule with exactly the executed per-rank orders.

    Returns ``Graded(ok, message, kind)`` (unpacks as ``(ok, message)``) (kinds as in :data:`bubblekit.course.checks._registry.KIND_HINTS`).
    """
    sched, why = as_schedule(answer)
    if sched is None:
        return unreadable(answer, why)
    try:
        bk.simulate(sched, bk.Costs(f=1, b=2))
    except bk.DeadlockError as err:
        return Graded(False, tr("checks.l06.deadlock", error=err), "deadlock")
    except bk.ScheduleError as err:
        return Graded(False, tr("checks.l06.incomplete", error=err), "incomplete")
    if sched.p != len(expected):
        return Graded(False, tr("checks.l06.ranks", want=len(expected), got=sched.p), "shape")
    for r, (got, want) in enumerate(zip(sched.orders, expected)):
        if tuple(got) != tuple(want):
            k = next((k for k, (x, y) in enumerate(zip(got, want)) if x != y), min(len(got), len(want)))
            return Graded(False, tr("checks.l06.position", rank=r, k=k), "")
    return Graded(True, "", "")


@exercise(
    "06.5",
    hint=(msg("Read each rank's spans in order of their start time (sorted(step.spans(r), key=...)) and write "
              "'rank r: ...' lines.",
              "按开始时间顺序读出每个 rank 的 span（sorted(step.spans(r), key=...)），写成 'rank r: ...' 的行"
              "。"),
          msg("sorted(step.spans(r), key=lambda sp: sp.start) gives rank r's spans in time order; join their .label "
              "with spaces after 'rank r: '.",
              "sorted(step.spans(r), key=lambda sp: sp.start) 按时间顺序给出 rank r 的 span；在 'rank r: ' 后"
              "面用空格连接它们的 .label。")),
    compare=_compare_orders,
    kind_hints={"deadlock": (msg("What ran cannot have deadlocked: compare your order with the picture, span by span.",
                                 "真正跑过的东西不可能死锁：把你的顺序和图逐个 span 对照。"),)},
)
def _executed_orders() -> tuple[tuple[bk.Action, ...], ...]:
    """The per-rank orders the example step executed."""
    return example_step().orders


@exercise("06.6", unit=MICROBATCHES, hint=(msg("The smallest whole m with (p - 1)/(m + p - 1) <= 0.2 for p = 12: check m and m - 1.",
                            "p = 12 时满足 (p - 1)/(m + p - 1) <= 0.2 的最小整数 m：检查 m 和 m - 1。"),
                        msg("Rearrange (p - 1)/(m + p - 1) <= 0.2 for m (multiply both sides by the denominator) and "
                            "take the smallest whole m; to confirm, evaluate the fraction at that m and at m - 1.",
                            "把 (p - 1)/(m + p - 1) <= 0.2 整理成关于 m 的不等式（两边同乘分母），取满足它的最小整数 m；"
                            "要验证，就把这个 m 和 m - 1 分别代回分式。")),
          mistakes=(Mistake(lambda e: e - 1, msg("that m misses the target by a hair: round the solution up, not down",
                                                 "这个 m 差一点点达不到目标：解要向上取整，不是向下")),
                    overhead_min_m(12, 0.2)))
def _min_m_p12() -> int | None:
    """Smallest m for a 20% bubble ratio with p = 12 (plain 1F1B)."""
    return bk.min_micro_batch(12, 0.2)


#: The effects of :func:`bubblekit.analysis.calibrate.compare_measured`'s ladder, by the words the exercise
#: accepts in an answer (the row's displayed name, "measured durations", or the lesson's bullet name,
#: "pickups and stalls", work too: other words are ignored; the pickup row is the calibrated simulation).
EFFECTS = {"durations": "durations", "duration": "durations", "overhead": "overhead", "overheads": "overhead",
           "latency": "latency", "latencies": "latency", "pickup": "calibrated", "pickups": "calibrated",
           "stall": "calibrated", "stalls": "calibrated", "calibrated": "calibrated",
           "耗时": "durations", "开销": "overhead", "延迟": "latency", "接收滞后": "calibrated", "停顿": "calibrated",
           "校准结果": "calibrated"}


def _named_effects(answer: str) -> set[str]:
    """The ladder rows an answer's words name (:data:`EFFECTS`; case, ``+``, ``_`` and punctuation ignored)."""
    text = answer.lower().replace("_", " ")
    words = re.findall(r"[a-z]+", text)
    named = {EFFECTS[w] for w in words if w in EFFECTS}
    named |= {key for word, key in EFFECTS.items() if not word.isascii() and word in text}
    return named


@lru_cache(maxsize=1)
def _ladder() -> dict[str, Any]:
    """The example step's comparison, ``{row key: bubble_ratio}``."""
    return calibrate.compare_measured(example_step(), "1f1b", draws=1).as_dict()


def _ladder_steps() -> dict[str, float]:
    """How much each effect adds to the bubble_ratio of the row above it (durations: over the textbook row)."""
    d = _ladder()
    keys = ("textbook", *calibrate.LADDER)
    return {k: d[k] - d[prev] for prev, k in zip(keys, keys[1:])}


def _compare_effect(answer: Any, expected: Any) -> Graded:
    """The learner names one effect of the ladder (any words naming one row: ``"latency"``,
    ``"measured durations"``, ``"pickups and stalls"``; ``pickup`` or ``calibrated`` for the last row).
    Returns ``Graded(ok, message, kind)``."""
    if not isinstance(answer, str):
        return Graded(False, tr("checks.l06.not_text"), "unreadable")
    named = _named_effects(answer)
    if len(named) > 1:
        return Graded(False, tr("checks.l06.several_rows", answer=answer), "unreadable")
    if not named:
        return Graded(False, tr("checks.l06.not_a_row", answer=answer), "unreadable")
    key = named.pop()
    if key == expected:
        return Graded(True, "", "")
    top = max(_ladder()[k] for k in calibrate.LADDER)
    if math.isclose(_ladder()[key], top, rel_tol=0.0, abs_tol=1e-12):  # rows tied but for float noise: both "highest"
        return Graded(False, tr("checks.l06.highest"), "")
    return Graded(False, tr("checks.l06.another"), "")


@exercise(
    "06.7",
    hint=(msg("compare_measured(step, '1f1b') adds one measured effect per row; for each row, subtract the "
              "bubble_ratio of the row above it.",
              "compare_measured(step, '1f1b') 每一行加上一个实测效应；对每一行，减去上一行的 bubble_ratio。"),
          msg("d = cmp.as_dict(): the first effect's step is measured from d['textbook'], each later one from the "
              "row before it in bk.calibrate.LADDER; the answer is the effect with the largest difference.",
              "d = cmp.as_dict()：第一个效应的增量从 d['textbook'] 算起，之后每个效应从 bk.calibrate.LADDER "
              "中它的上一行算起；差值最大的效应就是答案。")),
    compare=_compare_effect,
    kind_hints={"unreadable": (msg("Answer with the effect the row adds, as a string: the word of the row's label "
                                   "that names it (\"overhead\", ...).",
                                   "用这一行新加入的因素作答，写成字符串：就是该行标签里点出这个因素的那个词"
                                   "（\"overhead\" 等）。"),)},
)
def _biggest_effect() -> str:
    """The effect of the ladder that adds the most bubble_ratio to the row above it, on the example step."""
    steps = _ladder_steps()
    return max(steps, key=lambda k: steps[k])


@lru_cache(maxsize=1)
def _real_row() -> dict[str, Any]:
    """Rank 1's row of the real job's GPU breakdown (exercise 06.8)."""
    return dict(traces.gpu_breakdown(traces.HTA_SAMPLE_DIR).row(rank=1))


@lru_cache(maxsize=1)
def _gpipe_on_cpu_clock() -> float:
    """06.9's trace read on the CPU's clock (the writer's defaults: seed 0), the answer of a reader that trusts the CPU."""
    with tempfile.TemporaryDirectory() as tmp:
        traces.write_kineto_gpu(bk.simulate(bk.schedule("gpipe", 4, 8), bk.Costs(f=1, b=2, comm=0.25)), tmp,
                                cpu_lead_us=5000)
        return traces.read_trace(tmp, clock="cpu", align="none").bubble_ratio


#: What 06.8's fraction is a fraction of.
THE_GPU_SPAN = msg("the rank's GPU span (first to last GPU event)", "该 rank 的 GPU span（第一个到最后一个 GPU 事件）",
                   key="checks.of.gpu_span")


@exercise("06.8", hint=(msg("bk.traces.gpu_breakdown(bk.traces.HTA_SAMPLE_DIR) has one row per rank, with the span and the "
                            "time of compute kernels in it.",
                            "bk.traces.gpu_breakdown(bk.traces.HTA_SAMPLE_DIR) 每个 rank 一行，含 span 和其中计算 kernel 的时间。"),
                        msg("Rank 1's row: compute_us divided by span_us. kernel_share is another quantity: it counts "
                            "communication kernels and copies as busy too.",
                            "取 rank 1 那一行：compute_us 除以 span_us。kernel_share 是另一个量：它把通信 kernel 和拷贝也算作忙碌。")),
          rel_tol=1e-3, fraction_of=THE_GPU_SPAN,
          mistakes=(Mistake(lambda _e: _real_row()["kernel_share"],
                            msg("that is the kernel time share: it counts NCCL kernels and memory copies as busy; count "
                                "compute kernels only (compute_us / span_us)",
                                "这是 kernel 时间占比：它把 NCCL kernel 和内存拷贝也算作忙碌；只数计算 kernel（compute_us / span_us）")),))
def _real_compute_share() -> float:
    """Rank 1's compute share of its GPU span in the real job's trace (lesson 06, "Reading a GPU trace")."""
    row = _real_row()
    return float(row["compute_us"] / row["span_us"])



@exercise("06.9", hint=(msg("bk.simulate(bk.schedule(\"gpipe\", p=4, m=8), bk.Costs(f=1, b=2, comm=0.25)), then "
                            "bk.traces.write_kineto_gpu(step, folder, cpu_lead_us=5000) and bk.traces.read_trace(folder).",
                            "bk.simulate(bk.schedule(\"gpipe\", p=4, m=8), bk.Costs(f=1, b=2, comm=0.25))，然后 "
                            "bk.traces.write_kineto_gpu(step, folder, cpu_lead_us=5000)，再 bk.traces.read_trace(folder)。"),
                        msg("On a GPU trace read_trace times each action by its kernels (its clock says 'gpu'): the "
                            "bubble_ratio it measures is the one to give.",
                            "在 GPU trace 上，read_trace 按 kernel 给每个动作计时（clock 为 'gpu'）：交它量出的 bubble_ratio。")),
          rel_tol=1e-6, fraction_of=THE_STEP,
          mistakes=(Mistake(lambda _e: _gpipe_on_cpu_clock(),
                            msg("that is what the CPU ranges say (clock='cpu'): they end when the kernels are launched; "
                                "read the trace on the GPU's clock (the default)",
                                "这是按 CPU 区间量出的（clock='cpu'）：CPU 区间在 kernel 启动完就结束了；按 GPU 时钟读（默认）")),))
def _gpu_bubble_gpipe() -> float:
    """GPipe's bubble ratio measured from its own exported GPU trace: the simulation's (lesson 06)."""
    return bk.simulate(bk.schedule("gpipe", 4, 8), bk.Costs(f=1, b=2, comm=0.25)).bubble_ratio
