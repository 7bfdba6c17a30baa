"""Exercises of lesson 03, "The bubble formula" (``solutions/03_the_bubble_formula.ipynb``).

Expected values are computed by bubblekit (formulas, the simulator, or :mod:`bubblekit.symbolic`)
when a learner checks; nothing here is typed. Times in abstract slots.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import bubblekit as bk
from bubblekit.course.checks._grading import THE_STEP, Graded, read_expression, split_products
from bubblekit.course.checks._mistakes import megatron_overhead, overhead_min_m, swapped_items, swapped_pm, utilisation
from bubblekit.course.checks._registry import FORMAT, Mistake, exercise
from bubblekit.course.checks._schedules import ScheduleGoal, compare_schedule, generated
from bubblekit.course.checks._text import msg, shown
from bubblekit.course.checks._units import MICROBATCHES, SLOTS
from bubblekit.i18n import get_language, register, tr

#: Values tried when two expressions do not simplify to the same one (floor or ceiling terms):
#: every whole p, m, v in these ranges and each listed time and target.
_GRID = {"p": range(1, 9), "m": range(1, 17), "v": (1, 2, 3), "t_f": (1, 3), "t_b": (2, 1),
         "c": (Fraction(1, 2), 3), "b^*": (Fraction(3, 10), Fraction(2, 7))}


def _symbols() -> dict[str, Any]:
    """The exercises' symbols by printed name, and by the Python names that print otherwise (``b_star``,
    ``target``, ``comm``: :func:`~bubblekit.course.checks._grading._symbol_aliases`), so that text written
    with the names the questions use reads as those symbols."""
    from bubblekit import symbolic as sb
    from bubblekit.course.checks._grading import _symbol_aliases

    table = {s.name: s for s in (sb.p, sb.m, sb.v, sb.t_f, sb.t_b, sb.comm, sb.target)}
    table.update({alias: table[name] for alias, name in _symbol_aliases().items() if name in table and alias not in table})
    return table


#: What the expression checks say, in both languages (fetched when an answer is graded).
register({
    "checks.l03.unreadable": {"en": "could not read your answer as a sympy expression (got {type})",
                              "zh": "无法把你的答案读成 sympy 表达式（收到的是 {type}）"},
    "checks.l03.unknown_symbols": {
        "en": "unknown symbol(s) {unknown}: use the symbols of bubblekit.symbolic "
              "(p, m, v, t_f, t_b, c (the latency) and b_star)",
        "zh": "未知符号 {unknown}：请用 bubblekit.symbolic 里的符号"
              "（p、m、v、t_f、t_b、c（延迟）和 b_star）"},
    "checks.l03.missing_symbols": {"en": "not equal to the expected expression; it does not use {missing}",
                                   "zh": "与期望的表达式不相等；式子里没有用到 {missing}"},
    "checks.l03.differs": {
        "en": "not equal to the expected expression (evaluate it for a case you can count and compare)",
        "zh": "与期望的表达式不相等（代入一个能数清楚的例子算一算，比较一下）"},
})


def _read_expression(answer: Any) -> tuple[Any, str]:
    """The answer as a sympy expression in bubblekit.symbolic's symbols, or (None, why not).

    Text is read as the course prints its formulas (``(p − 1)/(m·v + p − 1)``, ``(p-1)(1-b^*)/b^*``):
    :func:`~bubblekit.course.checks._grading.read_expression`."""
    import sympy as sp

    expr, why = read_expression(answer)
    if expr is None:
        return None, why
    try:
        expr = sp.nsimplify(expr, rational=True)
    except (sp.SympifyError, TypeError, ValueError):
        return None, tr("checks.l03.unreadable", type=type(answer).__name__)
    table = _symbols()
    expr = split_products(expr, table)  # the course prints (p − 1)/(mv + p − 1)
    unknown = sorted(s.name for s in expr.free_symbols if s.name not in table)
    if unknown:
        return None, tr("checks.l03.unknown_symbols", unknown=unknown)
    return expr.subs({s: table[s.name] for s in expr.free_symbols}), ""


def _same(a: Any, b: Any) -> bool:
    """True when ``a`` and ``b`` simplify to the same expression or agree on the whole grid."""
    import sympy as sp

    try:
        if sp.simplify(a - b) == 0:
            return True
    except (TypeError, ValueError):  # pragma: no cover - sympy failing on odd input
        return False
    table = _symbols()
    used = sorted({s.name for s in (a - b).free_symbols})
    ranges = [_GRID[name] for name in used]
    for values in itertools.product(*ranges):
        subs = {table[name]: sp.Rational(val) for name, val in zip(used, values)}
        try:
            x, y = a.subs(subs), b.subs(subs)
        except (TypeError, ValueError, ZeroDivisionError):
            return False
        if not (x.is_finite and y.is_finite) or (x != y and sp.simplify(x - y) != 0):
            return False
    return True


def expression_compare(*mistakes: tuple[Callable[[], Any], str]) -> Callable[[Any, Any], tuple[bool, str]]:
    """A ``compare`` for answers that are sympy expressions, with recognised mistakes.

    Symbols are matched by *name* (``p``, ``m``, ``v``, ``t_f``, ``t_b``, ``c``, ``b^*``), so
    ``sp.symbols("p m")`` works as well as ``bubblekit.symbolic``'s. Two expressions are equal
    when ``sympy.simplify`` says so or, failing that, when they agree on a grid of whole
    ``p, m, v`` and a few times (forms with ``floor`` and ``ceiling`` that sympy cannot
    simplify). ``mistakes`` are ``(expression builder, message)`` pairs (a message written with
    :func:`~bubblekit.course.checks._text.msg`, in both languages): an answer equal to a mistaken
    expression gets its message. No message contains the expected expression.
    """
    def compare(answer: Any, expected: Any) -> tuple[bool, str]:
        expr, why = _read_expression(answer)
        if expr is None:  # text that is no expression: said, not counted as a try
            return Graded(False, why, FORMAT if isinstance(answer, str) else "")
        if _same(expr, expected):
            return True, ""
        for build, message in mistakes:
            if _same(expr, build()):
                return False, shown(message)
        missing = sorted(s.name for s in expected.free_symbols if s not in expr.free_symbols)
        if missing:
            return False, tr("checks.l03.missing_symbols", missing=("、" if get_language() == "zh" else ", ").join(missing))
        return False, tr("checks.l03.differs")

    return compare


def compare_expression(answer: Any, expected: Any) -> tuple[bool, str]:
    """Compare a sympy expression by symbol names (see :func:`expression_compare`), no known mistakes."""
    return expression_compare()(answer, expected)


@exercise("03.0", hint=(msg("Give the bubble ratio of lesson 03 for these p and m as an exact fractions.Fraction "
                            "(not a float).",
                            "用第 03 课的气泡比例公式，按这组 p 和 m 给出精确的 fractions.Fraction（不要 floa"
                            "t）。"),
                        msg("Count one rank's idle slots per direction and all of its slots per direction "
                            "(lesson 03, step 2), then divide them as a Fraction.",
                            "数出一个 rank 在每个方向上的空闲时间槽和全部时间槽（第 03 课第 2 步），再用 Frac"
                            "tion 相除。")),
          exact=True,
          fraction_of=THE_STEP,
          mistakes=(megatron_overhead(4, 12), swapped_pm(bk.bubble_ratio_exact, 4, 12), utilisation()))
def _check_yourself() -> Any:
    return bk.bubble_ratio_exact(4, 12)


@exercise("03.1", unit=SLOTS, hint=(msg("Count the hatched grey (idle) boxes of each rank in the picture, in slots, and add "
                            "up the ranks.",
                            "数出图中每个 rank 的灰色斜线（空闲）方块，以时间槽计，再把所有 rank 加起来。"),
                        msg("Every rank idles the same time, before, between or after its work: count one rank's "
                            "idle slots in the forward wave and in the backward wave, then take all the ranks.",
                            "每个 rank 的空闲时间都一样，只是分布在工作之前、之间或之后：数出一个 rank 在前向"
                            "和反向两轮中的空闲时间槽，再乘上全部 rank。")),
          mistakes=(Mistake(lambda _e: _gpipe_3_5().idle[0], msg("that is one rank's idle time; add it up over all the ranks",
                                                                 "这是一个 rank 的空闲时间；要把所有 rank 的"
                                                                 "加起来")),))
def _count_idle() -> Any:
    return _gpipe_3_5().total_idle


def _gpipe_3_5() -> bk.SimResult:
    return bk.simulate(bk.schedule("gpipe", 3, 5), bk.preset("b=2f"))


def _sb() -> Any:
    from bubblekit import symbolic as sb

    return sb


@exercise("03.2", hint=(msg("Start from the interleaved makespan (exercise 03.10) and one rank's busy time: the "
                            "utilisation is the busy share of the step.",
                            "从交错式 1F1B 的单步耗时（练习 03.10）和一个 rank 的忙碌时间出发：利用率就是忙"
                            "碌时间占单步耗时的比例。"),
                        msg("bk.symbolic.bubble_fraction(makespan, bk.symbolic.busy_per_rank()) gives the idle share; "
                            "the busy share is what is left. bk.symbolic.evaluate(expr, p=4, m=8, v=2) gives its value "
                            "at one case, to compare with bk.simulate's utilization there.",
                            "bk.symbolic.bubble_fraction(makespan, bk.symbolic.busy_per_rank()) 给出空闲占比，剩下的就是"
                            "忙碌占比。bk.symbolic.evaluate(expr, p=4, m=8, v=2) 给出它在一个例子上的值，可以和 "
                            "bk.simulate 在同一例子上的利用率对照。")),
          compare=expression_compare(
              (lambda: _sb().INTERLEAVED_RATIO, msg("that is the idle share (the bubble); the utilisation is the busy share",
                                                    "这是空闲占比（气泡）；利用率是忙碌占比")),
              (lambda: _sb().UTILIZATION, msg("that is the utilisation without chunks: v must appear",
                                              "这是不分 chunk 时的利用率：式子里必须有 v")),
          ))
def _interleaved_utilization() -> Any:
    sb = _sb()
    return _factor(1 - sb.bubble_fraction(sb.makespan_interleaved(), sb.busy_per_rank()))


def _factor(expr: Any) -> Any:
    """``sympy.factor`` (sympy is imported when an exercise is checked, not when the module loads)."""
    import sympy as sp

    return sp.factor(expr)


@exercise("03.3", unit=MICROBATCHES, hint=(msg("Solve b(m) <= target for m (lesson 03, step 4), then round up; the article's loop "
                            "stops at 128.",
                            "解 b(m) <= 目标值求 m（第 03 课第 4 步），再向上取整；原文的循环停在 128。"),
                        msg("Write b(m) for p = 16 with the p - 1 crossing slots in the numerator and in the "
                            "denominator, set it equal to 1/20 and solve for m by hand; round up, then simulate m and "
                            "m - 1 to see that only the first meets 5 %.",
                            "写出 p = 16 时的 b(m)，分子和分母里都有 p - 1 个填充与排空时间槽；令它等于 1/20，手算解出 m"
                            "；向上取整，再分别模拟 m 和 m - 1，确认只有前者达到 5%。")),
          mistakes=(Mistake(lambda e: e - 1, msg("that m misses the target by a hair: round the solution up, not down",
                                                 "这个 m 差一点点达不到目标：解要向上取整，不是向下")),
                    overhead_min_m(16, 0.05)))
def _min_m_five_percent() -> Any:
    return bk.min_micro_batch(16, 0.05)


@exercise("03.4", unit=SLOTS, hint=(msg('Answer {{"gpipe": makespan, "1f1b": makespan}} in slots; 1F1B crosses more hops than '
                            "GPipe when there is latency.",
                            '答案写成 {{"gpipe": makespan, "1f1b": makespan}}，以时间槽计；有延迟时，1F1B 经过的跳比 '
                            "GPipe 多。"),
                        msg("Simulate both with bk.Costs(f=1, b=2, comm=Fraction(1, 2)); to see why they differ, draw "
                            "each with its critical path and count the hops on it.",
                            "用 bk.Costs(f=1, b=2, comm=Fraction(1, 2)) 模拟两者；想知道为什么不同，就把两者连同"
                            "关键路径画出来，数一数路径上的跳数。")))
def _comm_makespans() -> Any:
    costs = bk.Costs(f=1, b=2, comm=0.5)
    return {name: bk.simulate(bk.schedule(name, 6, 12), costs).makespan for name in ("gpipe", "1f1b")}


@exercise(
    "03.5",
    hint=(msg("Rank r runs p - r forwards before its first backward (lesson 03's warm-up of p - r - 1, plus one), "
              "then alternates one backward and one forward, then drains the backwards.",
              "rank r 在第一个反向之前先跑 p - r 个前向（第 03 课所说的 p - r - 1 个预热前向，再加一个），"
              "然后一个反向、一个前向交替，最后把剩下的反向排空。"),
          msg("The last rank runs each backward right after its forward; each earlier rank starts one more "
              "forward before its first backward.",
              "最后一个 rank 每跑完一个前向就紧接着跑它的反向；越靠前的 rank，在第一个反向之前多启动一个前向"
              "。")),
    compare=lambda answer, goal: _written_by_hand(answer, goal),
)
def _write_1f1b() -> Any:
    costs = bk.preset("b=2f")
    best = bk.simulate(bk.schedule("gpipe", 3, 6), costs).makespan
    return ScheduleGoal(3, 6, costs, best, max_peak=3)




def _written_by_hand(answer: Any, goal: ScheduleGoal) -> Graded:
    """03.5's compare: text is graded by :func:`compare_schedule`; a ``bk.Schedule`` object is refused.

    "Do not generate it": a fair check cannot tell a hand-written text from a printed generator's
    (1F1B's order is what a learner should write), so it refuses only the object a generator
    returns and says so; the same orders written as text are right.
    """
    if generated(answer):
        return Graded(False, tr("checks.generated"))
    return compare_schedule(answer, goal)


def _megatron_quarter(p: int = 8, overhead: float = 0.25) -> tuple[int, float, float]:
    """(smallest m with Megatron's overhead <= ``overhead``, its overhead, its fraction of the step)."""
    m = next(m for m in range(1, 10_000) if bk.bubble_overhead(p, m) <= overhead)
    return m, bk.bubble_overhead(p, m), bk.ratio_from_overhead(bk.bubble_overhead(p, m))


@exercise("03.6", unit=(MICROBATCHES, None), hint=(msg("Answer (m, b): first the smallest whole m whose Megatron overhead is at most 25 %, "
                            "then that configuration's bubble as a fraction of the step.",
                            "答案写成 (m, b)：先是 Megatron 口径的气泡开销不超过 25% 的最小整数 m，再是这个配"
                            "置的气泡比例（占整步的比例）。"),
                        msg("Solve (p - 1)/m <= 1/4 for m at p = 8 and round up; for the second number, both measures "
                            "divide the same idle time: the step is the busy time plus that idle time.",
                            "p = 8 时解 (p - 1)/m <= 1/4 求 m，再向上取整；第二个数：两种口径的分子是同一段空闲时间，"
                            "而 p × 单步耗时 = 全部忙碌时间 + 这段空闲时间。")),
          fraction_of=THE_STEP,
          mistakes=(Mistake(lambda _e: _megatron_quarter()[:2],
                            msg("the second number is Megatron's overhead again; convert it to the fraction of the step",
                                "第二个数又是 Megatron 口径的气泡开销；要换算成占整步的比例")),
                    swapped_items()))
def _megatron_quarter_expected() -> Any:
    m, _, b = _megatron_quarter()
    return (m, b)


# ----------------------------------------------------------------------------- the derivation, step by step
# The lesson's own cells (03.7 - 03.11): the learner writes each step as a sympy expression in the
# symbols of bubblekit.symbolic; the expected one is built from the named pieces of the diagram.


@exercise("03.7", hint=(msg("Follow the last microbatch: when does it leave rank 0, and how many forwards does it "
                            "still need on the other ranks? The backward wave mirrors the forward wave.",
                            "跟着最后一个微批走：它什么时候离开 rank 0？在其余 rank 上还要做几次前向？反向一轮"
                            "和前向一轮是镜像对称的。"),
                        msg("Count slots in the p = 4, m = 4 picture: the forward wave lasts a number of forward "
                            "slots that grows by one per extra microbatch and by one per extra rank. Write that "
                            "count with p and m, times t_f, then add the backward wave's count times t_b.",
                            "在 p = 4, m = 4 的图里数时间槽：前向一轮持续的前向时间槽数，每多一个微批加一，每多"
                            "一个 rank 也加一。用 p 和 m 写出这个数，乘以 t_f，再加上反向一轮的时间槽数乘以 t_b"
                            "。")),
          compare=expression_compare(
              (lambda: _sb().busy_per_rank(), msg("that is one rank's busy time: the step also lasts while the last "
                                                  "microbatch crosses the other ranks",
                                                  "这是一个 rank 的忙碌时间；最后一个微批穿过其余 rank 的这段"
                                                  "时间也算在一步之内")),
              (lambda: _sb().wave(_sb().t_f), msg("that is only the forward wave: the backward wave follows it",
                                                  "这只是前向一轮，后面还有反向一轮")),
              (lambda: _sb().makespan_gpipe() + _sb().t_f + _sb().t_b,
               msg("one action too many per wave: between p ranks a microbatch crosses one link fewer than there are ranks",
                   "每一轮多算了一个动作：p 个 rank 之间，微批经过的链路比 rank 数少一条")),
          ))
def _makespan() -> Any:
    sb = _sb()
    return sb.wave(sb.t_f) + sb.wave(sb.t_b)


OFF_BY_ONE = msg("off by one: between p ranks a microbatch crosses p - 1 links, and the step lasts (m + p - 1)(t_f + t_b); "
                 "check your numerator and denominator on p = 2, m = 1",
                 "差了一：p 个 rank 之间微批经过 p - 1 条链路，一步持续 (m + p - 1)(t_f + t_b)；在 p = 2, m = 1 上"
                 "核对你的分子和分母")


def _swap_pm(expr: Any) -> Any:
    sb = _sb()
    return expr.subs({sb.p: sb.m, sb.m: sb.p}, simultaneous=True)


def _off_by_one(k: int) -> Any:
    """03.8's off-by-one forms of (p - 1)/(m + p - 1): p or p - 1 over m + p, m + p - 1 or m + p - 2."""
    sb = _sb()
    p, m = sb.p, sb.m
    return ((p) / (m + p), p / (m + p - 1), (p - 1) / (m + p), (p - 1) / (m + p - 2))[k]


@exercise("03.8", hint=(msg("b is idle device-time over total device-time: each of the p ranks idles for the part of "
                            "the makespan in which it is not working.",
                            "b 是空闲的设备时间除以全部设备时间：p 个 rank 中的每一个，在单步耗时里不干活的"
                            "那部分时间就是空闲。"),
                        msg("Test your expression on a picture you can count: for p = 2, m = 1 and for p = 3, m = 2, "
                            "count the idle boxes and all the boxes of the step, and compare with what your b gives.",
                            "拿能数清楚的图检验你的表达式：在 p = 2, m = 1 和 p = 3, m = 2 的图里，数出空闲方块和"
                            "这一步的全部方块，再和你的 b 算出来的值比较。")),
          compare=expression_compare(
              (lambda: _sb().MEGATRON_OVERHEAD, msg("that is Megatron's overhead (idle over busy time); b divides the "
                                                    "idle time by the whole step, p x makespan",
                                                    "这是 Megatron 口径的气泡开销（空闲时间 / 忙碌时间）；b "
                                                    "是用空闲时间除以整步的设备时间 p x 单步耗时")),
              (lambda: _sb().UTILIZATION, msg("that is the busy share (the utilisation); b is the idle share",
                                              "这是忙碌占比（利用率）；b 是空闲占比")),
              (lambda: _sb().idle_per_rank(_sb().makespan_gpipe()),
               msg("that is one rank's idle time; divide it by the step to get a fraction",
                   "这是一个 rank 的空闲时间；除以单步耗时才得到比例")),
              (lambda: _swap_pm(_ratio()),
               msg("that is b with p and m swapped: the crossing slots come from the p ranks, the work from the m "
                   "microbatches",
                   "这是把 p 和 m 弄反的 b：填充与排空的时间槽来自 p 个 rank，工作量来自 m 个微批")),
              *((lambda k=k: _off_by_one(k), OFF_BY_ONE) for k in range(4)),
          ))
def _ratio() -> Any:
    sb = _sb()
    return sb.bubble_fraction(sb.makespan_gpipe(), sb.busy_per_rank())



@exercise("03.9", hint=(msg("Set b(m) equal to b_star and solve for m: multiply both sides by the denominator and "
                            "collect the terms in m (or let sp.solve(sp.Eq(my_b, b_star), m) do it).",
                            "令 b(m) 等于 b_star 并解出 m：两边同乘分母，再合并含 m 的项（或者交给 sp.solve(s"
                            "p.Eq(my_b, b_star), m)）。"),
                        msg("b falls as m grows, so the root is the boundary. Test your expression at p = 8, "
                            "b_star = 1/5: the first whole m at or above it must give a simulated bubble of at "
                            "most 20 %, and the m just below it more.",
                            "b 随 m 增大而减小，所以这个根就是边界。在 p = 8、b_star = 1/5 时检验你的表达式："
                            "不小于根的第一个整数 m，模拟出的气泡必须不超过 20%，比它小一的 m 则超过 20%。")),
          compare=expression_compare(
              (lambda: _ceiling(_sb().solve_min_m()), msg("that is the smallest whole m (rounded up); give the root "
                                                          "itself, the m at which b equals b_star",
                                                          "这是向上取整后的最小整数 m；要给出根本身，也就是 b"
                                                          " 恰好等于 b_star 时的 m")),
              (lambda: _sb().solve_min_m() + _sb().p - 1, msg("that root counts the p - 1 crossing slots too: it solves "
                                                              "for m + p - 1, not for m",
                                                              "这个根把 p - 1 个填充与排空时间槽也算进去了：它解的"
                                                              "是 m + p - 1，不是 m")),
              (lambda: 1 / _sb().solve_min_m(), msg("that is upside down: which of the two goes on top?",
                                                    "分子分母颠倒了：两者中哪个该在上面？")),
          ))
def _min_m_root() -> Any:
    sb = _sb()
    return sb.solve_min_m(sb.bubble_fraction(sb.makespan_gpipe(), sb.busy_per_rank()), sb.b_star)


def _ceiling(expr: Any) -> Any:
    import sympy as sp

    return sp.ceiling(expr)


@exercise("03.10", hint=(msg("A rank still runs its whole share for every microbatch; what changes is the length "
                             "of one step of the crossing: how long does one chunk action take?",
                             "每个 rank 对每个微批仍要做完自己的全部工作；变的是填充与排空中每一步的长度：一个 "
                             "chunk 动作要多长时间？"),
                         msg("Start from one rank's work (step 1); the crossing still passes the other p - 1 ranks, "
                             "but each of its steps is now one chunk action, forward and backward.",
                             "从一个 rank 的工作量出发（第 1 步）；填充与排空仍要经过其余 p - 1 个 rank，但每一步现"
                             "在只是一个 chunk 动作，前向和反向都是。")),
          compare=expression_compare(
              (lambda: _sb().makespan_gpipe(), msg("that is the makespan without chunks: with v chunks per rank the "
                                                   "crossing goes in chunk-sized steps",
                                                   "这是不分 chunk 时的单步耗时；每个 rank 有 v 个 chunk 时"
                                                   "，填充与排空是按 chunk 大小的步子走的")),
              (lambda: _sb().makespan_gpipe() / _sb().v, msg("each rank still does all of its share's work for every "
                                                             "microbatch: only the crossing shrinks with v",
                                                             "每个 rank 对每个微批仍要做完自己的全部工作：随 "
                                                             "v 缩短的只有填充与排空部分")),
          ))
def _makespan_interleaved() -> Any:
    sb = _sb()
    return sb.busy_per_rank() + sb.crossing(sb.chunk(sb.t_f)) + sb.crossing(sb.chunk(sb.t_b))


@exercise("03.11", hint=(msg("The compute does not change; add c once per hop on the critical path. Count the round "
                             "trips first: each turn moves the path at most p microbatches on.",
                             "计算量不变；关键路径上每一跳加一个 c。先数往返次数：每一轮，路径最多前进 p 个微"
                             "批。"),
                         msg("Between two consecutive actions on the critical path there is either a hop or a step on "
                             "the same rank, and there are two such steps per round trip, less one. Count the links "
                             "between the path's actions and subtract those steps (sp.ceiling is available).",
                             "关键路径上相邻两个动作之间，要么是一跳，要么是在同一个 rank 上接着走一步；每次"
                             "往返有两次这样的同 rank 步，总共再减一。数出路径上各动作之间的链路数，再减去这"
                             "些步（可以用 sp.ceiling）。")),
          compare=expression_compare(
              (lambda: _sb().makespan_gpipe(comm=_sb().c), msg("that is GPipe's latency term: 1F1B's critical path "
                                                                "zig-zags and crosses more links",
                                                               "这是 GPipe 的延迟项：1F1B 的关键路径来回折返"
                                                               "，经过的链路更多")),
              (lambda: _sb().makespan_gpipe(), msg("that has no latency: add c for each hop on the critical path",
                                                   "这里没有延迟：关键路径上每一跳要加一个 c")),
          ))
def _makespan_1f1b_latency() -> Any:
    sb = _sb()
    return sb.makespan_gpipe() + sb.hops_1f1b() * sb.c
