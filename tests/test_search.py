"""Automatic schedule search (bubblekit.analysis.search): legal, within the memory cap, and at least as good as ZB-H1."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

import bubblekit as bk
from bubblekit.actions import Action
from bubblekit.analysis import search as S

UNIFORM = bk.Costs(f=1, i=1, w=1)
UNEQUAL = bk.Costs(f=2, i=2, w=1, comm=Fraction(1, 4))
SMALL_W = bk.Costs(f=3, i=3, w=2)


def _check(s: bk.Schedule, costs: bk.Costs, cap: float) -> bk.SimResult:
    s.validate()
    r = bk.simulate(s, costs)
    assert max(r.peak_activations) <= cap + 1e-9, (s.name, r.peak_activations, cap)
    return r


@pytest.mark.parametrize("costs", [UNIFORM, UNEQUAL, SMALL_W], ids=["f=i=w", "unequal+comm", "w<f"])
@pytest.mark.parametrize("p,m", [(2, 2), (2, 4), (3, 3), (3, 6), (4, 4), (4, 8)])
def test_search_at_least_as_good_as_zb_h1_under_1f1b_cap(p: int, m: int, costs: bk.Costs) -> None:
    cap = S.one_f_one_b_cap(p)
    found = S.search_schedule(p, m, costs, mem_cap=cap)
    r = _check(found, costs, cap)
    zb = bk.simulate(bk.schedule("zb-h1", p, m), costs)
    assert max(zb.peak_activations) <= cap  # ZB-H1 itself lives under the same cap
    assert r.makespan <= zb.makespan


@pytest.mark.parametrize("p,m", [(2, 2), (2, 3), (3, 2)])
def test_exhaustive_is_optimal_against_brute_force(p: int, m: int) -> None:
    """Enumerate every per-rank order (F, I, W each in microbatch order) and compare."""
    costs = bk.Costs(f=2, i=3, w=1, comm=1)
    cap = 2.0

    def rank_orders(r: int) -> list[tuple[Action, ...]]:
        out = []
        seq = ["F"] * m + ["I"] * m + ["W"] * m
        for perm in set(itertools.permutations(seq)):
            counts = {"F": 0, "I": 0, "W": 0}
            order, ok = [], True
            for k in perm:
                j = counts[k]
                counts[k] += 1
                if (k == "I" and j >= counts["F"]) or (k == "W" and j >= counts["I"]):
                    ok = False
                    break
                order.append(Action(r, k, j))
            if ok:
                out.append(tuple(order))
        return out

    best = None
    for orders in itertools.product(*(rank_orders(r) for r in range(p))):
        s = bk.Schedule("brute", p, m, tuple(range(p)), tuple(orders))
        try:
            r = bk.simulate(s, costs)
        except bk.DeadlockError:
            continue
        if max(r.peak_activations) > cap:
            continue
        best = r.makespan if best is None else min(best, r.makespan)
    found = S.exhaustive_schedule(p, m, costs, mem_cap=cap)
    assert found.notes["optimal"] == "yes"
    assert _check(found, costs, cap).makespan == best


@pytest.mark.parametrize("p,m", [(2, 4), (3, 4), (4, 3)])
def test_exhaustive_never_worse_than_greedy(p: int, m: int) -> None:
    cap = float(p)
    ex = bk.simulate(S.exhaustive_schedule(p, m, UNEQUAL, mem_cap=cap), UNEQUAL)
    for a, b, fill, lead in S.POLICIES:
        g = S.greedy_schedule(p, m, UNEQUAL, mem_cap=cap, priority=(a, b), w_fill=fill, lead=lead)
        assert ex.makespan <= _check(g, UNEQUAL, cap).makespan


def test_larger_cap_never_hurts_and_respects_cap() -> None:
    costs = bk.Costs(f=18.5, i=18.1, w=9.3, comm=0.6, unit="ms")
    spans = []
    for cap in (4, 6, 8, 12, 16):
        s = S.search_schedule(8, 16, costs, mem_cap=cap, method="greedy")
        spans.append(_check(s, costs, cap).makespan)
    assert all(b <= a + 1e-9 for a, b in zip(spans, spans[1:]))
    assert spans[-1] < spans[0]


def test_w_held_fraction_respected() -> None:
    costs = bk.Costs(f=1, i=1, w=1, w_held=Fraction(1, 2))
    s = S.search_schedule(4, 8, costs, mem_cap=3, method="greedy")
    _check(s, costs, 3)


def test_per_rank_cap_and_names() -> None:
    caps = [4, 3, 2, 2]
    s = S.search_schedule(4, 6, UNIFORM, mem_cap=caps, method="greedy")
    r = bk.simulate(s, UNIFORM)
    assert all(pk <= c for pk, c in zip(r.peak_activations, caps))
    assert s.name == "searched" and s.v == 1 and "greedy" in s.notes["method"]


def test_deterministic() -> None:
    a = S.search_schedule(4, 8, UNEQUAL)
    b = S.search_schedule(4, 8, UNEQUAL)
    assert a.orders == b.orders


def test_greedy_rediscovers_zb_h1_makespan_for_equal_costs() -> None:
    for p, m in [(4, 8), (8, 16)]:
        s = S.greedy_schedule(p, m, UNIFORM, priority=("F", "I"), lead="1f1b")
        assert bk.simulate(s, UNIFORM).makespan == 3 * m + (p - 1)  # m(F+I+W) + (p-1)(F+I-W)


@pytest.mark.parametrize(
    "kwargs, err",
    [
        ({"p": 0, "m": 4}, ValueError),
        ({"p": 2.5, "m": 4}, TypeError),
        ({"p": 2, "m": 4, "mem_cap": 0.5}, S.SearchError),
        ({"p": 2, "m": 4, "mem_cap": [2]}, ValueError),
        ({"p": 2, "m": 4, "mem_cap": "big"}, TypeError),
        ({"p": 2, "m": 4, "method": "magic"}, ValueError),
        ({"p": 2, "m": 4, "costs": "fast"}, TypeError),
    ],
)
def test_bad_input(kwargs: dict, err: type) -> None:
    with pytest.raises(err):
        S.search_schedule(**kwargs)


def test_bad_greedy_rules() -> None:
    with pytest.raises(ValueError, match="priority"):
        S.greedy_schedule(2, 2, priority=("W", "F"))
    with pytest.raises(ValueError, match="w_fill"):
        S.greedy_schedule(2, 2, w_fill="sometimes")
    with pytest.raises(ValueError, match="lead"):
        S.greedy_schedule(2, 2, lead="far")
    with pytest.raises(ValueError, match="lead"):
        S.greedy_schedule(2, 2, lead=0)


def test_integer_lead_interpolates_towards_zb_h2() -> None:
    """lead = k runs k forwards ahead on rank 0, 1 on the last rank; k = 2p-1 gives a zero per-stage bubble."""
    from bubblekit.course import published

    p, m = 4, 8
    rates = []
    for k in range(p, 2 * p):
        s = S.greedy_schedule(p, m, UNIFORM, mem_cap=2 * p, priority=("I", "F"), lead=k)
        rates.append(published.stage_span_bubble_rate(_check(s, UNIFORM, 2 * p)))
    assert all(b < a for a, b in zip(rates, rates[1:]))
    assert rates[-1] == 0.0


def test_stage_span_objective_never_worse_than_makespan_choice() -> None:
    from bubblekit.course import published

    costs = bk.h200_costs(comm_ms=0.05)
    for cap in (8, 12, 15):
        a = S.search_schedule(8, 16, costs, mem_cap=cap, objective="stage_span", improve=False)
        b = S.search_schedule(8, 16, costs, mem_cap=cap, objective="makespan", improve=False)
        ra, rb = bk.simulate(a, costs), bk.simulate(b, costs)
        assert published.stage_span_bubble_rate(ra) <= published.stage_span_bubble_rate(rb) + 1e-12
        assert ra.max_peak_activations <= cap
    with pytest.raises(ValueError, match="objective"):
        S.search_schedule(2, 2, objective="speed")
    with pytest.raises(ValueError, match="exhaustive"):
        S.search_schedule(2, 2, objective="stage_span", method="exhaustive")


def test_improve_schedule_never_hurts() -> None:
    costs = bk.Costs(f=2, i=3, w=1, comm=1)
    start = bk.schedule("zb-h1", 3, 4)
    better = S.improve_schedule(start, costs, mem_cap=3)
    assert bk.simulate(better, costs).makespan <= bk.simulate(start, costs).makespan
    _check(better, costs, 3)
    with pytest.raises(ValueError, match="one chunk"):
        S.improve_schedule(bk.schedule("zbv", 2, 4), costs)


def test_node_limit_returns_best_found() -> None:
    s = S.exhaustive_schedule(3, 4, UNEQUAL, node_limit=5)
    assert s.notes["optimal"] == "no"
    _check(s, UNEQUAL, 3)
