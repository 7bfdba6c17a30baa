"""bubblekit's core runs in an environment without numpy, matplotlib and ipywidgets (issue 27).

The no-install (JupyterLite) edition runs on Pyodide, where only pure-Python wheels are shipped:
everything but the pictures must import and work on sympy alone. The test builds a virtual
environment that truly lacks the plotting stack (``python -m venv --without-pip`` and a path
file naming only bubblekit, sympy and mpmath: ``tests/_bare.py``) and runs the core there in a
fresh interpreter: no network, nothing installed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from _bare import bare_environment, run_bare

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PLOTS = ("matplotlib", "numpy", "ipywidgets")


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv's python that sees bubblekit, sympy and mpmath, and nothing else installed."""
    return bare_environment(tmp_path_factory.mktemp("pure"))


def test_the_environment_really_lacks_the_plotting_stack(bare_python: Path) -> None:
    found = run_bare(bare_python, f"""
        import importlib.util, json
        print(json.dumps({{name: importlib.util.find_spec(name) is not None for name in {PLOTS!r}}}))
    """)
    assert found == {name: False for name in PLOTS}


def test_the_issue_example_and_the_core_work_without_numpy_and_matplotlib(bare_python: Path) -> None:
    out = run_bare(bare_python, """
        import json, sys
        import bubblekit as bk
        r = bk.simulate(bk.schedule("zbv", 4, 8))
        one = bk.simulate(bk.schedule("1f1b", 4, 8), bk.Costs(f=1, b=2))
        print(json.dumps({
            "zbv_bubble": float(r.bubble_ratio),
            "one_makespan": float(one.makespan),
            "closed_form": float(bk.bubble_ratio(4, 8)),
            "loaded": sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "matplotlib", "ipywidgets")),
        }))
    """)
    assert out["loaded"] == []
    here_zbv = bk_simulate_here("zbv")
    assert out["zbv_bubble"] == pytest.approx(here_zbv)
    assert out["one_makespan"] == pytest.approx((8 + 4 - 1) * 3)  # (m + p - 1)(f + b) for 1F1B
    assert out["closed_form"] == pytest.approx(3 / 11)  # (p - 1) / (m + p - 1)


def bk_simulate_here(name: str) -> float:
    import bubblekit as bk

    return float(bk.simulate(bk.schedule(name, 4, 8)).bubble_ratio)


def test_every_layer_but_the_pictures_imports_and_the_checks_grade(bare_python: Path) -> None:
    out = run_bare(bare_python, """
        import json
        import bubblekit as bk
        ok, failed = [], {}
        for name in ("symbolic", "memory", "traces", "calibrate", "planner", "search", "balance", "checks",
                     "published", "demo", "factory", "paths", "workspace", "envcheck", "lab"):
            try:
                getattr(bk, name)
                ok.append(name)
            except Exception as error:  # the report names what failed
                failed[name] = f"{type(error).__name__}: {error}"
        verdict = bk.check("01.1", 3)
        makespan = bk.symbolic.makespan_1f1b()
        print(json.dumps({"ok": ok, "failed": failed, "verdict": str(verdict),
                          "makespan": str(bk.symbolic.evaluate(makespan, p=4, m=8, t_f=1, t_b=2, c=0))}))
    """)
    assert out["failed"] == {}
    assert "01.1" in out["verdict"]
    assert out["makespan"] == "33"


def test_the_svg_picture_draws_without_numpy_and_matplotlib(bare_python: Path) -> None:
    """The browser edition's pictures: bk.plot_pipeline falls back to the pure-Python SVG diagram."""
    out = run_bare(bare_python, """
        import json, sys, xml.etree.ElementTree as ET
        import bubblekit as bk
        r = bk.simulate(bk.schedule("1f1b", 4, 8))
        picture = bk.plot_pipeline(r)
        boxes = sum(1 for e in ET.fromstring(picture.svg).iter() if e.get("class") == "bk-action")
        bk.set_language("zh")
        zh = bk.svg.pipeline_svg(r).svg
        print(json.dumps({
            "type": type(picture).__name__, "boxes": boxes, "zh": "气泡比例" in zh,
            "same": bk.plot_pipeline is bk.svg.plot_pipeline_svg,
            "loaded": sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "matplotlib", "ipywidgets")),
        }))
    """)
    assert out == {"type": "SvgPicture", "boxes": 64, "zh": True, "same": True, "loaded": []}


@pytest.mark.parametrize("module, package", [("explorers", "ipywidgets"), ("fonts", "matplotlib")])
@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_picture_module_says_how_to_get_its_packages(bare_python: Path, module: str, package: str,
                                                       language: str) -> None:
    out = run_bare(bare_python, f"""
        import json
        import bubblekit as bk
        bk.set_language({language!r})
        try:
            getattr(bk, {module!r})
            message = None
        except ModuleNotFoundError as error:
            message = str(error)
        try:
            from bubblekit import {module}
            second = None
        except ModuleNotFoundError as error:
            second = str(error)
        print(json.dumps({{"message": message, "second": second}}))
    """)
    for message in (out["message"], out["second"]):
        assert message is not None
        assert f"bk.{module}" in message and package in message and 'bubblekit[plots]' in message


@pytest.mark.parametrize("language", ["en", "zh"])
def test_plotting_is_the_svg_stand_in_and_the_other_pictures_say_they_need_matplotlib(bare_python: Path,
                                                                                       language: str) -> None:
    """Without matplotlib, bk.plotting draws the pipeline diagram, its animation, the memory curves and the
    bubble sweep as SVG; every other picture function names itself and matplotlib (never an AttributeError)."""
    out = run_bare(bare_python, f"""
        import json
        import bubblekit as bk
        from bubblekit import plotting
        import bubblekit.plotting as short
        bk.set_language({language!r})
        r = bk.simulate(bk.schedule("1f1b", 2, 4))
        errors = {{}}
        for name in ("plot_frontier", "animate_pipeline", "save_animation_gif", "placement_strip_width"):
            try:
                getattr(bk.plotting, name)(r)
            except ModuleNotFoundError as error:
                errors[name] = [type(error).__name__, str(error), error.name]
            except Exception as error:
                errors[name] = [type(error).__name__, str(error), None]
        print(json.dumps({{
            "module": bk.plotting.__name__, "same": plotting is bk.plotting is short,
            "style": bk.plotting.use_course_style(), "picture": type(bk.plotting.plot_pipeline(r)).__name__,
            "animation": "<svg" in bk.plotting.pipeline_animation_html(r, frames=5),
            "palette": bk.plotting.PALETTE == bk.svg.diagram.PALETTE, "errors": errors,
            "memory": bk.plotting.plot_memory(r).svg, "sweep": bk.plotting.plot_sweep(["1f1b"], 2, [2, 4]).svg,
        }}))
    """)
    assert out["module"] == "bubblekit.presentation.svg_plotting" and out["same"]
    assert out["style"] is None and out["picture"] == "SvgPicture" and out["animation"] and out["palette"]
    assert len(out["errors"]) == 4
    assert out["memory"].startswith("<svg") and out["sweep"].startswith("<svg")
    assert ("占用显存（个微批的激活）" in out["memory"] and "每步微批数 m" in out["sweep"]) == (language == "zh")
    for name, (kind, message, missing) in out["errors"].items():
        assert kind == "ModuleNotFoundError" and missing == "matplotlib", (name, kind, message)
        assert f"bk.plotting.{name}" in message and "matplotlib" in message and "JupyterLab" in message
        assert ("浏览器版" in message) == (language == "zh")


def test_pip_metadata_asks_only_for_sympy_and_the_course_gets_the_pictures() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = [req.split(">")[0].split("=")[0].split("[")[0].strip() for req in project["dependencies"]]
    assert names == ["sympy"]
    extras = project["optional-dependencies"]
    for extra in ("plots", "course"):
        got = {req.split(">")[0].strip() for req in extras[extra]}
        assert set(PLOTS) <= got, f"extra {extra!r} lacks {set(PLOTS) - got}"


def test_the_core_modules_never_import_the_plotting_stack() -> None:
    """Only presentation/ may import numpy, matplotlib or ipywidgets at module level."""
    offenders = []
    for path in sorted((ROOT / "bubblekit").rglob("*.py")):
        rel = path.relative_to(ROOT / "bubblekit")
        if rel.parts[0] == "presentation":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith(("import ", "from ")) and line.split()[1].split(".")[0] in PLOTS:
                offenders.append(f"{rel}:{number}: {line}")
    assert offenders == []


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
