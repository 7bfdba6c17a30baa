"""Simulated bubbles equal the closed forms exactly (rational arithmetic, no tolerance)."""

from __future__ import annotations

from fractions import Fraction

import pytest

import bubblekit as bk


@pytest.mark.parametrize("name", ["gpipe", "1f1b"])
def test_single_chunk_bubble_equals_closed_form(name: str) -> None:
    costs = bk.Costs(f=1, b=2)
    for p in range(1, 17):
        for m in range(1, 65):
            r = bk.simulate(bk.schedule(name, p, m), costs)
            assert r.bubble_ratio_exact == Fraction(p - 1, m + p - 1), (name, p, m)
            assert r.bubble_ratio_exact == bk.bubble_ratio_exact(p, m)
            # Megatron's convention: bubble time over ideal time.
            assert r.bubble_overhead_exact == Fraction(p - 1, m), (name, p, m)
            assert r.makespan == 3 * (m + p - 1)


@pytest.mark.parametrize("f,b", [(1, 1), (1, 2), (2, 3), (Fraction(1, 3), Fraction(5, 7))])
def test_closed_form_independent_of_cost_ratio(f: object, b: object) -> None:
    for p in (1, 2, 5, 8):
        for m in (1, 3, 8, 17):
            for name in ("gpipe", "1f1b"):
                r = bk.simulate(bk.schedule(name, p, m), bk.Costs(f=f, b=b))  # type: ignore[arg-type]
                assert r.bubble_ratio_exact == Fraction(p - 1, m + p - 1)
                assert r.makespan == (m + p - 1) * (Fraction(f) + Fraction(b))  # type: ignore[arg-type]


def test_interleaved_bubble_equals_closed_form() -> None:
    costs = bk.Costs(f=1, b=2)
    for p in range(1, 17):
        for v in (2, 3, 4):
            for m in range(p, 65, p):
                r = bk.simulate(bk.schedule("interleaved", p, m, v), costs)
                assert r.bubble_ratio_exact == Fraction(p - 1, m * v + p - 1), (p, m, v)
                assert r.bubble_ratio_exact == bk.bubble_ratio_exact(p, m, v)


def test_interleaved_same_total_work_as_1f1b() -> None:
    # Scalar costs are one rank's share: each chunk action costs f / v.
    for p, m, v in [(4, 8, 2), (4, 8, 4), (8, 16, 3)]:
        inter = bk.simulate(bk.schedule("interleaved", p, m, v))
        plain = bk.simulate(bk.schedule("1f1b", p, m))
        assert sum(inter.busy) == sum(plain.busy)
        assert inter.makespan < plain.makespan


def test_communication_adds_two_hops_per_stage_boundary_to_gpipe() -> None:
    # With per-hop latency c, GPipe stretches by exactly 2 (p - 1) c: the fill and drain chains.
    c = Fraction(1, 4)
    for p, m in [(1, 3), (2, 4), (4, 8), (8, 8), (4, 1)]:
        r = bk.simulate(bk.schedule("gpipe", p, m), bk.Costs(f=1, b=2, comm=c))
        assert r.makespan == 3 * (m + p - 1) + 2 * (p - 1) * c, (p, m)


def test_communication_hurts_1f1b_more_than_gpipe() -> None:
    # 1F1B's steady state waits for each gradient round trip, so latency also lands there.
    c = Fraction(1, 4)
    for p, m in [(2, 4), (4, 8), (8, 16)]:
        costs = bk.Costs(f=1, b=2, comm=c)
        one = bk.simulate(bk.schedule("1f1b", p, m), costs)
        gp = bk.simulate(bk.schedule("gpipe", p, m), costs)
        assert one.makespan > gp.makespan
        # Never worse than paying the round trip on every microbatch of rank 0.
        assert one.makespan <= 3 * (m + p - 1) + 2 * (p - 1) * c * m


def test_unequal_stages_slowest_stage_sets_the_pace() -> None:
    # One stage twice as slow: steady state runs at the slow stage's pace.
    p, m = 4, 32
    f = [1, 1, 2, 1]
    r = bk.simulate(bk.schedule("1f1b", p, m), bk.Costs(f=f, b=[2 * x for x in f]))
    assert r.makespan >= m * 6  # the slow stage alone needs m * (2 + 4)
    assert r.bubble_ratio > bk.bubble_ratio(p, m)


def test_gpipe_memory_holds_all_microbatches() -> None:
    for p in (1, 2, 4, 8):
        for m in (1, 4, 9):
            r = bk.simulate(bk.schedule("gpipe", p, m))
            assert r.peak_activations == (m,) * p


def test_1f1b_memory_is_min_p_minus_r_m() -> None:
    for p in (1, 2, 4, 8):
        for m in (1, 3, 8, 20):
            r = bk.simulate(bk.schedule("1f1b", p, m))
            assert r.peak_activations == tuple(min(p - rank, m) for rank in range(p))


def test_interleaved_memory_matches_megatron_warmup() -> None:
    # Megatron-LM (Narayanan et al. 2021), interleaved schedule: rank r runs
    # (v - 1) p + 2 (p - 1 - r) warm-up chunk-forwards, then one more before its first
    # backward; each chunk holds 1/v of a rank's activations.
    for p, m, v in [(4, 8, 2), (4, 16, 2), (4, 8, 4), (8, 16, 2)]:
        r = bk.simulate(bk.schedule("interleaved", p, m, v))
        expected = tuple(
            min((v - 1) * p + 2 * (p - 1 - rank) + 1, m * v) / v for rank in range(p)
        )
        assert r.peak_activations == pytest.approx(expected)
        # More than 1F1B's p on rank 0, less than GPipe's m.
        assert r.peak_activations[0] > p


def test_looped_bfs_memory_holds_everything() -> None:
    r = bk.simulate(bk.schedule("looped-bfs", 4, 8, 2))
    assert r.peak_activations == (8.0,) * 4
