"""The readable engine defines the semantics; the tuned one must give identical results.

Over random schedules (every registered one), per-stage Fraction costs, float costs,
latency, overlapped pairs (the registered DualPipe ones, and F/B neighbours fused into
pairs at random), pair costs from ``F + B`` to ``max(F, B)``, and random legal and illegal
(deadlocking) orders, lowered schedules (messages as SEND/RECV actions, receives posted
early, where PyTorch posts them or deferred, then moved at random), both engines must give the
same starts and ends, critical path and memory, or the same deadlock message.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import bubblekit as bk
from bubblekit.actions import Action, Event, Pair, inputs, memory_delta, needs, parse_action, parts, producers, produces
from bubblekit.simulator import Arrival, cost_timing, run_orders

times = st.one_of(
    st.integers(min_value=1, max_value=5),
    st.fractions(min_value=Fraction(1, 4), max_value=Fraction(4), max_denominator=8),
)
float_times = st.floats(min_value=0.25, max_value=4.0, allow_nan=False, allow_infinity=False)
pair_costs = st.sampled_from([{}, {"fb": "max"}, {"overlap": Fraction(1, 3)}, {"overlap": 1}, {"fb": "sum"}])
#: messages with a size on links with a bandwidth (one message at a time per direction), and a
#: data-parallel reduction at the step's end; {} (none) half of the time
wire_costs = st.one_of(
    st.just({}), st.just({}),
    st.fixed_dictionaries({"activation_bytes": st.sampled_from([1, 3, 8]), "bandwidth": st.sampled_from([1, 2, 4])}),
    st.fixed_dictionaries({"activation_bytes": st.sampled_from([0, 2]), "gradient_bytes": st.sampled_from([1, 5]),
                           "bandwidth": st.sampled_from([1, 3]), "dp_reduce": st.sampled_from([1, 3])}),
    st.fixed_dictionaries({"dp_reduce": st.sampled_from([1, Fraction(5, 2), 6])}),
)


def fuse_pairs(order: list[Action], picks: list[bool]) -> list[Action]:
    """Fuse neighbouring single F and B (either order) into overlapped pairs where ``picks`` says so."""
    out: list[Action] = []
    k = 0
    while k < len(order):
        a = order[k]
        b = order[k + 1] if k + 1 < len(order) else None
        if (b is not None and picks[k % len(picks)] and type(a) is Action and type(b) is Action
                and {a.kind, b.kind} == {"F", "B"} and (a.stage, a.microbatch) != (b.stage, b.microbatch)):
            out.append(Pair(*((a, b) if a.kind == "F" else (b, a))))
            k += 2
            continue
        out.append(a)
        k += 1
    return out


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
    pair = {**draw(pair_costs), **draw(wire_costs)}
    if kind == "per-stage":
        costs = bk.Costs(f=draw(st.lists(times, min_size=n, max_size=n)),
                         i=draw(st.lists(times, min_size=n, max_size=n)),
                         w=draw(st.lists(times, min_size=n, max_size=n)), comm=latency,
                         activation=draw(st.lists(st.sampled_from([1, Fraction(1, 2), 2]), min_size=n, max_size=n)),
                         w_held=draw(st.sampled_from([1, Fraction(1, 2), 0])), **pair)
    elif kind == "float":
        costs = bk.Costs(f=draw(float_times), i=draw(float_times), w=draw(float_times), comm=float(latency), **pair)
    else:
        costs = bk.Costs(f=draw(times), i=draw(times), w=draw(times), comm=latency, **pair)
    if draw(st.integers(0, 3)) == 0:  # fuse some F/B neighbours into overlapped pairs (may deadlock)
        picks = draw(st.lists(st.booleans(), min_size=1, max_size=8))
        orders = tuple(tuple(fuse_pairs(list(o), picks)) for o in sched.orders)
        sched = bk.Schedule("fused", sched.p, sched.m, sched.placement, orders, pipes=sched.pipes)
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
        sched = bk.Schedule("perturbed", sched.p, sched.m, sched.placement, tuple(tuple(o) for o in orders),
                            pipes=sched.pipes)
    if draw(st.integers(0, 3)) == 0:  # lowered: messages as SEND/RECV actions, receives posted three ways
        try:
            lowered = sched.lower_comms(draw(st.sampled_from(["asap", "deferred", "early"])))
        except ValueError:  # two pipelines, or an order PyTorch's lowering cannot place
            lowered = None
        if lowered is not None:
            orders = [list(o) for o in lowered.orders]
            for order in orders:  # a send or a receive moved by one place (may deadlock)
                for _ in range(draw(st.integers(0, 2)) if len(order) > 1 else 0):
                    j = draw(st.integers(0, len(order) - 2))
                    order[j], order[j + 1] = order[j + 1], order[j]
            sched = bk.Schedule("lowered", lowered.p, lowered.m, lowered.placement, tuple(map(tuple, orders)))
            event("lowered")
    return sched, costs


def outcome(sched: bk.Schedule, costs: bk.Costs, engine: str) -> tuple[object, ...]:
    """Everything a simulation says, or the deadlock message."""
    try:
        r = bk.simulate(sched, costs, engine=engine)
    except bk.DeadlockError as exc:
        return ("deadlock", str(exc))
    return (r._starts, r._ends, r.ticks_per_unit, r.critical_path, r.peak_activations, r.memory_curves,
            r.makespan, r.bubble_ratio_exact if not isinstance(r.makespan, float) else r.bubble_ratio,
            r.reductions, r.exposed_reduction)


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


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_the_sweeps_agree(case: tuple[bk.Schedule, bk.Costs]) -> None:
    """The tuned engine's bulk paths (``_fast_engine._swept``, numpy: sweeps over the ranks, or level by level
    with links), which only large schedules take, forced on every schedule: the readable engine's timeline."""
    from bubblekit import _fast_engine

    sched, costs = case
    saved = _fast_engine.SWEEP_MIN_ACTIONS, _fast_engine.MAX_SWEEPS
    _fast_engine.SWEEP_MIN_ACTIONS, _fast_engine.MAX_SWEEPS = 0, 200
    try:
        fast = outcome(sched, costs, "fast")
    finally:
        _fast_engine.SWEEP_MIN_ACTIONS, _fast_engine.MAX_SWEEPS = saved
    assert fast == outcome(sched, costs, "readable")


@pytest.mark.parametrize("text", [
    "rank 0: 0F0 0B0 0F1 0B1\nrank 1: 1B0 1F0 1F1 1B1",          # waits on itself later
    "rank 0: 0F0 0B0 0F1 0B1\nrank 1: 1F1 1F0 1B0 1B1",          # a cycle between ranks
    "rank 0: 0F0 0F1 0I0 0W0 0I1 0W1\nrank 1: 1F0 1W0 1I0 1F1 1I1 1W1",  # W before its I
    "rank 0: 0F0 0F1&0B0 0B1\nrank 1: 1F0 1B0 1F1 1B1",          # a pair that waits for a gradient its own rank makes later
    "rank 0: 0F0 0F1 0B0 0B1\nrank 1: 1F0 1F1&1B0 1B1",          # the last stage: the pair's backward needs 1F0 only
])
def test_deadlock_messages_agree(text: str) -> None:
    s = bk.Schedule.from_text(text)
    messages = []
    for engine in bk.simulator.ENGINES:
        try:
            bk.simulate(s, engine=engine)
        except bk.DeadlockError as exc:
            messages.append(str(exc))
        else:
            messages.append("no deadlock")
    assert messages[0] == messages[1]


def test_deadlock_inside_a_pair_names_the_pair() -> None:
    """A rank blocked on a pair's part is told which pair holds it, and why that pair waits."""
    s = bk.Schedule.from_text("rank 0: 0F0 0F1 0B1 0B0\nrank 1: 1F0&1B1 1F1 1B0")
    messages = set()
    for engine in bk.simulator.ENGINES:
        with pytest.raises(bk.DeadlockError) as info:
            bk.simulate(s, engine=engine)
        messages.add(str(info.value))
    (text,) = messages
    assert "rank 0 is blocked at 0B1 (action 3 of 4 in its order): waits for 1B1 (in the pair 1F0&1B1)" in text
    assert "stuck at 1F0&1B1, waiting for 1F1" in text
    assert "rank 1 is blocked at 1F0&1B1 (action 1 of 3 in its order): waits for 1F1, which rank 1 itself runs later" in text


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
    # the overlapped pair: both parts' needs before it starts, both parts' events at its end
    pair = parse_action("0F7&7B3")
    assert pair == Pair(Action(0, "F", 7), Action(7, "B", 3)) and parts(pair) == (Action(0, "F", 7), Action(7, "B", 3))
    assert needs(pair, 8) == (Event("activation", 7, 3),)  # stage 0 needs no input; stage 7 is last
    mid = parse_action("2F5&5B1")
    assert needs(mid, 8) == (Event("activation", 1, 5), Event("activation", 5, 1), Event("gradient", 6, 1))
    assert produces(mid) == (Event("activation", 2, 5), Event("gradient", 5, 1))
    assert memory_delta(mid, [1, 1, 2, 1, 1, 3, 1, 1]) == (2, 3)  # F part allocates its stage's, B part frees its own
    assert inputs(mid, 8) == [Action(1, "F", 5), Action(5, "F", 1), Action(6, "B", 1)]
    # two pipelines (DualPipe): each pipeline's first and last stages need nothing from outside
    assert needs(Action(4, "F", 0), 8, pipes=2) == () and needs(Action(3, "B", 0), 8, pipes=2) == (Event("activation", 3, 0),)


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
