"""The claims of lessons 00–03 that are tests rather than lessons, and the tables those lessons call.

* lesson 02: rank 0's GPipe wait is set by the **last** microbatch's trip down, then microbatch 0's
  gradient up ((p − 1)·t_f + (p − 1)·t_b), on a grid of p and m;
* lesson 03: the article-claim tables of :mod:`bubblekit.course.demo` (``utilization_table``,
  ``min_micro_batch_table``, ``article_fits``, ``article_claim_table``) compute what the lesson
  says they show, in both languages, and refuse bad input with a message naming the parameter.
"""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

import bubblekit as bk
from bubblekit.course import demo
from bubblekit.i18n import using_language


@pytest.mark.parametrize("p", [2, 3, 4, 6])
@pytest.mark.parametrize("m", [1, 2, 5, 8])
def test_gpipe_rank0_waits_for_the_last_microbatch_then_microbatch_0s_gradient(p: int, m: int) -> None:
    r = bk.simulate(bk.schedule("gpipe", p, m), bk.preset("b=2f"))
    when = {str(s.action): s for s in r.spans()}
    last = p - 1
    # the last rank starts its first backward when its last forward ends...
    assert when[f"{last}B0"].start == when[f"{last}F{m - 1}"].end
    # ... which is the last microbatch's trip down from rank 0: (p - 1) t_f
    assert when[f"{last}F{m - 1}"].end - when[f"0F{m - 1}"].end == (p - 1) * 1
    # then microbatch 0's gradient climbs p - 1 stages: (p - 1) t_b
    assert when["0B0"].start - when[f"{last}B0"].start == (p - 1) * 2
    wait = next(g for g in r.idle_intervals(0) if g.before == "0B0")
    assert wait.duration == (p - 1) * (1 + 2)


def test_utilization_table_is_a_little_above_one_over_one_plus_p_over_m() -> None:
    t = demo.utilization_table(m=8, ratios=[1, 4, 10])
    assert t.column("p/m") == [1, 4, 10]
    for row in t:
        k = row["p/m"]
        assert row["U"] == pytest.approx(8 / (8 + 8 * k - 1))  # U = m / (m + p - 1)
        assert row["U"] > row["1/(1 + p/m)"] == pytest.approx(1 / (1 + k))


def test_min_micro_batch_table_meets_the_target_at_m_min_and_misses_it_below() -> None:
    t = demo.min_micro_batch_table(ps=[8, 16])
    assert [(r["p"], r["m_min"]) for r in t] == [(8, 133), (8, 63), (8, 28), (16, 285), (16, 135), (16, 60)]
    for r in t:
        assert r["b at m_min"] <= r["b*"] < r["b at m_min − 1"]
        assert r["m_min"] == bk.min_micro_batch(r["p"], float(r["b*"]))


def test_only_p_4_prints_the_articles_42_9_and_8_6() -> None:
    assert demo.article_fits(("42.9%", "8.6%")) == [4]
    t = demo.article_claim_table(ps=[4, 8])
    assert t.row(p=4)["b at m = 4"] == Fraction(3, 7) and t.row(p=8)["b at m = 32"] == Fraction(7, 39)
    assert "3/7 = 42.9%" in str(t)


def test_the_tables_speak_the_language_of_the_notebook() -> None:
    with using_language("zh"):
        assert "个微批" in str(demo.utilization_table()) and "U（模拟值）" in str(demo.utilization_table())
        assert "m_min 时的 b" in str(demo.min_micro_batch_table(ps=[8]))
        assert "m = 4 时的 b" in str(demo.article_claim_table())
    english = str(demo.min_micro_batch_table(ps=[8]))
    assert "b at m_min" in english and "个" not in english


@pytest.mark.parametrize("call, name", [
    (lambda: demo.utilization_table(m=0), "m"),
    (lambda: demo.utilization_table(m=8, ratios=[]), "ratios"),
    (lambda: demo.utilization_table(m=8, ratios="14"), "ratios"),
    (lambda: demo.utilization_table(m=8, ratios=[1, 2.5]), "ratios[1]"),
    (lambda: demo.min_micro_batch_table(ps=[1]), "ps"),
    (lambda: demo.min_micro_batch_table(ps=[8], targets=[0]), "targets[0]"),
    (lambda: demo.min_micro_batch_table(ps=[8], targets=[float("nan")]), "targets[0]"),
    (lambda: demo.min_micro_batch_table(ps=[8], targets=[1.5]), "targets[0]"),
    (lambda: demo.article_fits(("42.9%",)), "claim"),
    (lambda: demo.article_fits(("42.9%", "8.6%"), ps=[0]), "ps[0]"),
    (lambda: demo.article_claim_table(ps=[True]), "ps[0]"),
])
def test_bad_input_is_refused_by_name(call, name: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises((TypeError, ValueError), match=re.escape(name)):
        call()


def test_a_tiny_target_is_refused_not_simulated_for_hours() -> None:
    with pytest.raises(ValueError, match="targets: b\\* = 1e-06 needs m_min"):
        demo.min_micro_batch_table(ps=[16], targets=[1e-6])


def test_the_chinese_demo_never_breaks_inside_a_word() -> None:
    """Lesson 03's demo output (review 2026-12-01): Chinese lines break at spaces or after punctuation only."""
    lines = demo.demo_text("zh", check=True).splitlines()
    for before, after in zip(lines, lines[1:]):
        if before.strip() and after.startswith("    ") and re.match(r"[\u3400-\u9fff]", after.strip()):
            assert not re.search(r"[\u3400-\u9fff]$", before), (before, after)
    text = "\n".join(lines)
    assert "流\n" not in text and "显\n" not in text


# ---------------------------------------------------------------- twelfth review (2026-12-02), lessons 00–05

def _lesson_cell(name: str, cell_id: str) -> str:
    """A cell's source as the course ships it (the committed notebook; the working tree with BUBBLEKIT_CHECK_WORKTREE=1)."""
    import json
    from pathlib import Path

    from bubblekit.course.workspace import course_notebooks
    root = Path(__file__).resolve().parent.parent
    shipped = {nb.path.name: nb.text for nb in course_notebooks(root, ("notebooks",)) if nb.path.parent.name == "notebooks"}
    cell = next(c for c in json.loads(shipped[name])["cells"] if c.get("id") == cell_id)
    return "".join(cell["source"])


def test_03_demo_simulates_at_one_slot_each_and_the_article_times_nothing() -> None:
    """W1: the F = B = 1 slot timing is the simulation's (bubblekit's default), not the article's demo."""
    assert demo.check_against_simulator() == demo.check_against_simulator(costs=bk.preset("uniform"))
    text = _lesson_cell("03_the_bubble_formula.ipynb", "l03-35")
    assert "Like the article, it times" not in text
    assert "The simulation behind it times a forward and a backward at 1 slot each" in text
    assert "only\nevaluates its formulas" in text or "only evaluates its formulas" in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_03_demo_memory_note_holds_for_m_below_p(lang: str) -> None:
    """M1: 1F1B's rank 0 holds min(p, m) microbatches (GPipe's m below p), as the demo's note says."""
    p = demo.ARTICLE_P
    for m in demo.ARTICLE_MS:
        one = bk.simulate(bk.schedule("1f1b", p, m)).peak_activations[0]
        gpipe = bk.simulate(bk.schedule("gpipe", p, m)).peak_activations[0]
        assert one == min(p, m) and gpipe == m
    assert any(m < p for m in demo.ARTICLE_MS)         # the table has rows where p instead of m would be wrong
    flat = " ".join(demo.demo_text(lang).split())
    assert "min(p, m)" in flat and "p instead of m" not in flat and "只存 p 个微批" not in flat


def test_02_0_prompt_asks_for_a_number_of_slots() -> None:
    """C1: the prompt asks for a number of slots; 02.0 reads the number, with or without the asked unit (since 3a8e1ff)."""
    from bubblekit.course.checks import check, lesson02
    expected = lesson02._check_yourself()     # rank 0's simulated wait, in slots
    assert check("02.0", expected) and check("02.0", str(expected)) and check("02.0", f"{expected} slots")
    text = " ".join(_lesson_cell("02_why_bubbles_appear.ipynb", "l02-24").split())
    assert "with your answer (a number of slots, such as `4`)" in text


def test_03_demo_memory_note_says_when_m_below_p() -> None:
    """13th review C3, 14th M2: the note says "the same as GPipe when m <= p" (at m = p both hold p), not "GPipe below"."""
    flat = " ".join(demo.demo_text("en").split())
    assert "the same as GPipe when m <= p" in flat and "GPipe below" not in flat
    assert "m ≤ p 时与 GPipe 相同" in " ".join(demo.demo_text("zh").split())
    for m in (4, 8):  # the demo's p = 8: 1F1B saves nothing up to m = p
        assert (bk.simulate(bk.schedule("1f1b", 8, m)).peak_activations[0]
                == bk.simulate(bk.schedule("gpipe", 8, m)).peak_activations[0])
    assert bk.simulate(bk.schedule("1f1b", 8, 16)).peak_activations[0] < 16


def test_00_glossary_1f1b_memory_claim_has_its_condition() -> None:
    """13th review M2: 1F1B's "far less memory" holds once m > p (min(p, m) against GPipe's m)."""
    p = 8
    for m in (2, 8, 16):
        one = bk.simulate(bk.schedule("1f1b", p, m)).peak_activations
        gpipe = bk.simulate(bk.schedule("gpipe", p, m)).peak_activations
        assert max(one) == min(p, m) and max(gpipe) == m
    row = next(line for line in _lesson_cell("00_start_here.ipynb", "l00-19").splitlines() if line.startswith("| 1F1B |"))
    assert "min(p, m) microbatches of activations on a rank instead of m, so far less memory once m > p" in row


def test_00_slides_are_made_from_slide_marks_not_the_tag() -> None:
    """13th review C2: nbconvert's slides read ``slideshow.slide_type``; a ``workshop`` cell may be ``skip``."""
    import json
    from pathlib import Path
    nb = json.loads((Path(__file__).resolve().parent.parent / "notebooks" / "00_start_here.ipynb").read_text("utf-8"))
    tagged_skip = [c["id"] for c in nb["cells"] if "workshop" in c["metadata"].get("tags", [])
                   and c["metadata"].get("slideshow", {}).get("slide_type") == "skip"]
    assert tagged_skip                                   # so the tag alone does not shape the deck
    text = " ".join(_lesson_cell("00_start_here.ipynb", "l00-04").split())
    assert "the slide marks are what `jupyter nbconvert --to slides`" in text
    assert "`workshop`, so `jupyter nbconvert" not in text


def test_02_llama3_reasons_per_stage_and_megatron_layout_entries() -> None:
    """13th review M1 and C1: Llama 3 (§3.3.2) trims the last stage for time, the first for memory; Megatron's
    layout lists E and L as entries of a stage beside its layers (``Et*3|…``), not as slots."""
    text = " ".join(_lesson_cell("02_why_bubbles_appear.ipynb", "l02-16").split())
    assert "off the first for memory" in text and "latency bottleneck" in text
    assert "`Et*3|…`" in text and "slots of their own" not in text


def _path_hops(name: str, p: int, m: int) -> int:
    r = bk.simulate(bk.schedule(name, p, m), bk.Costs(f=1, b=2, comm=Fraction(1, 2)))
    ranks = [rank for rank, _ in r.critical_path]
    return sum(1 for a, b in zip(ranks, ranks[1:]) if a != b)


def test_02_gpipe_pays_2_p_minus_1_hops_and_1f1b_more_once_m_is_3() -> None:
    """14th review W1/M1: GPipe's step pays 2(p − 1) hops (no chain crosses more: every forward before every
    backward on each rank); 1F1B pays as many for m <= 2 and more from m = 3 on."""
    for p in (2, 3, 4, 6):
        for m in (1, 2, 3, 4, 8):
            assert _path_hops("gpipe", p, m) == 2 * (p - 1)
            one = _path_hops("1f1b", p, m)
            assert one == 2 * (p - 1) if m <= 2 or p == 1 else one > 2 * (p - 1), (p, m, one)
    text = " ".join(_lesson_cell("02_why_bubbles_appear.ipynb", "l02-14").split())
    assert "covered by the action its receiver runs" not in text and "once m ≥ 3" in text
    assert "once m ≥ 3" in " ".join(_lesson_cell("02_why_bubbles_appear.ipynb", "l02-26").split())


def test_02_the_1f1b_pays_more_ranking_is_the_overlapped_models() -> None:
    """17th review M1: "a slow link hurts 1F1B more than GPipe" holds in bubblekit's overlapped model; with blocking
    sends, on lesson 02's own setup (p = 4, m = 6, comm = 1/2), 1F1B is slightly ahead, as lesson 04 finds at m = 8."""
    for m, comm in ((6, Fraction(1, 2)), (8, Fraction(1, 4))):
        table = bk.compare.comm_models(["gpipe", "1f1b"], 4, m, comm=comm, costs=bk.Costs(f=1, b=2))
        gpipe, one = table.rows
        assert one["overlapped"] > gpipe["overlapped"] and one["blocking"] < gpipe["blocking"]
    for cell in ("l02-11", "l02-14", "l02-26"):
        text = " ".join(_lesson_cell("02_why_bubbles_appear.ipynb", cell).split())
        assert "blocking sends" in text and "lesson 04" in text, cell


def test_01_the_readout_climbs_falls_and_climbs_where_the_text_says() -> None:
    """17th review C1: GPipe p = 4, m = 4, b = 2f: the readout climbs from t = 5 to 10, falls to t = 17 (while rank 0
    still waits until t = 13, the others run backwards), and climbs again in the drain."""
    first = bk.simulate(bk.schedule("gpipe", 4, 4), bk.preset("b=2f"))
    at = {t: first.bubble_so_far(t) for t in (5, 9, 10, 11, 13, 17, 21)}
    assert at[5] < at[9] == at[10] == at[11] and at[11] > at[13] > at[17] < at[21]
    assert [(g.start, g.end) for g in first.idle_intervals(0) if g.start > 0][0] == (4, 13)
