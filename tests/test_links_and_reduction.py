"""Messages that take time on the wire (bandwidth, one message at a time per link direction)
and the data-parallel gradient reduction at the step's end (``Costs(dp_reduce=...)``).

Both engines agree on them (``tests/test_engines.py`` draws them too); here: hand-worked
examples, the defaults that change nothing, and hostile values.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

import bubblekit as bk
from bubblekit.actions import Event
from bubblekit.simulator import Links, dp_reductions, message_receivers

ENGINES = ("fast", "readable")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_link_carries_one_message_at_a_time(engine: str) -> None:
    """GPipe, p = 2, m = 2, F = 1, 3 slots on the wire: 0F0's activation crosses 1 -> 4, 0F1's
    (made at 2) waits for the link until 4 and crosses 4 -> 7; without the queue it would arrive at 5."""
    s = bk.Schedule.from_text("rank 0: 0F0 0F1 0B0 0B1\nrank 1: 1F0 1F1 1B0 1B1")
    r = bk.simulate(s, bk.Costs(f=1, b=2, activation_bytes=6, bandwidth=2), engine=engine)
    starts = {str(x.action): x.start for x in r.spans(1)}
    assert starts["1F0"] == 4 and starts["1F1"] == 7
    # the gradients go back on the other direction, which is free: 1B0 ends at 10, 0B0 starts at 13
    assert {str(x.action): x.start for x in r.spans(0)}["0B0"] == 13


def test_links_by_hand() -> None:
    links = Links(lambda kind: 3)
    e = Event("activation", 0, 0)
    assert links.send(e, 0, 1, 1) == 4
    assert links.send(e, 0, 1, 2) == 7      # waits for the first message
    assert links.send(e, 1, 0, 2) == 5      # the other direction is free
    assert links.send(e, 0, 1, 10) == 13    # the link was idle again


@pytest.mark.parametrize("name", ["gpipe", "1f1b", "zb-h1", "zbv"])
def test_without_queueing_a_wire_time_is_a_latency(name: str) -> None:
    """m = 1: no two messages ever share a link, so bytes / bandwidth = w is the same as comm = w."""
    s = bk.schedule(name, 4, 1)
    wired = bk.simulate(s, bk.Costs(f=1, i=1, w=1, activation_bytes=3, bandwidth=4))
    latency = bk.simulate(s, bk.Costs(f=1, i=1, w=1, comm=Fraction(3, 4)))
    assert wired._ends == latency._ends and wired.makespan == latency.makespan


def test_queueing_costs_more_than_the_same_latency() -> None:
    """With many microbatches messages queue on the links: a step at least as long as with comm = w, here longer."""
    s = bk.schedule("gpipe", 4, 8)
    wired = bk.simulate(s, bk.Costs(f=1, b=2, activation_bytes=3, bandwidth=2))
    latency = bk.simulate(s, bk.Costs(f=1, b=2, comm=Fraction(3, 2)))
    assert wired.makespan > latency.makespan


def test_gradient_bytes_default_to_activation_bytes() -> None:
    c = bk.Costs(activation_bytes=8, bandwidth=4)
    assert c.transfer_times == (2, 2)
    assert bk.Costs(activation_bytes=8, gradient_bytes=2, bandwidth=4).transfer_times == (2, Fraction(1, 2))
    assert bk.Costs(activation_bytes=8).transfer_times == (0, 0)      # no bandwidth: unlimited
    assert "wire=2" in c.describe() and "dp_reduce" not in c.describe()


def test_messages_go_where_the_rule_sends_them() -> None:
    r = message_receivers(bk.schedule("1f1b", 3, 2))
    assert r == {("activation", 0): (1,), ("activation", 1): (2,), ("gradient", 1): (0,), ("gradient", 2): (1,)}
    v = message_receivers(bk.schedule("zbv", 2, 2))   # V shape: stages 1 and 2 share rank 1, 0 and 3 rank 0
    assert ("activation", 1) not in v and v[("activation", 2)] == (0,) and v[("gradient", 3)] == (1,)


def test_the_defaults_change_nothing() -> None:
    for name in ("1f1b", "zbv", "dualpipev"):
        s = bk.schedule(name, 4, 8)
        plain, explicit = bk.simulate(s), bk.simulate(s, bk.Costs(activation_bytes=0, bandwidth=None, dp_reduce=0))
        assert plain._ends == explicit._ends and plain.reductions == [] and plain.exposed_reduction == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_1f1b_exposes_the_whole_reduction_of_rank_0(engine: str) -> None:
    """1F1B: rank 0 runs the step's last backward, so its reduction starts at the compute's end and the
    step is dp_reduce longer; every other rank's reduction is hidden under rank 0's tail."""
    s = bk.schedule("1f1b", 4, 8)
    plain = bk.simulate(s, bk.Costs(f=1, b=2))
    r = bk.simulate(s, bk.Costs(f=1, b=2, dp_reduce=3), engine=engine)
    assert r.makespan == plain.makespan + 3 and r.exposed_reduction == 3
    assert [x.stage for x in r.reductions] == [3, 2, 1, 0]
    assert r.reductions[-1].start == plain.makespan
    assert r.total_idle == plain.total_idle + 4 * 3     # the wait counts as idle on every rank


def test_zbv_overlaps_one_chunk_s_reduction_with_the_other_chunk() -> None:
    """ZB-V, v = 2: rank 0 holds stages 0 and 2p - 1; the last stage's weight gradients finish first,
    so its reduction (dp_reduce / 2 per chunk) runs beside stage 0's last W; only stage 0's is exposed."""
    s = bk.schedule("zbv", 4, 8)
    plain = bk.simulate(s, bk.Costs(f=1, i=1, w=1))
    r = bk.simulate(s, bk.Costs(f=1, i=1, w=1, dp_reduce=2))
    assert plain.bubble_ratio < r.bubble_ratio
    assert 0 < r.exposed_reduction <= 1     # at most one chunk's share (2 / v) sticks out
    assert len(r.reductions) == s.n_stages


def test_reductions_per_stage_and_one_at_a_time() -> None:
    orders = [[bk.actions.parse_action(t) for t in "0F0 1F0 1B0 0B0".split()]]
    out = dp_reductions(orders, [[1, 2, 4, 6]], [5, 5])
    assert [(x.stage, x.start, x.end) for x in out] == [(1, 4, 9), (0, 9, 14)]   # stage 0 waits for stage 1's
    assert dp_reductions(orders, [[1, 2, 4, 6]], [0, 0]) == []


@pytest.mark.parametrize("kw, match", [
    ({"bandwidth": 0}, "bandwidth"), ({"bandwidth": -1}, "bandwidth"), ({"bandwidth": "fast"}, "bandwidth"),
    ({"activation_bytes": -1}, "activation_bytes"), ({"gradient_bytes": float("nan")}, "gradient_bytes"),
    ({"activation_bytes": 1e300}, "activation_bytes"), ({"dp_reduce": -2}, "dp_reduce"),
    ({"dp_reduce": "1"}, "dp_reduce"), ({"dp_reduce": [1, 2], "f": [1, 1, 1]}, "same length"),
    ({"bandwidth": True}, "bandwidth"), ({"activation_bytes": 1, "bandwidth": 1e-300}, "bytes / bandwidth"),
])
def test_hostile_link_and_reduction_costs(kw: dict, match: str) -> None:
    with pytest.raises((TypeError, ValueError), match=match):
        bk.Costs(**kw)


def test_per_stage_reduction_must_match_the_stages() -> None:
    with pytest.raises(ValueError, match="dp_reduce has 3 per-stage values but the schedule has 4"):
        bk.simulate(bk.schedule("1f1b", 4, 4), bk.Costs(dp_reduce=[1, 1, 1]))


def test_h200_messages_are_the_measured_boundary_tensor() -> None:
    """h200_costs sends the measured boundary tensor (8 MiB at h = 2048, seq = 2048; 32 MiB at 4096, 4096) and
    a link of 50 GB/s puts it 0.67 ms on the wire; without a link nothing changes."""
    import json

    data = json.loads((__import__("pathlib").Path(bk.__file__).parent / "data" / "h200_layer_costs.json").read_text())
    size = next(c for c in data["configs"] if c["hidden"] == 4096 and c["seq"] == 4096)["layer"]["boundary_tensor_bytes"]
    assert size == 4096 * 4096 * 2
    c = bk.h200_costs(link_gb_per_s=50)
    assert c.activation_bytes == size and c.transfer_times[0] == pytest.approx(size / 50e6)
    s = bk.schedule("zbv", 4, 8)
    assert bk.simulate(s, bk.h200_costs()).makespan < bk.simulate(s, c).makespan
    assert bk.h200_costs().transfer_times == (0, 0) and bk.h200_costs().extra["params"] > 0
    for bad, name in [({"link_gb_per_s": 0}, "link_gb_per_s"), ({"link_gb_per_s": "fast"}, "link_gb_per_s"),
                      ({"dp_reduce_ms": -1}, "dp_reduce_ms")]:
        with pytest.raises((TypeError, ValueError), match=name):
            bk.h200_costs(**bad)


def test_search_refuses_what_it_does_not_model_and_recompute_keeps_the_links() -> None:
    """The schedule search models a latency per hop only: links or a reduction are refused, naming them;
    recomputation's costs keep the links, the reduction and the pair rule."""
    with pytest.raises(ValueError, match="bandwidth=2.*dp_reduce=0"):
        bk.search.greedy_schedule(2, 4, bk.Costs(f=1, i=1, w=1, activation_bytes=1, bandwidth=2))
    with pytest.raises(ValueError, match="dp_reduce=3"):
        bk.search.greedy_schedule(2, 4, bk.Costs(f=1, i=1, w=1, dp_reduce=3))
    assert bk.search.greedy_schedule(2, 4, bk.Costs(f=1, i=1, w=1, dp_reduce=[0, 0])) is not None
    from bubblekit.analysis.planner import with_recompute

    c = with_recompute(bk.Costs(f=1, b=2, activation_bytes=4, bandwidth=2, dp_reduce=1, fb="max"), activation=0.5)
    assert (c.bandwidth, c.activation_bytes, c.dp_reduce, c.fb) == (2, 4, 1, "max")


def test_the_helpers_refuse_what_they_cannot_read() -> None:
    with pytest.raises(TypeError, match="schedule must be a bubblekit Schedule"):
        message_receivers("1f1b")
    with pytest.raises(TypeError, match="orders must be a sequence"):
        dp_reductions("x", [[1]], [1])
    with pytest.raises(ValueError, match="one end time per action"):
        dp_reductions([[bk.actions.parse_action("0F0")]], [[1, 2]], [1])
    with pytest.raises(TypeError, match="wire must be a function"):
        Links(3)  # type: ignore[arg-type]
