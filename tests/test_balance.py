"""Tests for bubblekit.analysis.balance: exact contiguous partitioning of layers into stages."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bubblekit as bk
from bubblekit.analysis import balance


def brute_force(weights: list[int], k: int) -> tuple[int, list[tuple[int, ...]]]:
    """Optimal bottleneck and every optimal boundary tuple, by trying every split."""
    n = len(weights)
    best: int | None = None
    argbest: list[tuple[int, ...]] = []
    for cuts in itertools.combinations(range(1, n), k - 1):
        b = (0, *cuts, n)
        worst = max(sum(weights[b[j]:b[j + 1]]) for j in range(k))
        if best is None or worst < best:
            best, argbest = worst, [b]
        elif worst == best:
            argbest.append(b)
    assert best is not None
    return best, argbest


small_inputs = st.lists(st.integers(min_value=0, max_value=20), min_size=1, max_size=8).flatmap(
    lambda ws: st.tuples(st.just(ws), st.integers(min_value=1, max_value=len(ws)))
)


@settings(max_examples=200, deadline=None)
@given(small_inputs)
def test_optimal_against_brute_force(case: tuple[list[int], int]) -> None:
    weights, k = case
    best, optimal = brute_force(weights, k)
    for method in ("dp", "search"):
        part = balance.partition(weights, k, method=method)
        assert part.bottleneck == best
        assert part.boundaries in optimal
        assert balance.bottleneck(weights, k, method=method) == best
    # the tie-break picks the most even optimal split: minimal sum of squares
    squares = min(sum(sum(weights[b[j]:b[j + 1]]) ** 2 for j in range(k)) for b in optimal)
    part = balance.partition(weights, k)
    assert sum(c * c for c in part.stage_costs) == squares


@settings(max_examples=100, deadline=None)
@given(small_inputs)
def test_partition_is_well_formed_and_methods_agree(case: tuple[list[int], int]) -> None:
    weights, k = case
    a = balance.partition(weights, k, method="dp")
    b = balance.partition(weights, k, method="search")
    assert a.boundaries == b.boundaries
    assert a.boundaries[0] == 0 and a.boundaries[-1] == len(weights)
    assert all(s >= 1 for s in a.sizes)
    assert sum(a.stage_costs) == sum(weights)
    assert a.p == k
    # never worse than the count-based split
    assert a.bottleneck <= balance.even_partition(weights, k).bottleneck


def test_floats_and_fractions() -> None:
    ws = [0.1, 0.2, 0.3, 0.4, 0.5]
    p = balance.partition(ws, 2)
    assert p.boundaries == balance.partition(ws, 2, method="search").boundaries
    assert p.boundaries == (0, 3, 5)
    fr = [Fraction(1, 3), Fraction(1, 2), Fraction(1, 6), Fraction(1, 1)]
    q = balance.partition(fr, 2)
    assert q.bottleneck == Fraction(1) and isinstance(q.bottleneck, Fraction)


def test_large_input_uses_search_and_matches_dp() -> None:
    ws = [(k * 37) % 11 + 1 for k in range(120)]
    auto = balance.partition(ws, 16)
    assert auto.method in ("dp", "search")
    assert auto.boundaries == balance.partition(ws, 16, method="dp").boundaries
    big = [(k * 37) % 11 + 1 for k in range(600)]
    assert balance.partition(big, 8).method == "search"


def test_even_partition_counts() -> None:
    part = balance.even_partition(list(range(10)), 4)
    assert part.sizes == (3, 3, 2, 2)
    assert part.method == "even"


@pytest.mark.parametrize(
    ("layers", "p", "exc", "words"),
    [
        ([1, 2, 3], 4, ValueError, "p must be <= 3"),
        ([1, 2, 3], 0, ValueError, "p must be >= 1"),
        ([1, 2, 3], 2.0, TypeError, "p must be a whole number"),
        ([], 1, ValueError, "layers is empty"),
        ([1, -2], 1, ValueError, "layers[1]"),
        ([1, "x"], 1, TypeError, "layers[1]"),
        ("123", 1, TypeError, "layers must be a sequence"),
        ([1, float("nan")], 1, ValueError, "finite"),
    ],
)
def test_bad_input(layers: object, p: object, exc: type[Exception], words: str) -> None:
    with pytest.raises(exc) as info:
        balance.partition(layers, p)  # type: ignore[arg-type]
    assert words in str(info.value)


def test_bad_method() -> None:
    with pytest.raises(ValueError, match="method must be"):
        balance.partition([1, 2], 1, method="greedy")


def test_layer_validation() -> None:
    with pytest.raises(ValueError, match="both i and w"):
        balance.Layer("x", f=1, b=2, i=1)
    with pytest.raises(ValueError, match="f must be >= 0"):
        balance.Layer("x", f=-1, b=2)


def test_measured_layers_and_costs_simulate() -> None:
    layers = balance.measured_layers(10, hidden=8192, seq=4096)
    assert len(layers) == 20 and layers[0].name == "L0.attn" and layers[1].name == "L0.mlp"
    whole = balance.measured_layers(10, hidden=8192, seq=4096, pieces=False)
    even = balance.even_partition(whole, 4)
    best = balance.partition(layers, 4)
    assert best.bottleneck < even.bottleneck
    # the stage totals add up to the pieces' total
    assert sum(best.stage_costs) == pytest.approx(sum(x.weight for x in layers))
    costs = best.to_costs(comm=0.1)
    assert isinstance(costs, bk.Costs)
    assert len(costs.f) == 4 and costs.unit == "ms"  # type: ignore[arg-type]
    assert sum(costs.activation) == pytest.approx(4)  # type: ignore[arg-type]
    for j, g in enumerate(best.stages):
        assert costs.f[j] == pytest.approx(sum(layers[k].f for k in g))  # type: ignore[index]
        assert costs.i[j] + costs.w[j] == pytest.approx(sum(layers[k].b for k in g))  # type: ignore[index]
    r_even = bk.simulate(bk.schedule("1f1b", 4, 8), even.to_costs())
    r_best = bk.simulate(bk.schedule("1f1b", 4, 8), costs.with_(comm=0))
    assert r_best.makespan < r_even.makespan


def test_to_costs_needs_layers() -> None:
    with pytest.raises(ValueError, match="needs Layer objects"):
        balance.partition([1, 2, 3], 2).to_costs()


def test_measured_layers_bad_config() -> None:
    with pytest.raises(ValueError, match="available"):
        balance.measured_layers(4, hidden=1234)
    with pytest.raises(TypeError, match="n_layers"):
        balance.measured_layers(2.5)  # type: ignore[arg-type]


def test_interleaved_partition_feeds_p_times_v_stages() -> None:
    layers = balance.measured_layers(8, hidden=4096, seq=4096)
    part = balance.partition(layers, 8)  # p=4, v=2
    r = bk.simulate(bk.schedule("interleaved", 4, 8, v=2), part.to_costs())
    assert r.makespan > 0
    with pytest.raises(ValueError, match="per-stage values"):
        bk.simulate(bk.schedule("1f1b", 4, 8), part.to_costs())


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(st.integers(0, 9), st.fractions(0, 5, max_denominator=4),
                       st.floats(0, 3, allow_nan=False)), min_size=1, max_size=14),
    st.integers(1, 14),
)
def test_probe_search_equals_the_dp(layers: list, k: int) -> None:
    """Nicol's probe search (no list of candidate sums) finds the DP's bottleneck and boundaries."""
    k = min(k, len(layers))
    dp, probe = balance.partition(layers, k, method="dp"), balance.partition(layers, k, method="search")
    assert probe.bottleneck == dp.bottleneck
    assert probe.boundaries == dp.boundaries
