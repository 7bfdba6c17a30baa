"""Closed forms: the article's three functions, kept with their meaning, and the conventions."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bubblekit as bk


def article_bubble_ratio(p: int, m: int, v: int = 1) -> float:
    """The source article's code, verbatim in logic."""
    if v <= 1:
        return (p - 1) / (m + p - 1)
    return (p - 1) / (p + m * v - 1)


def article_min_micro_batch(p: int, target: float = 0.2) -> int | None:
    for m in range(1, 129):
        if article_bubble_ratio(p, m) <= target:
            return m
    return None


def test_bubble_ratio_matches_article_code() -> None:
    for p in range(1, 33):
        for m in range(1, 65):
            for v in (1, 2, 3, 4):
                assert bk.bubble_ratio(p, m, v) == pytest.approx(article_bubble_ratio(p, m, v), rel=1e-15)


def test_utilization_is_one_minus_bubble() -> None:
    assert bk.utilization(8, 8) == pytest.approx(8 / 15)
    for p in range(1, 17):
        for m in range(1, 33):
            assert bk.utilization(p, m) == pytest.approx(1 - article_bubble_ratio(p, m))


@pytest.mark.parametrize("target", [0.05, 0.1, 0.2, 0.25, 0.5, 0.9])
def test_min_micro_batch_matches_article_search(target: float) -> None:
    for p in range(1, 65):
        mine = bk.min_micro_batch(p, target)
        theirs = article_min_micro_batch(p, target)
        if theirs is not None:
            assert mine == theirs, (p, target)
        else:
            assert mine is not None and mine > 128  # the article's search gave up at 128


def test_article_demo_headline_numbers() -> None:
    # p = 8: utilisation at m = 8 and the minimum m for a 20% bubble.
    assert f"{bk.utilization(8, 8):.1%}" == "53.3%"
    assert bk.min_micro_batch(8, 0.2) == 28


@given(st.integers(1, 200), st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(999, 1000)), st.integers(1, 4))
def test_min_micro_batch_is_minimal(p: int, target: Fraction, v: int) -> None:
    m = bk.min_micro_batch(p, float(target), v=v)
    assert m is not None
    t = Fraction(str(float(target)))
    assert bk.bubble_ratio_exact(p, m, v) <= t
    if m > 1:
        assert bk.bubble_ratio_exact(p, m - 1, v) > t


def test_min_micro_batch_reads_decimal_targets_exactly() -> None:
    # p = 4, m = 7 gives exactly 3/10: it meets a 0.3 target.
    assert bk.bubble_ratio_exact(4, 7) == Fraction(3, 10)
    assert bk.min_micro_batch(4, 0.3) == 7


def test_min_micro_batch_limit() -> None:
    assert bk.min_micro_batch(1000, 0.001, max_m=1000) is None


def test_overhead_convention() -> None:
    # Megatron's (p - 1)/m is bubble time over ideal time, not a fraction of the step.
    assert bk.bubble_overhead(8, 4) == pytest.approx(7 / 4)
    b = bk.bubble_ratio(8, 4)
    assert bk.overhead_from_ratio(b) == pytest.approx(bk.bubble_overhead(8, 4))
    assert bk.ratio_from_overhead(bk.bubble_overhead(8, 4)) == pytest.approx(b)
    with pytest.raises(ValueError, match="ratio"):
        bk.overhead_from_ratio(1.0)
    with pytest.raises(ValueError, match="overhead"):
        bk.ratio_from_overhead(-1)


def test_single_stage_has_no_bubble() -> None:
    assert bk.bubble_ratio(1, 5) == 0.0
    assert bk.min_micro_batch(1, 0.01) == 1
