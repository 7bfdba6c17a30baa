"""Compute schedules kept as integer codes (``bubblekit.schedules._flat.ComputeRows``).

GPipe, 1F1B, interleaved 1F1B and looped BFS are built as codes, their actions made only when ``orders`` is read:

* the orders are today's, action for action (the builders of before, written out here);
* ``validate()`` and ``check_ranges()`` on the codes give the verdicts (and the messages) of the
  actions' own checks, for legal schedules and for each kind of mistake, without making the actions
  of a legal one;
* ``lower_comms()`` takes the codes as they are, and gives the orders and layout of the same
  schedule built from actions; its compute entries decode from the codes;
* the simulator's metrics read the codes (``peak_activations``, the critical path, the reductions)
  and agree with a schedule built from actions; equality, hashing, pickling, ``replace`` and
  ``to_text`` see the actions;
* without numpy, or below ``BULK_MIN_ACTIONS``, everything falls back to the actions, with the same results.
"""

from __future__ import annotations

import dataclasses
import pickle
import sys
from collections.abc import Iterator
from itertools import chain

import pytest

import bubblekit as bk
from bubblekit.actions import Action
from bubblekit.schedules import ScheduleError, _flat
from bubblekit.schedules.base import Schedule, actions, codes_of, from_codes, orders_view

WIRED = bk.Costs(f=1, b=2, comm=1, activation_bytes=2, bandwidth=1, dp_reduce=3)


@pytest.fixture(autouse=True, params=["engine in bulk", "engine generators"])
def bulk_always(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[None]:
    """Small schedules take the numpy paths too (they start at 20,000 actions otherwise): the codes' checks and
    sums, and, in one of the two runs, the engine's bulk paths (which then read the codes, not the actions)."""
    from bubblekit import _fast_engine

    monkeypatch.setattr(_flat, "BULK_MIN_ACTIONS", 0)
    if request.param == "engine in bulk":
        monkeypatch.setattr(_fast_engine, "SWEEP_MIN_ACTIONS", 0)
    yield


# the builders as they were, one Action at a time
def old_gpipe(p: int, m: int) -> tuple[tuple[Action, ...], ...]:
    return tuple(tuple(actions(r, "F", range(m)) + actions(r, "B", range(m))) for r in range(p))


def old_1f1b(p: int, m: int) -> tuple[tuple[Action, ...], ...]:
    orders = []
    for r in range(p):
        warm = min(p - r, m)
        forwards, backwards = actions(r, "F", range(m)), actions(r, "B", range(m))
        steady = list(chain.from_iterable(zip(backwards, forwards[warm:])))
        orders.append(tuple(forwards[:warm] + steady + backwards[m - warm:]))
    return tuple(orders)


def old_looped_bfs(p: int, m: int, v: int) -> tuple[tuple[Action, ...], ...]:
    orders = []
    for r in range(p):
        stages = list(range(r, p * v, p))
        order = [Action(s, "F", i) for s in stages for i in range(m)]
        order += [Action(s, "B", i) for s in reversed(stages) for i in reversed(range(m))]
        orders.append(tuple(order))
    return tuple(orders)


SIZES = [(1, 1), (1, 5), (2, 1), (3, 2), (4, 4), (4, 9), (6, 3), (5, 12)]


def eager(s: Schedule) -> Schedule:
    """The same schedule built from its actions."""
    return Schedule(s.name, s.p, s.m, s.placement, tuple(map(tuple, orders_view(s))), source=s.source,
                    notes=dict(s.notes), pipes=s.pipes)


@pytest.mark.parametrize("p, m", SIZES)
def test_the_orders_are_the_builders_of_before(p: int, m: int) -> None:
    for name, old in (("gpipe", old_gpipe), ("1f1b", old_1f1b)):
        s = bk.schedule(name, p, m)
        assert type(orders_view(s)) is _flat.ComputeRows
        assert [list(row) for row in orders_view(s)] == [list(row) for row in old(p, m)]
        assert "orders" not in s.__dict__
        assert s.orders == old(p, m)
        assert all(type(a) is Action for row in s.orders for a in row)
    for v in (2, 3):
        s = bk.schedule("looped-bfs", p, m, v)
        assert s.orders == old_looped_bfs(p, m, v)


@pytest.mark.parametrize("p, m, v, group", [(2, 3, 2, None), (4, 8, 2, None), (4, 10, 3, None), (3, 6, 2, 6),
                                             (4, 13, 2, 9)])
def test_interleaved_codes_are_its_actions(p: int, m: int, v: int, group: int | None) -> None:
    from bubblekit.schedules.classic import interleaved_rank_ops

    s = bk.schedule("interleaved", p, m, v, microbatch_group_size=group)
    want = tuple(tuple(interleaved_rank_ops(r, p, m, v, group=group)) for r in range(p))
    assert [list(row) for row in orders_view(s)] == [list(row) for row in want]
    s.validate()
    assert "orders" not in s.__dict__ and s.orders == want
    zb = [interleaved_rank_ops(r, p, m, v, zero_bubble=True, group=group, codes=True) for r in range(p)]
    lazy = from_codes("zb1p", p, m, s.placement, zb)
    lazy.validate()
    assert lazy.split_backward and lazy.orders == tuple(
        tuple(interleaved_rank_ops(r, p, m, v, zero_bubble=True, group=group)) for r in range(p))


def test_the_view_decodes_one_action_at_a_time_and_gives_arrays() -> None:
    s = bk.schedule("1f1b", 3, 4)
    view = orders_view(s)
    assert isinstance(view, _flat.ComputeRows)
    assert len(view) == 3 and view.lengths() == [8, 8, 8]
    assert view[1][0] == Action(1, "F", 0) and view[1][-1] == Action(1, "B", 3)
    assert view[2][1:3] == [Action(2, "B", 0), Action(2, "F", 1)]
    assert list(reversed(view[0])) == list(reversed(old_1f1b(3, 4)[0]))
    assert repr(view[2][:0]) == "[]" and "2F0 2B0" in repr(view[2])
    stage, kind, mb = view.arrays()
    every = [a for row in old_1f1b(3, 4) for a in row]
    assert stage.tolist() == [a.stage for a in every]
    assert [_flat.COMPUTE_CODES[k] for k in kind.tolist()] == [a.kind for a in every]
    assert mb.tolist() == [a.microbatch for a in every]
    assert not stage.flags.writeable  # shared by every reader
    assert "orders" not in s.__dict__
    assert s.n_actions == 24 and not s.split_backward and not s.has_pairs and not s.has_comms
    assert "orders" not in s.__dict__


def test_validate_reads_the_codes_and_makes_no_action() -> None:
    for name in ("gpipe", "1f1b", "looped-bfs"):
        s = bk.schedule(name, 4, 6)
        s.validate()
        s.check_ranges()
        s._refuse_idle_ranks()
        assert "orders" not in s.__dict__
        assert codes_of(s)._rows is None  # type: ignore[union-attr]


def _mistakes(p: int, m: int) -> Iterator[tuple[str, list[list[int]]]]:
    """1F1B's codes with one mistake each."""
    good = [list(row) for row in codes_of(bk.schedule("1f1b", p, m)).codes]  # type: ignore[union-attr]
    n = p

    def code(stage: int, kind: str, mb: int) -> int:
        return ("FBIW".index(kind) * n + stage) * m + mb

    rows = [r[:] for r in good]
    rows[1].append(rows[1][0])
    yield "a repeat", rows
    rows = [r[:] for r in good]
    rows[2].pop()
    yield "a missing backward", rows
    rows = [r[:] for r in good]
    rows[0].remove(code(0, "F", 2))
    yield "a missing forward", rows
    rows = [r[:] for r in good]
    rows[0].append(rows[1].pop(0))
    yield "an action on the wrong rank", rows
    rows = [r[:] for r in good]
    at = rows[3].index(code(3, "B", 1))
    rows[3][at] = code(3, "I", 1)
    yield "an I without its W", rows
    rows[3].append(code(3, "W", 1))
    yield "I and W instead of B (legal)", rows
    rows = [r[:] for r in good]
    rows[3] += [code(3, "I", 1), code(3, "W", 1)]
    yield "both B and I/W", rows
    rows = [r[:] for r in good]
    rows[0].append(4 * n * m + 1)  # a stage past the last
    yield "a code past the last kind", rows
    rows = [r[:] for r in good]
    rows[0].append(-1)
    yield "a negative code", rows
    rows = [r[:] for r in good]
    rows[1] = []
    yield "an idle rank", rows


def _verdict(s: Schedule, check: str) -> str:
    try:
        getattr(s, check)()
    except ScheduleError as exc:
        return f"{type(exc).__name__}: {exc}"
    return "legal"


@pytest.mark.parametrize("check", ["validate", "check_ranges"])
def test_validate_on_the_codes_gives_the_verdict_and_message_of_the_actions(check: str) -> None:
    p, m = 4, 5
    seen = set()
    for what, rows in _mistakes(p, m):
        lazy = from_codes("1f1b", p, m, tuple(range(p)), rows)
        if min(map(min, filter(None, rows))) < 0 or max(map(max, filter(None, rows))) >= 4 * p * m:
            with pytest.raises(ValueError, match="is no action of 4 stage"):  # not an action at all
                getattr(lazy, check)()
            continue
        want = _verdict(eager(lazy), check)
        got = _verdict(from_codes("1f1b", p, m, tuple(range(p)), rows), check)
        assert got == want, what
        seen.add(want == "legal")
    assert seen == {True, False}


def test_validate_refuses_a_stage_off_its_rank_from_the_placement() -> None:
    s = bk.schedule("1f1b", 3, 4)
    moved = from_codes("1f1b", 3, 4, (0, 2, 1), codes_of(s).codes)  # type: ignore[union-attr]
    with pytest.raises(ScheduleError) as lazy_exc:
        moved.validate()
    with pytest.raises(ScheduleError) as eager_exc:
        eager(from_codes("1f1b", 3, 4, (0, 2, 1), codes_of(s).codes)).validate()  # type: ignore[union-attr]
    assert str(lazy_exc.value) == str(eager_exc.value) and "stage 1 is on rank 2" in str(lazy_exc.value)


def test_a_lazy_schedule_checks_its_fields_as_the_constructor_does() -> None:
    with pytest.raises(ValueError, match="p"):
        bk.schedules.gpipe(0, 4)
    with pytest.raises(ValueError, match="orders has 2 rank order"):
        from_codes("x", 3, 2, (0, 1, 2), [[0], [1]])


@pytest.mark.parametrize("name", ["gpipe", "1f1b", "looped-bfs"])
@pytest.mark.parametrize("recv", ["asap", "deferred", "early"])
def test_lowering_takes_the_codes_and_gives_the_orders_of_the_actions(name: str, recv: str) -> None:
    s = bk.schedule(name, 4, 7)
    low = s.lower_comms(recv)
    want = eager(s).lower_comms(recv)
    if recv == "asap":
        view = orders_view(low)
        assert type(view) is _flat.FlatRows and view.base is codes_of(s)
        assert "orders" not in s.__dict__  # the compute entries decode from the codes
        assert [list(r) for r in view] == [list(r) for r in want.orders]
        assert low.__dict__["_lowered_from"].layout == want.__dict__["_lowered_from"].layout
        compute = low.compute_only()
        assert codes_of(compute) is codes_of(s) and compute.source == low.source
        compute.validate()
        assert "orders" not in s.__dict__
    assert low.orders == want.orders
    assert low.compute_only().orders == s.orders
    if recv == "asap":  # made once: the lowered schedule's compute actions are the compute schedule's own
        assert all(a is b for la, sa in zip(low.compute_only().orders, s.orders) for a, b in zip(la, sa))


def _metrics(r: bk.SimResult) -> tuple[object, ...]:
    return (r.makespan, r.bubble_ratio, r.peak_activations, r.critical_path, r.reductions, r.memory_curves,
            list(r.spans()))


@pytest.mark.parametrize("name, p, m", [("gpipe", 4, 6), ("1f1b", 4, 6), ("1f1b", 5, 3), ("looped-bfs", 3, 4),
                                        ("zbv", 3, 7), ("zbv", 4, 2)])
@pytest.mark.parametrize("model", ["default", "wired", "per stage"])
def test_the_metrics_read_the_codes_and_agree_with_the_actions(name: str, p: int, m: int, model: str) -> None:
    s = bk.schedule(name, p, m)
    costs = {"default": None, "wired": WIRED,
             "per stage": bk.Costs(f=1, b=2, activation=[1 + k / 3 for k in range(s.n_stages)])}[model]
    r = bk.simulate(s, costs)
    from bubblekit import _fast_engine

    if _fast_engine.SWEEP_MIN_ACTIONS == 0:  # the engine's bulk paths read the codes
        assert "orders" not in s.__dict__ and codes_of(s)._rows is None  # type: ignore[union-attr]
    s.__dict__.pop("orders", None)  # the generators make them: the metrics must not need them
    codes_of(s)._rows = None  # type: ignore[union-attr]
    got = (r.makespan, r.bubble_ratio, r.peak_activations, r.critical_path, r.reductions)
    assert "orders" not in s.__dict__ and codes_of(s)._rows is None  # type: ignore[union-attr]
    assert got == _metrics(bk.simulate(eager(s), costs))[:5]
    assert _metrics(r) == _metrics(bk.simulate(eager(s), costs))
    low = bk.simulate(s.lower_comms(), costs)
    assert _metrics(low) == _metrics(bk.simulate(eager(s).lower_comms(), costs))


def test_equality_hashing_pickling_replace_and_text_see_the_actions() -> None:
    s, t = bk.schedule("1f1b", 4, 5), eager(bk.schedule("1f1b", 4, 5))
    back = pickle.loads(pickle.dumps(bk.schedule("1f1b", 4, 5)))
    assert "orders" not in back.__dict__ and codes_of(back) is not None
    assert s == t and hash(s) == hash(t) and back == t
    assert s.to_text() == t.to_text() and str(s) == str(t)
    renamed = dataclasses.replace(bk.schedule("1f1b", 4, 5), name="renamed")
    assert codes_of(renamed) is None and renamed.orders == t.orders
    assert bk.Schedule.from_text(s.to_text()).orders == s.orders


def test_without_numpy_everything_falls_back_to_the_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    s = bk.schedule("1f1b", 4, 6)
    want = _metrics(bk.simulate(eager(s), WIRED))
    bad = from_codes("1f1b", 4, 6, (0, 1, 2, 3), [row[:-1] for row in codes_of(s).codes])  # type: ignore[union-attr]
    with pytest.raises(ScheduleError) as with_numpy:
        bad.validate()
    monkeypatch.setitem(sys.modules, "numpy", None)  # import numpy now fails
    lazy = bk.schedule("1f1b", 4, 6)
    assert codes_of(lazy).legal(lazy.placement) is None  # type: ignore[union-attr]
    lazy.validate()
    assert _metrics(bk.simulate(lazy, WIRED)) == want
    assert bk.schedule("1f1b", 4, 6).lower_comms().orders == eager(s).lower_comms().orders
    bad = from_codes("1f1b", 4, 6, (0, 1, 2, 3), [row[:-1] for row in codes_of(s).codes])  # type: ignore[union-attr]
    with pytest.raises(ScheduleError) as without:
        bad.validate()
    assert str(without.value) == str(with_numpy.value)


def test_large_schedules_take_the_bulk_paths_without_the_fixture(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_flat, "BULK_MIN_ACTIONS", 20_000)
    small, large = bk.schedule("1f1b", 4, 8), bk.schedule("1f1b", 16, 1024)
    assert codes_of(small).legal(small.placement) is None  # type: ignore[union-attr]
    assert codes_of(large).legal(large.placement) is True  # type: ignore[union-attr]
    large.validate()
    low = large.lower_comms()
    assert "orders" not in large.__dict__ and low.n_actions == large.n_actions + 2 * large.hops_per_step


def test_a_coded_row_is_equal_to_the_tuple_of_its_actions() -> None:
    """The timeline's labels of a coded schedule are its code rows: equal (and hashed) as the rows of actions."""
    s = bk.schedule("1f1b", 4, 6)
    r = bk.simulate(s)
    rows = eager(s).orders
    assert r.arrays(0)[2] == rows[0] and rows[0] == r.arrays(0)[2] and r.arrays(1)[2] != rows[0]
    assert hash(codes_of(s)[2]) == hash(rows[2]) and codes_of(s)[2] != list(rows[2])  # a tuple's equality
    low = bk.simulate(s.lower_comms())
    assert low.arrays(3)[2] == tuple(low.schedule.orders[3])
