"""The interview bank (``solutions/10_interview_bank.ipynb``): metadata, profiles and checks.

:data:`BANK` lists every question (id, category, a short title in English and Chinese,
whether ``check`` grades it). :func:`profile` returns the anonymised timelines the
"debugging a profile" questions read: plain :class:`bubblekit.Timeline` objects, so the
costs that produced them stay hidden. Derivation answers are sympy expressions in the
symbols of :mod:`bubblekit.symbolic` (plus ``t_i``, ``t_w`` below); each expected
expression is checked against the simulator before it is compared.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import bubblekit as bk
from bubblekit.analysis import balance, planner
from bubblekit.course import published
from bubblekit.course.checks._registry import exercise
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


@exercise("10.1", hint="Megatron divides the bubble by the ideal (busy) time; the article divides by the whole step.",
          compare=_letter)
def _q1() -> str:
    r = bk.simulate(bk.schedule("1f1b", 8, 4), bk.Costs(f=1, b=2))
    return "B" if abs(r.bubble_overhead - 7 / 4) < 1e-12 else "A"


@exercise("10.3", hint="Simulate both for p=4, m=8 and compare makespan, peak_activations and hops_per_step.",
          compare=_letter)
def _q3() -> str:
    g = bk.simulate(bk.schedule("gpipe", 4, 8), bk.Costs(f=1, b=2))
    o = bk.simulate(bk.schedule("1f1b", 4, 8), bk.Costs(f=1, b=2))
    assert g.makespan == o.makespan and planner.hops_per_step(g.schedule) == planner.hops_per_step(o.schedule)
    return "B" if o.max_peak_activations < g.max_peak_activations else "A"


@exercise("10.5", hint="Which of I and W produces the gradient the previous stage waits for?", compare=_letter)
def _q5() -> str:
    return "A"  # I (dX) feeds stage s-1; W (dW) feeds only the optimizer step


@exercise("10.6", hint="Compare interleaved v=2 with 1F1B (v=1): hops_per_step, peak_activations[0], total busy time.",
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


@exercise("10.8", hint="DualPipe keeps two copies (one per direction); DualPipeV folds the V onto half the devices.",
          compare=_letter)
def _q8() -> str:
    s = bk.schedule("dualpipev", 4, 8)
    per_rank = len(s.stages_of(0)) / s.n_stages  # share of the model on one rank
    return "C" if abs(per_rank - 1 / s.p) < 1e-12 else "D"


# ----------------------------------------------------------------------------- derivations


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


@exercise("10.11", hint="Makespan (m+p-1)(t_f+t_b), busy m(t_f+t_b) per rank: idle over p x makespan.")
def _q11() -> Any:
    expr = _sym.bubble_fraction(_sym.makespan_gpipe(), _sym.busy_per_rank())
    return _assert_matches(expr, lambda d: bk.simulate(bk.schedule("gpipe", d["p"], d["m"]), bk.Costs(
        f=d["t_f"], b=d["t_b"])).bubble_ratio_exact, [{"p": 4, "m": 8, "t_f": 1, "t_b": 2}, {"p": 3, "m": 5, "t_f": 2, "t_b": 3}])


@exercise("10.12", hint="Idle/busy = idle/(total - idle); divide top and bottom by the total.")
def _q12() -> Any:
    b = _sp.Symbol("b", positive=True)
    expr = _sym.overhead_of(b)
    assert bk.overhead_from_ratio(0.25) == float(expr.subs(b, Fraction(1, 4)))
    return expr


@exercise("10.13", hint="With v chunks every action is 1/v as long, so the ramps shrink by v but the work does not.")
def _q13() -> Any:
    expr = _sym.bubble_fraction(_sym.makespan_interleaved(), _sym.busy_per_rank())
    return _assert_matches(expr, lambda d: bk.simulate(bk.schedule("interleaved", d["p"], d["m"], d["v"]), bk.Costs(
        f=d["t_f"], b=d["t_b"])).bubble_ratio_exact, [{"p": 4, "m": 8, "v": 2, "t_f": 1, "t_b": 2},
                                                     {"p": 2, "m": 4, "v": 3, "t_f": 3, "t_b": 3}])


@exercise("10.14", hint="1F1B idles (p-1)(t_f+t_i+t_w) per rank; ZB-H1's delayed W passes fill 2(p-1)t_w of it.")
def _q14() -> Any:
    expr = (_sym.p - 1) * (_sym.t_f + t_i - t_w)

    def sim(d: dict[str, Any]) -> Any:
        res = bk.simulate(bk.schedule("zb-h1", d["p"], d["m"]), bk.Costs(f=d["t_f"], i=d["t_i"], w=d["t_w"]))
        return Fraction(published.max_rank_bubble_time(res)).limit_denominator(1000)

    return _assert_matches(expr, sim, [{"p": 4, "m": 8, "t_f": 2, "t_i": 3, "t_w": 1},
                                       {"p": 3, "m": 6, "t_f": 1, "t_i": 1, "t_w": 1}])


@exercise("10.15", hint="Solve (p-1)/(m+p-1) = b* for m.")
def _q15() -> Any:
    expr = _sym.solve_min_m()
    assert _sym.min_micro_batch(8, Fraction(1, 5)) == bk.min_micro_batch(8, 0.2)
    return expr


@exercise("10.16", hint="The first forward crosses p-1 links, the last backward crosses them again on the way back.")
def _q16() -> Any:
    expr = _sym.makespan_gpipe(comm=_sym.comm)
    samples: list[tuple[int, int, int, int, Fraction]] = [(4, 8, 1, 2, Fraction(1, 2)), (3, 5, 2, 3, Fraction(1))]
    for p_, m_, f_, b_, c_ in samples:
        sim = bk.simulate(bk.schedule("gpipe", p_, m_), bk.Costs(f=f_, b=b_, comm=c_)).makespan
        assert _sym.evaluate(expr, p=p_, m=m_, t_f=f_, t_b=b_, c=c_) == sim
    return expr


@exercise("10.17", hint="Count the warm-up forwards rank r runs before its first backward (m >= p).")
def _q17() -> Any:
    r = _sp.Symbol("r", integer=True, nonnegative=True)
    expr = _sym.p - r
    res = bk.simulate(bk.schedule("1f1b", 5, 10), bk.Costs(f=1, b=2))
    assert all(res.peak_activations[k] == float(expr.subs({_sym.p: 5, r: k})) for k in range(5))
    return expr


# ----------------------------------------------------------------------------- calculations


@exercise("10.18", hint="(p-1)/(m+p-1).")
def _q18() -> float:
    return bk.bubble_ratio(8, 32)


@exercise("10.19", hint="(p-1)/m: bubble time over ideal time.")
def _q19() -> float:
    return bk.bubble_overhead(8, 32)


@exercise("10.20", hint="Smallest whole m with (p-1)/(m+p-1) <= 0.1.")
def _q20() -> int:
    m = bk.min_micro_batch(16, 0.1)
    assert m is not None
    return m


@exercise("10.21", hint="(p-1)/(m v + p - 1).")
def _q21() -> float:
    return bk.simulate(bk.schedule("interleaved", 8, 16, 4), bk.Costs(f=1, b=2)).bubble_ratio


@exercise("10.22", hint="GPUs x hours x price x bubble fraction.", rel_tol=1e-9)
def _q22() -> float:
    return 1024 * 30 * 24 * 2.0 * 0.12


@exercise("10.23", hint="m(F+I+W) + (p-1)(F+I-W) slots.")
def _q23() -> Any:
    return bk.simulate(bk.schedule("zb-h1", 4, 8), UNIFORM).makespan


@exercise("10.24", hint="bk.simulate(bk.schedule('1f1b', 4, 8), bk.h200_costs()).makespan, in ms.", rel_tol=1e-9)
def _q24() -> float:
    return float(bk.simulate(bk.schedule("1f1b", 4, 8), bk.h200_costs()).makespan)


@exercise("10.25", hint="Data-parallel replicas = GPUs / (TP x PP); microbatches = batch / replicas (micro-batch 1).")
def _q25() -> int:
    return published.MEGATRON_TABLE1[-1].microbatches(1)


@exercise("10.26", hint="ZB-H2's warm-up keeps 2p-1 microbatches alive on every rank.")
def _q26() -> float:
    return bk.simulate(bk.schedule("zb-h2", 8, 16), UNIFORM).max_peak_activations


@exercise("10.27", hint="2 m (p - 1): an activation forward and a gradient back across each of the p-1 links.")
def _q27() -> int:
    return planner.hops_per_step(bk.schedule("1f1b", 8, 32))


# ----------------------------------------------------------------------------- trade-offs

_T1_CANDIDATES = (("gpipe", None), ("1f1b", None), ("interleaved", 2), ("zb-h1", None), ("zb-h2", None),
                  ("zbv", None), ("dualpipev", None))


def _fastest_within(budget: float, p: int, m: int) -> str:
    best: tuple[Any, str] | None = None
    for name, v in _T1_CANDIDATES:
        res = bk.simulate(bk.schedule(name, p, m, v), UNIFORM)
        if res.max_peak_activations <= budget and (best is None or res.makespan < best[0]):
            best = (res.makespan, name)
    assert best is not None
    return best[1]


@exercise("10.28", hint="Simulate each candidate with F = I = W = 1; drop those whose largest peak exceeds 5.")
def _q28() -> str:
    return _fastest_within(5, 4, 16)


@exercise("10.29", hint="Compare (p-1)/(2m+p-1) with (p-1)/(m*2+p-1).", compare=_letter)
def _q29() -> str:
    a, b = bk.bubble_ratio(8, 16), bk.bubble_ratio(8, 8, 2)
    return "C" if a == b else ("A" if a < b else "B")


@exercise("10.30", hint="Simulate both with bk.Costs(f=1, b=2, comm=1) and compare makespans.")
def _q30() -> str:
    costs = bk.Costs(f=1, b=2, comm=1)
    one = bk.simulate(bk.schedule("1f1b", 4, 8), costs).makespan
    two = bk.simulate(bk.schedule("interleaved", 4, 8, 2), costs).makespan
    return "1f1b" if one < two else "interleaved"


@exercise("10.31", hint="planner.h200_recompute_costs() returns (plain, recomputed); compare their activation.",
          rel_tol=1e-9)
def _q31() -> float:
    plain, rec = planner.h200_recompute_costs()
    return float(plain.activation) / float(rec.activation)  # type: ignore[arg-type]


_LAYERS = (3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8)


@exercise("10.32", hint="bubblekit.analysis.balance.partition(layers, 4).bottleneck, or try every contiguous split.")
def _q32() -> Any:
    return balance.bottleneck(list(_LAYERS), 4)


@exercise("10.33", hint="Same bubble at F = I = W; compare max_peak_activations for p = 8, m = 24.", compare=_letter)
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


@exercise("10.34", hint="Try bk.schedule('dualpipev', 4, m) for m = 1, 2, ...; read the error message.")
def _q34() -> int:
    return _dualpipev_min_m(4)


# ----------------------------------------------------------------------------- profiles


@exercise("10.35", hint="The straggler is the rank with the most busy time: look at profile(1).busy.")
def _q35() -> int:
    busy = profile(1).busy
    return max(range(len(busy)), key=lambda r: busy[r])


@exercise("10.36", hint="idle / (ranks x makespan): the timeline computes it as bubble_ratio.", rel_tol=1e-9)
def _q36() -> float:
    return profile(2).bubble_ratio


@exercise("10.37", hint="Rank 1's first forward can start only when rank 0's first forward has ended plus one hop.",
          rel_tol=1e-6)
def _q37() -> float:
    tl = profile(3)
    first1 = next(iter(tl.spans(1)))
    first0 = next(iter(tl.spans(0)))
    return float(first1.start - first0.end)


@exercise("10.38", hint="largest_gaps(1) gives the longest idle interval and the rank it is on.")
def _q38() -> int:
    return profile(4).largest_gaps(1)[0].rank


@exercise("10.39", hint="Compare the ranks' busy times in profile(5): are they equal?", compare=_letter)
def _q39() -> str:
    busy = profile(5).busy
    return "C" if max(busy) > 1.2 * min(busy) else "A"


# ----------------------------------------------------------------------------- whiteboard

_B2F = bk.Costs(f=1, b=2)


@exercise("10.40", hint="Rank r runs p - r forwards, then alternates one backward and one forward.", compare=whiteboard)
def _q40() -> WhiteboardTarget:
    ref = bk.simulate(bk.schedule("1f1b", 3, 3), _B2F)
    return target(3, 3, _B2F, ref.makespan, cap=ref.max_peak_activations, split=False)


@exercise("10.41", hint="Keep 1F1B's order with B split into I then W, then delay some W into the gaps.",
          compare=whiteboard)
def _q41() -> WhiteboardTarget:
    ref = bk.simulate(bk.schedule("zb-h1", 2, 4), UNIFORM)
    return target(2, 4, UNIFORM, ref.makespan, cap=2)


@exercise("10.42", hint="Let rank 0 run extra forwards in its warm-up, then keep every rank busy with F, I, W.",
          compare=whiteboard)
def _q42() -> WhiteboardTarget:
    ref = bk.simulate(bk.schedule("zb-h2", 3, 5), UNIFORM)
    assert published.stage_span_bubble_rate(ref) == 0
    return target(3, 5, UNIFORM, 5 * 3, cap=5, measure="stage_span")
