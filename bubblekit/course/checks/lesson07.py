"""Exercises of lesson 07, *Beyond 1F1B* (``solutions/07_beyond_1f1b.ipynb``).

Also home of :func:`whiteboard`, the grader for "sketch a schedule as text" questions
(lesson 07 and the interview bank): it simulates the learner's text and says what is
wrong (a malformed action, the blocked rank of a deadlock, the memory peak, or how far
the makespan is from the target) without ever showing a schedule that works.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import bubblekit as bk
from bubblekit import memory
from bubblekit.analysis import search
from bubblekit.costs import format_number
from bubblekit.course import published
from bubblekit.course.checks._grading import Graded
from bubblekit.course.checks._mistakes import upside_down
from bubblekit.course.checks._registry import Mistake, exercise
from bubblekit.course.checks._schedules import generated, schedule_text, unreadable
from bubblekit.course.checks._text import msg
from bubblekit.course.checks._units import ACTIVATIONS, FACTOR, SLOTS
from bubblekit.i18n import register, tr

__all__ = ["whiteboard", "WhiteboardTarget"]


class WhiteboardTarget(dict):  # type: ignore[type-arg]
    """What a whiteboard answer must reach: ``p``, ``m``, costs, cap and a makespan (or span) bound.

    A dict so that the registry's comparison rules never print it; :func:`whiteboard`
    reads it. Keys: ``p``, ``m``, ``costs``, ``cap`` (per-rank activations or None),
    ``makespan`` (upper bound, time unit) and ``measure`` (``"makespan"`` or
    ``"stage_span"``), ``split`` (True: the answer must use F/I/W; False: it must use B),
    ``reference_gaps`` (the places ``(rank, action after it)`` of a reaching schedule's idle gaps,
    possibly empty). Every target puts one stage on each of its ``p`` ranks (no V or interleaved
    placement).
    """


_fmt = format_number

#: What the whiteboard check says, in both languages (fetched when an answer is graded).
register({
    "checks.l07.not_text": {"en": "expected the schedule as text (a str like 'rank 0: 0F0 0B0', or "
                                  "bk.Schedule.from_text of it), got {type}",
                            "zh": "这里要文本形式的调度（像 'rank 0: 0F0 0B0' 这样的 str，或者它的 bk.Schedule.from_text），"
                                  "收到的是 {type}"},
    "checks.l07.not_legal": {"en": "the text is not a legal schedule yet: {error}", "zh": "这段文本还不是合法的调度：{error}"},
    "checks.l07.shape": {"en": "the schedule has {ranks} rank line(s) and {stages} stage(s); this question has p={p}",
                         "zh": "调度有 {ranks} 行 rank、{stages} 个流水级；这道题 p={p}"},
    "checks.l07.one_stage": {"en": "this question puts one stage on each of its {p} ranks; your schedule has {stages} "
                                   "stages (a V or interleaved placement)",
                             "zh": "这道题的 {p} 个 rank 各放一个流水级；你的调度有 {stages} 个流水级（V 形或交错放置）"},
    "checks.l07.split": {"en": "this question wants the backward split into I (input gradient) and W (weight gradient)",
                         "zh": "这道题要求把反向拆成 I（输入梯度）和 W（权重梯度）"},
    "checks.l07.fused": {"en": "this question uses the full backward B: write B, not I and W",
                         "zh": "这道题用完整的反向 B：请写 B，不要拆成 I 和 W"},
    "checks.l07.deadlock": {"en": "deadlock: {first}", "zh": "死锁：{first}"},
    "checks.l07.memory": {
        "en": "legal (no deadlock), but rank {rank} holds {peak} microbatch activations at its "
              "peak, over the cap of {cap}: run a W (or B) before the next F there",
        "zh": "调度合法（没有死锁），但 rank {rank} 峰值时保留了 {peak} 个微批的激活，超过了上限 {cap}："
              "在那里的下一个 F 之前先跑一个 W（或 B）"},
    # a fused-backward question refuses W: name only B there (seventeenth review, C1)
    "checks.l07.memory_fused": {
        "en": "legal (no deadlock), but rank {rank} holds {peak} microbatch activations at its "
              "peak, over the cap of {cap}: run a B before the next F there",
        "zh": "调度合法（没有死锁），但 rank {rank} 峰值时保留了 {peak} 个微批的激活，超过了上限 {cap}："
              "在那里的下一个 F 之前先跑一个 B"},
    "checks.l07.slow": {
        "en": "legal and within memory, but its {measure} is {gap} {unit}(s) longer than the target: "
              "look at the largest idle gap, {where}",
        "zh": "调度合法、显存也没超，但它的 {measure} 比目标长 {gap}（单位：{unit}）：看最大的那段空闲，{where}"},
    "checks.l07.no_gap": {"en": "(none inside the ranks: the ramps at the start and end are what remain)",
                          "zh": "（rank 内部已经没有空闲：剩下的是开头的填充和结尾的排空）"},
    "checks.l07.gap_at": {"en": "on rank {rank} before {before}", "zh": "在 rank {rank} 上、{before} 之前"},
})


def whiteboard(answer: Any, expected: Any) -> Graded:
    """Grade a schedule written as text (``"rank 0: 0F0 0I0 0W0"``) against a target.

    Returns ``Graded(ok, message, kind)`` (unpacks as ``(ok, message)``). The message names the first problem: text that does not
    parse (kind ``"unreadable"``), a missing or misplaced action (``"incomplete"``), the wrong
    shape (``"shape"``: other numbers of ranks, or more than one stage per rank), a backward split where the
    target wants B or fused where it wants I and W (``"split"``, ``"fused"``), a deadlock with the blocked rank and what it waits for
    (``"deadlock"``), a memory peak above the cap with the rank (``"memory"``: legal, not a
    deadlock), or the gap between the answer's makespan and the target bound (``"slow"``). It
    never shows a correct schedule.
    """
    if not isinstance(expected, dict):
        raise TypeError("whiteboard expects a WhiteboardTarget as the expected value")
    if generated(answer):   # a generator's object: a whiteboard answer is written by hand
        return Graded(False, tr("checks.generated"), "unreadable")
    if isinstance(answer, bk.Schedule):   # the learner's own text, built with bk.Schedule.from_text
        text = answer.to_text()
    elif isinstance(answer, str):
        text = answer
    else:
        return Graded(False, tr("checks.l07.not_text", type=type(answer).__name__), "unreadable")
    p, m = expected["p"], expected["m"]
    text = schedule_text(text)   # '0f0' is '0F0': text answers ignore case
    try:
        bk.Schedule.from_text(text, m=m, validate=False)
    except bk.ScheduleError as err:   # text that is no schedule: said with the reader's words, not counted
        return unreadable(text, tr("checks.l07.not_legal", error=err))
    try:
        sched = bk.Schedule.from_text(text, m=m)
    except bk.ScheduleError as err:
        return Graded(False, tr("checks.l07.not_legal", error=err), "incomplete")
    if sched.p != p:
        return Graded(False, tr("checks.l07.shape", ranks=sched.p, stages=sched.n_stages, p=p), "shape")
    if sched.n_stages != p:
        return Graded(False, tr("checks.l07.one_stage", p=p, stages=sched.n_stages), "shape")
    if expected.get("split") and not sched.split_backward:
        return Graded(False, tr("checks.l07.split"), "split")
    if expected.get("split") is False and sched.split_backward:
        return Graded(False, tr("checks.l07.fused"), "fused")
    try:
        res = bk.simulate(sched, expected["costs"])
    except bk.DeadlockError as err:
        first = str(err).splitlines()[1].strip() if len(str(err).splitlines()) > 1 else str(err)
        return Graded(False, tr("checks.l07.deadlock", first=first), "deadlock")
    cap = expected.get("cap")
    if cap is not None:
        for r, peak in enumerate(res.peak_activations):
            if peak > cap + 1e-9:
                key = "checks.l07.memory_fused" if expected.get("split") is False else "checks.l07.memory"
                return Graded(False, tr(key, rank=r, peak=_fmt(peak), cap=_fmt(cap)), "memory")
    measure = expected.get("measure", "makespan")
    got = res.makespan if measure == "makespan" else _span(res)
    bound = expected["makespan"]
    if got > bound:
        return Graded(False, tr("checks.l07.slow", measure=measure.replace("_", " "), gap=_fmt(got - bound),
                                unit=res.unit, where=_largest_gap(res, expected.get("reference_gaps"))), "slow")
    return Graded(True, "", "")


def _span(res: bk.SimResult) -> Any:
    spans = []
    for r in range(res.p):
        sp = list(res.spans(r))
        spans.append(sp[-1].end - sp[0].start)
    return max(spans)


def _gap_keys(res: bk.SimResult) -> frozenset[tuple[int, str]]:
    """``(rank, label of the action after it)`` of every idle gap inside a rank (not the trailing corner)."""
    return frozenset((g.rank, str(g.before)) for g in res.idle_intervals() if g.before is not None)


def _largest_gap(res: bk.SimResult, reference: frozenset[tuple[int, str]] | None = None) -> str:
    """Where the answer's largest idle gap inside a rank is, in words.

    A gap the target schedule also has (``reference``, from :func:`_gap_keys`) may be one no schedule
    can close, so a gap the target does not have comes first; among equal gaps the latest (a gap
    near the start is usually the fill's, which every schedule has).
    """
    gaps = [g for g in res.idle_intervals() if g.before is not None]
    if not gaps:
        return tr("checks.l07.no_gap")
    ref = reference or frozenset()
    g = max(gaps, key=lambda x: ((x.rank, str(x.before)) not in ref, x.duration, x.start))
    return tr("checks.l07.gap_at", rank=g.rank, before=g.before)


def target(p: int, m: int, costs: bk.Costs, bound: Any, *, cap: float | None = None,
           measure: str = "makespan", split: bool = True,
           reference: bk.SimResult | None = None) -> WhiteboardTarget:
    """Build a :class:`WhiteboardTarget` (used by lesson modules).

    ``reference``: a simulation that reaches the target; a "slow" answer is then pointed at a
    gap it does not have (only the gaps' places are kept, never the schedule).
    """
    return WhiteboardTarget(p=p, m=m, costs=costs, cap=cap, makespan=bound, measure=measure, split=split,
                            reference_gaps=_gap_keys(reference) if reference is not None else frozenset())


UNIFORM = bk.Costs(f=1, i=1, w=1)


def _ratio_1f1b_over_zbh1() -> float:
    costs = bk.Costs(f=2, i=3, w=1)
    one = published.max_rank_bubble_time(bk.simulate(bk.schedule("1f1b", 8, 16), costs))
    zb = published.max_rank_bubble_time(bk.simulate(bk.schedule("zb-h1", 8, 16), costs))
    return one / zb


@exercise("07.1", unit=FACTOR, hint=(msg("Compare the per-rank bubble time of 1F1B, (p-1)(F+I+W), with ZB-H1's; p cancels.",
                            "把 1F1B 每个 rank 的气泡时间 (p-1)(F+I+W) 和 ZB-H1 的比较；p 会约掉。"),
                        msg("ZB-H1's delayed W passes fill part of each idle stretch: write its bubble per rank, divide "
                            "1F1B's by it, and check with published.max_rank_bubble_time on p = 8, m = 16.",
                            "ZB-H1 推迟的 W 填掉了每段空闲的一部分：写出它每个 rank 的气泡时间，用 1F1B 的除"
                            "以它，再用 published.max_rank_bubble_time 在 p = 8, m = 16 上验证。")),
          mistakes=(upside_down(),))
def _e071() -> float:
    return _ratio_1f1b_over_zbh1()


@exercise("07.2", unit=ACTIVATIONS, hint=(msg("Simulate zb-h2 and read max_peak_activations; the paper writes it as (2p-1) M_B.",
                            "模拟 zb-h2，读 max_peak_activations；论文把它写成 (2p-1) M_B。"),
                        msg("Predict first: at p = 6, which rank holds the most, and how many forwards does it run "
                            "before its first W? Then simulate the question's setting with F = I = W = 1 and compare.",
                            "先预测：p = 6 时哪个 rank 保留得最多？它在第一个 W 之前跑了几个前向？然后按题目的设定、"
                            "F = I = W = 1 模拟一遍来对照。")))
def _e072() -> float:
    return bk.simulate(bk.schedule("zb-h2", 6, 12), UNIFORM).max_peak_activations


def _best_within_1f1b_memory() -> str:
    costs = bk.h200_costs()
    p, m = 4, 16
    cap = bk.simulate(bk.schedule("1f1b", p, m), costs).max_peak_activations
    best = None
    for name in ("zb-h1", "zb-h2", "zbv", "v-half", "v-min", "dualpipev"):
        res = bk.simulate(bk.schedule(name, p, m), costs)
        if res.max_peak_activations <= cap + 1e-9:
            rate = published.stage_span_bubble_rate(res)
            if best is None or rate < best[0]:
                best = (rate, name)
    assert best is not None
    return best[1]


@exercise("07.3", hint=(msg("Drop the schedules whose peak exceeds 1F1B's (V-Half and V-Min hold less), then compare "
                            "stage_span_bubble_rate.",
                            "先去掉峰值超过 1F1B 的调度（V-Half 和 V-Min 占得更少），再比较 stage_span_bubble"
                            "_rate。"),
                        msg("Use the measured costs bk.h200_costs() for every simulation, 1F1B's cap included; answer "
                            "with the registry name, like 'zb-h1'.",
                            "每次模拟都用实测耗时 bk.h200_costs()，算 1F1B 的上限时也一样；用 bk.schedule 认"
                            "的名字作答，比如 'zb-h1'。")))
def _e073() -> str:
    return _best_within_1f1b_memory()


@exercise(
    "07.4",
    hint=(msg("Start from 1F1B with B split into I and W, then move a W into a gap where its rank would wait.",
              "从把 B 拆成 I 和 W 的 1F1B 出发，再把某个 W 挪进它所在 rank 本来要等待的空隙里。"),
          msg("Rank 0 waits for 1I0 after its warm-up: run its I passes as soon as the gradient arrives and keep "
              "a W back for the moment it would otherwise wait.",
              "rank 0 预热之后要等 1I0：梯度一到就跑它的 I，留一个 W 到本来要等待的时候再跑。")),
    compare=whiteboard,
)
def _e074() -> WhiteboardTarget:
    zb = bk.simulate(bk.schedule("zb-h1", 2, 3), UNIFORM)
    return target(2, 3, UNIFORM, zb.makespan, cap=2, reference=zb)


def _min_cap_for_zero_span_bubble() -> int:
    costs = UNIFORM
    for cap in range(1, 17):
        s = search.search_schedule(4, 12, costs, mem_cap=cap, objective="stage_span", method="greedy")
        if published.stage_span_bubble_rate(bk.simulate(s, costs)) == 0:
            return cap
    raise AssertionError("no cap up to 16 reached zero")


@exercise("07.5", unit=ACTIVATIONS, hint=(msg("Loop over mem_cap = 1, 2, ... with objective='stage_span' and stop at the first zero rate.",
                            "让 mem_cap = 1, 2, ... 循环，objective='stage_span'，在比率第一次为零时停下。"),
                        msg("search.search_schedule(4, 12, uniform, mem_cap=cap, objective='stage_span', method='greedy') "
                            "for cap = 1, 2, ...; simulate each and test published.stage_span_bubble_rate(...) == 0.",
                            "对 cap = 1, 2, ... 调用 search.search_schedule(4, 12, uniform, mem_cap=cap, obje"
                            "ctive='stage_span', method='greedy')；逐个模拟，检验 published.stage_span_bubble"
                            "_rate(...) == 0。")))
def _e075() -> int:
    return _min_cap_for_zero_span_bubble()


# --------------------------------------------------------------------------- the newest schedules
def _dualpipe_run(i: Any) -> bk.SimResult:
    """DualPipe, PP = 8 ranks, m = 20, chunk times F = 1, I = i, W = 1/2, pairs perfectly overlapped."""
    return bk.simulate(bk.schedule("dualpipe", 8, 20), bk.Costs(f=1, i=i, w=Fraction(1, 2), fb="max"))


@exercise("07.6", unit=SLOTS, hint=(msg("Simulate bk.schedule('dualpipe', 8, 20) with bk.Costs(f=1, i=1, w=Fraction(1, 2), fb='max') and "
                            "take the largest of result.idle: each rank's idle time over the whole step.",
                            "用 bk.Costs(f=1, i=1, w=Fraction(1, 2), fb='max') 模拟 bk.schedule('dualpipe', 8"
                            ", 20)，取 result.idle 的最大值：它是每个 rank 在整步中的空闲时间。"),
                        msg("The README's (PP/2 - 1)(F&B + B - 3W) with B = I + W and F&B = max(F, B) should give the same "
                            "number here, because I = F and W <= F.",
                            "README 里的 (PP/2 - 1)(F&B + B - 3W)，取 B = I + W、F&B = max(F, B)，在这里应该"
                            "得到同一个数，因为 I = F 且 W <= F。")))
def _e076() -> Any:
    return max(_dualpipe_run(1).idle)


@exercise("07.7", hint=(msg("Divide V-Min's largest peak by 1F1B's, both for p = 12 (m = 24 is plenty).",
                            "用 V-Min 的最大峰值除以 1F1B 的，都取 p = 12（m = 24 足够）。"),
                        msg("Take max_peak_activations of both simulations (same p, same costs) and divide. V-Min's "
                            "peak is a whole number of microbatch activations, so the ratio approaches 1/3 as p grows "
                            "but never reaches it.",
                            "取两次模拟的 max_peak_activations（同样的 p、同样的耗时）相除。V-Min 的峰值是整数个微批"
                            "的激活，所以 p 越大，这个比值越接近 1/3，但永远到不了。")),
          fraction_of=msg("1F1B's peak", "1F1B 的峰值"),
          mistakes=(Mistake(lambda e: Fraction(1, 3), msg("that is the headline 1/3, the limit for large p; at p = 12 "
                                                          "the peak is a whole number of microbatches",
                                                          "这是标题里的 1/3，是 p 很大时的极限；p = 12 时峰值"
                                                          "是整数个微批")),))
def _e077() -> Fraction:
    vmin = bk.simulate(bk.schedule("v-min", 12, 24), UNIFORM).max_peak_activations
    one = bk.simulate(bk.schedule("1f1b", 12, 24), UNIFORM).max_peak_activations
    return Fraction(vmin).limit_denominator(1000) / Fraction(one).limit_denominator(1000)


#: lesson 07's model for the memory exercises: 48 GPT layers, h = 4096, seq 4096 (the measured H200 layer).
MODEL_48 = memory.Model(layers=48, hidden=4096, heads=32, seq=4096, name="48-layer GPT, h = 4096")


def _fitting(gb: float) -> frozenset[str]:
    """Registry names, among lesson 07's five, whose largest rank fits ``gb`` GB on 8 devices, m = 16."""
    out = set()
    for name in ("1f1b", "zb-h2", "v-half", "dualpipe", "dualpipev"):
        if memory.fits(bk.schedule(name, 8, 16), MODEL_48, gb * memory.GB).fits:
            out.add(name)
    return frozenset(out)


@exercise("07.8", hint=(msg("For each name, memory.fits(bk.schedule(name, 8, 16), model, 60 * memory.GB).fits; collect the "
                            "names where it is True.",
                            "对每个名字算 memory.fits(bk.schedule(name, 8, 16), model, 60 * memory.GB).fits；"
                            "收集结果为 True 的名字。"),
                        msg("DualPipe holds two copies of the parameters; ZB-H2 holds 2p - 1 microbatches of activations: "
                            "look at the table memory.fits returns for the largest rank.",
                            "DualPipe 存两份参数；ZB-H2 存 2p - 1 个微批的激活：看 memory.fits 返回的表里占用"
                            "最大的 rank。")))
def _e078() -> frozenset[str]:
    return _fitting(60)


@exercise("07.9", hint=(msg("Same 8 stages: DualPipeV runs them on 4 devices, 1F1B on 8. Compare Schedule.hops_per_step.",
                            "同样 8 个流水级：DualPipeV 放在 4 张卡上，1F1B 放在 8 张卡上。比较 Schedule.hops"
                            "_per_step。"),
                        msg("Count each schedule's messages with hops_per_step: DualPipeV on its 4 devices, 1F1B with "
                            "one stage per device on the same 8 stages. The V turns on its last rank without a message.",
                            "用 hops_per_step 数出两种调度各自的消息数：DualPipeV 用它的 4 张卡，1F1B 每张卡一个流水级，"
                            "同样是 8 个流水级。V 形在最后一个 rank 上折返，不需要发消息。")),
          fraction_of=msg("1F1B's messages on the same 8 stages", "同样 8 个流水级上 1F1B 的消息数"),
          mistakes=(Mistake(lambda e: 2.0, msg("2x is DualPipeV against 1F1B on the same 4 devices; here 1F1B has the same "
                                               "8 stages, on 8 devices",
                                               "2 倍是 DualPipeV 和同样 4 张卡上的 1F1B 相比；这里的 1F1B 有"
                                               "同样的 8 个流水级，放在 8 张卡上")),))
def _e079() -> Fraction:
    return Fraction(bk.schedule("dualpipev", 4, 16).hops_per_step, bk.schedule("1f1b", 8, 16).hops_per_step)


def _checks() -> dict[str, Callable[[], Any]]:
    """The expected-value functions by id (for tests)."""
    return {"07.1": _e071, "07.2": _e072, "07.3": _e073, "07.4": _e074, "07.5": _e075, "07.6": _e076,
            "07.7": _e077, "07.8": _e078, "07.9": _e079}
