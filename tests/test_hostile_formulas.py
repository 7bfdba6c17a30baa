"""Hostile input, the closed forms, counts and symbolic family (issue 20).

The law: a closed form refuses what the simulator refuses (hypothesis, every registered schedule).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bubblekit as bk
from bubblekit import symbolic as sy


def says(err: pytest.ExceptionInfo[BaseException], *words: str) -> None:
    msg = str(err.value)
    for w in words:
        assert re.search(rf"(?<![\w]){re.escape(w)}", msg), f"{w!r} not in {msg!r}"


# ------------------------------------------------------------------ the registry's closed forms and counts
@pytest.mark.parametrize("p,m,name", [(4, 0, "m"), (-3, 2, "p"), (0, 2, "p")])
def test_closed_form_refuses_sizes_that_do_not_exist(p: int, m: int, name: str) -> None:
    with pytest.raises(ValueError) as err:
        bk.spec("1f1b").closed_form(p, m)
    says(err, name, ">= 1")


def test_closed_form_refuses_types_and_the_schedules_own_rules() -> None:
    with pytest.raises(TypeError) as err:
        bk.spec("gpipe").closed_form("4", 2)  # type: ignore[arg-type]
    says(err, "p", "whole number")
    with pytest.raises(ValueError) as err:
        bk.spec("interleaved").closed_form(4, 8, v=0)
    says(err, "v", ">= 1")
    with pytest.raises(ValueError) as err:
        bk.spec("dualpipe").closed_form(3, 8)
    says(err, "p")
    assert bk.spec("1f1b").closed_form(4, 8)[0] == Fraction(3, 11)  # type: ignore[index]


@pytest.mark.parametrize("p,m", [(-4, 8), (4, 0), (4, -1)])
def test_n_actions_is_a_count_of_existing_sizes(p: int, m: int) -> None:
    with pytest.raises(ValueError) as err:
        bk.spec("1f1b").n_actions(p, m)
    says(err, "p" if p < 1 else "m", ">= 1")
    with pytest.raises(TypeError) as err:
        bk.spec("1f1b").n_actions("4", 8)  # type: ignore[arg-type]
    says(err, "p")
    assert bk.spec("zbv").n_actions(4, 8) == 3 * 4 * 2 * 8


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(bk.names()), st.integers(-2, 9), st.integers(-2, 20), st.sampled_from([None, 0, 1, 2, 3]))
def test_a_closed_form_refuses_what_the_simulator_refuses(name: str, p: int, m: int, v: int | None) -> None:
    entry = bk.spec(name)
    try:
        r = bk.simulate(bk.schedule(name, p, m, v))
    except (TypeError, ValueError) as built:
        with pytest.raises(type(built)):
            entry.closed_form(p, m, v)
        return
    form = entry.closed_form(p, m, v)
    if form is not None:
        assert 0 <= form[0] <= 1
    if form is not None and name in ("gpipe", "1f1b"):
        assert form[0] == r.bubble_ratio_exact


# ------------------------------------------------------------------ formulas
def test_min_micro_batch_agrees_with_sympy_on_float32_targets() -> None:
    for p, t in [(8, 0.7), (8, 0.3), (4, 0.3), (16, 0.1), (5, 0.45)]:
        for target in (t, np.float32(t), np.float64(t)):
            assert bk.min_micro_batch(p, target) == sy.min_micro_batch(p, target), (p, target)
    # p = 8, target 0.7: m = 3 has bubble 7/10 exactly, which meets 0.7 (the number as written)
    assert bk.bubble_ratio_exact(8, 3) == Fraction(7, 10)
    assert bk.min_micro_batch(8, np.float32(0.7)) == 3


@pytest.mark.parametrize("target", [0, 1, math.nan, -0.1])
def test_min_micro_batch_targets(target: float) -> None:
    with pytest.raises(ValueError) as err:
        bk.min_micro_batch(8, target)
    says(err, "target")
    with pytest.raises(ValueError) as err:
        sy.min_micro_batch(8, target)
    says(err, "target")


# ------------------------------------------------------------------ symbolic: values fit their symbols
@pytest.mark.parametrize("values,name", [({"p": -3, "m": 2}, "p"), ({"p": 1, "m": 0}, "m"), ({"p": 0, "m": 0}, "p"),
                                         ({"p": 2.5, "m": 2}, "p"), ({"p": 4, "m": 2, "v": 0}, "v")])
def test_evaluate_refuses_values_outside_the_symbols(values: dict, name: str) -> None:
    with pytest.raises(ValueError) as err:
        sy.evaluate(sy.BUBBLE_RATIO, **values)
    says(err, name, "whole number >= 1")


def test_evaluate_times_latencies_and_targets() -> None:
    base = {"p": 4, "m": 8, "t_f": 1, "t_b": 2}
    with pytest.raises(ValueError) as err:
        sy.evaluate(sy.makespan_1f1b(), **base, comm=-1)
    says(err, "comm", ">= 0")
    with pytest.raises(ValueError) as err:
        sy.evaluate(sy.makespan_1f1b(), **base, comm=math.nan)
    says(err, "comm", "finite")
    with pytest.raises(ValueError) as err:
        sy.evaluate(sy.makespan_1f1b(), **{**base, "t_f": 0}, comm=0)
    says(err, "t_f", "> 0")
    with pytest.raises(ValueError) as err:
        sy.evaluate(sy.BUBBLE_RATIO, p=4, m=2, target=2)
    says(err, "target", "between 0 and 1")
    assert sy.evaluate(sy.makespan_1f1b(), **base, comm=0) == 33


def test_evaluate_reads_text_and_refuses_what_is_not_a_formula() -> None:
    assert sy.evaluate("(p - 1)/(m + p - 1)", p=4, m=8) == Fraction(3, 11)
    assert sy.evaluate(sy.BUBBLE_RATIO, p=4, m=np.int64(8)) == Fraction(3, 11)
    with pytest.raises(ValueError) as err:
        sy.evaluate("p +", p=2)
    says(err, "expr", "p +")
    with pytest.raises(TypeError) as err:
        sy.evaluate(None)
    says(err, "expr", "sympy expression")
    assert sy.evaluate(sy.p ** Fraction(1, 2) * sy.m, p=4, m=1) == 2
    with pytest.raises(ValueError) as err:  # a complex result, not a number of the pipeline
        sy.evaluate((sy.m - 5) ** Fraction(1, 2), m=1)
    says(err, "no finite real value", "m=1")
    with pytest.raises(ValueError) as err:  # zoo: a division by zero inside the expression
        sy.evaluate(1 / (sy.m - 1), m=1)
    says(err, "no finite real value")


@pytest.mark.parametrize("call,name", [
    (lambda: sy.round_trips_1f1b(0, 4), "p"), (lambda: sy.round_trips_1f1b(4, 0), "m"),
    (lambda: sy.hops_1f1b(-2, 4), "p"), (lambda: sy.makespan_1f1b(4, 8, 1, 2, comm=-1), "comm"),
    (lambda: sy.makespan_1f1b(4, 8, 1, 2, comm=math.nan), "comm"), (lambda: sy.makespan_gpipe(4, 8, -1, 2), "t_f"),
    (lambda: sy.makespan_interleaved(4, 8, 0, 1, 2), "v"), (lambda: sy.gpipe_hops(0), "p"),
    (lambda: sy.chunk(1, 0), "v"), (lambda: sy.bubble_fraction(0, 0, 4), "makespan"),
    (lambda: sy.overhead_of(1), "ratio"), (lambda: sy.work(-1, 4), "t"),
])
def test_the_pieces_refuse_numbers_their_symbols_cannot_take(call, name: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError) as err:
        call()
    says(err, name)


def test_the_pieces_still_take_symbols_and_strings_are_refused() -> None:
    assert sy.round_trips_1f1b(4, 8) == 3
    assert sy.makespan_1f1b(sy.p, sy.m, 1, 2, comm=0).subs({sy.p: 4, sy.m: 8}) == 33
    with pytest.raises(TypeError) as err:
        sy.makespan_1f1b(4, 8, "a", 2)
    says(err, "t_f", "number")


def test_confirm_checks_its_grid_before_simulating() -> None:
    expr = sy.makespan_gpipe()
    for costs in ([(1,)], [(1, "a")], [(0, 1)], [(-1, 1)], 5, []):
        with pytest.raises((TypeError, ValueError)) as err:
            sy.confirm(expr, "gpipe", costs=costs)  # type: ignore[arg-type]
        says(err, "costs")
    for comm in ([math.nan], [-1], 5, []):
        with pytest.raises((TypeError, ValueError)) as err:
            sy.confirm(expr, "gpipe", comm=comm)  # type: ignore[arg-type]
        says(err, "comm")
    with pytest.raises(TypeError) as err:
        sy.confirm(None, "gpipe")
    says(err, "expr")
    assert sy.confirm(expr, "gpipe", p=np.array([2, 3]), m=[2], costs=[(0.5, 1)])
