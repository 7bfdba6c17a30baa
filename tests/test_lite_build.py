"""The no-install edition (issue 27): ``scripts/build_lite.py`` and the JupyterLite site it builds.

* The builder's pure functions run everywhere, with no network and no JupyterLite: reading a
  wheel, trimming pyodide-lock.json to exactly the shipped wheels (markers evaluated for
  Pyodide, the kernel's own wheels left out, a missing dependency an error), preparing a lesson
  (the storage note and the install cell first, the Pyodide kernel, the lesson's cells as they
  were), lesson 06's page and the site's configuration.
* The built site (``_site/``, from ``bash course.sh lite``) is checked where it exists: its
  jupyter-lite.json points the kernel at its own Pyodide and lock, every wheel of the lock is
  there with its hash, and each notebook starts with the two cells.
* A build (slow: a minute, and PyPI/npm the first time) runs only where the ``lite`` extra is
  installed; otherwise it is skipped and says why.
* The browser test (marker ``browser``) serves the site on 127.0.0.1, blocks every request to
  another host, opens lesson 01 in JupyterLite in Debian's Chromium (never ``playwright
  install``), runs the first cell with ``bk.simulate(bk.schedule("1f1b", 4, 8)).bubble_ratio``
  added and checks the printed number; it prints the time from opening the page to the result.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import importlib.util
import json
import os
import shutil
import threading
import time
import urllib.parse
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from _scripts import load_script

ROOT = Path(__file__).resolve().parent.parent
SITE = Path(os.environ.get("BUBBLEKIT_LITE_SITE", ROOT / "_site"))
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = Path(os.environ.get("BUBBLEKIT_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
FIRST_RESULT_MS = 300_000  # Pyodide starts, installs IPython and bubblekit, runs the cell (busy machine)

lite = load_script("build_lite_under_test", ROOT / "scripts" / "build_lite.py")

LITE_EXTRA = all(importlib.util.find_spec(m) is not None
                 for m in ("jupyterlite_core", "jupyterlite_pyodide_kernel", "jupyter_server", "packaging"))
NO_EXTRA = ("the lite extra is not installed (jupyterlite-core, jupyterlite-pyodide-kernel ...): "
            "`bash course.sh lite` installs it and builds the site")
needs_packaging = pytest.mark.skipif(importlib.util.find_spec("packaging") is None,
                                     reason="the 'packaging' module (in the lite extra) reads Requires-Dist markers")


# ---------------------------------------------------------------------------- pure functions


def make_wheel(folder: Path, name: str, version: str, requires: Sequence[str] = (), modules: Sequence[str] | None = None) -> Path:
    """A small wheel: METADATA with ``requires``, one package per module."""
    dist = name.replace("-", "_")
    path = folder / f"{dist}-{version}-py3-none-any.whl"
    meta = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", *[f"Requires-Dist: {r}" for r in requires]]
    with zipfile.ZipFile(path, "w") as whl:
        for mod in modules if modules is not None else [dist]:
            whl.writestr(f"{mod}/__init__.py", "")
        whl.writestr(f"{dist}-{version}.dist-info/METADATA", "\n".join(meta) + "\n")
        whl.writestr(f"{dist}-{version}.dist-info/RECORD", "")
    return path


UPSTREAM = {
    "info": {"abi_version": "2026_0", "arch": "wasm32", "platform": "emscripten_5_0_3", "python": "3.14.2"},
    "packages": {
        "numpy": {"name": "numpy", "version": "2.0", "file_name": "numpy-2.0-cp314-pyemscripten_wasm32.whl",
                  "sha256": "0" * 64, "depends": [], "imports": ["numpy"], "package_type": "package"},
        "ipython": {"name": "ipython", "version": "9.12.0", "file_name": "ipython-9.12.0-py3-none-any.whl",
                    "sha256": "1" * 64, "depends": [], "imports": ["IPython"], "package_type": "package"},
    },
}


def test_read_wheel_name_version_hash_imports(tmp_path: Path) -> None:
    path = make_wheel(tmp_path, "Prompt_Toolkit", "3.0.52", ["wcwidth"], modules=["prompt_toolkit"])
    wheel = lite.read_wheel(path)
    assert (wheel.name, wheel.version, wheel.key) == ("Prompt_Toolkit", "3.0.52", "prompt-toolkit")
    assert wheel.file_name == path.name
    assert wheel.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert wheel.requires == ("wcwidth",)
    assert wheel.imports == ("prompt_toolkit",)


def test_wheel_imports_from_paths() -> None:
    names = ["sympy/__init__.py", "sympy/core/x.py", "isympy.py", "sympy-1.14.dist-info/METADATA",
             "sympy-1.14.data/scripts/x", "not-a-module/x.py"]
    assert lite.wheel_imports(names) == ("isympy", "sympy")


@needs_packaging
def test_runtime_depends_evaluates_markers_for_pyodide() -> None:
    requires = [
        "decorator>=5.1.0",
        'pexpect>4.6; sys_platform != "win32" and sys_platform != "emscripten"',
        'colorama>=0.4.4; sys_platform == "win32"',
        'pytest; extra == "test"',
        "Prompt_Toolkit<3.1.0,>=3.0.41",
        'tomli; python_version < "3.11"',
        "decorator",
    ]
    assert lite.runtime_depends(requires) == ["decorator", "prompt-toolkit"]


@needs_packaging
def test_trim_lock_lists_exactly_the_shipped_wheels(tmp_path: Path) -> None:
    paths = [
        make_wheel(tmp_path, "ipython", "9.12.0", ['pexpect; sys_platform != "emscripten"', "traitlets", "comm"],
                   modules=["IPython"]),
        make_wheel(tmp_path, "traitlets", "5.14.3"),
        make_wheel(tmp_path, "comm", "0.2.3", ["traitlets"]),
        make_wheel(tmp_path, "ipywidgets", "8.1.9", ["comm", "widgetsnbextension~=4.0.16", "jupyterlab_widgets~=3.0.17"]),
        make_wheel(tmp_path, "bubblekit", "0.1.0", ["sympy>=1.12"]),
        make_wheel(tmp_path, "sympy", "1.14.0", ["mpmath<1.4,>=1.1.0"], modules=["sympy", "isympy"]),
        make_wheel(tmp_path, "mpmath", "1.3.0"),
    ]
    wheels = [lite.read_wheel(p) for p in paths]
    lock = lite.trim_lock(UPSTREAM, wheels)
    assert lock["info"] == UPSTREAM["info"]  # the runtime's own info is kept
    assert set(lock["packages"]) == {"ipython", "traitlets", "comm", "ipywidgets", "bubblekit", "sympy", "mpmath"}
    assert "numpy" not in lock["packages"]  # Pyodide's own builds are not shipped
    by_key = {w.key: w for w in wheels}
    for key, entry in lock["packages"].items():
        wheel = by_key[key]
        assert entry["file_name"] == wheel.file_name
        assert entry["sha256"] == hashlib.sha256((tmp_path / wheel.file_name).read_bytes()).hexdigest()
        assert entry["sha256"] != UPSTREAM["packages"].get(key, {}).get("sha256")
        assert entry["version"] == wheel.version
        assert entry["package_type"] == "package" and entry["install_dir"] == "site"
        assert set(entry["depends"]) <= set(lock["packages"])  # only packages the site has
    assert lock["packages"]["ipython"]["depends"] == ["traitlets", "comm"]  # pexpect is not for emscripten
    assert lock["packages"]["ipython"]["imports"] == ["IPython"]
    assert lock["packages"]["ipywidgets"]["depends"] == ["comm"]  # the kernel's stub and the lab extension
    assert lock["packages"]["sympy"]["depends"] == ["mpmath"]
    assert lock["packages"]["sympy"]["imports"] == ["isympy", "sympy"]
    assert lock["packages"]["bubblekit"]["depends"] == ["sympy"]
    json.dumps(lock)  # plain JSON


@needs_packaging
def test_trim_lock_refuses_a_dependency_the_site_lacks(tmp_path: Path) -> None:
    wheels = [lite.read_wheel(make_wheel(tmp_path, "bubblekit", "0.1.0", ["sympy>=1.12"]))]
    with pytest.raises(ValueError, match="bubblekit needs sympy"):
        lite.trim_lock(UPSTREAM, wheels)
    with pytest.raises(ValueError, match="two wheels"):
        lite.trim_lock(UPSTREAM, wheels + wheels, not_locked=["sympy"])


def test_bubblekit_wheel_name_changes_with_its_content() -> None:
    a = lite.tagged_wheel_name("bubblekit-0.1.0-py3-none-any.whl", b"one")
    b = lite.tagged_wheel_name("bubblekit-0.1.0-py3-none-any.whl", b"two")
    assert a != b and a.startswith("bubblekit-0.1.0-0") and a.endswith("-py3-none-any.whl")
    assert len(a.split("-")) == 6  # name, version, build tag (a digit first), python, abi, platform
    assert lite.tagged_wheel_name(a, b"one") == a


def test_pinned_wheels_cover_what_the_kernel_installs() -> None:
    # the Pyodide kernel installs these when it starts; with the PyPI fallback off they must be in
    # the lock (or be the kernel's own wheels)
    for name in ("micropip", "comm", "ipython", "jedi"):
        assert name in lite.WHEELS
    for name in ("sympy", "mpmath", "ipywidgets"):  # bubblekit's core and the explorers
        assert name in lite.WHEELS
    for name in ("numpy", "matplotlib"):  # not shipped: Pyodide's own builds
        assert name not in lite.WHEELS


LESSON = {
    "cells": [
        {"cell_type": "markdown", "id": "l01-00", "metadata": {}, "source": ["# 01 · What a bubble is\n"]},
        {"cell_type": "code", "id": "l01-01", "metadata": {}, "execution_count": 1,
         "outputs": [{"output_type": "stream", "name": "stdout", "text": ["0.27\n"]}],
         "source": ["import bubblekit as bk\n", "%matplotlib inline"]},
    ],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_prepare_notebook_adds_the_storage_note_and_the_install_cell(lang: str) -> None:
    nb = lite.prepare_notebook(LESSON, lang)
    note, install, *rest = nb["cells"]
    assert note["cell_type"] == "markdown" and note["id"] == "lite-storage"
    text = "".join(note["source"])
    assert ("browser's storage" in text) if lang == "en" else ("浏览器的本地存储" in text)
    assert install["cell_type"] == "code" and install["id"] == "lite-install" and install["outputs"] == []
    lines = "".join(install["source"]).splitlines()
    assert lines[-1] == "%pip install bubblekit ipywidgets" and lines[0].startswith("#")
    assert rest == LESSON["cells"]  # the lesson, outputs included, as it was
    assert nb["metadata"]["kernelspec"]["name"] == "python"  # JupyterLite's Pyodide kernel
    assert LESSON["metadata"]["kernelspec"]["name"] == "python3"  # the input is not changed
    assert lite.prepare_notebook(nb, lang) == nb  # a second run adds nothing
    nbformat = pytest.importorskip("nbformat")
    nbformat.validate(nbformat.from_dict(nb))


def test_prepare_notebook_knows_only_the_two_languages() -> None:
    with pytest.raises(ValueError):
        lite.prepare_notebook(LESSON, "fr")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_lesson06_page_is_markdown_and_sends_to_jupyterlab(lang: str) -> None:
    page = lite.lesson06_page(lang)
    assert [c["cell_type"] for c in page["cells"]] == ["markdown"]
    text = "".join(page["cells"][0]["source"])
    assert text.startswith("# 06 · ")
    assert "JupyterLab" in text and "torch" in text and "bash course.sh lab" in text
    assert ("trace files" in text) if lang == "en" else ("trace 文件" in text)
    assert ("apps/" if lang == "en" else "apps/zh/") in text  # the classroom pages work in the browser


def test_site_notebooks_are_lessons_00_05_exercises_01_05_and_the_apps_in_both_languages() -> None:
    items = lite.site_notebooks()
    assert len(items) == 2 * (6 + 1 + 5 + 3)
    for rel, lang, src in items:
        assert ("/zh/" in rel) == (lang == "zh")
        if src is None:
            assert rel.endswith("06_profiling_practice.ipynb")
        else:
            assert src.is_file(), src
            assert src == ROOT / rel  # the repository's layout: links between lessons and exercises work
    names = {Path(rel).name for rel, _, _ in items}
    assert {"00_start_here.ipynb", "05_shrinking_bubbles.ipynb"} <= names
    apps = {rel for rel, _, _ in items if rel.startswith("apps/")}  # the three classroom pages, en and zh
    assert apps == {f"apps/{sub}{n}.ipynb" for sub in ("", "zh/") for n in ("explorer", "builder", "frontier")}
    assert not any(n.startswith(("07", "08", "09", "10")) for n in names)


def test_write_contents(tmp_path: Path) -> None:
    count = lite.write_contents(tmp_path)
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.ipynb"))
    assert count == len(written) == 30
    app = json.loads((tmp_path / "apps/zh/frontier.ipynb").read_text(encoding="utf-8"))
    assert [c["id"] for c in app["cells"][:3]] == ["lite-storage", "lite-install", "frontier-0"]
    assert "浏览器" in "".join(app["cells"][0]["source"]) and app["metadata"]["kernelspec"]["name"] == "python"
    zh = json.loads((tmp_path / "notebooks/zh/01_what_is_a_bubble.ipynb").read_text(encoding="utf-8"))
    assert "浏览器" in "".join(zh["cells"][0]["source"])
    assert zh["cells"][2]["id"] == "l01-00"


def test_lite_config_points_at_the_local_pyodide_without_pypi() -> None:
    config = lite.lite_config()
    settings = config["jupyter-config-data"]["litePluginSettings"][lite.PYODIDE_KERNEL_PLUGIN]
    assert settings["pyodideUrl"] == "./static/pyodide/pyodide.mjs"
    assert settings["loadPyodideOptions"]["lockFileURL"] == "./static/pyodide/pyodide-lock.json"
    assert settings["disablePyPIFallback"] is True
    build = lite.build_config(Path("/o"), Path("/c"), Path("/x"))
    assert build["LiteBuildConfig"]["ignore_sys_prefix"] == ["federated_extensions"]


# ---------------------------------------------------------------------------- the built site


def _site_or_skip() -> Path:
    if not (SITE / "jupyter-lite.json").is_file():
        pytest.skip(f"no built site in {SITE}: `bash course.sh lite` builds it")
    return SITE


def test_built_site_is_self_contained() -> None:
    site = _site_or_skip()
    config = json.loads((site / "jupyter-lite.json").read_text(encoding="utf-8"))["jupyter-config-data"]
    settings = config["litePluginSettings"][lite.PYODIDE_KERNEL_PLUGIN]
    assert settings["disablePyPIFallback"] is True
    for url in (settings["pyodideUrl"], settings["loadPyodideOptions"]["lockFileURL"], *settings.get("pipliteUrls", [])):
        assert url.startswith("./"), url  # nothing from a CDN
        assert (site / url.split("?")[0]).is_file(), url
    lock_path = site / settings["loadPyodideOptions"]["lockFileURL"]
    lock = json.loads(lock_path.read_text(encoding="utf-8"))
    shipped = {p.name for p in lock_path.parent.glob("*.whl")}
    assert shipped == {e["file_name"] for e in lock["packages"].values()}  # exactly the wheels it ships
    for entry in lock["packages"].values():
        data = (lock_path.parent / entry["file_name"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], entry["file_name"]
        assert set(entry["depends"]) <= set(lock["packages"])
    assert {"bubblekit", "sympy", "ipython", "micropip"} <= set(lock["packages"])
    assert not {"numpy", "matplotlib"} & set(lock["packages"])
    names = {e["name"] for e in config["federated_extensions"]}
    assert names == set(lite.LAB_EXTENSIONS)
    for rel, _lang, src in lite.site_notebooks():
        nb = json.loads((site / "files" / rel).read_text(encoding="utf-8"))
        if src is not None:
            assert [c.get("id") for c in nb["cells"][:2]] == ["lite-storage", "lite-install"], rel


@pytest.mark.slow
def test_build_writes_a_site(tmp_path: Path) -> None:
    if not LITE_EXTRA:
        pytest.skip(NO_EXTRA)
    cached = (lite.CACHE / "npm" / f"pyodide-{lite.kernel_pyodide_version()}" / "pyodide-lock.json").is_file()
    if not cached and shutil.which("npm") is None:
        pytest.skip("npm is not installed and .lite-cache/ has no Pyodide: the build fetches it with npm pack")
    size, files = lite.build(tmp_path / "site", lite.CACHE)
    assert (tmp_path / "site" / "jupyter-lite.json").is_file()
    assert size > 10 * 2**20 and files > 100
    lite.check_site(tmp_path / "site")


# ---------------------------------------------------------------------------- the browser


class _Quiet(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".mjs": "text/javascript", ".js": "text/javascript", ".wasm": "application/wasm",
                      ".json": "application/json"}

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@pytest.fixture
def served_site() -> Iterator[str]:
    """The site on 127.0.0.1 at a free port (a static server, like python -m http.server)."""
    site = _site_or_skip()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@contextlib.contextmanager
def _lite_page(sync_api: Any, blocked: list[str]) -> Iterator[Any]:
    """A page of a fresh headless Chromium that refuses every request outside 127.0.0.1 (the page,
    its workers, i.e. the kernel, and its frames), listing the refused addresses in ``blocked``."""

    def only_this_host(route: Any) -> None:
        if urllib.parse.urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True, timeout=60_000)
        try:
            context = browser.new_context(viewport={"width": 1440, "height": 1000})
            context.route("**/*", only_this_host)
            page = context.new_page()
            page.route("**/*", only_this_host)
            yield page
        finally:
            browser.close()


@pytest.mark.browser
def test_lesson01_runs_bubblekit_in_the_browser(served_site: str) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"!!! BROWSER TEST SKIPPED: no Chromium at {CHROMIUM} (Debian package 'chromium') !!!")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the Python package 'playwright' (test extra)")
    import bubblekit as bk

    expected = bk.simulate(bk.schedule("1f1b", 4, 8)).bubble_ratio
    blocked: list[str] = []

    with _lite_page(sync_api, blocked) as page:
        page.set_default_timeout(120_000)
        console: list[str] = []
        page.on("console", lambda msg: console.append(f"{msg.type}: {msg.text}"))
        started = time.monotonic()
        page.goto(f"{served_site}/lab/index.html?path=notebooks/01_what_is_a_bubble.ipynb")
        cell = page.locator(".jp-NotebookPanel .jp-CodeCell").first
        output = cell.locator(".jp-OutputArea-output")
        try:
            # a cell run before the notebook has its kernel is dropped: wait for the kernel first
            page.locator(".jp-StatusBar-TextItem", has_text="Pyodide) | Idle").first.wait_for(timeout=FIRST_RESULT_MS)
            cell.locator(".cm-content").click()
            page.keyboard.press("Control+End")
            page.keyboard.insert_text('\nimport bubblekit as bk\nprint(bk.simulate(bk.schedule("1f1b", 4, 8)).bubble_ratio)')
            page.keyboard.press("Shift+Enter")
            prompt = cell.locator(".jp-InputPrompt")
            for _ in range(100):  # the run was taken when its prompt is [*] or a number
                if prompt.inner_text().strip() not in ("[ ]:", ""):
                    break
                time.sleep(0.2)
            else:  # once more (a kernel that said idle before it could take the request)
                cell.locator(".cm-content").click()
                page.keyboard.press("Shift+Enter")
            output.filter(has_text=str(expected)[:6]).first.wait_for(timeout=FIRST_RESULT_MS)
        except Exception:
            page.screenshot(path=str(ARTIFACTS / "lite_lesson01_failed.png"))
            print("\n".join(console[-40:]))
            raise
        elapsed = time.monotonic() - started
        page.screenshot(path=str(ARTIFACTS / "lite_lesson01.png"))
        text = output.all_inner_texts()
    numbers = [float(tok) for out in text for tok in out.split() if tok.replace(".", "", 1).isdigit()]
    assert any(abs(n - expected) < 1e-12 for n in numbers), (text, expected)
    print(f"\nlite: lesson 01 opened to first result (bubble_ratio {expected}) in {elapsed:.1f} s")
    assert not blocked, f"requests to other hosts: {blocked[:10]}"



#: lesson 01's self-check in the lite site: 3 stations, 4 cars, 1 minute each: 6 idle of 18 station-minutes
SELF_CHECK_ANSWER = "my_answer = 1/3"
STORAGE_NOTE = {"en": "browser's storage", "zh": "浏览器的本地存储"}


def _run_all_cells(page: Any) -> None:
    """Run → Run All Cells (JupyterLite's menu), then wait until no cell is queued or running."""
    page.get_by_role("menuitem", name="Run").first.click()
    page.get_by_text("Run All Cells", exact=True).first.click()
    prompts = page.locator(".jp-CodeCell .jp-InputPrompt")
    deadline = time.monotonic() + FIRST_RESULT_MS / 1000
    while time.monotonic() < deadline:
        texts = prompts.all_inner_texts()
        # every prompt settled and the last cell run (a collapsed check cell shows no prompt)
        if texts and not any("*" in t for t in texts) and texts[-1].strip() not in ("", "[ ]:"):
            return
        time.sleep(1)
    raise AssertionError(f"cells still running or never run: {prompts.all_inner_texts()}")


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_learner_works_through_lesson01_in_the_browser(served_site: str, lang: str) -> None:
    """Lesson 01 in the lite site, as a learner: answer the self-check, run every cell, see the diagram,
    move the explorer's m slider and read the simulator's value, save, reload: the answer is still there."""
    if not CHROMIUM.exists():
        pytest.skip(f"!!! BROWSER TEST SKIPPED: no Chromium at {CHROMIUM} (Debian package 'chromium') !!!")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the Python package 'playwright' (test extra)")
    import bubblekit as bk

    # the explorer starts at GPipe, p = 4, m = 4, b = 2f; one step right on the m slider gives m = 5
    start = bk.simulate(bk.schedule("gpipe", 4, 4), bk.preset("b=2f")).bubble_ratio
    moved = bk.simulate(bk.schedule("gpipe", 4, 5), bk.preset("b=2f")).bubble_ratio
    lesson = "notebooks/01_what_is_a_bubble.ipynb" if lang == "en" else "notebooks/zh/01_what_is_a_bubble.ipynb"
    blocked: list[str] = []

    shot = ARTIFACTS / f"lite_lesson01_{lang}"
    with _lite_page(sync_api, blocked) as page:
        page.set_default_timeout(FIRST_RESULT_MS)
        started = time.monotonic()
        page.goto(f"{served_site}/lab/index.html?path={lesson}")
        try:
            page.locator(".jp-StatusBar-TextItem", has_text="Pyodide) | Idle").first.wait_for()
            assert page.locator(".jp-MarkdownCell", has_text=STORAGE_NOTE[lang]).count() == 1  # the page says so
            # the learner answers the self-check (the cell says my_answer = None)
            answer = page.locator(".jp-CodeCell", has_text="my_answer = None").first
            answer.locator(".cm-content").click()
            page.keyboard.press("Control+a")
            page.keyboard.insert_text(f'{SELF_CHECK_ANSWER}\nbk.check("01.0", my_answer)')
            _run_all_cells(page)
            ran = time.monotonic() - started
            errors = [t for t in page.locator(".jp-OutputArea-output").all_inner_texts()
                      if "Traceback" in t or "Error" in t]
            assert not errors, errors[:3]
            assert page.locator("svg rect.bk-action").count() > 0  # the pipeline diagrams, drawn as SVG
            checked = page.locator(".jp-CodeCell", has_text=SELF_CHECK_ANSWER).first
            assert "✓ 01.0" in checked.locator(".jp-OutputArea").inner_text()
            card = page.locator(".bk-card .bk-value").first  # bubble_ratio, the explorer's first card
            assert card.inner_text().strip() == f"{start:.4f}"
            page.locator(".widget-slider").nth(1).locator(".noUi-handle").focus()  # m (microbatches)
            page.keyboard.press("ArrowRight")
            sync_api.expect(card).to_have_text(f"{moved:.4f}", timeout=60_000)  # the card is redrawn
            page.screenshot(path=f"{shot}.png")
            # saved (Ctrl+S) into the browser's storage, the answer survives a reload
            answer_cell = page.locator(".jp-CodeCell", has_text=SELF_CHECK_ANSWER).first
            answer_cell.locator(".cm-content").click()
            page.keyboard.press("Control+s")
            page.locator(".jp-mod-dirty").first.wait_for(state="detached")
            page.reload()
            page.locator(".jp-StatusBar-TextItem", has_text="Pyodide) | Idle").first.wait_for()
            page.locator(".jp-CodeCell", has_text=SELF_CHECK_ANSWER).first.wait_for()
        except Exception:
            page.screenshot(path=f"{shot}_failed.png")
            raise
    print(f"\nlite ({lang}): lesson 01 opened and run top to bottom in {ran:.1f} s; m slider "
          f"{start:.4f} -> {moved:.4f} as simulated; answer kept after a reload")
    assert not blocked, f"requests to other hosts: {blocked[:10]}"


def test_the_build_keeps_a_folder_that_is_not_an_earlier_site(tmp_path: Path) -> None:
    """--output names a folder the build replaces: a learner's folder with their files is refused, not deleted."""
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "my_answers.ipynb").write_text("{}", encoding="utf-8")
    with pytest.raises(SystemExit, match="not an earlier site"):
        lite.build(mine, tmp_path / "cache", offline=True)
    assert (mine / "my_answers.ipynb").read_text(encoding="utf-8") == "{}"
    (tmp_path / "file.txt").write_text("x", encoding="utf-8")
    with pytest.raises(SystemExit, match="is a file"):
        lite.check_output(tmp_path / "file.txt")
    lite.check_output(tmp_path / "empty")  # missing: fine
    lite.check_output(mine, force=True)  # asked for
    site = tmp_path / "old_site"
    site.mkdir()
    (site / "jupyter-lite.json").write_text("{}", encoding="utf-8")
    lite.check_output(site)  # an earlier site is rebuilt


@pytest.mark.browser
def test_a_classroom_page_runs_in_the_browser(served_site: str) -> None:
    """apps/zh/frontier.ipynb in the lite site: run it, see the frontier drawn as SVG by the live widget, move
    the m slider one step and read 1F1B's row of the table and its point: the simulator's values at m = 9."""
    if not CHROMIUM.exists():
        pytest.skip(f"!!! BROWSER TEST SKIPPED: no Chromium at {CHROMIUM} (Debian package 'chromium') !!!")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the Python package 'playwright' (test extra)")
    import bubblekit as bk
    from bubblekit.text import format_number

    # the page starts at p = 4, m = 8, v = 2, f=i=w; one step right on the m slider gives m = 9
    start, moved = (bk.simulate(bk.schedule("1f1b", 4, m), bk.preset("f=i=w")) for m in (8, 9))
    blocked: list[str] = []

    def row_1f1b(page: Any) -> list[str]:
        row = page.locator(".bk-frontier-explorer .bk-table tr").filter(
            has=page.locator("td", has_text="1F1B").first).first  # the 1F1B row (not "interleaved 1F1B")
        cells = [c.strip() for c in row.locator("td").all_inner_texts()]
        return cells if cells and cells[0] == "1F1B" else []

    def point_1f1b(page: Any) -> str:
        return str(page.locator('.bk-frontier-explorer svg.bk-chart-svg [data-series="point:1F1B"]').first
                   .get_attribute("data-points"))

    shot = ARTIFACTS / "lite_apps_zh_frontier"
    with _lite_page(sync_api, blocked) as page:
        page.set_default_timeout(FIRST_RESULT_MS)
        started = time.monotonic()
        page.goto(f"{served_site}/lab/index.html?path=apps/zh/frontier.ipynb")
        try:
            page.locator(".jp-StatusBar-TextItem", has_text="Pyodide) | Idle").first.wait_for()
            assert page.locator(".jp-MarkdownCell", has_text=STORAGE_NOTE["zh"]).count() == 1
            _run_all_cells(page)
            ran = time.monotonic() - started
            errors = [t for t in page.locator(".jp-OutputArea-output").all_inner_texts()
                      if "Traceback" in t or "Error" in t]
            assert not errors, errors[:3]
            chart = page.locator(".bk-frontier-explorer svg.bk-chart-svg").first  # the live widget's picture
            chart.wait_for()
            assert chart.locator("path.bk-series").count() >= 8  # a point per schedule
            assert "帕累托前沿" in page.locator(".bk-frontier-explorer").first.inner_text()  # the Chinese page
            assert point_1f1b(page) == f"{float(start.max_peak_activations)!r},{start.bubble_ratio!r}"
            before = row_1f1b(page)
            assert before[2:4] == [format_number(start.makespan), f"{start.bubble_ratio:.1%}"], before
            page.locator(".bk-frontier-explorer .widget-slider").nth(1).locator(".noUi-handle").focus()  # m
            page.keyboard.press("ArrowRight")
            deadline = time.monotonic() + 60
            while row_1f1b(page) == before and time.monotonic() < deadline:
                time.sleep(0.5)
            after = row_1f1b(page)
            assert after[2:4] == [format_number(moved.makespan), f"{moved.bubble_ratio:.1%}"], after
            assert point_1f1b(page) == f"{float(moved.max_peak_activations)!r},{moved.bubble_ratio!r}"
            page.screenshot(path=f"{shot}.png")
        except Exception:
            page.screenshot(path=f"{shot}_failed.png")
            raise
    print(f"\nlite: apps/zh/frontier.ipynb run in {ran:.1f} s; m slider: 1F1B makespan {before[2]} -> {after[2]}, "
          f"bubble_ratio {before[3]} -> {after[3]} as simulated")
    assert not blocked, f"requests to other hosts: {blocked[:10]}"
