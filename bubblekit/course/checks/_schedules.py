"""Reading a schedule the learner wrote, for the checks that grade schedules.

Shared by every lesson's schedule exercises so that a learner gets the same words for the
same mistake everywhere: :func:`as_schedule` reads an answer; :class:`ScheduleGoal` and
:func:`compare_schedule` grade it (legal, no deadlock, as fast as the goal, within a memory
cap), with a hint that names the blocked rank or the makespan gap, never the answer.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

import bubblekit as bk
from bubblekit.course.checks._grading import Graded
from bubblekit.course.checks._registry import FORMAT
from bubblekit.i18n import register, tr

#: What the schedule checks say, in both languages (fetched when an answer is graded).
register({
    # a whiteboard or "write it yourself" exercise given the object a generator returns (03.5, 05.4, 07.4, 10.40-10.42)
    "checks.generated": {
        "en": "that is a bk.Schedule object, made by a generator: this exercise asks you to write the orders "
              "yourself, as text ('rank 0: 0F0 ...'); any text you write that meets the goals is right",
        "zh": "这是生成器做出来的 bk.Schedule 对象：这道题要你自己把顺序写出来，写成文本（'rank 0: 0F0 ...'）"
              "；你写的文本只要满足要求就算对"},
    "checks.schedule.not_text": {"en": "give the schedule as text ('rank 0: 0F0 0F1 ...') or as "
                                       "bk.Schedule.from_text(your text), got {type}",
                                 "zh": "请把调度写成文本（'rank 0: 0F0 0F1 ...'），或者写成 bk.Schedule.from_text(你的文本)，"
                                       "收到的是 {type}"},
    "checks.schedule.unreadable": {"en": "the text cannot be read as a schedule: {error}",
                                   "zh": "这段文本无法读成调度：{error}"},
    "checks.schedule.ranks": {"en": "your schedule has {got} rank line(s); this exercise has p = {p} ranks",
                              "zh": "你的调度有 {got} 行 rank；这道题有 p = {p} 个 rank"},
    "checks.schedule.microbatches": {"en": "your schedule uses {got} microbatch(es); this exercise has m = {m}",
                                     "zh": "你的调度用了 {got} 个微批；这道题 m = {m}"},
    "checks.schedule.deadlock": {"en": "deadlock: {blocked}", "zh": "死锁：{blocked}"},
    "checks.schedule.memory": {
        "en": "legal (no deadlock), but rank {rank} holds {peak:g} microbatches' activations at its peak; "
              "the cap is {cap:g}",
        "zh": "调度合法（没有死锁），但 rank {rank} 峰值时保留了 {peak:g} 个微批的激活；上限是 {cap:g}"},
    "checks.schedule.slow": {
        "en": "legal, but the step takes {took}, {gap} longer than it can be: "
              "look for the rank that waits longest (result.largest_gaps())",
        "zh": "调度合法，但单步耗时 {took}，比能做到的多了 {gap}：找出等待最久的 rank（result.largest_gaps()）"},
    "checks.schedule.slots": {"en": "{n} slots", "zh": "{n} 个时间槽"},
    "checks.schedule.slot": {"en": "{n} slot", "zh": "{n} 个时间槽"},
})

__all__ = ["as_schedule", "ScheduleGoal", "compare_schedule", "schedule_text", "unreadable"]

#: An action whose kind letter is written in lower case (``0f0``, ``2b13``): text answers ignore case.
_LOWER_KIND = re.compile(r"(?<![A-Za-z0-9])([0-9]+)([fbiw])([0-9]+)(?![A-Za-z0-9])")


def schedule_text(text: str) -> str:
    """A learner's schedule text with each action's kind letter in upper case (``0f0`` -> ``0F0``) and full-width
    forms read as ASCII (``rank 0：0F0，0B0`` typed with a Chinese input method; a comma separates actions)."""
    text = unicodedata.normalize("NFKC", text).replace("、", " ")
    text = re.sub(r"(?<=[0-9A-Za-z]),(?=\s*[0-9])", " ", text)
    return _LOWER_KIND.sub(lambda mt: mt.group(1) + mt.group(2).upper() + mt.group(3), text)


def unreadable(answer: Any, why: str) -> Graded:
    """The verdict on an answer :func:`as_schedule` could not read: text that is no schedule is a form problem
    (said, with the reader's words on how to write an action, and not counted as a try); another object is a
    mistake of kind ``"unreadable"``."""
    return Graded(False, why, FORMAT if isinstance(answer, str) else "unreadable")


def generated(answer: Any) -> bool:
    """Whether ``answer`` is a schedule a generator made (``bk.schedule(...)``), not one a learner wrote.

    A generator's schedule carries its registry name (``"zb-h1"``) and its source; ``bk.Schedule.from_text``
    records the source ``"hand-written"`` (and names it ``"custom"`` or whatever name the learner gives, even
    ``"zb-h1"``): that object is theirs. Used by the
    "write it yourself" checks (03.5, 05.4, 07.4, 10.40-10.42).
    """
    from bubblekit.schedules.registry import names

    return isinstance(answer, bk.Schedule) and answer.name in names() and answer.source != "hand-written"


def as_schedule(answer: Any) -> tuple[bk.Schedule | None, str]:
    """``(schedule, "")`` for a ``bk.Schedule`` or readable text, else ``(None, why)``.

    Text is read with :meth:`bubblekit.Schedule.from_text` without validation: missing or
    duplicate actions are reported later by :func:`bubblekit.simulate`, next to deadlocks.
    """
    if isinstance(answer, bk.Schedule):
        return answer, ""
    if not isinstance(answer, str):
        return None, tr("checks.schedule.not_text", type=type(answer).__name__)
    try:
        return bk.Schedule.from_text(schedule_text(answer), validate=False), ""
    except bk.ScheduleError as exc:
        return None, tr("checks.schedule.unreadable", error=exc)


@dataclass(frozen=True)
class ScheduleGoal:
    """What a hand-written schedule must achieve (the expected value of a schedule exercise).

    Attributes:
        p: ranks; m: microbatches.
        costs: the cost model it is simulated under.
        makespan: the step time to reach (computed by bubblekit), in ``costs.unit``.
        max_peak: optional cap on every rank's peak activations (microbatch activations).
    """

    p: int
    m: int
    costs: bk.Costs
    makespan: Any
    max_peak: float | None = None

    def __repr__(self) -> str:  # never show the target makespan
        return f"<ScheduleGoal p={self.p} m={self.m}>"


def _time(x: Any, unit: str) -> str:
    """``3 slots``, ``1 slot``, ``2.5 ms``: a time with its unit (slots in the current language)."""
    text = f"{float(x):g}"
    if unit == "slot":
        return tr("checks.schedule.slot" if text == "1" else "checks.schedule.slots", n=text)
    return f"{text} {unit}"


def compare_schedule(answer: Any, goal: ScheduleGoal) -> Graded:
    """Simulate the learner's schedule; ``Graded(ok, message, kind)`` naming what is wrong, never the answer.

    Checks, in order: readable text (kind ``"unreadable"``), ``p`` ranks and ``m``
    microbatches (``"shape"``), every action exactly once on its rank (``"incomplete"``), no
    deadlock (``"deadlock"``: the message names each blocked rank and what it waits for), the
    memory cap (``"memory"``: a legal schedule over the cap is not a deadlock) and the makespan
    (``"slow"``: the message gives the gap to the goal). The kinds select the hint
    (:data:`bubblekit.course.checks._registry.KIND_HINTS`).
    """
    sched, why = as_schedule(answer)
    if sched is None:
        return unreadable(answer, why)
    if sched.p != goal.p:
        return Graded(False, tr("checks.schedule.ranks", got=sched.p, p=goal.p), "shape")
    if sched.m != goal.m:
        return Graded(False, tr("checks.schedule.microbatches", got=sched.m, m=goal.m), "shape")
    try:
        result = bk.simulate(sched, goal.costs)
    except bk.DeadlockError as exc:
        blocked = [line.strip() for line in str(exc).splitlines()[1:]]
        return Graded(False, tr("checks.schedule.deadlock", blocked="; ".join(blocked)), "deadlock")
    except bk.ScheduleError as exc:
        lines = [line.strip() for line in str(exc).splitlines()]
        return Graded(False, lines[0] + " " + "; ".join(lines[1:]), "incomplete")
    if goal.max_peak is not None:
        over = [(r, pk) for r, pk in enumerate(result.peak_activations) if pk > goal.max_peak]
        if over:
            r, pk = over[0]
            return Graded(False, tr("checks.schedule.memory", rank=r, peak=pk, cap=goal.max_peak), "memory")
    gap = result.makespan - goal.makespan
    if gap > 0:
        return Graded(False, tr("checks.schedule.slow", took=_time(result.makespan, result.unit),
                                gap=_time(gap, result.unit)), "slow")
    return Graded(True, "", "")
