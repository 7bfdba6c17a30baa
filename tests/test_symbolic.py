"""bubblekit.symbolic against the simulator, lesson 03's derivation checks, and the lesson 01-03 schedule checks."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import nbformat
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st
from sympy.parsing.sympy_parser import implicit_multiplication_application, parse_expr, standard_transformations

import bubblekit as bk
import bubblekit.symbolic as sb
from bubblekit.course.checks import _registry, check, reset_progress
from bubblekit.course.checks.lesson01 import ScheduleGoal, compare_schedule, factory_line
from bubblekit.course.workspace import course_notebooks

ROOT = Path(__file__).resolve().parent.parent


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


# ----------------------------------------------------------------------------- the named pieces


def test_the_makespans_are_sums_of_the_named_pieces() -> None:
    p, m, v, t_f, t_b, c = sb.p, sb.m, sb.v, sb.t_f, sb.t_b, sb.c
    assert sp.simplify(sb.wave(t_f) - sb.work(t_f) - sb.crossing(t_f)) == 0
    assert sp.simplify(sb.wave(t_f) - (m + p - 1) * t_f) == 0
    assert sp.simplify(sb.makespan_gpipe(comm=c) - ((m + p - 1) * (t_f + t_b) + 2 * (p - 1) * c)) == 0
    assert sp.simplify(sb.idle_per_rank(sb.makespan_gpipe()) - (p - 1) * (t_f + t_b)) == 0
    assert sp.simplify(sb.makespan_interleaved() - (m + (p - 1) / v) * (t_f + t_b)) == 0
    assert sp.simplify(sb.chunk(t_b) - t_b / v) == 0
    assert sb.gpipe_hops() == 2 * (p - 1)
    assert sp.simplify(sb.solve_min_m(sb.BUBBLE_RATIO, sb.b_star) - (p - 1) * (1 - sb.b_star) / sb.b_star) == 0
    assert sb.c is sb.comm and sb.b_star is sb.target


@given(st.integers(1, 200), st.integers(1, 2000))
def test_1f1b_hops_equal_the_floor_form(p: int, m: int) -> None:
    """2(m + p - 1 - E), E = 1 + ceiling((m-1)/p), is the same count as 2(p-1) + 2 floor((m-1)(p-1)/p)."""
    hops = sb.hops_1f1b().subs({sb.p: p, sb.m: m})
    assert hops == 2 * (p - 1) + 2 * ((m - 1) * (p - 1) // p)
    assert sb.round_trips_1f1b().subs({sb.p: p, sb.m: m}) == 1 + -(-(m - 1) // p)


@given(st.integers(1, 7), st.integers(1, 20), st.sampled_from([(1, 1), (1, 2), (3, 1), (2, 5)]),
       st.sampled_from([Fraction(1, 10), Fraction(1, 2), 1, 3, 10]))
def test_1f1b_makespan_hops_and_round_trips_equal_the_simulator(p: int, m: int, fb: tuple[int, int],
                                                                 c: Any) -> None:
    """The derivation holds for any latency, also one much longer than a slot."""
    r = bk.simulate(bk.schedule("1f1b", p, m), bk.Costs(f=fb[0], b=fb[1], comm=c))
    values = dict(p=p, m=m, t_f=fb[0], t_b=fb[1], c=c)
    assert r.makespan == sb.evaluate(sb.makespan_1f1b(), **values)
    assert sb.critical_hops(r) == sb.evaluate(sb.hops_1f1b(), p=p, m=m)
    assert sb.round_trips(r) == sb.evaluate(sb.round_trips_1f1b(), p=p, m=m)


def test_gpipe_critical_path_hops_down_then_up() -> None:
    for p in range(1, 7):
        for m in (1, 2, 5, 9):
            r = bk.simulate(bk.schedule("gpipe", p, m), bk.Costs(f=1, b=2, comm=Fraction(1, 3)))
            assert sb.critical_hops(r) == 2 * (p - 1) and sb.round_trips(r) == 1
            path = [rank for rank, _ in r.critical_path]
            turn = path.index(p - 1)
            assert path[: turn + 1] == sorted(path[: turn + 1]) and path[turn:] == sorted(path[turn:], reverse=True)


def test_interleaved_formula_holds_for_every_legal_m_at_least_p_and_fails_below() -> None:
    b_v = sb.bubble_fraction(sb.makespan_interleaved(), sb.busy_per_rank())
    holds = sb.confirm(b_v, "interleaved", "bubble_ratio", p=range(2, 7), m=range(1, 19), v=(2, 3),
                       costs=[(1, 2)], where="m >= p")
    assert holds and holds.refused > 0
    assert any(k.m % k.p for k in holds.cases)  # not only multiples of p
    breaks = sb.confirm(b_v, "interleaved", "bubble_ratio", p=range(2, 7), m=range(1, 7), v=(2, 3),
                        costs=[(1, 2)], where="m < p")
    assert len(breaks.mismatches) == len(breaks.cases) > 0
    assert all(k.simulated > k.formula for k in breaks.cases)


# ----------------------------------------------------------------------------- confirm


def test_confirm_says_agreement_and_lists_disagreement() -> None:
    ok = sb.confirm(sb.makespan_gpipe(), ["gpipe", "1f1b"], p=range(1, 4), m=range(1, 4), costs=[(1, 2)])
    assert ok and len(ok.cases) == 18 and not ok.mismatches
    assert "sympy = simulator in all 18 cases" in repr(ok) and "GPipe, 1F1B" in repr(ok)
    wrong = sb.confirm(sb.busy_per_rank(), "gpipe", p=[1, 3], m=[2], costs=[(1, 2)])
    assert not wrong and len(wrong.mismatches) == 1 and "1 of 2 cases" in repr(wrong)
    table = wrong.table()
    assert table.column("m") == [2] and table.column("formula") == [6] and table.column("simulated") == [12]
    assert "schedule" not in table.columns and "GPipe" in table.title
    assert all(len(line) <= 90 for line in repr(ok).splitlines())
    hops = sb.confirm(sb.gpipe_hops(), "gpipe", "hops", p=[3], m=[2], comm=[Fraction(1, 100)])
    assert hops and hops.cases[0].simulated == 4


def test_confirm_refuses_bad_input_with_clear_messages() -> None:
    T = sb.makespan_gpipe()
    with pytest.raises(ValueError, match="quantity must be one of"):
        sb.confirm(T, "gpipe", "speed")
    with pytest.raises(ValueError, match="where must be one of"):
        sb.confirm(T, "gpipe", where="m > 2p")
    with pytest.raises(ValueError, match="no configuration left"):
        sb.confirm(T, "gpipe", p=[4], m=[1, 2], where="m >= p")
    with pytest.raises(ValueError, match="more than MAX_CASES"):
        sb.confirm(T, "gpipe", p=range(1, 100), m=range(1, 100))
    with pytest.raises(TypeError, match="p must be a whole number"):
        sb.confirm(T, "gpipe", p=[2.5])
    with pytest.raises(ValueError, match="unknown schedule name"):
        sb.confirm(T, "gpip")
    with pytest.raises(ValueError, match="no value given for"):
        sb.confirm(T + sb.target, "gpipe", p=[2], m=[2])
    with pytest.raises(TypeError, match="SimResult"):
        sb.critical_hops("not a result")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- lesson 03's derivation checks

#: Right answers a learner may write, in other forms than bubblekit's (plain symbols, floor for ceiling).
_P, _M, _V, _TF, _TB, _C, _B = sp.symbols("p m v t_f t_b c b^*")
RIGHT = {
    "03.7": [(_M + _P - 1) * _TF + (_M + _P - 1) * _TB],
    "03.8": [(_P - 1) / (_M + _P - 1), 1 - _M / (_M + _P - 1)],
    "03.9": [(_P - 1) / _B - (_P - 1), (_P - 1) * (1 - _B) / _B],
    "03.10": [(_M + (_P - 1) / _V) * (_TF + _TB)],
    "03.11": [(_M + _P - 1) * (_TF + _TB) + 2 * _C * (_P - 1) + 2 * _C * sp.floor((_M - 1) * (_P - 1) / _P),
              (_M + _P - 1) * (_TF + _TB) + 2 * _C * (_M + _P - 2 - sp.ceiling((_M - 1) / _P))],
}
#: Wrong answers and a word of the message that names the mistake.
WRONG = {
    "03.7": [((_M) * (_TF + _TB), "busy"), ((_M + _P) * (_TF + _TB), "one action too many"),
             ((_M + _P - 1) * _TF, "only the forward wave")],
    "03.8": [((_P - 1) / _M, "Megatron"), (_M / (_M + _P - 1), "busy share"), ((_P - 1) / (_M + _P), "")],
    "03.9": [(sp.ceiling((_P - 1) * (1 - _B) / _B), "rounded up"), ((_P - 1) / _B, "m + p - 1")],
    "03.10": [((_M + _P - 1) * (_TF + _TB), "without chunks"), ((_M + _P - 1) * (_TF + _TB) / _V, "all of its")],
    "03.11": [((_M + _P - 1) * (_TF + _TB) + 2 * (_P - 1) * _C, "GPipe"), ((_M + _P - 1) * (_TF + _TB), "no latency"),
              ((_M + _P - 1) * (_TF + _TB) + 2 * _C * (_M + _P - 2 - sp.floor((_M - 1) / _P)), "")],
}


@pytest.mark.parametrize("id", sorted(RIGHT))
def test_derivation_exercises_accept_any_right_form(id: str) -> None:
    reset_progress()
    for answer in RIGHT[id]:
        assert check(id, answer), (id, answer, check(id, answer))
    assert check(id, _registry.REGISTRY[id].expected())


@pytest.mark.parametrize("id", sorted(WRONG))
def test_derivation_exercises_name_the_mistake(id: str) -> None:
    reset_progress()
    for answer, word in WRONG[id]:
        result = check(id, answer)
        assert not result and word in result.detail, (id, answer, result)
    result = check(id, sp.Symbol("x"))
    assert not result and "unknown symbol" in result.detail
    assert not check(id, None) and check(id, None).status == "missing"


_SYMBOL_NAMES = ("p", "m", "v", "t_f", "t_b", "c", "b_star", "target")


def _formula_pieces(text: str) -> list[Any]:
    """Every run of up to 9 words of ``text`` that parses as a sympy expression in the course's symbols."""
    names = {n: sp.Symbol("b^*" if n in ("b_star", "target") else n) for n in _SYMBOL_NAMES}
    tight = re.sub(r"\s*([-+*/^])\s*", r"\1", text.replace("\u2212", "-").replace("·", "*"))
    tokens = [t.strip(".,;:'\"`") for t in re.split(r"[\s,;:]+|<=|>=|=|<|>", tight)]
    out = []
    for i in range(len(tokens)):
        for j in range(i + 1, min(i + 9, len(tokens)) + 1):
            piece = " ".join(tokens[i:j])
            if not re.search(r"[-+*/(]", piece) or not re.fullmatch(r"[\w*/+\-^(). ]+", piece):
                continue
            try:
                expr = parse_expr(piece.replace("^", "**"), local_dict=names,
                                  transformations=(*standard_transformations, implicit_multiplication_application))
            except Exception:
                continue
            if getattr(expr, "free_symbols", None) and all(s.name in names or s.name == "b^*"
                                                            for s in expr.free_symbols):
                out.append(expr)
    return out


def test_the_formula_detector_finds_formulas_in_words() -> None:
    pieces = _formula_pieces("Use (m + p - 1)(t_f + t_b) here, or 2 (p - 1) c.")
    assert any(sp.simplify(e - (_M + _P - 1) * (_TF + _TB)) == 0 for e in pieces)


@pytest.mark.parametrize("id", [i for i in _registry.ids("03")])
def test_lesson_03_hints_never_state_the_expression_that_answers(id: str) -> None:
    ex = _registry.REGISTRY[id]
    expected = ex.expected()
    if not isinstance(expected, sp.Basic) or expected.is_number:
        return
    texts = list(ex.hints) + [h for _, tiers in ex.kind_hints for h in tiers]
    by_name = {s.name: s for s in expected.free_symbols}
    for text in texts:
        for piece in _formula_pieces(text):
            piece = piece.subs({s: by_name.get(s.name, s) for s in piece.free_symbols})
            assert sp.simplify(piece - expected) != 0, f"{id}: {text!r} states the answer"


# ----------------------------------------------------------------------------- lesson 03 on the page


def _lesson_03() -> nbformat.NotebookNode:
    shipped = {nb.path: nb.text for nb in course_notebooks(ROOT, ("notebooks",))}  # the English lesson, not its zh twin
    return nbformat.reads(shipped[ROOT / "notebooks" / "03_the_bubble_formula.ipynb"], as_version=4)


def test_lesson_03_lines_fit_without_sideways_scrolling() -> None:
    """Code lines and printed output lines are at most 90 characters: what a learner reads (widget cells,
    collapsed check cells and outputs that render as HTML, such as tables, excepted)."""
    for i, cell in enumerate(_lesson_03().cells):
        if cell.cell_type != "code" or cell.source.startswith("# NBVAL_IGNORE_OUTPUT") \
                or "nbval-ignore-output" in cell.metadata.get("tags", []) \
                or cell.metadata.get("jupyter", {}).get("source_hidden"):
            continue
        long = [ln for ln in cell.source.splitlines() if len(ln) > 90]
        for out in cell.get("outputs", []):
            if "text/html" in out.get("data", {}):
                continue
            text = out.get("text", "") if out.get("output_type") == "stream" else out.get("data", {}).get("text/plain", "")
            long += [ln for ln in "".join(text).splitlines() if len(ln) > 90]
        assert not long, f"cell {i}: lines over 90 characters: {long}"


def test_lesson_03_core_cells_carry_workshop_slides() -> None:
    cells = _lesson_03().cells
    recap = next(i for i, c in enumerate(cells) if c.cell_type == "markdown" and c.source.startswith("## Recap"))
    for i, cell in enumerate(cells[: recap + 1]):
        if "check" in cell.metadata.get("tags", []):  # a collapsed check cell is not shown in a workshop
            assert cell.metadata.get("slideshow", {}).get("slide_type") == "skip"
            continue
        assert "workshop" in cell.metadata.get("tags", []), f"cell {i} lacks the workshop tag"
        assert cell.metadata.get("slideshow", {}).get("slide_type") in ("slide", "subslide", "fragment", "-", "skip")
    for i, cell in enumerate(cells[recap + 1:-1], start=recap + 1):
        assert cell.metadata["slideshow"]["slide_type"] == "skip", f"deep-dive cell {i} is not skipped"
        assert "workshop" not in cell.metadata.get("tags", [])
