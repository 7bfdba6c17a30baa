"""Exercises of lesson 05, *Shrinking bubbles* (``solutions/05_shrinking_bubbles.ipynb``).

Every expected value is computed with bubblekit when a learner checks an answer.
"""

from __future__ import annotations

import unicodedata
from fractions import Fraction
from typing import Any

import bubblekit as bk
from bubblekit import layout as layout_module
from bubblekit.analysis import balance, planner
from bubblekit.course.checks._grading import THE_STEP, AnyOf, Graded, grade
from bubblekit.course.checks._mistakes import swapped_items
from bubblekit.course.checks._registry import FORMAT, Mistake, compare_choice, exercise
from bubblekit.course.checks._schedules import as_schedule, generated, unreadable
from bubblekit.course.checks._text import msg
from bubblekit.course.checks._units import MICROBATCHES, MS, SLOTS
from bubblekit.i18n import register, tr
from bubblekit.schedules.classic import microbatch_group_rule

#: Exercise 05.4: the latency per hop (slots) with F = 1, B = 2.
HIDE_COMM = Fraction(1, 4)
#: Exercise 05.4: the memory cap (microbatch activations per rank).
HIDE_CAP = 4


@exercise("05.1", hint=(msg("Two fractions of 1, p = 8 in both: (p - 1)/(m + p - 1) at m = 4 and at m = 32. The article's "
                            "demo uses p = 8, its prose example does not.",
                            "两个 0 到 1 之间的比例，都取 p = 8：分别是 m = 4 和 m = 32 时的 (p - 1)/(m + p - 1)。"
                            "原文的演示用的是 p = 8，正文里的例子不是。"),
                        msg("To confirm each fraction: simulate bk.schedule('1f1b', 8, m) with bk.Costs(f=1, b=2) at "
                            "m = 4 and at m = 32, and divide the sum of result.idle by p x result.makespan.",
                            "要验证每个比例：用 bk.Costs(f=1, b=2) 分别模拟 m = 4 和 m = 32 的 "
                            "bk.schedule('1f1b', 8, m)，把 result.idle 的总和除以 p x result.makespan。")),
          fraction_of=THE_STEP,
          mistakes=(Mistake(lambda _e: (bk.bubble_ratio(4, 4), bk.bubble_ratio(4, 32)),
                            msg("those are the article's prose numbers, for p = 4; the question asks for p = 8",
                                "这是原文正文里 p = 4 的数字；题目问的是 p = 8")),
                    Mistake(lambda _e: (bk.bubble_overhead(8, 4), bk.bubble_overhead(8, 32)),
                            msg("those are Megatron's overheads (bubble over busy time); give fractions of the whole step",
                                "这是 Megatron 口径的气泡开销（气泡时间 / 忙碌时间）；要给出占整步的比例")),
                    swapped_items()))
def _p8() -> tuple[float, float]:
    """(bubble_ratio at m=4, at m=32) for p=8."""
    return (bk.bubble_ratio(8, 4), bk.bubble_ratio(8, 32))


@exercise("05.2", unit=MICROBATCHES, hint=(msg("Solve (p - 1)/(m v + p - 1) <= 0.1 for m with p = 6, once with v = 1 and once with v = 2, "
                            "and round each up to a whole m.",
                            "取 p = 6，分别在 v = 1 和 v = 2 时解 (p - 1)/(m v + p - 1) <= 0.1 求 m，各自向上"
                            "取整。"),
                        msg("Multiply both sides by the denominator, collect the terms in m and round up. To check an "
                            "m, evaluate (p - 1)/(m v + p - 1) at m and at m - 1: m meets 10 % and m - 1 does not. "
                            "Interleaved 1F1B refuses some m (bk.legal_ms); the smallest m at or above yours that it "
                            "runs is accepted too.",
                            "两边同乘分母，合并含 m 的项，再向上取整。检验一个 m：把 m 和 m - 1 分别代入 "
                            "(p - 1)/(m v + p - 1)，m 达到 10%，m - 1 达不到。交错式 1F1B 不接受某些 m"
                            "（bk.legal_ms）；不小于你算出的 m、它又能跑的最小 m 也算对。")),
          mistakes=(swapped_items(),))
def _min_m() -> tuple[Any, Any]:
    """Smallest m with bubble_ratio <= 10% for p=6, with v=1 and with v=2.

    For v = 2 two answers are right: the closed form's m = 23, and m = 24, the smallest m >= 23
    that interleaved 1F1B accepts (23 // 6 = 3 rounds do not divide 23; bk.legal_ms).
    """
    closed = bk.min_micro_batch(6, 0.1, v=2)
    if closed is None:                       # 10% is reachable at p = 6: never None, but keep mypy and readers sure
        raise AssertionError("min_micro_batch(6, 0.1, v=2) found no m")
    runs = min(mm for mm in bk.legal_ms("interleaved", 6, 2, up_to=4 * closed) if mm >= closed)
    return (bk.min_micro_batch(6, 0.1), AnyOf((closed, runs)) if runs != closed else closed)


@exercise("05.3", hint=(msg("Simulate 1F1B (v=1) and interleaved v=2, 4, 8 with bk.Costs(f=1, b=2, comm=Fraction(1, 8)) and compare makespans.",
                            "用 bk.Costs(f=1, b=2, comm=Fraction(1, 8)) 模拟 1F1B（v=1）和 v=2、4、8 的交错式"
                            "调度，比较单步耗时。"),
                        msg("More chunks shrink the ramps but add hops; give the v (an int) whose simulated makespan "
                            "is the smallest, the smaller v on a tie.",
                            "chunk 越多，填充和排空越短，但跳数越多；给出模拟单步耗时最小的 v（int），并列"
                            "时取较小的 v。")),
          compare=lambda answer, expected: compare_choice(answer, expected, (1, 2, 4, 8), msg(
              "that is not the v with the shortest simulated step: simulate all four",
              "这个 v 的模拟单步耗时不是最短的：四个都模拟一遍")))
def _best_v() -> int:
    """The v in (1, 2, 4, 8) with the shortest makespan, p=4, m=8, comm=1/8 slot."""
    c = bk.Costs(f=1, b=2, comm=Fraction(1, 8))
    spans = {}
    for v in (1, 2, 4, 8):
        s = bk.schedule("1f1b", 4, 8) if v == 1 else bk.schedule("interleaved", 4, 8, v)
        spans[v] = bk.simulate(s, c).makespan
    return min(spans, key=lambda v: (spans[v], v))


def hide_floor(p: int = 3, m: int = 6) -> Any:
    """(m + p - 1)(f + b) + 2(p - 1) comm, in slots, for F = 1, B = 2, comm = HIDE_COMM (lesson 05, section 3).

    The shortest step of a schedule with one stage per rank, equal stages and a **fused** backward (each
    backward one ``B``): the first microbatch crosses p - 1 links forward, the last rank has m(f + b) of
    work, and the last gradient climbs p - 1 links back paying a whole B per stage. It is not a floor
    for a split backward (``I`` + ``W``: ZB-H1 and ZB-H2 run below it, ZB-H1 at 1F1B's largest peak)
    nor for several chunks per rank (interleaved 1F1B).
    """
    return (m + p - 1) * 3 + 2 * (p - 1) * HIDE_COMM


#: What 05.4's check says, in both languages (fetched when an answer is graded).
register({
    "checks.l05.shape": {
        "en": "the schedule must have p=3 ranks, m=6 microbatches, one stage per rank (got p={p}, m={m}, v={v})",
        "zh": "调度必须是 p=3 个 rank、m=6 个微批、每个 rank 一个流水级（收到的是 p={p}, m={m}, v={v}）"},
    "checks.l05.deadlock": {"en": "it deadlocks: {error}", "zh": "会死锁：{error}"},
    "checks.l05.incomplete": {"en": "the schedule is not complete: {error}", "zh": "调度不完整：{error}"},
    "checks.l05.memory": {
        "en": "legal (no deadlock), but rank {rank} holds {peak:g} microbatch activations at its peak (at most {cap})",
        "zh": "调度合法（没有死锁），但 rank {rank} 峰值时保留了 {peak:g} 个微批的激活（最多 {cap} 个）"},
    "checks.l05.slow": {
        "en": "legal and within memory, but the makespan is {makespan} slots, above the floor: a schedule with a "
              "fused backward need pay only the 2(p - 1) hops of the fill and drain; yours waits longer "
              "(the longest wait is on rank {rank}, before {before})",
        "zh": "调度合法、显存也没超，但单步耗时是 {makespan} 个时间槽，高于下界：反向不拆分的调度只需付出填充"
              "和排空那 2(p - 1) 跳的延迟，你的调度等得更久（最长的等待在 rank {rank} 上，{before} 之前）"},
})


def _compare_hidden(answer: Any, expected: Any) -> Graded:
    """A legal p=3, m=6 schedule with one stage per rank that finishes by :func:`hide_floor`, within HIDE_CAP.

    Both defensible answers are accepted: fused backwards (``F``/``B``, extra warm-up forwards: exactly at
    the floor) and a split backward (``I``/``W``, I = W = 1, which can run below the floor, as ZB-H1 does).
    Several chunks per rank are refused (the exercise is about one stage per rank).

    Returns ``Graded(ok, message, kind)`` (unpacks as ``(ok, message)``) (kinds as in :data:`bubblekit.course.checks._registry.KIND_HINTS`).
    """
    if generated(answer):   # "write it as text": a generator's object is refused, as in 03.5
        return Graded(False, tr("checks.generated"), "unreadable")
    sched, why = as_schedule(answer)
    if sched is None:
        return unreadable(answer, why)
    if sched.p != 3 or sched.m != 6 or sched.v != 1:
        return Graded(False, tr("checks.l05.shape", p=sched.p, m=sched.m, v=sched.v), "shape")
    try:
        r = bk.simulate(sched, bk.Costs(f=1, b=2, comm=HIDE_COMM))
    except bk.DeadlockError as err:
        return Graded(False, tr("checks.l05.deadlock", error=str(err).removeprefix("deadlock: ")), "deadlock")
    except bk.ScheduleError as err:
        return Graded(False, tr("checks.l05.incomplete", error=err), "incomplete")
    if r.max_peak_activations > HIDE_CAP:
        worst = max(range(r.p), key=lambda q: r.peak_activations[q])
        return Graded(False, tr("checks.l05.memory", rank=worst, peak=r.max_peak_activations, cap=HIDE_CAP), "memory")
    if r.makespan > expected:
        waits = [g for g in r.idle_intervals() if g.before is not None]   # the drain has no next action
        blocked = max(waits or r.idle_intervals(), key=lambda g: g.duration)
        return Graded(False, tr("checks.l05.slow", makespan=r.makespan, rank=blocked.rank, before=blocked.before),
                      "slow")
    return Graded(True, "", "")


#: Hints of 05.4 (also for a legal schedule that is still too slow: it pays more hops than GPipe).
HIDE_HINTS = (
    msg("Start from 1F1B for p=3, m=6 and give the ranks that wait for gradients one more forward to run while they wait.",
        "从 p=3, m=6 的 1F1B 出发，让等梯度的 rank 在等待期间多跑一个前向。"),
    msg("Rank 0 waits longest for its first gradient: let it start one more forward than 1F1B before its "
        "first backward, and rank 1 too, within the cap of 4 (or split each B into I and W and move the W "
        "passes into the waits).",
        "rank 0 等第一个梯度等得最久：让它在第一个反向之前比 1F1B 多启动一个前向，rank 1 也一样，但不超过 4 "
        "的上限（或者把每个 B 拆成 I 和 W，把 W 挪进等待的空隙）。"),
)


@exercise("05.4", hint=HIDE_HINTS, compare=_compare_hidden, kind_hints={"slow": HIDE_HINTS})
def _hide() -> Any:
    return hide_floor()


#: The made-up head's layer name in 05.5 (a learner reads it in ``Partition.describe()``), in both languages.
register({"checks.l05.head_name": {"en": "head (hypothetical)", "zh": "输出头（假想）"}})


def head_model() -> list[balance.Layer]:
    """Exercise 05.5: 6 measured layers (h=4096, seq=4096) as attention/MLP pieces plus a hypothetical output head.

    The head is *not measured*: it is made up as twice an MLP block, to show what a heavy last
    piece does to a count-based split. Its name is in the current language (``"head (hypothetical)"``,
    Chinese ``"输出头（假想）"``); the costs do not depend on the language.
    """
    layers = balance.measured_layers(6, hidden=4096, seq=4096)
    mlp = layers[1]
    layers.append(balance.Layer(tr("checks.l05.head_name"), f=2 * mlp.f, b=2 * mlp.b))
    return layers


@exercise("05.5", unit=MS, hint=(msg("balance.partition(layers, 4).to_costs() gives per-stage costs; simulate bk.schedule('1f1b', 4, 8) with them.",
                            "balance.partition(layers, 4).to_costs() 给出每个流水级的耗时；用它模拟 bk.schedu"
                            "le('1f1b', 4, 8)。"),
                        msg("Give the makespan in ms of the balanced split (balance.partition), not of the split by "
                            "count (balance.even_partition).",
                            "给出均衡切分（balance.partition）的单步耗时，单位 ms，不是按层数平分（balance.e"
                            "ven_partition）的。")),
          rel_tol=1e-9,
          mistakes=(Mistake(lambda _e: _step_ms(balance.even_partition(head_model(), 4)),
                            msg("that is the split by count (even_partition); the exercise asks for the balanced split",
                                "这是按层数平分（even_partition）的结果；题目要的是均衡切分")),))
def _balanced_step() -> Any:
    """Makespan (ms) of 1F1B, p=4, m=8, with the optimal 4-stage partition of head_model()."""
    return _step_ms(balance.partition(head_model(), 4))


def _step_ms(part: balance.Partition) -> Any:
    """Makespan (ms) of 1F1B, p=4, m=8, with the stage costs of ``part``."""
    return bk.simulate(bk.schedule("1f1b", 4, 8), part.to_costs()).makespan


@exercise("05.6", unit=SLOTS, hint=(msg("Give planner.plan the recomputed costs as recompute=... and the budget of 4; then read "
                            "the time per microbatch (step time / m) of the fastest configuration that fits.",
                            "把重算后的耗时作为 recompute=... 传给 planner.plan，预算设为 4；再读出放得下的配置里"
                            "最快那个的每微批耗时（单步耗时 / m）。"),
                        msg("Give the time per microbatch (step time / m, in slots) of the best configuration that "
                            "fits the budget of 4, not its step time.",
                            "给出预算 4 以内最优配置的每微批耗时（单步耗时 / m，以时间槽计），不是它的单步耗"
                            "时。")),
          rel_tol=1e-9)
def _plan_best() -> Any:
    """Best time per microbatch (slots) for p=8, F=1, B=2, recompute 1/16 activations at +0.7 F, budget 4."""
    base = bk.Costs(f=1, b=2)
    rc = planner.with_recompute(base, activation=Fraction(1, 16), extra_backward=Fraction(7, 10))
    best = planner.plan(8, costs=base, recompute=rc, memory_budget=4, ms=(8, 16, 32)).best
    return None if best is None else best.time_per_microbatch


def _recompute_steps() -> tuple[Any, Any]:
    """Makespans (ms) of 1F1B, p=8, m=32, with the measured h=4096, seq=4096 costs: plain, recomputed."""
    plain, recomputed = planner.h200_recompute_costs(4096, 4096)
    return tuple(bk.simulate(bk.schedule("1f1b", 8, 32), c).makespan for c in (plain, recomputed))  # type: ignore[return-value]


def _extra_backward() -> float:
    """The backward's growth with full recomputation, in plain forwards (h=4096: the lesson's table)."""
    rec = next(c for c in planner.load_h200_recompute_costs()["configs"] if c["hidden"] == 4096)
    return float((rec["full"]["bwd_ms"] - rec["none"]["bwd_ms"]) / rec["none"]["F_ms"])


@exercise("05.7", hint=(msg("Simulate bk.schedule('1f1b', 8, 32) once with each of the two costs that "
                            "planner.h200_recompute_costs(4096, 4096) returns, and compare the makespans.",
                            "planner.h200_recompute_costs(4096, 4096) 返回两组耗时，分别用它们模拟 bk.schedul"
                            "e('1f1b', 8, 32)，比较单步耗时。"),
                        msg("Give how much longer the recomputed step is, as a fraction of the plain step: "
                            "recomputed makespan / plain makespan - 1.",
                            "给出重算后单步耗时多出的部分占原单步耗时的比例：重算后的单步耗时 / 原单步耗时"
                            " - 1。")),
          rel_tol=1e-3, fraction_of=msg("the plain step", "不重算时的单步耗时"),
          mistakes=(Mistake(lambda e: e + 1, msg("that is the ratio of the two steps; give how much longer: the ratio minus 1",
                                                 "这是两个单步耗时之比；要给的是多出多少：比值减 1")),
                    Mistake(lambda _e: _extra_backward(),
                            msg("that is one backward's growth in plain forwards; the question asks about the whole step",
                                "这是一个反向增加的耗时（以不重算的前向为单位）；题目问的是整步"))))
def _recompute_step() -> float:
    """How much longer (a fraction) 1F1B's step is with full recomputation, p=8, m=32, h=4096, seq=4096 (measured)."""
    plain, recomputed = _recompute_steps()
    return float(recomputed / plain - 1)


# ----------------------------------------------------------------------------- 05.8: Megatron's layout string

#: Exercise 05.8: p ranks, transformer layers, microbatches (1F1B), one layer's forward and backward (slots) and the
#: loss layer's (output projection + cross-entropy of a large vocabulary: four layers' time). The embedding is free.
LAYOUT_P, LAYOUT_LAYERS, LAYOUT_M = 4, 20, 16
LAYOUT_LAYER: tuple[int, int] = (1, 2)
LAYOUT_LOSS: tuple[int, int] = (4, 8)


def layout_costs(layout: layout_module.PipelineLayout) -> bk.Costs:
    """05.8's per-stage costs of ``layout`` (slots): each stage sums its layers (the loss costs :data:`LAYOUT_LOSS`).

    Raises ``TypeError`` when ``layout`` is not a :class:`~bubblekit.layout.PipelineLayout` (read a string with
    :func:`read_layout` or :func:`bubblekit.layout.parse_layout` first), ``ValueError`` for a stage with no work.
    """
    if not isinstance(layout, layout_module.PipelineLayout):
        raise TypeError(f"layout must be a PipelineLayout (bk.layout.parse_layout(text, p)), got {type(layout).__name__}")
    return layout.costs(*LAYOUT_LAYER, loss=LAYOUT_LOSS)


def layout_step(layout: layout_module.PipelineLayout) -> Any:
    """05.8: the makespan (slots) of 1F1B, p = 4, m = 16, with the stage costs of ``layout`` (a layout for p = 4;
    another p raises ``ValueError``, a non-layout ``TypeError``, as :func:`layout_costs`)."""
    if isinstance(layout, layout_module.PipelineLayout) and (layout.p, layout.v) != (LAYOUT_P, 1):
        raise ValueError(f"layout must have one stage on each of p = {LAYOUT_P} ranks, got p = {layout.p}, v = {layout.v}")
    return bk.simulate(bk.schedule("1f1b", LAYOUT_P, LAYOUT_M), layout_costs(layout)).makespan


def best_layout() -> layout_module.PipelineLayout:
    """05.8's balanced layout: the embedding, the 20 layers and the loss cut into 4 contiguous stages whose slowest
    stage is as fast as possible (:func:`bubblekit.analysis.balance.partition`, an exact dynamic program)."""
    f, b = LAYOUT_LAYER
    pieces = ([balance.Layer("E", f=0, b=0)] + [balance.Layer("t", f=f, b=b)] * LAYOUT_LAYERS
              + [balance.Layer("L", f=LAYOUT_LOSS[0], b=LAYOUT_LOSS[1])])
    part = balance.partition(pieces, LAYOUT_P)
    text = "|".join("".join(pieces[k].name for k in stage) for stage in part.stages)
    return layout_module.parse_layout(text, LAYOUT_P)


register({
    "checks.l05.layout_type": {
        "en": "give the layout as a string, like 'Et*3|t*4|t*4|t*3L' (got {t})",
        "zh": "请把布局写成字符串，例如 'Et*3|t*4|t*4|t*3L'（收到的是 {t}）"},
    "checks.l05.layout_bad": {
        "en": "Megatron-Core would refuse this layout: {e}",
        "zh": "Megatron 不接受这个布局：{e}"},
    "checks.l05.layout_stages": {
        "en": "the layout has {n} stages; the exercise asks for one stage per rank, {p} stages",
        "zh": "这个布局有 {n} 个流水级；题目要求每个 rank 一个流水级，共 {p} 个"},
    "checks.l05.layout_layers": {
        "en": "the layout holds {n} transformer layers; the model has {k}",
        "zh": "这个布局里有 {n} 个 Transformer 层；模型有 {k} 层"},
    "checks.l05.layout_empty": {
        "en": "stage {s} holds no layer, so it does no work: every rank needs something to compute",
        "zh": "第 {s} 级一层都没有，什么也不算：每个 rank 都要有活干"},
    "checks.l05.layout_even": {
        "en": "that is the even split, the same number of layers on every stage: the last stage also carries the loss, "
              "so it is the slowest",
        "zh": "这是平均切分，每级层数相同：最后一级还要算损失，所以它最慢"},
    "checks.l05.layout_slow": {
        "en": "a valid layout, but not the fastest: its slowest stage is stage {s}, {w:g} slots of forward + "
              "backward per microbatch; move layers away from it",
        "zh": "布局合法，但不是最快的：最慢的是第 {s} 级，每个微批的前向 + 反向要 {w:g} 个时间槽；"
              "把它的层挪走一些"},
})


def read_layout(answer: Any, p: int) -> tuple[layout_module.PipelineLayout | None, str]:
    """Read a learner's layout string for ``p`` ranks: ``(layout, "")`` or ``(None, why)`` (the why in the current
    language). Full-width characters of a Chinese input method (``｜``, ``＊``, ``（``) are read as their ASCII forms;
    a :class:`~bubblekit.layout.PipelineLayout` is taken as it is. Used by 05.8."""
    if isinstance(answer, layout_module.PipelineLayout):
        return answer, ""
    if not isinstance(answer, str):
        return None, tr("checks.l05.layout_type", t=type(answer).__name__)
    text = unicodedata.normalize("NFKC", answer).strip().strip("'\"“”‘’`")
    try:
        return layout_module.parse_layout(text, p), ""
    except (TypeError, ValueError) as err:
        return None, tr("checks.l05.layout_bad", e=err)


def _compare_layout(answer: Any, expected: Any) -> Graded:
    """05.8: a valid one-stage-per-rank layout of the 20 layers whose 1F1B step is as short as the balanced one's."""
    layout, why = read_layout(answer, LAYOUT_P)
    if layout is None:
        return Graded(False, why, FORMAT if isinstance(answer, str) and not answer.strip() else "")
    if layout.v != 1:
        return Graded(False, tr("checks.l05.layout_stages", n=len(layout.stages), p=LAYOUT_P), "shape")
    if layout.transformer_layers != LAYOUT_LAYERS or any(layout.count("m")):
        return Graded(False, tr("checks.l05.layout_layers", n=layout.transformer_layers, k=LAYOUT_LAYERS), "shape")
    empty = next((s for s, stage in enumerate(layout.stages) if not stage.strip("E")), None)
    if empty is not None:
        return Graded(False, tr("checks.l05.layout_empty", s=empty), "shape")
    step = layout_step(layout)
    if step <= expected:
        return Graded(True)
    if len(set(layout.count("t"))) == 1:
        return Graded(False, tr("checks.l05.layout_even"), "slow")
    costs = layout_costs(layout)
    work = [f + b for f, b in zip(costs.f, costs.b)]  # type: ignore[arg-type]
    slowest = max(range(len(work)), key=lambda s: work[s])
    return Graded(False, tr("checks.l05.layout_slow", s=slowest, w=work[slowest]), "slow")


LAYOUT_HINTS = (
    msg("Add up each stage's forward + backward: a layer costs 1 + 2 slots, the loss 4 + 8, the embedding nothing. "
        "The step follows the slowest stage.",
        "把每一级的前向 + 反向加起来：一层是 1 + 2 个时间槽，损失层是 4 + 8，嵌入层不计。单步耗时由最慢的一级决定。"),
    msg("The whole model costs the same however you cut it: aim for stages of equal work, so the stage with the loss "
        "gets fewer transformer layers. Check a layout with bk.layout.parse_layout(text, 4).costs(1, 2, loss=(4, 8)).",
        "不管怎么切，整个模型的总耗时都一样：目标是让每一级的活一样多，所以带损失层的那一级要少放几层。"
        "可以用 bk.layout.parse_layout 读入一个布局，算出每一级的耗时来检查。"),
)


@exercise("05.8", hint=LAYOUT_HINTS, compare=_compare_layout, kind_hints={"slow": LAYOUT_HINTS, "shape": LAYOUT_HINTS})
def _layout() -> Any:
    """The shortest 1F1B step (slots) any layout of 05.8's model reaches: the balanced layout's."""
    return layout_step(best_layout())


# ----------------------------------------------------------------------------- 05.9: Megatron's microbatch group size

#: Exercise 05.9: interleaved 1F1B, p ranks, m microbatches, v chunks, F = 1, B = 2 slots, a latency per hop (slots).
GROUP_P, GROUP_M, GROUP_V = 8, 32, 2
GROUP_COMM = Fraction(1, 2)


def group_choices() -> tuple[int, ...]:
    """The ``microbatch_group_size`` values Megatron-Core allows for 05.9's p and m (``microbatch_group_rule``)."""
    return tuple(g for g in range(GROUP_P, GROUP_M + 1) if microbatch_group_rule(GROUP_P, GROUP_M, g) is None)


def group_steps() -> dict[int, Any]:
    """05.9: the makespan (slots) of interleaved 1F1B for each allowed group size."""
    costs = bk.Costs(f=1, b=2, comm=GROUP_COMM)
    return {g: bk.simulate(bk.schedule("interleaved", GROUP_P, GROUP_M, GROUP_V, microbatch_group_size=g), costs).makespan
            for g in group_choices()}


register({
    "checks.l05.group_refused": {
        "en": "Megatron-Core refuses that group size here: {r}",
        "zh": "Megatron 在这里不接受这个分组大小：{r}"},
    "checks.l05.group_default": {
        "en": "that is Megatron's default (the group is p: depth-first); with a latency per hop a larger group is faster",
        "zh": "这是 Megatron 的默认值（分组大小等于 p，即深度优先）；每跳有延迟时，更大的分组更快"},
    "checks.l05.group_larger": {
        "en": "that group reaches the shortest step, but a smaller group reaches it too, with fewer activations held",
        "zh": "这个分组能达到最短的单步耗时，但更小的分组也能达到，而且保留的激活更少"},
    "checks.l05.group_slower": {
        "en": "that group's step is not the shortest: simulate every allowed group",
        "zh": "这个分组的单步耗时不是最短的：把每个允许的分组都模拟一遍"},
})


def _compare_group(answer: Any, expected: Any) -> Graded:
    """05.9: the smallest allowed group size whose step is the shortest; never "too high / too low"."""
    verdict = grade(answer, expected)
    if verdict.ok:
        return Graded(True, "", "")
    if verdict.shape:
        return Graded(False, verdict.detail, FORMAT if verdict.form else "")
    steps = group_steps()
    picked = next((g for g in steps if grade(answer, g).ok), None)
    if picked is None:
        whole = next((g for g in range(1, 4 * GROUP_M + 1) if grade(answer, g).ok), None)
        why = microbatch_group_rule(GROUP_P, GROUP_M, whole) if whole is not None else None
        if why is not None:
            return Graded(False, tr("checks.l05.group_refused", r=why), "")
        return Graded(False, tr("checks.choice_outside", choices=", ".join(map(str, steps))), "")
    if picked == GROUP_P:
        return Graded(False, tr("checks.l05.group_default"), "")
    if steps[picked] == min(steps.values()):
        return Graded(False, tr("checks.l05.group_larger"), "")
    return Graded(False, tr("checks.l05.group_slower"), "")


@exercise("05.9", hint=(msg("Simulate bk.schedule('interleaved', 8, 32, 2, microbatch_group_size=g) with "
                            "bk.Costs(f=1, b=2, comm=Fraction(1, 2)) for every g Megatron allows, and compare the makespans.",
                            "对 Megatron 允许的每个 g，用 bk.Costs(f=1, b=2, comm=Fraction(1, 2)) 模拟 p = 8、m = 32、v = 2 的"
                            "交错式 1F1B（microbatch_group_size=g），比较单步耗时。"),
                        msg("Several groups may tie for the shortest step; a larger group holds more activations, so "
                            "give the smallest of the tied ones. The allowed g: p <= g <= m, and the last group holds 0 "
                            "or at least p microbatches.",
                            "可能有几个分组并列最短；分组越大，保留的激活越多，所以给出并列者中最小的那个。"
                            "允许的 g：p <= g <= m，并且最后一组是 0 个微批或至少 p 个。")),
          compare=_compare_group)
def _group() -> int:
    """The smallest microbatch_group_size with the shortest interleaved 1F1B step (p = 8, m = 32, v = 2, comm = 1/2)."""
    steps = group_steps()
    return min(g for g, t in steps.items() if t == min(steps.values()))
