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

__all__ = ["whiteboard", "WhiteboardTarget"]


class WhiteboardTarget(dict):  # type: ignore[type-arg]
    """What a whiteboard answer must reach: ``p``, ``m``, costs, cap and a makespan (or span) bound.

    A dict so that the registry's comparison rules never print it; :func:`whiteboard`
    reads it. Keys: ``p``, ``m``, ``costs``, ``cap`` (per-rank activations or None),
    ``makespan`` (upper bound, time unit) and ``measure`` (``"makespan"`` or
    ``"stage_span"``), ``split`` (True when F/I/W must be used).
    """


_fmt = format_number


def whiteboard(answer: Any, expected: Any) -> Graded:
    """Grade a schedule written as text (``"rank 0: 0F0 0I0 0W0"``) against a target.

    Returns ``Graded(ok, message, kind)`` (unpacks as ``(ok, message)``). The message names the first problem: text that does not
    parse (kind ``"unreadable"``), a missing or misplaced action (``"incomplete"``), the wrong
    shape (``"shape"``), a deadlock with the blocked rank and what it waits for
    (``"deadlock"``), a memory peak above the cap with the rank (``"memory"``: legal, not a
    deadlock), or the gap between the answer's makespan and the target bound (``"slow"``). It
    never shows a correct schedule.
    """
    if not isinstance(expected, dict):
        raise TypeError("whiteboard expects a WhiteboardTarget as the expected value")
    if isinstance(answer, bk.Schedule):
        text = answer.to_text()
    elif isinstance(answer, str):
        text = answer
    else:
        return Graded(False, f"expected the schedule as text (a str like 'rank 0: 0F0 0B0'), got {type(answer).__name__}", "unreadable")
    p, m = expected["p"], expected["m"]
    try:
        sched = bk.Schedule.from_text(text, m=m)
    except bk.ScheduleError as err:
        return Graded(False, f"the text is not a legal schedule yet: {err}", "incomplete")
    if sched.p != p or sched.n_stages != p:
        return Graded(False, f"the schedule has {sched.p} rank line(s) and {sched.n_stages} stage(s); this question has p={p}", "shape")
    if expected.get("split") and not sched.split_backward:
        return Graded(False, "this question wants the backward split into I (input gradient) and W (weight gradient)", "shape")
    try:
        res = bk.simulate(sched, expected["costs"])
    except bk.DeadlockError as err:
        first = str(err).splitlines()[1].strip() if len(str(err).splitlines()) > 1 else str(err)
        return Graded(False, f"deadlock: {first}", "deadlock")
    cap = expected.get("cap")
    if cap is not None:
        for r, peak in enumerate(res.peak_activations):
            if peak > cap + 1e-9:
                return Graded(False, (f"legal (no deadlock), but rank {r} holds {_fmt(peak)} microbatch activations at its "
                                      f"peak, over the cap of {_fmt(cap)}: run a W (or B) before the next F there"), "memory")
    measure = expected.get("measure", "makespan")
    got = res.makespan if measure == "makespan" else _span(res)
    bound = expected["makespan"]
    if got > bound:
        return Graded(False, (f"legal and within memory, but its {measure.replace('_', ' ')} is {_fmt(got - bound)} "
                              f"{res.unit}(s) longer than the target: look at the largest idle gap, "
                              f"{_largest_gap(res)}"), "slow")
    return Graded(True, "", "")


def _span(res: bk.SimResult) -> Any:
    spans = []
    for r in range(res.p):
        sp = list(res.spans(r))
        spans.append(sp[-1].end - sp[0].start)
    return max(spans)


def _largest_gap(res: bk.SimResult) -> str:
    gaps = [g for g in res.idle_intervals() if g.before is not None]
    if not gaps:
        return "(none inside the ranks: the ramps at the start and end are what remain)"
    g = max(gaps, key=lambda x: (x.duration, -x.rank))
    return f"on rank {g.rank} before {g.before}"


def target(p: int, m: int, costs: bk.Costs, bound: Any, *, cap: float | None = None,
           measure: str = "makespan", split: bool = True) -> WhiteboardTarget:
    """Build a :class:`WhiteboardTarget` (used by lesson modules)."""
    return WhiteboardTarget(p=p, m=m, costs=costs, cap=cap, makespan=bound, measure=measure, split=split)


UNIFORM = bk.Costs(f=1, i=1, w=1)


def _ratio_1f1b_over_zbh1() -> float:
    costs = bk.Costs(f=2, i=3, w=1)
    one = published.max_rank_bubble_time(bk.simulate(bk.schedule("1f1b", 8, 16), costs))
    zb = published.max_rank_bubble_time(bk.simulate(bk.schedule("zb-h1", 8, 16), costs))
    return one / zb


@exercise("07.1", hint=("Compare the per-rank bubble time of 1F1B, (p-1)(F+I+W), with ZB-H1's; p cancels.",
                        "ZB-H1's delayed W passes fill part of each idle stretch: write its bubble per rank, divide "
                        "1F1B's by it, and check with published.max_rank_bubble_time on p = 8, m = 16."),
          mistakes=(upside_down(),))
def _e071() -> float:
    return _ratio_1f1b_over_zbh1()


@exercise("07.2", hint=("Simulate zb-h2 and read max_peak_activations; the paper writes it as (2p-1) M_B.",
                        "bk.simulate(bk.schedule('zb-h2', 6, 12), uniform).max_peak_activations, in microbatch "
                        "activations."))
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


@exercise("07.3", hint=("Drop the schedules whose peak exceeds 1F1B's (V-Half and V-Min hold less), then compare "
                        "stage_span_bubble_rate.",
                        "Use the measured costs bk.h200_costs() for every simulation, 1F1B's cap included; answer "
                        "with the registry name, like 'zb-h1'."))
def _e073() -> str:
    return _best_within_1f1b_memory()


@exercise(
    "07.4",
    hint=("Start from 1F1B with B split into I and W, then move a W into a gap where its rank would wait.",
          "Rank 0 waits for 1I0 after its warm-up: run its I passes as soon as the gradient arrives and keep "
          "a W back for the moment it would otherwise wait."),
    compare=whiteboard,
)
def _e074() -> WhiteboardTarget:
    zb = bk.simulate(bk.schedule("zb-h1", 2, 3), UNIFORM)
    return target(2, 3, UNIFORM, zb.makespan, cap=2)


def _min_cap_for_zero_span_bubble() -> int:
    costs = UNIFORM
    for cap in range(1, 17):
        s = search.search_schedule(4, 12, costs, mem_cap=cap, objective="stage_span", method="greedy")
        if published.stage_span_bubble_rate(bk.simulate(s, costs)) == 0:
            return cap
    raise AssertionError("no cap up to 16 reached zero")


@exercise("07.5", hint=("Loop over mem_cap = 1, 2, ... with objective='stage_span' and stop at the first zero rate.",
                        "search.search_schedule(4, 12, uniform, mem_cap=cap, objective='stage_span', method='greedy') "
                        "for cap = 1, 2, ...; simulate each and test published.stage_span_bubble_rate(...) == 0."))
def _e075() -> int:
    return _min_cap_for_zero_span_bubble()


# --------------------------------------------------------------------------- the newest schedules
def _dualpipe_run(i: Any) -> bk.SimResult:
    """DualPipe, PP = 8 ranks, m = 20, chunk times F = 1, I = i, W = 1/2, pairs perfectly overlapped."""
    return bk.simulate(bk.schedule("dualpipe", 8, 20), bk.Costs(f=1, i=i, w=Fraction(1, 2), fb="max"))


@exercise("07.6", hint=("Simulate bk.schedule('dualpipe', 8, 20) with bk.Costs(f=1, i=1, w=Fraction(1, 2), fb='max') and "
                        "take the largest of result.idle: each rank's idle time over the whole step.",
                        "The README's (PP/2 - 1)(F&B + B - 3W) with B = I + W and F&B = max(F, B) should give the same "
                        "number here, because I = F and W <= F."))
def _e076() -> Any:
    return max(_dualpipe_run(1).idle)


@exercise("07.7", hint=("Divide V-Min's largest peak by 1F1B's, both for p = 12 (m = 24 is plenty).",
                        "V-Min's peak is (p + 4) // 3 microbatch activations, 1F1B's is p: the 'one third' is only "
                        "reached for large p."),
          mistakes=(Mistake(lambda e: Fraction(1, 3), "that is the headline 1/3, the limit for large p; at p = 12 "
                                                      "the peak is a whole number of microbatches"),))
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


@exercise("07.8", hint=("For each name, memory.fits(bk.schedule(name, 8, 16), model, 60 * memory.GB).fits; collect the "
                        "names where it is True.",
                        "DualPipe holds two copies of the parameters; ZB-H2 holds 2p - 1 microbatches of activations: "
                        "look at the table memory.fits returns for the largest rank."))
def _e078() -> frozenset[str]:
    return _fitting(60)


@exercise("07.9", hint=("Same 8 stages: DualPipeV runs them on 4 devices, 1F1B on 8. Compare Schedule.hops_per_step.",
                        "bk.schedule('dualpipev', 4, 16).hops_per_step / bk.schedule('1f1b', 8, 16).hops_per_step: "
                        "the V turns on its last rank without a message."),
          mistakes=(Mistake(lambda e: 2.0, "2x is DualPipeV against 1F1B on the same 4 devices; here 1F1B has the same "
                                           "8 stages, on 8 devices"),))
def _e079() -> Fraction:
    return Fraction(bk.schedule("dualpipev", 4, 16).hops_per_step, bk.schedule("1f1b", 8, 16).hops_per_step)


def _checks() -> dict[str, Callable[[], Any]]:
    """The expected-value functions by id (for tests)."""
    return {"07.1": _e071, "07.2": _e072, "07.3": _e073, "07.4": _e074, "07.5": _e075, "07.6": _e076,
            "07.7": _e077, "07.8": _e078, "07.9": _e079}
