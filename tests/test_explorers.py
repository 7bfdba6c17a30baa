"""The ipywidgets explorers, driven the way ipywidgets' own tests drive widgets: set ``.value``.

Every number an explorer shows is checked against :func:`bubblekit.simulate` (or the
closed forms) computed here, never against a typed figure. Also: classroom mode's command
line and the notebook it serves.
"""

from __future__ import annotations

import base64
import dataclasses
import html
import importlib.util
import inspect
import io
import json
import os
import re
from fractions import Fraction
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

import bubblekit as bk  # noqa: E402
from bubblekit.presentation import classroom, explorers  # noqa: E402
from bubblekit.presentation.explorers import (  # noqa: E402
    COST_PRESETS,
    BuilderScore,
    FrontierExplorer,
    PipelineExplorer,
    ScheduleBuilder,
    frontier_explorer,
    pipeline_explorer,
    schedule_builder,
)

ROOT = Path(__file__).resolve().parent.parent

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CONTROL_KEYS = {"schedule", "p", "m", "v", "preset", "f", "b", "i", "w", "comm", "cap", "compare"}


@pytest.fixture(autouse=True)
def _small_pictures(monkeypatch):
    """Smaller PNGs keep these tests quick; the pictures are still drawn and encoded."""
    monkeypatch.setattr(explorers, "DPI", 30)


def sim(name: str, p: int, m: int, v: int | None = None, costs: bk.Costs | None = None) -> bk.SimResult:
    return bk.simulate(bk.schedule(name, p, m, v), costs if costs is not None else bk.preset("b=2f"))


def library_error(fn, *args, **kw) -> str:
    """The message the library itself raises for this call."""
    with pytest.raises((ValueError, TypeError)) as info:
        fn(*args, **kw)
    return str(info.value)


def assert_matches(ex: PipelineExplorer, ref: bk.SimResult) -> None:
    assert ex.error is None, ex.error
    assert ex.result is not None
    assert ex.result.schedule.orders == ref.schedule.orders
    assert ex.result.makespan == ref.makespan
    assert ex.result.bubble_ratio == ref.bubble_ratio
    assert ex.result.peak_activations == ref.peak_activations
    assert f"{ref.bubble_ratio:.4f}" in ex.readouts["bubble_ratio"].value
    assert f"{ref.bubble_overhead:.4f}" in ex.readouts["bubble_overhead"].value
    unit = "slots" if ref.unit == "slot" else ref.unit
    assert unit in ex.readouts["makespan"].value
    assert bytes(ex.image.value).startswith(PNG_MAGIC)
    assert ex.image.layout.visibility == "visible"


# --------------------------------------------------------------------- pipeline explorer
def test_interface_keys_and_default_state():
    ex = pipeline_explorer()
    assert set(ex.controls) == CONTROL_KEYS
    assert {"bubble_ratio", "bubble_overhead", "formula", "makespan", "peak", "message"} <= set(ex.readouts)
    assert isinstance(ex.figure, matplotlib.figure.Figure)
    assert ex.widget is not None and hasattr(ex, "_repr_mimebundle_")
    assert list(ex.controls["schedule"].options) == bk.names()  # English: the names a learner types
    assert list(ex.controls["preset"].options) == list(COST_PRESETS)
    assert_matches(ex, sim("1f1b", 4, 8))
    assert ex.readouts["message"].value == ""


def test_changing_m_redraws_and_matches_simulate():
    ex = pipeline_explorer("1f1b", p=4, m=8)
    before_png, before_text = ex.image.value, ex.readouts["bubble_ratio"].value
    ex.controls["m"].value = 16
    ref = sim("1f1b", 4, 16)
    assert_matches(ex, ref)
    assert ex.image.value != before_png
    assert ex.readouts["bubble_ratio"].value != before_text
    assert ex.result.schedule.m == 16


@pytest.mark.parametrize("key,value", [("p", 6), ("schedule", "gpipe"), ("v", 3)])
def test_each_control_redraws(key, value):
    ex = pipeline_explorer("interleaved", p=4, m=8, v=2)
    before = ex.image.value
    ex.controls[key].value = value
    c = ex.controls
    name = c["schedule"].value
    v = c["v"].value if bk.REGISTRY[name].chunks == "many" else None
    assert_matches(ex, sim(name, c["p"].value, c["m"].value, v))
    assert ex.image.value != before


def test_v_slider_disabled_for_single_chunk_schedules():
    ex = pipeline_explorer("1f1b", p=4, m=8, v=3)
    assert ex.controls["v"].disabled
    assert ex.result.schedule.v == 1
    ex.controls["schedule"].value = "interleaved"
    assert not ex.controls["v"].disabled
    assert ex.result.schedule.v == 3
    ex.controls["compare"].value = "looped-bfs"
    ex.controls["schedule"].value = "gpipe"
    assert not ex.controls["v"].disabled  # the compared schedule still uses v
    assert ex.compare_result.schedule.v == 3


def test_backward_sliders_follow_the_schedule_kind():
    ex = pipeline_explorer("1f1b")
    assert not ex.controls["b"].disabled and ex.controls["i"].disabled and ex.controls["w"].disabled
    split = next((n for n in bk.names() if bk.REGISTRY[n].split_backward), None)
    if split is None:
        pytest.skip("no split-backward schedule registered")
    ex.controls["schedule"].value = split
    assert ex.controls["b"].disabled and not ex.controls["i"].disabled and not ex.controls["w"].disabled


@pytest.mark.parametrize("name", bk.names())
def test_every_registered_schedule_draws_or_shows_the_library_message(name):
    ex = pipeline_explorer("1f1b", p=4, m=8, v=2)
    ex.controls["schedule"].value = name
    v = 2 if bk.REGISTRY[name].chunks != "one" else None
    try:
        ref = sim(name, 4, 8, v)
    except (ValueError, TypeError) as exc:
        assert ex.error == str(exc)
        return
    assert_matches(ex, ref)


def _arrow(ex: PipelineExplorer, key: str, step: int) -> None:
    """What one ArrowRight (+1) or ArrowLeft (-1) on a slider does: the value moves by one."""
    ex.controls[key].value = ex.controls[key].value + step


def test_interleaved_m_slider_only_stops_on_allowed_values():
    ex = pipeline_explorer("interleaved", p=4, m=8, v=2)
    allowed = bk.legal_ms("interleaved", 4, 2)
    seen = [8]
    for step in [1] * 12 + [-1] * 12:
        _arrow(ex, "m", step)
        m = ex.controls["m"].value
        seen.append(m)
        assert m in allowed
        assert ex.error is None and ex.result is not None and ex.result.schedule.m == m
        assert "bk-msg-error" not in ex.readouts["message"].value
        assert ex.image.layout.visibility == "visible"
        assert_matches(ex, sim("interleaved", 4, m, 2))
    assert seen[:4] == [8, 10, 12, 15]  # 9, 11, 13 and 14 are refused (PyTorch's rounds must divide m)
    assert seen == sorted(seen[:13]) + sorted(seen[13:], reverse=True)  # each step moves on, never back


def test_refused_m_is_explained_with_the_registry_rule():
    ex = pipeline_explorer("interleaved", p=4, m=8, v=2)
    ex.controls["m"].value = 9
    assert ex.controls["m"].value == 10
    rule = bk.schedules.spec("interleaved").m_rule
    assert "m = 9 is not allowed" in ex.m_note and rule in ex.m_note and "m = 10" in ex.m_note
    assert html.escape(ex.m_note) in ex.readouts["message"].value
    assert "bk-msg-note" in ex.readouts["message"].value
    _arrow(ex, "m", 2)  # 12 is allowed: the note goes
    assert ex.controls["m"].value == 12 and ex.m_note == "" and ex.readouts["message"].value == ""
    ex.controls["m"].value = 14  # moving left from 15 would go to 12; from 12 to the right: 15
    assert ex.controls["m"].value == 15


def test_switching_to_a_schedule_that_refuses_m_moves_to_the_nearest_allowed():
    ex = pipeline_explorer("1f1b", p=4, m=9)
    assert ex.controls["m"].value == 9 and ex.m_note == ""
    ex.controls["schedule"].value = "interleaved"
    assert ex.controls["m"].value in (8, 10) and ex.m_note
    assert_matches(ex, sim("interleaved", 4, ex.controls["m"].value, 2))
    ex.controls["schedule"].value = "1f1b"
    ex.controls["m"].value = 5
    ex.controls["compare"].value = "dualpipev"  # m >= 2p for DualPipeV: both schedules must accept m
    assert ex.controls["m"].value == 8
    assert "DualPipeV accepts m >= 2p" in ex.m_note
    assert ex.compare_result is not None and ex.compare_result.schedule.m == 8


def test_v_slider_shows_the_v_the_schedules_use():
    ex = pipeline_explorer("interleaved", p=4, m=8, v=3)
    c = ex.controls
    assert not c["v"].disabled and c["v"].min == 2 and c["v"].value == 3
    c["v"].value = 1  # below the slider's range for interleaving: it stays at 2, never an error
    assert c["v"].value == 2 and ex.error is None
    c["v"].value = 3
    c["schedule"].value = "1f1b"
    assert c["v"].disabled and c["v"].value == 1 and ex.result.schedule.v == 1
    assert "v = 1" in ex.readouts["formula"].value
    c["schedule"].value = "zbv"
    assert c["v"].disabled and c["v"].value == 2 and ex.result.schedule.v == 2
    c["schedule"].value = "interleaved"  # back to the learner's v
    assert not c["v"].disabled and c["v"].value == 3 and ex.result.schedule.v == 3


def test_v_one_for_interleaving_is_refused_with_the_library_message():
    with pytest.raises(ValueError) as info:
        pipeline_explorer("interleaved", p=4, m=8, v=1)
    assert str(info.value) == library_error(bk.schedule, "interleaved", 4, 8, 1)


@pytest.mark.parametrize("name,p,m,want", [("gpipe", 4, 4, "(p−1)/m"), ("1f1b", 4, 8, "(p−1)/m"),
                                           ("interleaved", 4, 8, "(p−1)/(m·v)")])
def test_formula_card_gives_the_overhead_formula_of_the_schedule(name, p, m, want):
    ex = pipeline_explorer(name, p=p, m=m, v=2)
    card = ex.readouts["formula"].value
    v = ex.result.schedule.v
    assert f"bubble_overhead {want} = {bk.bubble_overhead(p, m, v):.4f}" in card
    assert f"v = {v}" in card


def test_memory_cap_zero_is_explained():
    ex = pipeline_explorer("1f1b")
    assert "0 = no cap" in ex.readouts["cap"].value
    ex.controls["cap"].value = 3.0
    assert "at most 3 microbatch activations per rank" in ex.readouts["cap"].value
    ax = ex.figure.axes[-1]
    assert [ln for ln in ax.lines if ln.get_gid() == "cap"]


def test_bad_cost_shows_the_library_message():
    ex = pipeline_explorer("1f1b")
    ex.controls["f"].value = 0.0
    assert ex.error == library_error(bk.Costs, f=0, b=2)
    assert "f must be" in ex.error
    ex.controls["f"].value = 1.0
    assert ex.error is None


def test_cost_sliders_override_the_preset():
    ex = pipeline_explorer("1f1b", p=4, m=8, preset="b=2f")
    assert ex.costs == bk.preset("b=2f")
    ex.controls["f"].value = 1.5
    ex.controls["b"].value = 2.5
    ref = sim("1f1b", 4, 8, costs=bk.Costs(f=Fraction(3, 2), b=Fraction(5, 2)))
    assert_matches(ex, ref)
    assert ex.costs.f == Fraction(3, 2)  # slider floats become exact numbers: exact simulation
    ex.controls["comm"].value = 0.25
    assert_matches(ex, sim("1f1b", 4, 8, costs=bk.Costs(f=Fraction(3, 2), b=Fraction(5, 2), comm=Fraction(1, 4))))


def test_split_backward_uses_i_and_w_sliders():
    split = next((n for n in bk.names() if bk.REGISTRY[n].chunks == "one" and bk.REGISTRY[n].split_backward), None)
    if split is None:
        pytest.skip("no single-chunk split-backward schedule registered")
    ex = pipeline_explorer(split, p=4, m=8, preset="f=i=w")
    assert_matches(ex, sim(split, 4, 8, costs=bk.preset("f=i=w")))
    ex.controls["w"].value = 0.5
    assert_matches(ex, sim(split, 4, 8, costs=bk.Costs(f=1, i=1, w=Fraction(1, 2))))


def test_preset_change_sets_the_sliders_and_units():
    ex = pipeline_explorer("1f1b", p=4, m=8)
    images = []
    ex.image.observe(lambda ch: images.append(ch["new"]), names="value")
    ex.controls["preset"].value = "h200"
    assert len(images) == 1  # the preset moves four sliders but redraws once
    h200 = bk.preset("h200")
    assert ex.controls["f"].value == pytest.approx(float(h200.f))
    assert ex.controls["b"].value == pytest.approx(float(h200.b))
    assert_matches(ex, sim("1f1b", 4, 8, costs=h200))
    assert "ms" in ex.readouts["makespan"].value
    assert "GiB" in ex.readouts["peak"].value  # the measured preset knows bytes per microbatch
    ex.controls["preset"].value = "uniform"
    assert_matches(ex, sim("1f1b", 4, 8, costs=bk.preset("uniform")))


@pytest.mark.parametrize("name,p,m,v", [("1f1b", 4, 8, 1), ("gpipe", 8, 4, 1), ("interleaved", 4, 8, 2),
                                        ("interleaved", 8, 32, 2)])
def test_closed_form_readout(name, p, m, v):
    ex = pipeline_explorer(name, p=p, m=m, v=max(v, 2))
    exact = bk.bubble_ratio(p, m, v)
    assert bk.schedules.spec(name).closed_form(p, m, v)[0] == bk.bubble_ratio_exact(p, m, v)
    assert f"{exact:.4f}" in ex.readouts["formula"].value
    assert f"{bk.bubble_overhead(p, m, v):.4f}" in ex.readouts["formula"].value
    assert ex.result.bubble_ratio == pytest.approx(exact)  # equal stages, no latency: they agree
    assert "✓" in ex.readouts["formula"].value
    ex.controls["comm"].value = 0.5  # with latency the simulation leaves the formula
    assert "≠" in ex.readouts["formula"].value


def test_no_closed_form_for_other_schedules():
    # looped BFS shares interleaved 1F1B's fill and drain (seventeenth review): a closed form for m >= p, none below
    assert bk.schedules.spec("looped-bfs").closed_form(4, 8, 2) is not None
    assert bk.schedules.spec("looped-bfs").closed_form(4, 2, 2) is None
    assert bk.schedules.spec("interleaved").closed_form(4, 2, 2) is None  # m < p: the pipe never fills
    assert bk.schedules.spec("v-min").closed_form(4, 8) is None
    ex = pipeline_explorer("v-min", p=4, m=8)
    assert "not given here for" in ex.readouts["formula"].value


def test_peak_memory_and_cap_warning():
    ex = pipeline_explorer("gpipe", p=4, m=8)
    ref = sim("gpipe", 4, 8)
    for k, pk in enumerate(ref.peak_activations):
        assert f"rank {k}: <b>{pk:g}</b>" in ex.readouts["peak"].value
    assert "over the memory cap" not in ex.readouts["message"].value
    ex.controls["cap"].value = ref.max_peak_activations - 1
    assert "over the memory cap" in ex.readouts["message"].value
    ex.controls["schedule"].value = "1f1b"  # 1F1B holds fewer microbatches: back under the cap
    assert "over the memory cap" not in ex.readouts["message"].value


def test_compare_mode_shares_the_time_axis():
    ex = pipeline_explorer("1f1b", p=4, m=8, compare="gpipe")
    assert_matches(ex, sim("1f1b", 4, 8))
    ref = sim("gpipe", 4, 8)
    assert ex.compare_result is not None and ex.compare_result.makespan == ref.makespan
    assert "GPipe" in ex.readouts["compare"].value
    assert f"{ref.bubble_ratio:.4f}" in ex.readouts["compare"].value
    assert len(ex.figure.axes) == 4  # two diagrams, two memory panels
    lims = {tuple(round(x, 9) for x in ax.get_xlim()) for ax in ex.figure.axes}
    assert len(lims) == 1
    ex.controls["compare"].value = "none"
    assert ex.compare_result is None and len(ex.figure.axes) == 2 and ex.readouts["compare"].value == ""


def test_compare_error_keeps_the_main_schedule(monkeypatch):
    real = explorers.build_schedule

    def refuse_interleaved(name, *a, **kw):
        if name == "interleaved":
            raise ValueError("a rule tightened under the explorer")
        return real(name, *a, **kw)

    ex = pipeline_explorer("1f1b", p=4, m=8)
    monkeypatch.setattr(explorers, "build_schedule", refuse_interleaved)
    ex.controls["compare"].value = "interleaved"
    assert ex.result is not None and ex.compare_result is None
    assert ex.error == "compare schedule interleaved 1F1B: a rule tightened under the explorer"
    assert ex.image.layout.visibility == "visible"


def test_hold_batches_changes_into_one_redraw():
    ex = pipeline_explorer("1f1b", p=4, m=8)
    images = []
    ex.image.observe(lambda ch: images.append(ch["new"]), names="value")
    with ex.hold():
        ex.controls["p"].value = 8
        ex.controls["m"].value = 32
        ex.controls["schedule"].value = "gpipe"
    assert len(images) == 1
    assert_matches(ex, sim("gpipe", 8, 32))


@pytest.mark.parametrize("moves", [
    [("m", 12), ("p", 6), ("cap", 3.0), ("m", 5)],
    [("schedule", "interleaved"), ("v", 3), ("comm", 0.25), ("p", 3)],
    [("compare", "gpipe"), ("m", 6), ("schedule", "zbv"), ("preset", "h200"), ("p", 2)],
])
def test_redraw_on_kept_axes_is_the_same_picture_as_on_fresh_axes(moves, monkeypatch):
    """Redraws keep the Axes and swap their content (faster); the picture must not differ."""
    monkeypatch.setattr(explorers, "DPI", 40)
    ex = pipeline_explorer("1f1b", p=4, m=8)
    for key, value in moves:
        ex.controls[key].value = value
        assert ex.error is None, ex.error
    kept = bytes(ex.image.value)
    ex._axes = []  # white box: force fresh axes
    ex.update()
    assert bytes(ex.image.value) == kept


def test_no_figure_leaks_into_pyplot():
    import matplotlib.pyplot as plt

    before = set(plt.get_fignums())
    ex = pipeline_explorer("1f1b", p=4, m=8, compare="gpipe")
    fig = ex.figure
    for m in (9, 10, 11, 12):
        ex.controls["m"].value = m
    assert set(plt.get_fignums()) == before
    assert ex.figure is fig  # one figure, redrawn in place


@pytest.mark.parametrize("kwargs", [dict(schedule="nope"), dict(p=0), dict(m=65), dict(v=1.5), dict(preset="fast"),
                                    dict(compare="nope"), dict(p=True)])
def test_bad_arguments_raise_clear_errors(kwargs):
    with pytest.raises((ValueError, TypeError)) as info:
        pipeline_explorer(**kwargs)
    key, value = next(iter(kwargs.items()))
    assert repr(value) in str(info.value) or str(value) in str(info.value)


def test_alias_names_are_accepted():
    assert pipeline_explorer("naive").controls["schedule"].value == "gpipe"


# ---------------------------------------------------------------------- schedule builder
def test_builder_starts_legal_and_scores_against_builtins():
    b = schedule_builder(p=3, m=6)
    assert isinstance(b, ScheduleBuilder)
    assert b.error is None and b.result is not None
    assert b.result.schedule.orders == bk.schedule("gpipe", 3, 6).orders
    s = b.score
    assert isinstance(s, BuilderScore)
    for name in ("gpipe", "1f1b"):
        ref = sim(name, 3, 6)
        assert s.references[name] == (float(ref.makespan), ref.bubble_ratio, float(ref.max_peak_activations))
    assert s.matches == "gpipe" and "matches GPipe" in s.verdict
    assert "matches GPipe" in b.readouts["score"].value
    assert bytes(b.image.value).startswith(PNG_MAGIC)


def test_builder_score_and_still_speak_the_language():
    """The builder's score table and its still picture: English exactly as before (``<b>Score:</b> ``,
    the column ``bubble_ratio``, the still's "move its sliders"); Chinese with its own header
    (气泡比例), no space after its full-width colon, and a still that says the orders are edited."""
    b = schedule_builder(p=4, m=8)
    score = b.readouts["score"].value
    assert "<b>Score:</b> matches GPipe (the same orders, action for action)</div>" in score
    assert "<th>bubble_ratio</th><th>peak memory (microbatch act.)</th>" in score
    still = b._repr_mimebundle_()["text/html"]
    assert ("▶ A still picture of the schedule builder (p = 4, m = 8, costs b=2f): run this cell (Shift+Enter) "
            "to move its sliders.") in still
    before = bk.get_language()
    bk.set_language("zh")
    try:
        b = schedule_builder(p=4, m=8)
        score = b.readouts["score"].value
        still = b._repr_mimebundle_()["text/html"]
    finally:
        bk.set_language(before)
    assert "<b>评分：</b>与 GPipe 完全一致（每个动作的顺序都相同）</div>" in score
    assert "<th>气泡比例</th><th>显存峰值（单位：一个微批的激活）</th>" in score and "bubble_ratio" not in score
    assert "▶ 调度构建器的静态截图（p = 4，m = 8，耗时预设 b=2f）：运行这个单元格（Shift+Enter）后，就能编辑动作顺序，再点“检查”验证。" in still
    assert "拖动滑块" not in still


def test_builder_load_buttons():
    b = schedule_builder(p=4, m=8)
    b.controls["load_1f1b"].click()
    assert bk.schedule("1f1b", 4, 8).to_text() in b.controls["text"].value
    assert b.score.matches == "1f1b" and "matches 1F1B" in b.score.verdict
    b.controls["load_gpipe"].click()
    assert b.score.matches == "gpipe"


def test_builder_slower_schedule_is_scored_in_percent():
    text = "rank 0: 0F0 0B0 0F1 0B1 0F2 0B2 0F3 0B3\nrank 1: 1F0 1B0 1F1 1B1 1F2 1B2 1F3 1B3"
    b = schedule_builder(p=2, m=4, text=text)
    mine = bk.simulate(bk.Schedule.from_text(text, m=4), bk.preset("b=2f"))
    best = min(float(sim(n, 2, 4).makespan) for n in ("gpipe", "1f1b"))
    pct = 100 * (float(mine.makespan) - best) / best
    assert b.score.slower_pct == pytest.approx(pct)
    assert pct > 0 and f"{pct:.1f}% slower than the best" in b.score.verdict
    assert b.score.matches is None


def assert_shows_once(shown: str, expected: str, kind: str) -> None:
    """The builder's message: the heading names the kind (deadlock, illegal schedule) once, the
    library's message follows without saying it again, every line of it shown."""
    assert f"✗ {kind}</b>" in shown and shown.lower().count(kind) == 1, shown
    body = expected[len(kind) + 1:].lstrip("\n ") if expected.lower().startswith(kind + ":") else expected
    assert html.escape(body[1:]) in shown and body[:1].lower() in shown.lower(), (body, shown)


def test_builder_deadlock_shows_which_rank_waits_on_what():
    text = "rank 0: 0F0 0B0 0F1 0B1\nrank 1: 1B0 1F0 1F1 1B1"
    b = schedule_builder(p=2, m=2, text=text)
    expected = library_error(lambda: bk.simulate(bk.Schedule.from_text(text, m=2)))
    assert b.error == expected
    assert "rank 1 is blocked at 1B0" in b.error
    assert_shows_once(b.readouts["message"].value, expected, "deadlock")
    assert b.score is None and b.result is None and b.readouts["score"].value == ""
    b.controls["load_1f1b"].click()
    assert b.error is None and b.score is not None


@pytest.mark.parametrize("text", [
    "rank 0: 0F0 0B0\nrank 1: 1F0 1B0",           # microbatch 1 missing (m=2)
    "rank 0: 0F0 0X0",                              # not an action
    "rank 0: 0F0 0F0 0B0 0B1 0F1\nrank 1: 1F0 1B0 1F1 1B1",  # duplicate
    "",
])
def test_builder_illegal_text_shows_the_library_message(text):
    b = schedule_builder(p=2, m=2, text=text)
    expected = library_error(lambda: bk.simulate(bk.Schedule.from_text(text, m=2)))
    assert b.error == expected
    assert_shows_once(b.readouts["message"].value, expected, "illegal schedule")
    assert b.image.layout.visibility == "hidden"


def test_builder_unedited_template_follows_p_and_m():
    b = schedule_builder(p=2, m=4)
    b.controls["load_1f1b"].click()
    b.controls["m"].value = 5
    b.controls["p"].value = 3
    assert b.error is None and b.score.matches == "1f1b"
    assert b.result.schedule.orders == bk.schedule("1f1b", 3, 5).orders


def test_builder_m_control_sets_the_expected_microbatches_of_edited_text():
    text = "rank 0: 0F0 0F1 0B0 0B1\nrank 1: 1F0 1B0 1F1 1B1"
    b = schedule_builder(p=2, m=2, text=text)
    assert b.error is None
    b.controls["m"].value = 3  # edited text is kept, and now misses microbatch 2
    assert b.controls["text"].value == text
    assert b.error == library_error(lambda: bk.Schedule.from_text(text, m=3))
    b.controls["load_gpipe"].click()
    assert b.error is None and b.result.schedule.m == 3


def test_builder_bad_arguments():
    with pytest.raises(ValueError, match="p must be"):
        schedule_builder(p=0)
    with pytest.raises(TypeError, match="text must be"):
        schedule_builder(text=3)  # type: ignore[arg-type]


# -------------------------------------------------------------------------- classroom
def test_classroom_command_hides_code_and_binds_the_port():
    nb = ROOT / "apps" / "explorer.ipynb"
    cmd = classroom.voila_command(nb, 9123)
    assert cmd[1:4] == ["-m", "voila", str(nb)]
    assert "--strip_sources=True" in cmd and "--no-browser" in cmd and "--port=9123" in cmd
    assert "--Voila.ip=127.0.0.1" in cmd and "--Voila.port_retries=0" in cmd
    assert "--no-browser" not in classroom.voila_command(nb, 9123, open_browser=True)


@pytest.mark.parametrize("port", [0, 70000, "8866", True])
def test_classroom_bad_port(port):
    with pytest.raises(ValueError, match="port must be"):
        classroom.voila_command(ROOT / "apps" / "explorer.ipynb", port)


def test_classroom_missing_notebook(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        classroom.voila_command(tmp_path / "nope.ipynb")


def test_classroom_print_command(capsys):
    assert classroom.main(["--port", "9001", "--print-command"]) == 0
    out = capsys.readouterr().out
    assert "voila" in out and "--port=9001" in out and "--strip_sources=True" in out


def _page_cells(text):
    """A page's cells as the generator decides them: type, id, source, metadata (run timings left out)."""
    nb = json.loads(text)
    return nb["metadata"]["kernelspec"], [
        (c["cell_type"], c["id"], "".join(c["source"]) if isinstance(c["source"], list) else c["source"],
         {k: v for k, v in c["metadata"].items() if k != "execution"}) for c in nb["cells"]]


@pytest.mark.parametrize("language,folder", [("en", "apps"), ("zh", "apps/zh")])
@pytest.mark.parametrize("name", list(classroom.PAGES))
def test_classroom_pages_are_generated_from_classroom(name, language, folder, tmp_path):
    """apps/*.ipynb and apps/zh/*.ipynb have exactly the cells ``classroom.write_pages`` writes (regenerate
    them if not, then re-execute them: their outputs are the explorers' still pictures)."""
    committed = (ROOT / folder / name).read_text(encoding="utf-8")
    assert _page_cells(committed) == _page_cells(classroom.page_text(name, language)), (
        f"{folder}/{name} is out of date: run python -c \"from bubblekit.presentation.classroom import write_pages; "
        f"write_pages('{folder}', '{language}')\", then python scripts/execute_notebooks.py {folder}/{name}"
    )
    nb = json.loads(classroom.page_text(name, language))
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    assert all(c.get("outputs", []) == [] for c in nb["cells"])
    assert {p.name for p in classroom.write_pages(tmp_path, language)} == set(classroom.PAGES)
    assert (tmp_path / name).read_text(encoding="utf-8") == classroom.page_text(name, language)
    assert classroom.notebook_text() == classroom.page_text("explorer.ipynb")
    assert sorted(p.name for p in (ROOT / folder).glob("*.ipynb")) == sorted(classroom.PAGES)


@pytest.mark.parametrize("name", list(classroom.PAGES))
def test_classroom_page_code_runs(name):
    """A page's code cells, run here: they build their explorers without error."""
    ns: dict = {}
    for kind, src in classroom.page_cells(name):
        if kind == "code":
            exec(compile(src, name, "exec"), ns)
    built = [x for x in ns.values() if isinstance(x, (PipelineExplorer, ScheduleBuilder, FrontierExplorer))]
    assert built and all(x.error is None for x in built)


def test_classroom_templates_and_presenter(capsys):
    nb = ROOT / "apps" / "explorer.ipynb"
    assert "--template=bubblekit" in classroom.voila_command(nb, 9123)
    assert "--template=bubblekit-presenter" in classroom.voila_command(nb, 9123, presenter=True)
    for name in ("bubblekit", "bubblekit-presenter"):
        folder = classroom.TEMPLATE_ROOT / "voila" / "templates" / name
        assert (folder / "conf.json").is_file() and (folder / "index.html.j2").is_file()
        for f in folder.iterdir():
            assert "https://" not in f.read_text(encoding="utf-8"), f  # nothing fetched from a CDN
    env = classroom.voila_env(True, {"JUPYTER_PATH": "/x"})
    assert env["JUPYTER_PATH"].split(os.pathsep) == [str(classroom.TEMPLATE_ROOT), "/x"]
    assert env[explorers.PRESENTER_ENV] == "1"
    assert explorers.PRESENTER_ENV not in classroom.voila_env(False, {explorers.PRESENTER_ENV: "1"})
    assert classroom.main(["--presenter", "--print-command"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{explorers.PRESENTER_ENV}=1 JUPYTER_PATH=") and "--template=bubblekit-presenter" in out
    assert classroom.main(["--pages", "--lang", "zh", "--print-command"]) == 0  # every Chinese page: apps/zh/
    assert f" {ROOT / 'apps' / 'zh'} " in capsys.readouterr().out
    assert classroom.default_pages(language="zh") == ROOT / "apps" / "zh"
    with pytest.raises(SystemExit):
        classroom.main(["--pages", "--notebook", str(ROOT / "apps" / "explorer.ipynb"), "--print-command"])
    assert "cannot be combined with --notebook" in capsys.readouterr().err


# ------------------------------------------------------------- what a notebook stores
def _still(bundle: dict) -> bytes:
    """The PNG of an explorer's still picture (its text/html fallback)."""
    m = re.search(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', bundle["text/html"])
    assert m, bundle["text/html"][:300]
    return base64.b64decode(m.group(1))


@pytest.mark.parametrize("make", [lambda: pipeline_explorer("interleaved", p=4, m=8, compare="1f1b"),
                                  lambda: schedule_builder(), lambda: frontier_explorer()])
def test_display_gives_the_widget_and_a_still_picture(make):
    ex = make()
    bundle = ex._repr_mimebundle_()
    view = bundle["application/vnd.jupyter.widget-view+json"]
    assert view["model_id"] == ex.widget.model_id  # the live widget, for Jupyter and Voila
    png = _still(bundle)  # a picture for a notebook opened before it runs
    assert png.startswith(PNG_MAGIC)
    from PIL import Image

    with Image.open(io.BytesIO(png)) as im:
        assert im.size[0] == round(12 * explorers.DPI)
    assert "run this cell" in bundle["text/html"]
    assert not bundle["text/plain"].startswith(("VBox", "HBox")) and "run the cell" in bundle["text/plain"]


def test_still_picture_shows_the_readouts():
    ex = pipeline_explorer("1f1b", p=4, m=8)
    page = ex._repr_mimebundle_()["text/html"]
    assert f"{ex.result.bubble_ratio:.4f}" in page and "peak memory per rank" in page


def test_execute_notebooks_keeps_the_still_picture_not_the_dead_widget_view():
    import nbformat

    spec = importlib.util.spec_from_file_location("execute_notebooks", ROOT / "scripts" / "execute_notebooks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    bundle = pipeline_explorer()._repr_mimebundle_()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", outputs=[
        nbformat.v4.new_output("display_data", data=bundle),
        nbformat.v4.new_output("display_data", data={"text/plain": "VBox()", mod.WIDGET_VIEW: {"model_id": "a"}}),
    ])])
    assert mod.still_pictures(nb) == 1
    first, second = nb.cells[0].outputs
    assert set(first.data) == {"text/html", "text/plain"}
    assert mod.WIDGET_VIEW in second.data  # no picture to fall back on: left alone


# -------------------------------------------------------------------- cost controls
def test_cost_controls_follow_the_costs_fields(monkeypatch):
    fields = {f.name for f in dataclasses.fields(bk.Costs)}
    ex = pipeline_explorer()
    shown = [k for k in ex.controls if k in {c.key for c in explorers.COST_CONTROLS}]
    assert shown == [c.key for c in explorers.COST_CONTROLS if c.key in fields]
    # a new kind of cost is one more line: here the activations a microbatch holds (a Costs field)
    from bubblekit.i18n import register

    register({"test.activation": {"en": "activation", "zh": "激活"},
              "test.activation.tip": {"en": "activations held", "zh": "持有的激活"}})
    more = (*explorers.COST_CONTROLS, explorers.CostControl("activation", "test.activation", "test.activation.tip"),
            explorers.CostControl("no_such_field", "test.activation", "test.activation.tip"))
    monkeypatch.setattr(explorers, "COST_CONTROLS", more)
    ex = pipeline_explorer("1f1b", p=4, m=8)
    assert "activation" in ex.controls and "no_such_field" not in ex.controls
    ex.controls["activation"].value = 2.0
    assert ex.costs.activation == 2
    assert ex.result.max_peak_activations == 2 * sim("1f1b", 4, 8).max_peak_activations


# --------------------------------------------------------------------------- builder
def _builder_sizes() -> set[tuple[int, int]]:
    """(p, m) the builder opens at: its defaults and every classroom page's call."""
    sig = inspect.signature(schedule_builder)
    sizes = {(sig.parameters["p"].default, sig.parameters["m"].default)}
    for cells in classroom.PAGES.values():
        for _kind, src in cells:
            for p, m in re.findall(r"schedule_builder\(p=(\d+), m=(\d+)", src):
                sizes.add((int(p), int(m)))
    return sizes


def test_no_builder_default_answers_an_exercise():
    """Neither template (GPipe, shown at first, nor "load 1F1B") at a size the builder opens at
    passes an exercise that asks for a schedule written by hand (03.5: 1F1B at p = 3, m = 6)."""
    from bubblekit.course.checks import _registry
    from bubblekit.course.checks._schedules import compare_schedule

    # 03.5 wraps compare_schedule (it also refuses a generated bk.Schedule object): a hand-written one too
    written = sorted({i for i in _registry.ids() if _registry.REGISTRY[i].compare is compare_schedule} | {"03.5"})
    sizes = _builder_sizes()
    assert (4, 8) in sizes
    # the check can fail: the old classroom size, p = 3 and m = 6, hands out 03.5's answer
    ok, _ = compare_schedule(explorers._template_text("1f1b", 3, 6), _registry.REGISTRY["03.5"].expected())
    assert ok
    for ex_id in written:
        goal = _registry.REGISTRY[ex_id].expected()
        for p, m in sizes:
            for name in ("gpipe", "1f1b"):
                ok, _ = compare_schedule(explorers._template_text(name, p, m), goal)
                assert not ok, f"the builder's {name} template at p={p}, m={m} answers exercise {ex_id}"


# -------------------------------------------------------------------------- frontier
def test_frontier_points_are_the_compare_table_and_the_frontier_is_undominated():
    fx = frontier_explorer(p=4, m=8, v=2, preset="f=i=w")
    assert fx.error is None
    table = bk.compare([n for n in bk.names() if bk.REGISTRY[n].allows(4, 8, 2 if bk.REGISTRY[n].chunks == "many"
                                                                         else None)],
                       4, 8, v=2, costs=bk.preset("f=i=w"), closed_form=False)
    rows = list(table)
    assert [r["schedule"] for r in fx.table] == [r["schedule"] for r in rows]
    ax = fx.figure.axes[0]
    for r in rows:
        (pt,) = [ln for ln in ax.lines if ln.get_gid() == f"point:{r['schedule']}"]
        assert (pt.get_xdata()[0], pt.get_ydata()[0]) == pytest.approx((r["peak"], 100 * r["bubble_ratio"]))
    pts = {r["schedule"]: (r["peak"], r["bubble_ratio"]) for r in rows}
    for name, (x, y) in pts.items():
        beaten = any(ox <= x and oy <= y and (ox, oy) != (x, y) for ox, oy in pts.values())
        assert (name in fx.frontier) == (not beaten)
    assert "GPipe" not in fx.frontier  # 1F1B: same bubble, less memory
    for name in fx.frontier:
        assert html.escape(name) in fx.readouts["frontier"].value


def test_frontier_lists_schedules_that_refuse_m():
    fx = frontier_explorer(p=4, m=4)
    assert "DualPipeV" in fx.skipped and "m >= 2p" in fx.readouts["message"].value.replace("&gt;", ">")
    fx.controls["m"].value = 8
    assert "DualPipeV" not in fx.skipped and any(r["schedule"] == "DualPipeV" for r in fx.table)


def test_frontier_bad_arguments():
    with pytest.raises(ValueError, match="v must be between 2 and 8"):
        frontier_explorer(v=1)
    with pytest.raises(ValueError, match="p must be"):
        frontier_explorer(p=0)


# ------------------------------------------------------------------------- presenter
def test_presenter_layout_has_larger_letters_and_pictures(monkeypatch):
    small = pipeline_explorer()
    big = pipeline_explorer(layout="presenter")
    assert big.layout == "presenter" and "bk-presenter" in big.widget._dom_classes
    assert "bk-presenter" not in small.widget._dom_classes
    from PIL import Image

    with Image.open(io.BytesIO(bytes(big.image.value))) as a, Image.open(io.BytesIO(bytes(small.image.value))) as b:
        assert a.size[0] == round(12 * explorers.PRESENTER_DPI) > b.size[0]
    assert big.figure.axes[0].title.get_fontsize() > small.figure.axes[0].title.get_fontsize()
    monkeypatch.setenv(explorers.PRESENTER_ENV, "1")  # what bubblekit classroom --presenter sets
    assert pipeline_explorer().layout == "presenter"
    assert schedule_builder().layout == "presenter" and frontier_explorer().layout == "presenter"
    assert pipeline_explorer(layout="notebook").layout == "notebook"
    with pytest.raises(ValueError, match="layout must be one of"):
        pipeline_explorer(layout="projector")


def test_an_m_refused_at_construction_is_moved_and_explained():
    ex = pipeline_explorer("interleaved", p=4, m=9, v=2)
    assert ex.controls["m"].value == 10 and "m = 9 is not allowed" in ex.m_note
    assert_matches(ex, sim("interleaved", 4, 10, 2))
    assert "bk-msg-note" in ex.readouts["message"].value


def test_chinese_explorers_write_chinese_punctuation_and_words():
    """Fifth Chinese blind reading (apps): the costs line names the latency as its slider does, the
    formula card, the per-rank peaks and the frontier's lists use Chinese punctuation, the legend
    marks the frontier in Chinese, the builder says "死锁" once, and interleaving has a closed
    form for m >= p (the card says when it has none)."""
    from bubblekit.i18n import using_language

    def text(value: str) -> str:
        return html.unescape(re.sub(r"<[^>]+>", "", value))

    with using_language("zh"):
        ex = pipeline_explorer("1f1b", p=4, m=8)
        assert text(ex.readouts["costs"].value) == "耗时：F = 1，B = 2，通信延迟 = 0（单位：时间槽）"
        assert "= 模拟结果 ✓（p = 4，m = 8，v = 1）；bubble_overhead (p−1)/m = 0.3750" in text(ex.readouts["formula"].value)
        assert "rank 0：4" in text(ex.readouts["peak"].value)
        ex.controls["schedule"].value = "interleaved"
        ex.controls["m"].value = 2
        assert "交错式 1F1B 在 m < p 时没有闭式解，这里只给模拟结果" in text(ex.readouts["formula"].value)
        assert "comm" not in ex.figure.axes[0].get_title(loc="left")
        b = schedule_builder(p=2, m=2, text="rank 0: 0F0 0B0 0F1 0B1\nrank 1: 1B0 1F0 1F1 1B1")
        assert text(b.readouts["message"].value).count("死锁") == 1
        b.controls["load_1f1b"].click()
        assert "rank 0：2 · rank 1：1" in text(b.readouts["peak"].value)
        fx = frontier_explorer(p=4, m=3)
        labels = [t.get_text() for t in fx.figure.axes[0].get_legend().get_texts()]
        assert any(label.endswith("（在帕累托前沿上）") for label in labels)
        assert not any("frontier" in label or ", v=" in label for label in labels)
        assert "V-Min、" in text(fx.readouts["frontier"].value)
        skipped = text(fx.readouts["message"].value)
        assert "DualPipeV：p = 4 时 m = 3 太少" in skipped and "；DualPipe：" in skipped and "'dualpipev'" not in skipped


def test_over_cap_advice_follows_the_schedules_memory_rules():
    """blind12e: "all 4 ranks" when every rank is over; a smaller m only where the peak grows with m
    (GPipe), another schedule only where one holds fewer; recomputation always (both languages)."""
    from bubblekit.i18n import using_language

    ex = pipeline_explorer("gpipe", p=4, m=8)
    ex.controls["cap"].value = 3
    msg = html.unescape(ex.readouts["message"].value)
    assert "all 4 ranks hold more than 3" in msg and "a smaller m (GPipe's peak grows with m)" in msg
    assert "1F1B: at most 4" in msg and "activation recomputation (the explorer has no switch for it: see lesson 05" in msg
    assert "(rank 0 peaks at 8 microbatch activations)" in msg
    ex.controls["schedule"].value = "1f1b"  # rank 0 holds 4 > 3; 1F1B's peak min(p, m) does not grow with m = 8
    msg = html.unescape(ex.readouts["message"].value)
    assert "1 of 4 ranks" in msg and "smaller m" not in msg and "1F1B:" not in msg
    with using_language("zh"):
        zx = pipeline_explorer("gpipe", p=4, m=8)
        zx.controls["cap"].value = 3
        msg = html.unescape(zx.readouts["message"].value)
        assert "4 个 rank 全部超过上限（3 个微批的激活）" in msg and "减小 m（GPipe 的峰值随 m 增长）" in msg
        assert msg.rstrip("</div>").endswith("，或者改用激活重算（探索器里没有这个开关：见第 05 课，或 API 的 "
                                             "memory_per_rank(..., recompute=...)）。")
        assert "峰值最高达 8 个微批的激活（rank 0）。" in msg


def test_readouts_write_decimals_and_one_peak_precision():
    """blind12e: comm 0.5 reads 0.5 (not 1/2) beside a slider showing 0.50; the h200 preset is named in
    Chinese; the per-rank peaks and the over-cap line give the same 3 significant digits."""
    from bubblekit.i18n import using_language

    ex = pipeline_explorer("1f1b", p=4, m=8)
    ex.controls["comm"].value = 0.5
    assert "comm=0.5 slot" in ex.readouts["costs"].value and "1/2" not in ex.readouts["costs"].value
    assert bk.Costs(f=1, b=2, comm=Fraction(1, 2)).describe() == "F=1 B=2 (I=1 W=1) comm=1/2 slot"  # the default
    with using_language("zh"):
        zx = pipeline_explorer("interleaved", p=4, m=8, v=3)
        zx.controls["cap"].value = 3
        peak = format(max(zx.result.peak_activations), ".3g")
        assert f"<b>{peak}</b>" in zx.readouts["peak"].value and f"峰值最高达 {peak} 个微批的激活（rank " in zx.readouts["message"].value
        zx.controls["preset"].value = "h200"
        zx.controls["comm"].value = 0.3
        assert "H200 实测（h = 4096，seq = 4096，每个 rank 1 层）" in zx._unit_note.value
        assert "通信延迟 = 0.3（单位：ms）" in zx.readouts["costs"].value and "3/10" not in zx.readouts["costs"].value
        assert zx.costs is not None and zx.costs.name.endswith("已改：通信延迟")
