"""The interview bank (``solutions/10_interview_bank.ipynb``): metadata, profiles and checks.

:data:`BANK` lists every question (id, category, a short title in English and Chinese,
whether ``check`` grades it). :func:`profile` returns the synthetic timelines the
"debugging a profile" questions read (simulated by :func:`_profile_result`, not measured):
plain :class:`bubblekit.Timeline` objects, so the costs that produced them stay hidden.
Derivation answers are sympy expressions in the symbols of :mod:`bubblekit.symbolic` (plus
``t_i``, ``t_w`` below); each expected expression is checked against the simulator before it is compared.

Hints here follow the interview rule of the grading policy: they point to the idea (what to
count, what to compare, which picture to draw) and never state the formula or the value that
answers the question; ``tests/test_grading.py`` checks that no hint evaluates to its answer.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import bubblekit as bk
from bubblekit import memory
from bubblekit.analysis import balance, planner
from bubblekit.course import published
from bubblekit.course.checks._grading import (
    THE_STEP,
    AnyOf,
    Graded,
    as_rank,
    norm_text,
    read_expression,
    read_number,
    split_products,
)
from bubblekit.course.checks._mistakes import (
    fraction_of_step,
    megatron_overhead,
    overhead_min_m,
    swapped_pm,
    utilisation,
)
from bubblekit.course.checks._registry import FORMAT, WORDS_ONLY, Mistake, exercise
from bubblekit.course.checks._schedules import schedule_text
from bubblekit.course.checks._text import msg, shown
from bubblekit.course.checks._units import ACTIVATIONS, DOLLARS, FACTOR, MESSAGES, MICROBATCHES, MS, SLOTS
from bubblekit.course.checks.lesson07 import UNIFORM, WhiteboardTarget, target, whiteboard
from bubblekit.i18n import register, tr
from bubblekit.schedules.registry import display_name
from bubblekit.schedules.registry import spec as _schedule_spec
from bubblekit.text import format_number

__all__ = ["CATEGORIES", "BankItem", "BANK", "profile", "t_i", "t_w", "by_category"]

#: Category key -> (English, Chinese).
CATEGORIES: dict[str, tuple[str, str]] = {
    "concepts": ("concepts", "概念"),
    "derivations": ("derivations", "推导"),
    "calculations": ("calculations", "计算"),
    "trade-offs": ("design trade-offs", "设计权衡"),
    "profiles": ("debugging a profile", "性能画像排错"),
    "whiteboard": ("whiteboard", "白板"),
}


@dataclass(frozen=True)
class BankItem:
    """One interview question: id ``"10.k"``, category key, its titles (as the bank notebooks head them, English and
    Chinese; tests/test_checks.py keeps them in step) and whether ``check`` grades it."""

    id: str
    category: str
    title_en: str
    title_zh: str
    checked: bool


BANK: tuple[BankItem, ...] = (
    BankItem("10.1", "concepts", "What (p-1)/m measures", "(p − 1)/m 衡量的是什么", True),
    BankItem("10.2", "concepts", "Why GPipe and 1F1B have the same bubble", "为什么 GPipe 和 1F1B 的气泡一样大", False),
    BankItem("10.3", "concepts", "What 1F1B buys over GPipe", "1F1B 比 GPipe 好在哪", True),
    BankItem("10.4", "concepts", "Why splitting the backward helps", "为什么拆开反向能减少气泡", False),
    BankItem("10.5", "concepts", "Which backward part is on the critical path", "反向的哪一部分在关键路径上", True),
    BankItem("10.6", "concepts", "What grows with interleaving", "交错以后哪些量会变大", True),
    BankItem("10.7", "concepts", "ZB-V versus ZB-H1", "ZB-V 和 ZB-H1 有什么不同", False),
    BankItem("10.8", "concepts", "Parameters per device in DualPipe and DualPipeV", "DualPipe 和 DualPipeV 每个设备存多少参数", True),
    BankItem("10.9", "concepts", "Why zero bubble needs the optimizer sync bypassed", "零气泡为什么要绕开优化器的全局同步", False),
    BankItem("10.10", "concepts", "The critical path of a pipeline step", "流水线一步的关键路径", False),
    BankItem("10.11", "derivations", "Bubble fraction of GPipe", "GPipe 的气泡比例", True),
    BankItem("10.12", "derivations", "From fraction to Megatron's overhead", "从气泡比例换算到 Megatron 口径的气泡开销", True),
    BankItem("10.13", "derivations", "Interleaved bubble fraction", "交错式 1F1B 的气泡比例", True),
    BankItem("10.14", "derivations", "ZB-H1 bubble time per rank", "ZB-H1 每个 rank 的气泡时间", True),
    BankItem("10.15", "derivations", "Smallest m for a target bubble", "达到目标气泡比例所需的最小 m", True),
    BankItem("10.16", "derivations", "GPipe makespan with a hop latency", "有通信延迟时 GPipe 的单步耗时", True),
    BankItem("10.17", "derivations", "1F1B peak activations on rank r", "1F1B 中 rank r 的激活峰值", True),
    BankItem("10.18", "calculations", "Bubble fraction, p = 8, m = 32", "气泡比例，p = 8，m = 32", True),
    BankItem("10.19", "calculations", "Megatron overhead, p = 8, m = 32", "Megatron 口径的气泡开销，p = 8，m = 32", True),
    BankItem("10.20", "calculations", "Smallest m for 10 % at p = 16", "p = 16 时气泡比例 ≤ 10% 的最小 m", True),
    BankItem("10.21", "calculations", "Interleaved bubble, p = 8, m = 16, v = 4", "交错式 1F1B 的气泡比例，p = 8，m = 16，v = 4", True),
    BankItem("10.22", "calculations", "Dollars lost to a 12 % bubble", "12% 的气泡浪费了多少钱", True),
    BankItem("10.23", "calculations", "ZB-H1 makespan, p = 4, m = 8", "ZB-H1 的单步耗时，p = 4，m = 8", True),
    BankItem("10.24", "calculations", "1F1B step on measured H200 layers", "实测 H200 层上 1F1B 的单步耗时", True),
    BankItem("10.25", "calculations", "Microbatches per pipeline, Megatron 1T", "Megatron 1T 每条流水线的微批数", True),
    BankItem("10.26", "calculations", "ZB-H2 peak memory, p = 8, m = 16", "ZB-H2 的显存峰值，p = 8，m = 16", True),
    BankItem("10.27", "calculations", "Messages per step, 1F1B p = 8, m = 32", "1F1B 每步的消息数，p = 8，m = 32", True),
    BankItem("10.28", "trade-offs", "Fastest schedule under a memory budget", "显存预算内最快的调度", True),
    BankItem("10.29", "trade-offs", "Double m or interleave?", "m 加倍，还是用交错？", True),
    BankItem("10.30", "trade-offs", "Interleaving with a slow link", "链路慢的时候还要不要交错", True),
    BankItem("10.31", "trade-offs", "What recomputation saves", "激活重算能省多少显存", True),
    BankItem("10.32", "trade-offs", "Balancing unequal layers", "层耗时不均时怎么切分", True),
    BankItem("10.33", "trade-offs", "ZB-H2 or ZB-V?", "选 ZB-H2 还是 ZB-V？", True),
    BankItem("10.34", "trade-offs", "DualPipeV's constraint on m", "DualPipeV 对 m 的约束", True),
    BankItem("10.35", "profiles", "Find the straggler", "找出拖后腿的 rank", True),
    BankItem("10.36", "profiles", "Measured bubble of a trace", "从 trace 量出气泡比例", True),
    BankItem("10.37", "profiles", "Read the hop latency off a trace", "从 trace 读出一跳的延迟", True),
    BankItem("10.38", "profiles", "Where is the largest gap?", "最长的一段空闲在哪里？", True),
    BankItem("10.39", "profiles", "Which lever for this profile?", "这份性能画像该先用哪一招？", True),
    BankItem("10.40", "whiteboard", "Write 1F1B for p = 3, m = 3", "写出 p = 3、m = 3 的 1F1B", True),
    BankItem("10.41", "whiteboard", "Beat 1F1B with a split backward", "拆开反向，跑赢 1F1B", True),
    BankItem("10.42", "whiteboard", "A schedule with no idle inside any rank", "每个 rank 内部都不空闲的调度", True),
    BankItem("10.43", "trade-offs", "DualPipe or interleaved on the same devices?", "设备数相同：DualPipe 还是交错式 1F1B？", True),
    BankItem("10.44", "trade-offs", "DualPipe or interleaved with the same memory?", "显存相同：DualPipe 还是交错式 1F1B？", True),
    BankItem("10.45", "trade-offs", "A larger microbatch group", "把微批分组调大", True),
    BankItem("10.46", "calculations", "A step from a layout string", "从布局字符串算单步耗时", True),
)


#: A question answered in words has no check: ``bk.check`` on its id points to its worked answer.
_WORKED_ANSWER = msg("its worked answer in solutions/10_interview_bank.ipynb",
                     " solutions/zh/10_interview_bank.ipynb 里的参考答案")
WORDS_ONLY.update({item.id: _WORKED_ANSWER for item in BANK if not item.checked})


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


#: What the multiple-choice check says, in both languages (fetched when an answer is graded).
register({
    "checks.l10.letters_as_text": {"en": "answer with the letter(s) of your choice as a string, got {type}",
                                   "zh": "请用字符串写出你选的字母，收到的是 {type}"},
    "checks.l10.no_letter": {"en": "no letter chosen", "zh": "没有选任何字母"},
    "checks.l10.letters_only": {"en": "answer with the letter(s) alone, e.g. \"B\" or \"BC\"",
                                "zh": "只写选项字母即可，例如 \"B\" 或 \"BC\""},
    "checks.l10.one_letter": {"en": "choose one letter", "zh": "只选一个字母"},
    "checks.l10.missing_letter": {"en": "right so far, but something is missing", "zh": "目前选的都对，但还少了选项"},
    "checks.l10.wrong_letter": {"en": "not the right choice", "zh": "选得不对"},
})


#: The options a multiple-choice question of the bank offers at most (A to H).
_OPTIONS = frozenset("ABCDEFGH")
#: A word in a letter answer: a run of letters of any script ("B", "BC", "and", "不是").
_WORD = re.compile(r"[^\W\d_]+")


def _letters(text: str) -> frozenset[str] | None:
    """The options ``text`` chooses: ``"B"``, ``"BC"``, ``"B, C"``, ``"(B)"``, ``"b c"``, ``"B、C"`` and full-width
    ``"Ｂ"`` each read as letters; ``None`` when it holds a word that is not a run of option letters (``"B and C"``,
    ``"Answer: B"``, ``"不是 A"``, ``"答案是 B"``), in any language, which cannot be read without guessing."""
    words = _WORD.findall(unicodedata.normalize("NFKC", text))
    if any(not set(w.upper()) <= _OPTIONS for w in words):
        return None
    return frozenset("".join(words).upper())


def _letter(answer: Any, expected: Any) -> Graded:
    """Compare multiple-choice answers: one letter, or a set of letters, case-insensitive.

    Text with words besides the letters (``"B and C"``) is not graded: the learner is asked for the letters
    alone, and the answer is not counted as a try (kind :data:`~bubblekit.course.checks._registry.FORMAT`).
    """
    def norm(x: Any) -> Any:
        if isinstance(x, str):
            return _letters(x)
        if isinstance(x, (set, frozenset, list, tuple)):
            return frozenset(str(c).strip().upper() for c in x)
        return None

    a, e = norm(answer), norm(expected)
    if a is None and isinstance(answer, str):
        return Graded(False, tr("checks.l10.letters_only"), FORMAT)
    if a is None:
        return Graded(False, tr("checks.l10.letters_as_text", type=type(answer).__name__))
    if not a:
        return Graded(False, tr("checks.l10.no_letter"))
    if len(e) == 1 and len(a) > 1:
        return Graded(False, tr("checks.l10.one_letter"))
    if a == e:
        return Graded(True)
    if a < e:
        return Graded(False, tr("checks.l10.missing_letter"))
    return Graded(False, tr("checks.l10.wrong_letter"))


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
    """The synthetic trace of profile ``k`` (1..5, simulated, costs hidden): per-rank intervals in ms, labelled ``0F3``.

    Profiles 1 and 2 are the same trace (10.35 finds its straggler, 10.36 measures its bubble)."""
    return _anonymous(_profile_result(k))


# ----------------------------------------------------------------------------- concepts


@exercise("10.1", hint=(msg("Write both conventions for the same simulated step (p = 8, m = 4) and compute each: "
                            "idle / (p × makespan) and idle / busy. Which one equals (p − 1)/m?",
                            "对同一个模拟出来的步（p = 8, m = 4）写出两种口径并各算一遍：空闲 / (p × 单步耗时) 和"
                            "空闲 / 忙碌。哪一个等于 (p − 1)/m？"),
                        msg("Simulate 1F1B for p = 8, m = 4 and compare the number with r.bubble_ratio and "
                            "r.bubble_overhead: which definition does each follow?",
                            "模拟 p = 8, m = 4 的 1F1B，把这个数和 r.bubble_ratio、r.bubble_overhead 比较：它"
                            "们各自按哪个定义算？")),
          compare=_letter)
def _q1() -> str:
    r = bk.simulate(bk.schedule("1f1b", 8, 4), bk.Costs(f=1, b=2))
    return "B" if abs(r.bubble_overhead - 7 / 4) < 1e-12 else "A"


@exercise("10.3", hint=(msg("Simulate both for p=4, m=8 and compare r.makespan, r.peak_activations and "
                            "r.schedule.hops_per_step.",
                            "在 p=4, m=8 下模拟两者，比较 r.makespan、r.peak_activations 和 "
                            "r.schedule.hops_per_step。"),
                        msg("Only one of the three differs between GPipe and 1F1B with equal stages: which one, and "
                            "why does the order of F and B change it?",
                            "各流水级耗时相等时，这三个量中只有一个在 GPipe 和 1F1B 之间不同：是哪个？为什么 "
                            "F 和 B 的顺序会影响它？")),
          compare=_letter)
def _q3() -> str:
    g = bk.simulate(bk.schedule("gpipe", 4, 8), bk.Costs(f=1, b=2))
    o = bk.simulate(bk.schedule("1f1b", 4, 8), bk.Costs(f=1, b=2))
    assert g.makespan == o.makespan and planner.hops_per_step(g.schedule) == planner.hops_per_step(o.schedule)
    return "B" if o.max_peak_activations < g.max_peak_activations else "A"


@exercise("10.5", hint=(msg("Follow one microbatch's backward from the last stage to the first: what does stage s - 1 "
                            "need from stage s before it can continue?",
                            "跟着一个微批的反向从最后一个流水级走到第一个：流水级 s - 1 要从流水级 s 拿到什么"
                            "才能继续？"),
                        msg("Write the chain rule across two consecutive stages, with stage s's input X being stage "
                            "s - 1's output: which product of stage s's backward appears in stage s - 1's backward?",
                            "把相邻两个流水级的链式法则写出来（流水级 s 的输入 X 就是流水级 s - 1 的输出）：流水级 "
                            "s 的反向算出的哪个量，出现在流水级 s - 1 的反向里？")),
          compare=_letter)
def _q5() -> str:
    return "A"  # I (dX) feeds stage s-1; W (dW) feeds only the optimizer step


@exercise("10.6", hint=(msg("Compare interleaved v=2 with 1F1B (v=1) on their simulations r: r.schedule.hops_per_step, "
                            "r.peak_activations[0] and the total busy time sum(r.busy).",
                            "在两者的模拟结果 r 上比较 v=2 的交错式调度和 1F1B（v=1）：r.schedule.hops_per_step、"
                            "r.peak_activations[0] 和总忙碌时间 sum(r.busy)。"),
                        msg("Simulate both for p = 4, m = 8 with F = 1, B = 2 and look at each quantity in turn; more "
                            "than one letter may apply.",
                            "在 p = 4, m = 8、F = 1, B = 2 下模拟两者，逐个看每个量；可能不止一个选项。")),
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


@exercise("10.8", hint=(msg("Count the stages (model chunks) one device holds, and compare with 1F1B on the same "
                            "number of stages, where each device holds one.",
                            "数一张卡上有几个流水级（模型 chunk），再和流水级数相同、每张卡只放一个流水级的 1"
                            "F1B 比较。"),
                        msg("For each of the two schedules ask: how many pipelines run over the same devices, and does "
                            "each pipeline have its own copy of the stages it runs? Lesson 07's section 3 draws both.",
                            "对这两种调度各问一句：同一批卡上跑了几条流水线？每条流水线跑的流水级是不是各有一份自己的"
                            "副本？第 07 课第 3 节把两者都画出来了。")),
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


@exercise("10.11", hint=(msg("Write GPipe's makespan (the fill, the steady part, the drain) and each rank's busy time, "
                             "then take idle over p x makespan.",
                             "写出 GPipe 的单步耗时（填充、稳态、排空）和每个 rank 的忙碌时间，再算空闲时间 "
                             "/ (p x 单步耗时)。"),
                         msg("How many slots of width t_f + t_b does the step last, and for how many of them is one "
                             "rank busy?",
                             "一步持续多少个宽为 t_f + t_b 的时间槽？其中一个 rank 忙了几个？")),
          mistakes=(Mistake(lambda _e: _sym.MEGATRON_OVERHEAD,
                            msg("that is Megatron's overhead (bubble over busy time); this asks for the fraction of "
                                "the whole step",
                                "这是 Megatron 口径的气泡开销（气泡时间 / 忙碌时间）；这里问的是占整步的比例")),))
def _q11() -> Any:
    expr = _sym.bubble_fraction(_sym.makespan_gpipe(), _sym.busy_per_rank())
    return _assert_matches(expr, lambda d: bk.simulate(bk.schedule("gpipe", d["p"], d["m"]), bk.Costs(
        f=d["t_f"], b=d["t_b"])).bubble_ratio_exact, [{"p": 4, "m": 8, "t_f": 1, "t_b": 2}, {"p": 3, "m": 5, "t_f": 2, "t_b": 3}])


@exercise("10.12", hint=(msg("Write the busy time as the total time minus the idle time.",
                             "把忙碌时间写成总时间减去空闲时间。"),
                         msg("Then divide the numerator and the denominator by the total time: what is idle over total "
                             "called?",
                             "再把分子分母同除以总时间：空闲时间 / 总时间叫什么？")),
          mistakes=(Mistake(lambda _e: _b_symbol() / (1 + _b_symbol()),
                            msg("that converts the other way, from the overhead to the fraction",
                                "这是反方向的换算：从气泡开销算到气泡比例")),))
def _q12() -> Any:
    b = _b_symbol()
    expr = _sym.overhead_of(b)
    assert bk.overhead_from_ratio(0.25) == float(expr.subs(b, Fraction(1, 4)))
    return expr


@exercise("10.13", hint=(msg("With v chunks every action is 1/v as long, so the ramps shrink by v but the work does not.",
                             "有 v 个 chunk 时，每个动作的时长变为原来的 1/v，所以填充和排空缩短为原来的 1/v，但总"
                             "工作量不变。"),
                         msg("Write the makespan as the steady work plus the fill and drain, with the ramp actions 1/v "
                             "as long, then take the idle share of the step.",
                             "把单步耗时写成稳态工作加上填充和排空，其中的动作时长为原来的 1/v，再求空闲"
                             "占整步的比例。")),
          mistakes=(Mistake(lambda _e: _sym.BUBBLE_RATIO,
                            msg("that is plain 1F1B's fraction: where do the v chunks enter?",
                                "这是普通 1F1B 的气泡比例：v 个 chunk 体现在哪里？")),))
def _q13() -> Any:
    expr = _sym.bubble_fraction(_sym.makespan_interleaved(), _sym.busy_per_rank())
    return _assert_matches(expr, lambda d: bk.simulate(bk.schedule("interleaved", d["p"], d["m"], d["v"]), bk.Costs(
        f=d["t_f"], b=d["t_b"])).bubble_ratio_exact, [{"p": 4, "m": 8, "v": 2, "t_f": 1, "t_b": 2},
                                                     {"p": 2, "m": 4, "v": 3, "t_f": 3, "t_b": 3}])


@exercise("10.14", hint=(msg("Two things change against 1F1B: what rank 0's first backward waits for (the I passes "
                             "downstream, not whole backwards), and which idle slots a delayed W can fill.",
                             "和 1F1B 相比有两处变化：rank 0 的第一个反向要等什么（等下游的 I，而不是整个反向），"
                             "以及推迟的 W 能填进哪些空闲时间槽。"),
                         msg("Draw ZB-H1 for p = 3 with W much shorter than F and I, and measure rank 0's gaps: the one "
                             "before its first I and those of its cool-down; compare each with 1F1B's.",
                             "画出 p = 3、W 远短于 F 和 I 的 ZB-H1，量一量 rank 0 的空隙：第一个 I 之前的那段，"
                             "以及冷却阶段的那几段；逐段和 1F1B 的比较。")),
          mistakes=(Mistake(lambda _e: (_sym.p - 1) * (_sym.t_f + t_i),
                            msg("one of ZB-H1's two savings is missing: measure both of rank 0's kinds of gap (before "
                                "its first I, and in its cool-down) against 1F1B's",
                                "ZB-H1 的两处节省少算了一处：把 rank 0 的两类空隙（第一个 I 之前的那段、冷却阶段的"
                                "那几段）都和 1F1B 的比一比")),))
def _q14() -> Any:
    expr = (_sym.p - 1) * (_sym.t_f + t_i - t_w)

    def sim(d: dict[str, Any]) -> Any:
        res = bk.simulate(bk.schedule("zb-h1", d["p"], d["m"]), bk.Costs(f=d["t_f"], i=d["t_i"], w=d["t_w"]))
        return Fraction(published.max_rank_bubble_time(res)).limit_denominator(1000)

    return _assert_matches(expr, sim, [{"p": 4, "m": 8, "t_f": 2, "t_i": 3, "t_w": 1},
                                       {"p": 3, "m": 6, "t_f": 1, "t_i": 1, "t_w": 1}])


@exercise("10.15", hint=(msg("Set the bubble fraction equal to the target and solve for m.",
                             "令气泡比例等于目标值，解出 m。"),
                         msg("Cross-multiply and collect the terms in m; sp.solve does the algebra.",
                             "交叉相乘，合并含 m 的项；代数运算可以交给 sp.solve。")),
          mistakes=(Mistake(lambda e: _sp.ceiling(e),
                            msg("that is the smallest whole m; this question asks for the root itself, before "
                                "rounding up",
                                "这是取整后的最小整数 m；这道题要的是取整之前的根本身")),))
def _q15() -> Any:
    expr = _sym.solve_min_m()
    assert _sym.min_micro_batch(8, Fraction(1, 5)) == bk.min_micro_batch(8, 0.2)
    return expr


@exercise("10.16", hint=(msg("Start from GPipe's makespan without latency; then ask which waits on the critical path "
                             "now include a hop.",
                             "从无延迟时 GPipe 的单步耗时出发；再想一想关键路径上哪些等待现在包含了一跳。"),
                         msg("Follow the critical path: how many links does the first forward cross on its way down, and "
                             "the last backward on its way up?",
                             "沿着关键路径走：第一个前向往下经过几条链路？最后一个反向往回经过几条？")),
          mistakes=(Mistake(lambda _e: _sym.makespan_gpipe() + (_sym.p - 1) * _sym.comm,
                            msg("that pays the latency on one way only; the gradients cross the links back too",
                                "这只算了单程的延迟；梯度也要经过这些链路传回来")),))
def _q16() -> Any:
    expr = _sym.makespan_gpipe(comm=_sym.comm)
    samples: list[tuple[int, int, int, int, Fraction]] = [(4, 8, 1, 2, Fraction(1, 2)), (3, 5, 2, 3, Fraction(1))]
    for p_, m_, f_, b_, c_ in samples:
        sim = bk.simulate(bk.schedule("gpipe", p_, m_), bk.Costs(f=f_, b=b_, comm=c_)).makespan
        assert _sym.evaluate(expr, p=p_, m=m_, t_f=f_, t_b=b_, c=c_) == sim
    return expr


register({
    "checks.l10.peak_unreadable": {"en": "could not read your answer as a sympy expression in p, m and r (got {type})",
                                   "zh": "无法把你的答案读成含 p、m、r 的 sympy 表达式（收到的是 {type}）"},
    "checks.l10.peak_symbols": {"en": "unknown symbol(s) {names}: use p, m and r",
                                "zh": "未知符号 {names}：请用 p、m 和 r"},
    "checks.l10.peak_differs": {
        "en": "not equal to the peak for every p, r < p and m >= p (compare with the simulator's "
              "peak_activations for p = 4)",
        "zh": "不是对所有 p、r < p、m >= p 都等于峰值（和 p = 4 时模拟器的 peak_activations 比一比）"},
})

#: 10.17: a learner counting warm-up forwards the way Megatron-LM and lesson 04 do (the forwards before the steady state).
_WARMUP_COUNT = msg("that is the number of warm-up forwards as Megatron-LM and lesson 04 count them (the forwards "
                    "before the steady state begins); the peak counts the activations held when rank r's first "
                    "backward starts",
                    "这是 Megatron-LM 和第 04 课口径的预热前向数（进入稳态之前的前向）；峰值要数的是 rank r 的第一个"
                    "反向开始时手里保留的激活")
_FROM_THE_WRONG_END = msg("that grows with r: in 1F1B rank 0 holds the most (it starts its backwards last)",
                          "这个式子随 r 增大而增大：1F1B 中 rank 0 保留得最多（它最晚开始反向）")


def _peak_symbols() -> dict[str, Any]:
    return {"p": _sym.p, "m": _sym.m, "r": _sp.Symbol("r", integer=True, nonnegative=True)}


def _on_grid(expr: Any, want: Any) -> bool:
    """True when ``expr`` equals ``want`` for every p in 1..8, r in 0..p-1 and m in p..p+8 (the question's m >= p)."""
    t = _peak_symbols()
    for p_ in range(1, 9):
        for r_ in range(p_):
            for m_ in range(p_, p_ + 9):
                subs = {t["p"]: p_, t["r"]: r_, t["m"]: m_}
                try:
                    if _sp.simplify(_sp.sympify(expr).subs(subs) - _sp.sympify(want).subs(subs)) != 0:
                        return False
                except (TypeError, ValueError):
                    return False
    return True


def _peak_compare(answer: Any, expected: Any) -> Graded:
    """10.17: any expression equal to the peak where the question holds (m >= p): ``p - r`` and ``min(p - r, m)``.

    Symbols are matched by name (``p``, ``m``, ``r``), so a plain ``sp.Symbol("r")`` works. The warm-up count
    ``p - r - 1`` and a count from the wrong end are named.
    """
    if isinstance(answer, bool) or answer is None:
        return Graded(False, tr("checks.l10.peak_unreadable", type=type(answer).__name__))
    expr, why = read_expression(answer)
    if expr is None:  # text that is no expression: said, not counted as a try
        return Graded(False, why if isinstance(answer, str) else tr("checks.l10.peak_unreadable",
                                                                    type=type(answer).__name__),
                      FORMAT if isinstance(answer, str) else "")
    table = _peak_symbols()
    expr = split_products(expr, table)
    unknown = sorted(x.name for x in getattr(expr, "free_symbols", ()) if x.name not in table)
    if unknown:  # a name the course does not use (``P``, ``R``): said, not counted as a try
        return Graded(False, tr("checks.l10.peak_symbols", names=unknown), FORMAT)
    expr = expr.subs({x: table[x.name] for x in expr.free_symbols})
    if _on_grid(expr, expected):
        return Graded(True)
    p_, r_ = table["p"], table["r"]
    if _on_grid(expr, expected - 1):
        return Graded(False, shown(_WARMUP_COUNT))
    if _on_grid(expr, r_ + 1) or _on_grid(expr, r_):
        return Graded(False, shown(_FROM_THE_WRONG_END))
    del p_
    return Graded(False, tr("checks.l10.peak_differs"))


@exercise("10.17", hint=(msg("Activations pile up until rank r's first backward frees one: count the forwards rank r "
                             "has run by the time that backward starts (m >= p).",
                             "rank r 的激活一直累积，直到它的第一个反向释放其中一个：数一数这个反向开始时 rank r 已经"
                             "跑了几个前向（m >= p）。"),
                         msg("Simulate 1F1B for p = 4, m = 8 and read peak_activations rank by rank; then do the same "
                             "for p = 5: how does the peak depend on r and p?",
                             "模拟 p = 4, m = 8 的 1F1B，逐个 rank 读 peak_activations；再对 p = 5 做一遍：峰值怎样"
                             "随 r 和 p 变化？")),
          compare=lambda answer, expected: _peak_compare(answer, expected))
def _q17() -> Any:
    r = _peak_symbols()["r"]
    expr = _sym.p - r
    for p_ in (4, 5):
        res = bk.simulate(bk.schedule("1f1b", p_, 2 * p_), bk.Costs(f=1, b=2))
        assert all(res.peak_activations[k] == float(expr.subs({_sym.p: p_, r: k})) for k in range(p_))
    return expr


# ----------------------------------------------------------------------------- calculations


@exercise("10.18", hint=(msg("This is the fraction of the whole step (idle over p x makespan), not Megatron's ratio: "
                             "compare the fill and drain with the steady part.",
                             "这里要的是占整步的比例（空闲时间 / (p x 单步耗时)），不是 Megatron 口径"
                             "的比值：把填充和排空与稳态部分比较。"),
                         msg("Use the closed form you derived for GPipe and 1F1B at these p and m; to confirm it, "
                             "count one rank's idle slots in a small picture (p = 2, m = 2) with the same formula.",
                             "用你为 GPipe 和 1F1B 推出的闭式解代入这组 p 和 m；要验证，就在一张小图（p = 2、m = 2）"
                             "上数一个 rank 的空闲时间槽，和同一个公式对一对。")),
          fraction_of=THE_STEP,
          mistakes=(megatron_overhead(8, 32), swapped_pm(bk.bubble_ratio, 8, 32), utilisation()))
def _q18() -> float:
    return bk.bubble_ratio(8, 32)


@exercise("10.19", hint=(msg("Megatron divides the same bubble time by something other than the whole step: by what?",
                             "Megatron 用同样的气泡时间除以的不是整步耗时：是什么？"),
                         msg("Bubble time over ideal (busy) time: use the paper's closed form at p = 8, m = 32.",
                             "气泡时间 / 理想（忙碌）时间：把 p = 8, m = 32 代入论文的闭式解。")),
          fraction_of=msg("the busy time", "忙碌时间"),
          mistakes=(fraction_of_step(8, 32), swapped_pm(bk.bubble_overhead, 8, 32)))
def _q19() -> float:
    return bk.bubble_overhead(8, 32)


@exercise("10.20", unit=MICROBATCHES, hint=(msg("Write the bubble fraction for p = 16 as a function of m and find where it falls to 10 %.",
                             "把 p = 16 时的气泡比例写成 m 的函数，找出它降到 10% 的位置。"),
                         msg("Solve the inequality for m, then round up: m must be whole, and one fewer must miss the "
                             "target.",
                             "解关于 m 的不等式，再向上取整：m 必须是整数，而且少一个就达不到目标。")),
          mistakes=(Mistake(lambda e: e - 1, msg("that m misses the target by a hair: round up, not down",
                                                 "这个 m 差一点点达不到目标：要向上取整，不是向下")),
                    overhead_min_m(16, 0.1)))
def _q20() -> int:
    m = bk.min_micro_batch(16, 0.1)
    assert m is not None
    return m


@exercise("10.21", hint=(msg("With v chunks per rank the ramp actions are 1/v as long while the steady part is not: "
                             "how does that change the fill and drain?",
                             "每个 rank 有 v 个 chunk 时，两头的动作时长变为原来的 1/v，稳态部分不变：填充和排空"
                             "因此会怎样变化？"),
                         msg("Start from the plain 1F1B fraction for p = 8, m = 16 and ask which term the v divides.",
                             "从 p = 8, m = 16 时普通 1F1B 的气泡比例出发，想一想 v 除的是哪一项。")),
          fraction_of=THE_STEP,
          mistakes=(Mistake(lambda _e: bk.bubble_ratio(8, 16),
                            msg("that is plain 1F1B's fraction (v = 1); interleaving shrinks it",
                                "这是普通 1F1B 的气泡比例（v = 1）；交错会让它变小")),
                    megatron_overhead(8, 16, 4)))
def _q21() -> float:
    return bk.simulate(bk.schedule("interleaved", 8, 16, 4), bk.Costs(f=1, b=2)).bubble_ratio


@exercise("10.22", unit=DOLLARS, hint=(msg("First the cost of the whole run, then the share of it that is bubble.",
                             "先算整个训练的花费，再算其中属于气泡的部分。"),
                         msg("The run's cost counts every GPU for every hour of the 30 days at the price; the bubble is "
                             "a fraction of it (not a percentage).",
                             "训练的花费 = 每张 GPU 在 30 天里的每个小时都按单价计；气泡是其中的一个比例（不"
                             "是百分数）。")),
          rel_tol=1e-9,
          mistakes=(Mistake(lambda e: e / 0.12 * (0.12 / 1.12),
                            msg("that reads the 12 % as Megatron's overhead (idle over busy time); the question gives "
                                "the bubble_ratio, the idle share of all GPU-hours",
                                "这是把 12% 当成了 Megatron 口径的气泡开销（空闲时间 / 忙碌时间）；题目给的是 "
                                "bubble_ratio，即空闲占全部 GPU 小时的比例")),))
def _q22() -> float:
    return 1024 * 30 * 24 * 2.0 * 0.12


@exercise("10.23", unit=SLOTS, hint=(msg("The makespan is one rank's busy time plus its bubble; 10.14 asks for ZB-H1's bubble per rank.",
                             "单步耗时是一个 rank 的忙碌时间加上它的气泡；10.14 问的就是 ZB-H1 每个 rank 的"
                             "气泡。"),
                         msg("Add the work one rank does for all m microbatches to the ZB-H1 bubble you derived.",
                             "把一个 rank 处理全部 m 个微批的工作量加上你推出的 ZB-H1 气泡。")),
          mistakes=(Mistake(lambda _e: bk.simulate(bk.schedule("1f1b", 4, 8), UNIFORM).makespan,
                            msg("that is 1F1B's makespan with the backward fused; ZB-H1 moves the W passes into the "
                                "drain's gaps",
                                "这是反向不拆分时 1F1B 的单步耗时；ZB-H1 会把 W 挪进排空阶段的空隙")),))
def _q23() -> Any:
    return bk.simulate(bk.schedule("zb-h1", 4, 8), UNIFORM).makespan


@exercise("10.24", unit=MS, hint=(msg("Equal stages and no latency: a 1F1B step lasts a whole number of (F + B) slots. How many?",
                             "各流水级耗时相等、没有延迟：1F1B 的一步持续整数个 (F + B) 时间槽。是几个？"),
                         msg("Read F and B of the measured layer from bk.h200_costs() (in ms) and count the slots of "
                             "the step.",
                             "从 bk.h200_costs() 读出实测层的 F 和 B（单位 ms），再数这一步有几个时间槽。")),
          rel_tol=2e-3)   # F and B as the worked answer rounds them (2.73, 6.59 ms) give 102.52 ms: right, not "too low"
def _q24() -> float:
    return float(bk.simulate(bk.schedule("1f1b", 4, 8), bk.h200_costs()).makespan)


@exercise("10.25", unit=MICROBATCHES, hint=(msg("First: how many copies of the pipeline (data-parallel replicas) fit on the GPUs?",
                             "第一步：这些 GPU 能放下几份流水线（数据并行副本）？"),
                         msg("Each GPU belongs to one tensor-parallel group of one stage of one replica; the replicas "
                             "share the global batch.",
                             "每张 GPU 属于某个副本中某个流水级的一个张量并行组；各副本分摊全局 batch。")))
def _q25() -> int:
    return published.MEGATRON_TABLE1[-1].microbatches(1)


@exercise("10.26", unit=ACTIVATIONS, hint=(msg("ZB-H2 fills the warm-up bubble with extra forwards: how many forwards does rank 0 run before "
                             "its first backward?",
                             "ZB-H2 用额外的前向填满预热阶段的气泡：rank 0 在第一个反向之前跑了几个前向？"),
                         msg("Simulate ZB-H2 for a small p with m ≥ 2p, as in the question (p = 3, m = 6 or p = 4, "
                             "m = 8), read max_peak_activations, and find the pattern in p.",
                             "像题目一样取 m ≥ 2p，用较小的 p 模拟 ZB-H2（p = 3, m = 6 或 p = 4, m = 8），读 "
                             "max_peak_activations，找出它随 p 变化的规律。")),
          mistakes=(Mistake(lambda _e: 8, msg("that is p, 1F1B's and ZB-H1's peak; ZB-H2 runs extra forwards in its "
                                              "warm-up", "这是 p，即 1F1B 和 ZB-H1 的峰值；ZB-H2 在预热阶段多跑了几个前向")),))
def _q26() -> float:
    """The question's setting, p = 8, m = 16 (m ≥ 2p − 1, so the peak is not capped by m)."""
    return bk.simulate(bk.schedule("zb-h2", 8, 16), UNIFORM).max_peak_activations


@exercise("10.27", unit=MESSAGES, hint=(msg("Count the links between neighbouring ranks, then how often one microbatch crosses each.",
                             "先数相邻 rank 之间有几条链路，再数一个微批经过每条链路几次。"),
                         msg("A microbatch's activation goes down every link and its gradient comes back up.",
                             "一个微批的激活沿每条链路往下传，梯度再沿原路传回来。")),
          mistakes=(Mistake(lambda e: e // 2, msg("that counts one direction only: gradients travel back over every "
                                                  "link too",
                                                  "这只数了一个方向：梯度也要经过每条链路传回来")),))
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


#: Chinese names a learner may give for a schedule (the course's terms), by registry name.
_CHINESE_NAMES = {"interleaved": ("交错式 1F1B", "交错式", "交错 1F1B", "虚拟流水线")}

register({
    "checks.l10.name_not_text": {"en": "answer with the schedule's name as text, got {type}",
                                 "zh": "请用文本写出调度的名字，收到的是 {type}"},
    "checks.l10.unknown_name": {"en": "{name!r} is not a schedule name bubblekit knows (bk.schedule lists them)",
                                "zh": "{name!r} 不是 bubblekit 认识的调度名（bk.schedule 会列出所有名字）"},
    "checks.l10.other_schedule": {"en": "not the schedule that answers this question", "zh": "不是这道题要的调度"},
})


#: A chunk or microbatch count after a schedule's name, as the course's tables write it ("interleaved v=2 m=32",
#: "interleaved 1F1B (v = 2)"): dropped before the name is resolved.
_COUNTS = re.compile(r"(\s*[(（]?\s*[vm]\s*=\s*\d+\s*[)）]?)+\s*$", re.IGNORECASE)


def _registry_name(answer: str) -> str | None:
    """The registry name of ``answer`` (a name, an alias, a display name such as "interleaved 1F1B", or the
    course's Chinese name; a trailing ``v=2`` or ``m=32`` is dropped), or None."""
    answer = _COUNTS.sub("", answer) or answer
    key = norm_text(answer)
    for name, names in _CHINESE_NAMES.items():
        if key in {norm_text(n) for n in names}:
            return name
    try:
        return _schedule_spec(answer.strip()).name
    except (TypeError, ValueError):
        return None


def _schedule_name(answer: Any, expected: Any) -> Graded:
    """Compare a schedule named in words: any of its names is right ("interleaved", "interleaved 1F1B", "交错式 1F1B").

    ``expected`` is a registry name or an :class:`AnyOf` of them (ties: each is right).
    """
    if not isinstance(answer, str):
        return Graded(False, tr("checks.l10.name_not_text", type=type(answer).__name__))
    got = _registry_name(answer)
    if got is None:
        return Graded(False, tr("checks.l10.unknown_name", name=answer.strip()))
    wanted = {_schedule_spec(x).name for x in (expected if isinstance(expected, AnyOf) else (expected,))}
    return Graded(True) if got in wanted else Graded(False, tr("checks.l10.other_schedule"))


@exercise("10.28", compare=_schedule_name, hint=(msg("Simulate each candidate with F = I = W = 1; drop those whose largest peak exceeds 5.",
                             "用 F = I = W = 1 模拟每个候选，去掉最大峰值超过 5 的。"),
                         msg("Among those that fit, compare makespans; if two tie, either is right.",
                             "在放得下的调度中比较单步耗时；如果两个并列，答哪个都对。")))
def _q28() -> AnyOf:
    return _fastest_within(5, 4, 16)


@exercise("10.29", hint=(msg("Write both bubble fractions side by side: the plain one with m doubled, the interleaved one "
                             "with v = 2.",
                             "把两个气泡比例并排写出来：m 加倍后的普通调度，以及 v = 2 的交错式调度。"),
                         msg("Where does v enter the interleaved fraction, and where does the doubled m enter the plain one?",
                             "v 出现在交错式气泡比例的哪里？加倍后的 m 又出现在普通调度的哪里？")),
          compare=_letter)
def _q29() -> str:
    a, b = bk.bubble_ratio(8, 16), bk.bubble_ratio(8, 8, 2)
    return "C" if a == b else ("A" if a < b else "B")


@exercise("10.30", hint=(msg("Simulate both with bk.Costs(f=1, b=2, comm=1) and compare makespans.",
                             "用 bk.Costs(f=1, b=2, comm=1) 模拟两者，比较单步耗时。"),
                         msg("Interleaving shortens the ramps but sends more messages: with a slow link, which effect "
                             "is bigger here? Answer with the schedule's name.",
                             "交错让填充和排空变短，但发的消息更多：链路慢的时候，这里哪个效应更大？用调度的名字作"
                             "答。")),
          compare=_schedule_name)
def _q30() -> str:
    costs = bk.Costs(f=1, b=2, comm=1)
    one = bk.simulate(bk.schedule("1f1b", 4, 8), costs).makespan
    two = bk.simulate(bk.schedule("interleaved", 4, 8, 2), costs).makespan
    return "1f1b" if one < two else "interleaved"


@exercise("10.31", unit=FACTOR, hint=(msg("planner.h200_recompute_costs() returns (plain, recomputed); compare their activation.",
                             "planner.h200_recompute_costs() 返回 (plain, recomputed)；比较两者的 activation"
                             "。"),
                         msg("The factor is how many times larger the plain activation is than the recomputed one.",
                             "这个倍数是：不重算的激活是重算后激活的多少倍。")),
          rel_tol=1e-3,  # the worked answer rounds the sizes (2050 MiB / 128 MiB = 16.02)
          mistakes=(Mistake(lambda e: 1 / e, msg("that ratio is upside down: the factor by which the activations shrink "
                                                 "is plain over recomputed",
                                                 "这个比值颠倒了：激活降为原来的几分之一，要用不重算的除以"
                                                 "重算的")),))
def _q31() -> float:
    plain, rec = planner.h200_recompute_costs()
    return float(plain.activation) / float(rec.activation)  # type: ignore[arg-type]


_LAYERS = (3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8)


@exercise("10.32", unit=MS, hint=(msg("The slowest stage can be no faster than the heaviest layer, nor than the total divided "
                             "by 4: both are lower bounds. Start from the larger one and try larger bottlenecks until "
                             "4 contiguous stages fit.",
                             "最慢的流水级不会比最重的那一层更快，也不会比总量除以 4 更快：这两个都是下界。从其中"
                             "较大的那个出发，逐步尝试更大的瓶颈值，直到 4 个连续的流水级放得下为止。"),
                         msg("For a guess T of the slowest stage, cut greedily whenever a stage would exceed T and count "
                             "the stages: T fits when 4 or fewer are needed. Lower T while it still fits; the answer is "
                             "the smallest T that fits.",
                             "先猜一个最慢流水级的耗时 T，只要某个流水级会超过 T 就贪心地切一刀，数一数切出几个"
                             "流水级：不超过 4 个就算放得下。只要还放得下就继续降低 T；答案是放得下的最小 T。")))
def _q32() -> Any:
    return balance.bottleneck(list(_LAYERS), 4)


@exercise("10.33", hint=(msg("Same bubble at F = I = W; compare max_peak_activations for p = 8, m = 24.",
                             "F = I = W 时两者气泡相同；比较 p = 8, m = 24 时的 max_peak_activations。"),
                         msg("For each schedule, ask what rank 0's first backward waits for and how many forwards rank 0 "
                             "has started by then; draw both for p = 4 and count.",
                             "对每个调度问一问：rank 0 的第一个反向在等什么？到那时 rank 0 已经启动了几个前向？画出 "
                             "p = 4 的两个调度数一数。")),
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


@exercise("10.34", unit=MICROBATCHES, hint=(msg("PyTorch's DualPipeV checks m against something it counts when the schedule is built: "
                             "what must the V on p = 4 ranks be given before its steady phase can start?",
                             "PyTorch 的 DualPipeV 在构造调度时会拿 m 和它数出来的某个量比较：p = 4 个 rank 上的 V "
                             "在进入稳态之前，得先有多少个微批？"),
                         msg("The rule counts stages, not ranks: draw the V that DualPipeV places on 4 ranks and count "
                             "its stages.",
                             "这条规则数的是流水级，不是 rank：画出 DualPipeV 在 4 个 rank 上排成的 V，数一数有几个流"
                             "水级。"),
                         msg("To confirm your count: try bk.schedule('dualpipev', 4, m) with your m and with m - 1, "
                             "and read the error message.",
                             "验证你数的结果：用你的 m 和 m - 1 分别试 bk.schedule('dualpipev', 4, m)，读报错信息。")),
          mistakes=(Mistake(lambda _e: 4, msg("that counts ranks; the rule counts stages", "这数的是 rank；这条规则数的是流水级")),))
def _q34() -> int:
    return _dualpipev_min_m(4)


#: 10.43 and 10.44: a 32-layer GPT (h = 4096, seq 4096, the measured H200 layer) on 8 devices, m = 32.
_MODEL_32 = memory.Model(layers=32, hidden=4096, heads=32, seq=4096, name="32-layer GPT, h = 4096")
_VERSUS = (("interleaved", 2), ("dualpipe", None), ("dualpipev", None))


def _versus_same_devices() -> str:
    """A: DualPipe lower bubble and more memory; B: DualPipe lower bubble, interleaved more memory; C, D: interleaved lower."""
    rows = {r["schedule"]: r for r in memory.frontier(_MODEL_32, 8, 32, schedules=_VERSUS)}
    dual, inter = rows["DualPipe"], rows[display_name("interleaved") + " v=2"]
    lower = "dualpipe" if dual["bubble_ratio"] < inter["bubble_ratio"] else "interleaved"
    more = "dualpipe" if dual["total"] > inter["total"] else "interleaved"
    return {("dualpipe", "dualpipe"): "A", ("dualpipe", "interleaved"): "B",
            ("interleaved", "dualpipe"): "C", ("interleaved", "interleaved"): "D"}[(lower, more)]


@exercise("10.43", hint=(msg("Put both on the same 8 devices with the same model and m, and read two numbers for each: the "
                             "bubble_ratio and the memory of the fullest device.",
                             "把两者放在同样的 8 张卡上，模型和 m 也相同，各读两个数：bubble_ratio 和占用最多"
                             "的那张卡的显存。"),
                         msg("bubblekit.memory.frontier(model, 8, 32) tabulates both; remember what DualPipe keeps twice.",
                             "bubblekit.memory.frontier(model, 8, 32) 会把两者列成表；别忘了 DualPipe 有什么"
                             "是存两份的。")),
          compare=_letter)
def _q43() -> str:
    return _versus_same_devices()


def _plan_in_memory(gb: float) -> planner.PlanTable:
    """DualPipe, DualPipeV and interleaved v = 2 on 8 devices, m = 32, each device with ``gb`` GB (10.44's plan).

    The costs are those of one rank's share of the model: 32 layers on 8 devices, 4 layers per rank (as 10.43's
    ``memory.frontier`` uses).
    """
    costs = bk.h200_costs(layers_per_rank=_MODEL_32.layers // 8)
    return planner.plan(8, costs=costs, schedules=("interleaved", "dualpipe", "dualpipev"), vs=(2,), ms=(32,),
                        model=_MODEL_32, gpu_memory=gb * memory.GB)


def _fastest_in_memory(gb: float) -> str:
    """Among DualPipe, DualPipeV and interleaved v = 2 on 8 devices: the fastest per microbatch that fits ``gb`` GB."""
    t = _plan_in_memory(gb)
    assert t.best is not None
    return t.best.schedule


@exercise("10.44", hint=(msg("Give every candidate the same memory budget per device, drop the ones that do not fit, then "
                             "compare the time per microbatch of the rest.",
                             "给每个候选相同的单卡显存预算，去掉放不下的，再比较剩下的每微批耗时。"),
                         msg("Give planner.plan the model, its memory per GPU and the costs of one rank's 4 layers "
                             "(bk.h200_costs(layers_per_rank=4)), then read which rows fit; answer with the registry "
                             "name.",
                             "把模型、单卡显存和一个 rank 上 4 层的耗时（bk.h200_costs(layers_per_rank=4)）交给 "
                             "planner.plan，再看哪些行放得下；用调度在 bk.schedule 中的名字作答。")),
          compare=_schedule_name)
def _q44() -> str:
    return _fastest_in_memory(40)


#: 10.45: Megatron-Core's microbatch_group_size_per_vp_stage on interleaved 1F1B (p, m, v), F = 1, B = 2 slots.
_GROUP_CASE = (8, 32, 2)


def _group_effects() -> dict[str, Any]:
    """10.45: Megatron's default group (p) against the breadth-first one (m): the makespans with free hops and with
    1 slot per hop, and rank 0's peak activations (microbatch activations)."""
    p, m, v = _GROUP_CASE
    runs = {}
    for group in (p, m):
        s = bk.schedule("interleaved", p, m, v, microbatch_group_size=group)
        runs[group] = (bk.simulate(s, bk.Costs(f=1, b=2)), bk.simulate(s, bk.Costs(f=1, b=2, comm=1)))
    return {"free": [runs[g][0].makespan for g in (p, m)], "slow": [runs[g][1].makespan for g in (p, m)],
            "peak": [runs[g][0].peak_activations[0] for g in (p, m)]}


@exercise("10.45", hint=(msg("Simulate the two group sizes twice each, once with free hops and once with a latency per "
                             "hop, and read three numbers: the two step times and rank 0's peak.",
                             "两种分组大小各模拟两次：一次不计通信延迟，一次每跳有延迟；读三个数：两种情况下的单步耗时，"
                             "以及 rank 0 的激活峰值。"),
                         msg("Does the group size change how many chunk-size steps the ramp has, or only which "
                             "microbatches a rank runs first? What does a rank do while it waits for a message?",
                             "分组大小改变的是填充和排空里 chunk 大小的步数，还是只改变 rank 先跑哪些微批？rank "
                             "在等消息的时候能做什么？")),
          compare=_letter)
def _q45() -> str:
    e = _group_effects()
    same_free, faster_slow, more_memory = e["free"][0] == e["free"][1], e["slow"][1] < e["slow"][0], e["peak"][1] > e["peak"][0]
    if same_free and faster_slow and more_memory:
        return "B"
    raise AssertionError(f"10.45's premise no longer holds: {e}")


#: 10.46: the layout, the ranks, the microbatches; a layer's (forward, backward) and the loss layer's, in slots.
_LAYOUT_46 = ("Et*3|t*4|t*4|t*3L", 4, 8, (1, 2), (1, 2))


def _layout_46_step(loss: tuple[int, int]) -> Any:
    text, p, m, layer, _ = _LAYOUT_46
    costs = bk.layout.parse_layout(text, p).costs(*layer, loss=loss)
    return bk.simulate(bk.schedule("1f1b", p, m), costs).makespan


@exercise("10.46", unit=SLOTS, hint=(msg("Turn the string into per-stage work first: count each stage's layers and add "
                                        "what the loss costs to the stage that holds it.",
                                        "先把字符串变成每一级的工作量：数出每级有几层，再把损失层的耗时加到它所在的那一级。"),
                                    msg("The stages are not equal, so the textbook formula for equal stages does not "
                                        "apply: simulate 1F1B with the per-stage costs (bk.layout.parse_layout reads "
                                        "the string), or draw the step and follow the slowest stage.",
                                        "各级不相等，所以等长流水级的教科书公式不适用：用每级的耗时模拟 1F1B"
                                        "（bk.layout.parse_layout 可以读这个字符串），或者画出这一步，跟着最慢的那一级走。")),
          mistakes=(Mistake(lambda _e: _layout_46_step((0, 0)),
                            msg("that leaves the loss out: the last stage computes it too",
                                "这里漏掉了损失层：最后一级还要算它")),
                    Mistake(lambda _e: (_LAYOUT_46[2] + _LAYOUT_46[1] - 1) * 3 * 4,
                            msg("that assumes four equal stages of four layers; read what each stage holds",
                                "这是假设四级都是四层、完全相等；请读出每一级实际放了什么"))))
def _q46() -> Any:
    return _layout_46_step(_LAYOUT_46[4])


# ----------------------------------------------------------------------------- profiles


register({
    "checks.l10.rank_not_int": {"en": "{answer!r} is not a rank: give a whole number",
                                "zh": "{answer!r} 不是 rank 编号：请给一个整数"},
    "checks.l10.rank_format": {"en": "{answer!r} is not a rank number: answer with the rank's number alone, e.g. 2",
                               "zh": "{answer!r} 不是 rank 编号：只写 rank 的编号即可，例如 2"},
    "checks.l10.rank_range": {"en": "rank {answer} does not exist: the trace has ranks 0 to {last}",
                              "zh": "不存在 rank {answer}：这份 trace 的 rank 是 0 到 {last}"},
    "checks.l10.not_straggler": {"en": "that is not the rank that sets the pace; compare the ranks' busy times",
                                 "zh": "定节奏的不是这个 rank；比较各 rank 的忙碌时间"},
    "checks.l10.not_longest_gap": {"en": "not the rank with the longest single idle interval; list the gaps longest "
                                         "first",
                                   "zh": "最长的那一段空闲不在这个 rank 上；把空闲段按从长到短列出来"},
})


def _rank_compare(ranks: int, other: str) -> Any:
    """A compare for a rank answer: right or not, never "too high / too low" (with four ranks a direction gives the
    answer away, as lesson 06's ``_compare_rank`` says for 06.3). ``other``: the message key for a wrong rank."""
    def compare(answer: Any, expected: Any) -> Graded:
        rank = as_rank(answer)
        if rank is None and isinstance(answer, str) and not any(ch.isdigit() for ch in answer):
            return Graded(False, tr("checks.l10.rank_format", answer=answer), FORMAT)  # words: asked again, not counted
        reading = read_number(answer) if rank is None and isinstance(answer, str) else None
        if isinstance(reading, str) or (reading is not None and reading.unit):
            return Graded(False, tr("checks.l10.rank_not_int", answer=answer), FORMAT)  # "1 apples": not counted
        if rank is None:
            return Graded(False, tr("checks.l10.rank_not_int", answer=answer))
        answer = rank
        if answer == expected:
            return Graded(True)
        if not 0 <= answer < ranks:
            return Graded(False, tr("checks.l10.rank_range", answer=answer, last=ranks - 1))
        return Graded(False, tr(other))
    return compare


@exercise("10.35", hint=(msg("A straggler does the same work more slowly than its neighbours: compare the ranks' busy times.",
                             "拖后腿的卡做同样的工作比邻居慢：比较各 rank 的忙碌时间。"),
                         msg("lesson10.profile(1).busy lists them; the others wait for the one with the most.",
                             "lesson10.profile(1).busy 列出了它们；其他 rank 都在等忙碌时间最长的那个。")),
          compare=_rank_compare(4, "checks.l10.not_straggler"))
def _q35() -> int:
    busy = profile(1).busy
    return max(range(len(busy)), key=lambda r: busy[r])


@exercise("10.36", hint=(msg("Add the idle time of every rank inside the step and compare it with all the device-time of "
                             "the step.",
                             "把每个 rank 在这一步内的空闲时间加起来，和这一步的全部设备时间比较。"),
                         msg("tl.idle lists each rank's idle time and tl.makespan the step; tl.p is the number of ranks.",
                             "tl.idle 列出每个 rank 的空闲时间，tl.makespan 是单步耗时；tl.p 是 rank 数。")),
          rel_tol=1e-9,
          fraction_of=THE_STEP,
          mistakes=(Mistake(lambda _e: sum(profile(2).idle) / sum(profile(2).busy),
                            msg("that divides the idle time by the busy time (Megatron's overhead); the bubble_ratio "
                                "divides by all device-time",
                                "这是用空闲时间除以忙碌时间（Megatron 口径的气泡开销）；bubble_ratio 除的是全"
                                "部设备时间")),
                    utilisation(),
                    Mistake(lambda _e: bk.bubble_ratio(4, 8),
                            msg("that is (p - 1)/(m + p - 1) for equal stages; this trace's stages are not equal, so "
                                "measure it", "这是各流水级耗时相同时的 (p - 1)/(m + p - 1)；这份 trace 的流水级耗时"
                                "不同，要实际量一量"))))
def _q36() -> float:
    return profile(2).bubble_ratio


@exercise("10.37", unit=MS, hint=(msg("Rank 1's first forward can start only when rank 0's first forward has ended plus one hop.",
                             "rank 1 的第一个前向，要等 rank 0 的第一个前向结束、再过一跳才能开始。"),
                         msg("Without latency a receiver that waits for nothing else starts the moment its sender ends: "
                             "find such a pair of actions on neighbouring ranks and read how much later it starts; check "
                             "another pair.",
                             "没有延迟时，一个只等上游的动作会在发送方结束的那一刻开始：在相邻 rank 上找这样一对动作，"
                             "读出它晚开始了多少；再找一对核对。")),
          rel_tol=0.05)  # an estimate read off a trace: within 5 % is right (0.29 and 0.31 for 0.3 ms)
def _q37() -> float:
    tl = profile(3)
    first1 = next(iter(tl.spans(1)))
    first0 = next(iter(tl.spans(0)))
    return float(first1.start - first0.end)


@exercise("10.38", hint=(msg("Read the trace row by row: which rank waits longest between its last forward and its first "
                             "backward?",
                             "一行一行地读这份 trace：哪个 rank 在最后一个前向和第一个反向之间等得最久？"),
                         msg("To confirm your reading: list each rank's idle intervals (idle_intervals(r) for "
                             "r = 0 ... 3) and compare their lengths.",
                             "验证你的判断：把每个 rank 的空闲区间列出来（r = 0 … 3 时的 idle_intervals(r)），"
                             "比一比长短。")),
          compare=_rank_compare(4, "checks.l10.not_longest_gap"))
def _q38() -> int:
    return profile(4).largest_gaps(1)[0].rank


@exercise("10.39", hint=(msg("Compare the ranks' busy times in profile(5): are they equal?",
                             "比较 profile(5) 中各 rank 的忙碌时间：它们相等吗？"),
                         msg("For each lever, say which part of the idle time it shrinks (the ramps at the start and end, "
                             "or the waits inside the steady state), then look at where profile(5)'s idle time is.",
                             "对每一招，说清它缩短的是哪一部分空闲（开头和结尾的填充、排空，还是稳态中的等待），再看 "
                             "profile(5) 的空闲时间落在哪里。")),
          compare=_letter)
def _q39() -> str:
    busy = profile(5).busy
    return "C" if max(busy) > 1.2 * min(busy) else "A"


# ----------------------------------------------------------------------------- whiteboard

_B2F = bk.Costs(f=1, b=2)


@exercise("10.40", hint=(msg("Each rank warms up with some forwards, then alternates one backward and one forward, then "
                             "drains its backwards.",
                             "每个 rank 先用若干前向预热，然后一个反向、一个前向交替，最后排空剩下的反向。"),
                         msg("The last rank runs each backward right after its forward; each earlier rank warms up with "
                             "one more forward than the rank after it.",
                             "最后一个 rank 每跑完一个前向就紧接着跑它的反向；每个更靠前的 rank，预热时比它后"
                             "面的 rank 多跑一个前向。")),
          compare=lambda answer, expected: _whiteboard_per_rank(answer, expected))
def _q40() -> WhiteboardTarget:
    ref = bk.simulate(bk.schedule("1f1b", 3, 3), _B2F)
    goal = target(3, 3, _B2F, ref.makespan, cap=ref.max_peak_activations, split=False)
    goal["rank_caps"] = tuple(ref.peak_activations)  # 1F1B's own peak on each rank: GPipe's order (3, 3, 3) is refused
    return goal


def _whiteboard_per_rank(answer: Any, expected: WhiteboardTarget) -> Graded:
    """:func:`whiteboard`, then each rank's peak against its cap in ``expected["rank_caps"]``.

    With m = p GPipe's order has 1F1B's makespan and 1F1B's largest peak, so one cap for every
    rank cannot tell them apart; 1F1B's per-rank peaks can.
    """
    verdict = whiteboard(answer, expected)
    if not verdict[0]:
        return verdict
    text = answer.to_text() if isinstance(answer, bk.Schedule) else str(answer)
    res = bk.simulate(bk.Schedule.from_text(schedule_text(text), m=expected["m"]), expected["costs"])
    for r, (peak, cap) in enumerate(zip(res.peak_activations, expected["rank_caps"])):
        if peak > cap + 1e-9:
            key = "checks.l07.memory_fused" if expected.get("split") is False else "checks.l07.memory"
            return Graded(False, tr(key, rank=r, peak=format_number(peak), cap=format_number(cap)), "memory")
    return verdict


@exercise("10.41", hint=(msg("Keep 1F1B's order with B split into I then W, then delay some W into the gaps.",
                             "保持 1F1B 的顺序，把 B 拆成先 I 后 W，再把一些 W 推迟到空隙里。"),
                         msg("Run each I as soon as its gradient arrives (it is on the critical path) and keep a W back "
                             "for the moments a rank would otherwise wait.",
                             "梯度一到就跑对应的 I（它在关键路径上），留一些 W 到 rank 本来要等待的时候再跑。")),
          compare=whiteboard)
def _q41() -> WhiteboardTarget:
    ref = bk.simulate(bk.schedule("zb-h1", 2, 4), UNIFORM)
    return target(2, 4, UNIFORM, ref.makespan, cap=2, reference=ref)   # a slow answer is pointed at a gap ZB-H1 does not have


@exercise("10.42", hint=(msg("Let rank 0 run extra forwards in its warm-up, then keep every rank busy with F, I, W.",
                             "让 rank 0 在预热时多跑几个前向，然后用 F、I、W 让每个 rank 都保持忙碌。"),
                         msg("A rank is idle inside its span only when its next action waits for another rank: give "
                             "each rank's early part forwards and its late part W passes.",
                             "rank 只有在下一个动作要等另一个 rank 时才会在自己的跨度内空闲：每个 rank 前段多"
                             "安排前向，后段多安排 W。")),
          compare=whiteboard)
def _q42() -> WhiteboardTarget:
    ref = bk.simulate(bk.schedule("zb-h2", 3, 5), UNIFORM)
    assert published.stage_span_bubble_rate(ref) == 0
    return target(3, 5, UNIFORM, 5 * 3, cap=5, measure="stage_span", reference=ref)
