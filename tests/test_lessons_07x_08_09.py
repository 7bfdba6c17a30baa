"""The helpers behind lessons 07x, 08 and 09 (bubblekit.course.published, checks.lesson09).

The lessons' own checks run in their collapsed check cells (nbval); these tests pin the numbers
the audit of 2026-12 found wrong or unproved, and the helpers' answers to bad input.
"""

from __future__ import annotations

import pytest

import bubblekit as bk
from bubblekit.course import published as P
from bubblekit.course.checks import lesson09
from bubblekit.i18n import set_language


def test_dualpipe_case_is_simulated_and_equals_the_closed_form() -> None:
    """Lesson 08: DeepSeek-V3's bubble_ratio comes from the simulator; every rank idles the closed form."""
    est = P.case_estimate("DeepSeek-V3")
    assert est.method.startswith("simulated dualpipe p=16 m=120")
    run = P.case_result("DeepSeek-V3")
    closed = P.dualpipe_bubble_time(16, 1, 2, 1)
    assert min(run.idle) == max(run.idle) == closed == 14
    assert est.bubble_ratio == pytest.approx(closed / (closed + 120 * 3))


def test_dualpipe_perfect_overlap_is_simulated() -> None:
    """The audit's 08-1: 1.91% was not a bubble_ratio; the simulation gives 1.66%, the worst rank 2.65%."""
    run = P.case_result("DeepSeek-V3", costs=bk.Costs(f=1, b=2, fb="max"))
    assert run.makespan == 264
    assert run.bubble_ratio == pytest.approx(0.016572, abs=5e-6)
    assert max(run.idle) == P.dualpipe_bubble_time(16, 1, 2, 1, fb=2) == 7
    assert max(run.idle) / run.makespan == pytest.approx(0.026515, abs=5e-6)
    est = P.case_estimate("DeepSeek-V3", costs=bk.Costs(f=1, b=2, fb="max"))
    assert est.bubble_ratio == run.bubble_ratio
    assert f"{est.bubble_ratio:.2%}" != "1.91%"


def test_case_result_bad_input() -> None:
    with pytest.raises(ValueError, match="unknown case"):
        P.case_result("GPT-5")
    with pytest.raises(TypeError, match="schedule_name"):
        P.case_result("BLOOM-176B", schedule_name=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="costs"):
        P.case_result("BLOOM-176B", costs={"f": 1})  # type: ignore[arg-type]
    with pytest.raises((TypeError, ValueError), match="micro_batch"):
        P.case_result("BLOOM-176B", micro_batch=0)


def test_lever_table_rows_in_documented_order() -> None:
    t = P.lever_table()
    assert t.column("case") == ["Megatron-LM 1T"] * 3 + ["BLOOM-176B"] * 4 + ["Llama 3 405B"] * 2
    ratio = t.column("bubble_ratio")
    assert ratio[5] is None                      # interleaving refused for m = 128 on 12 ranks
    assert ratio[2] < ratio[0] and ratio[8] > ratio[7]
    assert ratio[6] == min(r for r in ratio[3:7] if r is not None)


def test_lesson_07x_tables_match_their_comparisons() -> None:
    rows = P.zb_readme_comparison(8, 32)
    t = P.zb_readme_table(8, 32)
    assert t.column("method") == [r.method for r in rows]
    assert t.column("bubblekit") == [r.computed["bubble rate"] for r in rows]
    exact = P.dualpipe_readme_table(8, 32, bk.Costs(f=1, i=1, w=1, fb="max"))
    assert exact.column("formula") == exact.column("bubblekit")
    assert len(P.zb_table5_table()) == len(P.zb_table5_comparison())
    assert [round(x, 1) for x in P.zero_figure1_table().column("gb_per_device")] == [120, 31.4, 16.6, 1.9]
    assert all(abs(d) < 0.002 for d in P.activation_formula_table().column("difference"))
    assert len(P.zb_readme_history_table()) == len(P.ZB_README_HISTORY)


def test_lesson_07x_tables_bad_input() -> None:
    with pytest.raises(ValueError, match="pp"):
        P.dualpipe_readme_table(7, 32)
    with pytest.raises((TypeError, ValueError), match="rows"):
        P.zb_search_table(rows=0)


def test_tables_headers_follow_the_language() -> None:
    try:
        set_language("zh")
        assert "方法" in str(P.zb_readme_table())
        assert "类别" in str(lesson09.interview_bank_table())
        assert "按实际配置" in str(P.lever_table())
    finally:
        set_language("en")
    text = str(lesson09.interview_bank_table())
    assert "category" in text and not any("\u4e00" <= ch <= "\u9fff" for ch in text)


def test_interview_bank_table_counts_every_question() -> None:
    from bubblekit.course.checks import lesson10

    t = lesson09.interview_bank_table()
    assert sum(t.column("questions")) == len(lesson10.BANK)
    assert t.column("ids")[0] == "10.1–10.10"


def test_zb_v_reaches_zero_at_1f1b_peak() -> None:
    """The audit's 09-1: zero bubble does not need more memory; ZB-V is zero at 1F1B's peak."""
    fiw = bk.Costs(f=1, i=1, w=1)
    zbv = bk.simulate(bk.schedule("zb-v", 4, 8), fiw)
    one = bk.simulate(bk.schedule("1f1b", 4, 8), fiw)
    assert zbv.stage_span_bubble_rate == 0
    assert zbv.max_peak_activations == one.max_peak_activations == 4


def test_second_review_notes_state_their_conditions() -> None:
    """The review of 2026-12-01: F&B named in the DualPipe footer, I = W = F and DeepSeek's hours stated."""
    assert "F&B=F+B" in P.dualpipe_readme_table(8, 32, bk.Costs(f=2, i=3, w=1)).note
    assert "F&B=max(F,B)" in P.dualpipe_readme_table(8, 32, bk.Costs(f=1, i=1, w=1, fb="max")).note
    assert "I = W = F" in P.lever_table().note
    ds = P.case_worksheet(P.case_estimate("DeepSeek-V3"))
    assert "2,664K pre-training" in ds.note and "I = W = F" in ds.note
    try:
        set_language("zh")
        zh = P.case_worksheet(P.case_estimate("DeepSeek-V3")).note
        assert "预训练 2,664K" in zh and "2,664K pre-training" not in zh
    finally:
        set_language("en")
