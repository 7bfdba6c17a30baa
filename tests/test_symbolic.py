"""bubblekit.symbolic against the simulator, and the lesson 01-03 schedule checks."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy as sp

import bubblekit as bk
import bubblekit.symbolic as sb
from bubblekit.course.checks import check
from bubblekit.course.checks.lesson01 import ScheduleGoal, compare_schedule, factory_line


def test_derivation_from_counting_gives_the_article_formulas() -> None:
    b = sb.bubble_fraction(sb.makespan_gpipe(), sb.busy_per_rank())
    assert sp.simplify(b - sb.BUBBLE_RATIO) == 0
    assert sp.simplify(1 - b - sb.UTILIZATION) == 0
    assert sp.simplify(sb.overhead_of(b) - sb.MEGATRON_OVERHEAD) == 0
    b_v = sb.bubble_fraction(sb.makespan_interleaved(), sb.busy_per_rank())
    assert sp.simplify(b_v - sb.INTERLEAVED_RATIO) == 0
    assert sp.limit(sb.UTILIZATION, sb.m, sp.oo) == 1
    assert sp.limit(sb.UTILIZATION, sb.p, sp.oo) == 0


@pytest.mark.parametrize("name", ["gpipe", "1f1b"])
def test_makespans_equal_the_simulator(name: str) -> None:
    for p in range(1, 7):
        for m in range(1, 11):
            for t_f, t_b, c in [(1, 2, Fraction(1, 2)), (3, 1, 2), (2, 2, 0)]:
                r = bk.simulate(bk.schedule(name, p, m), bk.Costs(f=t_f, b=t_b, comm=c))
                expr = sb.makespan_gpipe(comm=sb.comm) if name == "gpipe" else sb.makespan_1f1b()
                assert r.makespan == sb.evaluate(expr, p=p, m=m, t_f=t_f, t_b=t_b, comm=c), (p, m, t_f, t_b, c)


def test_interleaved_makespan_equals_the_simulator_when_m_is_a_multiple_of_p() -> None:
    for p in (2, 3, 4):
        for m in (p, 2 * p):
            for v in (2, 3):
                r = bk.simulate(bk.schedule("interleaved", p, m, v), bk.Costs(f=1, b=2))
                assert r.makespan == sb.evaluate(sb.makespan_interleaved(), p=p, m=m, v=v, t_f=1, t_b=2)


def test_min_micro_batch_solves_and_rounds_up() -> None:
    for p in range(1, 20):
        for target in (0.1, 0.2, 0.25, 0.5):
            m = sb.min_micro_batch(p, target)
            assert m == bk.min_micro_batch(p, target)
            assert bk.bubble_ratio_exact(p, m) <= Fraction(str(target))
            assert m == 1 or bk.bubble_ratio_exact(p, m - 1) > Fraction(str(target))
    # a decimal target is read exactly: (4 - 1)/(7 + 4 - 1) is exactly 3/10
    assert sb.min_micro_batch(4, 0.3) == 7
    assert sb.min_micro_batch(4, Fraction(3, 10), 1) == 7


def test_bad_input_names_the_parameter() -> None:
    with pytest.raises(TypeError, match="p must be a whole number"):
        sb.min_micro_batch("4", 0.2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="target must be strictly between 0 and 1"):
        sb.min_micro_batch(4, 1.5)
    with pytest.raises(TypeError, match="target must be a number"):
        sb.min_micro_batch(4, "0.2")
    with pytest.raises(ValueError, match="target must be finite"):
        sb.min_micro_batch(4, float("nan"))
    with pytest.raises(ValueError, match="unknown symbol name 'q'"):
        sb.evaluate(sb.BUBBLE_RATIO, q=1)
    with pytest.raises(ValueError, match=r"no value given for \['m'\]"):
        sb.evaluate(sb.BUBBLE_RATIO, p=4)


def test_factory_line_is_a_forward_only_pipeline() -> None:
    r = factory_line(3, 5)
    assert r.makespan == 7 and r.idle == (2, 2, 2)
    assert r.bubble_ratio_exact == bk.bubble_ratio_exact(3, 5)


def test_compare_schedule_names_the_problem_never_the_answer() -> None:
    costs = bk.preset("b=2f")
    goal = ScheduleGoal(2, 2, costs, bk.simulate(bk.schedule("gpipe", 2, 2), costs).makespan)
    ok, msg = compare_schedule("rank 0: 0F0 0B0 0F1 0B1\nrank 1: 1F0 1F1 1B0 1B1", goal)
    assert not ok and "deadlock" in msg and "rank 0 is blocked" in msg
    ok, msg = compare_schedule("rank 0: 0F0 0B0 0F1 0B1\nrank 1: 1F0 1B0 1F1 1B1", goal)
    assert not ok and "3 slots longer" in msg
    ok, msg = compare_schedule("rank 0: 0F0 0F1 0B0 0B1", goal)
    assert not ok and "p = 2" in msg
    ok, msg = compare_schedule(42, goal)
    assert not ok and "int" in msg
    assert compare_schedule(bk.schedule("gpipe", 2, 2).to_text(), goal) == (True, "")
    assert "makespan" not in repr(goal) and str(goal.makespan) not in repr(goal)


def test_lesson_exercises_accept_their_worked_answers() -> None:
    assert check("01.1", factory_line(3, 10).makespan)
    assert check("02.6", bk.schedule("1f1b", 3, 3).to_text())
    assert check("03.5", bk.schedule("1f1b", 3, 6).to_text())
    assert not check("03.5", bk.schedule("gpipe", 3, 6).to_text())  # too much memory on rank 0
    p, m, v = sp.symbols("p m v")  # plain symbols, no assumptions: compared by name
    assert check("03.2", m * v / (m * v + p - 1))
    assert not check("03.2", m / (m + p - 1))
