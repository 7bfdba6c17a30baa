"""Hostile input, the planner (issue 20): the schedule's own v, and bad options as named errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

import bubblekit as bk
from bubblekit.analysis import planner
from bubblekit.memory import Model

MODEL = Model(layers=32, hidden=4096, heads=32, seq=4096)


def says(err: pytest.ExceptionInfo[BaseException], *words: str) -> None:
    msg = str(err.value)
    for w in words:
        assert re.search(rf"(?<![\w]){re.escape(w)}", msg), f"{w!r} not in {msg!r}"


@pytest.mark.parametrize("name,v", [("zbv", 2), ("v-half", 2), ("dualpipev", 2), ("1f1b", 1), ("interleaved", 2)])
def test_the_default_v_follows_the_schedule(name: str, v: int) -> None:
    c = planner.evaluate(name, 4, 8, costs=bk.Costs())
    assert c.fits and c.v == v and c.makespan == bk.simulate(bk.schedule(name, 4, 8), bk.Costs()).makespan


def test_a_v_the_schedule_does_not_take_is_an_error() -> None:
    with pytest.raises(ValueError) as err:
        planner.evaluate("zbv", 4, 8, v=1, costs=bk.Costs())
    says(err, "v=1", "v=2")


def test_per_stage_costs_of_the_wrong_length_are_an_error() -> None:
    with pytest.raises(ValueError) as err:
        planner.evaluate("1f1b", 4, 8, costs=bk.Costs(f=(1, 2, 3)))
    says(err, "costs", "3 per-stage values", "4 stages")
    with pytest.raises(ValueError) as err:
        planner.plan(4, costs=bk.Costs(f=(1, 2)))
    says(err, "per-stage costs", "p * v")
    table = planner.plan(4, costs=bk.Costs(f=(1, 1, 1, 1)))  # fits the one-chunk schedules only
    assert len(table) > 0 and {c.v for c in table} == {1}


def test_memory_options_are_checked_by_name_and_value() -> None:
    with pytest.raises(ValueError) as err:
        planner.evaluate("1f1b", 4, 8, costs=bk.Costs(), model=MODEL, memory_options={"precision": "bogus"})
    says(err, "precision", "bf16-grads")
    with pytest.raises(TypeError) as err:
        planner.evaluate("1f1b", 4, 8, costs=bk.Costs(), model=MODEL, memory_options={"bogus": 1})
    says(err, "bogus", "allowed", "precision")
    with pytest.raises(ValueError) as err:
        planner.evaluate("1f1b", 4, 8, costs=bk.Costs(), memory_options={"tp": 2})
    says(err, "memory_options", "model")
    with pytest.raises(ValueError) as err:
        planner.plan(4, memory_options={"tp": 2})
    says(err, "memory_options", "model")
    with pytest.raises(ValueError) as err:
        planner.plan(4, model=MODEL, memory_options={"tp": 3})
    says(err, "tp=3", "heads")
    with pytest.raises(TypeError) as err:
        planner.evaluate("1f1b", 4, 8, costs=bk.Costs(), model=MODEL, memory_options=5)  # type: ignore[arg-type]
    says(err, "memory_options", "dict")


@pytest.mark.parametrize("kw,name", [({"memory_budget": -1}, "memory_budget"), ({"activation_bytes": 0}, "activation_bytes"),
                                     ({"gpu_memory": 80e9}, "gpu_memory"), ({"recompute": "yes"}, "recompute")])
def test_evaluate_checks_its_numbers(kw: dict, name: str) -> None:
    with pytest.raises((TypeError, ValueError)) as err:
        planner.evaluate("1f1b", 4, 8, costs=bk.Costs(), **kw)
    says(err, name)


def test_a_configuration_that_cannot_run_still_says_why() -> None:
    c = planner.evaluate("interleaved", 4, 9, v=2, costs=bk.Costs())
    assert not c.fits and c.makespan is None and "m" in c.reason


def test_limits_of_the_tables() -> None:
    table = planner.plan(4)
    with pytest.raises(ValueError) as err:
        table.to_text(limit=-1)
    says(err, "limit", ">= 0")
    with pytest.raises(TypeError) as err:
        table.to_text(limit="3")  # type: ignore[arg-type]
    says(err, "limit", "whole number")
    with pytest.raises(ValueError) as err:
        table.table(limit=-1)
    says(err, "limit")
    assert len(table.to_text(limit=0).splitlines()) == 3  # header, rule, "none"
    assert len(table.to_text(limit=np.int64(2)).splitlines()) == 4
    assert len(table.to_text(limit=None).splitlines()) == 2 + len(table.feasible)


def test_numpy_lists_are_accepted() -> None:
    assert len(planner.plan(np.int64(4), ms=np.array([4, 8]))) == len(planner.plan(4, ms=[4, 8]))
