"""Hostile input, the Timeline family (issue 20): a timeline refuses wrong values when it is built.

Each case asserts the error type and that its message names the argument and what is allowed, or
the right value. The law: a timeline's bubble is always in [0, 1] (hypothesis).
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bubblekit as bk
from bubblekit import Timeline


def says(err: pytest.ExceptionInfo[BaseException], *words: str) -> None:
    """The message names each of ``words`` (the argument, what is allowed)."""
    msg = str(err.value)
    for w in words:
        assert re.search(rf"(?<![\w]){re.escape(w)}", msg), f"{w!r} not in {msg!r}"


def tl(starts: list, ends: list, **kw: object) -> Timeline:
    labels = [[f"a{k}" for k in range(len(s))] for s in starts]
    return Timeline(starts, ends, labels, **kw)  # type: ignore[arg-type]


# ------------------------------------------------------------------ refused when built
def test_an_end_before_its_start_is_refused() -> None:
    with pytest.raises(ValueError) as err:
        tl([[0, 5]], [[1, 4]])
    says(err, "rank 0", "interval 1", "end must be >= its start")


def test_overlapping_spans_on_one_rank_are_refused_unless_may_overlap() -> None:
    with pytest.raises(ValueError) as err:
        tl([[0], [0, 2]], [[1], [3, 4]])
    says(err, "rank 1", "overlap", "may_overlap=True")
    assert tl([[0, 2]], [[3, 4]], may_overlap=True).busy == (4,)  # a trace's union


def test_starts_and_ends_of_different_lengths_are_refused() -> None:
    with pytest.raises(ValueError) as err:
        Timeline([[0, 1]], [[1]], [["a", "b"]])
    says(err, "rank 0", "2 starts", "1 ends")
    with pytest.raises(ValueError) as err:
        Timeline([[0]], [[1], [2]], [["a"]])
    says(err, "one list per rank")


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_and_infinite_times_are_refused(bad: float) -> None:
    with pytest.raises(ValueError) as err:
        tl([[0, bad]], [[1, 2]])
    says(err, "starts[0][1]", "finite")


@pytest.mark.parametrize("bad", ["0", None, True, [1], 1 + 2j])
def test_times_must_be_numbers(bad: object) -> None:
    with pytest.raises(TypeError) as err:
        tl([[0]], [[bad]])
    says(err, "ends[0][0]", "number")


def test_the_window_must_not_end_before_it_starts() -> None:
    with pytest.raises(ValueError) as err:
        tl([[0]], [[1]], t0=1, t1=0.5, may_overlap=True)
    says(err, "t0", "t1", "t0 must be <= t1")
    with pytest.raises(TypeError) as err:
        tl([[0]], [[1]], t1="3")
    says(err, "t1", "number")


def test_a_window_that_cuts_a_span_off_needs_may_overlap() -> None:
    with pytest.raises(ValueError) as err:
        tl([[0]], [[4]], t1=2)
    says(err, "t1", "must contain every interval", "may_overlap=True")
    clipped = tl([[0]], [[4]], t1=2, may_overlap=True)
    assert clipped.bubble_ratio == 0.0 and clipped.makespan == 2


@pytest.mark.parametrize("bad", [0, -2, 1.5, "1"])
def test_ticks_per_unit_is_a_whole_number_from_1(bad: object) -> None:
    with pytest.raises((TypeError, ValueError)) as err:
        tl([[0]], [[1]], ticks_per_unit=bad)
    says(err, "ticks_per_unit", ">= 1")


@pytest.mark.parametrize("bad", [None, 3, ""])
def test_the_unit_is_a_non_empty_string(bad: object) -> None:
    with pytest.raises((TypeError, ValueError)) as err:
        tl([[0]], [[1]], unit=bad)
    says(err, "unit", "string")


def test_labels_are_actions_or_text() -> None:
    with pytest.raises(TypeError) as err:
        Timeline([[0]], [[1]], [[3.5]])
    says(err, "labels[0][0]", "Action or a string")


def test_containers_are_lists_tuples_or_numpy_arrays() -> None:
    with pytest.raises(TypeError) as err:
        Timeline(5, 6, 7)  # type: ignore[arg-type]
    says(err, "starts", "list or tuple")
    with pytest.raises(TypeError):
        Timeline("ab", "cd", "ef")  # type: ignore[arg-type]
    t = Timeline([np.array([0, 2])], [np.array([1, 3])], [["x", "y"]])
    assert t.makespan == 3 and type(t.makespan) is int and t.busy == (2,)  # numpy ints become exact ints


# ------------------------------------------------------------------ defined values
def test_a_zero_length_step_has_no_bubble_and_says_so() -> None:
    t = tl([[0, 0]], [[0, 0]])
    for what in ("bubble_ratio", "bubble_ratio_exact", "bubble_overhead", "utilization"):
        with pytest.raises(ValueError) as err:
            getattr(t, what)
        says(err, "zero")
    assert "zero length" in repr(t)


def test_bubble_so_far_past_the_end_is_the_step_bubble() -> None:
    t = tl([[0], [0]], [[4], [2]])
    assert t.bubble_so_far(10) == t.bubble_ratio == 0.25
    assert t.bubble_so_far(4) == 0.25 and t.bubble_so_far(-1) == 0.0
    with pytest.raises(ValueError) as err:
        t.bubble_so_far(math.nan)
    says(err, "t", "finite")


@pytest.mark.parametrize("bad", [-1, 0, 0.0, math.nan, "x", [1]])
def test_chrome_trace_needs_a_positive_scale(bad: object) -> None:
    t = tl([[0]], [[1]])
    with pytest.raises((TypeError, ValueError)) as err:
        t.to_chrome_trace(us_per_unit=bad)  # type: ignore[arg-type]
    says(err, "us_per_unit")


def test_chrome_trace_durations_follow_the_scale(tmp_path) -> None:  # type: ignore[no-untyped-def]
    t = tl([[0, 2]], [[1, 3]])
    doc = t.to_chrome_trace(tmp_path / "t.json", us_per_unit=np.float64(2.0))
    assert [e["dur"] for e in doc["traceEvents"] if e["ph"] == "X"] == [2.0, 2.0]
    assert json.loads((tmp_path / "t.json").read_text()) == doc
    with pytest.raises(TypeError) as err:
        t.to_chrome_trace(5)  # type: ignore[arg-type]
    says(err, "path")


def test_unsorted_spans_that_do_not_overlap_are_measured_right() -> None:
    t = tl([[2, 0]], [[3, 1]])
    assert (t.t0, t.t1, t.busy, t.bubble_ratio) == (0, 3, (2,), pytest.approx(1 / 3))


# ------------------------------------------------------------------ the law
@st.composite
def timelines(draw: st.DrawFn) -> Timeline:
    """A random valid timeline: per rank, gaps and durations (ints, floats or zero)."""
    p = draw(st.integers(1, 4))
    overlap = draw(st.booleans())
    number = st.one_of(st.integers(0, 5), st.floats(0, 5, allow_nan=False))
    starts, ends = [], []
    for _ in range(p):
        t: float = draw(st.integers(0, 3))
        s, e = [], []
        for _ in range(draw(st.integers(0, 5))):
            gap, dur = draw(number), draw(number)
            start = t + gap - (draw(st.floats(0, 2)) if overlap else 0)
            s.append(start)
            e.append(start + dur)
            t = max(t, start + dur)
        starts.append(s)
        ends.append(e)
    if not any(starts):
        starts[0], ends[0] = [0], [1]
    return tl(starts, ends, may_overlap=overlap)


@settings(max_examples=300, deadline=None)
@given(timelines())
def test_a_timeline_bubble_is_always_between_0_and_1(t: Timeline) -> None:
    if t.makespan == 0:
        with pytest.raises(ValueError):
            _ = t.bubble_ratio
        return
    assert 0.0 <= t.bubble_ratio <= 1.0
    assert 0 <= t.bubble_ratio_exact <= 1
    for r in range(t.p):
        assert 0 <= t.idle[r] <= t.makespan * (1 + 1e-12) + 1e-12
    assert 0.0 <= t.bubble_so_far(float(t.t1) + 5) <= 1.0


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(bk.names()), st.integers(1, 6), st.integers(1, 12))
def test_a_simulated_bubble_is_between_0_and_1(name: str, p: int, m: int) -> None:
    entry = bk.spec(name)
    if not entry.allows(p, m):
        return
    r = bk.simulate(bk.schedule(name, p, m), bk.Costs(f=1, b=2, comm=1))
    assert 0.0 <= r.bubble_ratio <= 1.0
    assert 0.0 <= r.bubble_so_far(float(r.t1) * 2) <= 1.0
