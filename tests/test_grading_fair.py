"""Every grade fair (issue 21's grading items and the bank's 10.x audit findings; issue 20's decimal comma).

For each fix: a wrong answer is refused, each defensible answer is accepted, each recognised
mistake is named (in English and in Chinese), feedback on a part is never nested and is
1-based, a decimal comma is read or named, a rounding difference in the last digit is said to
be one, and an unanswered exercise is "no answer yet".
"""

from __future__ import annotations

from collections.abc import Iterator
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


# ----------------------------------------------------------------------------- sixth review (solutions 06-09)


def test_06_7_hint_names_the_words_the_check_reads() -> None:
    """Sixth review W1: the hint said 'its first word will do', but 'measured' (the right row's first word) was refused."""
    from bubblekit.course.checks._text import shown

    hint = " ".join(shown(t, "en") for t in dict(REGISTRY["06.7"].kind_hints)["unreadable"])
    assert "first word" not in hint and "'measured'" in hint and "durations" not in hint  # no hint names the answer
    en, zh = both("06.7", "measured")
    assert not en and "names no effect" in en.detail and "two ends" in en.detail, en
    assert not zh and "两端" in zh.detail, zh
    assert check("06.7", "durations") and check("06.7", "measured durations")


def test_06_7_rows_tied_with_the_highest_are_all_told_so() -> None:
    """Sixth review C2: latency and pickup tie up to float noise; only latency was called 'the highest'."""
    for row in ("latency", "pickup"):
        en, zh = both("06.7", row)
        assert not en and "as high as any effect's" in en.detail, (row, en)
        assert "最高的一样" in zh.detail, zh
    assert "another row adds more" in check("06.7", "overhead").detail


def test_06_3_a_whole_float_is_a_rank() -> None:
    """Sixth review C4: 1.0 was 'not a rank: give a whole number'."""
    import numpy as np

    from bubblekit.course.checks import lesson06

    right = lesson06._waits_for()
    assert right is not None and check("06.3", float(right)) and check("06.3", np.float64(right))
    en, zh = both("06.3", right + 0.5)
    assert not en and "ranks are whole numbers" in en.detail and "整数" in zh.detail


def test_09_2_a_depth_is_right_or_not_and_16_is_named() -> None:
    """Sixth review M2: 'too high' for 2 left only p = 1."""
    assert all(both("09.2", 1)) and check("09.2", 1.0) and check("09.2", "1")
    for wrong in (2, 4, 8):
        en, zh = both("09.2", wrong)
        assert not en and "too " not in en.detail and "not the shortest" in en.detail, (wrong, en)
        assert "偏" not in zh.detail, zh
    en, zh = both("09.2", 16)
    assert not en and "deepest pipeline" in en.detail and "最深" in zh.detail
    assert "not one of the choices" in check("09.2", 3).detail


@pytest.mark.parametrize(("id", "answer", "word"), [("09.5", 2, "textbook's 2x"), ("07.1", 2, "too high"),
                                                    ("07.6", 4, "too low"), ("07.6", 5, "too high")])
def test_a_single_digit_int_is_graded_like_its_float(id: str, answer: int, word: str) -> None:
    """Sixth review M1: 2 was 'close' while 2.0 was 'too low' (an int was read as one significant digit)."""
    as_int, as_float = check(id, answer), check(id, float(answer))
    assert not as_int and as_int.status == as_float.status and word in as_int.detail, (as_int, as_float)
    assert as_int.detail == as_float.detail


def test_07_4_split_refusal_gets_the_split_hint_and_the_avoidable_gap() -> None:
    """Sixth review C1, M3: a fused answer got the rank-lines hint; a slow split 1F1B was pointed at the one gap no
    schedule avoids (rank 0 before 0I0)."""
    en, zh = both("07.4", bk.schedule("1f1b", 2, 3))
    assert not en and "never as one B" in en.hint and "rank r:" not in en.hint, en
    assert "不要写成一个 B" in zh.hint, zh
    slow = ("rank 0: 0F0 0F1 0I0 0W0 0F2 0I1 0W1 0I2 0W2\n"
            "rank 1: 1F0 1I0 1W0 1F1 1I1 1W1 1F2 1I2 1W2")
    res = check("07.4", slow)
    assert not res and "before 0I2" in res.detail and "before 0I0" not in res.detail, res


def test_07_7_and_07_9_second_hints_lead_to_the_method_not_the_value() -> None:
    """Sixth review M4: the hints were the answer's own expression ((p + 4) // 3 over p; the hops_per_step ratio)."""
    from bubblekit.course.checks._text import shown

    h7 = shown(REGISTRY["07.7"].hints[1], "en")
    h9 = shown(REGISTRY["07.9"].hints[1], "en")
    assert "(p + 4) // 3" not in h7 and "max_peak_activations" in h7 and "never reaches" in h7
    assert "bk.schedule(" not in h9 and "hops_per_step" in h9
