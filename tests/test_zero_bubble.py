"""Zero-bubble schedules (zb-h1, zb-h2, zbv, dualpipev): legality, closed forms, memory.

Closed forms checked exactly (Fractions, no tolerance), comm 0, equal stages:

* Zero-bubble paper (Qi et al., ICLR 2024), Table 1 in its notation ``B`` = our ``I``:
  1F1B bubble ``(p-1)(F+B+W)``, ZB-H1 ``(p-1)(F+B-W)``, ZB-H2 ``(p-1)(F+B-2W)``; peak
  memory ``p M_B``, ``p M_B``, ``(2p-1) M_B``.
* sail-sg/zero-bubble-pipeline-parallelism README (T_F = T_B = T_W): bubble rate, since
  2024-07-03, 1F1B ``(p-1)/(m+p-1) = B``, ZB1P ``B/3``, ZB2P 0, ZBV 0 (from 2023-11-20 to
  2024-07-03 it read ``(p-1)/m`` and ``(p-1)/3m``); activation memory 1x, 1x, 2x, 1x.
* deepseek-ai/DualPipe README (``B`` = full backward = our ``I + W``): 1F1B
  ``(PP-1)(F+B)``, ZB1P ``(PP-1)(F+B-2W)``; activation ``PP``, ``PP``. Its DualPipe and
  DualPipeV rows are checked in ``tests/test_dualpipe.py``.

Where each holds in bubblekit's model is stated in the test that checks it.
"""

from __future__ import annotations

import itertools
from fractions import Fraction as Fr

import pytest

import bubblekit as bk

ZB_NAMES = ("zb-h1", "zb-h2", "zbv", "dualpipev")


def _sim(name: str, p: int, m: int, f: object = 1, i: object = 1, w: object = 1) -> bk.SimResult:
    return bk.simulate(bk.schedule(name, p, m), bk.Costs(f=f, i=i, w=w))  # type: ignore[arg-type]


def _inner_idle(r: bk.SimResult) -> list[Fr]:
    """Per rank, idle time between its first start and its last end."""
    out = []
    for rank in range(r.p):
        spans = list(r.spans(rank))
        out.append(Fr(spans[-1].end - spans[0].start) - sum(Fr(s.end - s.start) for s in spans))
    return out


# cost triples (F, I, W) per rank share, with W <= min(F, I): the regime of the closed forms
_COSTS_OK = [c for c in itertools.product((1, 2, 3, Fr(3, 2)), repeat=3) if c[2] <= min(c[0], c[1])]


# ------------------------------------------------------------------ registry, legality
def test_registered_with_paper_and_torch_class() -> None:
    for name in ZB_NAMES:
        spec = bk.REGISTRY[name]
        assert spec.split_backward and spec.paper and spec.summary
    assert bk.REGISTRY["zb-h1"].torch_class == "ScheduleInterleavedZeroBubble"
    assert bk.REGISTRY["zbv"].torch_class == "ScheduleZBVZeroBubble"
    assert bk.REGISTRY["dualpipev"].torch_class == "ScheduleDualPipeV"
    assert bk.REGISTRY["zb-h2"].torch_class is None
    assert bk.schedule("ZB-V", 2, 4).name == "zbv"
    assert bk.schedule("zbh1", 2, 4).name == "zb-h1"


@pytest.mark.parametrize("name", ZB_NAMES)
def test_every_schedule_is_legal(name: str) -> None:
    """Each order simulates (validate + no deadlock) for p = 1..7, m = 1..3p+3, with latency."""
    costs = bk.Costs(f=1, i=1, w=1, comm=Fr(1, 10))
    for p in range(1, 8):
        for m in range(1, 3 * p + 4):
            if name == "dualpipev" and m < 2 * p:
                continue
            s = bk.schedule(name, p, m)
            assert s.split_backward and s.n_actions == len(s.to_text().split()) - 2 * p
            r = bk.simulate(s, costs)
            assert r.makespan > 0


def test_chunk_counts_and_placement() -> None:
    for name in ("zbv", "dualpipev"):
        s = bk.schedule(name, 4, 8)
        assert s.v == 2 and s.placement == (0, 1, 2, 3, 3, 2, 1, 0)
        assert bk.schedule(name, 4, 8, v=2) == s
        with pytest.raises(ValueError, match="v=3"):
            bk.schedule(name, 4, 8, v=3)
    for name in ("zb-h1", "zb-h2"):
        assert bk.schedule(name, 4, 8).v == 1
        with pytest.raises(ValueError, match="v=2"):
            bk.schedule(name, 4, 8, v=2)


def test_dualpipev_needs_m_at_least_2p() -> None:
    for p in range(1, 6):
        bk.schedule("dualpipev", p, 2 * p)
        with pytest.raises(ValueError, match=rf"m={2 * p - 1}.*p={p}.*m >= 2p = {2 * p}"):
            bk.schedule("dualpipev", p, 2 * p - 1)


# ------------------------------------------------------------------------------ ZB-H1
def test_zb_h1_bubble_is_p_minus_1_times_f_plus_i_minus_w() -> None:
    """Paper Table 1: ZB-H1 bubble (p-1)(T_F+T_B-T_W) = (p-1)(F+I-W) here, on every rank.

    Holds exactly for m >= p and W <= min(F, I) (comm 0)."""
    for (f, i, w), p in itertools.product(_COSTS_OK, range(2, 7)):
        for m in (p, p + 1, 2 * p + 3):
            r = _sim("zb-h1", p, m, f, i, w)
            expected = (p - 1) * (Fr(f) + Fr(i) - Fr(w))
            assert all(idle == expected for idle in r.idle), (p, m, (f, i, w), r.idle)
            assert r.makespan == m * (Fr(f) + Fr(i) + Fr(w)) + expected


def test_zb_h1_closed_form_fails_outside_its_regime() -> None:
    """With W > F the W passes cannot all hide: more idle than (p-1)(F+I-W)."""
    r = _sim("zb-h1", 4, 8, 1, 1, 2)
    assert min(r.idle) > 3 * (1 + 1 - 2)


def test_readme_tables_1f1b_and_zb1p_rows() -> None:
    """DualPipe README rows 1F1B (PP-1)(F+B) and ZB1P (PP-1)(F+B-2W), B = full backward."""
    for p, m in itertools.product(range(2, 7), range(1, 14)):
        for f, i, w in _COSTS_OK[::3]:
            b = Fr(i) + Fr(w)
            r1 = bk.simulate(bk.schedule("1f1b", p, m), bk.Costs(f=f, b=b))
            assert set(r1.idle) == {(p - 1) * (Fr(f) + b)}
            if m >= p:
                r2 = _sim("zb-h1", p, m, f, i, w)
                assert set(r2.idle) == {(p - 1) * (Fr(f) + b - 2 * Fr(w))}


def test_zero_bubble_readme_bubble_rates() -> None:
    """sail-sg README, T_F = T_B = T_W. Since 2024-07-03: 1F1B (p-1)/(m+p-1) = B, the fraction of the
    step (bubble_ratio); ZB1P "B/3": its bubble time is exactly a third of 1F1B's, so B/3 is that time
    over 1F1B's step (over ZB1P's own, shorter step it is (p-1)/(3m+p-1), a little more). The older
    wording (p-1)/m and (p-1)/3m (2023-11-20 .. 2024-07-03) is Megatron's overhead."""
    for p in range(2, 7):
        for m in (p, 2 * p, 3 * p + 1):
            one, zb = _sim("1f1b", p, m), _sim("zb-h1", p, m)
            b = Fr(p - 1, m + p - 1)
            assert one.bubble_ratio_exact == b
            assert sum(zb.idle) * 3 == sum(one.idle)
            assert Fr(sum(zb.idle)) / (p * one.makespan) == b / 3
            assert zb.bubble_ratio_exact == Fr(p - 1, 3 * m + p - 1) > b / 3
            assert one.bubble_overhead_exact == Fr(p - 1, m)
            assert zb.bubble_overhead_exact == Fr(p - 1, 3 * m)


# ------------------------------------------------------------------------------ ZB-H2
def test_zb_h2_no_idle_inside_rank_spans_at_equal_costs() -> None:
    """ZB-H2 (README ZB2P "0"): F = I = W, m >= 2p-1 -> no rank idle between first and last action."""
    for p in range(1, 9):
        for m in range(2 * p - 1, 4 * p + 2):
            for unit in (1, Fr(2, 3)):
                r = _sim("zb-h2", p, m, unit, unit, unit)
                assert _inner_idle(r) == [0] * p, (p, m)
                # only the start-up/flush triangle remains: same makespan as ZB-H1
                assert r.makespan == 3 * m * unit + (p - 1) * unit
                assert r.makespan == _sim("zb-h1", p, m, unit, unit, unit).makespan


def test_zb_h2_has_idle_when_m_is_below_2p_minus_1() -> None:
    for p in range(2, 7):
        for m in range(1, 2 * p - 1):
            assert max(_inner_idle(_sim("zb-h2", p, m))) > 0, (p, m)


def test_zb_h2_bubble_is_p_minus_1_times_f_plus_i_minus_2w() -> None:
    """Paper Table 1: ZB-H2 bubble (p-1)(T_F+T_B-2T_W): the largest idle inside a rank's span.

    Holds exactly for m >= 2p-1 and W <= min(F, I) (comm 0)."""
    for (f, i, w), p in itertools.product(_COSTS_OK, range(2, 6)):
        for m in (2 * p - 1, 3 * p):
            r = _sim("zb-h2", p, m, f, i, w)
            assert max(_inner_idle(r)) == (p - 1) * (Fr(f) + Fr(i) - 2 * Fr(w)), (p, m, (f, i, w))


def test_zb_h2_warm_up_and_tail_shape() -> None:
    """Rank r: 2(p-1-r)+1 warm-up forwards and 2r+1 trailing W passes."""
    for p, m in ((4, 8), (5, 13), (3, 20)):
        for r, order in enumerate(bk.schedule("zb-h2", p, m).orders):
            kinds = "".join(a.kind for a in order)
            assert kinds.startswith("F" * (2 * (p - 1 - r) + 1) + "I")
            assert kinds.endswith("I" + "W" * (2 * r + 1))


# -------------------------------------------------------------------------------- ZB-V
def test_zbv_no_idle_inside_rank_spans_at_equal_costs() -> None:
    """ZB-V (README ZBV "0"): F = I = W, m >= 2p-1 -> zero idle inside spans; start-up (p-1)F/2."""
    for p in range(1, 9):
        for m in range(2 * p - 1, 4 * p + 2):
            r = _sim("zbv", p, m)
            assert _inner_idle(r) == [0] * p, (p, m)
            assert r.makespan == 3 * m + Fr(p - 1, 2)


def test_zbv_default_costs_stay_exact() -> None:
    """Chunk costs are halves: the simulator scales them to integer ticks, results exact."""
    r = bk.simulate(bk.schedule("zbv", 8, 32))
    assert r.ticks_per_unit == 2
    assert isinstance(r.bubble_ratio_exact, Fr)
    assert not isinstance(r.makespan, float) and Fr(r.makespan).denominator in (1, 2)


# ---------------------------------------------------------------------------- DualPipeV
# ------------------------------------------------------------------------------ memory
def test_peak_memory_matches_the_papers() -> None:
    """Peak activations (microbatch activations, W frees all): ZB-H1 and ZB-V = 1F1B (p M_B),
    ZB-H2 <= 2p-1 (= when m >= 2p-1), DualPipeV p + 1/2 = (2p+1) chunks (README's PP+1), pairs as units."""
    for p in range(1, 8):
        for m in range(1, 3 * p + 2):
            one = _sim("1f1b", p, m).max_peak_activations
            assert one == min(p, m)
            assert _sim("zb-h1", p, m).max_peak_activations == one
            assert _sim("zbv", p, m).max_peak_activations == one
            h2 = _sim("zb-h2", p, m).peak_activations
            assert max(h2) <= 2 * p - 1
            if m >= 2 * p - 1:
                assert max(h2) == 2 * p - 1
            if m >= 2 * p:
                assert set(_sim("dualpipev", p, m).peak_activations) == {p + 0.5}


# ------------------------------------------------------------------------ critical path
@pytest.mark.parametrize("name", ZB_NAMES)
def test_critical_path_is_a_tight_chain(name: str) -> None:
    """Each step of the path starts exactly when its predecessor (same rank, or a
    dependency plus one hop's latency) ends; it runs from time 0 to the makespan."""
    comm = Fr(1, 4)
    for p, m in ((1, 4), (3, 6), (4, 9)):
        r = bk.simulate(bk.schedule(name, p, m), bk.Costs(f=2, i=Fr(3, 2), w=1, comm=comm))
        spans = {(s.rank, s.action): s for s in r.spans()}
        path = [spans[node] for node in r.critical_path]
        assert path[0].start == 0 and path[-1].end == r.makespan
        for prev, nxt in zip(path, path[1:]):
            hop = comm if prev.rank != nxt.rank else 0
            assert nxt.start == prev.end + hop, (prev, nxt)
