"""Hostile input, search and balance (issue 20): the search's time limit holds before it starts;
partitions refuse overflowing costs and accept numpy arrays."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from bubblekit.analysis import balance
from bubblekit.analysis import search as S


def says(err: pytest.ExceptionInfo[BaseException], *words: str) -> None:
    msg = str(err.value)
    for w in words:
        assert re.search(rf"(?<![\w]){re.escape(w)}", msg), f"{w!r} not in {msg!r}"


def test_a_search_longer_than_the_limit_is_refused_before_it_starts() -> None:
    assert 3 * 40 * 100 <= S.MAX_SEARCH_ACTIONS  # under the action limit, but ~125 rules of 12,000 actions
    with pytest.raises(ValueError) as err:
        S.search_schedule(40, 100, mem_cap=80)
    says(err, "p=40", "m=100", "MAX_SEARCH_SECONDS", "max_actions=None")
    with pytest.raises(ValueError) as err:
        S.greedy_schedule(100, 60)
    says(err, "greedy_schedule", "MAX_SEARCH_SECONDS")


def test_every_case_the_limit_accepts_is_estimated_within_it() -> None:
    for p in (2, 4, 8, 16, 32, 64):
        m = S.MAX_SEARCH_ACTIONS // (3 * p)
        for cap in (p, p + 4):
            rules = len(S.POLICIES) + 3 * max(0, min(cap, 2 * p - 1) - p)
            try:
                S._check_time("search_schedule", p, m, rules, S.MAX_SEARCH_ACTIONS)
            except ValueError:
                continue
            assert S._search_seconds(p, m, rules) <= S.MAX_SEARCH_SECONDS


@pytest.mark.parametrize("cap,kind", [(0, ValueError), (-1, ValueError), (math.nan, ValueError), (math.inf, ValueError),
                                      ("4", TypeError)])
def test_mem_cap_is_a_positive_finite_number(cap: object, kind: type) -> None:
    with pytest.raises(kind) as err:
        S.search_schedule(4, 8, mem_cap=cap)  # type: ignore[arg-type]
    says(err, "mem_cap")


def test_numpy_caps_mean_what_they_say() -> None:
    a = S.search_schedule(4, 8, mem_cap=np.int64(4))
    assert a.orders == S.search_schedule(4, 8, mem_cap=4).orders
    b = S.search_schedule(3, 6, mem_cap=np.array([3, 2, 1]), method="greedy")
    assert b.orders == S.search_schedule(3, 6, mem_cap=[3, 2, 1], method="greedy").orders


def test_partition_refuses_costs_that_overflow() -> None:
    with pytest.raises(ValueError) as err:
        balance.partition([1e308] * 3, 2)
    says(err, "layers[0]", "at most")
    with pytest.raises(ValueError) as err:
        balance.Layer("x", 1e300, 1)
    says(err, "f", "at most")


def test_partition_takes_numpy_arrays_and_ints() -> None:
    assert balance.partition(np.array([1.0, 2.0, 3.0, 4.0]), 2).boundaries == balance.partition([1, 2, 3, 4], 2).boundaries
    assert balance.partition([1, 2, 3, 4], np.int64(2)).p == 2
    with pytest.raises(TypeError) as err:
        balance.partition([1, 2, 3], np.bool_(True))  # type: ignore[arg-type]
    says(err, "p", "whole number")


def test_mixed_fractions_and_floats_give_one_answer() -> None:
    from fractions import Fraction

    layers = [4, 9, Fraction(10, 3), 0.0, 7, 9]
    dp, probe = balance.partition(layers, 2, method="dp"), balance.partition(layers, 2, method="search")
    assert dp.bottleneck == probe.bottleneck and dp.boundaries == probe.boundaries
