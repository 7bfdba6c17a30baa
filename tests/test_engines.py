"""The readable engine defines the semantics; the tuned one must give identical results.

Over random schedules (every registered one), per-stage Fraction costs, float costs,
latency, and random legal and illegal (deadlocking) orders, both engines must give the
same starts and ends, critical path and memory, or the same deadlock message.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import bubblekit as bk
from bubblekit.actions import Action, Event, inputs, memory_delta, needs, producers, produces
from bubblekit.simulator import Arrival, cost_timing, run_orders

times = st.one_of(
    st.integers(min_value=1, max_value=5),
    st.fractions(min_value=Fraction(1, 4), max_value=Fraction(4), max_denominator=8),
)
float_times = st.floats(min_value=0.25, max_value=4.0, allow_nan=False, allow_infinity=False)


@st.composite
def cases(draw: st.DrawFn) -> tuple[bk.Schedule, bk.Costs]:
    """A registered schedule (orders perturbed half of the time) and costs."""
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
    kind = draw(st.sampled_from(["scalar", "per-stage", "float"]))
    latency = draw(st.sampled_from([0, Fraction(1, 3), 1, 2]))
    if kind == "per-stage":
        costs = bk.Costs(f=draw(st.lists(times, min_size=n, max_size=n)),
                         i=draw(st.lists(times, min_size=n, max_size=n)),
                         w=draw(st.lists(times, min_size=n, max_size=n)), comm=latency,
                         activation=draw(st.lists(st.sampled_from([1, Fraction(1, 2), 2]), min_size=n, max_size=n)),
                         w_held=draw(st.sampled_from([1, Fraction(1, 2), 0])))
    elif kind == "float":
        costs = bk.Costs(f=draw(float_times), i=draw(float_times), w=draw(float_times), comm=float(latency))
    else:
        costs = bk.Costs(f=draw(times), i=draw(times), w=draw(times), comm=latency)
    if draw(st.booleans()):  # perturb: neighbours swapped, or a whole rank shuffled (may deadlock)
        orders = [list(o) for o in sched.orders]
        for order in orders:
            if len(order) < 2:
                continue
            if draw(st.integers(0, 9)) < 3:
                perm = draw(st.permutations(range(len(order))))
                order[:] = [order[k] for k in perm]
            else:
                for _ in range(draw(st.integers(0, 3))):
                    j = draw(st.integers(0, len(order) - 2))
                    order[j], order[j + 1] = order[j + 1], order[j]
        sched = bk.Schedule("perturbed", sched.p, sched.m, sched.placement, tuple(tuple(o) for o in orders))
    return sched, costs


def outcome(sched: bk.Schedule, costs: bk.Costs, engine: str) -> tuple[object, ...]:
    """Everything a simulation says, or the deadlock message."""
    try:
        r = bk.simulate(sched, costs, engine=engine)
    except bk.DeadlockError as exc:
        return ("deadlock", str(exc))
    return (r._starts, r._ends, r.ticks_per_unit, r.critical_path, r.peak_activations, r.memory_curves,
            r.makespan, r.bubble_ratio_exact if not isinstance(r.makespan, float) else r.bubble_ratio)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_engines_agree(case: tuple[bk.Schedule, bk.Costs]) -> None:
    sched, costs = case
    fast, readable = outcome(sched, costs, "fast"), outcome(sched, costs, "readable")
    assert fast == readable
    event("deadlock" if fast[0] == "deadlock" else "timeline")
    if fast[0] != "deadlock":  # exact ticks: integer times whenever the costs are exact
        exact = not isinstance(costs.f, float) and not (isinstance(costs.f, tuple) and isinstance(costs.f[0], float))
        if exact:
            assert all(type(t) is int for row in fast[1] for t in row)  # type: ignore[union-attr]


@pytest.mark.parametrize("text", [
    "rank 0: 0F0 0B0 0F1 0B1\nrank 1: 1B0 1F0 1F1 1B1",          # waits on itself later
    "rank 0: 0F0 0B0 0F1 0B1\nrank 1: 1F1 1F0 1B0 1B1",          # a cycle between ranks
    "rank 0: 0F0 0F1 0I0 0W0 0I1 0W1\nrank 1: 1F0 1W0 1I0 1F1 1I1 1W1",  # W before its I
])
def test_deadlock_messages_agree(text: str) -> None:
    s = bk.Schedule.from_text(text)
    messages = []
    for engine in bk.simulator.ENGINES:
        with pytest.raises(bk.DeadlockError) as info:
            bk.simulate(s, engine=engine)
        messages.append(str(info.value))
    assert messages[0] == messages[1] and messages[0].startswith("deadlock:")


def test_the_rules_read_as_the_lessons_say() -> None:
    n = 4
    assert needs(Action(0, "F", 3), n) == ()
    assert needs(Action(2, "F", 3), n) == (Event("activation", 1, 3),)
    assert needs(Action(2, "I", 3), n) == (Event("activation", 2, 3), Event("gradient", 3, 3))
    assert needs(Action(3, "B", 0), n) == (Event("activation", 3, 0),)
    assert needs(Action(1, "W", 2), n) == (Event("i-done", 1, 2),)
    assert produces(Action(1, "I", 2)) == (Event("gradient", 1, 2), Event("i-done", 1, 2))
    assert produces(Action(1, "W", 2)) == ()
    assert producers(Event("gradient", 2, 0)) == (Action(2, "B", 0), Action(2, "I", 0))
    # inputs: the same rule in actions; I picked over B when the next stage splits
    assert inputs(Action(1, "B", 0), n) == [Action(1, "F", 0), Action(2, "B", 0)]
    split = {Action(2, "I", 0)}
    assert inputs(Action(1, "I", 0), n, split.__contains__) == [Action(1, "F", 0), Action(2, "I", 0)]
    # the memory rule
    assert memory_delta(Action(0, "F", 0), 2) == (2, 0)
    assert memory_delta(Action(0, "B", 0), 2) == (0, 2)
    assert memory_delta(Action(1, "I", 0), [1, 4], Fraction(1, 4)) == (0, 3)
    assert memory_delta(Action(1, "W", 0), [1, 4], Fraction(1, 4)) == (0, 1)
    with pytest.raises(ValueError, match="unknown action kind 'X'"):
        needs(Action(0, "X", 0), n)


def test_a_timing_hook_changes_only_the_times() -> None:
    """run_orders with a custom timing rule: every action one tick late, latency 0."""
    s = bk.schedule("1f1b", 3, 4)
    plain = run_orders(s.orders, s.n_stages, cost_timing(lambda a: 1 if a.kind == "F" else 2, 0))

    def late(rank: int, action: Action, free: object, arrivals: list[Arrival]) -> tuple[int, int]:
        start = max([0 if free is None else free, *(a.end for a in arrivals)]) + 1  # type: ignore[type-var]
        return start, start + (1 if action.kind == "F" else 2)

    delayed = run_orders(s.orders, s.n_stages, late)
    assert plain.ends == bk.simulate(s)._ends
    assert all(d > e for row_d, row_e in zip(delayed.ends, plain.ends) for d, e in zip(row_d, row_e))
    assert plain.made_by == delayed.made_by  # who made what does not depend on time
