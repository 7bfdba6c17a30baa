"""The three classroom pages (apps/, apps/zh/) run without numpy and matplotlib, as in JupyterLite on Pyodide (issue 27).

The browser edition has IPython and ipywidgets but no numpy or matplotlib. The test builds such an
environment (``tests/_bare.py``, the packages of ``tests/test_lite_lesson01.py``'s ``KERNEL``) and runs
every code cell of ``apps/explorer.ipynb``, ``apps/builder.ipynb`` and ``apps/frontier.ipynb`` and of
their Chinese editions in order in one IPython shell there, as a kernel would. No cell may raise; every
explorer draws SVG (``picture="svg"``, the default there) and its still picture (``text/html``) is that
SVG; after a control moves, its readouts are the simulator's (``bk.simulate`` in this process).

The SVG pictures of the schedule builder and the frontier explorer are also checked here, in the full
environment (``picture="svg"``): the same numbers as the simulator, the frontier's points outlined,
hostile ``picture=`` values refused with a clear error.
"""

from __future__ import annotations

import json
import os
import re
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from _bare import bare_environment, locate, run_bare
from test_lite_lesson01 import KERNEL

import bubblekit as bk
from bubblekit.schedules import REGISTRY, display_name

ROOT = Path(__file__).resolve().parents[1]
APPS = [ROOT / "apps" / sub / f"{name}.ipynb" for sub in ("", "zh") for name in ("explorer", "builder", "frontier")]
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def lite_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv's python with the browser edition's packages: IPython and ipywidgets, no numpy, no matplotlib."""
    pytest.importorskip("IPython")
    pytest.importorskip("ipywidgets")
    packages = tuple(name for name in KERNEL if locate(name) is not None)
    return bare_environment(tmp_path_factory.mktemp("lite_apps"), packages)


RUN_APP = """
    import contextlib, io, json, sys
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    problems, objects = [], {}
    cell_id = None

    def showtraceback(*args, **kwargs):
        etype, value, _ = sys.exc_info()
        problems.append(f"cell {cell_id}: {getattr(etype, '__name__', etype)}: {value}")

    shell.showtraceback = showtraceback
    notebook = json.load(open(NOTEBOOK, encoding="utf-8"))
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        cell_id = cell.get("id")
        with contextlib.redirect_stdout(io.StringIO()):
            result = shell.run_cell("".join(cell["source"]), store_history=True)
        if not result.success and not any(p.startswith(f"cell {cell_id}:") for p in problems):
            problems.append(f"cell {cell_id}: {result.error_before_exec or result.error_in_exec!r}")
        if result.result is not None:
            objects[cell_id] = result.result

    def common(x):
        bundle = x._repr_mimebundle_()
        return {"picture": x.picture, "figure": x.figure is None, "error": x.error,
                "svg": x.svg is not None and x.svg_view.value == x.svg.svg and x.svg.svg.startswith("<svg"),
                "visible": x.svg_view.layout.visibility, "still": "<svg" in bundle["text/html"]
                and "data:image/png" not in bundle["text/html"],
                "widget": "application/vnd.jupyter.widget-view+json" in bundle}

    def pipeline(x):
        r = x.result
        return {**common(x), "name": r.schedule.name, "m": r.schedule.m, "makespan": float(r.makespan),
                "bubble_ratio": r.bubble_ratio, "card": x.readouts["bubble_ratio"].value}

    def builder(x):
        r = x.result
        out = common(x)
        if r is not None:
            out.update(p=r.schedule.p, m=r.schedule.m, makespan=float(r.makespan), bubble_ratio=r.bubble_ratio,
                       peak=[float(v) for v in r.peak_activations], card=x.readouts["bubble_ratio"].value,
                       verdict=x.score.verdict, message=x.readouts["message"].value)
        else:
            out.update(message=x.readouts["message"].value)
        return out

    def frontier(x):
        return {**common(x), "rows": [{k: (v if isinstance(v, str) else float(v)) for k, v in row.items()}
                                      for row in x.table], "frontier": x.frontier, "svg_text": x.svg.svg,
                "table": x.readouts["table"].value}

    states = {}
    for cid, x in objects.items():
        kind = type(x).__name__
        if kind == "PipelineExplorer":
            states[cid] = {"kind": kind, "start": pipeline(x)}
            x.controls["m"].value = 12
            states[cid]["moved"] = pipeline(x)
        elif kind == "ScheduleBuilder":
            states[cid] = {"kind": kind, "start": builder(x)}
            x.load("1f1b")
            states[cid]["moved"] = builder(x)
            x.controls["text"].value = "rank 0: 0F0 0B0"
            states[cid]["illegal"] = builder(x)
        elif kind == "FrontierExplorer":
            states[cid] = {"kind": kind, "start": frontier(x)}
            x.controls["m"].value = 12
            states[cid]["moved"] = frontier(x)
    print(json.dumps({"problems": problems, "states": states,
                      "loaded": sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "matplotlib"))}))
"""


def _simulated(name: str, p: int, m: int, v: int, preset: str) -> Any:
    return bk.simulate(bk.schedule(name, p, m, v if REGISTRY[name].chunks == "many" else None), bk.preset(preset))


def _check_frontier(state: dict[str, Any], m: int) -> None:
    """The frontier explorer's table and SVG points are the simulator's at p = 4, m, v = 2, costs f=i=w."""
    by_name: dict[str, str] = {}
    before = bk.get_language()
    try:
        for lang in ("en", "zh"):  # the table names schedules in the page's language
            bk.set_language(lang)
            by_name.update({display_name(n): n for n in REGISTRY})
    finally:
        bk.set_language(before)
    rows = state["rows"]
    assert len(rows) >= 8, rows
    root = ET.fromstring(state["svg_text"])
    points = {g.get("data-series"): g.get("data-points") for g in root.iter(f"{SVG}path")
              if g.get("class") == "bk-series"}
    for row in rows:
        ref = _simulated(by_name[row["schedule"]], 4, m, 2, "f=i=w")
        assert row["makespan"] == float(ref.makespan), row
        assert row["bubble_ratio"] == pytest.approx(ref.bubble_ratio, abs=1e-15), row
        assert row["peak"] == float(ref.max_peak_activations), row
        x, y = (float(t) for t in points[f"point:{row['schedule']}"].split(","))
        assert (x, y) == (pytest.approx(float(ref.max_peak_activations)), pytest.approx(ref.bubble_ratio)), row
        assert f"{ref.bubble_ratio:.1%}" in state["table"]
    assert state["frontier"] and set(state["frontier"]) <= {r["schedule"] for r in rows}


@pytest.mark.parametrize("app", APPS, ids=[f"{p.parent.name}/{p.stem}".replace("apps/", "en/") for p in APPS])
def test_a_classroom_page_runs_without_numpy_and_matplotlib(lite_python: Path, app: Path, tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key != "MPLBACKEND"}
    env["IPYTHONDIR"] = str(tmp_path / "ipython")
    out = run_bare(lite_python, f"NOTEBOOK = {str(app)!r}\n" + textwrap.dedent(RUN_APP), timeout=280, env=env)
    assert out["problems"] == []
    assert out["loaded"] == []
    states = out["states"]
    kinds = sorted(s["kind"] for s in states.values())
    expected = {"explorer": ["PipelineExplorer", "ScheduleBuilder"], "builder": ["ScheduleBuilder"],
                "frontier": ["FrontierExplorer"]}[app.stem]
    assert kinds == expected
    for cid, state in states.items():
        for key, got in state.items():
            if key == "kind":
                continue
            assert got["picture"] == "svg" and got["figure"] and got["widget"], (cid, key)
            if key == "illegal":
                assert got["error"] and got["visible"] == "hidden", (cid, got)  # the message says why
                continue
            assert got["error"] is None and got["svg"] and got["visible"] == "visible" and got["still"], (cid, key)
        if state["kind"] == "PipelineExplorer":  # apps/explorer: 1F1B, p = 4, m = 8, b = 2f; then m = 12
            for key, m in (("start", 8), ("moved", 12)):
                got, ref = state[key], _simulated("1f1b", 4, m, 2, "b=2f")
                assert (got["name"], got["m"], got["makespan"]) == ("1f1b", m, float(ref.makespan)), key
                assert got["bubble_ratio"] == pytest.approx(ref.bubble_ratio, abs=1e-15)
                assert f"{ref.bubble_ratio:.4f}" in got["card"]
        elif state["kind"] == "ScheduleBuilder":  # p = 4, m = 8: the GPipe template, then 1F1B's
            for key, name in (("start", "gpipe"), ("moved", "1f1b")):
                got, ref = state[key], _simulated(name, 4, 8, 1, "b=2f")
                assert (got["p"], got["m"], got["makespan"]) == (4, 8, float(ref.makespan)), key
                assert got["bubble_ratio"] == pytest.approx(ref.bubble_ratio, abs=1e-15)
                assert got["peak"] == [float(x) for x in ref.peak_activations]
                assert f"{ref.bubble_ratio:.4f}" in got["card"]
            assert state["moved"]["verdict"] and "✗" in state["illegal"]["message"]
        else:  # apps/frontier: p = 4, m = 8, v = 2, f=i=w; then m = 12
            _check_frontier(state["start"], 8)
            _check_frontier(state["moved"], 12)
            assert state["start"]["rows"] != state["moved"]["rows"]


# ---------------------------------------------------------------------------- the SVG pictures, here


def test_the_builder_draws_the_simulated_schedule_as_svg() -> None:
    b = bk.explorers.schedule_builder(p=3, m=5, picture="svg")
    assert b.figure is None and b.picture == "svg"
    root = ET.fromstring(b.svg_view.value)
    boxes = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "bk-action"]
    assert len(boxes) == b.result.schedule.n_actions == 3 * 5 * 2  # one box per F and B
    ref = bk.simulate(bk.schedule("gpipe", 3, 5), bk.preset("b=2f"))
    assert b.result.makespan == ref.makespan and f"{ref.bubble_ratio:.4f}" in b.readouts["bubble_ratio"].value
    assert "your schedule (p=3, m=5" in "".join(root.itertext())
    b.controls["text"].value = "rank 0: 0F0 0F0"  # illegal: the picture hides, the message says why
    assert b.error and b.svg_view.layout.visibility == "hidden" and b.score is None
    b.load("1f1b")
    assert b.error is None and b.svg_view.layout.visibility == "visible"
    assert "<svg" in b._repr_mimebundle_()["text/html"]


def test_the_frontier_explorer_draws_its_points_and_frontier_as_svg() -> None:
    f = bk.explorers.frontier_explorer(p=4, m=8, v=2, picture="svg")
    assert f.figure is None and f.picture == "svg"
    root = ET.fromstring(f.svg_view.value)
    series = {e.get("data-series"): e for e in root.iter() if e.get("class") == "bk-series"}
    rows = list(f.table)
    assert set(series) == {"frontier"} | {f"point:{row['schedule']}" for row in rows}
    for row in rows:
        point = series[f"point:{row['schedule']}"]
        assert point.get("data-points") == f"{float(row['peak'])!r},{float(row['bubble_ratio'])!r}"
        on = row["schedule"] in f.frontier
        assert (point.get("stroke") == "#000000") == on, row  # the frontier's points are outlined black
    from bubblekit.presentation import explorers

    points = [(float(r["peak"]), float(r["bubble_ratio"])) for r in rows]
    chart = explorers._frontier_chart(rows, points, [r["schedule"] in f.frontier for r in rows], "t")
    looks = [(s.color, s.marker) for s in chart.series if s.marker is not None]
    assert len(looks) == len(set(looks)) == len(rows) == len(REGISTRY)  # no two schedules look alike
    f.controls["m"].value = 9  # two schedules refuse m = 9: they are listed, not drawn
    assert f.skipped and not any(f'data-series="point:{name}"' in f.svg_view.value for name in f.skipped)
    assert "<svg" in f._repr_mimebundle_()["text/html"]


@pytest.mark.parametrize("make", [bk.explorers.schedule_builder, bk.explorers.frontier_explorer,
                                  bk.explorers.pipeline_explorer])
@pytest.mark.parametrize("bad", ["gif", "SVG", "", 3, True, b"svg"])
def test_picture_must_be_png_or_svg(make: Any, bad: Any) -> None:
    with pytest.raises((TypeError, ValueError), match=r"picture must be one of \['png', 'svg'\], got"):
        make(picture=bad)


@pytest.mark.parametrize("edge", ["black", '#000" onload="x', 0, "#12345"])
def test_a_chart_series_edge_is_a_hex_colour(edge: Any) -> None:
    from bubblekit.presentation.diagram import ChartSeries

    with pytest.raises(ValueError, match=r"edge must be None or a colour written #RRGGBB"):
        ChartSeries("k", "label", (1.0,), (0.5,), "#0072B2", marker=0, edge=edge)
    assert ChartSeries("k", "label", (1.0,), (0.5,), "#0072B2", marker=0, edge="#000000").edge == "#000000"


def test_the_frontier_svg_has_no_markup_from_schedule_names() -> None:
    """A schedule's name reaches the SVG escaped (the names come from the registry and the catalogue)."""
    f = bk.explorers.frontier_explorer(p=2, m=4, v=2, picture="svg")
    ET.fromstring(f.svg.svg)  # well-formed XML
    assert re.search(r"<script", f.svg.svg) is None
    json.dumps(f.frontier)
