"""Hostile input, the comparison tables (issue 20): zero latency is no latency, for every schedule.

``comm_models`` simulates each schedule without latency, with bubblekit's overlapped latency and
with blocking sends; at ``comm = 0`` the three must be the same step (a property over every
registered schedule and cost model, overlapped pairs included).
"""

from __future__ import annotations

import math
import re
import sys
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bubblekit as bk

cmp = sys.modules["bubblekit.compare"]  # bk.compare is the function; the module holds comm_models


def says(err: pytest.ExceptionInfo[BaseException], *words: str) -> None:
    msg = str(err.value)
    for w in words:
        assert re.search(rf"(?<![\w]){re.escape(w)}", msg), f"{w!r} not in {msg!r}"


def test_dualpipe_blocking_model_at_zero_latency_is_the_no_latency_step() -> None:
    row = cmp.comm_models(["dualpipe"], 4, 8, comm=0).rows[0]
    assert row["blocking"] == row["overlapped"] == row["no_comm"] == bk.simulate(bk.schedule("dualpipe", 4, 8)).makespan


def test_dualpipev_blocking_model_keeps_the_pair_rule() -> None:
    costs = bk.Costs(f=1, b=2, fb="max")
    row = cmp.comm_models(["dualpipev"], 4, 8, comm=0, costs=costs).rows[0]
    assert row["blocking"] == row["no_comm"] == bk.simulate(bk.schedule("dualpipev", 4, 8), costs).makespan
    assert cmp.blocking_costs(bk.schedule("dualpipev", 4, 8), costs, 1).fb == "max"


COSTS = [bk.Costs(), bk.Costs(f=1, b=2, fb="max"), bk.Costs(f=1, i=1, w=1), bk.Costs(f=1, b=2, fb=Fraction(5, 2)),
         bk.Costs(f=2, b=3, overlap=Fraction(1, 3)), bk.Costs(f=Fraction(1, 3), b=1, comm=5)]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(bk.names()), st.integers(1, 6), st.integers(1, 14), st.sampled_from(COSTS),
       st.sampled_from([None, 2, 3]))
def test_zero_latency_equals_no_latency_for_every_schedule(name: str, p: int, m: int, costs: bk.Costs,
                                                           v: int | None) -> None:
    entry = bk.spec(name)
    vv = v if entry.chunks == "many" else None
    if not entry.allows(p, m, vv):
        return
    row = cmp.comm_models([name], p, m, comm=0, v=vv, costs=costs).rows[0]
    assert row["no_comm"] == row["overlapped"] == row["blocking"]
    later = cmp.comm_models([name], p, m, comm=1, v=vv, costs=costs).rows[0]
    assert later["overlapped"] >= row["no_comm"] and later["blocking"] >= row["no_comm"]  # latency never helps


@pytest.mark.parametrize("comm,kind", [(-1, ValueError), (math.nan, ValueError), ("1", TypeError)])
def test_comm_models_checks_the_latency(comm: object, kind: type) -> None:
    with pytest.raises(kind) as err:
        cmp.comm_models(["1f1b"], 4, 8, comm=comm)
    says(err, "comm")


def test_comm_models_and_compare_check_their_lists() -> None:
    with pytest.raises(TypeError) as err:
        cmp.comm_models([], 4, 8, comm=1)
    says(err, "schedules", "non-empty")
    with pytest.raises(TypeError) as err:
        cmp.comm_models(["1f1b"], 4, 8, comm=1, costs=5)
    says(err, "costs", "Costs")
    with pytest.raises(TypeError) as err:
        cmp.blocking_costs(bk.schedule("1f1b", 4, 8), 5, 1)  # type: ignore[arg-type]
    says(err, "costs", "Costs")
    with pytest.raises(ValueError) as err:
        bk.compare([], 4, 8)
    says(err, "schedules", "at least one")
    with pytest.raises(ValueError) as err:
        bk.compare(["1f1b"], 4, 0)
    says(err, "m", ">= 1")
