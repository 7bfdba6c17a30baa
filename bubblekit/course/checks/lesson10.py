"""The interview bank (``solutions/10_interview_bank.ipynb``): metadata, profiles and checks.

:data:`BANK` lists every question (id, category, a short title in English and Chinese,
whether ``check`` grades it). :func:`profile` returns the anonymised timelines the
"debugging a profile" questions read: plain :class:`bubblekit.Timeline` objects, so the
costs that produced them stay hidden. Derivation answers are sympy expressions in the
symbols of :mod:`bubblekit.symbolic` (plus ``t_i``, ``t_w`` below); each expected
expression is checked against the simulator before it is compared.

Hints here follow the interview rule of the grading policy: they point to the idea (what to
count, what to compare, which picture to draw) and never state the formula or the value that
answers the question; ``tests/test_grading.py`` checks that no hint evaluates to its answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import bubblekit as bk
from bubblekit import memory
from bubblekit.analysis import balance, planner
from bubblekit.course import published
from bubblekit.course.checks._grading import THE_STEP, AnyOf
from bubblekit.course.checks._mistakes import (
    fraction_of_step,
    megatron_overhead,
    swapped_pm,
    utilisation,
)
from bubblekit.course.checks._registry import Mistake, exercise
from bubblekit.course.checks.lesson07 import UNIFORM, WhiteboardTarget, target, whiteboard

__all__ = ["CATEGORIES", "BankItem", "BANK", "profile", "t_i", "t_w", "by_category"]

#: Category key -> (English, Chinese).
CATEGORIES: dict[str, tuple[str, str]] = {
    "concepts": ("concepts", "概念"),
    "derivations": ("derivations", "推导"),
    "calculations": ("calculations", "计算"),
    "trade-offs": ("design trade-offs", "设计权衡"),
    "profiles": ("debugging a profile", "性能剖析排错"),
    "whiteboard": ("whiteboard", "白板"),
}


@dataclass(frozen=True)
class BankItem:
    """One interview question: id ``"10.k"``, category key, short titles, and whether ``check`` grades it."""

    id: str
    category: str
    title_en: str
    title_zh: str
    checked: bool


BANK: tuple[BankItem, ...] = (
    BankItem("10.1", "concepts", "What (p-1)/m measures", "(p-1)/m 衡量的是什么", True),
    BankItem("10.2", "concepts", "Why GPipe and 1F1B have the same bubble", "为什么 GPipe 与 1F1B 气泡相同", False),
    BankItem("10.3", "concepts", "What 1F1B buys over GPipe", "1F1B 相比 GPipe 的收益", True),
    BankItem("10.4", "concepts", "Why splitting the backward helps", "为什么拆分反向传播有用", False),
    BankItem("10.5", "concepts", "Which backward part is on the critical path", "哪部分反向在关键路径上", True),
    BankItem("10.6", "concepts", "What grows with interleaving", "交错调度中哪些量会增长", True),
    BankItem("10.7", "concepts", "ZB-V versus ZB-H1", "ZB-V 与 ZB-H1 的区别", False),
    BankItem("10.8", "concepts", "Parameters per device in DualPipe and DualPipeV", "DualPipe 与 DualPipeV 每卡参数量", True),
    BankItem("10.9", "concepts", "Why zero bubble needs the optimizer sync bypassed", "为什么零气泡需要绕过优化器同步", False),
    BankItem("10.10", "concepts", "The critical path of a pipeline step", "流水线一步的关键路径", False),
    BankItem("10.11", "derivations", "Bubble fraction of GPipe", "GPipe 的气泡占比", True),
    BankItem("10.12", "derivations", "From fraction to Megatron's overhead", "从占比换算到 Megatron 的开销", True),
    BankItem("10.13", "derivations", "Interleaved bubble fraction", "交错调度的气泡占比", True),
    BankItem("10.14", "derivations", "ZB-H1 bubble time per rank", "ZB-H1 每卡气泡时间", True),
    BankItem("10.15", "derivations", "Smallest m for a target bubble", "达到目标气泡所需的最小 m", True),
    BankItem("10.16", "derivations", "GPipe makespan with a hop latency", "含通信延迟的 GPipe 总时长", True),
    BankItem("10.17", "derivations", "1F1B peak activations on rank r", "1F1B 第 r 卡的激活峰值", True),
    BankItem("10.18", "calculations", "Bubble fraction, p = 8, m = 32", "气泡占比，p = 8，m = 32", True),
    BankItem("10.19", "calculations", "Megatron overhead, p = 8, m = 32", "Megatron 开销，p = 8，m = 32", True),
    BankItem("10.20", "calculations", "Smallest m for 10 % at p = 16", "p = 16 时气泡 ≤ 10% 的最小 m", True),
    BankItem("10.21", "calculations", "Interleaved bubble, p = 8, m = 16, v = 4", "交错调度气泡，p = 8，m = 16，v = 4", True),
    BankItem("10.22", "calculations", "Dollars lost to a 12 % bubble", "12% 气泡损失多少美元", True),
    BankItem("10.23", "calculations", "ZB-H1 makespan, p = 4, m = 8", "ZB-H1 总时长，p = 4，m = 8", True),
    BankItem("10.24", "calculations", "1F1B step on measured H200 layers", "实测 H200 层上的 1F1B 步时", True),
    BankItem("10.25", "calculations", "Microbatches per pipeline, Megatron 1T", "Megatron 1T 每条流水线的微批数", True),
    BankItem("10.26", "calculations", "ZB-H2 peak memory, p = 8", "ZB-H2 显存峰值，p = 8", True),
    BankItem("10.27", "calculations", "Messages per step, 1F1B p = 8, m = 32", "1F1B 每步消息数，p = 8，m = 32", True),
    BankItem("10.28", "trade-offs", "Fastest schedule under a memory budget", "显存预算下最快的调度", True),
    BankItem("10.29", "trade-offs", "Double m or interleave?", "加倍 m 还是交错？", True),
    BankItem("10.30", "trade-offs", "Interleaving with a slow link", "慢链路上的交错调度", True),
    BankItem("10.31", "trade-offs", "What recomputation saves", "激活重算省了多少显存", True),
    BankItem("10.32", "trade-offs", "Balancing unequal layers", "不均衡层的切分", True),
    BankItem("10.33", "trade-offs", "ZB-H2 or ZB-V?", "选 ZB-H2 还是 ZB-V？", True),
    BankItem("10.34", "trade-offs", "DualPipeV's constraint on m", "DualPipeV 对 m 的约束", True),
    BankItem("10.35", "profiles", "Find the straggler", "找出拖后腿的卡", True),
    BankItem("10.36", "profiles", "Measured bubble of a trace", "从 trace 测气泡", True),
    BankItem("10.37", "profiles", "Read the hop latency off a trace", "从 trace 读出通信延迟", True),
    BankItem("10.38", "profiles", "Where is the largest gap?", "最大的空闲在哪里？", True),
    BankItem("10.39", "profiles", "Which lever for this profile?", "这个 profile 该用哪个手段？", True),
    BankItem("10.40", "whiteboard", "Write 1F1B for p = 3, m = 3", "写出 p = 3，m = 3 的 1F1B", True),
    BankItem("10.41", "whiteboard", "Beat 1F1B with a split backward", "用拆分反向超过 1F1B", True),
    BankItem("10.42", "whiteboard", "A schedule with no idle inside any rank", "每卡内部没有空闲的调度", True),
    BankItem("10.43", "trade-offs", "DualPipe or interleaved on the same devices?", "同样的卡数：DualPipe 还是交错调度？", True),
    BankItem("10.44", "trade-offs", "DualPipe or interleaved with the same memory?", "同样的显存：DualPipe 还是交错调度？", True),
)


def by_category() -> dict[str, list[BankItem]]:
    """The bank grouped by category key, in :data:`CATEGORIES` order."""
    out: dict[str, list[BankItem]] = {k: [] for k in CATEGORIES}
    for item in BANK:
        out[item.category].append(item)
    return out


# ----------------------------------------------------------------------------- helpers

try:  # sympy is a core dependency of the course, but keep the registry importable without it
    import sympy as _sp

    from bubblekit import symbolic as _sym

    #: Input-gradient time of one rank's share (the zero-bubble paper's T_B), a sympy symbol.
    t_i = _sp.Symbol("t_i", positive=True)
    #: Weight-gradient time of one rank's share (T_W), a sympy symbol.
    t_w = _sp.Symbol("t_w", positive=True)
except ImportError:  # pragma: no cover
    _sp = None  # type: ignore[assignment]
    t_i = t_w = None  # type: ignore[assignment]


def _letter(answer: Any, expected: Any) -> tuple[bool, str]:
    """Compare multiple-choice answers: one letter, or a set of letters, case-insensitive."""
    def norm(x: Any) -> Any:
        if isinstance(x, str):
            return frozenset(c for c in x.upper() if c.isalpha())
        if isinstance(x, (set, frozenset, list, tuple)):
            return frozenset(str(c).strip().upper() for c in x)
        return None

    a, e = norm(answer), norm(expected)
    if a is None:
        return False, f"answer with the letter(s) of your choice as a string, got {type(answer).__name__}"
    if not a:
        return False, "no letter chosen"
    if len(e) == 1 and len(a) > 1:
        return False, "choose one letter"
    if a == e:
        return True, ""
    if a < e:
        return False, "right so far, but something is missing"
    return False, "not the right choice"


def _anonymous(res: bk.SimResult) -> bk.Timeline:
    """A plain Timeline (labels only, costs hidden) with the same intervals, in ms."""
    starts, ends, labels = [], [], []
    for r in range(res.p):
        s, e, lb = res.arrays(r)
        starts.append(s)
        ends.append(e)
        labels.append([str(x) for x in lb])
    return bk.Timeline(starts, ends, labels, unit="ms", source="interview bank profile")


def _profile_result(k: int) -> bk.SimResult:
    if k in (1, 2):
        costs = bk.Costs(f=[2, 2, 3, 2], b=[4, 4, 6, 4], unit="ms")
        return bk.simulate(bk.schedule("1f1b", 4, 8), costs)
    if k == 3:
        return bk.simulate(bk.schedule("1f1b", 4, 8), bk.Costs(f=2, b=4, comm=Fraction(3, 10), unit="ms"))
    if k == 4:
        return bk.simulate(bk.schedule("gpipe", 4, 6), bk.Costs(f=2, b=4, unit="ms"))
    if k == 5:
        costs = bk.Costs(f=[2, 2, 2, 4], b=[4, 4, 4, 8], unit="ms")
        return bk.simulate(bk.schedule("1f1b", 4, 32), costs)
    raise ValueError(f"profile k must be 1..5, got {k!r}")


def profile(k: int) -> bk.Timeline:
    """The anonymised trace of profile ``k`` (1..5): per-rank intervals in ms, labelled ``0F3``."""
    return _anonymous(_profile_result(k))


# ----------------------------------------------------------------------------- concepts


@exercise("10.1", hint=("Take p = 8, m = 4: the number is then larger than 1. Which of the four can exceed 1?",
                        "Simulate 1F1B for p = 8, m = 4 and compare the number with r.bubble_ratio and "
                        "r.bubble_overhead: which definition does each follow?"),
          compare=_letter)
def _q1() -> str:
    r = bk.simulate(bk.schedule("1f1b", 8, 4), bk.Costs(f=1, b=2))
    return "B" if abs(r.bubble_overhead - 7 / 4) < 1e-12 else "A"


@exercise("10.3", hint=("Simulate both for p=4, m=8 and compare makespan, peak_activations and hops_per_step.",
                        "Only one of the three differs between GPipe and 1F1B with equal stages: which one, and "
                        "why does the order of F and B change it?"),
          compare=_letter)
def _q3() -> str:
    g = bk.simulate(bk.schedule("gpipe", 4, 8), bk.Costs(f=1, b=2))
    o = bk.simulate(bk.schedule("1f1b", 4, 8), bk.Costs(f=1, b=2))
    assert g.makespan == o.makespan and planner.hops_per_step(g.schedule) == planner.hops_per_step(o.schedule)
    return "B" if o.max_peak_activations < g.max_peak_activations else "A"


@exercise("10.5", hint=("Follow one microbatch's backward from the last stage to the first: what does stage s - 1 "
                        "need from stage s before it can continue?",
                        "One of the two products is sent to the previous stage; the other is only used by the "
                        "optimizer step at the end."),
          compare=_letter)
def _q5() -> str:
    return "A"  # I (dX) feeds stage s-1; W (dW) feeds only the optimizer step


@exercise("10.6", hint=("Compare interleaved v=2 with 1F1B (v=1): hops_per_step, peak_activations[0], total busy time.",
                        "Simulate both for p = 4, m = 8 with F = 1, B = 2 and look at each quantity in turn; more "
                        "than one letter may apply."),
          compare=_letter)
def _q6() -> frozenset[str]:
    costs = bk.Costs(f=1, b=2)
    one = bk.simulate(bk.schedule("1f1b", 4, 8), costs)
    two = bk.simulate(bk.schedule("interleaved", 4, 8, 2), costs)
    grows = set()
    if two.bubble_ratio > one.bubble_ratio:
        grows.add("A")
    if planner.hops_per_step(two.schedule) > planner.hops_per_step(one.schedule):
        grows.add("B")
    if two.peak_activations[0] > one.peak_activations[0]:
        grows.add("C")
    if sum(two.busy) > sum(one.busy):
        grows.add("D")
    return frozenset(grows)


def _dualpipev_parameters() -> Fraction:
    """DualPipeV's parameters per device relative to 1F1B with the same number of stages PP.

    1F1B with PP stages holds one stage (1/PP of the model) per device; DualPipeV holds the
    stages that ``stages_of(0)`` lists, each 1/PP of the model, on PP/2 devices.
    """
    s = bk.schedule("dualpipev", 4, 8)
    return Fraction(len(s.stages_of(0)), 1)


def _dualpipe_parameters() -> Fraction:
    """DualPipe's parameters per device relative to 1F1B on PP stages, from the DualPipe README's table."""
    row = next(r for r in published.DUALPIPE_README if r[0] == "DualPipe")
    return Fraction(row[2]["parameter"].strip().rstrip("x\u00d7"))


@exercise("10.8", hint=("Count the stages (model chunks) one device holds, and compare with 1F1B on the same "
                        "number of stages, where each device holds one.",
                        "bk.schedule('dualpipev', 4, 8).stages_of(0) shows what one DualPipeV device holds; DualPipe "
                        "runs a second direction over the same devices, with its own copy of each stage."),
          compare=_letter)
def _q8() -> str:
    letters = {(1, 2): "A", (2, 2): "B", (2, 1): "C", (1, 1): "D"}
    return letters[(int(_dualpipe_parameters()), int(_dualpipev_parameters()))]


# ----------------------------------------------------------------------------- derivations


def _b_symbol() -> Any:
    """The article's bubble fraction b as a sympy symbol (questions 10.12)."""
    return _sp.Symbol("b", positive=True)


def _value(expr: Any, vals: dict[str, Any]) -> Fraction:
    """Exact value of a sympy expression for named values (``p, m, v, t_f, t_b, c, t_i, t_w``)."""
    table = {"p": _sym.p, "m": _sym.m, "v": _sym.v, "t_f": _sym.t_f, "t_b": _sym.t_b, "c": _sym.comm,
             "t_i": t_i, "t_w": t_w}
    out = _sp.nsimplify(_sp.sympify(expr).subs({table[k]: _sp.Rational(str(Fraction(x))) for k, x in vals.items()}))
    if out.free_symbols:
        raise AssertionError(f"symbols left after substitution: {out.free_symbols}")
    return Fraction(int(out.p), int(out.q))


def _assert_matches(expr: Any, fn: Any, samples: list[dict[str, Any]]) -> Any:
    """Check ``expr`` against the simulator (``fn(values)``) at each sample, then return it."""
    for vals in samples:
        got, want = _value(expr, vals), Fraction(fn(vals))
        if got != want:
            raise AssertionError(f"expected expression disagrees with the simulator at {vals}: {got} != {want}")
    return expr


@exercise("10.11", hint=("Write GPipe's makespan (the fill, the steady part, the drain) and each rank's busy time, "
                         "then take idle over p x makespan.",
                         "How many slots of width t_f + t_b does the step last, and for how many of them is one "
                         "rank busy?"),
          mistakes=(Mistake(lambda _e: _sym.MEGATRON_OVERHEAD,
                            "that is Megatron's overhead (bubble over busy time); this asks for the fraction of "
                            "the whole step"),))
def _q11() -> Any:
    expr = _sym.bubble_fraction(_sym.makespan_gpipe(), _sym.busy_per_rank())
    return _assert_matches(expr, lambda d: bk.simulate(bk.schedule("gpipe", d["p"], d["m"]), bk.Costs(
        f=d["t_f"], b=d["t_b"])).bubble_ratio_exact, [{"p": 4, "m": 8, "t_f": 1, "t_b": 2}, {"p": 3, "m": 5, "t_f": 2, "t_b": 3}])


@exercise("10.12", hint=("Write the busy time as the total time minus the idle time.",
                         "Then divide the numerator and the denominator by the total time: what is idle over total "
                         "called?"),
          mistakes=(Mistake(lambda _e: _b_symbol() / (1 + _b_symbol()),
                            "that converts the other way, from the overhead to the fraction"),))
def _q12() -> Any:
    b = _b_symbol()
    expr = _sym.overhead_of(b)
    assert bk.overhead_from_ratio(0.25) == float(expr.subs(b, Fraction(1, 4)))
    return expr


@exercise("10.13", hint=("With v chunks every action is 1/v as long, so the ramps shrink by v but the work does not.",
                         "Write the makespan as the steady work plus the fill and drain, with the ramp actions 1/v "
                         "as long, then take the idle share of the step."),
          mistakes=(Mistake(lambda _e: _sym.BUBBLE_RATIO,
                            "that is plain 1F1B's fraction: where do the v chunks enter?"),))
def _q13() -> Any:
    expr = _sym.bubble_fraction(_sym.makespan_interleaved(), _sym.busy_per_rank())
    return _assert_matches(expr, lambda d: bk.simulate(bk.schedule("interleaved", d["p"], d["m"], d["v"]), bk.Costs(
        f=d["t_f"], b=d["t_b"])).bubble_ratio_exact, [{"p": 4, "m": 8, "v": 2, "t_f": 1, "t_b": 2},
                                                     {"p": 2, "m": 4, "v": 3, "t_f": 3, "t_b": 3}])


@exercise("10.14", hint=("Start from 1F1B's bubble per rank with B split into I and W; then ask which idle slots a "
                         "delayed W can fill.",
                         "Draw ZB-H1 for p = 3 with W much shorter than F and I: count the W passes that sit in "
                         "rank 0's warm-up and cool-down gaps."))
def _q14() -> Any:
    expr = (_sym.p - 1) * (_sym.t_f + t_i - t_w)

    def sim(d: dict[str, Any]) -> Any:
        res = bk.simulate(bk.schedule("zb-h1", d["p"], d["m"]), bk.Costs(f=d["t_f"], i=d["t_i"], w=d["t_w"]))
        return Fraction(published.max_rank_bubble_time(res)).limit_denominator(1000)

    return _assert_matches(expr, sim, [{"p": 4, "m": 8, "t_f": 2, "t_i": 3, "t_w": 1},
                                       {"p": 3, "m": 6, "t_f": 1, "t_i": 1, "t_w": 1}])


@exercise("10.15", hint=("Set the bubble fraction equal to the target and solve for m.",
                         "Cross-multiply and collect the terms in m; sp.solve does the algebra."))
def _q15() -> Any:
    expr = _sym.solve_min_m()
    assert _sym.min_micro_batch(8, Fraction(1, 5)) == bk.min_micro_batch(8, 0.2)
    return expr


@exercise("10.16", hint=("Start from GPipe's makespan without latency; then ask which waits on the critical path "
                         "now include a hop.",
                         "Follow the critical path: how many links does the first forward cross on its way down, and "
                         "the last backward on its way up?"),
          mistakes=(Mistake(lambda _e: _sym.makespan_gpipe() + (_sym.p - 1) * _sym.comm,
                            "that pays the latency on one way only; the gradients cross the links back too"),))
def _q16() -> Any:
    expr = _sym.makespan_gpipe(comm=_sym.comm)
    samples: list[tuple[int, int, int, int, Fraction]] = [(4, 8, 1, 2, Fraction(1, 2)), (3, 5, 2, 3, Fraction(1))]
    for p_, m_, f_, b_, c_ in samples:
        sim = bk.simulate(bk.schedule("gpipe", p_, m_), bk.Costs(f=f_, b=b_, comm=c_)).makespan
        assert _sym.evaluate(expr, p=p_, m=m_, t_f=f_, t_b=b_, c=c_) == sim
    return expr


@exercise("10.17", hint=("Count the warm-up forwards rank r runs before its first backward (m >= p).",
                         "Write 1F1B for p = 4 and read each rank's warm-up: how does its length depend on r?"))
def _q17() -> Any:
    r = _sp.Symbol("r", integer=True, nonnegative=True)
    expr = _sym.p - r
    res = bk.simulate(bk.schedule("1f1b", 5, 10), bk.Costs(f=1, b=2))
    assert all(res.peak_activations[k] == float(expr.subs({_sym.p: 5, r: k})) for k in range(5))
    return expr


# ----------------------------------------------------------------------------- calculations


@exercise("10.18", hint=("This is the fraction of the whole step (idle over p x makespan), not Megatron's ratio: "
                         "compare the fill and drain with the steady part.",
                         "Use the closed form you derived for GPipe and 1F1B at these p and m, or simulate 1F1B "
                         "and read bubble_ratio."),
          fraction_of=THE_STEP,
          mistakes=(megatron_overhead(8, 32), swapped_pm(bk.bubble_ratio, 8, 32), utilisation()))
def _q18() -> float:
    return bk.bubble_ratio(8, 32)


@exercise("10.19", hint=("Megatron divides the same bubble time by something other than the whole step: by what?",
                         "Bubble time over ideal (busy) time: simulate 1F1B for p = 8, m = 32 and read "
                         "bubble_overhead, or use the paper's closed form."),
          fraction_of="the busy time",
          mistakes=(fraction_of_step(8, 32), swapped_pm(bk.bubble_overhead, 8, 32)))
def _q19() -> float:
    return bk.bubble_overhead(8, 32)


@exercise("10.20", hint=("Write the bubble fraction for p = 16 as a function of m and find where it falls to 10 %.",
                         "Solve the inequality for m, then round up: m must be whole, and one fewer must miss the "
                         "target."),
          mistakes=(Mistake(lambda e: e - 1, "that m misses the target by a hair: round up, not down"),))
def _q20() -> int:
    m = bk.min_micro_batch(16, 0.1)
    assert m is not None
    return m


@exercise("10.21", hint=("With v chunks per rank the ramp actions are 1/v as long while the steady part is not: "
                         "how does that change the fill and drain?",
                         "Start from the plain 1F1B fraction for p = 8, m = 16 and ask which term the v divides."),
          fraction_of=THE_STEP,
          mistakes=(Mistake(lambda _e: bk.bubble_ratio(8, 16),
                            "that is plain 1F1B's fraction (v = 1); interleaving shrinks it"),
                    megatron_overhead(8, 16, 4)))
def _q21() -> float:
    return bk.simulate(bk.schedule("interleaved", 8, 16, 4), bk.Costs(f=1, b=2)).bubble_ratio


@exercise("10.22", hint=("First the cost of the whole run, then the share of it that is bubble.",
                         "The run's cost counts every GPU for every hour of the 30 days at the price; the bubble is "
                         "a fraction of it (not a percentage)."),
          rel_tol=1e-9)
def _q22() -> float:
    return 1024 * 30 * 24 * 2.0 * 0.12


@exercise("10.23", hint=("The makespan is one rank's busy time plus its bubble; 10.14 asks for ZB-H1's bubble per rank.",
                         "Add the work one rank does for all m microbatches to the ZB-H1 bubble you derived, or "
                         "simulate it with F = I = W = 1."))
def _q23() -> Any:
    return bk.simulate(bk.schedule("zb-h1", 4, 8), UNIFORM).makespan


@exercise("10.24", hint=("Equal stages and no latency: a 1F1B step lasts a whole number of (F + B) slots. How many?",
                         "Read F and B of the measured layer from bk.h200_costs() (in ms) and count the slots of "
                         "the step."),
          rel_tol=1e-9)
def _q24() -> float:
    return float(bk.simulate(bk.schedule("1f1b", 4, 8), bk.h200_costs()).makespan)


@exercise("10.25", hint=("First: how many copies of the pipeline (data-parallel replicas) fit on the GPUs?",
                         "Each GPU belongs to one tensor-parallel group of one stage of one replica; the replicas "
                         "share the global batch."))
def _q25() -> int:
    return published.MEGATRON_TABLE1[-1].microbatches(1)


@exercise("10.26", hint=("ZB-H2 fills the warm-up bubble with extra forwards: how many forwards does rank 0 run before "
                         "its first backward?",
                         "Simulate ZB-H2 for a small p (3 or 4), read max_peak_activations, and find the pattern in p."))
def _q26() -> float:
    return bk.simulate(bk.schedule("zb-h2", 8, 16), UNIFORM).max_peak_activations


@exercise("10.27", hint=("Count the links between neighbouring ranks, then how often one microbatch crosses each.",
                         "A microbatch's activation goes down every link and its gradient comes back up."),
          mistakes=(Mistake(lambda e: e // 2, "that counts one direction only: gradients travel back over every "
                                              "link too"),))
def _q27() -> int:
    return planner.hops_per_step(bk.schedule("1f1b", 8, 32))


# ----------------------------------------------------------------------------- trade-offs

_T1_CANDIDATES = (("gpipe", None), ("1f1b", None), ("interleaved", 2), ("zb-h1", None), ("zb-h2", None),
                  ("zbv", None), ("dualpipev", None))


def _fastest_within(budget: float, p: int, m: int) -> AnyOf:
    """Every candidate within ``budget`` whose makespan is the shortest (ties: each is right)."""
    fits: dict[str, float] = {}
    for name, v in _T1_CANDIDATES:
        res = bk.simulate(bk.schedule(name, p, m, v), UNIFORM)
        if res.max_peak_activations <= budget:
            fits[name] = float(res.makespan)
    assert fits
    best = min(fits.values())
    return AnyOf(name for name, t in fits.items() if abs(t - best) <= 1e-9 * abs(best))


@exercise("10.28", hint=("Simulate each candidate with F = I = W = 1; drop those whose largest peak exceeds 5.",
                         "Among those that fit, compare makespans; if two tie, either is right."))
def _q28() -> AnyOf:
    return _fastest_within(5, 4, 16)


@exercise("10.29", hint=("Write both bubble fractions side by side: the plain one with m doubled, the interleaved one "
                         "with v = 2.",
                         "Where does v enter the interleaved fraction, and where does the doubled m enter the plain one?"),
          compare=_letter)
def _q29() -> str:
    a, b = bk.bubble_ratio(8, 16), bk.bubble_ratio(8, 8, 2)
    return "C" if a == b else ("A" if a < b else "B")


@exercise("10.30", hint=("Simulate both with bk.Costs(f=1, b=2, comm=1) and compare makespans.",
                         "Interleaving shortens the ramps but sends more messages: with a slow link, which effect "
                         "is bigger here? Answer with the registry name."))
def _q30() -> str:
    costs = bk.Costs(f=1, b=2, comm=1)
    one = bk.simulate(bk.schedule("1f1b", 4, 8), costs).makespan
    two = bk.simulate(bk.schedule("interleaved", 4, 8, 2), costs).makespan
    return "1f1b" if one < two else "interleaved"


@exercise("10.31", hint=("planner.h200_recompute_costs() returns (plain, recomputed); compare their activation.",
                         "The factor is how many times larger the plain activation is than the recomputed one."),
          rel_tol=1e-9,
          mistakes=(Mistake(lambda e: 1 / e, "that ratio is upside down: the factor by which the activations shrink "
                                             "is plain over recomputed"),))
def _q31() -> float:
    plain, rec = planner.h200_recompute_costs()
    return float(plain.activation) / float(rec.activation)  # type: ignore[arg-type]


_LAYERS = (3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8)


@exercise("10.32", hint=("No stage can be faster than the heaviest layer, nor than the total divided by 4: try "
                         "boundaries between those bounds.",
                         "For a guess T of the slowest stage, cut greedily whenever a stage would exceed T: does it "
                         "need more than 4 stages? Lower T until it does."))
def _q32() -> Any:
    return balance.bottleneck(list(_LAYERS), 4)


@exercise("10.33", hint=("Same bubble at F = I = W; compare max_peak_activations for p = 8, m = 24.",
                         "Which placement lets rank 0 start its backwards without a round trip through the other ranks?"),
          compare=_letter)
def _q33() -> str:
    h2 = bk.simulate(bk.schedule("zb-h2", 8, 24), UNIFORM)
    zv = bk.simulate(bk.schedule("zbv", 8, 24), UNIFORM)
    return "B" if zv.max_peak_activations < h2.max_peak_activations else "A"


def _dualpipev_min_m(p: int) -> int:
    for m in range(1, 8 * p):
        try:
            bk.schedule("dualpipev", p, m)
            return m
        except ValueError:
            continue
    raise AssertionError("no m accepted")


@exercise("10.34", hint=("Try bk.schedule('dualpipev', 4, m) for m = 1, 2, ...; read the error message.",
                         "The error names the rule: at least one microbatch per stage, and DualPipeV has two stages "
                         "per rank."))
def _q34() -> int:
    return _dualpipev_min_m(4)


#: 10.43 and 10.44: a 32-layer GPT (h = 4096, seq 4096, the measured H200 layer) on 8 devices, m = 32.
_MODEL_32 = memory.Model(layers=32, hidden=4096, heads=32, seq=4096, name="32-layer GPT, h = 4096")
_VERSUS = (("interleaved", 2), ("dualpipe", None), ("dualpipev", None))


def _versus_same_devices() -> str:
    """A: DualPipe lower bubble and more memory; B: DualPipe lower bubble, interleaved more memory; C, D: interleaved lower."""
    rows = {r["schedule"]: r for r in memory.frontier(_MODEL_32, 8, 32, schedules=_VERSUS)}
    dual, inter = rows["DualPipe"], rows["interleaved 1F1B v=2"]
    lower = "dualpipe" if dual["bubble_ratio"] < inter["bubble_ratio"] else "interleaved"
    more = "dualpipe" if dual["total"] > inter["total"] else "interleaved"
    return {("dualpipe", "dualpipe"): "A", ("dualpipe", "interleaved"): "B",
            ("interleaved", "dualpipe"): "C", ("interleaved", "interleaved"): "D"}[(lower, more)]


@exercise("10.43", hint=("Put both on the same 8 devices with the same model and m, and read two numbers for each: the "
                         "bubble_ratio and the memory of the fullest device.",
                         "bubblekit.memory.frontier(model, 8, 32) tabulates both; remember what DualPipe keeps twice."),
          compare=_letter)
def _q43() -> str:
    return _versus_same_devices()


def _fastest_in_memory(gb: float) -> str:
    """Among DualPipe, DualPipeV and interleaved v = 2 on 8 devices: the fastest per microbatch that fits ``gb`` GB."""
    t = planner.plan(8, costs=bk.h200_costs(), schedules=("interleaved", "dualpipe", "dualpipev"), vs=(2,), ms=(32,),
                     model=_MODEL_32, gpu_memory=gb * memory.GB)
    assert t.best is not None
    return t.best.schedule


@exercise("10.44", hint=("Give every candidate the same memory budget per device, drop the ones that do not fit, then "
                         "compare the time per microbatch of the rest.",
                         "planner.plan(8, costs=bk.h200_costs(), schedules=(...), vs=(2,), ms=(32,), model=model, "
                         "gpu_memory=40 * memory.GB) does both; answer with the registry name."))
def _q44() -> str:
    return _fastest_in_memory(40)


# ----------------------------------------------------------------------------- profiles


@exercise("10.35", hint=("A straggler does the same work more slowly than its neighbours: compare the ranks' busy times.",
                         "lesson10.profile(1).busy lists them; the others wait for the one with the most."))
def _q35() -> int:
    busy = profile(1).busy
    return max(range(len(busy)), key=lambda r: busy[r])


@exercise("10.36", hint=("Add the idle time of every rank inside the step and compare it with all the device-time of "
                         "the step.",
                         "tl.idle lists each rank's idle time and tl.makespan the step; tl.p is the number of ranks."),
          rel_tol=1e-9,
          fraction_of=THE_STEP,
          mistakes=(Mistake(lambda _e: sum(profile(2).idle) / sum(profile(2).busy),
                            "that divides the idle time by the busy time (Megatron's overhead); the bubble_ratio "
                            "divides by all device-time"),
                    utilisation()))
def _q36() -> float:
    return profile(2).bubble_ratio


@exercise("10.37", hint=("Rank 1's first forward can start only when rank 0's first forward has ended plus one hop.",
                         "Subtract the end of rank 0's first span from the start of rank 1's first span (in ms)."),
          rel_tol=1e-6)
def _q37() -> float:
    tl = profile(3)
    first1 = next(iter(tl.spans(1)))
    first0 = next(iter(tl.spans(0)))
    return float(first1.start - first0.end)


@exercise("10.38", hint=("largest_gaps(1) gives the longest idle interval and the rank it is on.",
                         "In GPipe, which rank waits longest between its last forward and its first backward?"))
def _q38() -> int:
    return profile(4).largest_gaps(1)[0].rank


@exercise("10.39", hint=("Compare the ranks' busy times in profile(5): are they equal?",
                         "More microbatches or chunks shrink the ramps, not a stage that is slower than the others."),
          compare=_letter)
def _q39() -> str:
    busy = profile(5).busy
    return "C" if max(busy) > 1.2 * min(busy) else "A"


# ----------------------------------------------------------------------------- whiteboard

_B2F = bk.Costs(f=1, b=2)


@exercise("10.40", hint=("Each rank warms up with some forwards, then alternates one backward and one forward, then "
                         "drains its backwards.",
                         "The last rank runs each backward right after its forward; each earlier rank warms up with "
                         "one more forward than the rank after it."),
          compare=whiteboard)
def _q40() -> WhiteboardTarget:
    ref = bk.simulate(bk.schedule("1f1b", 3, 3), _B2F)
    return target(3, 3, _B2F, ref.makespan, cap=ref.max_peak_activations, split=False)


@exercise("10.41", hint=("Keep 1F1B's order with B split into I then W, then delay some W into the gaps.",
                         "Run each I as soon as its gradient arrives (it is on the critical path) and keep a W back "
                         "for the moments a rank would otherwise wait."),
          compare=whiteboard)
def _q41() -> WhiteboardTarget:
    ref = bk.simulate(bk.schedule("zb-h1", 2, 4), UNIFORM)
    return target(2, 4, UNIFORM, ref.makespan, cap=2)


@exercise("10.42", hint=("Let rank 0 run extra forwards in its warm-up, then keep every rank busy with F, I, W.",
                         "A rank is idle inside its span only when its next action waits for another rank: give "
                         "each rank's early part forwards and its late part W passes."),
          compare=whiteboard)
def _q42() -> WhiteboardTarget:
    ref = bk.simulate(bk.schedule("zb-h2", 3, 5), UNIFORM)
    assert published.stage_span_bubble_rate(ref) == 0
    return target(3, 5, UNIFORM, 5 * 3, cap=5, measure="stage_span")
