"""Tests for the exercise self-checks (:mod:`bubblekit.course.checks`).

Temporary exercises use lesson number 99, which no lesson module uses, and are removed
after each test.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sympy

import bubblekit as bk
from bubblekit.course.checks import CheckResult, _registry, check, exercise, ids, reset_progress

CHECKS_DIR = Path(_registry.__file__).parent


@pytest.fixture
def temp_ids() -> Iterator[list[str]]:
    """Collect ids registered by a test and unregister them afterwards (the session starts fresh)."""
    reset_progress()
    made: list[str] = []
    yield made
    for i in made:
        _registry.unregister(i)
    reset_progress()


def register(temp_ids: list[str], id: str, value: object, **kw: object) -> None:
    exercise(id, hint=kw.pop("hint", "Think about rank 0."), **kw)(lambda: value)  # type: ignore[arg-type]
    temp_ids.append(id)


def texts(result: CheckResult) -> list[str]:
    """Every text a learner can see or reach on a result."""
    return [repr(result), str(result), result._repr_html_(), result.message, result.detail, result.hint,
            repr(vars(result)) if hasattr(result, "__dict__") else ""]


# ----------------------------------------------------------------------------- basics


def test_correct_number_is_truthy_and_says_correct(temp_ids: list[str]) -> None:
    register(temp_ids, "99.1", bk.bubble_ratio(4, 8))
    res = check("99.1", bk.bubble_ratio(4, 8))
    assert res and res.correct and res.status == "correct"
    assert repr(res) == "✓ 99.1 correct"
    page = res._repr_html_()
    assert "✓" in page and "<b>99.1</b> correct" in page


def test_wrong_number_is_falsy_with_hint_and_no_value(temp_ids: list[str]) -> None:
    expected = bk.bubble_ratio(4, 8)
    register(temp_ids, "99.2", expected, hint="Count the idle slots of rank 0 first.")
    res = check("99.2", 0.5)
    assert not res and res.status == "wrong"
    assert repr(res).startswith("✗ 99.2 not yet")
    assert "hint: Count the idle slots of rank 0 first." in repr(res)
    for t in texts(res):
        for form in (str(expected), f"{expected:.3f}", f"{expected:.2f}", f"{expected:.4g}", "3/11", "0.27"):
            assert form not in t


@pytest.mark.parametrize("answer", [None, ..., NotImplemented])
def test_missing_answer_is_no_answer_yet(temp_ids: list[str], answer: object) -> None:
    register(temp_ids, "99.3", 1.0)
    res = check("99.3", answer)
    assert not res and res.status == "missing"
    assert "no answer yet" in repr(res) and "hint:" in repr(res)


def test_placeholder_function_raising_not_implemented_is_no_answer_yet(temp_ids: list[str]) -> None:
    register(temp_ids, "99.4", 3)

    def answer() -> int:
        # YOUR CODE HERE
        raise NotImplementedError()

    res = check("99.4", answer)
    assert res.status == "missing" and not res


def test_answer_function_is_called(temp_ids: list[str]) -> None:
    register(temp_ids, "99.5", 12)
    assert check("99.5", lambda: 12)
    assert not check("99.5", lambda: 13)


def test_wrong_direction_is_said(temp_ids: list[str]) -> None:
    register(temp_ids, "99.6", 10.0)
    assert "too high" in check("99.6", 11.0).detail
    assert "too low" in check("99.6", 9.0).detail


# ----------------------------------------------------------------------------- tolerance


def test_tolerances(temp_ids: list[str]) -> None:
    register(temp_ids, "99.7", 1.0)  # default rel_tol=1e-9
    assert check("99.7", 1.0 + 1e-12)
    assert not check("99.7", 1.0 + 1e-6)
    register(temp_ids, "99.8", 1.0, rel_tol=0.01)
    assert check("99.8", 1.005)
    assert not check("99.8", 1.02)
    register(temp_ids, "99.9", 0.0, abs_tol=1e-3)
    assert check("99.9", 5e-4)
    assert not check("99.9", 5e-3)


def test_number_accepts_int_float_fraction_numpy_sympy(temp_ids: list[str]) -> None:
    register(temp_ids, "99.10", 0.25)
    for ok in (0.25, Fraction(1, 4), np.float64(0.25), sympy.Rational(1, 4), sympy.Float(0.25)):
        assert check("99.10", ok), ok
    register(temp_ids, "99.11", 8)
    assert check("99.11", 8.0) and check("99.11", np.int64(8))


def test_number_type_mismatch_is_explained(temp_ids: list[str]) -> None:
    register(temp_ids, "99.12", 0.25)
    assert check("99.12", "0.25")  # text holding a number is a number (grading policy)
    assert "not one" in check("99.12", "a quarter").detail
    assert "list" in check("99.12", [0.25]).detail
    assert "NaN" in check("99.12", float("nan")).detail
    assert not check("99.12", True)


def test_percentage_instead_of_fraction_is_spotted(temp_ids: list[str]) -> None:
    register(temp_ids, "99.13", bk.bubble_ratio(4, 12))
    res = check("99.13", bk.bubble_ratio(4, 12) * 100)
    assert not res and "percentage" in res.detail


# ----------------------------------------------------------------------------- exact / text / sequences


def test_fraction_is_exact_only_where_asked(temp_ids: list[str]) -> None:
    expected = bk.bubble_ratio_exact(4, 8)
    register(temp_ids, "99.14", expected, exact=True)
    assert check("99.14", Fraction(expected.numerator, expected.denominator))
    assert check("99.14", sympy.Rational(expected.numerator, expected.denominator))
    assert check("99.14", f"{expected.numerator}/{expected.denominator}")
    close = check("99.14", float(expected))
    assert not close and close.status == "close" and "exact" in close.detail
    assert not check("99.14", expected + Fraction(1, 10**12))
    register(temp_ids, "99.15", Fraction(2), exact=True)
    assert check("99.15", 2)
    register(temp_ids, "99.44", expected)  # the same value where exactness was never asked
    assert check("99.44", float(expected)) and check("99.44", 0.273) and check("99.44", expected)


def test_strings_ignore_case_and_spaces(temp_ids: list[str]) -> None:
    register(temp_ids, "99.16", "Zero Bubble H1")
    assert check("99.16", "zero bubble h1")
    assert check("99.16", "  ZERO  bubble\tH1 ")
    assert check("99.16", "zerobubbleh1")
    assert not check("99.16", "zero bubble h2")
    assert "str" in check("99.16", 1).detail


def test_sequences_elementwise(temp_ids: list[str]) -> None:
    expected = [bk.bubble_ratio(4, m) for m in (4, 8, 16)]
    register(temp_ids, "99.17", expected)
    assert check("99.17", tuple(expected))
    assert check("99.17", np.array(expected))
    assert check("99.17", [x * (1 + 1e-12) for x in expected])
    bad = check("99.17", [expected[0], expected[1], 0.5])
    assert not bad and "item 3" in bad.detail  # 1-based: the third number
    short = check("99.17", expected[:2])
    assert not short and "3 items" in short.detail
    assert "sequence" in check("99.17", "abc").detail
    register(temp_ids, "99.18", np.array([1, 2, 3]))
    assert check("99.18", [1, 2, 3])


def test_nested_sets_dicts_bools_and_objects(temp_ids: list[str]) -> None:
    register(temp_ids, "99.19", {"gpipe": bk.bubble_ratio(4, 8), "1f1b": bk.bubble_ratio(4, 8)})
    assert check("99.19", {"1f1b": bk.bubble_ratio(4, 8), "gpipe": bk.bubble_ratio(4, 8)})
    assert "keys" in check("99.19", {"gpipe": 0.1}).detail
    assert "'1f1b'" in check("99.19", {"gpipe": bk.bubble_ratio(4, 8), "1f1b": 0.9}).detail
    register(temp_ids, "99.20", frozenset({"F", "B"}))
    assert check("99.20", {"B", "F"}) and check("99.20", ["F", "B"])
    assert "missing" in check("99.20", {"F"}).detail
    register(temp_ids, "99.21", True)
    assert check("99.21", True) and not check("99.21", False) and not check("99.21", 1)
    register(temp_ids, "99.22", bk.schedule("1f1b", p=2, m=4))
    assert check("99.22", bk.schedule("1f1b", p=2, m=4))
    assert not check("99.22", bk.schedule("gpipe", p=2, m=4))


def test_sympy_expression(temp_ids: list[str]) -> None:
    p, m = sympy.symbols("p m", positive=True)
    register(temp_ids, "99.23", (p - 1) / (m + p - 1))
    assert check("99.23", 1 - m / (m + p - 1))
    assert not check("99.23", (p - 1) / m)
    assert not check("99.23", "not ( an expression")


def test_custom_compare(temp_ids: list[str]) -> None:
    def same_makespan(answer: object, expected: object) -> tuple[bool, str]:
        assert isinstance(answer, bk.Schedule) and isinstance(expected, bk.Schedule)
        ok = bk.simulate(answer).makespan == bk.simulate(expected).makespan
        return ok, "" if ok else "your schedule takes longer"

    register(temp_ids, "99.24", bk.schedule("1f1b", p=2, m=4), compare=same_makespan)
    assert check("99.24", bk.schedule("gpipe", p=2, m=4))  # same makespan under equal costs
    slow = bk.Schedule.from_text("rank 0: 0F0 0B0 0F1 0B1 0F2 0B2 0F3 0B3\n"
                                 "rank 1: 1F0 1B0 1F1 1B1 1F2 1B2 1F3 1B3")
    slower = bk.simulate(slow).makespan > bk.simulate(bk.schedule("1f1b", p=2, m=4)).makespan
    assert slower
    res = check("99.24", slow)
    assert not res and "takes longer" in res.detail
    register(temp_ids, "99.25", 1, compare=lambda a, e: a == e)
    assert check("99.25", 1) and not check("99.25", 2)
    register(temp_ids, "99.26", 1, compare=lambda a, e: "yes")
    with pytest.raises(TypeError, match="99.26"):
        check("99.26", 1)


def test_custom_compare_not_implemented_is_missing(temp_ids: list[str]) -> None:
    def cmp(answer: object, expected: object) -> tuple[bool, str]:
        assert callable(answer)
        return answer() == expected, ""

    register(temp_ids, "99.27", 5, compare=cmp)

    def todo() -> int:
        raise NotImplementedError()

    assert check("99.27", todo).status == "missing"
    assert check("99.27", lambda: 5)


# ----------------------------------------------------------------------------- errors


def test_unknown_id_lists_close_ids(temp_ids: list[str]) -> None:
    register(temp_ids, "99.30", 1)
    register(temp_ids, "99.31", 1)
    with pytest.raises(ValueError, match=r"unknown exercise id '99\.3'.*99\.3[01]"):
        check("99.3", 1)
    with pytest.raises(TypeError, match="id"):
        check(99.3, 1)  # type: ignore[arg-type]


def test_registration_validates(temp_ids: list[str]) -> None:
    with pytest.raises(ValueError, match="NN.k"):
        exercise("3.2", hint="h")
    with pytest.raises(ValueError, match="hint"):
        exercise("99.40", hint=" ")
    with pytest.raises(ValueError, match="rel_tol"):
        exercise("99.40", hint="h", rel_tol=-1)
    with pytest.raises(TypeError, match="compare"):
        exercise("99.40", hint="h", compare=3)  # type: ignore[arg-type]
    register(temp_ids, "99.41", 1)
    with pytest.raises(ValueError, match="registered twice"):
        exercise("99.41", hint="h")(lambda: 2)


def test_broken_expected_function_blames_the_author_not_the_learner(temp_ids: list[str]) -> None:
    exercise("99.42", hint="h")(lambda: 1 / 0)
    temp_ids.append("99.42")
    with pytest.raises(RuntimeError, match="99.42.*bug"):
        check("99.42", 1)


def test_result_stores_no_expected_value(temp_ids: list[str]) -> None:
    secret = 0.123456789
    register(temp_ids, "99.43", secret)
    for answer in (0.5, None, "x", [1], secret):
        res = check("99.43", answer)
        assert set(vars(res)) == {"id", "status", "detail", "hint", "note", "tier", "language"} if hasattr(res, "__dict__") else True
        for t in texts(res):
            assert "0.123" not in t and "123456789" not in t


# ----------------------------------------------------------------------------- lesson modules


def test_every_lesson_module_is_imported_and_registers() -> None:
    lesson_files = sorted(CHECKS_DIR.glob("lesson*.py"))
    all_ids = ids()
    for path in lesson_files:
        assert f"bubblekit.course.checks.{path.stem}" in sys.modules, path.name
    assert all_ids == sorted(all_ids, key=_registry._id_key)


def _numeric_literal(node: ast.expr | None) -> bool:
    """``3``, ``-0.25``, ``(1, 2)``, ``[0.5, 1]``: a figure typed by hand instead of computed."""
    if isinstance(node, ast.UnaryOp):
        return _numeric_literal(node.operand)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(_numeric_literal(e) for e in node.elts)
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex)) and not isinstance(node.value, bool)


def test_lesson_modules_use_matching_lesson_numbers_and_no_literals() -> None:
    """lessonNN.py registers only NN.k ids, and no expected function just returns a typed number.

    (A multiple-choice letter or a word may be a literal: bubblekit cannot compute a concept.)
    """
    for path in sorted(CHECKS_DIR.glob("lesson*.py")):
        number = path.stem.removeprefix("lesson")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and getattr(deco.func, "id", "") == "exercise" and deco.args:
                    arg = deco.args[0]
                    assert isinstance(arg, ast.Constant) and str(arg.value).startswith(number + "."), (
                        f"{path.name}: exercise id {ast.unparse(arg)} is not in lesson {number}")
                    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
                    literal = len(body) == 1 and isinstance(body[0], ast.Return) and _numeric_literal(body[0].value)
                    assert not literal, f"{path.name}: exercise {arg.value} returns a typed number; compute it with bubblekit"


def test_every_registered_exercise_computes_and_accepts_its_own_value() -> None:
    for i in ids():
        ex = _registry.REGISTRY[i]
        value = ex.expected()
        assert value is not None, i
        if ex.compare is None:  # a custom compare may want a different answer type (a function, text)
            assert check(i, value), f"exercise {i} rejects its own expected value"


@pytest.mark.parametrize(("source", "typed"), [
    ("0.25", True), ("-3", True), ("(1, 2.5)", True), ("[0.5, -1]", True),
    ("bk.bubble_ratio(4, 8)", False), ("'A'", False), ("True", False), ("[]", False), ("(1, bk.x)", False),
])
def test_numeric_literal_detector(source: str, typed: bool) -> None:
    assert _numeric_literal(ast.parse(source, mode="eval").body) is typed


def test_bank_titles_are_the_bank_notebooks_headings() -> None:
    """lesson10.BANK's titles are the headings of the interview bank, English and Chinese (one source each)."""
    import json
    import re
    from pathlib import Path

    from bubblekit.course.checks import lesson10

    root = Path(__file__).resolve().parent.parent

    def headings(path: Path) -> dict[str, str]:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        found = (re.match(r"###\s+(10\.\d+)\s+·\s+(.+)", "".join(c["source"]).split("\n")[0])
                 for c in cells if c["cell_type"] == "markdown")
        return {m.group(1): m.group(2).strip() for m in found if m}

    en = headings(root / "solutions" / "10_interview_bank.ipynb")
    zh = headings(root / "solutions" / "zh" / "10_interview_bank.ipynb")
    assert {item.id for item in lesson10.BANK} == set(en) == set(zh)
    for item in lesson10.BANK:
        assert (item.title_en, item.title_zh) == (en[item.id], zh[item.id]), item.id
