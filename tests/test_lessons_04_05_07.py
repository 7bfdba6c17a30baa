"""The claims of lessons 04, 05 and 07 that the lessons' check cells rely on, and exercise 05.4's grading.

Lesson 05 says (section 3) that (m+p-1)(f+b) + 2(p-1)·comm bounds a schedule with one stage per rank only
while each backward is one fused pass; a split backward (ZB-H1, ZB-H2) runs below it. Exercise 05.4 asks
for a schedule that reaches that floor within a memory cap: its check accepts each defensible answer (fused
backwards at the floor, a split backward below it) and refuses the wrong ones, each with its reason.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

import bubblekit as bk
from bubblekit.course.checks import check, lesson05

FUSED_EXTRA = (
    "rank 0: 0F0 0F1 0F2 0F3 0B0 0F4 0B1 0F5 0B2 0B3 0B4 0B5\n"
    "rank 1: 1F0 1F1 1F2 1B0 1F3 1B1 1F4 1B2 1F5 1B3 1B4 1B5\n"
    "rank 2: 2F0 2B0 2F1 2B1 2F2 2B2 2F3 2B3 2F4 2B4 2F5 2B5\n"
)


def _floor(p: int, m: int, comm: Fraction) -> Fraction:
    """(m + p - 1)(f + b) + 2(p - 1) comm with f = 1, b = 2 (slots)."""
    return (m + p - 1) * 3 + 2 * (p - 1) * comm


# ----------------------------------------------------------------------------- lesson 05, section 3

@pytest.mark.parametrize("p, m", [(2, 4), (3, 6), (4, 8), (4, 12), (6, 12)])
@pytest.mark.parametrize("comm", [Fraction(1, 10), Fraction(1, 4), Fraction(1, 2), Fraction(1)])
def test_no_fused_schedule_with_one_stage_per_rank_beats_the_floor(p: int, m: int, comm: Fraction) -> None:
    costs = bk.Costs(f=1, b=2, comm=comm)
    for name in ("gpipe", "1f1b"):
        assert bk.simulate(bk.schedule(name, p, m), costs).makespan >= _floor(p, m, comm)
    assert bk.simulate(bk.schedule("gpipe", p, m), costs).makespan == _floor(p, m, comm)


def test_a_split_backward_beats_the_fused_floor_at_1f1b_peak() -> None:
    """The audit's table (p = 4, m = 8, F = I = W = 1): ZB-H1 30.0 against the floor's 34.5 at comm = 1/4."""
    p, m = 4, 8
    split = bk.Costs(f=1, i=1, w=1)
    one_peak = bk.simulate(bk.schedule("1f1b", p, m), split).max_peak_activations
    for comm, zb_h1_below in ((Fraction(1, 10), True), (Fraction(1, 4), True), (Fraction(1, 2), True), (1, False)):
        c = split.with_(comm=comm)
        h1 = bk.simulate(bk.schedule("zb-h1", p, m), c)
        h2 = bk.simulate(bk.schedule("zb-h2", p, m), c)
        assert (h1.makespan < _floor(p, m, comm)) is zb_h1_below
        assert h2.makespan < _floor(p, m, comm)
        assert h1.max_peak_activations == one_peak == p and h2.max_peak_activations == 2 * p - 1
    at_quarter = bk.simulate(bk.schedule("zb-h1", p, m), split.with_(comm=Fraction(1, 4))).makespan
    assert (at_quarter, _floor(p, m, Fraction(1, 4))) == (30, Fraction(69, 2))


def test_hide_floor_is_the_fused_floor() -> None:
    assert lesson05.hide_floor() == _floor(3, 6, lesson05.HIDE_COMM) == 25
    assert "fused" in (lesson05.hide_floor.__doc__ or "")


# ----------------------------------------------------------------------------- exercise 05.4

def test_05_4_accepts_fused_backwards_at_the_floor() -> None:
    assert check("05.4", FUSED_EXTRA)
    r = bk.simulate(bk.Schedule.from_text(FUSED_EXTRA), bk.Costs(f=1, b=2, comm=lesson05.HIDE_COMM))
    assert r.makespan == lesson05.hide_floor() and r.max_peak_activations <= lesson05.HIDE_CAP


def test_05_4_accepts_a_split_backward_below_the_floor() -> None:
    zb = bk.schedule("zb-h1", 3, 6)
    r = bk.simulate(zb, bk.Costs(f=1, b=2, comm=lesson05.HIDE_COMM))
    assert r.makespan < lesson05.hide_floor() and r.max_peak_activations <= lesson05.HIDE_CAP
    assert check("05.4", zb.to_text())
    assert not check("05.4", zb)                   # the generator's object is refused: write it as text


@pytest.mark.parametrize("answer, kind_word", [
    (bk.schedule("1f1b", 3, 6).to_text(), "2(p - 1) hops"),      # legal, within memory, too slow
    (bk.schedule("gpipe", 3, 6).to_text(), "at most 4"),         # at the floor, over the cap
    (bk.schedule("zb-h2", 3, 6).to_text(), "at most 4"),         # below the floor, over the cap
    (bk.schedule("interleaved", 3, 6, 2).to_text(), "one stage per rank"),
    ("rank 0: 0F0 0B0\nrank 1: 1B0 1F0\n", "p=3"),
])
def test_05_4_refuses_wrong_answers_with_their_reason(answer: str, kind_word: str) -> None:
    res = check("05.4", answer)
    assert not res
    assert kind_word in res.detail


def test_05_4_refuses_a_deadlock() -> None:
    swapped = FUSED_EXTRA.replace("2F0 2B0 2F1 2B1", "2F0 2B1 2F1 2B0")
    res = check("05.4", swapped)
    assert not res and "deadlock" in res.detail


def test_05_4_feedback_never_states_the_floor() -> None:
    res = check("05.4", bk.schedule("1f1b", 3, 6).to_text())
    assert str(lesson05.hide_floor()) not in res.detail.replace("53/2", "")


# ----------------------------------------------------------------------------- review 2026-12-01 (W1, C1)
@pytest.mark.parametrize("answer", [(45, 23), (45, 24)])
def test_05_2_accepts_the_closed_form_and_the_smallest_m_that_runs(answer: tuple[int, int]) -> None:
    """23 solves the inequality; interleaved refuses it (3 rounds do not divide 23), 24 is the smallest that runs."""
    assert 23 not in bk.legal_ms("interleaved", 6, 2, up_to=30) and 24 in bk.legal_ms("interleaved", 6, 2, up_to=30)
    assert bk.simulate(bk.schedule("interleaved", 6, 24, 2), bk.Costs(f=1, b=2)).bubble_ratio <= 0.1
    assert check("05.2", answer)


@pytest.mark.parametrize("answer", [(45, 22), (45, 25), (23, 45), (44, 24)])
def test_05_2_refuses_other_answers(answer: tuple[int, int]) -> None:
    assert not check("05.2", answer)


def test_05_4_feedback_names_an_action_not_none() -> None:
    """1F1B with one extra warm-up forward on rank 0 only: the longest wait has a next action."""
    one_extra = ("rank 0: 0F0 0F1 0F2 0F3 0B0 0F4 0B1 0F5 0B2 0B3 0B4 0B5\n"
                 "rank 1: 1F0 1F1 1B0 1F2 1B1 1F3 1B2 1F4 1B3 1F5 1B4 1B5\n"
                 "rank 2: 2F0 2B0 2F1 2B1 2F2 2B2 2F3 2B3 2F4 2B4 2F5 2B5\n")
    result = check("05.4", one_extra)
    assert not result and "None" not in str(result) and "before" in str(result)


# ----------------------------------------------------------------------------- review 2026-12-01 (M1-M3, C3)
def _paid(name: str, p: int, m: int, costs: bk.Costs, comms: list[Fraction], v: int | None = None) -> list[Fraction]:
    """Latency paid: makespan at each comm minus the makespan at comm = 0 (slots)."""
    sched = bk.schedule(name, p, m, v)
    base = bk.simulate(sched, costs).makespan
    return [bk.simulate(sched, costs.with_(comm=c)).makespan - base for c in comms]


def test_05_zb_h1_pays_about_three_quarters_of_1f1b_latency() -> None:
    """Lesson 05 §3 (M1): ZB-H1 is faster by a smaller bubble, not by hiding latency; only ZB-H2 pays less than GPipe."""
    split, comms = bk.Costs(f=1, i=1, w=1), [Fraction(1, 10), Fraction(1, 4), Fraction(1, 2), Fraction(1)]
    zb1, one, zb2, gp = (_paid(n, 4, 8, split, comms) for n in ("zb-h1", "1f1b", "zb-h2", "gpipe"))
    assert zb1 == [Fraction(6, 5), 3, 6, 14] and one == [Fraction(8, 5), 4, 8, 16]
    assert all(z < g for z, g in zip(zb2, gp)) and not any(z < g for z, g in zip(zb1, gp))


def test_04_interleaving_pays_less_than_1f1b_only_up_to_half_a_slot() -> None:
    """Lesson 04 §4 (M2): 3.5, 7, 17.5 against 4, 8, 16; the step stays shorter than 1F1B's."""
    costs, comms = bk.Costs(f=1, b=2), [Fraction(1, 4), Fraction(1, 2), Fraction(1)]
    il, one = _paid("interleaved", 4, 8, costs, comms, v=2), _paid("1f1b", 4, 8, costs, comms)
    assert (il, one) == ([Fraction(7, 2), 7, Fraction(35, 2)], [4, 8, 16])
    steps = [bk.simulate(bk.schedule(n, 4, 8, v), costs.with_(comm=c)).makespan
             for c in [Fraction(0), *comms] for n, v in (("interleaved", 2), ("1f1b", None))]
    assert all(a < b for a, b in zip(steps[::2], steps[1::2]))


def test_07_v_min_idles_more_than_1f1b_on_the_measured_layer() -> None:
    """Lesson 07 §2/§4 (M3): less idle than 1F1B at F = I = W and with a mild imbalance (twelfth review, M1:
    I = 1.1 F), more on the measured layer, whose I is about 1.4 F."""
    uniform, h200 = bk.Costs(f=1, i=1, w=1), bk.h200_costs()
    idle = {n: bk.simulate(bk.schedule(n, 8, 16), uniform).total_idle for n in ("1f1b", "v-half", "v-min")}
    assert idle["v-min"] < idle["1f1b"] and idle["v-half"] < idle["1f1b"]
    ratio = {n: bk.simulate(bk.schedule(n, p, 16), h200).bubble_ratio for n, p in (("1f1b", 4), ("v-half", 4), ("v-min", 4))}
    assert ratio["v-min"] > ratio["1f1b"] > ratio["v-half"]
    assert round(h200.i / h200.f, 1) == 1.4
    for costs in (bk.Costs(f=1, i=1.1, w=1), bk.Costs(f=1, i=1, w=0.9), bk.Costs(f=1, i=1.2, w=1.2)):
        for p in (4, 8):
            mild = {n: bk.simulate(bk.schedule(n, p, 2 * p), costs).total_idle for n in ("1f1b", "v-half", "v-min")}
            assert mild["v-min"] < mild["1f1b"] and mild["v-half"] < mild["1f1b"], (costs, p)


def test_04_critical_path_hops_start_the_moment_the_data_arrives() -> None:
    """Twelfth review, C3 (lesson 04's "Where the latency sits"): each cross-rank link of the critical path is one
    latency long, and most of the boxes at its head come right after an idle stretch (the hatched area)."""
    comm = Fraction(1, 2)
    slow = bk.simulate(bk.schedule("1f1b", 4, 8), bk.Costs(f=1, b=2, comm=comm))
    where = {s.action: s for s in slow.spans()}
    cross = [(a, b) for (ra, a), (rb, b) in zip(slow.critical_path, slow.critical_path[1:]) if ra != rb]
    assert cross and all(where[b].start - where[a].end == comm for a, b in cross)
    waited = [b for _, b in cross if any(g.end == where[b].start for g in slow.idle_intervals(where[b].rank))]
    assert len(cross) / 2 < len(waited) < len(cross)
    assert slow.makespan == bk.simulate(bk.schedule("1f1b", 4, 8), bk.Costs(f=1, b=2)).makespan + len(cross) * comm


def test_05_plan_leaders_tie_with_free_hops() -> None:
    """Twelfth review, C4 (lesson 05 §5): looped BFS beats interleaved 1F1B (v = 4, m = 64, recomputed) only by the hop
    latency, by less than 1 % per microbatch; with comm_ms = 0 the two tie."""
    gib = 2**30
    layer = next(c for c in bk.costs.load_h200_layer_costs()["configs"] if (c["hidden"], c["seq"]) == (8192, 4096))
    hop_ms = layer["layer"]["boundary_tensor_bytes"] / 50e9 * 1e3
    step = {}
    for comm in (hop_ms, 0.0):
        plain, recomputed = bk.planner.h200_recompute_costs(8192, 4096, comm_ms=comm)
        table = bk.planner.plan(8, costs=plain, recompute=recomputed, memory_budget_bytes=24 * gib, ms=(64,), vs=(4,))
        step[comm] = {c.schedule: c.makespan for c in table.feasible[:2]}
    lead, tie = step[hop_ms], step[0.0]
    assert list(lead) == ["looped-bfs", "interleaved"] and set(tie) == set(lead)
    assert tie["looped-bfs"] == tie["interleaved"]
    assert 0 < lead["interleaved"] / lead["looped-bfs"] - 1 < 0.01


def test_07_9_refuses_the_same_devices_ratio_and_accepts_the_same_stages_one() -> None:
    assert check("07.9", Fraction(bk.schedule("dualpipev", 4, 16).hops_per_step, bk.schedule("1f1b", 8, 16).hops_per_step))
    assert not check("07.9", 2)


def test_05_extra_warm_up_costs_every_rank_but_the_last() -> None:
    """13th review C4: each extra warm-up forward of 05's ``one_f_one_b_extra`` adds one microbatch of
    activations on every rank but the last (not on rank 0 alone), as section 3's prose now says."""
    import json
    from pathlib import Path
    nb = json.loads((Path(__file__).resolve().parent.parent / "notebooks" / "05_shrinking_bubbles.ipynb").read_text("utf-8"))
    source = "".join(next(c for c in nb["cells"] if c.get("id") == "d98fc61b")["source"])
    space: dict = {"bk": bk}
    exec(source.split("\nextra = ")[0], space)           # the lesson's own generator, without its call
    p, m = 4, 12
    base = bk.simulate(space["one_f_one_b_extra"](p, m, 0)).peak_activations
    for k in range(1, 4):
        peaks = bk.simulate(space["one_f_one_b_extra"](p, m, k)).peak_activations
        assert [peaks[r] - base[r] for r in range(p)] == [k] * (p - 1) + [0]
    text = " ".join("".join(next(c for c in nb["cells"] if c.get("id") == "30bdcac8")["source"]).split())
    assert "one more microbatch of activations on every rank but the last" in text
    assert "one more activation on rank 0" not in text


def test_07_zb_h1_idle_formula_states_its_condition() -> None:
    """14th review M1: ZB-H1's per-rank idle (p−1)(F+I−W) holds while W <= F and W <= I, not beyond."""
    import bubblekit as bk

    def idle(costs: bk.Costs) -> float:
        return float(bk.simulate(bk.schedule("zb-h1", 4, 8), costs).idle[0])

    for f, i, w in ((1, 1, 1), (1, 1, 0.5), (1, 1.5, 0.5)):
        assert idle(bk.Costs(f=f, i=i, w=w)) == pytest.approx(3 * (f + i - w))
    assert idle(bk.Costs(f=1, i=0.5, w=1)) != pytest.approx(3 * (1 + 0.5 - 1))  # W > I
    measured = bk.h200_costs()  # W slightly longer than F
    assert idle(measured) != pytest.approx(3 * (float(measured.f) + float(measured.i) - float(measured.w)), abs=1e-6)
    from test_lessons_00_03 import _lesson_cell

    text = " ".join(_lesson_cell("07_beyond_1f1b.ipynb", "048bed37").split())
    assert "ZB-H1 (p−1)(F+I−W) while W ≤ F and W ≤ I" in text


def test_05_zb_latency_shares_are_those_of_section_3s_table() -> None:
    """15th review M1 (00–05): ZB-H1 pays ¾ to ⅞ of 1F1B's latency and ZB-H2 less than GPipe in section 3's setting
    (p = 4, m = 8, F = I = W, 1/10 .. 1 slot per hop), which the Recap now names; at 2 slots ZB-H2 pays more."""
    from test_lessons_00_03 import _lesson_cell

    def paid(name: str, comm: Fraction) -> Fraction:
        def span(c: Fraction) -> Fraction:
            return Fraction(bk.simulate(bk.schedule(name, 4, 8), bk.Costs(f=1, i=1, w=1, comm=c)).makespan)
        return span(comm) - span(Fraction(0))

    shares = [paid("zb-h1", c) / paid("1f1b", c) for c in (Fraction(1, 10), Fraction(1, 4), Fraction(1, 2), Fraction(1))]
    assert min(shares) == Fraction(3, 4) and max(shares) == Fraction(7, 8)
    assert all(paid("zb-h2", c) < paid("gpipe", c) for c in (Fraction(1, 10), Fraction(1, 4), Fraction(1, 2), Fraction(1)))
    assert paid("zb-h2", Fraction(2)) > paid("gpipe", Fraction(2))
    recap = " ".join(_lesson_cell("05_shrinking_bubbles.ipynb", "f498ac7a").split())
    assert "¾ to ⅞ in section 3's table" in recap and "which does not hold for every setting" in recap


def test_04_with_blocking_sends_1f1b_is_faster_from_m_2_on() -> None:
    """18th review C1: lesson 04's answer says 1F1B is faster with blocking sends from m = 2 on (equal at m = 1),
    only slightly at the lesson's p = 4, m = 8, comm = 1/4 (37.75 against 38)."""
    from fractions import Fraction

    for p in (2, 3, 4, 8):
        for m in (1, 2, 3, 8):
            for comm in (Fraction(1, 4), 1):
                gpipe, one = bk.compare.comm_models(["gpipe", "1f1b"], p, m, comm=comm, costs=bk.Costs(f=1, b=2)).rows
                assert (one["blocking"] == gpipe["blocking"]) if m == 1 else one["blocking"] < gpipe["blocking"], (p, m, comm)
    gpipe, one = bk.compare.comm_models(["gpipe", "1f1b"], 4, 8, comm=Fraction(1, 4), costs=bk.Costs(f=1, b=2)).rows
    assert (gpipe["blocking"], one["blocking"]) == (38, Fraction(151, 4))
    assert bk.legal_ms("looped-bfs", 4, 2, up_to=16) == list(range(1, 17))
