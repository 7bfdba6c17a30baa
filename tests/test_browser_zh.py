"""Real-browser test of the Chinese edition (issue 16): JupyterLab in Chinese, a Chinese lesson run.

JupyterLab starts with the zh-CN language pack (the ``[zh]`` extra) and the very settings
override ``bash course.sh lab --lang zh`` writes (read from course.sh, put in a private
``app_settings_dir``, so no other test's JupyterLab turns Chinese), on a copy of
``notebooks/zh/01_what_is_a_bubble.ipynb`` (the lesson with the fastest pipeline explorer). In
Debian's Chromium (``/usr/bin/chromium``, driven by the Python ``playwright`` package; never
``playwright install``), as a Chinese learner:

* the menu bar is Chinese (文件, 编辑, 查看, 运行, 内核, 帮助) and the lesson runs through 运行 → 运行所有单元格;
* no cell fails and none warns of a missing glyph: the kernels run with ``PYTHONWARNINGS=error:Glyph``,
  so matplotlib's "Glyph ... missing from font(s)" warning is an error in the cell that draws a
  figure (a control run shows that setting does turn the warning into an error);
* the explorer's ``m`` slider, moved with the keyboard, changes the Chinese readout
  (…% 的设备时间在空等) to the simulator's bubble for the new ``m``;
* the lesson's warm-up check, answered in its cell, shows a Chinese result;
* the page's Chinese text is drawn by a font with CJK glyphs: Chromium says which platform
  font drew the lesson's title and the readout (DevTools ``CSS.getPlatformFontsForNode``: a
  CJK family with glyphs, no "last resort" font), and a Chinese character drawn on a canvas in
  the element's own font differs from the box a code point no font has (U+10FFFD) draws;
  another such code point (U+10FFFE) draws exactly that box, so the comparison can fail.

Screenshots go to ``test-artifacts/zh-*.png`` (kept by CI). Marker ``browser``; skipped with a
loud reason without Chromium, playwright or the language pack (``bash course.sh test`` installs
the pack; ``.ci/run`` installs Chromium and ``fonts-noto-cjk``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import bubblekit as bk
from bubblekit.course.factory import factory_line
from bubblekit.i18n import using_language

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_browser import (  # noqa: E402 - the shared Chromium + JupyterLab helpers
    ARTIFACTS,
    RENDER_S,
    Server,
    _env,
    _free_port,
    _require_browser,
    chromium_page,
    lab_command,
)
from test_browser_checks import _INK  # noqa: E402 - draws a text and the missing-glyph box on a canvas

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
LESSON = "notebooks/zh/01_what_is_a_bubble.ipynb"
CHANGE_MS = 60_000
#: Chinese characters (CJK Unified Ideographs).
_HAN = re.compile(r"[\u4e00-\u9fff]")
#: The explorer's bubble_ratio note in Chinese, e.g. "42.9% 的设备时间在空等（模拟值）".
_RATIO_NOTE = re.compile(r"(\d+\.\d)% 的设备时间在空等")


def _require_language_pack() -> None:
    if importlib.util.find_spec("jupyterlab_language_pack_zh_CN") is None:
        pytest.skip("!!! CHINESE BROWSER TEST SKIPPED: JupyterLab's zh-CN language pack is not installed "
                    "(pip install -e '.[zh]'; `bash course.sh test` installs it). !!!")


def course_sh_override() -> dict[str, Any]:
    """The settings override ``bash course.sh lab --lang zh`` writes (read from course.sh itself)."""
    text = (ROOT / "course.sh").read_text(encoding="utf-8")
    found = re.search(r"printf '%s\\n' '(\{.*\})' > \"\$dir/bubblekit-language\.json\"", text)
    assert found, "course.sh no longer writes bubblekit-language.json the way this test reads it"
    override = json.loads(found.group(1))
    assert override == {"@jupyterlab/translation-extension:plugin": {"locale": "zh_CN"}}, override
    return override


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _require_browser()
    _require_language_pack()
    d = tmp_path_factory.mktemp("zh-lab")
    (d / LESSON).parent.mkdir(parents=True)
    shutil.copy(ROOT / LESSON, d / LESSON)  # a copy: JupyterLab may save what it ran
    overrides = d / "app-settings" / "overrides.d"
    overrides.mkdir(parents=True)
    (overrides / "bubblekit-language.json").write_text(json.dumps(course_sh_override()), encoding="utf-8")
    ARTIFACTS.mkdir(exist_ok=True)
    return d


@pytest.fixture(scope="module")
def lab(workdir: Path) -> Iterator[str]:
    """JupyterLab in Chinese on 127.0.0.1; its kernels turn a missing glyph into an error. Yields the lesson's URL."""
    port, token = _free_port(), secrets.token_hex(16)
    cmd = lab_command(workdir, port, token, f"--LabApp.app_settings_dir={workdir / 'app-settings'}")
    env = _env(workdir)
    env["PYTHONWARNINGS"] = "error:Glyph"  # matplotlib: "Glyph 27668 (...) missing from font(s) DejaVu Sans."
    env.pop("BUBBLEKIT_LANG", None)         # the lesson sets its language itself
    # no user setting (test_browser's _env pins English with one): the override decides the language
    (workdir / "lab-settings" / "@jupyterlab" / "translation-extension" / "plugin.jupyterlab-settings").unlink(
        missing_ok=True)
    server = Server("jupyter lab (zh)", cmd, workdir, env, workdir / "lab.log")
    try:
        server.wait_http(f"http://127.0.0.1:{port}/api/status?token={token}")
        _WORKDIRS[f"http://127.0.0.1:{port}"] = workdir
        yield f"http://127.0.0.1:{port}/lab/tree/{LESSON}?token={token}"
    finally:
        server.stop()


@pytest.fixture(scope="module")
def page(lab: str) -> Iterator[Any]:
    with chromium_page(locale="zh-CN") as pg:
        yield pg


# ------------------------------------------------------------------------------ helpers
_WORKDIRS: dict[str, Path] = {}


def workdir_of(url: str) -> Path:
    """The folder the JupyterLab at ``url`` serves."""
    return next(d for base, d in _WORKDIRS.items() if url.startswith(base + "/"))


def _read_saved(path: Path, deadline: float) -> dict:
    """The notebook JupyterLab saved; its save can be caught half-written (an empty or cut file): read it again."""
    while True:
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            if time.monotonic() > deadline + 30:
                raise
            time.sleep(0.3)


def _shot(page: Any, name: str, full_page: bool = False) -> None:
    page.screenshot(path=str(ARTIFACTS / f"zh-{name}.png"), full_page=full_page)


def _dismiss_toasts(page: Any) -> None:
    """JupyterLab may ask once whether to fetch news: answer 否 (No)."""
    no = page.locator(".jp-toast-button", has_text=re.compile(r"^(否|No)$"))
    if no.count():
        no.first.click()


def _panel(page: Any) -> Any:
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")


def _run_all_cells(page: Any) -> None:
    """运行 → 运行所有单元格: JupyterLab's own menu, in Chinese."""
    page.get_by_role("menuitem", name="运行", exact=True).click()
    page.get_by_role("menuitem", name="运行所有单元格", exact=True).click()


def _all_cells_ran(page: Any) -> bool:
    """No cell is waiting or running ([*]), the last code cell has run, and the kernel is idle (空闲)."""
    return bool(page.evaluate(
        """() => {
            const prompts = [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt')];
            return prompts.length > 0 && !prompts.some(p => p.innerText.includes('*'))
                && /\\[\\d+\\]/.test(prompts[prompts.length - 1].innerText);
        }"""
    )) and page.locator(".jp-StatusBar-TextItem", has_text="空闲").count() > 0


def _scroll_to(page: Any, locator: Any, deadline: float) -> None:
    """Scroll the notebook until ``locator`` is rendered (a long notebook renders cells as they come into view)."""
    while not locator.count():
        if time.monotonic() > deadline:
            _shot(page, "failure", full_page=True)
            pytest.fail("an expected cell did not render (see test-artifacts/zh-failure.png)")
        _panel(page).locator(".jp-WindowedPanel-outer").first.evaluate("el => el.scrollBy(0, el.clientHeight * 0.8)")
        page.wait_for_timeout(300)
    locator.first.scroll_into_view_if_needed()


def _readout(page: Any) -> dict[str, str]:
    return page.evaluate(
        """() => {
            const box = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .bk-pipeline-explorer');
            if (!box) return {};
            const m = box.querySelector('.bk-control-m .widget-readout');
            const card = box.querySelector('.bk-readout-bubble_ratio');
            const img = box.querySelector('img.bk-figure');
            const label = box.querySelector('.bk-control-m .widget-label');
            return {m: m ? (m.value || m.innerText || '').trim() : '', card: card ? card.innerText : '',
                    label: label ? label.innerText : '', src: img ? img.src : ''};
        }"""
    )


def _fonts_of(page: Any, selector: str) -> list[str]:
    """The platform fonts Chromium used for the text of the first element matching ``selector`` (with glyphs)."""
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        root = cdp.send("DOM.getDocument", {"depth": -1, "pierce": True})["root"]["nodeId"]
        node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
        assert node, f"nothing matches {selector!r}"
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    finally:
        cdp.detach()
    return [f["familyName"] for f in fonts if f.get("glyphCount", 0) > 0]


def _css_font(page: Any, selector: str) -> str:
    return str(page.eval_on_selector(
        selector, "e => { const s = getComputedStyle(e); return `${s.fontWeight} ${s.fontSize} ${s.fontFamily}`; }"))


# -------------------------------------------------------------------------------- tests
def test_the_glyph_setting_turns_a_missing_glyph_into_an_error() -> None:
    """The control for the kernels' PYTHONWARNINGS=error:Glyph: Chinese in DejaVu Sans alone fails to draw."""
    code = ("import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot as plt; "
            "plt.rcParams['font.family'] = ['DejaVu Sans']; f = plt.figure(); f.suptitle('气泡'); "
            "f.savefig(__import__('io').BytesIO())")
    env = {**os.environ, "PYTHONWARNINGS": "error:Glyph", "MPLBACKEND": "Agg"}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and "missing from font" in run.stderr, run.stderr[-2000:]


def test_jupyterlab_menus_are_chinese_and_the_lesson_runs(lab: str, page: Any) -> None:
    page.goto(lab, timeout=60_000)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=RENDER_S)
    _dismiss_toasts(page)
    for menu in ("文件", "编辑", "查看", "运行", "内核", "帮助"):
        page.get_by_role("menuitem", name=menu, exact=True).wait_for(timeout=30_000)
    assert page.get_by_role("menuitem", name="File", exact=True).count() == 0
    page.get_by_role("menuitem", name="文件", exact=True).click()
    page.get_by_role("menuitem", name=re.compile("^新建")).first.wait_for(timeout=10_000)
    _shot(page, "lab-file-menu")
    page.keyboard.press("Escape")

    # 编辑 → 清除所有单元格的输出 first, so that the stored outputs and numbers cannot pass for a run
    page.get_by_role("menuitem", name="编辑", exact=True).click()
    page.get_by_role("menuitem", name="清除所有单元格的输出", exact=True).click()
    page.wait_for_function(
        "() => ![...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt')]"
        ".some(p => /\\[\\d+\\]/.test(p.innerText))", timeout=30_000)
    _run_all_cells(page)
    deadline = time.monotonic() + 2 * RENDER_S / 1000
    while not _all_cells_ran(page):
        dialog = page.locator(".jp-Dialog .jp-mod-accept")  # 选择内核 while the session starts
        if dialog.count():
            dialog.first.click()
        if time.monotonic() > deadline:
            _shot(page, "failure", full_page=True)
            pytest.fail("the lesson did not finish running (see test-artifacts/zh-failure.png)")
        page.wait_for_timeout(500)
    # every cell ran without an error or a warning (a missing glyph is an error here): read the saved notebook,
    # which holds every cell's outputs (the page may render only the cells in view)
    saved = workdir_of(lab) / LESSON
    stamp = saved.stat().st_mtime_ns
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 30
    while saved.stat().st_mtime_ns == stamp and time.monotonic() < deadline:
        page.wait_for_timeout(300)
    nb = _read_saved(saved, deadline)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c.get("execution_count") for c in code), "not every cell ran"
    bad = [(c.get("id"), o.get("ename") or "".join(o.get("text", ""))[:300]) for c in code for o in c.get("outputs", [])
           if o.get("output_type") == "error" or o.get("name") == "stderr"]
    assert not bad, f"cells failed or warned (a missing glyph is an error here): {bad}"
    _panel(page).locator(".jp-WindowedPanel-outer").first.evaluate("el => el.scrollTo(0, 0)")
    title = _panel(page).locator(".jp-RenderedMarkdown h1").first
    title.scroll_into_view_if_needed()
    assert (title.text_content() or "").startswith("01 · 什么是气泡"), title.text_content()
    _shot(page, "lab-lesson-01")
    _panel(page).locator(".jp-CodeCell", has_text="pipeline_animation_html").first.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    _shot(page, "lab-animation")


def test_explorer_slider_changes_the_chinese_readout(lab: str, page: Any) -> None:
    explorer = _panel(page).locator(".bk-pipeline-explorer")
    _scroll_to(page, explorer, time.monotonic() + RENDER_S / 1000)
    page.wait_for_function(
        "() => { const i = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .bk-pipeline-explorer img.bk-figure');"
        " return i && i.naturalWidth > 0; }", timeout=RENDER_S)
    before = _readout(page)
    assert before["label"].startswith("m（微批数）"), before
    m0 = int(before["m"])
    ratio0 = bk.simulate(bk.schedule("gpipe", 4, m0), bk.preset("b=2f")).bubble_ratio
    assert _RATIO_NOTE.search(before["card"]) and f"{ratio0:.1%}" in before["card"], before
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .bk-pipeline-explorer h2").first.evaluate(
        "el => el.scrollIntoView({block: 'start'})")
    _shot(page, "explorer-before")

    handle = explorer.locator(".bk-control-m .noUi-handle").first
    handle.scroll_into_view_if_needed()
    handle.focus()
    page.keyboard.press("ArrowRight")
    ratio1 = bk.simulate(bk.schedule("gpipe", 4, m0 + 1), bk.preset("b=2f")).bubble_ratio
    want = f"{ratio1:.1%} 的设备时间在空等"
    page.wait_for_function(
        "([want, src]) => { const b = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .bk-pipeline-explorer');"
        " const c = b.querySelector('.bk-readout-bubble_ratio'); const i = b.querySelector('img.bk-figure');"
        " return c && c.innerText.includes(want) && i && i.src !== src && i.naturalWidth > 0; }",
        arg=[want, before["src"]], timeout=CHANGE_MS)
    after = _readout(page)
    assert int(after["m"]) == m0 + 1 and after["card"] != before["card"], (before, after)
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .bk-pipeline-explorer h2").first.evaluate(
        "el => el.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)
    _shot(page, "explorer-after")
    explorer.first.screenshot(path=str(ARTIFACTS / "zh-explorer.png"))


def test_the_page_draws_chinese_with_a_cjk_font(lab: str, page: Any) -> None:
    """Not an empty box: Chromium's own font choice for Chinese text, and ink unlike the missing-glyph box."""
    _panel(page).locator(".jp-WindowedPanel-outer").first.evaluate("el => el.scrollTo(0, 0)")
    page.wait_for_timeout(500)
    report = []
    for what, selector in (
        ("lesson title", ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-RenderedMarkdown h1"),
        ("explorer readout", ".jp-NotebookPanel:not(.lm-mod-hidden) .bk-pipeline-explorer .bk-readout-bubble_ratio .bk-note"),
        ("menu", ".lm-MenuBar-itemLabel"),
    ):
        families = _fonts_of(page, selector)
        assert families and not any("last resort" in f.lower() for f in families), (what, families)
        assert any(re.search(r"CJK|Hei|Song|Kai|Ming|YaHei|PingFang|WenQuanYi|Source Han|Droid Sans Fallback", f)
                   for f in families), f"{what}: no CJK font among {families}"
        font = _css_font(page, selector)
        text = page.eval_on_selector(selector, "e => e.innerText")
        han = _HAN.search(text)
        assert han, (what, text)
        ink = page.evaluate(_INK, [han.group(), font])
        assert ink["ink"] > 0 and ink["differ"] > 0, (what, han.group(), ink, families)
        report.append(f"{what}: {han.group()!r} drawn by {', '.join(families)} (css: {font}; "
                      f"{ink['differ']} px unlike the missing-glyph box)")
    control = page.evaluate(_INK, [chr(0x10FFFE), _css_font(page, ".lm-MenuBar-itemLabel")])
    assert control["differ"] == 0, control  # the detector can fail: an unknown code point draws the box
    (ARTIFACTS / "zh-fonts.txt").write_text("\n".join(report) + "\n", encoding="utf-8")


def test_a_check_answered_in_the_lesson_says_so_in_chinese(lab: str, page: Any) -> None:
    cell = _panel(page).locator(".jp-CodeCell", has_text='bk.check("01.0"')
    _scroll_to(page, cell, time.monotonic() + RENDER_S / 1000)
    cell = cell.first
    before = cell.locator(".jp-OutputArea").first.inner_text()
    answer = factory_line(3, 4).bubble_ratio  # the warm-up: 3 stations, 4 cars: the idle share
    cell.locator(".jp-InputArea-editor").first.click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(f'my_answer = {answer!r}\nbk.check("01.0", my_answer)')
    page.keyboard.press("Shift+Enter")
    result = cell.locator(".bubblekit-check-correct, .bubblekit-check-wrong, .bubblekit-check-close")
    result.first.wait_for(timeout=CHANGE_MS)
    page.wait_for_function("([el, old]) => el.innerText !== old",
                           arg=[cell.locator(".jp-OutputArea").first.element_handle(), before], timeout=CHANGE_MS)
    text = result.first.inner_text()
    cell.scroll_into_view_if_needed()
    _shot(page, "check-answered")
    with using_language("zh"):
        expected = bk.check("01.0", answer)  # what bubblekit says in Chinese
    assert expected and "01.0" in text and "bubblekit-check-correct" in (result.first.get_attribute("class") or ""), text
    assert _HAN.search(str(expected)), f"bubblekit's check result is not Chinese: {expected!r}"
    assert _HAN.search(text), f"the check's result is not Chinese: {text!r}"
