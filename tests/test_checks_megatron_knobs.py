"""Exercises 05.8 / 05.9 and bank questions 10.45 / 10.46 (issue 26): Megatron's layout string and microbatch groups.

A fair check (as ``tests/test_grading_fair.py`` asks of every exercise): each defensible answer is accepted however it
is written (spaces, full-width characters of a Chinese input method, a parsed layout, numbers as int, float, text or
with their unit), each recognised mistake is named in English and in Chinese, no message gives the expected value,
hints give a method, and a bad input gets a clear refusal.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pytest

import bubblekit as bk
from bubblekit.course.checks import check, lesson05, lesson10, reset_progress
from bubblekit.course.checks._registry import REGISTRY, load_lessons
from bubblekit.i18n import using_language

load_lessons()


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    reset_progress()
    yield
    reset_progress()


def both(id: str, answer: Any) -> tuple[Any, Any]:
    reset_progress()
    en = check(id, answer)
    reset_progress()
    with using_language("zh"):
        zh = check(id, answer)
    return en, zh


# ----------------------------------------------------------------------------- 05.8


def test_05_8_the_balanced_layout_is_the_expected_step() -> None:
    best = lesson05.best_layout()
    assert best.stages == ("E" + "t" * 6, "t" * 6, "t" * 6, "ttL")
    costs = lesson05.layout_costs(best)
    assert [f + b for f, b in zip(costs.f, costs.b)] == [18, 18, 18, 18]   # type: ignore[arg-type]
    assert REGISTRY["05.8"].expected() == lesson05.layout_step(best) == bk.simulate(
        bk.schedule("1f1b", 4, 16), bk.Costs(f=6, b=12)).makespan       # equal stages: the textbook step


@pytest.mark.parametrize("answer", [
    "Et*6|t*6|t*6|t*2L", "E t*6 | t*6 | t*6 | t*2 L", "Etttttt|tttttt|tttttt|ttL",
    "Et＊6｜t＊6｜t＊6｜t＊2L", "'Et*6|t*6|t*6|t*2L'", "Et*6,|t*6|t*6|t*2L", "E(ttt)*2|t*6|t*6|t*2L",
])
def test_05_8_accepts_the_balanced_layout_however_written(answer: str) -> None:
    en, zh = both("05.8", answer)
    assert en and zh, (answer, en.detail)


def test_05_8_accepts_a_parsed_layout() -> None:
    assert check("05.8", bk.layout.parse_layout("Et*6|t*6|t*6|t*2L", 4))


@pytest.mark.parametrize(("answer", "en_said", "zh_said"), [
    ("Et*5|t*5|t*5|t*5L", "the even split", "平均切分"),
    ("Et*7|t*6|t*5|t*2L", "its slowest stage is stage 0", "最慢的是第 0 级"),
    ("Et*6|t*6|t*6|t*3L", "holds 21 transformer layers", "21 个 Transformer 层"),
    ("E|t*6|t*6|t*8L", "stage 0 holds no layer", "第 0 级一层都没有"),
    ("Et*3|t*3|t*3|t*3|t*2|t*2|t*2|t*2L", "8 stages", "8 个流水级"),
    ("Et*6|t*6|t*6|t*2", "would refuse this layout", "不接受这个布局"),
    ("Ex*6|t*6|t*6|t*2L", "would refuse this layout", "不接受这个布局"),
    ("Et*9999999|t|t|tL", "would refuse this layout", "不接受这个布局"),
    (20, "give the layout as a string", "请把布局写成字符串"),
    (["Et*6", "t*6", "t*6", "t*2L"], "give the layout as a string", "请把布局写成字符串"),
])
def test_05_8_names_each_mistake_in_both_languages(answer: Any, en_said: str, zh_said: str) -> None:
    en, zh = both("05.8", answer)
    assert not en and not zh
    assert en_said in en.detail and zh_said in zh.detail, (en.detail, zh.detail)
    expected = str(REGISTRY["05.8"].expected())
    assert expected not in en.detail and expected not in zh.detail


def test_05_8_an_empty_answer_is_not_counted() -> None:
    assert not check("05.8", "") and not check("05.8", "   ")


def test_05_8_hints_give_a_method_not_the_layout() -> None:
    for tier in REGISTRY["05.8"].hints:
        for lang in ("en", "zh"):
            text = tier.say(lang) if hasattr(tier, "say") else str(tier)
            assert "t*6" not in text and "t*2L" not in text


def test_05_8_helpers_refuse_what_is_not_a_layout() -> None:
    with pytest.raises(TypeError, match="layout must be a PipelineLayout"):
        lesson05.layout_costs("Et*6|t*6|t*6|t*2L")   # type: ignore[arg-type]
    with pytest.raises(TypeError, match="layout must be a PipelineLayout"):
        lesson05.layout_step(None)   # type: ignore[arg-type]
    with pytest.raises(ValueError, match="p = 4"):
        lesson05.layout_step(bk.layout.parse_layout("Et*10|t*10L", 2))
    with pytest.raises(ValueError, match="does no work"):
        lesson05.layout_costs(bk.layout.parse_layout("E|t*10|t*10|L", 4))


@pytest.mark.parametrize("answer", [None, 3.5, b"Et|tL", object(), "", "Et*6|t*6", "((t)*2)*2"])
def test_read_layout_says_why_it_cannot_read(answer: Any) -> None:
    layout, why = lesson05.read_layout(answer, 4)
    assert layout is None and why


# ----------------------------------------------------------------------------- 05.9


def test_05_9_the_premise_the_text_states() -> None:
    steps = lesson05.group_steps()
    assert set(steps) == set(lesson05.group_choices()) and 8 in steps and 32 in steps and 13 not in steps
    best = min(steps.values())
    assert REGISTRY["05.9"].expected() == 16 and steps[16] == best == steps[32] < steps[8]
    assert all(steps[g] > best for g in steps if g < 16)


@pytest.mark.parametrize("answer", [16, 16.0, "16", " 16 ", Fraction(16), "１６"])
def test_05_9_accepts_sixteen_written_many_ways(answer: Any) -> None:
    en, zh = both("05.9", answer)
    assert en and zh, (answer, en.detail)


@pytest.mark.parametrize(("answer", "en_said", "zh_said"), [
    (8, "Megatron's default", "Megatron 的默认值"),
    (32, "a smaller group reaches it too", "更小的分组也能达到"),
    (20, "a smaller group reaches it too", "更小的分组也能达到"),
    (24, "not the shortest", "不是最短的"),
    (13, "refuses that group size", "不接受这个分组大小"),
    (4, "refuses that group size", "不接受这个分组大小"),
    (10**9, "", ""),
])
def test_05_9_names_each_wrong_group_without_the_answer(answer: Any, en_said: str, zh_said: str) -> None:
    en, zh = both("05.9", answer)
    assert not en and not zh
    assert en_said in en.detail and zh_said in zh.detail, (en.detail, zh.detail)
    for text in (en.detail, zh.detail):
        assert "too high" not in text and "too low" not in text and "偏大" not in text and "偏小" not in text


@pytest.mark.parametrize("answer", ["sixteen", "十六", [16], "16 microbatches"])
def test_05_9_refuses_what_is_not_a_group_size(answer: Any) -> None:
    en, zh = both("05.9", answer)
    assert not en and not zh and en.detail and zh.detail


# ----------------------------------------------------------------------------- 10.45, 10.46


def test_bank_has_the_two_questions_checked_in_their_categories() -> None:
    items = {item.id: item for item in lesson10.BANK}
    assert items["10.45"].category == "trade-offs" and items["10.46"].category == "calculations"
    assert items["10.45"].checked and items["10.46"].checked


def test_10_45_premise_and_answers() -> None:
    e = lesson10._group_effects()
    assert e["free"][0] == e["free"][1] and e["slow"][1] < e["slow"][0] and e["peak"][1] > e["peak"][0]
    for right in ("B", "b", " B ", "(B)", "Ｂ"):
        assert check("10.45", right), right
    for wrong in ("A", "C", "D", "BC"):
        en, zh = both("10.45", wrong)
        assert not en and not zh and en.detail and zh.detail


@pytest.mark.parametrize("answer", [129, 129.0, "129", "129 slots", "129 个时间槽", "≈ 129", Fraction(129)])
def test_10_46_accepts_the_step_written_many_ways(answer: Any) -> None:
    en, zh = both("10.46", answer)
    assert en and zh, (answer, en.detail)


@pytest.mark.parametrize(("answer", "en_said", "zh_said"), [
    (123, "leaves the loss out", "漏掉了损失层"),
    (132, "four equal stages", "完全相等"),
])
def test_10_46_names_the_two_classic_mistakes(answer: Any, en_said: str, zh_said: str) -> None:
    en, zh = both("10.46", answer)
    assert not en and en_said in en.detail and zh_said in zh.detail
    assert "129" not in en.detail and "129" not in zh.detail


def test_10_46_the_expected_step_is_the_simulators() -> None:
    costs = bk.layout.parse_layout("Et*3|t*4|t*4|t*3L", 4).costs(1, 2, loss=(1, 2))
    assert costs.f == (3, 4, 4, 4) and costs.b == (6, 8, 8, 8)
    assert REGISTRY["10.46"].expected() == bk.simulate(bk.schedule("1f1b", 4, 8), costs).makespan == 129


@pytest.mark.parametrize("answer", ["129 ms", "a lot", [129]])
def test_10_46_refuses_another_unit_or_no_number(answer: Any) -> None:
    en, zh = both("10.46", answer)
    assert not en and not zh and en.detail and zh.detail


@pytest.mark.parametrize("id", ["05.8", "05.9", "10.45", "10.46"])
def test_an_unanswered_question_is_no_answer_yet(id: str) -> None:
    assert check(id, ...).status == "missing" and check(id, None).status == "missing"
