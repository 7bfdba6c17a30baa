"""The SVG pipeline picture (issue 27): pure Python, the diagram's rules, escaped text, a learner's files kept.

:func:`bubblekit.presentation.svg.pipeline_svg` draws the pipeline diagram where numpy and
matplotlib are missing (the browser edition on Pyodide). The tests read the SVG back with
``xml.etree`` and count what a reader sees: one box per compute action, its label, the title
and the metrics line in the current language, the hatched idle time.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import bubblekit as bk
from bubblekit.actions import Action, is_comm
from bubblekit.i18n import using_language
from bubblekit.presentation import diagram
from bubblekit.presentation.svg import MAX_BOXES, MAX_WIDTH, MIN_WIDTH, SvgPicture, pipeline_svg, plot_pipeline_svg

NS = {"s": "http://www.w3.org/2000/svg"}
ROOT = Path(__file__).resolve().parents[1]


def parse(picture: SvgPicture) -> ET.Element:
    return ET.fromstring(picture.svg)


def actions(root: ET.Element) -> list[ET.Element]:
    return [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("class") == "bk-action"]


def texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]


def compute_spans(result: bk.Timeline) -> list[tuple[int, Action | str]]:
    return [(r, lb) for r in range(result.p) for lb in result.arrays(r)[2]
            if not (isinstance(lb, Action) and is_comm(lb))]


@pytest.mark.parametrize("name, p, m, v", [("gpipe", 4, 8, None), ("1f1b", 4, 8, None), ("interleaved", 4, 8, 2),
                                           ("zbv", 4, 8, None), ("dualpipev", 4, 8, None), ("zb-h1", 3, 6, None)])
def test_one_box_per_compute_action_and_the_picture_parses(name: str, p: int, m: int, v: int | None) -> None:
    result = bk.simulate(bk.schedule(name, p, m, v))
    picture = pipeline_svg(result)
    root = parse(picture)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert len(actions(root)) == len(compute_spans(result)) == result.n_spans
    assert picture._repr_svg_() == picture.svg
    assert float(root.get("width", "0")) == picture.width == 960
    assert root.find("s:defs/s:pattern", NS) is not None  # the idle hatch
    assert root.find(".//s:path[@class='bk-idle']", NS) is not None


def test_sends_and_receives_are_not_drawn() -> None:
    lowered = bk.schedule("1f1b", 4, 8).lower_comms()
    result = bk.simulate(lowered, bk.Costs(f=1, b=2, comm=0.5))
    assert result.n_spans > len(compute_spans(result))  # the lowered schedule has sends and receives
    assert len(actions(parse(pipeline_svg(result)))) == len(compute_spans(result)) == 4 * 8 * 2


def test_boxes_carry_the_plotting_colours_and_labels() -> None:
    result = bk.simulate(bk.schedule("1f1b", 4, 8), bk.Costs(f=1, b=2))
    root = parse(pipeline_svg(result))
    boxes = actions(root)
    expected = [diagram.microbatch_color(lb.microbatch, lb.kind) for _, lb in compute_spans(result)]
    assert [b.get("fill") for b in boxes] == expected
    shown = texts(root)
    for k in range(8):
        assert f"F{k}" in shown and f"B{k}" in shown  # 1 and 2 slots are wide enough for the full label
    for r in range(4):
        assert f"rank {r}" in shown
    assert any(t.startswith("1F1B") and "p=4, m=8" in t for t in shown)
    assert any("bubble_ratio 27.3%" in t for t in shown)  # (p-1)/(m+p-1) = 3/11
    assert "time (slots)" in shown
    by_kind = actions(parse(pipeline_svg(result, color_by="kind")))
    assert {b.get("fill") for b in by_kind} == {diagram.KIND_COLORS["F"], diagram.KIND_COLORS["B"]}


def test_plotting_uses_the_same_colour_rule() -> None:
    from bubblekit.presentation import plotting

    assert plotting.microbatch_color is diagram.microbatch_color
    assert plotting.PALETTE is diagram.PALETTE and plotting.KIND_COLORS is diagram.KIND_COLORS


def test_several_stages_per_rank_name_the_stage_and_draw_the_placement_strip() -> None:
    result = bk.simulate(bk.schedule("interleaved", 4, 8, 2))
    root = parse(pipeline_svg(result))
    shown = texts(root)
    assert any("s4" in t for t in shown)  # a box of rank 0's second stage
    stages = [t for t in root.iter("{http://www.w3.org/2000/svg}text") if t.get("class") == "bk-stage"]
    assert len(stages) == 8  # two per rank
    assert "stages" in shown
    assert any("chunk 1" in t for t in shown)  # the legend names the outlined chunk


def test_chinese_text_under_zh() -> None:
    result = bk.simulate(bk.schedule("1f1b", 4, 8))
    with using_language("zh"):
        shown = texts(parse(pipeline_svg(result)))
    joined = "\n".join(shown)
    assert "气泡比例" in joined and "空闲（气泡）" in joined and "时间（时间槽）" in joined
    assert "个时间槽" in joined  # the makespan counted: 33 个时间槽
    english = "\n".join(texts(parse(pipeline_svg(result))))
    assert "idle (bubble)" in english and "气泡" not in english


def test_the_fonts_are_a_latin_font_then_a_cjk_font() -> None:
    root = parse(pipeline_svg(bk.simulate(bk.schedule("1f1b", 2, 2))))
    family = root.get("font-family", "")
    fonts = [f.strip(" '") for f in family.split(",")]
    latin = fonts.index("DejaVu Sans")
    cjk = next(k for k, f in enumerate(fonts) if "CJK" in f)
    assert latin < cjk and fonts[-1] == "sans-serif"


@pytest.mark.parametrize("title", ["<b>bold</b> & 'quotes' \"too\"", "]]><script>alert(1)</script>", "a\x00b\x1bc"])
def test_every_text_is_escaped(title: str) -> None:
    result = bk.simulate(bk.schedule("1f1b", 2, 4))
    root = parse(pipeline_svg(result, title=title, unit_label=title))
    assert root.find(".//s:script", NS) is None and root.find(".//s:b", NS) is None
    clean = title.replace("\x00", "\ufffd").replace("\x1b", "\ufffd")
    assert root.findtext("s:title", namespaces=NS) == clean
    assert clean in [t.replace("\u00a0", " ") for t in texts(root)]


def test_a_measured_timeline_with_text_labels() -> None:
    tl = bk.Timeline([[0, 2], [1]], [[1, 3], [2.5]], [["forward mb 0", "backward mb 0"], ["fwd 0"]], unit="ms",
                     source="trace <rank0>.json")
    root = parse(pipeline_svg(tl))
    assert len(actions(root)) == 3
    assert "time (ms)" in texts(root)
    assert root.findtext("s:title", namespaces=NS) == "trace <rank0>.json"


def test_several_timelines_stack_in_one_picture() -> None:
    a = bk.simulate(bk.schedule("gpipe", 4, 8))
    b = bk.simulate(bk.schedule("1f1b", 4, 8))
    root = parse(pipeline_svg([a, b], title=["GPipe", None]))
    assert len(actions(root)) == a.n_spans + b.n_spans
    shown = texts(root)
    assert "GPipe" in shown and shown.count("time (slots)") == 1


def test_save_writes_a_new_file_and_never_overwrites_one(tmp_path: Path) -> None:
    picture = pipeline_svg(bk.simulate(bk.schedule("1f1b", 2, 4)))
    path = tmp_path / "pipeline.svg"
    assert picture.save(path) == path
    assert path.read_text(encoding="utf-8") == picture.svg
    path.write_text("the learner's own file", encoding="utf-8")
    with pytest.raises(FileExistsError, match="pipeline.svg"):
        picture.save(path)
    assert path.read_text(encoding="utf-8") == "the learner's own file"
    picture.save(str(path), force=True)
    assert path.read_text(encoding="utf-8") == picture.svg
    with pytest.raises(ValueError, match="is a folder"):
        picture.save(tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        picture.save(tmp_path / "missing" / "pipeline.svg")
    with pytest.raises(ValueError, match=r"\.svg"):
        picture.save(tmp_path / "pipeline.png")
    with pytest.raises(TypeError, match="path"):
        picture.save(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="force"):
        picture.save(tmp_path / "other.svg", force="yes")  # type: ignore[arg-type]


def test_hostile_inputs_get_clear_errors() -> None:
    result = bk.simulate(bk.schedule("1f1b", 2, 4))
    with pytest.raises(TypeError, match="result_or_timeline"):
        pipeline_svg("1f1b")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="result_or_timeline"):
        pipeline_svg([])
    with pytest.raises(TypeError, match="result_or_timeline"):
        pipeline_svg(bk.schedule("1f1b", 2, 4))  # type: ignore[arg-type]
    for width in (0, 100, MAX_WIDTH + 1, float("nan"), float("inf"), -5):
        with pytest.raises(ValueError, match=rf"width must be a number of pixels from {MIN_WIDTH} to {MAX_WIDTH}"):
            pipeline_svg(result, width=width)
    for width in ("wide", True, None):
        with pytest.raises(TypeError, match="width"):
            pipeline_svg(result, width=width)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="color_by must be one of"):
        pipeline_svg(result, color_by="rank")
    with pytest.raises(TypeError, match="labels"):
        pipeline_svg(result, labels="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="show_bubbles"):
        pipeline_svg(result, show_bubbles=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="title"):
        pipeline_svg(result, title=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="title has 2 entries"):
        pipeline_svg(result, title=["a", "b"])
    zero = bk.Timeline([[0]], [[0]], [["F0"]])
    with pytest.raises(ValueError, match="zero length"):
        pipeline_svg(zero)


def test_a_huge_schedule_is_refused_naming_the_limit() -> None:
    result = bk.simulate(bk.schedule("1f1b", 4, 8))
    with pytest.raises(ValueError, match="max_boxes=10"):
        pipeline_svg(result, max_boxes=10)
    big = bk.simulate(bk.schedule("1f1b", 50, 120))  # 12,000 actions
    assert big.n_spans > MAX_BOXES
    with pytest.raises(ValueError, match=f"MAX_BOXES = {MAX_BOXES:,}"):
        pipeline_svg(big)
    with pytest.raises(TypeError, match="max_boxes"):
        pipeline_svg(result, max_boxes=1.5)  # type: ignore[arg-type]


def test_many_ranks_and_many_boxes_still_draw_without_labels() -> None:
    result = bk.simulate(bk.schedule("1f1b", 32, 64))  # 4,096 boxes: more than LABEL_LIMIT
    root = parse(pipeline_svg(result))
    assert len(actions(root)) == result.n_spans
    assert root.find(".//s:g[@class='bk-labels']", NS) is None
    assert "rank" in texts(root)  # one axis name instead of 32 rank names


def test_the_fallback_keeps_plot_pipelines_call() -> None:
    result = bk.simulate(bk.schedule("1f1b", 2, 4))
    picture = plot_pipeline_svg(result, title="t", labels=False)
    assert isinstance(picture, SvgPicture)
    with pytest.warns(UserWarning, match="phases"):
        plot_pipeline_svg(result, phases=True)
    with pytest.raises(TypeError, match="ax"):
        plot_pipeline_svg(result, ax=object())


def test_the_critical_path_is_outlined_box_by_box_as_the_simulator_found_it() -> None:
    """Lesson 02's picture: ``critical_path=True`` outlines each compute action of the chain (in black) and
    draws its hops, from the diagram's geometry that matplotlib's picture uses too."""
    uneven = bk.simulate(bk.schedule("gpipe", p=4, m=6), bk.Costs(f=[1, 1, 2, 1], b=[2, 2, 4, 2]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # drawn, not warned about
        picture = plot_pipeline_svg(uneven, critical_path=True)
    root = parse(picture)
    group = root.find(".//s:g[@class='bk-critical-path']", NS)
    assert group is not None and group.get("stroke") == diagram.CRITICAL_COLOR
    boxes = group.findall("s:rect", NS)
    chain = [(r, a) for r, a in uneven.critical_path if not is_comm(a)]
    assert len(boxes) == len(chain) == len(diagram.critical_boxes(uneven))
    g = picture.panels[0]
    spans = {(s.rank, s.action): s for s in uneven.spans()}
    for rect, (rank, action) in zip(boxes, chain):
        span = spans[(rank, action)]
        assert float(rect.get("x", "nan")) == pytest.approx(g.x_of(float(span.start)), abs=0.01)
        assert float(rect.get("width", "nan")) == pytest.approx(float(span.end - span.start) * g.scale, abs=0.01)
        assert float(rect.get("y", "nan")) + g.box_height / 2 == pytest.approx(g.y_of(rank), abs=0.01)
    hops = group.findall("s:line", NS)
    assert len(hops) == len(diagram.critical_hops(diagram.critical_boxes(uneven))) > 0
    assert "critical path" in texts(root)  # the legend names it
    with using_language("zh"):
        assert "关键路径" in texts(parse(pipeline_svg(uneven, critical_path=True)))
    assert parse(pipeline_svg(uneven)).find(".//s:g[@class='bk-critical-path']", NS) is None
    trace = bk.Timeline([[0, 2]], [[1, 3]], [["F0", "B0"]], unit="ms")
    for name in ("critical_path", "comm_arrows"):
        with pytest.raises(TypeError, match=f"{name}=True needs simulated results"):
            pipeline_svg(trace, **{name: True})
    with pytest.raises(TypeError, match="critical_path"):
        pipeline_svg(uneven, critical_path="yes")  # type: ignore[arg-type]


def test_comm_arrows_one_per_cross_rank_hop_and_none_beyond_the_limit() -> None:
    res = bk.simulate(bk.schedule("1f1b", 3, 4), bk.Costs(f=1, b=2, comm=0.5))
    hops = sum((a.kind == "F" and a.stage > 0) + (a.kind == "B" and a.stage < res.schedule.n_stages - 1)
               for r in range(res.p) for a in res.schedule.orders[r])
    for picture in (plot_pipeline_svg(res, comm_arrows=True), plot_pipeline_svg(res)):  # None: a latency draws them
        arrows = parse(picture).findall(".//s:path[@class='bk-comm-arrow']", NS)
        assert len(arrows) == hops == len(diagram.dependency_pairs(res))
    assert not parse(plot_pipeline_svg(res, comm_arrows=False)).findall(".//s:path[@class='bk-comm-arrow']", NS)
    no_latency = bk.simulate(bk.schedule("1f1b", 3, 4), bk.Costs(f=1, b=2))
    assert not parse(plot_pipeline_svg(no_latency)).findall(".//s:path[@class='bk-comm-arrow']", NS)
    assert not parse(pipeline_svg(res)).findall(".//s:path[@class='bk-comm-arrow']", NS)  # pipeline_svg: off
    # each arrow leaves the sender's box edge at the send time and ends on the receiver's edge at its start
    g = plot_pipeline_svg(res, comm_arrows=True)
    first = parse(g).find(".//s:path[@class='bk-comm-arrow']", NS)
    assert first is not None
    (t0, r0, t1, r1) = diagram.comm_arrow_segments(res)[0]
    start = first.get("d", "").split("L")[0].lstrip("M").split()
    assert [float(x) for x in start] == pytest.approx([g.panels[0].x_of(t0), g.panels[0].y_of(r0)], abs=0.01)
    big = bk.simulate(bk.schedule("1f1b", 8, diagram.COMM_ARROW_LIMIT))
    with pytest.warns(UserWarning, match="COMM_ARROW_LIMIT") as caught:
        picture = plot_pipeline_svg(big, comm_arrows=True, labels=False)
    assert caught[0].filename == __file__  # the warning points at the learner's call
    assert not parse(picture).findall(".//s:path[@class='bk-comm-arrow']", NS)


def test_bk_plot_pipeline_is_matplotlib_s_where_matplotlib_is_installed() -> None:
    from bubblekit.presentation import plotting

    assert bk.plot_pipeline is plotting.plot_pipeline
    assert "plot_pipeline" in dir(bk)
    assert bk.svg.pipeline_svg is pipeline_svg


def test_importing_and_drawing_the_svg_picture_loads_no_numpy_or_matplotlib() -> None:
    code = (
        "import json, sys\n"
        "import bubblekit as bk\n"
        "from bubblekit.presentation.svg import pipeline_svg\n"
        "bk.set_language('zh')\n"
        "svg = pipeline_svg(bk.simulate(bk.schedule('interleaved', 4, 8, 2))).svg\n"
        "print(json.dumps({'loaded': sorted(m for m in sys.modules if m.split('.')[0] in "
        "('numpy', 'matplotlib', 'ipywidgets')), 'zh': '气泡比例' in svg}))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout.strip().splitlines()[-1]) == {"loaded": [], "zh": True}


# ------------------------------------------------------------------ lesson 01's explorer with picture="svg"
def test_the_explorer_draws_svg_and_its_readouts_equal_the_simulator() -> None:
    pytest.importorskip("ipywidgets")
    from bubblekit.presentation.explorers import pipeline_explorer

    ex = pipeline_explorer("gpipe", p=4, m=4, picture="svg")
    assert ex.widget.children[-2] is ex.svg_view  # the SVG takes the picture's place
    for settings in ({}, {"m": 8}, {"schedule": "1f1b", "p": 3}, {"schedule": "interleaved", "m": 8, "v": 2}):
        with ex.hold():
            for key, value in settings.items():
                ex.controls[key].value = value
        c = ex.controls
        name, p, m = c["schedule"].value, c["p"].value, c["m"].value
        ref = bk.simulate(bk.schedule(name, p, m, c["v"].value if name == "interleaved" else None), bk.Costs(f=1, b=2))
        assert ex.error is None and ex.result is not None
        assert ex.result.makespan == ref.makespan and ex.result.bubble_ratio == ref.bubble_ratio
        assert f"{ref.bubble_ratio:.4f}" in ex.readouts["bubble_ratio"].value
        assert f"{ref.bubble_overhead:.4f}" in ex.readouts["bubble_overhead"].value
        assert ex.svg is not None and ex.svg_view.value == ex.svg.svg
        root = ET.fromstring(ex.svg_view.value)
        assert len(actions(root)) == ref.n_spans
        assert any(f"bubble_ratio {ref.bubble_ratio:.1%}" in t for t in texts(root))
    bundle = ex._repr_mimebundle_()
    assert "<svg" in bundle["text/html"] and "data:image/png" not in bundle["text/html"]
    ex.controls["compare"].value = "1f1b"
    assert len(actions(ET.fromstring(ex.svg_view.value))) == ex.result.n_spans + ex.compare_result.n_spans


def test_the_explorer_refuses_an_unknown_picture() -> None:
    pytest.importorskip("ipywidgets")
    from bubblekit.presentation.explorers import pipeline_explorer

    with pytest.raises(ValueError, match=r"picture must be one of \['png', 'svg'\]"):
        pipeline_explorer(picture="gif")
    assert pipeline_explorer(picture="png").svg is None


def test_a_trace_clipped_to_its_window_and_numpy_numbers() -> None:
    np = pytest.importorskip("numpy")
    tl = bk.Timeline([[0, 5]], [[4, 12]], [["F0", "F1"]], t0=1, t1=10, may_overlap=True, unit="us")
    picture = pipeline_svg(tl, width=np.int64(500))
    root = parse(picture)
    assert picture.width == 500 and len(actions(root)) == 2
    assert root.find(".//s:clipPath", NS) is not None
    assert "time (µs)" in texts(root)


# --------------------------------------------------------------- the charts (plot_sweep, plot_memory)
def _series(picture: SvgPicture) -> dict[str, tuple[str, list[tuple[float, float]]]]:
    """Each series of a chart: ``key -> (element tag, its points in data units)``."""
    root = parse(picture)
    out = {}
    for el in root.iter():
        if (el.get("class") or "") == "bk-series":
            points = [tuple(float(x) for x in pair.split(",")) for pair in el.get("data-points", "").split()]
            assert el.get("data-series") not in out
            out[el.get("data-series")] = (el.tag.split("}")[1], points)
    return out


def _texts(picture: SvgPicture) -> list[str]:
    return ["".join(t.itertext()).replace("\u00a0", " ") for t in parse(picture).iter(f"{{{NS['s']}}}text")]


def test_plot_sweep_svg_draws_the_simulated_points_and_the_closed_forms() -> None:
    from bubblekit.presentation import svg_plotting

    costs = bk.preset("uniform")
    ms = [1, 2, 4, 8, 16, 24, 32, 48, 64]
    pic = svg_plotting.plot_sweep(["gpipe", "1f1b", "interleaved"], p=8, v=2, costs=costs, ms=ms)  # lesson 03's call
    assert isinstance(pic, SvgPicture)
    series = _series(pic)
    assert set(series) == {"sim:gpipe:v=1", "sim:1f1b:v=1", "sim:interleaved:v=2", "formula:v=1", "formula:v=2"}
    for name, v in (("gpipe", 1), ("1f1b", 1), ("interleaved", 2)):
        tag, points = series[f"sim:{name}:v={v}"]
        assert tag == "path"
        expected = []
        for m in ms:
            try:
                sched = bk.schedule(name, 8, m, None if v == 1 else v)
            except ValueError:
                continue  # PyTorch's interleaving rule: listed under the chart
            expected.append((float(m), bk.simulate(sched, costs).bubble_ratio))
        assert points == expected
    for v in (1, 2):
        tag, points = series[f"formula:v={v}"]
        assert tag == "polyline" and points and all(y == bk.bubble_ratio(8, int(m), v) for m, y in points)
        assert all(m >= 8 for m, _ in points) or v == 1
    texts = _texts(pic)
    assert any(t.startswith("Bubble ratio against m, p = 8") for t in texts)
    assert "microbatches per step, m" in texts and "0%" in texts and [str(m) for m in ms] == [t for t in texts if t in {str(m) for m in ms}][:len(ms)]
    assert not any(t.startswith("not simulated") for t in texts)  # every m of lesson 03 is accepted
    refused = _texts(svg_plotting.plot_sweep("interleaved", 4, [4, 9], v=2))  # 9 % (9 // 4) != 0: PyTorch's rule
    assert any(t.startswith("not simulated: interleaved v=2 m=9") for t in refused)
    colors = {el.get("data-series"): el.get("stroke") for el in parse(pic).iter() if el.get("class") == "bk-series"}
    assert [colors[f"sim:{n}:v={v}"] for n, v in (("gpipe", 1), ("1f1b", 1), ("interleaved", 2))] == \
        list(diagram.SERIES_COLORS[:3])


def test_plot_sweep_svg_in_chinese_and_lesson_05s_call() -> None:
    from bubblekit.presentation import svg_plotting

    with using_language("zh"):
        pic = svg_plotting.plot_sweep(["gpipe", "1f1b", "interleaved"], p=4, ms=[2, 4, 8, 16, 32], v=2)
    texts = _texts(pic)
    assert "每步微批数 m" in texts and any(t.startswith("气泡比例随 m 的变化，p = 4") for t in texts)
    assert any("（模拟）" in t for t in texts) and any(t.startswith("闭式解") for t in texts)
    assert "气泡比例 = 空闲 ÷ (p × 单步耗时)" in texts
    tag, points = _series(pic)["sim:1f1b:v=1"]
    assert points == [(float(m), bk.simulate(bk.schedule("1f1b", 4, m)).bubble_ratio) for m in (2, 4, 8, 16, 32)]


def test_plot_memory_svg_draws_each_ranks_curve_and_its_peak() -> None:
    from bubblekit.presentation import svg_plotting

    costs = bk.preset("b=2f")
    runs = [bk.simulate(bk.schedule("gpipe", 4, 8), costs), bk.simulate(bk.schedule("1f1b", 4, 8), costs)]
    pic = svg_plotting.plot_memory(runs, cap=5)
    root = parse(pic)
    assert len([g for g in root.iter() if g.get("class") == "bk-chart"]) == 2
    polylines = [el for el in root.iter(f"{{{NS['s']}}}polyline") if el.get("class") == "bk-series"]
    assert len(polylines) == 2 * (4 + 1)  # a line per rank and the cap, per panel
    for k, r in enumerate(runs):
        mine = polylines[5 * k:5 * k + 5]
        for q in range(4):
            el = mine[q]
            assert el.get("data-series") == f"memory-rank-{q}" and el.get("stroke") == diagram.LINE_COLORS[q]
            pts = [tuple(float(x) for x in pair.split(",")) for pair in el.get("data-points").split()]
            curve = r.memory_curves[q]
            assert pts == [(float(t), float(v)) for t, v in curve] + [(float(r.t1), float(curve[-1][1]))]
            assert max(y for _, y in pts) == r.peak_activations[q]
        assert mine[4].get("data-series") == "cap"
    peaks = [el for el in root.iter(f"{{{NS['s']}}}path") if el.get("data-series") == "peaks"]
    assert len(peaks) == 2
    assert [float(pair.split(",")[1]) for pair in peaks[1].get("data-points").split()] == list(runs[1].peak_activations)
    texts = _texts(pic)
    assert "over the cap: rank 0, rank 1, rank 2, rank 3" in " ".join(texts) and "all ranks under the cap" in " ".join(texts)
    assert "rank 0: peak 4" in texts and "time (slots)" in texts and "cap 5" in texts
    with using_language("zh"):
        zh = _texts(svg_plotting.plot_memory(runs[1], ranks=[0, 3]))
    assert "rank 0：峰值 4" in zh and "rank 3：峰值 1" in zh and "占用显存（个微批的激活）" in zh
    assert any("显存峰值" in t for t in zh) and not any("rank 1：" in t for t in zh)


def test_the_charts_refuse_hostile_inputs_with_clear_errors() -> None:
    from bubblekit.presentation import svg_plotting

    r = bk.simulate(bk.schedule("1f1b", 4, 8))
    with pytest.raises(ValueError, match=r"ranks must be rank numbers in 0\.\.3, got 4"):
        svg_plotting.plot_memory(r, ranks=[4])
    with pytest.raises(TypeError, match="ranks must be None"):
        svg_plotting.plot_memory(r, ranks=2)
    with pytest.raises(ValueError, match="cap must be a positive number"):
        svg_plotting.plot_memory(r, cap=-1)
    with pytest.raises(TypeError, match="result_or_results must be a bubblekit Timeline"):
        svg_plotting.plot_memory("run")
    with pytest.raises(TypeError, match="legend must be True or False"):
        svg_plotting.plot_memory(r, legend="yes")
    with pytest.raises(TypeError, match="ax is a matplotlib Axes"):
        svg_plotting.plot_memory(r, ax=object())
    with pytest.raises(ValueError, match="ranks must name at least one rank"):
        svg_plotting.plot_memory(r, ranks=[])
    with pytest.raises(TypeError, match=r"ms must be a list of microbatch counts .* got 8"):
        svg_plotting.plot_sweep("1f1b", 4, 8)
    with pytest.raises(TypeError, match="schedule_names must be a schedule name or a list of them"):
        svg_plotting.plot_sweep(3, 4, [4])
    with pytest.raises(TypeError, match=r"v must be a whole number \(int\) >= 1, got '2'"):
        svg_plotting.plot_sweep("interleaved", 4, [4], v="2")
    with pytest.raises(ValueError, match="schedule_names must name at least one schedule"):
        svg_plotting.plot_sweep([], 4, [4])
    with pytest.raises(ValueError, match="ms must hold at least one microbatch count"):
        svg_plotting.plot_sweep("1f1b", 4, [])
    with pytest.raises((TypeError, ValueError), match=r"ms\[1\]"):
        svg_plotting.plot_sweep("1f1b", 4, [4, "8"])
    with pytest.raises((TypeError, ValueError), match="nosuch"):
        svg_plotting.plot_sweep("nosuch", 4, [4])
    with pytest.raises(TypeError, match="costs must be a bubblekit Costs"):
        svg_plotting.plot_sweep("1f1b", 4, [4], costs="uniform")
    with pytest.raises(TypeError, match="ax is a matplotlib Axes"):
        svg_plotting.plot_sweep("1f1b", 4, [4], ax=object())


def test_the_charts_numbers_are_matplotlibs() -> None:
    """plotting's plot_sweep and plot_memory draw the same numbers (both from diagram's pure functions)."""
    pytest.importorskip("matplotlib")
    from bubblekit.presentation import plotting, svg_plotting

    fig = plotting.plot_sweep(["gpipe", "1f1b", "interleaved"], p=4, ms=[2, 4, 8, 16, 32], v=2)
    pic = _series(svg_plotting.plot_sweep(["gpipe", "1f1b", "interleaved"], p=4, ms=[2, 4, 8, 16, 32], v=2))
    for line in fig.axes[0].get_lines():
        key = line.get_gid()
        assert [(float(x), float(y)) for x, y in zip(line.get_xdata(), line.get_ydata())] == pic[key][1], key
    r = bk.simulate(bk.schedule("1f1b", 4, 8), bk.preset("b=2f"))
    fig = plotting.plot_memory(r)
    pic = _series(svg_plotting.plot_memory(r))
    for line in fig.axes[0].get_lines():
        key = line.get_gid()
        assert [(float(x), float(y)) for x, y in zip(line.get_xdata(), line.get_ydata())] == pic[key][1], key
