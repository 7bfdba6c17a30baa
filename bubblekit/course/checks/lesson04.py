"""Exercises of lesson 04, *Schedules compared* (``solutions/04_schedules_compared.ipynb``).

Every expected value is computed with bubblekit when a learner checks an answer.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import bubblekit as bk
from bubblekit.course.checks._grading import THE_STEP, Graded
from bubblekit.course.checks._mistakes import megatron_overhead, swapped_items
from bubblekit.course.checks._registry import Mistake, exercise
from bubblekit.course.checks._schedules import as_schedule, unreadable
from bubblekit.course.checks._text import msg
from bubblekit.course.checks._units import ACTIVATIONS, SLOTS
from bubblekit.i18n import register, tr

#: The cost model of every lesson-04 exercise: forward 1 slot, backward 2 slots, no latency.
COSTS = bk.Costs(f=1, b=2)

#: Exercise 04.5: a hand-written 1F1B for p=2, m=4 with one mistake (it deadlocks).
BROKEN_1F1B = """\
rank 0: 0F0 0F1 0B0 0F2 0B1 0F3 0B2 0B3
rank 1: 1F0 1B1 1F1 1B0 1F2 1B2 1F3 1B3
"""


@exercise("04.1", unit=ACTIVATIONS, hint=(msg("Simulate both schedules with bk.Costs(f=1, b=2) and read r.peak_activations[0].",
                            "用 bk.Costs(f=1, b=2) 模拟两个调度，读出 r.peak_activations[0]。"),
                        msg("GPipe keeps every forward's activations until the backwards start; 1F1B's rank 0 starts "
                            "its first backward after its warm-up forwards.",
                            "GPipe 要把所有前向的激活一直保留到反向开始；1F1B 的 rank 0 做完预热的前向就开始"
                            "第一个反向。")),
          mistakes=(swapped_items(),))
def _peak_rank0() -> tuple[float, float]:
    """(GPipe, 1F1B) peak activations of rank 0 for p=6, m=12."""
    return tuple(bk.simulate(bk.schedule(n, 6, 12), COSTS).peak_activations[0] for n in ("gpipe", "1f1b"))  # type: ignore[return-value]


@exercise("04.2", hint=(msg("Use r.bubble_ratio_exact of the simulated interleaved schedule (a Fraction), not a float.",
                            "用模拟出的交错式调度的 r.bubble_ratio_exact（一个 Fraction），不要用 float。"),
                        msg("Simulate bk.schedule('interleaved', 4, 16, 4) with bk.Costs(f=1, b=2) and compare its "
                            "bubble_ratio_exact with bk.bubble_ratio_exact(p, m, v).",
                            "用 bk.Costs(f=1, b=2) 模拟 bk.schedule('interleaved', 4, 16, 4)，把它的 bubble_r"
                            "atio_exact 和 bk.bubble_ratio_exact(p, m, v) 比较。")),
          exact=True,
          fraction_of=THE_STEP,
          mistakes=(megatron_overhead(4, 16, 4),
                    Mistake(lambda _e: bk.bubble_ratio_exact(4, 16),
                            msg("that is plain 1F1B's bubble (one chunk per rank); this schedule has v = 4 chunks",
                                "这是普通 1F1B 的气泡（每个 rank 一个 chunk）；这个调度有 v = 4 个 chunk"))))
def _interleaved_bubble() -> Any:
    """Exact bubble_ratio of interleaved 1F1B, p=4, m=16, v=4, f=1, b=2."""
    return bk.simulate(bk.schedule("interleaved", 4, 16, 4), COSTS).bubble_ratio_exact


@exercise("04.3", unit=SLOTS, hint=(msg("Simulate both for p=8, m=16 with bk.Costs(f=1, b=2, comm=Fraction(1, 2)) and subtract GPipe's "
                            "makespan from 1F1B's.",
                            "用 bk.Costs(f=1, b=2, comm=Fraction(1, 2)) 在 p=8, m=16 下模拟两者，用 1F1B 的单"
                            "步耗时减去 GPipe 的。"),
                        msg("Each schedule's latency cost is the number of hops on its critical path times 1/2 slot: "
                            "count the hops of each, or read r.critical_path.",
                            "每个调度付出的延迟 = 关键路径上的跳数 x 1/2 个时间槽：分别数跳数，或者读 r.criti"
                            "cal_path。")),
          mistakes=(Mistake(lambda e: -e, msg("right size, wrong sign: the difference is makespan(1F1B) minus makespan(GPipe)",
                                              "大小对了，符号反了：差值是 1F1B 的单步耗时减 GPipe 的单步耗时")),
                    Mistake(lambda _e: _gap(4, 8), msg("that is the lesson's p = 4, m = 8; this exercise has p = 8, m = 16",
                                                       "这是课文里 p = 4, m = 8 的结果；这道题是 p = 8, m = 1"
                                                       "6")),
                    Mistake(lambda _e: _gap(6, 12), msg("that is exercise 03.4's p = 6, m = 12; this exercise has p = 8, "
                                                        "m = 16",
                                                        "这是练习 03.4 里 p = 6, m = 12 的结果；这道题是 p = 8, m = 16"))))
def _comm_gap() -> Any:
    """makespan(1F1B) - makespan(GPipe) for p=8, m=16 with a latency of 1/2 slot per hop."""
    return _gap(8, 16)


def _gap(p: int, m: int) -> Any:
    """makespan(1F1B) - makespan(GPipe) with a latency of 1/2 slot per hop (slots)."""
    c = bk.Costs(f=1, b=2, comm=Fraction(1, 2))
    return bk.simulate(bk.schedule("1f1b", p, m), c).makespan - bk.simulate(bk.schedule("gpipe", p, m), c).makespan


def mystery() -> bk.SimResult:
    """The simulated schedule drawn, without its name, in exercise 04.4."""
    return bk.simulate(bk.schedule("looped-bfs", 3, 4, 2), COSTS)


@exercise(
    "04.4",
    hint=(msg("Read the legend and the boxes: how many chunks does each rank hold, and does any rank start a backward "
              "before all of its forwards are done?",
              "看图例和方块：每个 rank 有几个 chunk？有没有哪个 rank 在自己的前向全部做完之前就开始了反向？"),
          msg("Two of the four schedules hold more than one chunk per rank: one runs 1F1B over the chunks (the "
              "last stage starts a microbatch's backward right after its forward), the other runs every forward "
              "before any backward (breadth first, like GPipe over the chunks). While m < 2p (PyTorch then runs every "
              "microbatch in one round) the forward order alone cannot tell them apart.",
              "四个调度中有两个每个 rank 不止一个 chunk：一个在各个 chunk 上跑 1F1B（最后一个流水级跑完某个微批"
              "的前向，紧接着就跑它的反向），另一个先跑完所有前向再开始反向（广度优先，相当于在 chunk 上跑 GPip"
              "e）。m < 2p 时（PyTorch 这时把所有微批放在一轮里跑），只看前向的顺序分不出两者。")),
)
def _name_the_schedule() -> str:
    return mystery().schedule.name


#: What 04.5's check says, in both languages (fetched when an answer is graded).
register({
    "checks.l04.shape": {
        "en": "the schedule must have p=2 ranks, m=4 microbatches and one stage per rank (got p={p}, m={m}, v={v})",
        "zh": "调度必须是 p=2 个 rank、m=4 个微批、每个 rank 一个流水级（收到的是 p={p}, m={m}, v={v}）"},
    "checks.l04.deadlock": {"en": "it still deadlocks: {error}", "zh": "还是会死锁：{error}"},
    "checks.l04.incomplete": {"en": "the schedule is not complete: {error}", "zh": "调度不完整：{error}"},
    "checks.l04.memory": {
        "en": "legal (no deadlock), but rank {rank} holds {peak:g} microbatch activations at its peak (at most 2 allowed)",
        "zh": "调度合法（没有死锁），但 rank {rank} 峰值时保留了 {peak:g} 个微批的激活（最多允许 2 个）"},
    "checks.l04.slow": {"en": "legal and within memory, but its makespan is {makespan} slots: 1F1B finishes sooner",
                        "zh": "调度合法、显存也没超，但单步耗时是 {makespan} 个时间槽：1F1B 结束得更早"},
})


def _compare_repair(answer: Any, expected: Any) -> Graded:
    """Legal p=2, m=4 schedule, at most 2 activations per rank, makespan no longer than 1F1B's.

    Returns ``Graded(ok, message, kind)`` (unpacks as ``(ok, message)``); the kinds (``deadlock``, ``memory``, ``slow``, ...) select the
    hint, so a legal schedule over the memory cap is never told to read a DeadlockError.
    """
    sched, why = as_schedule(answer)
    if sched is None:
        return unreadable(answer, why)
    if sched.p != 2 or sched.m != 4 or sched.v != 1:
        return Graded(False, tr("checks.l04.shape", p=sched.p, m=sched.m, v=sched.v), "shape")
    try:
        r = bk.simulate(sched, COSTS)
    except bk.DeadlockError as err:
        return Graded(False, tr("checks.l04.deadlock", error=str(err).removeprefix("deadlock: ")), "deadlock")
    except bk.ScheduleError as err:
        return Graded(False, tr("checks.l04.incomplete", error=err), "incomplete")
    worst = max(range(r.p), key=lambda q: r.peak_activations[q])
    if r.max_peak_activations > 2:
        return Graded(False, tr("checks.l04.memory", rank=worst, peak=r.max_peak_activations), "memory")
    if r.makespan > expected:
        return Graded(False, tr("checks.l04.slow", makespan=r.makespan), "slow")
    return Graded(True, "", "")


#: Hints of 04.5 for the deadlock it is about (and for anything not recognised).
REPAIR_HINTS = (
    msg("Simulate the broken text and read the DeadlockError: it names the blocked rank and the action it waits for.",
        "模拟这段有问题的文本，读 DeadlockError：它指出了卡住的 rank 和它在等的动作。"),
    msg("Rank 1 runs a backward of a microbatch whose gradient cannot exist yet: on the last rank, each "
        "backward follows the forward of the same microbatch.",
        "rank 1 跑了一个梯度还不可能存在的微批的反向：在最后一个 rank 上，每个反向都紧跟同一微批的前向。"),
)


@exercise(
    "04.5",
    hint=REPAIR_HINTS,
    compare=_compare_repair,
    kind_hints={
        "deadlock": REPAIR_HINTS,
        "memory": (msg("Your schedule is legal, so the deadlock is fixed; now it keeps more than 2 microbatches alive "
                       "on one rank. Run that rank's backwards earlier, between its forwards.",
                       "你的调度合法，死锁已经解决；但现在有个 rank 同时保留了超过 2 个微批的激活。把这个 ran"
                       "k 的反向提前，插到它的前向之间。"),
                   msg("Rank 0 may hold at most 2: after two forwards, every further forward must wait for a backward.",
                       "rank 0 最多保留 2 个：两个前向之后，每个新的前向都要等一个反向做完。")),
    },
)
def _repair() -> Any:
    """The makespan to match: 1F1B, p=2, m=4."""
    return bk.simulate(bk.schedule("1f1b", 2, 4), COSTS).makespan


@exercise("04.6", hint=(msg("Try bk.schedule('interleaved', 6, m, 2) for every m from 1 to 24 and collect the m that raise ValueError.",
                            "对 1 到 24 的每个 m 试 bk.schedule('interleaved', 6, m, 2)，收集抛出 ValueError "
                            "的 m。"),
                        msg("Wrap each call in try/except ValueError and add m to a set when it raises; read one error "
                            "message to see the rule.",
                            "把每次调用包在 try/except ValueError 里，抛错时把 m 加进集合；读一条报错信息就能看出规则。")),
          mistakes=(Mistake(lambda _e: _refused_for(4, 16), msg("those are the m refused for the lesson's p = 4; this exercise has p = 6",
                                                                "这些是课文中 p = 4 时被拒绝的 m；这道题是 p "
                                                                "= 6")),))
def _refused() -> set[int]:
    """The m in 1..24 that interleaved 1F1B refuses for p=6."""
    return _refused_for(6, 24)


def _refused_for(p: int, up_to: int) -> set[int]:
    """The m in 1..up_to that interleaved 1F1B (v=2) refuses for p ranks."""
    out: set[int] = set()
    for m in range(1, up_to + 1):
        try:
            bk.schedule("interleaved", p, m, 2)
        except ValueError:
            out.add(m)
    return out
