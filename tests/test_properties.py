"""Property tests: the simulator's invariants over random schedules and cost models."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import bubblekit as bk
from bubblekit.actions import Action, parts

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

times = st.one_of(
    st.integers(min_value=1, max_value=5),
    st.fractions(min_value=Fraction(1, 4), max_value=Fraction(4), max_denominator=8),
)


@st.composite
def configurations(draw: st.DrawFn) -> tuple[bk.Schedule, bk.Costs]:
    name = draw(st.sampled_from(bk.names()))
    p = draw(st.integers(1, 6))
    m = draw(st.integers(1, 12))
    v = draw(st.integers(2, 3))
    try:
        sched = bk.schedule(name, p, m, v if bk.REGISTRY[name].chunks == "many" else None)
    except ValueError:
        assume(False)
        raise
    n = sched.n_stages
    per_stage = draw(st.booleans())
    if per_stage:
        f = draw(st.lists(times, min_size=n, max_size=n))
        i = draw(st.lists(times, min_size=n, max_size=n))
        w = draw(st.lists(times, min_size=n, max_size=n))
        costs = bk.Costs(f=f, i=i, w=w, comm=draw(st.sampled_from([0, Fraction(1, 3), 1])))
    else:
        costs = bk.Costs(f=draw(times), i=draw(times), w=draw(times), comm=draw(st.sampled_from([0, Fraction(1, 2), 2])))
    return sched, costs


def check_invariants(sched: bk.Schedule, costs: bk.Costs, r: bk.SimResult) -> None:
    spans = list(r.spans())
    # Every action runs exactly once, on its rank.
    ran = [(s.rank, s.action) for s in spans]
    expected = [(rank, a) for rank, order in enumerate(sched.orders) for a in order]
    assert sorted(ran, key=str) == sorted(expected, key=str)
    end_of: dict[Action, Fraction] = {}
    start_of: dict[Action, Fraction] = {}
    for s in spans:
        assert s.action is not None
        for part in parts(s.action):  # an overlapped pair: both parts start and end with it
            end_of[part] = Fraction(s.end)
            start_of[part] = Fraction(s.start)
    # No overlap on a rank, and each rank keeps its order.
    for rank in range(sched.p):
        rs = list(r.spans(rank))
        for a, b in zip(rs, rs[1:]):
            assert Fraction(a.end) <= Fraction(b.start)
    # Every dependency respected, with latency across ranks.
    c = Fraction(costs.comm)
    length = sched.n_stages // sched.pipes  # stages per pipeline (DualPipe runs two)
    for a, start in start_of.items():
        s, k, mb = a
        deps: list[Action] = []
        if k == "F" and s % length > 0:
            deps.append(Action(s - 1, "F", mb))
        if k in ("B", "I"):
            deps.append(Action(s, "F", mb))
            if s % length < length - 1:
                nxt = Action(s + 1, "I", mb)
                deps.append(nxt if nxt in end_of else Action(s + 1, "B", mb))
        if k == "W":
            deps.append(Action(s, "I", mb))
        for d in deps:
            hop = c if sched.placement[d.stage] != sched.placement[s] else 0
            assert start >= end_of[d] + hop, (a, d)
    # Makespan never below the busiest rank's work, never above all work in series plus hops.
    busiest = max(Fraction(b) for b in r.busy)
    assert Fraction(r.makespan) >= busiest
    assert Fraction(r.makespan) <= sum(Fraction(b) for b in r.busy) + c * 2 * sched.n_stages * sched.m
    # The memory curve's maximum is the reported peak, and every rank ends holding nothing.
    for rank, curve in enumerate(r.memory_curves):
        assert round(max(v for _, v in curve), 9) == r.peak_activations[rank]
        assert abs(curve[-1][1]) < 1e-9
        assert all(t1 < t2 for (t1, _), (t2, _) in zip(curve[1:], curve[2:]))
    assert 0 <= r.bubble_ratio_exact < 1
    assert r.bubble_ratio == float(r.bubble_ratio_exact)


@SETTINGS
@given(configurations())
def test_simulation_invariants(config: tuple[bk.Schedule, bk.Costs]) -> None:
    sched, costs = config
    check_invariants(sched, costs, bk.simulate(sched, costs))


@SETTINGS
@given(configurations(), st.randoms(use_true_random=False))
def test_shuffled_orders_run_correctly_or_deadlock(config: tuple[bk.Schedule, bk.Costs], rnd: object) -> None:
    sched, costs = config
    orders = [list(o) for o in sched.orders]
    for order in orders:
        # Swap a few neighbours, or shuffle one rank's order entirely.
        if rnd.random() < 0.3:  # type: ignore[attr-defined]
            rnd.shuffle(order)  # type: ignore[attr-defined]
        else:
            for _ in range(3):
                if len(order) > 1:
                    j = rnd.randrange(len(order) - 1)  # type: ignore[attr-defined]
                    order[j], order[j + 1] = order[j + 1], order[j]
    shuffled = bk.Schedule("shuffled", sched.p, sched.m, sched.placement, tuple(tuple(o) for o in orders),
                           pipes=sched.pipes)
    try:
        r = bk.simulate(shuffled, costs)
    except bk.DeadlockError as exc:
        msg = str(exc)
        assert msg.startswith("deadlock:")
        assert "is blocked at" in msg and "waits for" in msg
        return
    check_invariants(shuffled, costs, r)
