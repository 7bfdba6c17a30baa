"""Megatron-Core's ``microbatch_group_size_per_vp_stage`` for the interleaved schedule (issue 26).

The test data ``tests/data/megatron_schedule_tables.json`` was made by running Megatron-Core's own
``get_schedule_table`` (NVIDIA/Megatron-LM, ``megatron/core/pipeline_parallel/schedules.py``, commit
in the file's provenance) on every allowed (p, m, v, group) with p <= 4, m <= 4p, v in {2, 3}, with
its warm-up rule for the interleaved schedule beside it.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

import bubblekit as bk
from bubblekit.schedules.classic import megatron_schedule_table, microbatch_group_rule

DATA = json.loads((Path(__file__).parent / "data" / "megatron_schedule_tables.json").read_text(encoding="utf-8"))
CASES = DATA["cases"]


def test_the_data_names_its_source() -> None:
    source = DATA["provenance"]
    assert source["repository"] == "NVIDIA/Megatron-LM" and len(source["commit"]) == 40
    assert len(CASES) > 100


def test_megatron_docstring_example() -> None:
    """The example in Megatron's own comment: PP2, N3 (group 3), M5, VP2."""
    table = megatron_schedule_table(5, 2, 3)
    assert [mb for mb, _ in table] == [0, 1, 2, 0, 1, 2, 3, 4, 3, 4]
    assert [chunk for _, chunk in table] == [0, 0, 0, 1, 1, 1, 0, 0, 1, 1]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"p{c['p']}-m{c['m']}-v{c['v']}-g{c['group']}")
def test_each_rank_follows_megatrons_table_and_warmup(case: dict) -> None:
    p, m, v, group = case["p"], case["m"], case["v"], case["group"]
    table = [tuple(pair) for pair in case["table"]]
    assert megatron_schedule_table(m, v, group) == table
    s = bk.schedule("interleaved", p, m, v, microbatch_group_size=group)
    for rank, order in enumerate(s.orders):
        forwards = [(a.microbatch, a.stage // p) for a in order if a.kind == "F"]
        backwards = [(a.microbatch, v - 1 - a.stage // p) for a in order if a.kind == "B"]
        assert forwards == table and backwards == table  # backward: the same table, chunks reversed
        first_backward = next(i for i, a in enumerate(order) if a.kind == "B")
        warmup = case["warmup"][rank]  # then each steady step runs a forward, then a backward
        assert first_backward == (warmup + 1 if warmup < m * v else warmup)
        assert all(a.stage % p == rank for a in order)  # looped placement


def test_group_p_is_todays_order_whenever_p_divides_m() -> None:
    for p in range(1, 7):
        for m in range(p, 5 * p + 1, p):
            for v in (2, 3, 4):
                assert (bk.schedule("interleaved", p, m, v, microbatch_group_size=p).orders
                        == bk.schedule("interleaved", p, m, v).orders), (p, m, v)


def test_todays_order_for_pytorchs_flexible_m_is_the_round_size() -> None:
    """PyTorch's rounds of m // rounds microbatches are Megatron's groups of that size (p = 4, m = 10: 5)."""
    assert bk.schedule("interleaved", 4, 10).orders == bk.schedule("interleaved", 4, 10, microbatch_group_size=5).orders


@pytest.mark.parametrize("case", CASES[::3], ids=lambda c: f"p{c['p']}-m{c['m']}-v{c['v']}-g{c['group']}")
def test_closed_forms_hold_for_every_group(case: dict) -> None:
    """Equal stages, no latency: the bubble is (p-1)/(m·v+p-1) for any group; rank 0's peak grows with it."""
    p, m, v, group = case["p"], case["m"], case["v"], case["group"]
    result = bk.simulate(bk.schedule("interleaved", p, m, v, microbatch_group_size=group), bk.Costs(f=1, b=2))
    assert result.bubble_ratio == pytest.approx(float(bk.bubble_ratio(p, m, v)), abs=1e-12)
    expected_peak = Fraction(min((v - 1) * group + 2 * p - 1, m * v), v)  # in microbatch activations
    assert result.peak_activations[0] == pytest.approx(float(expected_peak))


def test_both_engines_agree_on_the_new_orders() -> None:
    for case in CASES[::7]:
        s = bk.schedule("interleaved", case["p"], case["m"], case["v"], microbatch_group_size=case["group"])
        costs = bk.Costs(f=1, b=2, comm=Fraction(1, 3))
        fast, readable = bk.simulate(s, costs), bk.simulate(s, costs, engine="readable")
        assert fast.makespan == readable.makespan and fast.bubble_ratio == readable.bubble_ratio


def test_breadth_first_hides_a_hop_latency_that_depth_first_pays() -> None:
    """Llama 3's reason to tune the group (§3.3.2): with a latency per hop, larger groups wait less."""
    costs = bk.Costs(f=1, b=2, comm=Fraction(1, 2))
    depth = bk.simulate(bk.schedule("interleaved", 4, 16, 2, microbatch_group_size=4), costs)
    breadth = bk.simulate(bk.schedule("interleaved", 4, 16, 2, microbatch_group_size=8), costs)
    assert breadth.makespan < depth.makespan
    assert max(breadth.peak_activations) > max(depth.peak_activations)  # the price: memory


@pytest.mark.parametrize("group, words", [
    (3, "p <= microbatch_group_size <= m"), (17, "p <= microbatch_group_size <= m"),
    (13, "m % 13 = 3"), (7, "m % 7 = 2"),
])
def test_megatrons_refusals_name_the_rule(group: int, words: str) -> None:
    assert microbatch_group_rule(4, 16, group) is not None
    with pytest.raises(ValueError, match=re.escape(words)):
        bk.schedule("interleaved", 4, 16, microbatch_group_size=group)


@pytest.mark.parametrize("bad", ["8", 8.0, True, None.__class__, [8], -4, 0])
def test_bad_group_types_and_ranges(bad: object) -> None:
    with pytest.raises((TypeError, ValueError), match="microbatch_group_size"):
        bk.schedule("interleaved", 4, 16, microbatch_group_size=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["1f1b", "gpipe", "looped-bfs", "zbv", "dualpipev"])
def test_other_schedules_refuse_the_knob(name: str) -> None:
    with pytest.raises(ValueError, match="knob of the 'interleaved' schedule"):
        bk.schedule(name, 4, 8, microbatch_group_size=4)


def test_the_group_rule_replaces_pytorchs_m_rule() -> None:
    """m = 9 over p = 4 has no PyTorch rounds, but Megatron runs it as one group of 9."""
    with pytest.raises(ValueError, match="m=9 is not allowed"):
        bk.schedule("interleaved", 4, 9)
    result = bk.simulate(bk.schedule("interleaved", 4, 9, microbatch_group_size=9))
    assert result.bubble_ratio == pytest.approx(float(bk.bubble_ratio(4, 9, 2)), abs=1e-12)
