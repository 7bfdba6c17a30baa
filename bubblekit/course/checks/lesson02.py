"""Exercises of lesson 02, "Why bubbles appear" (``solutions/02_why_bubbles_appear.ipynb``).

Each expected value is simulated by bubblekit when a learner checks; nothing here is typed.
Costs are in abstract slots (F = 1, B = 2 unless an exercise says otherwise).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import bubblekit as bk
from bubblekit.course.checks._grading import Graded
from bubblekit.course.checks._mistakes import hop_off, swapped_items
from bubblekit.course.checks._registry import Mistake, compare_choice, exercise
from bubblekit.course.checks._schedules import ScheduleGoal, as_schedule, compare_schedule
from bubblekit.course.checks._text import msg
from bubblekit.course.checks._units import SLOTS
from bubblekit.course.checks.lesson01 import gap_before
from bubblekit.i18n import register, tr

#: The unbalanced pipeline of exercises 02.4 and 02.5 (not the lesson's, so the lesson does not answer
#: them): stage 1 holds three times the work of stage 0, stage 3 twice; GPipe with ``UNEVEN_M`` microbatches.
UNEVEN_F = (1, 3, 1, 2)
UNEVEN_B = tuple(2 * f for f in UNEVEN_F)
UNEVEN_M = 6


def uneven_result() -> bk.SimResult:
    """GPipe, p = 4, m = ``UNEVEN_M``, forward costs ``UNEVEN_F`` and backward twice that (slots)."""
    return bk.simulate(bk.schedule("gpipe", 4, UNEVEN_M), bk.Costs(f=UNEVEN_F, b=UNEVEN_B))


def _gap_0b0(p: int, m: int) -> Any:
    """Rank 0's wait before ``0B0`` in GPipe with ``p`` ranks, ``m`` microbatches, F = 1, B = 2 (slots)."""
    return gap_before(bk.simulate(bk.schedule("gpipe", p, m), bk.preset("b=2f")), 0, "0B0")


@exercise("02.0", unit=SLOTS, hint=(msg("In GPipe the last rank runs all m forwards before its first backward: follow the last "
                            "microbatch down after rank 0's last forward, then microbatch 0's gradient back up, and "
                            "count the stages each crosses.",
                            "GPipe 中最后一个 rank 要先跑完全部 m 个前向，才开始第一个反向。从 rank 0 的最后一个前向"
                            "结束时算起，先跟着最后一个微批往下走，再跟着微批 0 的梯度往回走，数一数各自经过几个流水级。"),
                        msg("Each stage the last microbatch still has to cross costs one forward (1 slot), each stage "
                            "the gradient crosses on its way back one backward (2 slots); draw p = 2 and check your "
                            "count against the picture.",
                            "最后一个微批还要经过的每个流水级各花一次前向（1 个时间槽），梯度往回经过的每个流水"
                            "级各花一次反向（2 个时间槽）；画出 p = 2 的图，拿图核对你数的结果。")),
          mistakes=(hop_off(lambda p: _gap_0b0(p, 8), 4)[0],
                    Mistake(lambda _e: _gap_0b0(3, 8),
                            msg("that misses part of the wait: count the stages crossed on the way down (a forward "
                                "each, 1 slot) and on the way back (a backward each, 2 slots), over all p - 1 links",
                                "少算了一部分等待：往下经过的流水级（每个一次前向，1 个时间槽）和往回经过的流水级"
                                "（每个一次反向，2 个时间槽）都要数，p - 1 条链路全算上"))))
def _check_yourself() -> Any:
    return _gap_0b0(4, 8)


@exercise("02.1", unit=SLOTS, hint=(msg("Give two lists of 5 numbers: each rank's wait before its first action (fill), "
                            "and its idle time after its last action (drain).",
                            "给出两个各含 5 个数的列表：每个 rank 第一个动作之前的等待（填充），以及最后一个"
                            "动作之后的空闲（排空）。"),
                        msg("How many forwards must run before microbatch 0 reaches rank r? And how many backwards "
                            "still run, on other ranks, after rank r's last one? Read the times with result.spans(r).",
                            "微批 0 到达 rank r 之前，要先跑完几个前向？rank r 的最后一个反向结束之后，其他 rank "
                            "上还要跑几个反向？用 result.spans(r) 读出时间。")),
          mistakes=(swapped_items(),))
def _fill_and_drain() -> Any:
    result = bk.simulate(bk.schedule("gpipe", 5, 3), bk.preset("b=2f"))
    fill = [list(result.spans(r))[0].start for r in range(result.p)]
    drain = [result.makespan - list(result.spans(r))[-1].end for r in range(result.p)]
    return (fill, drain)


@exercise("02.2", unit=SLOTS, hint=(msg("Between its last forward and its first backward, rank 0 waits for the forward to reach "
                            "the last stage and the gradient to come back.",
                            "在最后一个前向和第一个反向之间，rank 0 要等前向到达最后一个流水级、梯度再传回来"
                            "。"),
                        msg("Measure it: the gap in result.idle_intervals(0) whose .before is '0B0'.",
                            "量出来：result.idle_intervals(0) 里 .before 为 '0B0' 的那段空闲。")),
          mistakes=hop_off(lambda p: _gap_0b0(p, 4), 6))
def _middle_gap() -> Any:
    return _gap_0b0(6, 4)


@exercise("02.3", unit=SLOTS, hint=(msg("Answer (extra time for GPipe, extra time for 1F1B), in slots; simulate both with and "
                            "without comm and subtract.",
                            "答案写成 (GPipe 多出的时间, 1F1B 多出的时间)，以时间槽计；分别在有 comm 和无 com"
                            "m 时模拟两者，再相减。"),
                        msg("GPipe pays the latency only on the first forward's way down and the last backward's way "
                            "up; 1F1B's alternation puts more hops on its critical path.",
                            "GPipe 只在第一个前向往下走、最后一个反向往回走时付出延迟；1F1B 前向反向交替，关"
                            "键路径上的跳更多。")),
          mistakes=(swapped_items(),))
def _comm_extra() -> Any:
    extra = []
    for name in ("gpipe", "1f1b"):
        sched = bk.schedule(name, 4, 8)
        with_comm = bk.simulate(sched, bk.Costs(f=1, b=2, comm=0.25)).makespan
        extra.append(with_comm - bk.simulate(sched, bk.Costs(f=1, b=2)).makespan)
    return tuple(extra)


def _mean_stage_makespan() -> Any:
    """GPipe's makespan if every stage cost the mean of ``UNEVEN_F`` (the mistake in 02.4)."""
    mean_f = sum(UNEVEN_F) / len(UNEVEN_F)
    return bk.simulate(bk.schedule("gpipe", 4, UNEVEN_M), bk.Costs(f=mean_f, b=2 * mean_f)).makespan


@exercise("02.4", unit=SLOTS, hint=(msg("The forward wave takes the sum of the stage times plus (m - 1) times the slowest stage; "
                            "the backward wave the same with backward times.",
                            "前向一轮的耗时是各流水级时间之和，加上 (m - 1) 倍最慢流水级的时间；反向一轮同理，换"
                            "成反向时间。"),
                        msg("Simulate it: bk.simulate(bk.schedule('gpipe', 4, m), bk.Costs(f=uneven_f, b=uneven_b)) "
                            "and compare with your prediction.",
                            "模拟一下：bk.simulate(bk.schedule('gpipe', 4, m), bk.Costs(f=uneven_f, b=uneven_"
                            "b))，再和你的预测比较。")),
          mistakes=(Mistake(lambda _e: _mean_stage_makespan(),
                            msg("that is what equal stages of the average cost would take; once the pipeline is "
                                "full, the slowest stage sets the pace",
                                "这是各流水级都取平均耗时时的结果；流水线填满之后，节奏由最慢的流水级决定")),))
def _uneven_makespan() -> Any:
    return uneven_result().makespan


@exercise("02.5", hint=(msg("Count how many actions of each rank lie on result.critical_path.",
                            "数一数 result.critical_path 上每个 rank 各有多少个动作。"),
                        msg("Once the pipeline is full, the slowest stage sets the pace: the path runs along that "
                            "rank while the others wait for it. Draw it (critical_path=True in plot_pipeline) and "
                            "see which rank holds the long stretch; answer with the rank as an int.",
                            "流水线填满之后，最慢的流水级决定节奏：其他 rank 等它的时候，关键路径一直沿着它走。"
                            "把路径画出来（plot_pipeline 里设 critical_path=True），看哪个 rank 占了最长的一段；"
                            "用 int 给出这个 rank。")),
          compare=lambda answer, expected: compare_choice(answer, expected, range(4), msg(
              "that rank is not the one holding most of the critical path: draw it (critical_path=True)",
              "关键路径的大部分不在这个 rank 上：把路径画出来看看（critical_path=True）"), rank=True))
def _critical_rank() -> Any:
    counts = Counter(rank for rank, _ in uneven_result().critical_path)
    return counts.most_common(1)[0][0]


def _repair_compare(answer: Any, goal: ScheduleGoal) -> Graded:
    """:func:`compare_schedule`, with a note when a right answer is GPipe's order: with m = p it is as fast as
    1F1B, so it passes, but it is not the 1F1B the exercise repairs (eighteenth review, C5)."""
    verdict = compare_schedule(answer, goal)
    if verdict[0]:
        sched, _ = as_schedule(answer)
        if sched is not None and all(
                [a.kind for a in order] == sorted((a.kind for a in order), key=lambda k: k != "F") for order in sched.orders):
            return Graded(True, tr("checks.l02.gpipe_order"))
    return verdict


register({"checks.l02.gpipe_order": {
    "en": "legal and as fast as 1F1B, but that is GPipe's order, every forward first; 1F1B's last rank runs each "
          "backward right after its forward, and its ranks hold fewer activations",
    "zh": "合法，也和 1F1B 一样快，但这是 GPipe 的顺序：先跑完所有前向；1F1B 的最后一个 rank 每跑完一个前向就紧接着跑它的"
          "反向，各 rank 存的激活也更少"}})


@exercise(
    "02.6",
    hint=(msg("A rank cannot run the backward of a microbatch before its own forward of it, and the last rank "
              "should start each backward as soon as it has finished that microbatch's forward.",
              "rank 不能在自己跑完某个微批的前向之前跑它的反向；最后一个 rank 应该在跑完某个微批的前向后立即"
              "开始它的反向。"),
          msg("Rank r of 1F1B runs p - r forwards before its first backward, then alternates one backward and "
              "one forward, then runs its remaining backwards (the cool-down).",
              "1F1B 中 rank r 在第一个反向之前跑 p - r 个前向，然后一个反向、一个前向交替，最后跑完剩下的反向"
              "（冷却）。")),
    compare=lambda answer, goal: _repair_compare(answer, goal),
)
def _repair_1f1b() -> Any:
    costs = bk.preset("b=2f")
    return ScheduleGoal(3, 3, costs, bk.simulate(bk.schedule("1f1b", 3, 3), costs).makespan)
