"""Every grade fair (issue 21's grading items and the bank's 10.x audit findings; issue 20's decimal comma).

For each fix: a wrong answer is refused, each defensible answer is accepted, each recognised
mistake is named (in English and in Chinese), feedback on a part is never nested and is
1-based, a decimal comma is read or named, a rounding difference in the last digit is said to
be one, and an unanswered exercise is "no answer yet".
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pytest
import sympy as sp

import bubblekit as bk
from bubblekit import symbolic as sb
from bubblekit.course.checks import _registry, check, exercise, reset_progress
from bubblekit.course.checks._registry import REGISTRY, load_lessons
from bubblekit.i18n import using_language

load_lessons()


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    reset_progress()
    yield
    reset_progress()


@pytest.fixture
def temp_id() -> Iterator[str]:
    yield "98.7"
    _registry.unregister("98.7")


def both(id: str, answer: Any) -> tuple[Any, Any]:
    """The check's result in English and in Chinese (a fresh session each, so the same hint tier)."""
    reset_progress()
    en = check(id, answer)
    reset_progress()
    with using_language("zh"):
        zh = check(id, answer)
    return en, zh


# ----------------------------------------------------------------------------- feedback never nested, 1-based


def test_a_wrong_entry_of_a_nested_answer_is_named_once_and_counted_from_one() -> None:
    fill, drain = REGISTRY["02.1"].expected()
    wrong = (list(fill), [*drain[:-1], drain[-1] + 1])
    en, zh = both("02.1", wrong)
    assert not en and "item 2, entry 5 is not right (too high)" in en.detail, en
    assert en.detail.count("is not right") == 1 and "item 0" not in en.detail and "item 1" not in en.detail
    assert "第 2 项的第 5 个数不对（偏大）" in zh.detail and zh.detail.count("不对") == 1, zh


def test_a_flat_sequence_counts_from_one(temp_id: str) -> None:
    exercise(temp_id, hint=("a", "b"))(lambda: (1, 2, 3))
    assert "item 3 is not right" in check(temp_id, (1, 2, 4)).detail


# ----------------------------------------------------------------------------- digits and mistakes


@pytest.mark.parametrize(("id", "answer", "not_said"), [
    ("03.0", 1, "swapped"),          # 1 for 1/5: one digit, not "p and m swapped" (11/15)
    ("02.0", 6, "one hop too few"),  # 6 is also the backward trip alone: not diagnosed as a hop
])
def test_a_one_digit_or_ambiguous_answer_is_not_misdiagnosed(id: str, answer: Any, not_said: str) -> None:
    en, zh = both(id, answer)
    assert not en and not_said not in en.detail, en
    assert not zh and "弄反" not in zh.detail and "少算了一跳" not in zh.detail, zh


@pytest.mark.parametrize(("id", "answer"), [("01.4", 20), ("03.3", 300), ("10.20", 150)])
def test_picking_m_from_megatrons_overhead_is_named(id: str, answer: int) -> None:
    en, zh = both(id, answer)
    assert not en and "Megatron's overhead" in en.detail and "too high" not in en.detail, en
    assert not zh and "Megatron 口径" in zh.detail and "偏大" not in zh.detail, zh
    assert check(id, REGISTRY[id].expected())


@pytest.mark.parametrize(("build", "en_words", "zh_words"), [
    (lambda p, m: (m - 1) / (m + p - 1), "p and m swapped", "弄反"),
    (lambda p, m: p / (m + p), "off by one", "差了一"),
    (lambda p, m: p / (m + p - 1), "off by one", "差了一"),
    (lambda p, m: (p - 1) / (m + p), "off by one", "差了一"),
    (lambda p, m: (p - 1) / (m + p - 2), "off by one", "差了一"),
])
def test_03_8_swapped_and_off_by_one_formulas_are_named(build: Any, en_words: str, zh_words: str) -> None:
    en, zh = both("03.8", build(sb.p, sb.m))
    assert not en and en_words in en.detail, en
    assert not zh and zh_words in zh.detail, zh
    assert check("03.8", (sb.p - 1) / (sb.m + sb.p - 1))


def test_10_17_accepts_both_forms_and_names_the_warm_up_count() -> None:
    p, m = sb.p, sb.m
    r = sp.Symbol("r")  # a plain symbol: matched by name
    assert check("10.17", p - r) and check("10.17", sp.Min(p - r, m))
    assert check("10.17", sp.Symbol("p") - sp.Symbol("r", integer=True, nonnegative=True))
    en, zh = both("10.17", p - r - 1)
    assert not en and "warm-up forwards as Megatron-LM and lesson 04 count them" in en.detail, en
    assert not zh and "预热前向数" in zh.detail, zh
    assert not check("10.17", p) and not check("10.17", r + 1)


def test_10_22_reading_the_bubble_as_megatrons_overhead_is_named() -> None:
    right = REGISTRY["10.22"].expected()
    en, zh = both("10.22", right / 0.12 * 0.12 / 1.12)
    assert not en and "Megatron's overhead" in en.detail, en
    assert "Megatron 口径" in zh.detail


# ----------------------------------------------------------------------------- rounding and the decimal comma


def test_a_rounding_difference_in_the_last_digit_is_right_and_said() -> None:
    en, zh = both("01.3", 5844)  # 5843.48...
    assert en and "rounding" in en.note, en
    assert zh and "舍入" in zh.note, zh
    assert not check("01.3", 5845) and not check("01.3", 5842)
    assert check("00.1", 0.2728) and not check("00.1", 0.2726)  # 3/11 = 0.27273: one unit in the last place


def test_a_decimal_comma_is_read_with_a_note() -> None:
    en, zh = both("00.1", "0,273")
    assert en and "comma" in en.note, en
    assert zh and "逗号" in zh.note, zh
    assert check("01.3", "5,843")  # a thousands comma is still one


def test_a_comma_that_is_right_only_as_a_decimal_point_is_named(temp_id: str) -> None:
    exercise(temp_id, hint=("a", "b"))(lambda: 5.84348)
    en = check(temp_id, "5,843")
    assert not en and "decimal comma" in en.detail, en
    with using_language("zh"):
        assert "小数点" in check(temp_id, "5,843").detail
    assert check(temp_id, "5,8435") and check(temp_id, "5.843")


# ----------------------------------------------------------------------------- the bank's findings


def test_10_40_refuses_gpipes_order_and_accepts_1f1b() -> None:
    gpipe = "rank 0: 0F0 0F1 0F2 0B0 0B1 0B2\nrank 1: 1F0 1F1 1F2 1B0 1B1 1B2\nrank 2: 2F0 2F1 2F2 2B0 2B1 2B2"
    en, zh = both("10.40", gpipe)
    assert not en and "rank 1 holds 3" in en.detail, en
    assert not zh and "rank 1" in zh.detail, zh
    assert check("10.40", str(bk.schedule("1f1b", 3, 3).to_text()))


def test_10_43_has_one_right_answer() -> None:
    assert check("10.43", "A") and not check("10.43", "B")


@pytest.mark.parametrize("name", ["interleaved", "interleaved 1F1B", "Interleaved-1F1B", "交错式 1F1B", "交错式"])
def test_10_30_accepts_every_name_of_the_schedule(name: str) -> None:
    assert check("10.30", name), check("10.30", name)


def test_10_30_refuses_the_other_schedule_and_unknown_names() -> None:
    assert not check("10.30", "1F1B")
    assert "not a schedule name" in check("10.30", "fast one").detail
    assert check("10.28", "ZB-V") and check("10.44", "DualPipeV")


@pytest.mark.parametrize(("answer", "ok"), [(0.29, True), (0.31, True), (0.3, True), (0.35, False), (0.25, False)])
def test_10_37_is_an_estimate(answer: float, ok: bool) -> None:
    assert bool(check("10.37", answer)) is ok


def test_03_5_refuses_a_generated_schedule_and_says_why() -> None:
    en, zh = both("03.5", bk.schedule("1f1b", 3, 6))
    assert not en and "bk.Schedule object" in en.detail and "write the orders yourself" in en.detail, en
    assert not zh and "生成器" in zh.detail, zh
    assert check("03.5", bk.schedule("1f1b", 3, 6).to_text())  # the same orders, written as text: right


# ----------------------------------------------------------------------------- hints lead to the method


@pytest.mark.parametrize(("id", "names"), [
    ("03.4", ("makespan_1f1b", "makespan_gpipe")),
    ("03.3", ("solve_min_m", "min_micro_batch")),
    ("03.8", ("sp.simplify",)),
    ("02.5", ("Counter(",)),
    ("10.34", ("two stages per rank",)),
    ("10.37", ("Subtract the end",)),
    ("10.5", ("optimizer step",)),
    ("10.39", ("not a stage that is slower",)),
    ("10.33", ("round trip",)),
])
def test_hints_do_not_name_what_returns_the_answer(id: str, names: tuple[str, ...]) -> None:
    for hint in REGISTRY[id].hints:
        assert not any(n in hint for n in names), (id, hint)


def test_10_1_first_hint_asks_for_both_conventions_and_eliminates_no_option() -> None:
    """Final review M1: the first hint ruled out A, C and D, which left only B."""
    (en, zh) = both("10.1", "C")
    assert not en and not zh
    first = REGISTRY["10.1"].hints[0]
    assert "count of slots" not in first and "exceed 1" not in first and "1.75" not in first
    assert "idle / busy" in first and "idle / (p × makespan)" in first
    assert "空闲 / 忙碌" in zh.hint and "时间槽的个数" not in zh.hint


def _bank_cell(notebook: str, heading: str) -> str:
    import json
    from pathlib import Path

    cells = json.loads((Path(__file__).resolve().parents[1] / notebook).read_text(encoding="utf-8"))["cells"]
    return next("".join(c["source"]) for c in cells if "".join(c["source"]).startswith(heading))


@pytest.mark.parametrize(("notebook", "words"), [
    ("solutions/10_interview_bank.ipynb", "p = 8 stages and m = 16 microbatches"),
    ("solutions/zh/10_interview_bank.ipynb", "p = 8 个流水级，m = 16 个微批"),
])
def test_10_26_states_the_m_its_check_uses(notebook: str, words: str) -> None:
    """Final review M2: the peak is min(m, 2p - 1), so the question states the check's m = 16."""
    assert words in _bank_cell(notebook, "### 10.26")
    uniform = bk.checks.lesson10.UNIFORM
    assert REGISTRY["10.26"].expected() == bk.simulate(bk.schedule("zb-h2", 8, 16), uniform).max_peak_activations == 15
    assert not check("10.26", 8)  # p: the peak at m = p, not at the question's m = 16
    # the second hint's small settings have m >= 2p, so the pattern they show is the one at m = 16
    assert "m ≥ 2p" in REGISTRY["10.26"].hints[1]
    for p, m in ((3, 6), (4, 8)):
        assert bk.simulate(bk.schedule("zb-h2", p, m), uniform).max_peak_activations == 2 * p - 1


@pytest.mark.parametrize(("notebook", "words"), [
    ("solutions/10_interview_bank.ipynb", "p = 4, m = 8 (F = 1, B = 2)"),
    ("solutions/zh/10_interview_bank.ipynb", "p = 4，m = 8（F = 1，B = 2）"),
])
def test_10_6_states_the_setting_its_check_uses(notebook: str, words: str) -> None:
    """Final review M3: rank 0's peak grows only for m > p, so the question states the check's p = 4, m = 8."""
    assert words in _bank_cell(notebook, "### 10.6")
    assert check("10.6", "BC") and not check("10.6", "B")
    c = bk.Costs(f=1, b=2)
    assert bk.simulate(bk.schedule("interleaved", 4, 4, 2), c).peak_activations[0] == 4  # m = p: no growth


def test_10_17_hint_counts_what_the_peak_holds_not_the_warm_up() -> None:
    assert "warm-up" not in REGISTRY["10.17"].hints[0]


# ----------------------------------------------------------------------------- no answer yet


@pytest.mark.parametrize("answer", [..., None, (..., ...), [..., None], {"gpipe": ..., "1f1b": ...},
                                    "\nrank 0:\nrank 1:\nrank 2:\n"])
def test_the_exercise_stubs_are_no_answer_yet(answer: Any) -> None:
    id = "03.4" if isinstance(answer, dict) else ("03.5" if isinstance(answer, str) else "02.1")
    res = check(id, answer)
    assert res.status == "missing", res
    with using_language("zh"):
        assert "还没有作答" in repr(check(id, answer))


# ----------------------------------------------------------------------------- review 2026-12-01 (lessons 00-03)


def test_01_3_money_from_the_printed_percentage_is_named_as_early_rounding() -> None:
    printed = round(bk.simulate(bk.schedule("gpipe", 8, 16), bk.preset("b=2f")).bubble_ratio, 3)  # 30.4 %
    for answer in (printed * 8 * 24 * 100, round(printed * 8 * 24 * 100)):  # 5836.8 and 5837
        en, zh = both("01.3", answer)
        assert not en and "rounded" in en.detail and "before multiplying" in en.detail, en
        assert not zh and "舍入" in zh.detail, zh
    assert check("01.3", 5843) and check("01.3", 5840)  # the unrounded product, and 3 significant digits


def test_02_1_hints_ask_questions_and_do_not_state_the_pattern() -> None:
    from bubblekit.course.checks._text import shown

    for tier in REGISTRY["02.1"].hints:
        en, zh = shown(tier, "en"), shown(tier, "zh")
        assert "r forwards" not in en and "r backwards" not in en, en
        assert "个前向的时间" not in zh and "个反向的时间" not in zh, zh
    second = REGISTRY["02.1"].hints[1]
    assert shown(second, "en").count("?") >= 2 and shown(second, "zh").count("？") >= 2


def test_10_31_accepts_the_worked_answers_own_rounded_sizes() -> None:
    """Third review: 2050 MiB / 128 MiB (the worked answer's rounded sizes) is the factor, not 'too low'."""
    for right in (2050 / 128, 16, "16.02"):
        en, zh = both("10.31", right)
        assert en and zh, (right, en)
    for wrong in (15, 1 / 16):
        en, _ = both("10.31", wrong)
        assert not en, (wrong, en)


# ----------------------------------------------------------------------------- sixth review of the bank


@pytest.mark.parametrize("text", ["B and C", "both B and C", "Answer: B", "C (the same)"])
def test_a_letter_answer_with_words_is_asked_again_and_not_counted(text: str) -> None:
    """Sixth review W3: every letter of every word was read as an option ("B and C" -> A, B, C, D, N: "not the
    right choice"). Now the learner is asked for the letters alone, and no try or hint tier is used up."""
    for id in ("10.6", "10.1", "10.29"):
        en, zh = both(id, text)
        assert not en and en.detail == 'answer with the letter(s) alone, e.g. "B" or "BC"', en
        assert "not the right choice" not in en.text and "choose one letter" not in en.text
        assert "not counted as a try" in en.text and en.hint == "" and en.text.count("not yet") == 1, en
        assert "只写选项字母" in zh.detail and "不计入作答次数" in zh.text, zh
        reset_progress()
        check(id, text)
        assert _registry._SESSION[id].tries == 0 and _registry._SESSION[id].wrong == 0
        wrong = check(id, "D" if id != "10.29" else "A")  # the first real wrong answer still gets the first hint
        assert not wrong and wrong.tier == 1, wrong


@pytest.mark.parametrize(("id", "answer"), [("10.6", "B, C"), ("10.6", "B & C"), ("10.6", "b c"), ("10.6", "CB"),
                                            ("10.6", ["B", "C"]), ("10.1", "(B)"), ("10.1", "b"), ("10.29", "C")])
def test_letters_written_any_plain_way_are_right(id: str, answer: Any) -> None:
    assert check(id, answer), check(id, answer)


def test_letter_mistakes_are_still_named() -> None:
    assert check("10.6", "B").detail == "right so far, but something is missing"
    assert check("10.6", "AB").detail == "not the right choice"
    assert check("10.1", "AB").detail == "choose one letter"
    assert "as a string" in check("10.1", 2).detail


@pytest.mark.parametrize(("id", "right", "words"), [("10.35", 2, "not the rank that sets the pace"),
                                                     ("10.38", 0, "longest single idle interval")])
def test_a_profile_rank_is_right_or_not_never_a_direction(id: str, right: int, words: str) -> None:
    """Sixth review M1: "too high / too low" on a rank of four gave the answer away in two guesses."""
    assert check(id, right) and check(id, str(right))
    for rank in range(-1, 5):
        en, zh = both(id, rank)
        if rank == right:
            continue
        assert not en and "too high" not in en.text and "too low" not in en.text, en
        assert "偏大" not in zh.text and "偏小" not in zh.text, zh
        if 0 <= rank < 4:
            assert words in en.detail, en
        else:
            assert f"rank {rank} does not exist" in en.detail and "0 to 3" in en.detail, en
    assert "is not a rank" in check(id, "two").detail


@pytest.mark.parametrize(("id", "name"), [("10.30", "interleaved 1F1B v=2"), ("10.30", "interleaved v=2"),
                                          ("10.30", "interleaved 1F1B (v = 2)"), ("10.44", "dualpipev v=2"),
                                          ("10.44", "dualpipev v=2 m=32"), ("10.44", "dualpipev m=32"),
                                          ("10.28", "ZB-V m=16")])
def test_a_schedule_name_copied_from_a_table_is_read(id: str, name: str) -> None:
    """Sixth review C3: a table's row name ("interleaved 1F1B v=2") was "not a schedule name bubblekit knows"."""
    assert check(id, name), check(id, name)


def test_a_table_name_of_the_wrong_schedule_is_still_wrong() -> None:
    assert check("10.44", "dualpipe v=2 m=32").detail == "not the schedule that answers this question"
    assert "not a schedule name" in check("10.30", "v=2").detail


def test_10_44_uses_one_ranks_four_layers() -> None:
    """Sixth review W1: 10.44 planned with one layer's costs while the model puts 4 layers on each rank, so its
    times were 4x too small for the stated model (10.43's frontier gives 40.51 ms per microbatch for DualPipeV)."""
    lesson10 = bk.checks.lesson10
    plan = {c.schedule: c for c in lesson10._plan_in_memory(40).candidates}
    front = {r["schedule"]: r for r in bk.memory.frontier(lesson10._MODEL_32, 8, 32, schedules=lesson10._VERSUS)}
    for name, shown_as in (("dualpipev", "DualPipeV"), ("dualpipe", "DualPipe"), ("interleaved", "interleaved 1F1B v=2")):
        assert plan[name].time_per_microbatch == pytest.approx(front[shown_as]["time_per_microbatch"], rel=1e-9)
    assert check("10.44", "dualpipev") and not check("10.44", "dualpipe")
    assert "layers_per_rank=4" in REGISTRY["10.44"].hints[1]
    for notebook in ("solutions/10_interview_bank.ipynb", "solutions/zh/10_interview_bank.ipynb"):
        cell = _bank_code_after(notebook, "### 10.44")
        assert "layers_per_rank=model.layers // 8" in cell["source"]
        printed = "".join("".join(o.get("text", "")) for o in cell["outputs"])
        assert f"{plan['dualpipev'].time_per_microbatch:.2f}" in printed, printed


def _bank_code_after(notebook: str, heading: str) -> dict[str, Any]:
    import json
    from pathlib import Path

    cells = json.loads((Path(__file__).resolve().parents[1] / notebook).read_text(encoding="utf-8"))["cells"]
    k = next(i for i, c in enumerate(cells) if "".join(c["source"]).startswith(heading))
    cell = next(c for c in cells[k:] if c["cell_type"] == "code")
    return {**cell, "source": "".join(cell["source"])}


def test_10_32_hint_bounds_the_slowest_stage_only() -> None:
    """Sixth review W4: "no stage can be faster than ... the total divided by 4" is false (stage costs 14, 11, 14, 13)."""
    from bubblekit.course.checks._text import shown

    first = REGISTRY["10.32"].hints[0]
    assert shown(first, "en").startswith("The slowest stage can be no faster") and "No stage" not in shown(first, "en")
    assert shown(first, "zh").startswith("最慢的流水级") and "任何流水级" not in shown(first, "zh")


@pytest.mark.parametrize("id", ["10.2", "10.4", "10.7", "10.9", "10.10"])
def test_a_question_answered_in_words_points_to_its_worked_answer(id: str) -> None:
    """Sixth review C5: check("10.2", ...) suggested unrelated ids found by string likeness."""
    with pytest.raises(ValueError, match="answered in words and has no check") as err:
        check(id, "my answer")
    assert "close ids" not in str(err.value) and "solutions/10_interview_bank.ipynb" in str(err.value)
    with using_language("zh"), pytest.raises(ValueError, match="solutions/zh/10_interview_bank.ipynb"):
        check(id, "我的答案")
    with pytest.raises(ValueError, match="close ids"):
        check("10.99", 1)


def test_the_sprint_says_what_the_rest_of_the_bank_needs() -> None:
    """Sixth review W2 and W5: the rest of the bank does not all need lessons 05 and 06, and the sprint is nine
    questions, not the bank in its own order."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    paths = bk.paths.learning_paths()
    assert "also need lessons 05 and 06" not in paths.sprint.note and "10.35–10.39 lesson 06" in paths.sprint.note
    for readme in ("README.md", "README.zh-CN.md"):
        text = (root / readme).read_text(encoding="utf-8")
        assert "also need lessons 05 and 06" not in text and "还要用到第 05、06 课" not in text
        assert "10.35–10.39" in text
    intro = _bank_cell("solutions/10_interview_bank.ipynb", "# 10 ·")
    assert "nine questions" in intro and "the other questions also need lessons 05" not in intro
    for lesson in ("notebooks/09_misconceptions_and_interviews.ipynb", "notebooks/zh/09_misconceptions_and_interviews.ipynb"):
        cells = json.loads((root / lesson).read_text(encoding="utf-8"))["cells"]
        bank = next("".join(c["source"]) for c in cells if "SPRINT_QUESTIONS" in "".join(c["source"]))
        assert "in its own order" not in bank and "按题库自己的顺序" not in bank
    assert len(bk.paths.SPRINT_QUESTIONS) == 9
    assert set(bk.paths._PART_KEYS) == {s.part for s in (*bk.paths.SPRINT, *bk.paths.WORKSHOP) if s.part}


# ----------------------------------------------------------------------------- seventh review of the bank

_SPLIT_1F1B_3X3 = """rank 0: 0F0 0F1 0F2 0I0 0W0 0I1 0W1 0I2 0W2
rank 1: 1F0 1F1 1I0 1W0 1F2 1I1 1W1 1I2 1W2
rank 2: 2F0 2I0 2W0 2F1 2I1 2W1 2F2 2I2 2W2"""


def test_10_40_refuses_a_split_backward_where_it_asks_for_b() -> None:
    """Seventh review W1: 10.40 asks for 1F1B with the full backward B; a split schedule (13 slots, peaks 3, 2, 1)
    beat the target only because I and W are split, and was called correct."""
    en, zh = both("10.40", _SPLIT_1F1B_3X3)
    assert not en and en.detail == "this question uses the full backward B: write B, not I and W", en
    assert "`0B0`" in en.hint and "I then a W" not in en.hint, en
    assert "请写 B，不要拆成 I 和 W" in zh.detail, zh
    assert check("10.40", bk.schedule("1f1b", 3, 3).to_text())


@pytest.mark.parametrize(("id", "p", "m"), [("10.41", 2, 4), ("10.42", 3, 5)])
def test_a_v_placement_is_told_the_question_puts_one_stage_per_rank(id: str, p: int, m: int) -> None:
    """Seventh review W2: ZB-V (p rank lines, 2p stages) got "the schedule has p rank line(s)" and a hint to write
    one line per rank, which it does. Now the message names the placement, and the questions state it."""
    import json
    from pathlib import Path

    en, zh = both(id, bk.schedule("zbv", p, m).to_text())
    assert not en and en.detail == (f"this question puts one stage on each of its {p} ranks; your schedule has {2 * p} "
                                    "stages (a V or interleaved placement)"), en
    assert "one stage each" in en.hint and "rank line(s)" not in en.detail, en
    assert f"这道题的 {p} 个 rank 各放一个流水级" in zh.detail and "V 形" in zh.detail, zh
    wrong_p = check(id, bk.schedule("zb-h1", p + 1, m).to_text())
    assert not wrong_p and f"this question has p={p}" in wrong_p.detail, wrong_p
    root = Path(__file__).resolve().parents[1]
    for notebook, words in (("solutions/10_interview_bank.ipynb", "one stage on each (no V placement)"),
                            ("solutions/zh/10_interview_bank.ipynb", "每个 rank 一个流水级（不用 V 形放置）")):
        cells = json.loads((root / notebook).read_text(encoding="utf-8"))["cells"]
        text = next("".join(c["source"]) for c in cells if "".join(c["source"]).startswith(f"### {id} "))
        assert words in text, (notebook, text)


@pytest.mark.parametrize(("id", "right"), [("10.35", 2), ("10.38", 0), ("06.3", 1)])
def test_a_rank_written_as_a_whole_float_is_right(id: str, right: int) -> None:
    """Seventh review W3: 2.0 was "not a rank: give a whole number" in 10.35, 10.38 and lesson 06's 06.3."""
    import numpy as np

    assert REGISTRY[id].expected() == right
    for answer in (right, float(right), np.float64(right), str(right), f"{right}.0", np.int64(right)):
        en, zh = both(id, answer)
        assert en and zh, (answer, en)
    for answer in (right + 0.5, "two", True, float("nan"), "inf"):
        en, zh = both(id, answer)
        assert not en and "is not a rank" in en.detail and "不是 rank 编号" in zh.detail, (answer, en)
    assert not check(id, float(right + 1)) and "is not a rank" not in check(id, float(right + 1)).detail


@pytest.mark.parametrize(("id", "text"), [("10.5", "不是 A"), ("10.6", "B 或 C"), ("10.6", "B 和 C"),
                                          ("10.1", "答案是 B"), ("10.29", "C（两者相同）")])
def test_a_chinese_letter_answer_with_words_is_asked_again(id: str, text: str) -> None:
    """Seventh review W4: only Latin runs counted as words, so "不是 A" ("not A") was graded as A."""
    with using_language("zh"):
        got = check(id, text)
    assert not got and "只写选项字母" in got.detail and "不计入作答次数" in got.text, got
    assert _registry._SESSION[id].tries == 0 and _registry._SESSION[id].wrong == 0


@pytest.mark.parametrize(("id", "text"), [("10.1", "B"), ("10.6", "B、C"), ("10.1", "（B）"), ("10.1", "Ｂ"),
                                          ("10.6", "Ｂ，Ｃ")])
def test_chinese_punctuation_around_letters_is_still_read(id: str, text: str) -> None:
    with using_language("zh"):
        assert check(id, text), check(id, text)


def test_10_14_names_the_missing_saving_and_its_hints_name_both() -> None:
    """Seventh review M1: the hints led to (p − 1)(t_f + t_i) (only the W fill), which was refused without a reason."""
    from bubblekit.course.checks._text import shown
    from bubblekit.course.checks.lesson10 import t_i, t_w

    en, zh = both("10.14", (sb.p - 1) * (sb.t_f + t_i))
    assert not en and en.detail.startswith("one of ZB-H1's two savings is missing"), en
    assert "两处节省少算了一处" in zh.detail, zh
    assert check("10.14", (sb.p - 1) * (sb.t_f + t_i - t_w))
    assert check("10.14", (sb.p - 1) * sb.t_f + (sb.p - 1) * (t_i - t_w))
    first, second = (shown(h, "en") for h in REGISTRY["10.14"].hints)
    assert "first backward waits for" in first and "before its first I" in second
    assert "count the W passes" not in second


def test_10_41_fused_backward_gets_the_split_hint_not_the_shape_hint() -> None:
    """Seventh review C1: a fused 1F1B in 10.41 got the right message but the "numbers of ranks" hint."""
    en, zh = both("10.41", bk.schedule("1f1b", 2, 4).to_text())
    assert not en and "split into I" in en.detail and "`0I0 0W0`" in en.hint and "rank r:" not in en.hint, en
    assert "每个 B 写成先 I 后 W" in zh.hint, zh


def test_10_43_gives_the_model_it_asks_about() -> None:
    """Seventh review C2: the question gave no head count, which memory.Model requires."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for notebook in ("solutions/10_interview_bank.ipynb", "solutions/zh/10_interview_bank.ipynb"):
        cells = json.loads((root / notebook).read_text(encoding="utf-8"))["cells"]
        text = next("".join(c["source"]) for c in cells if "".join(c["source"]).startswith("### 10.43 "))
        assert "bk.memory.Model(layers=32, hidden=4096, heads=32, seq=4096)" in text, text
# ----------------------------------------------------------------------------- sixth review, solutions 06-09


def test_06_7_the_unreadable_hint_leads_to_an_answer_that_is_accepted() -> None:
    """W1: the hint said "its first word will do", and the right row's first word ("measured") was refused."""
    en, zh = both("06.7", "measured")
    assert not en and "first word" not in en.hint and "第一个词" not in zh.hint, (en, zh)
    assert "names no effect of the ladder" in en.detail and "is not a row" not in en.detail, en
    assert "两端" in zh.detail and "不是阶梯表中的一行" not in zh.detail, zh
    assert "the effect the row adds" in en.hint and "新加入的因素" in zh.hint, (en, zh)
    for word in ("durations", "overhead", "latency", "pickup"):  # the refusal lists the words that name a row
        assert word in en.detail and word in zh.detail
    for right in ("durations", "measured durations", "Durations", "耗时"):
        assert check("06.7", right), right


@pytest.mark.parametrize(("id", "int_answer"), [("09.5", 2), ("07.1", 2), ("07.6", 4), ("07.6", 5)])
def test_a_one_digit_int_gets_the_verdict_of_the_same_float(id: str, int_answer: int) -> None:
    """M1: 2 was "close" and 2.0 "too high/low" for the same exercise."""
    as_int, as_float, as_text = check(id, int_answer), check(id, float(int_answer)), check(id, str(int_answer))
    assert as_int.status == as_float.status == as_text.status == "wrong", (as_int, as_float, as_text)
    assert as_int.detail == as_float.detail == as_text.detail
    assert "significant digits" not in as_int.detail


def test_one_digit_answers_that_round_right_stay_close_and_whole_numbers_stay_exact() -> None:
    """M1's fix keeps the policy: 0.3 and 1 (for 0.97) are close; whole numbers are compared exactly."""
    from bubblekit.course.checks._grading import grade

    assert grade(0.3, 3 / 11).status == "close"
    assert grade(1, 0.97).status == grade(1.0, 0.97).status == "close"
    assert grade(2, 2.0001, rel_tol=1e-3).ok and grade(7, 7).ok and not grade(7, 8).ok
    assert grade(5800, 5843).status == "wrong" and grade(5840, 5843.48).ok


def test_09_5_the_textbook_2x_is_named_in_every_form() -> None:
    """M1: 2 is the misconception itself; it was called "close"."""
    for answer in (2, 2.0, "2", "2.00"):
        en, zh = both("09.5", answer)
        assert not en and "textbook's 2x" in en.detail, (answer, en)
        assert not zh and "课本里的 2 倍" in zh.detail, (answer, zh)
    assert check("09.5", 2.27) and check("09.5", REGISTRY["09.5"].expected())


def test_09_2_gives_no_direction_and_names_each_wrong_depth() -> None:
    """M2: "too high" for every wrong depth left only p = 1."""
    for answer in (1, 1.0, "1", " 1 "):
        assert check("09.2", answer), answer
    for answer in (2, 4, 8, 16):
        en, zh = both("09.2", answer)
        assert not en and "too high" not in en.detail and "too low" not in en.detail, en
        assert "偏大" not in zh.detail and "偏小" not in zh.detail, zh
    assert "not the shortest step" in check("09.2", 4).detail
    en, zh = both("09.2", 16)
    assert "deepest pipeline" in en.detail and "最深的流水线" in zh.detail
    en, zh = both("09.2", 3)
    assert "must divide the 16 GPUs" in en.detail and "整除 16" in zh.detail
    for answer in (2.5, "two", True):
        assert "whole number" in check("09.2", answer).detail, answer


def test_07_4_a_slow_answer_is_pointed_at_a_gap_the_target_does_not_have() -> None:
    """M3: the split 1F1B was pointed at rank 0's gap before 0I0, which ZB-H1 (the target) has too."""
    rank0 = "rank 0: 0F0 0F1 0I0 0W0 0F2 0I1 0W1 0I2 0W2\n"
    en, zh = both("07.4", rank0 + "rank 1: 1F0 1I0 1W0 1F1 1I1 1W1 1F2 1I2 1W2")
    assert not en and "on rank 0 before 0I2" in en.detail and "0I0" not in en.detail, en
    assert "在 rank 0 上、0I2 之前" in zh.detail, zh
    assert check("07.4", rank0 + "rank 1: 1F0 1I0 1F1 1I1 1W0 1F2 1I2 1W1 1W2")


def test_the_whiteboard_without_a_reference_takes_the_latest_of_equal_gaps() -> None:
    """M3 for targets without a reference: among equal gaps the latest, not the first found (the fill's)."""
    from bubblekit.course.checks.lesson07 import UNIFORM, target, whiteboard

    goal = target(2, 3, UNIFORM, 10, cap=2)
    ok, detail = whiteboard("rank 0: 0F0 0F1 0I0 0W0 0F2 0I1 0W1 0I2 0W2\n"
                            "rank 1: 1F0 1I0 1W0 1F1 1I1 1W1 1F2 1I2 1W2", goal)
    assert not ok and "before 0I2" in detail, detail


@pytest.mark.parametrize(("id", "said"), [
    ("07.7", ("(p + 4) // 3", "p + 4")),
    ("07.9", ("bk.schedule('dualpipev', 4, 16).hops_per_step /", "/ bk.schedule")),
])
def test_07_hints_lead_to_the_method_not_to_the_answers_expression(id: str, said: tuple[str, ...]) -> None:
    """M4: 07.7's and 07.9's second hints were the expected value's own expression."""
    for hint in REGISTRY[id].hints:
        for language in ("en", "zh"):
            text = hint.say(language) if hasattr(hint, "say") else str(hint)
            assert not any(s in text for s in said), (id, language, text)
    assert "never reaches it" in REGISTRY["07.7"].hints[1] and "only reached" not in REGISTRY["07.7"].hints[1]


def test_07_4_an_unsplit_backward_gets_the_split_hint() -> None:
    """C1: the split refusal came with the hint about the number of rank lines."""
    en, zh = both("07.4", bk.schedule("1f1b", 2, 3).to_text())
    assert not en and "split into I" in en.detail, en
    assert "write each B as an I then a W" in en.hint and "rank r:' line" not in en.hint, en
    assert "每个 B 写成先 I 后 W" in zh.hint, zh


def test_06_7_rows_tied_but_for_float_noise_get_the_same_feedback() -> None:
    """C2: latency (0.39983129453929966) was "the highest" and the calibrated row, 5.5e-17 lower, was not."""
    latency, pickup = check("06.7", "latency"), check("06.7", "pickup")
    assert not latency and not pickup and latency.detail == pickup.detail, (latency, pickup)
    assert "as high as any effect's" in latency.detail and "the highest" not in latency.detail
    assert "another row adds more" in check("06.7", "overhead").detail


@pytest.mark.parametrize("answer", [1.0, "1", 1])
def test_06_3_a_whole_float_is_a_rank(answer: Any) -> None:
    """C4: 1.0 was "not ... a whole number"."""
    import numpy as np

    assert check("06.3", answer) and check("06.3", np.float64(1.0)) and check("06.3", np.int64(1))
    en, zh = both("06.3", 1.5)
    assert not en and "ranks are whole numbers" in en.detail and "整数" in zh.detail, en
    assert "give a whole number" in check("06.3", "one").detail


def test_06_4_table_title_quotes_the_costs_name() -> None:
    """C3: "simulated with calibrated from measured: step.csv step 0" read as one garbled phrase."""
    from bubblekit.analysis import calibrate
    from bubblekit.course.checks import lesson06

    costs, _ = calibrate.calibrate(lesson06.example_step())
    title = calibrate.predict(costs, "1f1b", 3, [2, 4]).title
    assert title.startswith("1F1B, p=3, simulated with the costs “") and title.endswith("”"), title


@pytest.mark.parametrize("path", ["solutions/06_profiling_practice.ipynb", "solutions/zh/06_profiling_practice.ipynb"])
def test_06_8_asks_for_the_percentage_as_text(path: str) -> None:
    """C5: "Give a fraction (or a percent)" invited the bare 22.6 that the check refuses."""
    import json
    from pathlib import Path

    cells = json.loads((Path(__file__).resolve().parents[1] / path).read_text(encoding="utf-8"))["cells"]
    text = "".join(next(c for c in cells if c["id"] == "s06-gpu-1")["source"])
    assert "'25%'" in text and "(or a percent)" not in text and "（或百分数）" not in text, text
    assert "22.6%" not in text
    assert check("06.8", "22.6%") and not check("06.8", 22.6)
# ----------------------------------------------------------------------------- sixth review (solutions 01-05, lessons 00-02)

#: Each schedule exercise, a text with rank 0 filled in and the other rank lines still empty.
HALF_WRITTEN = {
    "01.5": "rank 0: 0F0 0F1\nrank 1:\n",
    "02.6": "rank 0: 0F0 0F1\nrank 1:\nrank 2:\n",
    "03.5": "rank 0: 0F0 0F1\nrank 1:\nrank 2:\n",
    "04.5": "rank 0: 0F0 0F1\nrank 1:\nrank 2:\nrank 3:\n",
    "05.4": "rank 0: 0F0 0F1\nrank 1:\nrank 2:\nrank 3:\n",
}


@pytest.mark.parametrize("id", sorted(HALF_WRITTEN))
def test_a_half_written_schedule_names_its_empty_ranks(id: str) -> None:
    """Sixth review W1: an empty rank line was a raw ValueError ('placement has 1 stage(s)'), breaking Run All."""
    en, zh = both(id, HALF_WRITTEN[id])
    assert not en and "have no actions yet" in en.detail and "[1" in en.detail, en
    assert "placement has" not in en.detail and en.detail.count("not yet") <= 1, en
    assert not zh and "无法读成调度" in zh.detail, zh


def test_from_text_with_an_empty_rank_line_is_a_schedule_error() -> None:
    with pytest.raises(bk.ScheduleError, match=r"rank\(s\) \[1, 2\] have no actions yet"):
        bk.Schedule.from_text("rank 0: 0F0 0B0\nrank 1:\nrank 2:")
    with pytest.raises(bk.ScheduleError, match="every rank needs at least one stage"):
        bk.Schedule(name="x", p=2, m=1, placement=(0,), orders=((), ()))


def test_04_3_is_not_exercise_03_4_again() -> None:
    """Sixth review C3: 04.3 had 03.4's p = 6, m = 12, c = 1/2 (nothing left to predict); now p = 8, m = 16."""
    from fractions import Fraction

    lat = bk.Costs(f=1, b=2, comm=Fraction(1, 2))
    gap = {pm: bk.simulate(bk.schedule("1f1b", *pm), lat).makespan - bk.simulate(bk.schedule("gpipe", *pm), lat).makespan
           for pm in ((8, 16), (6, 12))}
    assert gap == {(8, 16): 13, (6, 12): 9}
    assert all(both("04.3", 13)) and all(both("04.3", 13.0))
    en, zh = both("04.3", 9)
    assert not en and "03.4" in en.detail and "not yet" not in en.detail, en
    assert not zh and "03.4" in zh.detail, zh
    en, _ = both("04.3", -13)
    assert not en and "wrong sign" in en.detail


def test_04_4_hints_tell_interleaved_from_looped_bfs_by_the_backwards() -> None:
    """Sixth review W2: at p = 3, m = 4 interleaved also runs chunk 0's forwards first; the backwards tell them apart."""
    from bubblekit.course.checks._text import shown

    inter, bfs = (bk.schedule(n, 3, 4, 2) for n in ("interleaved", "looped-bfs"))
    first_b = [next(i for i, a in enumerate(o) if a.kind != "F") for o in inter.orders]
    assert first_b[2] < 2 * 4  # interleaved: rank 2 starts a backward while forwards remain
    assert all(next(i for i, a in enumerate(o) if a.kind != "F") == 8 for o in bfs.orders)  # looped BFS: all forwards first
    en = " ".join(shown(t, "en") for t in REGISTRY["04.4"].hints)
    zh = " ".join(shown(t, "zh") for t in REGISTRY["04.4"].hints)
    assert "before all of its forwards" in en and "alternates" not in en, en
    assert "反向" in zh and "交替进行" not in zh, zh
    assert check("04.4", "looped-bfs") and not check("04.4", "interleaved")


@pytest.mark.parametrize(("id", "right", "others", "outside"), [
    ("02.5", 1, (0, 2, 3), (4, -1)),
    ("05.3", 4, (1, 2, 8), (3, 16)),
])
def test_a_pick_among_a_few_values_gets_no_direction(id: str, right: int, others: tuple[int, ...],
                                                     outside: tuple[int, ...]) -> None:
    """Sixth review M1: 'too low' for 0 and 'too high' for 2 gave 02.5's rank (and 05.3's v) away in two guesses."""
    assert all(both(id, right)) and check(id, str(right)) and check(id, float(right))
    for wrong in others:
        en, zh = both(id, wrong)
        assert not en and "too " not in en.detail and "not the" in en.detail, (wrong, en)
        assert not zh and "偏大" not in zh.detail and "偏小" not in zh.detail, (wrong, zh)
    for wrong in outside:
        en, zh = both(id, wrong)
        assert not en and "not one of the choices" in en.detail and "too " not in en.detail, (wrong, en)
        assert "可选" in zh.detail, zh
    assert "expected a number" in check(id, "x").detail


def test_01_2_names_a_wrong_rank_without_a_direction_and_a_wrong_length_with_one() -> None:
    """Sixth review M1: (1, 6) was 'item 1 is not right (too high)': with three ranks, that gives rank 0 away."""
    assert all(both("01.2", (0, 6))) and check("01.2", [0, 6.0])
    for wrong in ((1, 6), (2, 4), (1, 4)):
        en, zh = both("01.2", wrong)
        assert not en and "item 1 is not the rank" in en.detail and "too " not in en.detail, (wrong, en)
        assert not zh and "第 1 项不是" in zh.detail and "偏" not in zh.detail, (wrong, zh)
    assert "too low" in check("01.2", (0, 5)).detail  # the length is a number: its direction gives nothing away
    en, zh = both("01.2", (6, 0))
    assert not en and "wrong order" in en.detail and "顺序错了" in zh.detail
    assert "not one of the choices" in check("01.2", (5, 6)).detail and "expected 2 items" in check("01.2", (0, 6, 1)).detail


def test_01_0_idle_over_busy_is_named_as_the_overhead_not_only_a_swap() -> None:
    """Sixth review (lessons 00-02) M1: 0.5 = 6/12 idle over busy was told only 'p and m swapped'."""
    for answer in (0.5, "50%", "1/2"):
        en, zh = both("01.0", answer)
        assert not en and "idle minutes over busy minutes" in en.detail, (answer, en)
        assert not zh and "空闲分钟除以忙碌分钟" in zh.detail, zh
    assert all(both("01.0", "1/3")) and "busy" in check("01.0", 2 / 3).detail


def test_05_4_slow_message_does_not_say_a_right_answer_hides_all_latency() -> None:
    """Sixth review M2: the accepted answer still pays GPipe's 2(p - 1) hops; 'latency is still on the critical
    path' told a learner the target had none."""
    from bubblekit.course.checks import lesson05

    extra = ("rank 0: 0F0 0F1 0F2 0F3 0B0 0F4 0B1 0F5 0B2 0B3 0B4 0B5\n"
             "rank 1: 1F0 1F1 1F2 1B0 1F3 1B1 1F4 1B2 1F5 1B3 1B4 1B5\n"
             "rank 2: 2F0 2B0 2F1 2B1 2F2 2B2 2F3 2B3 2F4 2B4 2F5 2B5\n")
    r = bk.simulate(bk.Schedule.from_text(extra), bk.Costs(f=1, b=2, comm=lesson05.HIDE_COMM))
    hops = sum(1 for (a, _), (b, _) in zip(r.critical_path, r.critical_path[1:]) if a != b)
    assert hops == 2 * (3 - 1) and check("05.4", extra)  # the right answer's path crosses 4 links
    en, zh = both("05.4", bk.schedule("1f1b", 3, 6).to_text())
    assert not en and "2(p - 1) hops" in en.detail and "still on the critical path" not in en.detail, en
    assert not zh and "2(p - 1) 跳" in zh.detail and "延迟仍在关键路径上" not in zh.detail, zh


def test_a_figure_of_fused_backwards_names_no_i_or_w() -> None:
    """Sixth review (lessons 00-02) C3: '(I=1 W=1)' in the title of lesson 00's first 1F1B picture, before I/W exist."""
    from bubblekit.presentation import plotting

    costs = bk.Costs(f=1, b=2)
    assert costs.describe() == "F=1 B=2 (I=1 W=1) comm=0 slot"
    assert costs.describe(split=False) == "F=1 B=2 comm=0 slot"
    fused = bk.simulate(bk.schedule("1f1b", 4, 8), costs)
    assert "F=1 B=2 comm=0 slot" in plotting._timeline_name(fused) and "I=" not in plotting._timeline_name(fused)
    split = bk.simulate(bk.schedule("zb-h1", 4, 8), costs)
    assert "(I=1 W=1)" in plotting._timeline_name(split)
    with pytest.raises(TypeError, match="split must be True or False"):
        costs.describe(split="no")  # type: ignore[arg-type]




# ----------------------------------------------------------------------------- eighth review (the interview bank)


@pytest.mark.parametrize(("id", "answer"), [
    ("10.16", "(m+p-1)*(t_f+t_b)+2*(p-1)*comm"),
    ("10.16", (sb.m + sb.p - 1) * (sb.t_f + sb.t_b) + 2 * (sb.p - 1) * sp.Symbol("comm")),
    ("10.16", "(m+p-1)*(t_f+t_b)+2*(p-1)*c"),
    ("10.16", sb.makespan_gpipe(comm=sb.comm)),
    ("10.15", "(p-1)*(1-target)/target"),
    ("10.15", "(p-1)*(1-b_star)/b_star"),
    ("10.15", "-(b_star - 1)*(p - 1)/b_star"),  # 10.15's own printed root
    ("10.15", (sb.p - 1) * (1 - sp.Symbol("target")) / sp.Symbol("target")),
    ("10.15", sb.solve_min_m()),
])
def test_a_derivation_in_the_names_the_question_prints_is_right(id: str, answer: Any) -> None:
    """Eighth review W2: comm (printed c) and target (printed b^*) were "symbols the answer does not need"."""
    en, zh = both(id, answer)
    assert en and zh, (answer, en)


def test_a_symbol_alias_does_not_make_a_wrong_derivation_right() -> None:
    """Eighth review W2: the aliases are bubblekit.symbolic's names only; another name is still refused."""
    en, zh = both("10.15", "(p-1)*(1-b)/b")
    assert not en and "['b']" in en.detail and "['b']" in zh.detail, en
    en, _ = both("10.16", "(m+p-1)*(t_f+t_b)+(p-1)*comm")
    assert not en and "one way only" in en.detail and "does not need" not in en.detail, en  # the named mistake
    en, _ = both("10.16", "(m+p-1)*(t_f+t_b)+2*p*comm")
    assert not en and "does not need" not in en.detail and en.detail.count("not equal") == 1, en


def test_10_15_a_ceiling_of_the_root_is_named_and_sp_solve_output_is_read() -> None:
    """Eighth review M1 and C2: the ceiling was told to try numbers (which confirm it); sp.solve's list was refused."""
    p, m, target = sb.p, sb.m, sb.target
    root = (p - 1) * (1 - target) / target
    en, zh = both("10.15", sp.ceiling(root))
    assert not en and "the root itself, before rounding up" in en.detail and "取整之前的根本身" in zh.detail, en
    assert "simulator" not in en.detail and en.detail.count("smallest whole m") == 1
    solved = sp.solve(sp.Eq((p - 1) / (m + p - 1), target), m)
    assert check("10.15", solved) and check("10.15", tuple(solved)) and check("10.15", solved[0])
    assert not check("10.15", [root, root + 1])


@pytest.mark.parametrize(("id", "right"), [("10.35", 2), ("10.38", 0), ("06.3", 1)])
def test_a_rank_written_with_the_word_rank_is_read(id: str, right: int) -> None:
    """Eighth review W3: "rank 2" was "not a rank: give a whole number" (and counted) in 10.35, 10.38 and 06.3."""
    for answer in (f"rank {right}", f"Rank{right}", f"r{right}", f"R {right}", f"第 {right} 个 rank", f"rank {right}.0"):
        en, zh = both(id, answer)
        assert en and zh, (answer, en)
    wrong = (right + 1) % 3
    en, _ = both(id, f"rank {wrong}")
    assert not en and "is not a rank" not in en.detail and "does not exist" not in en.detail, en
    en, _ = both(id, "rank 7")
    assert not en and "0 to " in en.detail and "is not a rank" not in en.detail, en  # out of range, read as 7
    en, _ = both(id, f"rank {right}.5")
    assert not en and "not" in en.detail, en


@pytest.mark.parametrize("id", ["10.35", "10.38"])
def test_a_profile_rank_in_words_is_asked_again_not_counted(id: str) -> None:
    """Eighth review W3: text with no number was a counted try with a hint; a non-whole number still is."""
    for text in ("two", "the third rank", "第三个"):
        en, zh = both(id, text)
        assert not en and "answer with the rank's number alone" in en.detail and en.hint == "", en
        assert "not counted as a try" in en.text and "只写 rank 的编号即可" in zh.detail, (en, zh)
    en, _ = both(id, 2.5)
    assert not en and "is not a rank: give a whole number" in en.detail and en.hint, en


def test_10_32_hint_calls_both_bounds_lower_bounds() -> None:
    """Eighth review W1: "try bottlenecks between those bounds" pointed at 9-13, where no partition exists."""
    from bubblekit.analysis import balance
    from bubblekit.course.checks._text import shown
    from bubblekit.course.checks.lesson10 import _LAYERS

    first = REGISTRY["10.32"].hints[0]
    assert "between those bounds" not in shown(first, "en") and "lower bounds" in shown(first, "en")
    assert "两个都是下界" in shown(first, "zh") and "之间" not in shown(first, "zh")
    assert REGISTRY["10.32"].expected() == balance.bottleneck(list(_LAYERS), 4) > max(sum(_LAYERS) / 4, max(_LAYERS))


def test_10_14_mistake_names_both_kinds_of_gap() -> None:
    """Eighth review C1: the missing saving was always said to be the first backward's wait."""
    from bubblekit.course.checks.lesson10 import t_i

    en, zh = both("10.14", (sb.p - 1) * (sb.t_f + t_i))
    assert "before its first I, and in its cool-down" in en.detail and "first backward waits" not in en.detail, en
    assert "第一个 I 之前的那段、冷却阶段的那几段" in zh.detail, zh


# ----------------------------------------------------------------------------- ninth review of the bank


@pytest.mark.parametrize("text", ["rank-2", "rank 2", "Rank2", "rank #2", "r_2", "第 2 个 rank"])
def test_a_rank_written_with_a_hyphen_is_that_rank(text: str) -> None:
    """W2: "rank-2" was read as rank -2 ("does not exist") and counted as a try."""
    from bubblekit.course.checks._grading import as_rank

    assert as_rank(text) == 2
    assert as_rank("rank 2.5") is None and as_rank("rank two") is None
    assert as_rank("rank -1") == -1 and not check("06.3", "rank -1")   # tenth review W1: the sign is kept
    assert as_rank("rank：2") == 2 and as_rank("rank 2。") == 2          # tenth review W2: full-width forms
    assert as_rank("2。") == 2 and as_rank("0。") == 0                  # and a bare number with a full stop


@pytest.mark.parametrize("text", ["第1号rank", "第 1 号 rank", "1号rank", "第 1 号", "第1个rank"])
def test_a_rank_numbered_with_hao_is_that_rank(text: str) -> None:
    """Sixteenth grading review, C1: "第1号rank" (the usual way to number a rank in Chinese) was refused for 02.5
    as "not a rank"; "1 号" alone and "第 1" stay unread (a number of what?)."""
    from bubblekit.course.checks._grading import as_rank

    assert as_rank(text) == 1
    assert as_rank("1 号") is None and as_rank("第 1") is None and as_rank("2.5号rank") is None
    expected = bk.course.checks.lesson02._critical_rank()
    assert check("02.5", f"第{expected}号rank")


def test_10_24_accepts_f_and_b_rounded_as_the_worked_answer_rounds_them() -> None:
    """W1: 11 x (2.73 + 6.59) = 102.52 ms was "too low"; a slot count off by one still is not right."""
    assert check("10.24", 11 * (2.73 + 6.59))
    assert not check("10.24", 10 * (2.73 + 6.59)) and not check("10.24", 12 * (2.73 + 6.59))


@pytest.mark.parametrize("id, made", [("07.4", lambda: bk.schedule("zb-h1", 2, 3)), ("05.4", lambda: bk.schedule("zb-h1", 3, 6)),
                                      ("10.41", lambda: bk.schedule("zb-h1", 2, 4))])
def test_a_whiteboard_refuses_the_object_a_generator_returns(id: str, made: Any) -> None:
    """Eighth review of the solutions, M1: bk.schedule("zb-h1", ...) passed 07.4 and 05.4, whose target it is; the
    same orders written as text are right (as 03.5 has it)."""
    sched = made()
    en, zh = both(id, sched)
    assert not en and "made by a generator" in en.detail and "生成器" in zh.detail
    assert check(id, sched.to_text())
    assert check(id, bk.Schedule.from_text(sched.to_text()))   # the learner's own text as an object is theirs
    assert check(id, bk.Schedule.from_text(sched.to_text(), name="mine"))   # named by the learner too
    assert check(id, bk.Schedule.from_text(sched.to_text(), name="zb-h1"))  # even after the schedule it copies


@pytest.mark.parametrize("text", ["(1-b_star)*(p-1)/b_star", "(p-1)*(1-target)/target"])
def test_03_9_reads_the_names_the_question_uses(text: str) -> None:
    """Tenth review of the grading, W1: 03.9 refused b_star ("unknown symbol b_star: use ... b_star")."""
    import sympy as sp

    assert check("03.9", text) and check("03.9", sp.sympify(text))
    assert not check("03.9", "(1-b_star)*(p+1)/b_star")


# ----------------------------------------------------------------------------- twelfth review of the grading


def _hint_texts(id: str) -> list[tuple[str, str]]:
    from bubblekit.course.checks._text import shown

    return [(shown(h, "en"), shown(h, "zh")) for h in REGISTRY[id].hints]


@pytest.mark.parametrize(("id", "call"), [("05.2", "min_micro_batch"), ("10.34", "bk.schedule("),
                                          ("10.38", "largest_gaps"), ("01.2", "largest_gaps"),
                                          ("06.6", "min_micro_batch"), ("05.1", "bubble_ratio")])
def test_the_first_hint_leads_to_the_method_and_a_revealing_call_only_confirms(id: str, call: str) -> None:
    """M1: 05.2, 10.34 and 10.38's first hint named a call that returns or prints the answer (01.2's tier 2 too)."""
    tiers = _hint_texts(id)
    assert call not in tiers[0][0] and call not in tiers[0][1], tiers[0]
    for en, zh in tiers[1:]:
        if call in en:
            assert "confirm" in en and "验证" in zh, en
    if id == "05.2":
        assert "by hand" not in tiers[0][0] and "Solve" in tiers[0][0], tiers[0]   # the exercise's own by-hand step
    if id == "10.34":   # thirteenth C4: no "at least one" read literally (m = 1); eighteenth C1: the rule is not stated
        assert "at least one" not in tiers[0][0] and "至少分到一个" not in tiers[0][1]
        assert "as many microbatches as stages" not in tiers[0][0] and "不少于流水级数" not in tiers[0][1]
    if id == "10.38":   # eighteenth C1: the first hint does not say which schedule the trace ran
        assert "which rank waits longest" in tiers[0][0] and "GPipe" not in tiers[0][0] and "GPipe" not in tiers[0][1]


@pytest.mark.parametrize(("id", "attribute"), [("10.18", "bubble_ratio"), ("10.19", "bubble_overhead")])
def test_a_hint_naming_the_attribute_that_is_the_answer_names_it_to_confirm(id: str, attribute: str) -> None:
    """Thirteenth M1: 10.18's and 10.19's tier 2 named the attribute that is the answer as a way to get it."""
    for en, zh in _hint_texts(id):
        if attribute in en:
            assert "to confirm" in en and "验证" in zh and en.index("closed form") < en.index(attribute), en


def test_10_34s_first_hint_prints_nothing_the_error_would() -> None:
    """M1: following 10.34's first hint used to print "needs m >= 2p = 8" on the first try (m = 1)."""
    with pytest.raises(ValueError) as err:
        bk.schedule("dualpipev", 4, 1)
    assert "2p" in str(err.value) and not any("2p" in en for en, _ in _hint_texts("10.34"))


@pytest.mark.parametrize(("id", "text"), [
    ("10.11", "(p − 1)/(m + p − 1)"), ("03.8", "(p − 1)/(m + p − 1)"), ("10.15", "(p-1)(1-target)/target"),
    ("10.14", "(p-1)(t_f+t_i-t_w)"), ("10.13", "(p − 1)/(m·v + p − 1)"), ("10.13", "(p - 1)/(m × v + p - 1)"),
    ("10.12", "b/(1 − b)"), ("10.12", "b／(1－b)"), ("03.9", "(p-1)*(1-b^*)/b^*"), ("03.9", "(p-1)(1-b*)/b*"),
    ("03.9", "(p − 1)(1 − b^{*})/b^{*}"), ("10.15", "(p − 1)(1 − b^*)/b^*"), ("10.17", "p−r"), ("10.17", "p－r"),
    ("10.11", "（p－1）／（m＋p－1）"), ("10.16", "(m+p-1)(t_f+t_b) + 2(p-1)c"), ("10.11", "b = (p-1)/(m+p-1)"),
    ("10.15", "m = (p − 1)(1 − b^*)/b^*"),
])
def test_a_derivation_pasted_as_the_course_prints_it_is_read(id: str, text: str) -> None:
    """C1: the minus sign, the middle dot, implicit products, b^* and full-width signs were "(got str)"."""
    en, zh = both(id, text)
    assert en and zh, (text, en, zh)


@pytest.mark.parametrize(("id", "text"), [("10.11", "(p-1)/(m+p-1"), ("03.8", "(p-1)/(m+p-1"),
                                          ("10.17", "p -* r"), ("10.14", "(p-1)(t_f+t_i-t_w")])
def test_an_expression_text_that_cannot_be_read_says_how_to_write_it_and_is_not_counted(id: str, text: str) -> None:
    """C1: "could not read your answer as a sympy expression (got str)" read as if text were not allowed."""
    en, zh = both(id, text)
    assert not en and "(got str)" not in en.detail and repr(text) in en.detail and "*" in en.detail, en
    assert "not counted as a try" in en.text and en.hint == "", en
    assert "读成表达式" in zh.detail and "不计入作答次数" in zh.text, zh
    assert _registry._SESSION[id].tries == 0


def test_expression_text_is_written_in_pythons_notation() -> None:
    """C1: one place turns the course's printed signs into Python's, and keeps names such as t_b whole."""
    from bubblekit.course.checks._grading import expression_text

    assert expression_text("(p − 1)/(m·v + p − 1)") == "(p - 1)/(m*v + p - 1)"
    assert expression_text("（p－1）／（m＋p－1）") == "(p-1)/(m+p-1)"
    assert expression_text("(p-1)(1-b^*)/b^*") == "(p-1)(1-b_star)/b_star"
    assert expression_text("(1-b*)/b*") == "(1-b_star)/b_star" and expression_text("b*m") == "b*m"
    assert expression_text("t_b*(p-1)") == "t_b*(p-1)" and expression_text("p²") == "p**2"
    assert expression_text("b^* = x") == "x" and expression_text("p == m") == "p == m"


def test_10_32s_second_hint_followed_literally_ends_at_the_answer() -> None:
    """C2: tier 2 said "lower T until it needs more than 4 stages", which stops at 13 ("too low")."""
    from bubblekit.course.checks.lesson10 import _LAYERS

    en, zh = _hint_texts("10.32")[1]
    assert "until it does" not in en and "smallest T that fits" in en and "放得下的最小 T" in zh, en

    def stages(t: int) -> int:  # the hint's greedy cut
        count, load = 1, 0
        for w in _LAYERS:
            if load + w > t:
                count, load = count + 1, 0
            load += w
        return count

    fits = [t for t in range(max(_LAYERS), sum(_LAYERS) + 1) if stages(t) <= 4]
    assert min(fits) == REGISTRY["10.32"].expected() and check("10.32", min(fits))
    assert not check("10.32", min(fits) - 1)


@pytest.mark.parametrize(("id", "schedule"), [("10.3", ("gpipe", 4, 8)), ("10.6", ("interleaved", 4, 8, 2))])
def test_every_r_attribute_a_hint_names_exists_on_a_simulation(id: str, schedule: tuple[Any, ...]) -> None:
    """C3: the hints named hops_per_step beside result fields; a SimResult has no such field."""
    import re

    r = bk.simulate(bk.schedule(*schedule), bk.Costs(f=1, b=2))
    for en, zh in _hint_texts(id):
        for text in (en, zh):
            assert not re.search(r"(?<![.\w])hops_per_step", text), text
            for path in re.findall(r"\br\.([A-Za-z_][\w.]*)", text):
                value: Any = r
                for name in path.rstrip(".").split("."):
                    value = getattr(value, name)       # AttributeError: a name the result does not have
    assert "r.schedule.hops_per_step" in _hint_texts(id)[0][0]


@pytest.mark.parametrize(("id", "answer"), [
    ("10.32", "14 ms"), ("10.32", "14ms"), ("10.32", "14 毫秒"), ("10.23", "27 slots"), ("10.23", "27 个时间槽"),
    ("09.4", "112 messages"), ("09.4", "112 条消息"), ("08.5", "7 F"), ("10.20", "135个"), ("10.20", "135 microbatches"),
    ("01.3", "5843.48元"), ("01.3", "5,843 yuan"), ("01.3", "¥5843"), ("10.22", "$176,947"), ("10.22", "176947.2 USD"),
    ("01.1", "12 minutes"), ("01.1", "１２ 分钟"), ("01.4", "18 cars"), ("01.4", "18辆"), ("10.37", "0.3 ms"),
    ("10.24", "103 ms"), ("10.31", "16x"), ("10.31", "16 倍"), ("07.1", "1.5 times"), ("08.3", "85,704 GPU-hours"),
    ("10.26", "15 microbatch activations"), ("04.1", ("12 activations", "6 activations")),
    ("05.2", ("45 microbatches", "23个")), ("02.3", ("1.5 slots", "4 slots")), ("03.4", {"gpipe": "56 slots", "1f1b": 65}),
    ("03.6", ("28 microbatches", "20%")), ("01.2", (0, "6 slots")),
])
def test_a_number_written_with_the_asked_unit_is_read(id: str, answer: Any) -> None:
    """C4: "14 ms", "27 slots", "135个", "5843.48元" got "expected a number" and were counted."""
    en, zh = both(id, answer)
    assert en and zh, (answer, en, zh)


@pytest.mark.parametrize(("id", "answer", "en_words", "zh_words"), [
    ("10.32", "14 s", "that is in seconds; this question asks for the number in ms", "“秒”"),
    ("10.37", "0.3 s", "asks for the number in ms", "“毫秒”"),
    ("01.3", "5843 dollars", "that is in dollars; this question asks for the number in yuan", "“美元”"),
    ("10.20", "135 messages", "that is in messages; this question asks for the number in microbatches", "“条消息”"),
    ("10.18", "0.179 ms", "this number has no unit here", "没有单位"),
    ("10.32", "14 bananas", "expected a number in ms, got the text '14 bananas'", "读不出来"),
    ("07.9", "0.857 of it", "write the number alone, without words", "不要带文字"),
    ("03.6", (28, "20 microbatches"), "item 2", "第 2 项"),
])
def test_a_number_in_another_unit_is_told_its_unit_and_not_counted(id: str, answer: Any, en_words: str,
                                                                   zh_words: str) -> None:
    """C4: a unit is named (the wrong one, or none asked), and such an answer uses up no try."""
    en, zh = both(id, answer)
    assert not en and en_words in en.detail and en.hint == "" and "not counted as a try" in en.text, en
    assert not zh and zh_words in zh.detail and "不计入作答次数" in zh.text, zh
    assert _registry._SESSION[id].tries == 0


def test_a_wrong_number_with_the_asked_unit_is_graded_and_its_mistake_named() -> None:
    """C4: the unit is read, so the value is graded as usual: a direction, or the recognised mistake."""
    en, _ = both("10.32", "13 ms")
    assert not en and "too low" in en.detail and en.hint, en
    en, zh = both("09.4", "56 messages")
    assert not en and "one direction only" in en.detail and "一个方向" in zh.detail, en
    en, _ = both("01.4", "20 cars")
    assert not en and "Megatron's overhead" in en.detail, en


@pytest.mark.parametrize(("id", "percent", "bare"), [("07.7", "41.7%", "41.7"), ("07.9", "85.7%", "85.7"),
                                                      ("07.9", "85.7％", 85.7)])
def test_07_7_and_07_9_read_a_percentage_as_their_fraction(id: str, percent: str, bare: Any) -> None:
    """C4: "41.7%" (07.7) and "85.7%" (07.9) were refused and counted, while 05.7 and 10.18 read a percentage."""
    en, zh = both(id, percent)
    assert en and "percentage was read as a fraction of 1F1B" in en.note and "1F1B" in zh.note, en
    en, zh = both(id, bare)
    assert not en and "looks like a percentage" in en.detail and "百分数" in zh.detail, en
    en, _ = both("07.7", "33.3%")
    assert not en and "headline 1/3" in en.detail, en


def test_every_fraction_reads_a_percentage_and_every_number_in_a_unit_registers_it() -> None:
    """C4 (consistently): an answer below 1 without a unit is a fraction (``fraction_of``); every other number the
    policy grades names its unit, except 06.2's ranks (04.6's set of m values is compared as a set, unread)."""
    def numbers(x: Any) -> list[Any]:
        if isinstance(x, dict):
            return [n for v in x.values() for n in numbers(v)]
        if isinstance(x, (list, tuple)):
            return [n for v in x for n in numbers(v)]
        return [x] if isinstance(x, (int, float)) or type(x).__name__ == "Fraction" else []

    fractions_without, units_without = [], []
    for id, ex in sorted(REGISTRY.items()):
        if ex.compare is not None:
            continue
        values = numbers(ex.expected())
        if not values:
            continue
        units = ex.unit if isinstance(ex.unit, tuple) else (ex.unit,) * len(values)
        for value, unit in zip(values, units if len(units) == len(values) else (ex.unit,) * len(values)):
            if unit is None and 0 < abs(value) < 1 and ex.fraction_of is None:
                fractions_without.append(id)
            if unit is None and abs(value) >= 1 and ex.fraction_of is None:
                units_without.append(id)
    assert not fractions_without, fractions_without
    assert not units_without, units_without   # 06.2's numbers are ranks, read by its own compare (thirteenth C5)


# ----------------------------------------------------------------------------- thirteenth review of the grading


@pytest.mark.parametrize(("id", "text"), [
    ("10.13", "(p − 1)/(mv + p − 1)"), ("10.13", "(p-1)/(vm+p-1)"), ("03.2", "mv/(mv + p − 1)"),
    ("10.11", "(p-1)/(m+p-1)。"), ("10.11", "(p-1)/(m+p-1)."), ("10.11", "(p-1)/(m+p-1) = b"),
])
def test_the_interleaved_formula_as_the_course_prints_it_is_right(id: str, text: str) -> None:
    """W1: lesson 03 and the bank print (p − 1)/(mv + p − 1); 'mv' was one symbol, "not equal", and counted.
    C2: a closing full stop or '= b' after a formula could not be read."""
    en, zh = both(id, text)
    assert en and zh, (text, en, zh)


@pytest.mark.parametrize(("id", "text", "names"), [
    ("10.11", "(P-1)/(M+P-1)", "['M', 'P']"), ("10.14", "(p-1)(F+I-W)", "['F', 'I', 'W']"),
    ("10.11", "(N-1)/(m+N-1)", "['N']"), ("10.11", "(p-1)/(m+p-1)*E", "['E']"), ("10.11", "S*(p-1)/(m+p-1)", "['S']"),
])
def test_a_name_the_course_does_not_use_is_named_and_not_counted(id: str, text: str, names: str) -> None:
    """W1, C1: capitals were "not equal" and counted; I and E were sympy's constants; N, S, O, Q blamed the notation."""
    en, zh = both(id, text)
    assert not en and f"unknown symbol(s) {names}" in en.detail and "not counted as a try" in en.text, en
    assert f"未知符号 {names}" in zh.detail and "不计入作答次数" in zh.text, zh
    assert _registry._SESSION[id].tries == 0


def test_a_course_symbol_the_answer_does_not_need_is_still_a_counted_mistake() -> None:
    """W1: splitting 'mv' must not make the interleaved formula right for plain 1F1B (10.11)."""
    en = check("10.11", "(p-1)/(mv+p-1)")
    assert not en and "['v']" in en.detail and _registry._SESSION["10.11"].tries == 1, en


@pytest.mark.parametrize(("id", "text"), [("10.20", "m = 135"), ("10.20", "m=135"), ("10.32", "T = 14"),
                                          ("10.21", "≈0.0986"), ("10.21", "~0.0986"), ("10.20", "135."),
                                          ("01.3", "约5843元"), ("01.3", "大约5843元。")])
def test_a_number_written_as_name_equals_or_about_is_read(id: str, text: str) -> None:
    """C2: "m = 135", "≈0.0986" and "约5843元" were "not a number"."""
    en, zh = both(id, text)
    assert en and zh, (text, en, zh)


@pytest.mark.parametrize(("id", "text"), [("07.1", "150%"), ("09.5", "227%")])
def test_a_percentage_for_a_plain_number_is_a_form_problem_not_a_try(id: str, text: str) -> None:
    """C5: a factor written as a percentage used up hint tiers."""
    en, zh = both(id, text)
    assert not en and "does not ask for a percentage" in en.detail and "not counted as a try" in en.text, en
    assert "不要百分数" in zh.detail and _registry._SESSION[id].tries == 0


def test_06_2_reads_its_second_item_as_a_rank() -> None:
    """C5: 06.2 refused "rank 1" while 06.3, 10.35 and 10.38 read it."""
    below, busiest = REGISTRY["06.2"].expected()
    en, zh = both("06.2", (below, f"rank {busiest}"))
    assert en and zh, (en, zh)
    assert not check("06.2", (below, f"rank {busiest + 1}"))


def _right_1f1b() -> str:
    return bk.schedule("1f1b", 3, 3).to_text()


def test_a_whiteboard_reads_lowercase_kinds() -> None:
    """C3: '0f0' was "cannot read action" though text answers ignore case."""
    en, zh = both("10.40", _right_1f1b().lower())
    assert en and zh, (en, zh)


def test_a_whiteboard_that_cannot_be_read_is_told_so_in_the_learners_language_and_not_counted() -> None:
    """C3: the schedule reader's errors reached a Chinese learner in English, and a parse error used up a tier."""
    text = _right_1f1b().replace("0B2", "0X2")
    en, zh = both("10.40", text)
    assert not en and "cannot read action '0X2'" in en.detail and "not counted as a try" in en.text, en
    assert "无法识别动作 '0X2'" in zh.detail and "cannot read" not in zh.detail and "不计入作答次数" in zh.text, zh
    assert _registry._SESSION["10.40"].tries == 0


def test_a_whiteboard_missing_an_action_is_named_in_chinese() -> None:
    """C3: "illegal schedule: 0B2 (or 0I2 and 0W2) is missing (rank 0)" reached a Chinese learner in English."""
    text = _right_1f1b().replace(" 0B2", "")
    en, zh = both("10.40", text)
    assert not en and "0B2 (or 0I2 and 0W2) is missing (rank 0)" in en.detail, en
    assert "rank 0 缺少 0B2（或拆开的 0I2 和 0W2）" in zh.detail and "illegal" not in zh.detail, zh


def test_the_schedule_readers_english_messages_are_unchanged() -> None:
    """C3: the zh entries leave the reader's English text exactly as it was."""
    with pytest.raises(bk.ScheduleError) as err:
        bk.Schedule.from_text("rank 0: 0F0 0X0")
    assert str(err.value) == ("line 1: cannot read action '0X0': expected <stage><kind><microbatch> with kind one of "
                              "F, B, I, W, e.g. '0F3' (stage 0, forward, microbatch 3), or an overlapped pair, a forward "
                              "and a backward joined by '&' and run as one unit, e.g. '0F1&0B0'")
    with pytest.raises(bk.ScheduleError) as err:
        bk.Schedule.from_text("rank 0: 0F0 0F1 0B1")
    assert str(err.value) == "illegal schedule:\n  0B0 (or 0I0 and 0W0) is missing (rank 0)"


# ----------------------------------------------------------------------------- fourteenth review of the grading


@pytest.mark.parametrize("text", ["min(p − r, m)", "min(p-r,m)", "Min(p-r,m)", "p - r"])
def test_the_peak_accepts_min_as_the_course_prints_it(text: str) -> None:
    """W1: c051 says check accepts min(p − r, m); Python's min was 'write it as in Python'."""
    en, zh = both("10.17", text)
    assert en and zh, (text, en, zh)


@pytest.mark.parametrize("id, text", [
    ("10.16", "(m + p − 1)(t_f + t_b) + 2c(p − 1)"),
    ("10.16", "(m+p-1)(t_f+t_b) + 2 c (p-1)"),
    ("03.7", "t_f (m+p-1) + t_b (m+p-1)"),
    ("03.7", "(t_f+t_b)(m+p-1)"),
    ("03.11", "(m+p-1)(t_f+t_b)+c(2m+2p-4-2ceiling((m-1)/p))"),
])
def test_a_symbol_before_a_parenthesis_is_a_product(id: str, text: str) -> None:
    """W2: 2c(p − 1), as lesson 03 prints it, was read as a call of c."""
    en, zh = both(id, text)
    assert en and zh, (id, text, en, zh)


@pytest.mark.parametrize("text", ["p = 1", "1", "1。", "p=1"])
def test_the_depth_reads_text_as_the_numeric_checks_do(text: str) -> None:
    """W3: 'p = 1' was "not a pipeline depth", and counted."""
    en, zh = both("09.2", text)
    assert en and zh, (text, en, zh)


@pytest.mark.parametrize("text", ["1 GPU", "two"])
def test_a_depth_in_words_is_said_and_not_counted(text: str) -> None:
    en, zh = both("09.2", text)
    assert not en and "not counted as a try" in en.text and "不计入作答次数" in zh.text, (en, zh)
    assert _registry._SESSION["09.2"].tries == 0
    assert "is not a pipeline depth" in check("09.2", "1.5").detail


@pytest.mark.parametrize("id, answer", [
    ("05.3", "4 chunks"), ("05.3", "4个"), ("02.5", "1 apples"),
    ("06.3", "1 apples"), ("10.35", "1 apples"), ("10.38", "1 apples"),
    ("01.2", (0, "6 minutes")), ("01.2", (0, "6 apples")),
])
def test_a_form_problem_in_a_pick_is_not_counted(id: str, answer: Any) -> None:
    """M1: compare_choice, the rank readers and 01.2's items charged a tier for words that are no unit."""
    en, zh = both(id, answer)
    assert not en and "not counted as a try" in en.text and "不计入作答次数" in zh.text, (id, answer, en, zh)
    assert _registry._SESSION[id].tries == 0


def test_a_fractional_rank_is_still_counted() -> None:
    assert not check("06.3", "2.5") and _registry._SESSION["06.3"].tries == 1


def test_an_unknown_name_in_the_peak_is_not_counted() -> None:
    """M2: 'P-R' for 10.17 was counted, unlike every other expression check."""
    en, zh = both("10.17", "P-R")
    assert not en and "unknown symbol(s) ['P', 'R']" in en.detail and "not counted as a try" in en.text, en
    assert "未知符号" in zh.detail and "不计入作答次数" in zh.text, zh
    assert _registry._SESSION["10.17"].tries == 0


@pytest.mark.parametrize("id, answer", [("02.5", "rank 1"), ("02.5", "r1"), ("01.2", ("rank 0", 6))])
def test_rank_words_are_read_in_every_rank_question(id: str, answer: Any) -> None:
    """C1: 02.5 and 01.2 refused 'rank 1', which 06.x and 10.x accept."""
    expected = REGISTRY[id].expected()
    if id == "02.5":
        answer = f"rank {expected}" if answer == "rank 1" else f"r{expected}"
    else:
        answer = (f"rank {expected[0]}", expected[1])
    en, zh = both(id, answer)
    assert en and zh, (id, answer, en, zh)


def test_one_over_the_rounded_key_is_named_upside_down() -> None:
    """C2: '1/16' for 10.31 (key 16.018) was "too low", while '0.0624' was named upside down."""
    en, zh = both("10.31", "1/16")
    assert not en and "upside down" in en.detail, en
    assert "颠倒" in zh.detail, zh
    assert "too low" in check("10.31", "1/15").detail


@pytest.mark.parametrize("path", ["solutions/10_interview_bank.ipynb", "solutions/zh/10_interview_bank.ipynb"])
def test_the_peaks_worked_answer_is_accepted_as_written(path: str) -> None:
    """W1: c051 says check accepts min(p − r, m); every min(…) form that cell prints is ✓ for 10.17."""
    import json
    import re
    from pathlib import Path

    cells = json.loads((Path(__file__).resolve().parents[1] / path).read_text(encoding="utf-8"))["cells"]
    text = "".join(next(c for c in cells if c.get("id") == "c051")["source"])
    forms = re.findall(r"min\(p − r, m\)", text)
    assert forms, text
    for form in forms:
        reset_progress()
        assert check("10.17", form), form


# ----------------------------------------------------------------------------- seventeenth review of the grading


@pytest.mark.parametrize(("id", "calls"), [("10.38", ("largest_gaps",)), ("06.6", ("min_micro_batch",)),
                                           ("05.1", ("bk.bubble_ratio(",)), ("01.2", ("largest_gaps",)),
                                           # eighteenth review, W1: the same pattern in seven more hints
                                           ("09.3", ("read bubble_ratio", "读 bubble_ratio")),
                                           ("03.6", ("bk.bubble_overhead(",)), ("04.6", ("legal_ms",)),
                                           ("05.6", (".best.time_per_microbatch",)),
                                           ("10.18", ("read bubble_ratio", "读 bubble_ratio")),
                                           ("10.19", ("read bubble_overhead", "读 bubble_overhead")),
                                           ("10.23", ("simulate it",))])
def test_no_hint_tier_names_a_call_that_returns_the_answer(id: str, calls: tuple[str, ...]) -> None:
    """W2: a second hint "to confirm" named the one call that returns the answer; each tier now gives a method."""
    for en, zh in _hint_texts(id):
        assert not any(c in en or c in zh for c in calls), (en, zh)


def test_deadlock_feedback_counts_actions_from_one_in_both_languages() -> None:
    """W1: "action #0 in its order" named the first action with a 0 and no word that the count starts at 0."""
    text = "rank 0: 0F0 0B0 0F1 0B1\nrank 1: 1F1 1F0 1B0 1B1"
    en, zh = both("01.5", text)
    assert not en and "rank 1 is blocked at 1F1 (action 1 of 4 in its order)" in en.detail and "#" not in en.detail
    assert "第 1 个动作，共 4 个" in zh.detail and "从 0 开始" not in zh.detail


def test_a_fused_whiteboard_over_its_cap_is_told_to_run_a_b() -> None:
    """C1: 10.40 uses the full backward and refuses W, yet its over-cap feedback said "run a W (or B)"."""
    gpipe = bk.schedule("gpipe", 3, 3).to_text()     # legal, but rank 1 holds 3 where 1F1B holds 2
    en, zh = both("10.40", gpipe)
    assert not en and "run a B before the next F" in en.detail and "W" not in en.detail.split(":")[-1]
    assert "先跑一个 B" in zh.detail and "W" not in zh.detail.split("：")[-1]


@pytest.mark.parametrize(("id", "worked", "cell"), [("10.21", 0.0986, "c064"), ("10.36", 0.379, "c111")])
def test_a_number_a_worked_answer_quotes_is_accepted(id: str, worked: float, cell: str) -> None:
    """C2: 10.21's "≈ 0.099" and 10.36's "about 0.38" were only "close"; the worked answers now quote three digits."""
    import json
    from pathlib import Path

    for notebook in ("solutions/10_interview_bank.ipynb", "solutions/zh/10_interview_bank.ipynb"):
        cells = json.loads((Path(__file__).resolve().parents[1] / notebook).read_text(encoding="utf-8"))["cells"]
        assert str(worked) in next("".join(c["source"]) for c in cells if c["id"] == cell), notebook
    reset_progress()
    assert check(id, worked)


@pytest.mark.parametrize("answer", ["(p - 1)*(t_f + t_b - 2*t_w)", "(p-1)(t_f + t_b - 2 t_w)"])
def test_10_14_reads_the_fused_backward_as_i_plus_w(answer: str) -> None:
    """Eighteenth review, M1: lessons 07 and 08 teach ZB-H1's bubble as (p − 1)(F + B − 2W) with B = I + W; 10.14
    called it "not equal" and counted the try. t_b is read as t_i + t_w, and the verdict says so."""
    en, zh = both("10.14", answer)
    assert en and "t_b read as t_i + t_w" in str(en) and "t_b 按 t_i + t_w 理解" in str(zh)
    assert not both("10.14", "(p - 1)*(t_f + t_b - t_w)")[0]   # one W too few saved: still wrong


@pytest.mark.parametrize(("id", "text"), [("10.22", "17.7万美元"), ("08.3", "8.57万GPU小时"), ("10.22", "约 17.69 万美元")])
def test_a_chinese_magnitude_is_read(id: str, text: str) -> None:
    """Eighteenth review, C2: "17.7万美元" was "write the number alone"; 万 and 亿 scale the number, digits kept."""
    from bubblekit.course.checks._grading import read_number

    assert both(id, text)[1]
    assert read_number("1.2亿").value == 120_000_000 and read_number("3万").value == 30_000
    assert not isinstance(read_number("万"), type(read_number("3万")))


def test_02_6_names_gpipes_order_when_it_passes() -> None:
    """Eighteenth review, C5: with m = p GPipe's order is as fast as 1F1B and passes 02.6; the verdict says whose order
    it is, and 1F1B's own order gets no such note."""
    en, zh = both("02.6", bk.schedule("gpipe", 3, 3).to_text())
    assert en and "GPipe's order" in str(en) and "GPipe 的顺序" in str(zh)
    assert "GPipe" not in str(both("02.6", bk.schedule("1f1b", 3, 3).to_text())[0])


@pytest.mark.parametrize(("id", "answer", "said"), [
    ("10.31", "1/16", "upside down"), ("10.31", Fraction(1, 16), "upside down"), ("10.31", 0.0625, "upside down"),
    ("10.36", 3 / 11, "for equal stages"), ("10.23", 33, "1F1B's makespan"), ("10.26", 8, "1F1B's and ZB-H1's peak"),
    ("10.34", 4, "counts ranks"),
])
def test_the_banks_classic_mistakes_are_named_whatever_the_type(id: str, answer: Any, said: str) -> None:
    """Eighteenth review, C6: the mistake each question is built around got a bare "too high / too low", and 10.31's
    1/16 was named as text but not as a Fraction or a float."""
    en, zh = both(id, answer)
    assert not en and said in en.detail and zh.detail != en.detail, en


def test_nineteenth_review_schedule_text_full_width_06_6_and_10_8() -> None:
    """C4: a schedule typed with a Chinese input method (full-width colon, commas between actions) is read; C3: 06.6's
    m from Megatron's (p − 1)/m is named; C1: 10.8's second hint no longer prints the stages that answer it."""
    text = bk.schedule("1f1b", 3, 3).to_text().replace(":", "：")
    text = "\n".join(line.split("：")[0] + "：" + "，".join(line.split("：")[1].split()) for line in text.splitlines())
    assert both("10.40", text)[0]
    en, zh = both("06.6", 55)
    assert not en and "Megatron's overhead" in en.detail and "Megatron 口径" in zh.detail
    assert not any("stages_of" in en or "stages_of" in zh for en, zh in _hint_texts("10.8"))
