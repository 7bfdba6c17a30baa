"""Hostile arguments to ``calibrate.replay`` and ``calibrate.jitter_simulation`` (issue 20).

Only the argument checks: a string or a schedule where the measured timeline belongs, NaN
overheads, numpy integers for ``draws`` and ``seed`` (accepted, same result), and a size guard
that names its limit before anything is simulated (``draws=10**6`` used to run for minutes).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import bubblekit as bk
from bubblekit.analysis import calibrate
from bubblekit.analysis.traces import read_trace, sample_names, sample_trace


@pytest.fixture(scope="module")
def measured() -> bk.Timeline:
    return read_trace(sample_trace(sample_names()[0]))


@pytest.mark.parametrize("bad", ["x", None, 5, [], bk.schedule("1f1b", 2, 4)])
def test_replay_and_jitter_need_a_timeline(bad: Any) -> None:
    for fn in (calibrate.replay, calibrate.jitter_simulation):
        with pytest.raises(TypeError, match=r"timeline must be a bubblekit Timeline .*read_trace.*got .* of type"):
            fn(bad)


def test_the_schedule_must_be_a_schedule(measured: bk.Timeline) -> None:
    for fn in (calibrate.replay, calibrate.jitter_simulation):
        with pytest.raises(TypeError, match=r"schedule must be a bubblekit Schedule .* or None, got 'x' of type str"):
            fn(measured, "x")


@pytest.mark.parametrize("name,value,error", [
    ("overhead", float("nan"), ValueError), ("latency", "x", TypeError), ("pickup", float("inf"), ValueError),
    ("overhead", None, TypeError),
])
def test_replay_names_a_bad_number(measured: bk.Timeline, name: str, value: Any, error: type) -> None:
    with pytest.raises(error, match=rf"^{name} must be a (finite )?number"):
        calibrate.replay(measured, **{name: value})


def test_replay_accepts_numpy_numbers(measured: bk.Timeline) -> None:
    a = calibrate.replay(measured, overhead=np.float64(0.01), latency=np.float32(0.5))
    b = calibrate.replay(measured, overhead=0.01, latency=float(np.float32(0.5)))
    assert a.bubble_ratio == b.bubble_ratio


def test_jitter_accepts_numpy_ints(measured: bk.Timeline) -> None:
    a = calibrate.jitter_simulation(measured, draws=np.int64(3), seed=np.int32(7))
    b = calibrate.jitter_simulation(measured, draws=3, seed=7)
    assert a.bubble_ratios == b.bubble_ratios and len(a.bubble_ratios) == 3


@pytest.mark.parametrize("draws", [10**6, 10**9, calibrate.MAX_DRAWS + 1])
def test_jitter_refuses_too_many_draws_naming_the_limit(measured: bk.Timeline, draws: int) -> None:
    n = measured.n_spans
    with pytest.raises(ValueError, match=r"draws"):
        calibrate.jitter_simulation(measured, draws=draws)
    if draws * n > calibrate.MAX_JITTER_ACTIONS and draws <= calibrate.MAX_DRAWS:
        with pytest.raises(ValueError, match=rf"{calibrate.MAX_JITTER_ACTIONS:,}.*use draws <= "
                                             rf"{calibrate.MAX_JITTER_ACTIONS // n}"):
            calibrate.jitter_simulation(measured, draws=draws)


def test_the_work_limit_names_the_draws_that_fit(measured: bk.Timeline) -> None:
    n = measured.n_spans
    fits = calibrate.MAX_JITTER_ACTIONS // n
    with pytest.raises(ValueError, match=rf"draws={fits + 1} x {n} actions = .* more than the limit of "
                                         rf"{calibrate.MAX_JITTER_ACTIONS:,} .*use draws <= {fits}"):
        calibrate.jitter_simulation(measured, draws=fits + 1)


@pytest.mark.parametrize("draws,error", [(0, ValueError), (-1, ValueError), (2.5, ValueError), ("3", ValueError),
                                         (True, ValueError), (None, ValueError)])
def test_jitter_draws_must_be_a_whole_number(measured: bk.Timeline, draws: Any, error: type) -> None:
    with pytest.raises(error, match=r"draws must be"):
        calibrate.jitter_simulation(measured, draws=draws)


@pytest.mark.parametrize("seed,error", [(-1, ValueError), ("x", TypeError), (1.5, TypeError), (None, TypeError)])
def test_jitter_seed_must_be_a_whole_number(measured: bk.Timeline, seed: Any, error: type) -> None:
    with pytest.raises(error, match=r"seed must be"):
        calibrate.jitter_simulation(measured, draws=2, seed=seed)
