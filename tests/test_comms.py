"""Communication as actions: ``Schedule.lower_comms`` (SEND/RECV per hop) and the message rule.

* the lowered orders are PyTorch's own (``_add_send_recv``, and ``_defer_recv_ops`` for
  ``defer_pp_recv=True``), compared with torch's functions where torch is installed, and they
  round-trip through ``to_torch_csv(comms=True)`` / ``from_torch_csv(..., comms=True)``;
* receives posted early give the timeline of the schedule that is not lowered, for any costs
  without a bandwidth (property test); zero latency makes every placement free; a receive
  posted later never makes anything earlier;
* a receive posted late (deferred) makes its rank wait the hop: the receive-placement bubble;
* metrics, memory and pictures work on lowered schedules; bad input is refused by name.

The engine-agreement test (``tests/test_engines.py``) draws lowered schedules too.
"""

from __future__ import annotations

import importlib.util
import os
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bubblekit as bk
from bubblekit.actions import COMM_KINDS, Action, Event, carried, is_comm, message_events, needs, parse_action, produces
from bubblekit.schedules import ScheduleError

HAVE_TORCH = importlib.util.find_spec("torch") is not None
if not HAVE_TORCH and os.environ.get("CI") == "true":  # pragma: no cover - CI installs torch
    raise RuntimeError("CI=true but torch is not installed: the torch comparisons would be skipped")
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed (bubblekit[lab])")
RECVS = ("asap", "deferred", "early")


def _settings() -> list[tuple[str, int, int, int | None]]:
    """Every registered schedule PyTorch can express, at a few (p, m, v) it accepts."""
    out = []
    for name in bk.names():
        entry = bk.spec(name)
        for p in (2, 3, 4):
            for m in (1, 4, 8):
                for v in ((None,) if entry.chunks != "many" else (2,)):
                    if entry.allows(p, m, v) and bk.schedule(name, p, m, v).pipes == 1:
                        out.append((name, p, m, v))
    return out


SETTINGS = _settings()
_ids = "-".join


def _no_fsdp(rows: Any) -> dict[int, list[str]]:
    """PyTorch's lowered rows without FSDP's and the gradient reduction's cells, as text."""
    return {r: [str(a) for a in row if a is not None and str(a).split("_")[0][-7:] not in ("UNSHARD", "RESHARD")
                and not str(a).endswith("REDUCE_GRAD")] for r, row in rows.items()}


# ------------------------------------------------------------------ the rules
def test_the_message_rule_reads_as_the_lessons_say() -> None:
    place = (0, 1, 1, 0)  # stage 1 and 2 share rank 1: no message between them
    assert parse_action("1RECV_F3") == Action(1, "RECV_F", 3) and str(Action(2, "SEND_B", 0)) == "2SEND_B0"
    assert needs(Action(1, "F", 0), 4, placement=place) == (Event("recv-activation", 1, 0),
                                                             Event("sent-activation", 0, 0))
    assert needs(Action(2, "F", 0), 4, placement=place) == (Event("activation", 1, 0),)  # same rank
    assert needs(Action(1, "F", 0), 4) == (Event("activation", 0, 0),)  # not lowered: the message is implicit
    assert needs(Action(2, "B", 0), 4, placement=place) == (Event("activation", 2, 0), Event("recv-gradient", 2, 0),
                                                             Event("sent-gradient", 3, 0))
    assert needs(Action(0, "SEND_F", 2), 4) == (Event("activation", 0, 2),)
    assert needs(Action(3, "SEND_B", 2), 4) == (Event("gradient", 3, 2),)
    assert needs(Action(1, "RECV_F", 2), 4) == needs(Action(1, "RECV_B", 2), 4) == ()
    assert [produces(Action(1, k, 0)) for k in COMM_KINDS] == [
        (Event(w, 1, 0),) for w in ("sent-activation", "recv-activation", "sent-gradient", "recv-gradient")]
    assert carried(Event("recv-activation", 2, 5)) == carried(Event("sent-activation", 1, 5)) == Event("activation", 1, 5)
    assert carried(Event("recv-gradient", 0, 5)) == carried(Event("sent-gradient", 1, 5)) == Event("gradient", 1, 5)
    assert carried(Event("activation", 1, 5)) is None
    assert message_events(Event("gradient", 3, 1), 2) == (Event("recv-gradient", 2, 1), Event("sent-gradient", 3, 1))
    assert is_comm(Action(0, "SEND_F", 0)) and not is_comm(Action(0, "F", 0))
    assert bk.memory_delta(Action(0, "RECV_B", 0), 3) == (0, 0)


def test_lowering_puts_a_send_after_each_hop_and_a_receive_on_the_other_rank() -> None:
    s = bk.schedule("1f1b", 2, 3)
    low = s.lower_comms()
    assert low.has_comms and not s.has_comms and low.compute_only().orders == s.orders
    assert low.to_torch_orders()[0][:4] == ["0F0", "0SEND_F0", "0F1", "0SEND_F1"]
    assert low.to_torch_orders()[1][:2] == ["1RECV_F0", "1F0"]
    assert low.n_actions == s.n_actions + 2 * s.hops_per_step
    early = s.lower_comms("early").to_torch_orders()
    assert early[1][:3] == ["1RECV_F0", "1RECV_F1", "1RECV_F2"]
    deferred = s.lower_comms("deferred").to_torch_orders()[1]
    assert all(deferred[k + 1] == f"1F{a[-1]}" for k, a in enumerate(deferred) if "RECV_F" in a)  # right before
    v = bk.schedule("zbv", 2, 4)  # the V turns on rank 1 without a message
    turns = {str(a) for o in v.lower_comms().orders for a in o if is_comm(a) and a.stage in (1, 2)}
    assert v.placement[1] == v.placement[2] and not turns & {"1SEND_F0", "2RECV_F0", "2SEND_B0", "1RECV_B0"}


# ---------------------------------------------------------- PyTorch's own orders
@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: "-".join(map(str, s)))
def test_lowered_orders_are_pytorchs(setting: tuple[str, int, int, int | None], tmp_path: Path) -> None:
    """asap = ``_add_send_recv``'s placement, deferred = ``_defer_recv_ops``; PyTorch runs our file as written."""
    from torch.distributed.pipelining import schedules as S

    from tests.test_torch_csv import _read, _torch_runtime

    sched = bk.schedule(*setting)
    path = tmp_path / "compute.csv"
    sched.to_torch_csv(path)
    runtime = _torch_runtime(sched.n_stages, sched.p, sched.m)
    runtime._load_csv(str(path))
    theirs = runtime.pipeline_order_with_comms
    assert _no_fsdp(theirs) == sched.lower_comms().to_torch_orders()
    deferred = S._defer_recv_ops(theirs, stage_to_rank=lambda s: sched.placement[s])
    assert _no_fsdp(deferred) == sched.lower_comms("deferred").to_torch_orders()
    for recv in RECVS:  # our lowered file, loaded as PyTorch's compute_comms format and dumped again
        ours = tmp_path / f"{recv}.csv"
        text = sched.lower_comms(recv).to_torch_csv(ours, comms=True)
        again = _torch_runtime(sched.n_stages, sched.p, sched.m)
        again._load_csv(str(ours), format="compute_comms")
        dumped = tmp_path / f"{recv}-again.csv"
        again._dump_csv(str(dumped), format="compute_comms")
        assert _read(dumped) == text


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: "-".join(map(str, s)))
def test_lowered_files_round_trip(setting: tuple[str, int, int, int | None]) -> None:
    sched = bk.schedule(*setting)
    for recv in RECVS:
        low = sched.lower_comms(recv)
        low.validate()
        back = bk.Schedule.from_torch_csv(text=low.to_torch_csv(comms=True), comms=True, m=sched.m)
        assert (back.orders, back.placement) == (low.orders, low.placement)
        assert low.to_torch_csv() == sched.to_torch_csv()  # compute only: the same file
    full = bk.Schedule.from_torch_csv(text=sched.to_torch_csv(comms=True), comms=True, m=sched.m)
    assert full.orders == sched.lower_comms().orders  # PyTorch's whole lowered file, FSDP cells dropped
    assert bk.Schedule.from_torch_csv(text=sched.to_torch_csv(comms=True), m=sched.m).orders == sched.orders


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: "-".join(map(str, s)))
def test_the_fast_walk_is_pytorchs_lowering(setting: tuple[str, int, int, int | None]) -> None:
    """The walk lower_comms uses (one readiness test per cell) gives the reference's orders, and its layout."""
    from bubblekit.schedules import comms

    sched = bk.schedule(*setting)
    rows, layout = comms.lower_with_layout(sched.orders, sched.placement, sched.m)
    assert tuple(map(tuple, rows)) == comms.to_actions(comms.lower_rows(sched.orders, sched.placement, sched.m))
    assert rows == comms._walk(comms._rows_with_fillers(sched.orders, sched.m, fast=False), sched.placement, sched.m)
    for order in (*sched.orders, *(list(reversed(o)) for o in sched.orders), *(o[::2] for o in sched.orders)):
        assert comms._rows_with_fillers([order], sched.m) == comms._rows_with_fillers([order], sched.m, fast=False)
    assert layout == (None if sched.has_pairs else comms.layout_of(rows, sched.n_stages, sched.m))  # pairs: none
    shuffled = [list(reversed(o)) for o in sched.orders]  # an order the walk cannot place: the same refusal
    errors = []
    for walk in (lambda: comms.lower_actions(shuffled, sched.placement, sched.m),
                 lambda: comms._walk(comms._rows_with_fillers(shuffled, sched.m), sched.placement, sched.m)):
        try:
            errors.append(str(walk()))
        except ValueError as exc:
            errors.append(str(exc))
    assert errors[0] == errors[1]


def test_a_lowered_schedule_is_legal_by_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    """lower_comms marks its result: validate() and check_ranges() skip the re-checks, compute_only() is the base."""
    s = bk.schedule("zbv", 3, 6)
    low = s.lower_comms()
    assert low.compute_only().orders is s.orders and low.compute_only() == bk.Schedule(
        low.name, low.p, low.m, low.placement, s.orders, source=low.source, pipes=low.pipes)
    copy = bk.Schedule(low.name, low.p, low.m, low.placement, low.orders)  # the same orders, not made by lower_comms

    def boom(self: bk.Schedule) -> None:
        raise AssertionError("re-checked")

    for check in ("_looks_legal", "_check_comms", "_explain_problems", "_check_pipes"):
        monkeypatch.setattr(bk.Schedule, check, boom)
    low.validate()
    low.check_ranges()
    bk.simulate(low, bk.Costs(comm=1))
    with pytest.raises(AssertionError, match="re-checked"):
        copy.validate()
    monkeypatch.undo()
    copy.validate()
    import dataclasses

    assert "_lowered_from" not in dataclasses.replace(low, name="renamed").__dict__  # a new schedule: checked again


lowered_costs = st.sampled_from([
    bk.Costs(), bk.Costs(comm=Fraction(1, 2)), bk.Costs(f=1, b=2, comm=1, activation_bytes=2, bandwidth=1, dp_reduce=3),
    bk.Costs(f=Fraction(3, 2), i=1, w=Fraction(1, 2), comm=2, activation_bytes=3, gradient_bytes=1, bandwidth=2),
    bk.Costs(f=1.5, b=2.25, comm=0.5, activation_bytes=1, bandwidth=4.0), bk.Costs(comm=0, activation_bytes=1, bandwidth=1),
    bk.Costs(f=0.7, b=2.2, comm=0.11),  # floats that do not add up exactly: the busy time summed as the readable engine does
])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SETTINGS), st.sampled_from(RECVS), lowered_costs, st.booleans(), st.booleans())
def test_the_engine_runs_a_lowered_schedule_as_its_orders(setting: tuple[str, int, int, int | None], recv: str,
                                                          costs: bk.Costs, w_first: bool, in_bulk: bool) -> None:
    """The tuned engine runs a schedule lower_comms made from its compute alone: the same result as the lowered
    orders run action by action (a copy that is not marked, and the readable engine), deadlocks included;
    ``in_bulk``: its numpy path (level by level), which only large schedules take, forced on this one."""
    from bubblekit import _fast_engine

    saved = _fast_engine.SWEEP_MIN_ACTIONS
    _fast_engine.SWEEP_MIN_ACTIONS = 0 if in_bulk else saved
    try:
        _check_lowered_run(setting, recv, costs, w_first)
    finally:
        _fast_engine.SWEEP_MIN_ACTIONS = saved


def _check_lowered_run(setting: tuple[str, int, int, int | None], recv: str, costs: bk.Costs, w_first: bool) -> None:
    sched = bk.schedule(*setting)
    if w_first and sched.split_backward:  # a W before its I: lowerable, but it deadlocks
        orders = [list(o) for o in sched.orders]
        row = orders[-1]
        k = next(j for j, a in enumerate(row) if a.kind == "I")
        row.insert(k, row.pop(row.index(Action(row[k].stage, "W", row[k].microbatch))))  # just before its I
        sched = bk.Schedule("w-first", sched.p, sched.m, sched.placement, tuple(map(tuple, orders)))
    low = sched.lower_comms(recv)
    copy = bk.Schedule(low.name, low.p, low.m, low.placement, low.orders)
    results = []
    for s, engine in ((low, "fast"), (copy, "fast"), (low, "readable")):
        try:
            r = bk.simulate(s, costs, engine=engine)
        except bk.DeadlockError as exc:
            results.append(str(exc))
            continue
        crossed = [[r._crossed(e, rank) if r._crossed else None for e in (Event("activation", st_, i), Event("gradient", st_, i))
                    for rank in range(s.p)] for st_ in range(s.n_stages) for i in range(s.m)]
        made = [r._made_by(Event(w, st_, i)) for w in ("activation", "gradient", "i-done", "sent-activation",
                                                        "recv-activation", "sent-gradient", "recv-gradient")
                for st_ in range(-1, s.n_stages + 1) for i in range(s.m)]
        results.append((r._starts, r._ends, r.critical_path, r.peak_activations, r.memory_curves, r.makespan,
                        r.bubble_ratio, r.reductions, crossed, made))
    assert results[0] == results[1] == results[2]
    from bubblekit import _fast_engine

    ticks = costs.resolve(low.n_stages, low.chunks_per_microbatch).scaled_to_integers()[0]
    used = _fast_engine.run_lowered(low, ticks) is not None  # the compute-alone path (not for pairs nor deadlocks)
    assert used == (not low.has_pairs and not isinstance(results[0], str))


# --------------------------------------------------------------- the timing
times = st.one_of(st.integers(1, 4), st.fractions(Fraction(1, 4), Fraction(3), max_denominator=4))


@st.composite
def lowerable(draw: st.DrawFn) -> tuple[bk.Schedule, bk.Costs]:
    name, p, m, v = draw(st.sampled_from(SETTINGS))
    sched = bk.schedule(name, p, m, v)
    n = sched.n_stages
    if draw(st.booleans()):
        costs = bk.Costs(f=draw(st.lists(times, min_size=n, max_size=n)), i=draw(st.lists(times, min_size=n, max_size=n)),
                         w=draw(st.lists(times, min_size=n, max_size=n)), comm=draw(st.sampled_from([0, Fraction(1, 2), 1, 3])),
                         dp_reduce=draw(st.sampled_from([0, 2])))
    else:
        costs = bk.Costs(f=draw(times), i=draw(times), w=draw(times), comm=draw(st.sampled_from([0, Fraction(1, 3), 2])))
    return sched, costs


def _compute_times(r: bk.SimResult) -> list[list[tuple[Any, Any]]]:
    return [[(s, e) for a, s, e in zip(o, st_, en) if not is_comm(a)]
            for o, st_, en in zip(r.schedule.orders, r._starts, r._ends)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lowerable())
def test_early_receives_give_the_unlowered_timeline(case: tuple[bk.Schedule, bk.Costs]) -> None:
    """Every receive posted at the start: each message crosses as soon as it is sent, as when messages are implicit."""
    sched, costs = case
    plain = bk.simulate(sched, costs)
    early = bk.simulate(sched.lower_comms("early"), costs)
    assert early.makespan == plain.makespan
    assert _compute_times(early) == _compute_times(plain)
    assert early.bubble_ratio == plain.bubble_ratio and early.peak_activations == plain.peak_activations
    assert early.reductions == plain.reductions
    for recv in ("asap", "deferred"):  # posting later never makes anything earlier
        later = bk.simulate(sched.lower_comms(recv), costs)
        assert all(a >= b for x, y in zip(_compute_times(later), _compute_times(early)) for (a, _), (b, _) in zip(x, y))
        if costs.comm == 0:  # an instant message: where it is posted cannot matter
            assert _compute_times(later) == _compute_times(early)


def test_a_deferred_receive_puts_the_hop_on_the_critical_path() -> None:
    """The receive-placement bubble: posted just before its compute, a message crosses only then."""
    sched = bk.schedule("1f1b", 4, 8)
    costs = bk.Costs(comm=Fraction(1, 2))
    plain, asap, deferred = (bk.simulate(s, costs) for s in (sched, sched.lower_comms(), sched.lower_comms("deferred")))
    assert plain.makespan <= asap.makespan < deferred.makespan
    assert asap.bubble_ratio < deferred.bubble_ratio
    # on rank 1, a deferred receive makes its forward wait the latency after the rank's previous compute
    r = 1
    order, starts, ends = deferred.schedule.orders[r], deferred._starts[r], deferred._ends[r]
    waits = []
    for k, a in enumerate(order):
        if a.kind == "RECV_F" and k + 1 < len(order) and k > 0:
            waits.append(starts[k + 1] - ends[k - 1])
    lat = costs.comm * deferred.ticks_per_unit
    assert waits and all(w >= lat for w in waits)
    assert any(is_comm(a) for _, a in deferred.critical_path)
    # the same on both engines, with links that carry one message at a time
    wired = bk.Costs(comm=Fraction(1, 2), activation_bytes=1, gradient_bytes=1, bandwidth=2)
    fast, readable = (bk.simulate(sched.lower_comms("deferred"), wired, engine=e) for e in ("fast", "readable"))
    assert fast._starts == readable._starts and fast.critical_path == readable.critical_path
    assert fast.makespan > bk.simulate(sched.lower_comms("early"), wired).makespan


def test_a_learners_lowered_schedule_runs_where_it_posts_its_receives() -> None:
    text = ("rank 0: 0F0 0SEND_F0 0F1 0SEND_F1 0RECV_B0 0B0 0RECV_B1 0B1\n"
            "rank 1: {r1} 1F0 1B0 1SEND_B0 {r2} 1F1 1B1 1SEND_B1")
    costs = bk.Costs(comm=1)
    early = bk.Schedule.from_text(text.format(r1="1RECV_F0 1RECV_F1", r2=""))
    late = bk.Schedule.from_text(text.format(r1="1RECV_F0", r2="1RECV_F1"))
    a, b = bk.simulate(early, costs), bk.simulate(late, costs)
    assert b.makespan - a.makespan == 1  # the second activation's hop is no longer hidden behind 1F0 1B0
    assert bk.simulate(early, bk.Costs()).makespan == bk.simulate(late, bk.Costs()).makespan


def test_misplaced_sends_and_receives_deadlock_by_name() -> None:
    send_first = bk.Schedule.from_text("rank 0: 0SEND_F0 0F0 0RECV_B0 0B0\nrank 1: 1RECV_F0 1F0 1B0 1SEND_B0")
    for engine in ("fast", "readable"):
        with pytest.raises(bk.DeadlockError, match="0SEND_F0"):
            bk.simulate(send_first, engine=engine)
    recv_after = bk.Schedule.from_text("rank 0: 0F0 0SEND_F0 0RECV_B0 0B0\nrank 1: 1F0 1RECV_F0 1B0 1SEND_B0")
    messages = set()
    for engine in ("fast", "readable"):
        with pytest.raises(bk.DeadlockError, match="1RECV_F0, which rank 1 itself runs later") as info:
            bk.simulate(recv_after, engine=engine)
        messages.add(str(info.value))
    assert len(messages) == 1


# ------------------------------------------------------------- metrics, pictures
def test_metrics_and_pictures_work_on_lowered_schedules() -> None:
    pytest.importorskip("matplotlib")
    sched = bk.schedule("zb-h1", 4, 8).lower_comms("deferred")
    r = bk.simulate(sched, bk.Costs(comm=Fraction(1, 2), dp_reduce=1))
    assert 0 < r.bubble_ratio < 1 and r.critical_path and r.phases()
    assert r.peak_activations == bk.simulate(sched.compute_only(), bk.Costs(comm=Fraction(1, 2))).peak_activations
    fig = bk.plotting.plot_pipeline(r, critical_path=True, comm_arrows=True)
    assert fig is not None
    bk.plotting.plot_memory(r)
    import matplotlib.pyplot as plt

    plt.close("all")


# ------------------------------------------------------------------ bad input
def test_bad_input_is_refused_by_name() -> None:
    s = bk.schedule("1f1b", 2, 3)
    with pytest.raises(TypeError, match="recv must be a string"):
        s.lower_comms(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"recv must be one of \['asap', 'deferred', 'early'\].*'late'"):
        s.lower_comms("late")
    with pytest.raises(ScheduleError, match="2 pipelines"):
        bk.schedule("dualpipe", 4, 8).lower_comms()
    with pytest.raises(ValueError, match="max_actions=10"):
        s.lower_comms(max_actions=10)
    with pytest.raises(ValueError, match="max_actions"):
        bk.schedule("1f1b", 4, 400_000, max_actions=None).lower_comms()
    with pytest.raises(TypeError, match="comms"):
        bk.Schedule.from_torch_csv(text="0F0", comms="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="placement gives 3 ranks but n_stages=4"):
        needs(Action(1, "F", 0), 4, placement=(0, 1, 1))
    with pytest.raises(ValueError, match="only an activation or a gradient"):
        message_events(Event("i-done", 0, 0), 1)
    with pytest.raises(ValueError, match="cannot read action '1RECV_X0'"):
        parse_action("1RECV_X0")
    with pytest.raises(ValueError, match="a forward F then a full backward B"):
        parse_action("0SEND_F0&1B0")


@pytest.mark.parametrize("text,match", [
    ("rank 0: 0F0 0B0 0RECV_B0\nrank 1: 1RECV_F0 1F0 1B0 1SEND_B0", "0SEND_F0 is missing"),
    ("rank 0: 0F0 0SEND_F0 0RECV_B0 0B0\nrank 1: 1F0 1B0 1SEND_B0", "1RECV_F0 is missing"),
    ("rank 0: 0F0 0SEND_F0 0SEND_F0 0RECV_B0 0B0\nrank 1: 1RECV_F0 1F0 1B0 1SEND_B0", "0SEND_F0 appears 2 times"),
    ("rank 0: 0F0 0SEND_F0 0RECV_B0 0B0 0SEND_B0\nrank 1: 1RECV_F0 1F0 1B0 1SEND_B0", "0SEND_B0 on rank 0 carries no"),
    ("rank 0: 0F0 0SEND_F0 0RECV_B0 0B0\nrank 1: 1RECV_F0 1F0 1B0 1SEND_B0 1SEND_F0", "1SEND_F0 on rank 1 carries no"),
    ("rank 0: 0F0 0SEND_F0 0RECV_B0\nrank 1: 1RECV_F0 1F0 1B0 1SEND_B0", "0B0"),
    ("rank 0: 0F0 0SEND_F0 0RECV_B0 0B0 1RECV_F0\nrank 1: 1F0 1B0 1SEND_B0", "stage 1 has actions on rank 0 and rank 1"),
])
def test_illegal_lowered_schedules_name_the_problem(text: str, match: str) -> None:
    with pytest.raises(ScheduleError, match=match):
        bk.simulate(bk.Schedule.from_text(text))


@pytest.mark.parametrize("costs", [
    bk.Costs(f=Fraction(1, 10**4), b=Fraction(2, 10**4), comm=10**14),
    bk.Costs(f=Fraction(1, 10**4), b=Fraction(2, 10**4), comm=1, activation_bytes=10**15, bandwidth=1),
])
def test_the_bulk_paths_leave_times_past_int64_to_the_generators(costs: bk.Costs) -> None:
    """Ticks that would pass int64 in numpy: the bulk paths (forced here) step aside, the times stay exact."""
    from bubblekit import _fast_engine

    sched = bk.schedule("1f1b", 4, 8)
    saved = _fast_engine.SWEEP_MIN_ACTIONS
    _fast_engine.SWEEP_MIN_ACTIONS = 0
    try:
        fast = [bk.simulate(s, costs) for s in (sched, sched.lower_comms())]
    finally:
        _fast_engine.SWEEP_MIN_ACTIONS = saved
    for r in fast:
        readable = bk.simulate(r.schedule, costs, engine="readable")
        assert (r._starts, r._ends, r.makespan) == (readable._starts, readable._ends, readable.makespan)
        assert r.makespan > 2**63 // 10**4  # past int64 in ticks
