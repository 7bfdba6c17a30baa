"""The tables lessons 04 and 05 show: bubblekit.compare (per_rank, sweep, comm_models, facts),
PlanTable.table and recompute_table (planner), pieces_table and even_partition(group=) (balance).

Every expected number is recomputed here from the simulator or the data file, never typed.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bubblekit as bk
from bubblekit.analysis import balance, planner
from bubblekit.compare import blocking_costs, comm_models, facts, per_rank, sweep
from bubblekit.text import Table


def _sim(name: str, p: int, m: int, v: int | None = None, costs: bk.Costs | None = None) -> bk.SimResult:
    return bk.simulate(bk.schedule(name, p, m, v), costs)


def test_per_rank_peak_matches_the_simulator_and_the_closed_forms() -> None:
    t = per_rank(["gpipe", "1f1b", "interleaved"], 4, 8, v=2)
    assert isinstance(t, Table) and t.columns == ["schedule", "rank 0", "rank 1", "rank 2", "rank 3"]
    assert [r["schedule"] for r in t] == ["GPipe", "1F1B", "interleaved 1F1B v=2"]
    for row, (name, v) in zip(t, [("gpipe", None), ("1f1b", None), ("interleaved", 2)]):
        assert [row[f"rank {q}"] for q in range(4)] == list(_sim(name, 4, 8, v).peak_activations)
    assert [t.row(schedule="1F1B")[f"rank {r}"] for r in range(4)] == [min(4 - r, 8) for r in range(4)]
    assert "microbatch activations" in t.title


@pytest.mark.parametrize("metric", ["idle", "utilization", "gaps", "largest_gap"])
def test_per_rank_other_metrics(metric: str) -> None:
    r = _sim("1f1b", 4, 8)
    row = per_rank([r], metric=metric)[0]
    values = [row[f"rank {q}"] for q in range(4)]
    gaps = [r.idle_intervals(q) for q in range(4)]
    expected = {
        "idle": list(r.idle),
        "utilization": list(r.utilization_per_rank),
        "gaps": [len(g) for g in gaps],
        "largest_gap": [max(x.duration for x in g) for g in gaps],
    }[metric]
    assert values == expected


def test_per_rank_bad_input() -> None:
    with pytest.raises(ValueError, match="metric"):
        per_rank(["1f1b"], 4, 8, metric="memory")
    with pytest.raises(ValueError, match="same number of ranks"):
        per_rank([bk.schedule("1f1b", 2, 4), bk.schedule("1f1b", 3, 4)])
    with pytest.raises(TypeError, match="schedules"):
        per_rank("1f1b", 4, 8)  # type: ignore[arg-type]


def test_sweep_over_comm_and_m_matches_the_simulator() -> None:
    lats = [0, Fraction(1, 4), 1]
    t = sweep(["gpipe", "1f1b", "interleaved"], 4, 8, v=2, over="comm", values=lats, best=True)
    assert t.columns == ["comm", "GPipe", "1F1B", "interleaved 1F1B v=2", "best"]
    for row, c in zip(t, lats):
        spans = {n: _sim(s, 4, 8, v, bk.Costs(f=1, b=2, comm=c)).makespan
                 for n, s, v in [("GPipe", "gpipe", None), ("1F1B", "1f1b", None), ("interleaved 1F1B v=2", "interleaved", 2)]}
        assert {n: row[n] for n in spans} == spans
        assert row["best"] == min(spans, key=lambda n: spans[n])
    peaks = sweep(["gpipe", "1f1b"], 4, over="m", values=[4, 8, 16], metric="peak")
    assert peaks.column("GPipe") == [4, 8, 16] and peaks.column("1F1B") == [4, 4, 4]


def test_sweep_takes_built_schedules_and_labelled_values() -> None:
    scheds = [bk.schedule("1f1b", 4, 8), bk.schedule("interleaved", 4, 8, 4)]
    t = sweep(scheds, over="comm", values={"free": 0, "slow": 1}, case="link")
    assert t.columns == ["case", "comm", "1F1B", "interleaved 1F1B v=4"]
    assert t.headers["case"] == "link" and t.column("case") == ["free", "slow"]
    assert t.row(case="slow")["interleaved 1F1B v=4"] == bk.simulate(scheds[1], bk.Costs(comm=1)).makespan


def test_sweep_bad_input() -> None:
    with pytest.raises(ValueError, match="over"):
        sweep(["1f1b"], 4, 8, over="v", values=[1])
    with pytest.raises(ValueError, match="metric"):
        sweep(["1f1b"], 4, 8, over="comm", values=[0], metric="speed")
    with pytest.raises(TypeError, match="fixed m"):
        sweep([bk.schedule("1f1b", 4, 8)], over="m", values=[4])
    with pytest.raises(ValueError, match="same label"):
        sweep(["1f1b", "1f1b"], 4, 8, over="comm", values=[0])
    with pytest.raises(ValueError, match="values"):
        sweep(["1f1b"], 4, 8, over="comm", values=[])
    with pytest.raises(ValueError, match="comm"):
        sweep(["1f1b"], 4, 8, over="comm", values=[-1])


def test_comm_models_blocking_sends_keep_the_sender_busy() -> None:
    c = Fraction(1, 4)
    t = comm_models(["gpipe", "1f1b", "interleaved"], 4, 8, v=2, comm=c, costs=bk.Costs(f=1, b=2))
    for row, (name, v) in zip(t, [("gpipe", None), ("1f1b", None), ("interleaved", 2)]):
        assert row["no_comm"] == _sim(name, 4, 8, v, bk.Costs(f=1, b=2)).makespan
        assert row["overlapped"] == _sim(name, 4, 8, v, bk.Costs(f=1, b=2, comm=c)).makespan
        assert row["blocking"] > row["no_comm"]
    # GPipe with blocking sends: every forward but the last stage's and every backward but the first's is longer
    gp = bk.schedule("gpipe", 4, 8)
    bc = blocking_costs(gp, bk.Costs(f=1, b=2), c)
    assert bc.f == (1 + c, 1 + c, 1 + c, 1) and bc.b == (2, 2 + c, 2 + c, 2 + c) and bc.comm == 0


@settings(max_examples=40, deadline=None)
@given(p=st.integers(1, 5), m=st.integers(1, 8), name=st.sampled_from(["gpipe", "1f1b", "interleaved", "looped-bfs"]))
def test_blocking_sends_of_zero_change_nothing(p: int, m: int, name: str) -> None:
    entry = bk.spec(name)
    v = 2 if entry.chunks == "many" else None
    if not entry.allows(p, m, v):
        return
    s = bk.schedule(name, p, m, v)
    base = bk.Costs(f=1, b=2)
    assert bk.simulate(s, blocking_costs(s, base, 0)).makespan == bk.simulate(s, base).makespan


def test_facts_state_the_registry_rules() -> None:
    t = facts(["gpipe", "1f1b", "interleaved"], 4, up_to=16)
    row = t.row(schedule="interleaved 1F1B")
    refused = [m for m in range(1, 17) if m not in bk.legal_ms("interleaved", 4, up_to=16)]
    assert row["refused"] == ", ".join(map(str, refused)) and row["m_rule"] == bk.spec("interleaved").m_rule
    assert t.row(schedule="1F1B")["refused"] == "none" and t.row(schedule="1F1B")["torch"] == "Schedule1F1B"
    with pytest.raises(TypeError, match="names"):
        facts("1f1b")  # type: ignore[arg-type]


def test_compare_shows_hops_and_hand_built_schedules() -> None:
    s = bk.Schedule("my order", 2, 2, (0, 1), bk.schedule("1f1b", 2, 2).orders)
    t = bk.compare([s, bk.schedule("interleaved", 4, 8, 2)], hops=True)
    assert t.column("schedule") == ["my order", "interleaved 1F1B"]
    assert t[0]["formula"] is None and t.column("hops") == [s.hops_per_step, 2 * 8 * (4 * 2 - 1)]


def test_plan_table_renders_and_filters() -> None:
    rc = planner.with_recompute(bk.Costs(f=1, b=2), activation=Fraction(1, 16), extra_backward=Fraction(7, 10))
    plan = planner.plan(4, costs=bk.Costs(f=1, b=2), recompute=rc, memory_budget=3, ms=(4, 8))
    t = plan.table(3)
    assert len(t) == min(3, len(plan.feasible)) and all(t.column("fits"))
    assert t.column("configuration") == [c.label for c in plan.feasible[:3]]
    plain = plan.table(None, show_infeasible=True, where=lambda c: not c.recompute)
    assert all("+recompute" not in x for x in plain.column("configuration"))
    assert "budget 3 microbatch activations" in t.title


def test_plan_table_in_gib() -> None:
    plain, rc = planner.h200_recompute_costs(8192, 4096)
    plan = planner.plan(8, costs=plain, recompute=rc, memory_budget_bytes=24 * 2**30, ms=(32,), schedules=("1f1b",))
    t = plan.table(show_infeasible=True)
    assert "24 GiB" in t.title and t.headers["peak"] == "peak GiB"
    for row, c in zip(t, plan):
        assert row["peak"] == pytest.approx(c.peak_bytes / 2**30)


def test_recompute_table_matches_the_data() -> None:
    data = planner.load_h200_recompute_costs()
    t = planner.recompute_table()
    assert len(t) == len(data["configs"])
    for row, c in zip(t, data["configs"]):
        assert row["extra_F"] == pytest.approx((c["full"]["bwd_ms"] - c["none"]["bwd_ms"]) / c["none"]["F_ms"])
        assert row["ratio"] == pytest.approx(c["none"]["activation_bytes_per_microbatch"]
                                             / c["full"]["activation_bytes_per_microbatch"])


def test_pieces_table_ratios() -> None:
    t = balance.pieces_table()
    row = t.row(hidden=8192, seq=4096)
    a, m = balance.measured_layers(1, hidden=8192, seq=4096)
    assert row["mlp_vs_attn_F"] == pytest.approx(m.f / a.f)
    assert row["mlp_vs_attn_FB"] == pytest.approx(m.weight / a.weight)


def test_even_partition_by_groups_keeps_layers_whole() -> None:
    pieces = balance.measured_layers(10, hidden=8192, seq=4096)
    part = balance.even_partition(pieces, 4, group=2)
    assert part.sizes == (6, 6, 4, 4)
    assert balance.even_partition(list(range(1, 11)), 4).sizes == (3, 3, 2, 2)
    with pytest.raises(ValueError, match="group"):
        balance.even_partition(pieces, 4, group=3)
    with pytest.raises(TypeError, match="group"):
        balance.even_partition(pieces, 4, group=2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="p"):
        balance.even_partition(pieces, 11, group=2)


def test_compare_without_the_closed_form() -> None:
    t = bk.compare(["gpipe", "1f1b"], 2, 3, costs=bk.Costs(f=[3, 1], b=[6, 9]), closed_form=False)
    assert "formula" not in t.columns and len(t) == 2


def test_compare_labels_name_the_rows() -> None:
    runs = [bk.simulate(bk.schedule("1f1b", 2, 4), c) for c in (bk.Costs(f=1, b=2), bk.Costs(f=[1, 2], b=[2, 4]))]
    t = bk.compare(runs, labels=["even", "uneven"], closed_form=False)
    assert t.column("schedule") == ["even", "uneven"] and t.row(schedule="uneven")["makespan"] == runs[1].makespan
    with pytest.raises(ValueError, match="labels"):
        bk.compare(runs, labels=["one"])
