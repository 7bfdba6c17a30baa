"""Lessons 00 to 05 run top to bottom without numpy and matplotlib, as in JupyterLite on Pyodide (issue 27).

The browser edition has IPython and ipywidgets but no numpy or matplotlib. The test builds such an
environment (``tests/_bare.py``: bubblekit, sympy, mpmath, IPython, ipywidgets and their pure-Python
dependencies, nothing else) and runs every code cell of ``notebooks/01_*.ipynb`` and
``notebooks/zh/01_*.ipynb`` (and of the English lessons 03, 04 and 05, whose sweeps and memory
curves are SVG charts there) in order in one IPython shell there, as a kernel would (magics, the
display of each cell's value, ``display(...)``). No cell may raise and no display may fail; the
pictures are SVG; the pipeline explorer draws SVG and its readouts equal the simulator's.

Lessons 00 and 02 (English and Chinese), exercise 02 and its solutions run there too, and every text
they show (what a cell prints, the text of each value and display but the pictures) is the saved
JupyterLab output, with no warning: lesson 02's critical path and hop arrows are drawn in SVG.
Lesson 00's environment report says the no-install edition is ready without matplotlib and numpy.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _bare import bare_environment, locate, run_bare

import bubblekit as bk

ROOT = Path(__file__).resolve().parents[1]
LESSONS = [next((ROOT / "notebooks").glob("01_*.ipynb")), next((ROOT / "notebooks" / "zh").glob("01_*.ipynb"))]
#: What the browser edition's kernel has besides bubblekit and sympy: IPython, ipywidgets and what they
#: import, all pure Python (matplotlib_inline too: IPython asks for it; it imports matplotlib only when used).
KERNEL = ("IPython", "traitlets", "ipywidgets", "comm", "pygments", "prompt_toolkit", "jedi", "parso", "stack_data",
          "executing", "asttokens", "pure_eval", "wcwidth", "decorator", "matplotlib_inline",
          "ipython_pygments_lexers", "typing_extensions")


@pytest.fixture(scope="module")
def lite_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv's python with the browser edition's packages: IPython and ipywidgets, no numpy, no matplotlib."""
    pytest.importorskip("IPython")
    pytest.importorskip("ipywidgets")
    packages = tuple(name for name in KERNEL if locate(name) is not None)  # decorator: only older IPythons
    return bare_environment(tmp_path_factory.mktemp("lite"), packages)


RUN_LESSON = """
    import contextlib, io, json, sys
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    problems, displayed, values, objects = [], [], {}, {}
    cell_id = None

    def showtraceback(*args, **kwargs):  # a cell's error, or a display formatter's: recorded, not printed
        etype, value, _ = sys.exc_info()
        problems.append(f"cell {cell_id}: {getattr(etype, '__name__', etype)}: {value}")

    shell.showtraceback = showtraceback
    shell.display_pub.publish = lambda data, metadata=None, **kw: displayed.append((cell_id, sorted(data)))
    notebook = json.load(open(NOTEBOOK, encoding="utf-8"))
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        cell_id = cell.get("id")
        source = "".join(cell["source"])
        with contextlib.redirect_stdout(io.StringIO()):
            result = shell.run_cell(source, store_history=True)
        if not result.success and not any(p.startswith(f"cell {cell_id}:") for p in problems):
            problems.append(f"cell {cell_id}: {result.error_before_exec or result.error_in_exec!r}")
        if result.result is not None:
            values[cell_id] = type(result.result).__name__
            objects[cell_id] = result.result
    bk = shell.user_ns["bk"]
    ex = objects.get("l01-27")  # the explorer cell's value
    readouts = {}
    if type(ex).__name__ == "PipelineExplorer":
        def read(explorer):
            r = explorer.result
            return {"picture": explorer.picture, "makespan": float(r.makespan), "bubble_ratio": float(r.bubble_ratio),
                    "bubble_overhead": float(r.bubble_overhead), "peak": [float(x) for x in r.peak_activations],
                    "cards": [explorer.readouts[k].value for k in ("bubble_ratio", "bubble_overhead", "makespan")],
                    "svg": explorer.svg_view.value.startswith("<svg"), "error": explorer.error}
        readouts["start"] = read(ex)
        ex.controls["m"].value = 8
        readouts["m8"] = read(ex)
        ex.controls["schedule"].value = "1f1b"
        readouts["1f1b"] = read(ex)
    print(json.dumps({"problems": problems, "displayed": displayed, "values": values, "readouts": readouts,
                      "plotting": bk.plotting.__name__,
                      "loaded": sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "matplotlib"))}))
"""


def test_the_environment_has_the_kernel_but_not_numpy_or_matplotlib(lite_python: Path) -> None:
    found = run_bare(lite_python, """
        import importlib.util, json
        print(json.dumps({name: importlib.util.find_spec(name) is not None
                          for name in ("numpy", "matplotlib", "PIL", "IPython", "ipywidgets", "comm")}))
    """)
    assert found == {"numpy": False, "matplotlib": False, "PIL": False, "IPython": True, "ipywidgets": True,
                     "comm": True}


@pytest.mark.parametrize("lesson", LESSONS, ids=["en", "zh"])
def test_lesson_01_runs_top_to_bottom_without_numpy_and_matplotlib(lite_python: Path, lesson: Path,
                                                                   tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key != "MPLBACKEND"}
    env["IPYTHONDIR"] = str(tmp_path / "ipython")  # IPython's profile folder: not the user's
    out = run_bare(lite_python, f"NOTEBOOK = {str(lesson)!r}\n" + textwrap.dedent(RUN_LESSON), timeout=120, env=env)
    assert out["problems"] == []
    assert out["loaded"] == [] and out["plotting"] == "bubblekit.presentation.svg_plotting"
    values = out["values"]
    assert values["l01-03"] == values["l01-11"] == "SvgPicture"  # the factory line and GPipe's diagram
    assert values["l01-27"] == "PipelineExplorer"
    animation = [kinds for cell, kinds in out["displayed"] if cell == "l01-17"]
    assert animation and "text/html" in animation[0]  # display(HTML(bk.plotting.pipeline_animation_html(...)))
    # the explorer's readouts are the simulator's, as it starts and after two moves
    costs = bk.preset("b=2f")
    for key, (name, m) in {"start": ("gpipe", 4), "m8": ("gpipe", 8), "1f1b": ("1f1b", 8)}.items():
        got = out["readouts"][key]
        ref = bk.simulate(bk.schedule(name, p=4, m=m), costs)
        assert got["picture"] == "svg" and got["svg"] and got["error"] is None, key
        assert got["makespan"] == float(ref.makespan), key
        assert got["bubble_ratio"] == pytest.approx(ref.bubble_ratio, abs=1e-15), key
        assert got["bubble_overhead"] == pytest.approx(ref.bubble_overhead, abs=1e-15), key
        assert got["peak"] == [float(x) for x in ref.peak_activations], key
        assert f"{ref.bubble_ratio:.4f}" in got["cards"][0] and f"{ref.bubble_overhead:.4f}" in got["cards"][1], key


def test_with_matplotlib_ipython_keeps_its_own_matplotlib_magic(tmp_path: Path) -> None:
    """``import bubblekit`` replaces ``%matplotlib`` only where matplotlib is missing (the lesson test above)."""
    pytest.importorskip("IPython")
    pytest.importorskip("matplotlib")
    code = textwrap.dedent("""
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
        before = shell.magics_manager.magics["line"]["matplotlib"]
        assert shell.run_cell("import bubblekit as bk").success
        print(shell.magics_manager.magics["line"]["matplotlib"] == before)
    """)
    env = {**os.environ, "IPYTHONDIR": str(tmp_path / "ipython")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "True"


def test_the_animation_honours_frames_and_interval() -> None:
    """The SVG animation (built here too: it is pure Python) has one frame per frame time, spaced by interval_ms."""
    import xml.etree.ElementTree as ET

    from bubblekit.presentation import diagram, svg_plotting

    r = bk.simulate(bk.schedule("gpipe", p=4, m=4), bk.preset("b=2f"))
    html = svg_plotting.pipeline_animation_html(r, frames=30, dpi=64, interval_ms=150)
    svg = html[html.index("<svg"):html.rindex("</svg>") + len("</svg>")]
    root = ET.fromstring(svg)
    frames = [g for g in root.iter("{http://www.w3.org/2000/svg}g") if "bk-frame" in (g.get("class") or "").split()]
    times = diagram.frame_times(0.0, float(r.makespan), 30)
    assert len(frames) == len(times) == 22  # makespan 21 slots: one frame a slot and the end
    assert [g.get("visibility") for g in frames] == ["hidden"] * 21 + [None]  # without CSS: the whole step shows
    delays = [float(x) for x in re.findall(r"bk-frame-\d+ \{ animation-delay: ([\d.]+)ms; \}", svg)]
    assert delays == [150.0 * k for k in range(22)]
    readouts = ["".join(t.itertext()).replace("\u00a0", " ") for g in frames
                for t in g.iter("{http://www.w3.org/2000/svg}text")]
    assert readouts[0].startswith("t =  0 of 21 slots") and readouts[-1].endswith("bubble so far:  42.9%")
    def running(t: float) -> int:
        return sum(1 for rank in range(r.p) for s, e in zip(*r.arrays(rank)[:2]) if s <= t < e)

    assert readouts == [diagram.animation_readout(r, t, times, running(t)) for t in times]
    outlined = [sum(1 for x in g.iter("{http://www.w3.org/2000/svg}rect") if x.get("class") == "bk-running")
                for g in frames]
    assert outlined == [running(t) for t in times]
    with pytest.raises(ValueError, match="frames"):
        svg_plotting.pipeline_animation_html(r, frames=1)
    with pytest.raises(ValueError, match="interval_ms"):
        svg_plotting.pipeline_animation_html(r, interval_ms=0)


def test_the_svg_animation_has_matplotlibs_frames_and_readouts() -> None:
    pytest.importorskip("matplotlib")
    from bubblekit.presentation import plotting, svg_plotting

    r = bk.simulate(bk.schedule("1f1b", p=3, m=5), bk.Costs(f=1, b=2))
    anim = plotting.animate_pipeline(r, frames=12, dpi=40)
    html = svg_plotting.pipeline_animation_html(r, frames=12, dpi=40)
    shown = [x.replace("&#160;", " ").replace("\u00a0", " ")
             for x in re.findall(r'<text class="bk-readout"[^>]*>([^<]*)</text>', html)]
    assert shown == [anim.readout(k) for k in range(len(anim.frame_times))]
    anim._draw_was_started = True  # nothing to render: keep matplotlib from warning about an unused animation


def test_the_stand_in_has_every_name_of_plotting() -> None:
    """Each public name of plotting is in the stand-in: the same object, an SVG version, or a clear error."""
    pytest.importorskip("matplotlib")
    from bubblekit.presentation import diagram, plotting, svg_plotting

    svg_versions = {"use_course_style", "plot_pipeline", "pipeline_animation_html", "plot_memory", "plot_sweep"}
    for name in plotting.__all__:
        if name in svg_versions:
            assert callable(getattr(svg_plotting, name)), name
            continue
        try:
            value = getattr(svg_plotting, name)
        except AttributeError as error:  # a constant of matplotlib's drawing only
            assert f"bk.plotting.{name}" in str(error) and "matplotlib" in str(error), name
            assert not callable(getattr(plotting, name)), name
            continue
        if getattr(diagram, name, None) is value or name == "time_label":
            assert value is getattr(plotting, name), name
            continue
        with pytest.raises(ModuleNotFoundError, match=rf"bk\.plotting\.{name} needs matplotlib"):
            value()
    assert json.dumps(svg_plotting.use_course_style()) == "null"


LESSONS_03_05 = [next((ROOT / "notebooks").glob(f"{n}_*.ipynb")) for n in ("03", "04", "05")]


@pytest.mark.parametrize("lesson", LESSONS_03_05, ids=["03", "04", "05"])
def test_lessons_03_to_05_run_without_numpy_and_matplotlib(lite_python: Path, lesson: Path, tmp_path: Path) -> None:
    """Every code cell of lessons 03, 04 and 05 runs in the browser edition's environment: their
    sweeps (``bk.plotting.plot_sweep``) and memory curves (``bk.plotting.plot_memory``) are SVG charts."""
    env = {key: value for key, value in os.environ.items() if key != "MPLBACKEND"}
    env["IPYTHONDIR"] = str(tmp_path / "ipython")
    out = run_bare(lite_python, f"NOTEBOOK = {str(lesson)!r}\n" + textwrap.dedent(RUN_LESSON), timeout=280, env=env)
    assert out["problems"] == []
    assert out["loaded"] == [] and out["plotting"] == "bubblekit.presentation.svg_plotting"
    if lesson.name.startswith("04"):
        shown = [kinds for cell, kinds in out["displayed"] if cell == "4680d729"]  # display(plot_memory(runs), ...)
        assert shown and "image/svg+xml" in shown[0]
    else:  # the cell of bk.plotting.plot_sweep(...)
        assert out["values"]["l03-41" if lesson.name.startswith("03") else "b8dcd8c2"] == "SvgPicture"


#: Lessons 00 and 02, exercise 02 and its solutions, both editions (issue 27: the browser edition's lessons 00-05).
NOTEBOOKS_00_02 = {f"{kind}{lang}": ROOT / folder / lang_dir / name
                   for kind, folder, name in (("00", "notebooks", "00_start_here.ipynb"),
                                              ("02", "notebooks", "02_why_bubbles_appear.ipynb"),
                                              ("ex02", "exercises", "02_why_bubbles_appear.ipynb"),
                                              ("sol02", "solutions", "02_why_bubbles_appear.ipynb"))
                   for lang, lang_dir in (("-en", ""), ("-zh", "zh"))}

RUN_TEXTS = """
    import contextlib, io, json, sys, warnings
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    cells, problems, svgs = {}, [], {}
    cell_id = None
    PICTURES = ("image/png", "image/svg+xml")

    def record(data):  # a value or a display: its text, or that it is a picture
        kinds = sorted(data)
        cells[cell_id]["shown"].append("<picture>" if any(k in PICTURES for k in kinds) else data.get("text/plain", ""))
        if "image/svg+xml" in data:
            svgs.setdefault(cell_id, []).append(data["image/svg+xml"])

    def showtraceback(*args, **kwargs):
        etype, value, _ = sys.exc_info()
        problems.append(f"cell {cell_id}: {getattr(etype, '__name__', etype)}: {value}")

    shell.showtraceback = showtraceback
    shell.display_pub.publish = lambda data, metadata=None, **kw: record(data)
    shell.displayhook.write_output_prompt = lambda: None
    shell.displayhook.write_format_data = lambda data, metadata=None: record(data)
    notebook = json.load(open(NOTEBOOK, encoding="utf-8"))
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        cell_id = cell.get("id")
        cells[cell_id] = {"shown": []}
        out = io.StringIO()
        with contextlib.redirect_stdout(out), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = shell.run_cell("".join(cell["source"]), store_history=True)
        cells[cell_id]["stdout"] = out.getvalue()
        cells[cell_id]["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
        if not result.success and not any(p.startswith(f"cell {cell_id}:") for p in problems):
            problems.append(f"cell {cell_id}: {result.error_before_exec or result.error_in_exec!r}")
    explorer = next((v for v in shell.user_ns.values() if type(v).__name__ == "PipelineExplorer"), None)
    if explorer is None:
        explorer = shell.user_ns.get("_")
    print(json.dumps({"cells": cells, "problems": problems, "svgs": svgs,
                      "explorer": [explorer.picture, explorer.error, explorer.svg_view.value.startswith("<svg")]
                                  if type(explorer).__name__ == "PipelineExplorer" else None,
                      "loaded": sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "matplotlib"))}))
"""


def _saved_texts(cell: dict) -> dict:
    """What the saved (JupyterLab) outputs of ``cell`` show as text: printed text, and each value's and display's text."""
    shown, stdout = [], ""
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream" and output["name"] == "stdout":
            stdout += "".join(output["text"])
        elif output["output_type"] in ("display_data", "execute_result"):
            data = output["data"]
            text = data.get("text/plain", "")
            shown.append("<picture>" if any(k in data for k in ("image/png", "image/svg+xml"))
                         else "".join(text) if isinstance(text, list) else text)
    return {"stdout": stdout, "shown": shown}


@pytest.mark.parametrize("name", list(NOTEBOOKS_00_02))
def test_lessons_00_and_02_show_the_same_texts_without_numpy_and_matplotlib(lite_python: Path, name: str,
                                                                            tmp_path: Path) -> None:
    notebook = NOTEBOOKS_00_02[name]
    env = {key: value for key, value in os.environ.items() if key != "MPLBACKEND"}
    env["IPYTHONDIR"] = str(tmp_path / "ipython")
    out = run_bare(lite_python, f"NOTEBOOK = {str(notebook)!r}\n" + textwrap.dedent(RUN_TEXTS), timeout=280, env=env)
    assert out["problems"] == [] and out["loaded"] == []
    cells = out["cells"]
    assert {cell: got["warnings"] for cell, got in cells.items() if got["warnings"]} == {}
    saved = {c["id"]: c for c in json.loads(notebook.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"}
    executed = any(c.get("outputs") for c in saved.values())  # the exercises are saved without outputs
    assert executed or name.startswith("ex")
    for cell_id, cell in saved.items():
        if cell_id == "l00-07":  # the environment report: this machine's, not the saved one (below)
            continue
        if executed:
            assert {"stdout": cells[cell_id]["stdout"], "shown": cells[cell_id]["shown"]} == _saved_texts(cell), cell_id
    zh = name.endswith("-zh")
    if name.startswith("00"):
        report = cells["l00-07"]["shown"][0]
        assert ("免安装版的环境已就绪" if zh else "environment ready for the no-install edition") in report, report
        assert "✗" not in report and ("免安装版不需要" if zh else "not needed in the no-install edition") in report
        assert cells["l00-09"]["shown"] == ["<picture>"] and "l00-09" in out["svgs"]
    if name.startswith("02"):
        assert 'class="bk-comm-arrow"' in out["svgs"]["l02-15"][0]  # plot_pipeline(hops, comm_arrows=True)
        assert 'class="bk-critical-path"' in out["svgs"]["l02-21"][0]  # plot_pipeline(uneven, critical_path=True)
        assert out["explorer"] == ["svg", None, True]
    if name[:-3] in ("ex02", "sol02"):
        assert 'class="bk-critical-path"' in out["svgs"]["s02-11"][0]
