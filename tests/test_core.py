"""Schedules, costs, simulator and timeline: behaviour and error messages."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

import bubblekit as bk
from bubblekit.actions import Action, parse_action


# ------------------------------------------------------------------ actions and text
def test_action_text_round_trip() -> None:
    a = parse_action("0F3")
    assert a == Action(0, "F", 3) and str(a) == "0F3"
    assert parse_action(" 12W7 ") == Action(12, "W", 7)
    for bad in ("F3", "0X3", "0F", "", "0 F 3 4"):
        with pytest.raises(ValueError, match="cannot read action"):
            parse_action(bad)


@pytest.mark.parametrize("name,v", [("gpipe", None), ("1f1b", None), ("interleaved", 2), ("looped-bfs", 3)])
def test_schedule_text_round_trip(name: str, v: int | None) -> None:
    s = bk.schedule(name, 4, 8, v)
    back = bk.Schedule.from_text(s.to_text(), m=s.m)
    assert back.orders == s.orders
    assert back.placement == s.placement
    assert bk.simulate(back).makespan == bk.simulate(s).makespan


def test_from_text_accepts_plain_lines_and_comments() -> None:
    s = bk.Schedule.from_text("# two ranks\n0F0, 0F1, 0B0, 0B1\n1F0 1B0 1F1 1B1  # rank 1\n")
    assert s.p == 2 and s.m == 2
    assert bk.simulate(s).bubble_ratio_exact == Fraction(1, 3)


def test_torch_order_round_trip() -> None:
    s = bk.schedule("interleaved", 2, 4, 2)
    orders = s.to_torch_orders()
    assert orders[0][0] == "0F0"
    back = bk.Schedule.from_torch_orders({r: [*o, None] for r, o in orders.items()}, m=4)
    assert back.orders == s.orders


@pytest.mark.parametrize(
    "text,needle",
    [
        ("rank 0: 0F0 0B0\nrank 1: 1F0", "1B0 (or 1I0 and 1W0) is missing"),
        ("rank 0: 0F0 0F0 0B0\nrank 1: 1F0 1B0", "0F0 appears 2 times"),
        ("rank 0: 0F0 0B0 1F0\nrank 1: 1B0", "stage 1 has actions on rank 0 and rank 1"),
        ("rank 0: 0F0 0B0 0I0 0W0\nrank 1: 1F0 1B0", "has both B and I/W"),
        ("rank 0: 0F0 0I0\nrank 1: 1F0 1B0", "0W0 is missing"),
        ("rank 0: 0F0 0B0\nrank 0: 1F0 1B0", "rank 0 is given twice"),
        ("rank 1: 1F0 1B0", "ranks [0] have no line"),
        ("rank 0: 0F0 0Q0", "cannot read action '0Q0'"),
        ("", "no ranks"),
    ],
)
def test_illegal_schedules_are_named(text: str, needle: str) -> None:
    with pytest.raises(bk.ScheduleError) as info:
        bk.Schedule.from_text(text)
    assert needle in str(info.value)


def test_deadlock_names_each_blocked_rank_and_what_it_waits_for() -> None:
    s = bk.Schedule.from_text("rank 0: 0F0 0B0 0F1 0B1\nrank 1: 1B0 1F0 1F1 1B1")
    with pytest.raises(bk.DeadlockError) as info:
        bk.simulate(s)
    msg = str(info.value)
    assert "rank 0 is blocked at 0B0" in msg and "waits for 1B0" in msg
    assert "rank 1 is blocked at 1B0" in msg and "waits for 1F0" in msg
    assert "later in its own order" in msg


def test_cyclic_wait_between_ranks() -> None:
    # Rank 0 runs backward of microbatch 1 before forward of microbatch 1 reached rank 1's backward.
    s = bk.Schedule.from_text("rank 0: 0F0 0B0 0F1 0B1\nrank 1: 1F1 1F0 1B0 1B1")
    with pytest.raises(bk.DeadlockError) as info:
        bk.simulate(s)
    msg = str(info.value)
    assert "rank 1 is blocked at 1F1" in msg and "waits for 0F1" in msg
    assert "rank 0 is blocked at 0B0" in msg and "stuck at 1F1" in msg


# ----------------------------------------------------------------------- bad input
@pytest.mark.parametrize("param", ["p", "m"])
@pytest.mark.parametrize("value,exc", [(0, ValueError), (-3, ValueError), (2.0, TypeError), (True, TypeError), ("4", TypeError), (None, TypeError)])
def test_bad_p_m_named(param: str, value: object, exc: type) -> None:
    kwargs = {"p": 4, "m": 8}
    kwargs[param] = value  # type: ignore[assignment]
    with pytest.raises(exc, match=rf"\b{param}\b"):
        bk.schedule("1f1b", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(exc, match=rf"\b{param}\b"):
        bk.bubble_ratio(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("value,exc", [(0, ValueError), (-1, ValueError), (1.5, TypeError), (False, TypeError), ("2", TypeError)])
def test_bad_v_named(value: object, exc: type) -> None:
    with pytest.raises(exc, match=r"\bv\b"):
        bk.schedule("interleaved", 4, 8, value)  # type: ignore[arg-type]
    with pytest.raises(exc, match=r"\bv\b"):
        bk.bubble_ratio(4, 8, value)  # type: ignore[arg-type]


def test_v_for_single_chunk_schedule_is_refused() -> None:
    with pytest.raises(ValueError, match=r"v=2 is not allowed for '1f1b'"):
        bk.schedule("1f1b", 4, 8, v=2)
    with pytest.raises(ValueError, match=r"v=1 is not allowed for 'interleaved'"):
        bk.schedule("interleaved", 4, 8, v=1)
    assert bk.schedule("1f1b", 4, 8, v=1).v == 1


def test_interleaved_microbatch_rule_is_explained() -> None:
    with pytest.raises(ValueError, match=r"m=9 is not allowed for p=4"):
        bk.schedule("interleaved", 4, 9, 2)
    # PyTorch's flexible rule: m < p and multiples of the round count are accepted.
    assert bk.simulate(bk.schedule("interleaved", 4, 3, 2)).makespan > 0
    assert bk.simulate(bk.schedule("interleaved", 4, 10, 2)).makespan > 0
    assert bk.simulate(bk.schedule("interleaved", 4, 7, 2)).makespan > 0


@pytest.mark.parametrize("target", [0, 1, -0.1, 1.5, float("nan")])
def test_target_outside_unit_interval(target: float) -> None:
    with pytest.raises(ValueError, match="target"):
        bk.min_micro_batch(8, target)


@pytest.mark.parametrize("target", ["0.2", True, None])
def test_target_wrong_type(target: object) -> None:
    with pytest.raises(TypeError, match="target"):
        bk.min_micro_batch(8, target)  # type: ignore[arg-type]


def test_unknown_schedule_suggests_close_names() -> None:
    with pytest.raises(ValueError, match=r"unknown schedule name '1fb1'.*Did you mean '1f1b'"):
        bk.schedule("1fb1", 4, 8)
    with pytest.raises(ValueError, match=r"Did you mean 'interleaved'"):
        bk.schedule("interleave", 4, 8)
    assert bk.schedule("naive", 2, 2).name == "gpipe"  # the article's word


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        ({"f": 0}, "f must be > 0"),
        ({"f": -1}, "f must be > 0"),
        ({"f": "1"}, "f must be a number"),
        ({"b": float("inf")}, "b must be a finite number"),
        ({"comm": -0.5}, "comm must be >= 0"),
        ({"i": 1}, "i was given without w"),
        ({"b": 2, "i": 3}, "w came out negative"),
        ({"w_held": 2}, "w_held must be between 0 and 1"),
        ({"f": []}, "non-empty sequence"),
    ],
)
def test_bad_costs_named(kwargs: dict[str, object], needle: str) -> None:
    with pytest.raises((TypeError, ValueError), match=needle):
        bk.Costs(**kwargs)  # type: ignore[arg-type]


def test_per_stage_costs_must_match_stage_count() -> None:
    with pytest.raises(ValueError, match="f has 3 per-stage values but the schedule has 4 stages"):
        bk.simulate(bk.schedule("1f1b", 4, 4), bk.Costs(f=[1, 1, 1]))


def test_simulate_type_errors() -> None:
    with pytest.raises(TypeError, match="schedule must be a bubblekit Schedule"):
        bk.simulate("1f1b")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="costs must be a bubblekit Costs"):
        bk.simulate(bk.schedule("1f1b", 2, 2), {"f": 1})  # type: ignore[arg-type]


# --------------------------------------------------------------------------- costs
def test_cost_defaults_and_split() -> None:
    c = bk.Costs()
    assert (c.f, c.b, c.i, c.w) == (1, 2, 1, 1)
    c = bk.Costs(f=1, i=2, w=1)
    assert c.b == 3
    c = bk.Costs(f=1, b=3)
    assert (c.i, c.w) == (Fraction(3, 2), Fraction(3, 2))
    assert "F=1 B=3" in c.describe()
    assert bk.preset("f=i=w").b == 2
    with pytest.raises(ValueError, match="unknown cost preset 'b=3f'.*did you mean"):
        bk.preset("b=3f")


def test_h200_preset_reads_measured_table() -> None:
    c = bk.preset("h200")
    assert c.unit == "ms"
    # Provenance README: h=4096, seq=4096 layer F = 2.73 ms, B(input) = 3.85 ms, W = 2.74 ms.
    assert c.f == pytest.approx(2.73, abs=0.01)
    assert c.i == pytest.approx(3.85, abs=0.01)
    assert c.w == pytest.approx(2.74, abs=0.01)
    with pytest.raises(ValueError, match="no measured H200 configuration with hidden=1000"):
        bk.h200_costs(hidden=1000)


# ---------------------------------------------------------------------- timeline
def test_idle_intervals_and_chrome_trace(tmp_path: object) -> None:
    r = bk.simulate(bk.schedule("gpipe", 2, 2), bk.Costs(f=1, b=2))
    gaps = r.idle_intervals(rank=1)
    assert [(g.start, g.end, g.before) for g in gaps] == [(0, 1, "1F0"), (7, 9, None)]
    gaps0 = r.idle_intervals(rank=0)
    assert [(g.start, g.end, g.before) for g in gaps0] == [(2, 5, "0B0")]
    assert sum(g.duration for g in r.idle_intervals()) == r.total_idle
    doc = r.to_chrome_trace()
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert len(xs) == r.n_spans
    assert {e["tid"] for e in xs} == {0, 1}
    path = tmp_path / "trace.json"  # type: ignore[operator]
    r.to_chrome_trace(path)
    assert json.loads(path.read_text())["traceEvents"]


def test_critical_path_runs_from_first_to_last_action() -> None:
    r = bk.simulate(bk.schedule("1f1b", 4, 8))
    path = r.critical_path
    assert path[0] == (0, Action(0, "F", 0))
    assert path[-1][1] == r.schedule.orders[0][-1]
    # Its durations add up to the makespan when nothing on it waits.
    total = sum(r.resolved.f[a.stage] if a.kind == "F" else r.resolved.b[a.stage] for _, a in path)
    assert total == r.makespan


def test_timeline_from_overlapping_spans() -> None:
    tl = bk.Timeline([[0, 1, 5]], [[2, 3, 6]], [["a", "b", "c"]], unit="ms", may_overlap=True)
    assert tl.busy == (4,)
    assert tl.makespan == 6
    assert tl.bubble_ratio == pytest.approx(2 / 6)
    assert [(g.start, g.end) for g in tl.idle_intervals()] == [(3, 5)]


def test_memory_with_split_backward_frees_at_w() -> None:
    s = bk.Schedule.from_text("rank 0: 0F0 0F1 0I0 0I1 0W0 0W1")
    r = bk.simulate(s, bk.Costs(f=1, i=1, w=1, w_held=0.5))
    values = [v for _, v in r.memory_curves[0]]
    assert values == [0.0, 1.0, 2.0, 1.5, 1.0, 0.5, 0.0]
    assert r.peak_activations == (2.0,)


def test_the_core_imports_nothing_heavy() -> None:
    """``import bubblekit`` and a simulation load no numpy, matplotlib, widgets, sympy or torch."""
    import subprocess
    import sys

    code = ("import sys, bubblekit as bk; r = bk.simulate(bk.schedule('zbv', 4, 8), engine='readable'); "
            "r.critical_path, r.memory_curves, bk.simulate(bk.schedule('1f1b', 4, 8)).peak_activations; "
            "print(sorted(m for m in ('numpy', 'matplotlib', 'ipywidgets', 'sympy', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
