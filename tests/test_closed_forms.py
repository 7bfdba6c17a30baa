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


# ------------------------------------------------------- the registry's closed forms
def _grid(entry: bk.ScheduleSpec) -> list[tuple[int, int, int]]:
    vs = [1] if entry.chunks == "one" else [2] if entry.chunks == "two" else [2, 3, 4]
    return [(p, m, v) for p in range(1, 7) for m in range(1, 3 * p + 3) for v in vs if entry.allows(p, m, v)]


@pytest.mark.parametrize("name", bk.names())
def test_registry_peak_formula_matches_the_simulator(name: str) -> None:
    entry = bk.spec(name)
    assert entry.peak is not None and entry.peak_text, f"{name} has no peak formula"
    for p, m, v in _grid(entry):
        got = bk.simulate(bk.schedule(name, p, m, v if entry.chunks == "many" else None)).max_peak_activations
        assert got == pytest.approx(float(entry.peak(p, m, v)), abs=1e-9), (name, p, m, v)


@pytest.mark.parametrize("name", [n for n in bk.names() if bk.spec(n).bubble is not None])
@pytest.mark.parametrize("costs", [bk.Costs(f=1, b=2), bk.Costs(f=1, b=1), bk.Costs(f=2, b=5)], ids=["b=2f", "b=f", "b=2.5f"])
def test_registry_bubble_formula_matches_the_simulator(name: str, costs: bk.Costs) -> None:
    entry = bk.spec(name)
    for p, m, v in _grid(entry):
        form = entry.closed_form(p, m, v)
        if form is None:
            continue
        sim = bk.simulate(bk.schedule(name, p, m, v if entry.chunks == "many" else None), costs)
        assert sim.bubble_ratio_exact == form[0], (name, p, m, v)


@pytest.mark.parametrize("name", bk.names())
def test_registry_m_rule_matches_the_generator(name: str) -> None:
    """Every m the registry allows builds; every m it refuses is refused by the generator too."""
    entry = bk.spec(name)
    for p in range(1, 6):
        allowed = set(bk.legal_ms(name, p, up_to=4 * p + 4))
        for m in range(1, 4 * p + 5):
            v = 2 if entry.chunks == "many" else None
            if m in allowed:
                bk.schedule(name, p, m, v)
            else:
                with pytest.raises(ValueError, match=rf"m={m}\b"):
                    entry.build(p, m, 2) if entry.chunks == "many" else entry.build(p, m)


def test_names_resolve_through_the_registry() -> None:
    for name in bk.names():
        entry = bk.spec(name)
        assert bk.spec(entry.display_name) is entry and bk.display_name(name) == entry.display_name
        for alias in entry.aliases:
            assert bk.spec(alias.upper().replace("-", "_")) is entry
    assert bk.spec("naive").name == "gpipe" and bk.spec("Interleaved 1F1B").name == "interleaved"
    assert bk.display_name("not a schedule") == "not a schedule"


def test_schedule_spec_positional_fields_still_work() -> None:
    entry = bk.ScheduleSpec("x", bk.schedules.classic.gpipe, "one", False, "summary", "paper", "ScheduleGPipe")
    assert entry.torch_class == "ScheduleGPipe" and entry.display_name == "x" and entry.aliases == ()
    assert entry.check(2, 3) == 1 and entry.n_actions(2, 3) == 12


@pytest.mark.parametrize("name", ["interleaved", "looped-bfs"])
def test_interleaved_formula_holds_for_every_accepted_m_at_least_p(name: str) -> None:
    """(p-1)/(m v+p-1) for every m >= p the schedule accepts (multiples of p or not), equal stages;
    the registry's closed form says so, and gives none below p, where the bubble is larger. Looped BFS
    has the same fill and drain (seventeenth review, C1: its closed form was blank)."""
    for p in range(2, 6):
        for v in (2, 3):
            for m in bk.legal_ms(name, p, v=v, up_to=4 * p):
                r = bk.simulate(bk.schedule(name, p, m, v), bk.Costs(f=1, b=2))
                form = bk.spec(name).closed_form(p, m, v)
                if m >= p:
                    assert form is not None and r.bubble_ratio_exact == form[0] == Fraction(p - 1, m * v + p - 1)
                else:
                    assert form is None and r.bubble_ratio_exact > Fraction(p - 1, m * v + p - 1)
