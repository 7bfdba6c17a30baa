"""Hostile input, the schedules and actions family (issue 20): a Schedule checks its shape when built,
the dependency rule checks its layout, and schedule text reads ASCII digits only."""

from __future__ import annotations

import re

import numpy as np
import pytest

import bubblekit as bk
from bubblekit import Action, Schedule, ScheduleError
from bubblekit.schedules import legal_ms

F0, B0 = Action(0, "F", 0), Action(0, "B", 0)


def says(err: pytest.ExceptionInfo[BaseException], *words: str) -> None:
    msg = str(err.value)
    for w in words:
        assert re.search(rf"(?<![\w]){re.escape(w)}", msg), f"{w!r} not in {msg!r}"


# ------------------------------------------------------------------ the dependency rule
@pytest.mark.parametrize("n", [0, -3])
def test_needs_refuses_no_stages(n: int) -> None:
    with pytest.raises(ValueError) as err:
        bk.needs(Action(1, "F", 0), n)
    says(err, "n_stages", ">= 1")


def test_needs_refuses_pipes_that_do_not_divide_the_stages() -> None:
    with pytest.raises(ValueError) as err:
        bk.needs(Action(1, "F", 0), 4, pipes=8)
    says(err, "pipes=8", "divide", "n_stages=4")
    with pytest.raises(ValueError) as err:
        bk.needs(Action(1, "F", 0), 4, pipes=0)
    says(err, "pipes", ">= 1")
    with pytest.raises(TypeError) as err:
        bk.needs(Action(1, "F", 0), "4")  # type: ignore[arg-type]
    says(err, "n_stages", "whole number")
    assert bk.needs(Action(1, "F", 0), np.int64(4)) == bk.needs(Action(1, "F", 0), 4)


def test_needs_refuses_a_stage_outside_the_stages_and_text() -> None:
    with pytest.raises(ValueError) as err:
        bk.needs(Action(7, "F", 0), 4)
    says(err, "stage 7", "0..3")
    with pytest.raises(TypeError) as err:
        bk.needs("1F0", 4)  # type: ignore[arg-type]
    says(err, "action", "Action")
    with pytest.raises(ValueError) as err:
        bk.inputs(Action(1, "F", 0), 0)
    says(err, "n_stages")
    with pytest.raises(TypeError) as err:
        bk.produces("0F0")  # type: ignore[arg-type]
    says(err, "action")


def test_memory_delta_checks_its_numbers() -> None:
    with pytest.raises(ValueError) as err:
        bk.memory_delta(F0, activation=-1)
    says(err, "activation", ">= 0")
    with pytest.raises(ValueError) as err:
        bk.memory_delta(F0, w_held=2)
    says(err, "w_held", "between 0 and 1")
    with pytest.raises(ValueError) as err:
        bk.memory_delta(Action(5, "F", 0), activation=[1, 2])
    says(err, "stage 5", "activation", "2 per-stage values")


# ------------------------------------------------------------------ text: ASCII digits only
@pytest.mark.parametrize("text", ["٣F1", "３F１", "0F٠", "1B۳"])
def test_other_scripts_digits_are_refused_not_misread(text: str) -> None:
    with pytest.raises(ValueError) as err:
        bk.parse_action(text)
    says(err, "cannot read action", "<stage><kind><microbatch>")


@pytest.mark.parametrize("text", ["rank ٠: 0F0 0B0", "rank 0: ０F0 0B0", "0F٠ 0B٠", "rank ١: 0F0 0B0"])
def test_schedule_text_with_other_digits_is_refused(text: str) -> None:
    with pytest.raises(ScheduleError) as err:
        Schedule.from_text(text)
    says(err, "line 1", "cannot read action")


# ------------------------------------------------------------------ Schedule built by hand
def one(**kw: object) -> Schedule:
    args: dict[str, object] = {"name": "x", "p": 1, "m": 1, "placement": (0,), "orders": ((F0, B0),)}
    args.update(kw)
    return Schedule(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize("field,value,kind", [("p", "2", TypeError), ("p", 0, ValueError), ("m", 0, ValueError),
                                              ("m", 1.0, TypeError), ("pipes", 0, ValueError),
                                              ("name", None, TypeError)])
def test_a_hand_built_schedule_checks_its_numbers(field: str, value: object, kind: type) -> None:
    with pytest.raises(kind) as err:
        one(**{field: value})
    says(err, field)


def test_a_hand_built_schedule_checks_its_actions_and_placement() -> None:
    with pytest.raises(TypeError) as err:
        one(orders=(("0F0", "0B0"),))
    says(err, "orders[0]", "Action")
    with pytest.raises(ValueError) as err:
        one(placement=(5,))
    says(err, "placement", "rank 5", "0..0")
    with pytest.raises(TypeError) as err:
        one(placement=(True,))
    says(err, "placement[0]", "whole number")
    with pytest.raises(ValueError) as err:
        one(orders=((F0, B0), ()))
    says(err, "orders", "p=1")
    s = one(placement=[0], orders=[[F0, B0]])
    assert s.placement == (0,) and s.orders == ((F0, B0),)  # lists become tuples (the type is frozen)
    assert one(placement=np.array([0]), p=np.int64(1)).p == 1


def test_fields_of_the_wrong_type_inside_actions_never_reach_the_engine() -> None:
    bad_mb = one(orders=((Action(0, "F", 0.0), Action(0, "B", 0.0)),))  # type: ignore[arg-type]
    with pytest.raises(ScheduleError) as err:
        bk.simulate(bad_mb, validate=False)
    says(err, "stage and microbatch are ints", "float")
    bad_stage = one(orders=((Action("0", "F", 0), B0),))  # type: ignore[arg-type]
    for validate in (True, False):
        with pytest.raises(ScheduleError) as err:
            bk.simulate(bad_stage, validate=validate)
        says(err, "rank 0")


def test_from_text_accepts_a_numpy_placement() -> None:
    s = Schedule.from_text("0F0 0B0", placement=np.array([0]))
    assert s.placement == (0,)
    with pytest.raises(TypeError) as err:
        Schedule.from_text("0F0 0B0", placement=np.array([0.5]))
    says(err, "placement[0]", "whole number")


# ------------------------------------------------------------------ registry sizes
def test_legal_ms_has_a_size_limit_naming_it() -> None:
    with pytest.raises(ValueError) as err:
        legal_ms("interleaved", 4, up_to=10**8)
    says(err, "up_to", "<= 100000")
    assert legal_ms("1f1b", np.int64(4), up_to=np.int64(5)) == [1, 2, 3, 4, 5]
