"""The helpers behind lessons 07x, 08 and 09 (bubblekit.course.published, checks.lesson09).

The lessons' own checks run in their collapsed check cells (nbval); these tests pin the numbers
the audit of 2026-12 found wrong or unproved, and the helpers' answers to bad input.
"""

from __future__ import annotations

from fractions import Fraction

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
        assert "预训练 266.4 万" in zh and "2,664K" not in zh
    finally:
        set_language("en")


# ---------------------------------------------------------------- twelfth review (2026-12-02), lessons 06–09

@pytest.mark.parametrize("p", [2, 4, 8])
def test_09_zb_h2_zero_survives_a_longer_w_not_a_longer_i(p: int) -> None:
    """W1 (lesson 09, belief 4): ZB-H2's zero stage-span rate needs m >= 2p - 1 and I <= F <= W, not F = I = W;
    an I longer than F (the measured layer) or a W shorter than F leaves a residue; ZB-V leaves one away from equality."""
    f = Fraction(1)
    for m in (2 * p - 1, 2 * p, 3 * p):
        for i in (Fraction(1, 2), Fraction(4, 5), f):
            for w in (f, Fraction(5, 4), Fraction(2), Fraction(3)):
                rate = bk.simulate(bk.schedule("zb-h2", p, m), bk.Costs(f=f, i=i, w=w)).stage_span_bubble_rate
                assert abs(rate) < 1e-12, (p, m, i, w)
        for costs in (bk.Costs(f=1, i=1.5, w=1), bk.Costs(f=1, i=1, w=0.9), bk.h200_costs()):
            assert bk.simulate(bk.schedule("zb-h2", p, m), costs).stage_span_bubble_rate > 0.001, (p, m, costs)
    assert bk.h200_costs().i > bk.h200_costs().f
    assert bk.simulate(bk.schedule("zb-v", 4, 8), bk.Costs(f=1, i=1, w=2)).stage_span_bubble_rate > 0.01


def test_07x_dualpipe_readme_rows_exact_where_the_recap_says() -> None:
    """M2 (lesson 07x, Recap): the DualPipe rows are exact only for I = F and W <= F; the 1F1B row for any costs tried,
    the ZB1P row for any I while W <= F."""
    def exact(costs: bk.Costs) -> set[str]:
        table = P.dualpipe_readme_table(8, 32, costs)
        return {r["method"] for r in table if abs(r["bubblekit"] - r["formula"]) < 1e-9}

    everything = {"1F1B", "ZB1P", "DualPipe", "DualPipeV"}
    for w in (Fraction(1, 2), Fraction(1)):
        assert exact(bk.Costs(f=1, i=1, w=w, fb="max")) == everything
    for i, w in ((Fraction(4, 5), Fraction(1, 2)), (Fraction(1, 2), Fraction(1, 2)), (Fraction(6, 5), Fraction(1, 2)),
                 (Fraction(11, 10), Fraction(1, 2)), (Fraction(4, 5), Fraction(1, 5)), (Fraction(3, 2), Fraction(1, 2))):
        assert exact(bk.Costs(f=1, i=i, w=w)) == {"1F1B", "ZB1P"}, (i, w)
    for i, w in ((1, Fraction(3, 2)), (1, 2), (Fraction(3, 2), Fraction(3, 2))):
        assert exact(bk.Costs(f=1, i=i, w=w)) == {"1F1B"}, (i, w)


def test_07x_table5_reproduces_three_columns_and_says_so() -> None:
    """M3 (lesson 07x, Recap): only 1F1B, ZB-H1 and ZB-H2 of Table 5's six columns are simulated (ZB-1p by the search);
    1F1B-I is not attempted and the Recap says so."""
    assert set(P.ZB_TABLE5_COLUMNS) - {r.schedule for r in P.zb_table5_comparison()} == {"1F1B-I", "ZB-1p", "ZB-2p"}
    with pytest.raises(ValueError, match="1F1B-I"):
        P.zb_table5_comparison(columns=("1F1B-I",))
    recap = " ".join(_lesson_cell("07x_published_tables.ipynb", "ad0b7c94").split())
    assert "1F1B-I column is not attempted" in recap and "ZB-2p is not reproduced" in recap
    # 14th review W1/W2: no "and only then" (points off I = F can match by coincidence); ZB1P needs W <= min(F, I)
    assert "DualPipe and DualPipeV formulas are exact when I = F and W ≤ F" in recap and "only then" not in recap
    assert "the ZB1P row while W ≤ F and W ≤ I" in recap
    coincidence = P.dualpipe_readme_table(8, 32, bk.Costs(f=1, i=1.25, w=1.5))
    assert all(abs(coincidence.row(method=n)["bubblekit"] - coincidence.row(method=n)["formula"]) < 1e-9
               for n in ("DualPipe", "DualPipeV"))
    w_above_i = P.dualpipe_readme_table(8, 32, bk.Costs(f=1, i=0.5, w=1))
    assert abs(w_above_i.row(method="ZB1P")["bubblekit"] - w_above_i.row(method="ZB1P")["formula"]) > 0.1


def test_07x_readme_history_starts_with_the_first_version() -> None:
    """C1 (lesson 07x, 41da43a8): the old Megatron-overhead wording runs from the README's first version, 2023-11-17."""
    first, *_ = P.ZB_README_HISTORY
    assert first[:2] == ("2023-11-17", "2023-11-20")
    old = [h for h in P.ZB_README_HISTORY if h[3] in ("p-1/3m", "(p-1)/3m")]
    text = " ".join(_lesson_cell("07x_published_tables.ipynb", "41da43a8").split())
    assert f"From the README's first version ({old[0][0]}) to {old[-1][1]}" in text
    assert f"without parentheses, until {old[0][1]}" in text


def _lesson_cell(name: str, cell_id: str) -> str:
    """A cell's source as the course ships it (the committed notebook; the working tree with BUBBLEKIT_CHECK_WORKTREE=1)."""
    import json
    from pathlib import Path

    from bubblekit.course.workspace import course_notebooks
    root = Path(__file__).resolve().parent.parent
    shipped = {nb.path.name: nb.text for nb in course_notebooks(root, ("notebooks",)) if nb.path.parent.name == "notebooks"}
    cell = next(c for c in json.loads(shipped[name])["cells"] if c.get("id") == cell_id)
    return "".join(cell["source"])


def _flat(name: str, cell_id: str) -> str:
    return " ".join(_lesson_cell(name, cell_id).split())


def test_thirteenth_review_07x_says_which_rows_stop_matching() -> None:
    """W1: at W = 1.5 F the ZB1P and DualPipe rows miss, the 1F1B row still holds."""
    text = _flat("07x_published_tables.ipynb", "d3f53016")
    assert "where the ZB1P and DualPipe rows stop matching; the 1F1B row holds for any costs" in text
    t = P.dualpipe_readme_table(8, 32, bk.Costs(f=1, i=1, w=1.5))
    exact = {r["method"] for r in t.rows if abs(r["bubblekit"] - r["formula"]) < 1e-9}
    assert "1F1B" in exact and "ZB1P" not in exact and not any(n.startswith("DualPipe") for n in exact)


def test_thirteenth_review_07_recap_states_the_condition_of_the_zero() -> None:
    """M1: the Recap's zero holds at F = I = W, not on the measured layer (lesson 09 agrees)."""
    text = _flat("07_beyond_1f1b.ipynb", "af5e231e")
    assert "remove the per-rank (stage-span) bubble at F = I = W" in text
    assert "on the measured layer, where I > F, some of it remains" in text
    for name in ("zb-h2", "zbv"):
        run = bk.simulate(bk.schedule(name, 4, 8), bk.h200_costs())
        assert P.stage_span_bubble_rate(run) > 0.01


def test_thirteenth_review_07_cites_its_sources() -> None:
    """C3, C4: the DualPipe README's ZB1P row; the tests and the torch runtime behind the comparisons."""
    assert "the DualPipe README's ZB1P row, (PP−1)(F+B−2W) with B = I + W" in _flat("07_beyond_1f1b.ipynb", "048bed37")
    assert "`tests/test_vshape.py`" in _flat("07_beyond_1f1b.ipynb", "02f78134")
    text = _flat("07_beyond_1f1b.ipynb", "b7c3b32a")
    assert "`tests/test_torch_orders.py`" in text and "`_PipelineScheduleRuntime`" in text


def test_thirteenth_review_08_megatron_rule_and_assumed_micro_batch() -> None:
    """M2: m % p = 0 is Megatron-LM's default only; M3: the 1T micro-batch of 1 is an assumption."""
    text = _flat("08_case_studies.ipynb", "98780550")
    assert "Megatron-LM's default (N = p microbatches in a row per chunk) asks m % p = 0" in text
    assert "--microbatch-group-size-per-virtual-pipeline-stage" in text and "schedules.py" in text
    n, m, p = 16, 128, 12
    assert p <= n <= m and not (0 < m % n < p) and m % p != 0
    assert "the micro-batch is 1 (as assumed above" in text
    assert "already 1" not in text


def test_thirteenth_review_06_target_and_per_kind_wording() -> None:
    """C1: the target is a ratio; C2: the per-kind model charges every action of its stage and kind; C4: cited test."""
    text = _flat("06_profiling_practice.ipynb", "c2e8b4d6")
    assert "at least 8 of every 9 runs" in text and "at least 2 of every 3" in text
    text = _flat("06_profiling_practice.ipynb", "f8a1c6d2")
    assert "once, where they happened" not in text and "the mean per stage and kind, on every such action" in text
    assert "test_lesson_06_cpu_clock_example_breaks_a_dependency" in _flat("06_profiling_practice.ipynb", "gpu-05")


def test_zero_bubble_needs_m_at_least_2p_minus_1_and_the_lessons_say_so() -> None:
    """15th review M1 (06–09): ZB-H2's and ZB-V's zero stage-span bubble at F = I = W needs m >= 2p − 1."""
    from test_lessons_00_03 import _lesson_cell

    costs = bk.Costs(f=1, i=1, w=1)
    for name in ("zb-h2", "zbv"):
        for p in (3, 4, 6):
            rates = {m: bk.simulate(bk.schedule(name, p, m), costs).stage_span_bubble_rate for m in range(p, 3 * p)}
            assert all((rate == 0) == (m >= 2 * p - 1) for m, rate in rates.items()), (name, p, rates)
    assert "F = I = W and m ≥ 2p − 1" in " ".join(_lesson_cell("07_beyond_1f1b.ipynb", "af5e231e").split())
    assert "needs m ≥ 2p − 1 microbatches" in " ".join(_lesson_cell("09_misconceptions_and_interviews.ipynb", "5626043e").split())
    assert "F = I = W and m ≥ 2p − 1" in " ".join(_lesson_cell("09_misconceptions_and_interviews.ipynb", "fc9eb01e").split())
