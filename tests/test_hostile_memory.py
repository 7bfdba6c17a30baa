"""Hostile input, memory (issue 20): Precision and Model check themselves, tp divides the heads, the
frontier compares schedules of one stage count."""

from __future__ import annotations

import re

import numpy as np
import pytest

import bubblekit as bk
from bubblekit import memory as mem

MODEL = mem.Model(layers=32, hidden=4096, heads=32, seq=4096)
S = bk.schedule("1f1b", 4, 8)


def says(err: pytest.ExceptionInfo[BaseException], *words: str) -> None:
    msg = str(err.value)
    for w in words:
        assert re.search(rf"(?<![\w]){re.escape(w)}", msg), f"{w!r} not in {msg!r}"


@pytest.mark.parametrize("field,value,kind", [("weights", -2, ValueError), ("grads", 2.5, TypeError),
                                              ("optimizer", "12", TypeError)])
def test_a_precision_refuses_impossible_bytes(field: str, value: object, kind: type) -> None:
    args: dict[str, object] = {"name": "x", "weights": 2, "grads": 2, "optimizer": 12, "source": ""}
    args[field] = value
    with pytest.raises(kind) as err:
        mem.Precision(**args)  # type: ignore[arg-type]
    says(err, field)
    with pytest.raises(ValueError) as err:
        mem.Precision("x", 0, 0, 0, "")
    says(err, "at least one byte")


def test_tp_must_divide_the_heads() -> None:
    with pytest.raises(ValueError) as err:
        mem.memory_per_rank(S, MODEL, tp=3)
    says(err, "tp=3", "heads", "32")
    with pytest.raises(ValueError) as err:
        mem.activation_bytes_per_layer(MODEL, tp=5)
    says(err, "tp=5")
    assert mem.memory_per_rank(S, MODEL, tp=4).ranks[0].params == mem.memory_per_rank(S, MODEL).ranks[0].params / 4


def test_a_model_whose_heads_do_not_divide_its_width_is_refused() -> None:
    with pytest.raises(ValueError) as err:
        mem.Model(layers=32, hidden=4096, heads=33, seq=4096)
    says(err, "heads=33", "hidden=4096")


@pytest.mark.parametrize("kw,name,kind", [({"sequence_parallel": "yes"}, "sequence_parallel", TypeError),
                                          ({"flash": 2}, "flash", TypeError), ({"precision": 5}, "precision", TypeError),
                                          ({"recompute": "half"}, "recompute", ValueError),
                                          ({"w_held": 2}, "w_held", ValueError), ({"zero": 4}, "zero", ValueError)])
def test_memory_options_are_checked(kw: dict, name: str, kind: type) -> None:
    with pytest.raises(kind) as err:
        mem.memory_per_rank(S, MODEL, **kw)
    says(err, name)


def test_unknown_options_are_named() -> None:
    with pytest.raises(TypeError) as err:
        mem.fits(S, MODEL, 80e9, bogus=1)
    says(err, "bogus", "allowed")
    with pytest.raises(TypeError) as err:
        mem.frontier(MODEL, 4, 8, precison="bf16-grads")
    says(err, "precison", "precision")


def test_stage_layers_checks_layers_and_layout() -> None:
    with pytest.raises(ValueError) as err:
        mem.stage_layers(S, 0)
    says(err, "layers", ">= 1")
    assert mem.stage_layers(S, 32, layout=np.array([8, 8, 8, 8])) == (8, 8, 8, 8)


def test_frontier_by_stages_compares_one_stage_count() -> None:
    t = mem.frontier(MODEL, 4, 8, basis="stages")
    assert set(t.column("stages")) == {4}
    assert dict(zip(t.column("schedule"), t.column("devices")))["ZB-V"] == 2
    model24 = mem.Model(layers=24, hidden=4096, heads=32, seq=4096)
    t = mem.frontier(model24, 6, 12, basis="stages", schedules=[("1f1b", None), ("interleaved", 3)])
    assert t.column("stages") == [6, 6] and t.column("devices") == [6, 2]
    with pytest.raises(ValueError) as err:
        mem.frontier(MODEL, 3, 8, basis="stages")
    says(err, "basis='stages'", "n=3", "multiple of 2")
    with pytest.raises(ValueError) as err:
        mem.frontier(MODEL, 4, 8, schedules=[("interleaved", 1)])
    says(err, "v=1")
