"""Where idle time sits (Timeline.idle_parts / idle_table), the side-by-side table of timelines
(bubblekit.timeline.compare_timelines) and the forward-only factory of lessons 01 and 02 (bubblekit.course.factory)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import bubblekit as bk
from bubblekit.course.factory import dilution_table, factory_line, forward_only
from bubblekit.timeline import compare_timelines

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
times = st.one_of(st.integers(1, 4), st.fractions(Fraction(1, 4), Fraction(3), max_denominator=4))


@st.composite
def results(draw: st.DrawFn) -> bk.SimResult:
    name = draw(st.sampled_from(bk.names()))
    p, m, v = draw(st.integers(1, 5)), draw(st.integers(1, 8)), draw(st.integers(2, 3))
    try:
        sched = bk.schedule(name, p, m, v if bk.REGISTRY[name].chunks == "many" else None)
    except ValueError:
        assume(False)
        raise
    costs = bk.Costs(f=draw(times), i=draw(times), w=draw(times), comm=draw(st.sampled_from([0, Fraction(1, 2)])))
    return bk.simulate(sched, costs)


@SETTINGS
@given(results())
def test_fill_middle_and_drain_add_up_to_the_idle_time(r: bk.SimResult) -> None:
    for rank in range(r.p):
        fill, middle, drain = r.idle_parts(rank)
        spans = list(r.spans(rank))
        assert fill == spans[0].start - r.t0 and drain == r.t1 - spans[-1].end
        assert fill + middle + drain == r.idle[rank]
        assert middle == sum(g.duration for g in r.idle_intervals(rank) if g.before is not None and g.start > r.t0)
    table = r.idle_table()
    assert table.column("idle") == list(r.idle) and table.column("rank") == list(range(r.p))


def test_gpipe_fill_and_drain_grow_down_the_rows_and_the_middle_shrinks() -> None:
    r = bk.simulate(bk.schedule("gpipe", 4, 4), bk.preset("b=2f"))
    t = r.idle_table()
    assert t.column("fill") == [0, 1, 2, 3]        # r forwards of 1 slot
    assert t.column("drain") == [0, 2, 4, 6]       # r backwards of 2 slots: rank 0 has no drain
    assert t.column("middle") == [9, 6, 3, 0]      # (p - 1 - r)(F + B)
    assert "fill (slots)" in str(t) and "<table" in t._repr_html_()


def test_idle_parts_of_a_measured_timeline_and_a_bad_rank() -> None:
    tl = bk.Timeline([[2, 5], [0]], [[4, 6], [3]], [["a", "b"], ["c"]], unit="ms", t0=0, t1=8)
    assert tl.idle_parts(0) == (2, 1, 2) and tl.idle_parts(1) == (0, 0, 5)
    empty = bk.Timeline([[0], []], [[4], []], [["a"], []], unit="ms")
    assert empty.idle_parts(1) == (4, 0, 0)
    with pytest.raises(ValueError, match="rank"):
        tl.idle_parts(2)
    with pytest.raises(TypeError, match="rank"):
        tl.idle_parts(0.5)  # type: ignore[arg-type]


def test_compare_timelines_names_rows_and_counts_gaps() -> None:
    costs = bk.preset("b=2f")
    gpipe, one = (bk.simulate(bk.schedule(n, 4, 6), costs) for n in ("gpipe", "1f1b"))
    t = compare_timelines({"GPipe": gpipe, "1F1B": one})
    assert t.column("name") == ["GPipe", "1F1B"]
    assert t.row(name="1F1B")["gaps"] == tuple(len(one.idle_intervals(r)) for r in range(4))
    assert t.row(name="GPipe")["bubble_ratio"] == gpipe.bubble_ratio and "makespan (slots)" in str(t)
    with pytest.raises(TypeError, match="named"):
        compare_timelines([gpipe])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Timeline"):
        compare_timelines({"x": 3})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="unit"):
        compare_timelines({"a": gpipe, "b": factory_line(3, 2)})


def test_factory_line_and_forward_only_idle_stations_minus_one_each() -> None:
    f = factory_line(3, 5)
    assert f.makespan == 7 and f.idle == (2, 2, 2) and f.unit == "min"
    assert f.idle_table().column("fill") == [0, 1, 2] and f.idle_table().column("drain") == [2, 1, 0]
    g = forward_only(4, 6, f=Fraction(1, 2))
    assert g.makespan == Fraction(9, 2) and g.idle == (Fraction(3, 2),) * 4
    with pytest.raises(TypeError, match="cars"):
        factory_line(3, 2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="minutes"):
        factory_line(3, 2, minutes=0)


def test_dilution_table_keeps_the_idle_and_shrinks_its_share() -> None:
    t = dilution_table(4, [1, 2, 8, 32])
    assert all(idle == (3, 3, 3, 3) for idle in t.column("idle"))
    shares = t.column("bubble_ratio")
    assert shares == [bk.bubble_ratio(4, m) for m in (1, 2, 8, 32)] and shares == sorted(shares, reverse=True)
    factory = dilution_table(3, [5], factory=True)
    assert "cars" in str(factory) and "idle per station (min)" in str(factory)
    for bad in ([], "12", 5):
        with pytest.raises(TypeError, match="ms"):
            dilution_table(4, bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"ms\[1\]"):
        dilution_table(4, [1, 0])

