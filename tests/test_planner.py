"""Tests for bubblekit.analysis.planner: enumerate, simulate and rank pipeline configurations."""

from __future__ import annotations

from fractions import Fraction

import pytest

import bubblekit as bk
from bubblekit.analysis import planner


def test_hops_per_step_matches_placement() -> None:
    for p, m, v in [(4, 8, 2), (4, 8, 4), (2, 4, 3), (8, 16, 2)]:
        s = bk.schedule("interleaved", p, m, v=v)
        assert planner.hops_per_step(s) == 2 * m * (p * v - 1)
    s = bk.schedule("1f1b", 4, 8)
    assert planner.hops_per_step(s) == 2 * 8 * 3
    assert planner.hops_per_step(bk.schedule("gpipe", 1, 4)) == 0
    with pytest.raises(TypeError, match="Schedule"):
        planner.hops_per_step("1f1b")  # type: ignore[arg-type]


def test_hops_count_matches_simulated_comm_delay() -> None:
    # every cross-rank dependency adds comm; with one microbatch and one rank per stage the
    # critical path crosses every boundary twice, so makespan grows by hops * comm
    s = bk.schedule("1f1b", 4, 1)
    base = bk.simulate(s, bk.Costs(f=1, b=2)).makespan
    with_comm = bk.simulate(s, bk.Costs(f=1, b=2, comm=1)).makespan
    assert with_comm - base == planner.hops_per_step(s)


def test_plan_uniform_ranks_and_memory() -> None:
    table = planner.plan(4, ms=(4, 8, 16), memory_budget=4)
    assert table.best is not None
    best = table.best
    # every feasible candidate respects the budget, every infeasible one says why
    for c in table:
        if c.fits:
            assert c.peak_activations is not None and c.peak_activations <= 4 + 1e-9
        else:
            assert c.reason
    # gpipe holds m microbatches: m=8 and 16 do not fit 4
    gp = {c.m: c for c in table if c.schedule == "gpipe"}
    assert gp[4].fits and not gp[8].fits and not gp[16].fits
    assert "memory" in gp[8].reason
    # ranked by time per microbatch among feasible
    tpm = [c.time_per_microbatch for c in table.feasible]
    assert tpm == sorted(tpm)
    assert best.time_per_microbatch == min(tpm)
    # simulated numbers agree with the result object
    assert best.result is not None and best.makespan == best.result.makespan
    assert best.bubble_ratio == pytest.approx(best.result.bubble_ratio)


def test_gpipe_and_1f1b_same_bubble_different_memory() -> None:
    table = planner.plan(4, ms=(8,), schedules=("gpipe", "1f1b"))
    by = {c.schedule: c for c in table}
    assert by["gpipe"].makespan == by["1f1b"].makespan
    assert by["gpipe"].peak_activations == 8 and by["1f1b"].peak_activations == 4


def test_recompute_trades_time_for_memory() -> None:
    base = bk.Costs(f=1, b=2)
    rc = planner.with_recompute(base, activation=bk.Costs().activation / 16)
    assert rc.b == 3 and rc.activation == pytest.approx(1 / 16)
    table = planner.plan(8, costs=base, recompute=rc, memory_budget=2, ms=(8, 16), schedules=("1f1b", "gpipe"))
    assert table.best is not None and table.best.recompute
    # without recompute nothing fits: 1F1B holds p = 8 microbatches on rank 0
    assert all(not c.fits for c in table if not c.recompute)
    # recompute makes every step slower at equal configuration
    for c in table:
        if c.recompute:
            twin = next(d for d in table if not d.recompute and (d.schedule, d.m, d.v) == (c.schedule, c.m, c.v))
            assert c.makespan > twin.makespan
            assert c.peak_activations < twin.peak_activations


def test_with_recompute_per_stage_and_errors() -> None:
    c = bk.Costs(f=[1, 2], b=[2, 4], activation=[1, 1])
    r = planner.with_recompute(c, activation=0.5, extra_backward=0.5)
    assert r.b == (2.5, 5.0) and r.activation == (0.5, 0.5)
    with pytest.raises(ValueError, match="activation"):
        planner.with_recompute(c, activation=2)
    with pytest.raises(ValueError, match="activation"):
        planner.with_recompute(c, activation=0)
    with pytest.raises(TypeError, match="Costs"):
        planner.with_recompute("b=2f", activation=0.5)  # type: ignore[arg-type]


def test_h200_recompute_costs_from_data() -> None:
    data = planner.load_h200_recompute_costs()
    plain, rc = planner.h200_recompute_costs(4096, 4096)
    rec = next(c for c in data["configs"] if c["hidden"] == 4096)
    assert plain.unit == rc.unit == "ms"
    assert plain.f == rec["none"]["F_ms"] and rc.b == rec["full"]["bwd_ms"]
    assert rc.activation == pytest.approx(rec["full"]["activation_bytes_per_microbatch"]
                                          / rec["none"]["activation_bytes_per_microbatch"])
    assert rc.activation < 0.1 and rc.b > plain.b
    assert plain.extra["activation_bytes_per_microbatch"] == rc.extra["activation_bytes_per_microbatch"]
    with pytest.raises(ValueError, match="available"):
        planner.h200_recompute_costs(1024, 1024)


def test_byte_budget_converts() -> None:
    plain, rc = planner.h200_recompute_costs(4096, 4096)
    unit = plain.extra["activation_bytes_per_microbatch"]
    a = planner.plan(4, costs=plain, recompute=rc, memory_budget_bytes=3 * unit, ms=(4, 8))
    b = planner.plan(4, costs=plain, recompute=rc, memory_budget=3, ms=(4, 8))
    assert a.memory_budget == pytest.approx(3)
    assert [c.label for c in a] == [c.label for c in b]
    best = a.best
    assert best is not None and best.peak_bytes == pytest.approx(best.peak_activations * unit)


def test_unbuildable_candidates_are_reported() -> None:
    table = planner.plan(4, ms=(9,), schedules=("interleaved",), vs=(2,))
    (only,) = table.candidates
    assert not only.fits and only.makespan is None and "cannot run" in only.reason
    assert table.best is None
    assert "no configuration fits" in table.to_text()
    assert "cannot run" in table.to_text(show_infeasible=True) or "no (" in table.to_text(show_infeasible=True)


def test_comm_makes_large_v_stop_paying() -> None:
    costs = bk.Costs(f=1, b=2, comm=0.25)
    table = planner.plan(4, costs=costs, ms=(8,), schedules=("interleaved",), vs=(2, 4, 8, 16), rank_by="makespan")
    spans = {c.v: c.makespan for c in table}
    best_v = table.best.v  # type: ignore[union-attr]
    assert spans[best_v] < spans[16]  # too many chunks costs more than it saves
    # with no latency more chunks never hurt here
    free = planner.plan(4, ms=(8,), schedules=("interleaved",), vs=(2, 4, 8, 16), rank_by="makespan")
    assert free.best.v == 16  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("kwargs", "exc", "words"),
    [
        ({"p": 0}, ValueError, "p must be >= 1"),
        ({"p": 4, "ms": ()}, ValueError, "ms is empty"),
        ({"p": 4, "ms": (0,)}, ValueError, "ms[0]"),
        ({"p": 4, "vs": (1,)}, ValueError, "vs[0]"),
        ({"p": 4, "schedules": ("bogus",)}, ValueError, "unknown schedule name"),
        ({"p": 4, "schedules": "1f1b"}, TypeError, "schedules must be"),
        ({"p": 4, "rank_by": "speed"}, ValueError, "rank_by"),
        ({"p": 4, "memory_budget": -1}, ValueError, "memory_budget"),
        ({"p": 4, "memory_budget": 1, "memory_budget_bytes": 10}, ValueError, "not both"),
        ({"p": 4, "memory_budget_bytes": 10}, ValueError, "activation_bytes"),
        ({"p": 4, "costs": "b=2f"}, TypeError, "costs must be"),
        ({"p": 4, "recompute": True}, TypeError, "recompute must be"),
    ],
)
def test_bad_input(kwargs: dict[str, object], exc: type[Exception], words: str) -> None:
    p = kwargs.pop("p")
    with pytest.raises(exc) as info:
        planner.plan(p, **kwargs)  # type: ignore[arg-type]
    assert words in str(info.value)


def test_aliases_and_text() -> None:
    table = planner.plan(2, ms=(2,), schedules=("naive", "1F1B"))
    assert {c.schedule for c in table} == {"gpipe", "1f1b"}
    text = table.to_text()
    assert "1f1b m=2" in text and "gpipe m=2" in text
    assert str(table) == text


def test_a_plan_names_v_only_where_it_is_a_choice() -> None:
    """Seventeenth review, C1: "dualpipe v=2" beside "interleaved v=2" read as an interleaved DualPipe; the V
    schedules and DualPipe always hold two stages per rank, so their labels carry no v."""
    table = planner.plan(4, ms=(8,), vs=(2,), schedules=("interleaved", "dualpipe", "zbv"))
    labels = {c.schedule: c.label for c in table}
    assert "v=2" in labels["interleaved"] and "v=" not in labels["dualpipe"] and "v=" not in labels["zbv"]


def test_the_planner_searches_megatrons_microbatch_group_size() -> None:
    """Issue 26: plan(groups=...) tries interleaved 1F1B with each microbatch_group_size (None: PyTorch's order);
    each candidate equals the schedule built directly, and a group Megatron's rule refuses does not fit, with the reason."""
    costs = bk.Costs(f=1, b=2, comm=Fraction(1, 4))
    table = planner.plan(4, costs=costs, ms=(12,), vs=(2,), schedules=("interleaved", "1f1b"), groups=(None, 4, 6, 12, 5))
    by = {(c.schedule, c.group): c for c in table}
    assert set(by) == {("interleaved", g) for g in (None, 4, 6, 12, 5)} | {("1f1b", None)}
    for g in (4, 6, 12):
        direct = bk.simulate(bk.schedule("interleaved", 4, 12, 2, microbatch_group_size=g), costs)
        assert by["interleaved", g].fits and by["interleaved", g].makespan == direct.makespan
        assert f"g={g}" in by["interleaved", g].label
    assert not by["interleaved", 5].fits and by["interleaved", 5].reason   # 12 % 5 = 2 < p: Megatron refuses it
    assert "g=" not in by["interleaved", None].label and "g=" not in by["1f1b", None].label


@pytest.mark.parametrize(("groups", "error", "match"), [
    ("4", TypeError, "groups must be"), ([], TypeError, "groups must be"), ([0], ValueError, r"groups\[0\]"),
    ([2.5], TypeError, r"groups\[0\]"), ([True], TypeError, r"groups\[0\]"),
])
def test_hostile_groups(groups: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        planner.plan(4, ms=(8,), schedules=("interleaved",), groups=groups)  # type: ignore[arg-type]


def test_evaluate_refuses_a_group_for_another_schedule() -> None:
    with pytest.raises(ValueError, match="group=4 is interleaved 1F1B's microbatch_group_size"):
        planner.evaluate("1f1b", 4, 8, costs=bk.Costs(), group=4)
