"""V-Half and V-Min (Qi et al., "Pipeline Parallelism with Controllable Memory", NeurIPS 2024).

* Orders: equal, action for action, to the orders recorded from the authors' generator
  (sail-sg ``zbv_greedy.py``, ``tests/data/vshape_orders.json``, provenance in
  ``tests/data/README.md``).
* Memory: the largest per-rank peak is exactly ``(p + 2) // 2`` (V-Half) and ``(p + 4) // 3``
  (V-Min) microbatch activations, against 1F1B's ``p``: "1/2" and "1/3" of 1F1B are limits for
  large p (at p = 4 they are 3/4 and 1/2).
* Bubble (the authors' measure, each rank's own span, F = I = W, no latency): about half of
  1F1B's for V-Half and about two thirds for V-Min (the README's B/2 and 2B/3 + O(n)).
* V-ZB, the family's zero-bubble member with 1F1B's memory (``bk.schedules.v_zb``, equal to the
  authors' ``zbv.py``), is ZB-V (``zbv``, PyTorch's ``ScheduleZBVZeroBubble``) except where the
  cool-down places its W passes: it is not registered separately.
"""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

import bubblekit as bk
from bubblekit.course import published

DATA = json.loads((Path(__file__).parent / "data" / "vshape_orders.json").read_text(encoding="utf-8"))
UNIFORM = bk.Costs(f=1, i=1, w=1)


@pytest.mark.parametrize("key", sorted(k for k in DATA["cases"] if not k.startswith("v-zb")))
def test_orders_equal_the_authors_generator(key: str) -> None:
    case = DATA["cases"][key]
    s = bk.schedule(case["schedule"], case["p"], case["m"])
    assert [" ".join(map(str, o)) for o in s.orders] == case["orders"]
    assert s.placement == bk.schedules.v_placement(case["p"]) and s.split_backward


@pytest.mark.parametrize("name,formula", [("v-half", lambda p: (p + 2) // 2), ("v-min", lambda p: (p + 4) // 3)])
def test_peak_memory_is_exact(name: str, formula: object) -> None:
    for p in range(1, 13):
        for m in (p, 2 * p, 3 * p + 1):
            r = bk.simulate(bk.schedule(name, p, m), UNIFORM)
            assert r.max_peak_activations == min(formula(p), m), (name, p, m)  # type: ignore[operator]


def test_memory_fractions_of_1f1b_are_limits() -> None:
    """V-Half / 1F1B = ((p+2)//2)/p and V-Min / 1F1B = ((p+4)//3)/p: 3/4 and 1/2 at p = 4, tending to
    1/2 and 1/3 (within 1/p and 4/(3p))."""
    ratios = {}
    for p in (4, 8, 16):
        one = bk.simulate(bk.schedule("1f1b", p, 2 * p), UNIFORM).max_peak_activations
        half = bk.simulate(bk.schedule("v-half", p, 2 * p), UNIFORM).max_peak_activations
        third = bk.simulate(bk.schedule("v-min", p, 2 * p), UNIFORM).max_peak_activations
        ratios[p] = (half / one, third / one)
        assert 0.5 <= half / one <= 0.5 + 1 / p and 1 / 3 <= third / one <= 1 / 3 + 4 / (3 * p)
    assert ratios[4] == (0.75, 0.5) and ratios[16] == (9 / 16, 6 / 16)
    for p in (100, 1000, 10**6):  # the registered formulas in the limit (exact fractions)
        assert abs(Fraction(bk.spec("v-half").peak(p, 10 * p, 2), p) - Fraction(1, 2)) <= Fraction(1, p)  # type: ignore[misc]
        assert abs(Fraction(bk.spec("v-min").peak(p, 10 * p, 2), p) - Fraction(1, 3)) <= Fraction(4, 3 * p)  # type: ignore[misc]


def test_bubble_about_half_and_two_thirds_of_1f1b() -> None:
    """F = I = W, no latency, the authors' measure (published.stage_span_bubble_rate): V-Half within
    [B/4, B/2 + 0.011] and V-Min within [B/2, 2B/3 + 0.017] of 1F1B's B = (p-1)/(m+p-1); ZB-V 0."""
    for p in (4, 6, 8, 12):
        for m in (2 * p, 3 * p, 4 * p):
            b = (p - 1) / (m + p - 1)
            rate = {n: published.stage_span_bubble_rate(bk.simulate(bk.schedule(n, p, m), UNIFORM))
                    for n in ("1f1b", "v-half", "v-min", "zbv")}
            assert rate["1f1b"] == pytest.approx(b)
            assert b / 4 <= rate["v-half"] <= b / 2 + 0.011, (p, m)
            assert b / 2 <= rate["v-min"] <= 2 * b / 3 + 0.017, (p, m)
            assert rate["zbv"] == 0 < rate["v-half"] < rate["v-min"] < rate["1f1b"]


def test_v_min_suffers_from_unbalanced_passes() -> None:
    """README: "V-Min (and only V-Min) suffers a performance degradation when F/B/W are not balanced":
    the orders are built for F = I = W; at the measured H200 ratios V-Min's bubble grows far more."""
    p, m = 8, 32
    grow = {}
    for name in ("v-half", "v-min"):
        even = published.stage_span_bubble_rate(bk.simulate(bk.schedule(name, p, m), UNIFORM))
        h200 = published.stage_span_bubble_rate(bk.simulate(bk.schedule(name, p, m), bk.h200_costs()))
        grow[name] = h200 - even
    assert grow["v-min"] > 2 * grow["v-half"]


def test_every_small_configuration_is_legal() -> None:
    for name in ("v-half", "v-min"):
        for p in range(1, 7):
            for m in range(1, 3 * p + 3):
                s = bk.schedule(name, p, m)
                s.validate()
                bk.simulate(s, bk.Costs(f=1, i=2, w=1, comm=1))


@pytest.mark.parametrize("key", sorted(k for k in DATA["cases"] if k.startswith("v-zb")))
def test_v_zb_orders_equal_the_authors_generator(key: str) -> None:
    case = DATA["cases"][key]
    s = bk.schedules.v_zb(case["p"], case["m"])
    assert [" ".join(map(str, o)) for o in s.orders] == case["orders"]


def test_v_zb_memory_in_the_authors_model() -> None:
    """V-ZB caps memory as its authors count it (I frees all but W's 32/194 of a chunk): min(p, m) for
    every m; with W freeing everything (bubblekit's default) it is p only for m <= p or m >= 2p - 1."""
    for p in range(1, 9):
        for m in range(1, 3 * p + 2):
            s = bk.schedules.v_zb(p, m)
            authors = bk.simulate(s, bk.Costs(f=1, i=1, w=1, w_held=Fraction(32, 194))).max_peak_activations
            assert authors <= min(p, m) + 1e-9
            plain = bk.simulate(s, UNIFORM)
            if m <= p or m >= 2 * p - 1:
                assert plain.max_peak_activations == min(p, m)
            if m >= 2 * p - 1:
                assert published.stage_span_bubble_rate(plain) == 0
    assert bk.simulate(bk.schedules.v_zb(6, 7), UNIFORM).max_peak_activations == 6.5


@pytest.mark.parametrize("key", sorted(k for k in DATA["cases"] if k.startswith("v-zb")))
def test_v_zb_is_zbv_but_for_the_cool_down_w_passes(key: str) -> None:
    """The authors' V-ZB (zbv.py, at equal costs) runs ZB-V's order up to each rank's last forward;
    after it the same passes in another order (W placement), with the same peak and zero bubble."""
    case = DATA["cases"][key]
    p, m = case["p"], case["m"]
    ours = bk.schedule("zbv", p, m)
    theirs = bk.Schedule.from_text("\n".join(case["orders"]), m=m)
    differ = 0
    for mine, other in zip(ours.orders, theirs.orders):
        last_f = max(i for i, a in enumerate(mine) if a.kind == "F")
        assert mine[:last_f + 1] == other[:last_f + 1]
        assert Counter(mine[last_f + 1:]) == Counter(other[last_f + 1:])
        differ += mine != other
    assert differ > 0
    a, b = bk.simulate(ours, UNIFORM), bk.simulate(theirs, UNIFORM)
    assert a.max_peak_activations == b.max_peak_activations == p
    assert published.stage_span_bubble_rate(a) == published.stage_span_bubble_rate(b) == 0
