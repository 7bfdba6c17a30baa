"""Hostile input, the Costs family (issue 20): a Costs validates itself when built; presets name bad options."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import bubblekit as bk
from bubblekit import Costs


def says(err: pytest.ExceptionInfo[BaseException], *words: str) -> None:
    msg = str(err.value)
    for w in words:
        assert re.search(rf"(?<![\w]){re.escape(w)}", msg), f"{w!r} not in {msg!r}"


def test_i_and_w_both_zero_are_refused_as_b_zero_is() -> None:
    with pytest.raises(ValueError) as err:
        Costs(f=1, i=0, w=0)
    says(err, "i + w", "> 0")
    with pytest.raises(ValueError) as err:
        Costs(f=1, b=0)
    says(err, "b", "> 0")
    with pytest.raises(ValueError) as err:
        Costs(f=(1, 1), i=(1, 0), w=(0, 0))
    says(err, "i + w")
    assert Costs(f=1, i=1, w=0).b == 1  # one of them zero is fine: W folded into I


@pytest.mark.parametrize("bad", [None, 5, ""])
def test_unit_is_a_non_empty_string(bad: object) -> None:
    with pytest.raises((TypeError, ValueError)) as err:
        Costs(unit=bad)  # type: ignore[arg-type]
    says(err, "unit", "string")


def test_name_and_extra_have_their_types() -> None:
    with pytest.raises(TypeError) as err:
        Costs(name=None)  # type: ignore[arg-type]
    says(err, "name", "string")
    with pytest.raises(TypeError) as err:
        Costs(extra=5)  # type: ignore[arg-type]
    says(err, "extra", "dict")


def test_per_stage_costs_must_share_one_length() -> None:
    with pytest.raises(ValueError) as err:
        Costs(f=[1, 2], b=[1])
    says(err, "per-stage", "f: 2", "b: 1")
    with pytest.raises(ValueError) as err:
        Costs(f=[1, 2, 3], activation=[1, 1])
    says(err, "activation: 2")


def test_numpy_values_mean_what_they_say() -> None:
    c = Costs(f=np.array([1.0, 2.0]), b=np.array([2, 4]))
    assert c.f == (1.0, 2.0) and c.b == (2, 4) and type(c.b[0]) is int
    assert Costs(f=np.int64(2)).f == 2 and type(Costs(f=np.int64(2)).f) is int
    assert Costs(f=np.float32(1.5)).f == 1.5
    r = bk.simulate(bk.schedule("1f1b", 2, 4), Costs(f=np.array([1, 1]), b=np.array([2, 2])))
    assert r.makespan == bk.simulate(bk.schedule("1f1b", 2, 4)).makespan
    with pytest.raises(ValueError) as err:
        Costs(f=np.array([[1, 2]]))
    says(err, "f", "one-dimensional")
    with pytest.raises(TypeError) as err:
        Costs(f=np.bool_(True))
    says(err, "f", "number")


@pytest.mark.parametrize("bad", ["1", {"a": 1}, {1, 2}, b"1"])
def test_costs_are_numbers_or_sequences(bad: object) -> None:
    with pytest.raises(TypeError) as err:
        Costs(f=bad)  # type: ignore[arg-type]
    says(err, "f")


def test_with_names_an_unknown_field() -> None:
    with pytest.raises(TypeError) as err:
        Costs().with_(comms=1)
    says(err, "comms", "comm", "allowed")
    with pytest.raises(ValueError) as err:
        Costs().with_(comm=-1)
    says(err, "comm", ">= 0")


def test_preset_names_and_options() -> None:
    for bad in (None, 5, ["uniform"]):
        with pytest.raises(TypeError) as err:
            bk.preset(bad)  # type: ignore[arg-type]
        says(err, "name", "uniform", "h200")
    with pytest.raises(ValueError) as err:
        bk.preset("unifrom")
    says(err, "uniform")
    with pytest.raises(TypeError) as err:
        bk.preset("uniform", bogus=1)
    says(err, "bogus", "allowed", "comm")
    with pytest.raises(TypeError) as err:
        bk.preset("h200", layers=2)
    says(err, "layers", "layers_per_rank")
    with pytest.raises(TypeError) as err:
        bk.preset("h200", hidden="4096")
    says(err, "hidden", "whole number")
    assert bk.preset("uniform", comm=1).comm == 1


def test_resolve_checks_its_counts() -> None:
    with pytest.raises(ValueError) as err:
        Costs().resolve(4, 0)
    says(err, "v", ">= 1")
    with pytest.raises(TypeError) as err:
        Costs().resolve("4", 1)  # type: ignore[arg-type]
    says(err, "n_stages")
    with pytest.raises(ValueError) as err:
        Costs(f=(1, 2)).resolve(3, 1)
    says(err, "f", "2 per-stage values", "3")


@pytest.mark.parametrize("field,value", [("comm", math.nan), ("comm", -1), ("w_held", 2), ("activation", -1),
                                         ("overlap", 2), ("fb", "min")])
def test_every_field_is_checked(field: str, value: object) -> None:
    with pytest.raises(ValueError) as err:
        Costs(**{field: value})  # type: ignore[arg-type]
    says(err, field)
