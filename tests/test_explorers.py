"""The ipywidgets explorers, driven the way ipywidgets' own tests drive widgets: set ``.value``.

Every number an explorer shows is checked against :func:`bubblekit.simulate` (or the
closed forms) computed here, never against a typed figure. Also: classroom mode's command
line and the notebook it serves.
"""

from __future__ import annotations

import html
import json
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
    PipelineExplorer,
    ScheduleBuilder,
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
    assert ex.widget is not None and hasattr(ex, "_ipython_display_")
    assert list(ex.controls["schedule"].options) == bk.names()
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


def test_interleaved_with_a_disallowed_m_shows_the_library_message():
    ex = pipeline_explorer("interleaved", p=4, m=8, v=2)
    expected = library_error(bk.schedule, "interleaved", 4, 9, 2)
    ex.controls["m"].value = 9
    assert ex.error == expected
    assert ex.result is None
    assert html.escape(expected) in ex.readouts["message"].value
    assert "Traceback" not in ex.readouts["message"].value
    assert ex.readouts["bubble_ratio"].value == ""
    assert ex.image.layout.visibility == "hidden"
    ex.controls["m"].value = 12  # back to a legal value: the message goes, the picture comes back
    assert_matches(ex, sim("interleaved", 4, 12, 2))
    assert ex.readouts["message"].value == ""


def test_v_one_for_interleaved_shows_the_library_message():
    ex = pipeline_explorer("interleaved", p=4, m=8, v=2)
    ex.controls["v"].value = 1
    assert ex.error == library_error(bk.schedule, "interleaved", 4, 8, 1)


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
    assert bk.schedules.spec("looped-bfs").closed_form(4, 8, 2) is None
    assert bk.schedules.spec("interleaved").closed_form(4, 2, 2) is None  # m < p: the pipe never fills
    ex = pipeline_explorer("looped-bfs", p=4, m=8, v=2)
    assert "none for" in ex.readouts["formula"].value


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


def test_compare_error_keeps_the_main_schedule():
    ex = pipeline_explorer("1f1b", p=4, m=9, compare="interleaved")
    assert ex.result is not None and ex.compare_result is None
    assert ex.error == "compare schedule 'interleaved': " + library_error(bk.schedule, "interleaved", 4, 9, 2)
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


def test_builder_deadlock_shows_which_rank_waits_on_what():
    text = "rank 0: 0F0 0B0 0F1 0B1\nrank 1: 1B0 1F0 1F1 1B1"
    b = schedule_builder(p=2, m=2, text=text)
    expected = library_error(lambda: bk.simulate(bk.Schedule.from_text(text, m=2)))
    assert b.error == expected
    assert "rank 1 is blocked at 1B0" in b.error
    assert html.escape(expected) in b.readouts["message"].value
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
    assert html.escape(expected) in b.readouts["message"].value
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


def test_explorer_notebook_is_generated_from_classroom(tmp_path):
    """apps/explorer.ipynb is exactly what ``classroom.write_notebook`` writes (regenerate it if not)."""
    committed = (ROOT / "apps" / "explorer.ipynb").read_text(encoding="utf-8")
    assert committed == classroom.notebook_text(), (
        "apps/explorer.ipynb is out of date: run "
        "python -c \"from bubblekit.presentation.classroom import write_notebook; write_notebook('apps/explorer.ipynb')\""
    )
    nb = json.loads(committed)
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    assert all(c.get("outputs", []) == [] for c in nb["cells"])
    copy = classroom.write_notebook(tmp_path / "x.ipynb")
    assert copy.read_text(encoding="utf-8") == committed


def test_explorer_notebook_code_runs():
    """The notebook's code cells, run here: they build both explorers without error."""
    ns: dict = {}
    for kind, src in classroom.notebook_cells():
        if kind == "code":
            exec(compile(src, "explorer.ipynb", "exec"), ns)
    assert ns["explorer"].error is None and ns["builder"].error is None
