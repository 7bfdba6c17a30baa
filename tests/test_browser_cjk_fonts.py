"""Real-browser test of the Chinese edition's font check (issue 23): what a learner without a CJK font sees.

``bash course.sh lab --lang zh`` checks, before JupyterLab starts, that the browser has a font
for Chinese (fontconfig's ``fc-list :lang=zh``, through ``python -m bubblekit.presentation.fonts
--check-browser``) and warns with the install line when it has none. Here that command runs the
way a learner types it (``bash course.sh lab --lang zh --no-browser --port=P
--IdentityProvider.token=T``) on a copy of the course whose ``.venv`` is a stand-in for the
shared environment (its ``python`` and ``jupyter`` are this Python's; ``BUBBLEKIT_NO_INSTALL=1``,
so nothing is installed and the shared environment is not touched), with the real JupyterLab.
The address it prints is then opened in Debian's Chromium (``/usr/bin/chromium``, the course's
flags), both under the same fontconfig:

* **no CJK font**: a ``fonts.conf`` (``FONTCONFIG_FILE``) that includes DejaVu's font folder
  only. The command's output carries the warning with ``apt-get install fonts-noto-cjk``; the
  lesson page loads (lesson 00's title, JupyterLab's Chinese menus), and every Chinese character
  of the title is drawn as the empty box a code point no font has draws (a canvas in the title's
  own font; the control U+10FFFE draws that box too) and Chromium names no CJK font for it: what
  the warning is for. The screenshot (``zh-no-cjk-font.png``) shows it.
* **the machine's fonts** (fontconfig as installed; CI installs ``fonts-noto-cjk``): no warning,
  and the title's Chinese is drawn by a CJK font, unlike the box (``zh-cjk-font.png``). Without
  a CJK font on the machine this case skips, except under ``CI=true``, where it fails.

A unit test (no browser) checks that the figures' font warning of a Chinese lesson comes in English
too. Screenshots go to the test's temporary folder and to ``test-artifacts/`` (kept by CI). The
browser tests have the marker ``browser`` and are skipped with a loud reason without Chromium, playwright, fontconfig, DejaVu's fonts
or JupyterLab's zh-CN language pack.
"""

from __future__ import annotations

import importlib.util
import os
import re
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_browser import (  # noqa: E402 - the shared Chromium + server helpers
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    RENDER_S,
    VIEWPORT,
    Server,
    _env,
    _free_port,
    _require_browser,
)
from test_browser_checks import _INK  # noqa: E402 - a text and the missing-glyph box drawn on a canvas

browser = pytest.mark.browser  # every test here but the one of the figures' warning

ROOT = Path(__file__).resolve().parent.parent
LESSON = "notebooks/zh/00_start_here.ipynb"
INSTALL_LINE = "apt-get install fonts-noto-cjk"
#: Where Debian/Ubuntu's fonts-dejavu-core puts DejaVu Sans (fontconfig's default sans-serif there).
DEJAVU_DIRS = (Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/dejavu"))
_HAN = re.compile(r"[\u4e00-\u9fff]")
_ADDRESS = re.compile(r"open the course: (http://127\.0\.0\.1:\d+/[^\s\x1b]+)")  # the line ends in a bold-off escape
_CJK_FAMILY = re.compile(r"CJK|Han|WenQuanYi|YaHei|PingFang|Hei|Song|Kai|Ming|Droid Sans Fallback|Sarasa", re.I)


def _on_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def _require_tools() -> None:
    _require_browser()
    if shutil.which("fc-list") is None:
        pytest.skip("!!! CJK FONT BROWSER TEST SKIPPED: fontconfig (fc-list) is not installed. !!!")
    if importlib.util.find_spec("jupyterlab_language_pack_zh_CN") is None:
        pytest.skip("!!! CJK FONT BROWSER TEST SKIPPED: JupyterLab's zh-CN language pack is not installed "
                    "(pip install -e '.[zh]'; `bash course.sh test` installs it). !!!")


def _dejavu_dir() -> Path:
    found = next((d for d in DEJAVU_DIRS if any(d.glob("DejaVuSans*.ttf"))), None)
    if found is None:
        pytest.skip(f"!!! CJK FONT BROWSER TEST SKIPPED: DejaVu's fonts are not in {[str(d) for d in DEJAVU_DIRS]} "
                    "(Debian: apt-get install fonts-dejavu-core). !!!")
    return found


def latin_only_fontconfig(tmp: Path) -> Path:
    """A fontconfig configuration whose only fonts are DejaVu's (Latin, Greek, Cyrillic; no Chinese)."""
    conf = tmp / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n'
        f"  <dir>{_dejavu_dir()}</dir>\n  <cachedir>{tmp / 'fc-cache'}</cachedir>\n</fontconfig>\n",
        encoding="utf-8")
    return conf


def _course_copy(tmp: Path) -> tuple[Path, Path]:
    """A copy of the course for ``course.sh`` (the script, pyproject.toml, the Chinese lesson 00, empty
    exercise folders) and a stand-in ``.venv`` whose ``python`` and ``jupyter`` are this Python's."""
    course = tmp / "course"
    (course / Path(LESSON).parent).mkdir(parents=True)
    for rel in ("course.sh", "pyproject.toml", LESSON):
        shutil.copy(ROOT / rel, course / rel)
    for sub in ("exercises", "exercises/zh", "solutions"):
        (course / sub).mkdir()
    venv = tmp / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (venv / "bin" / "jupyter").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m jupyter "$@"\n')
    for exe in ("python", "jupyter"):
        (venv / "bin" / exe).chmod(0o755)
    return course, venv


@contextmanager
def course_lab(tmp: Path, fontconfig: Path | None) -> Iterator[tuple[str, str, dict[str, str]]]:
    """``bash course.sh lab --lang zh --no-browser --port=P --IdentityProvider.token=T`` in a copy of the
    course, under ``fontconfig`` (None: the machine's). Yields the address it printed, its output so far
    and the environment (for the browser)."""
    course, venv = _course_copy(tmp)
    port, token = _free_port(), secrets.token_hex(16)
    env = _env(tmp)
    # no user setting (test_browser's _env pins English with one): course.sh's override decides the language
    (tmp / "lab-settings" / "@jupyterlab" / "translation-extension" / "plugin.jupyterlab-settings").unlink()
    # a short runtime folder: a kernel's socket path (ipc) must stay under 107 bytes
    runtime = Path(tempfile.mkdtemp(prefix="bk-cjk-"))
    env.update(BUBBLEKIT_VENV=str(venv), BUBBLEKIT_NO_INSTALL="1", PYTHONPATH=str(ROOT), JUPYTER_RUNTIME_DIR=str(runtime))
    for name in ("BUBBLEKIT_LANG", "BUBBLEKIT_CHECK_WORKTREE", "FONTCONFIG_FILE", "FONTCONFIG_PATH"):
        env.pop(name, None)
    if fontconfig is not None:
        env["FONTCONFIG_FILE"] = str(fontconfig)
    cmd = ["bash", "course.sh", "lab", "--lang", "zh", "--no-browser", f"--port={port}",
           f"--IdentityProvider.token={token}", "--ServerApp.ip=127.0.0.1", "--ServerApp.port_retries=0",
           # where JupyterLab reads course.sh's settings overrides in a real .venv (its sys.prefix); the stand-in
           # venv is not this Python's prefix, so it is named
           f"--LabApp.app_settings_dir={venv / 'share' / 'jupyter' / 'lab' / 'settings'}"]
    server = Server("bash course.sh lab --lang zh", cmd, course, env, tmp / "course-lab.log")
    try:
        deadline = time.monotonic() + 180
        while not (found := _ADDRESS.search(server.log_tail(200_000))):
            if server.proc.poll() is not None:
                pytest.fail(f"course.sh lab exited with {server.proc.returncode}:\n{server.log_tail()}")
            if time.monotonic() > deadline:
                pytest.fail(f"course.sh lab printed no address within 180 s:\n{server.log_tail()}")
            time.sleep(0.5)
        url = found.group(1)
        assert f"token={token}" in url and f":{port}/lab/tree/{LESSON}" in url, url
        server.wait_http(f"http://127.0.0.1:{port}/api/status?token={token}")
        yield url, server.log_tail(200_000), env
    finally:
        server.stop()
        shutil.rmtree(runtime, ignore_errors=True)


@contextmanager
def chromium_with(env: dict[str, str]) -> Iterator[Any]:
    """A page of headless Chromium (the course's flags, zh-CN) whose fontconfig is ``env``'s."""
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True,
                                     timeout=60_000, env=env)
    except Exception:
        pw.stop()
        raise
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1, locale="zh-CN")
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        yield page
    finally:
        context.close()
        browser.close()
        pw.stop()


def _platform_fonts(page: Any, selector: str) -> list[str]:
    """The platform fonts Chromium drew the first element matching ``selector`` with (those with glyphs)."""
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


TITLE = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownCell h1"


def _open_lesson(page: Any, url: str, shot: Path) -> dict[str, Any]:
    """Open the address course.sh printed; wait for lesson 00's title; screenshot; what the title looks like."""
    page.goto(url, timeout=RENDER_S)
    try:
        page.wait_for_selector(TITLE, timeout=RENDER_S)
        page.get_by_role("menuitem", name="文件", exact=True).wait_for(timeout=30_000)  # the override applied
    except Exception:
        page.screenshot(path=str(shot.with_name(shot.stem + "-failure.png")), full_page=True)
        raise
    for no in page.locator(".jp-toast-button", has_text=re.compile(r"^(否|No)$")).all():
        no.click()
    page.wait_for_timeout(1000)  # let the page settle (fonts, toasts)
    page.screenshot(path=str(shot))
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(shot, ARTIFACTS / shot.name)
    title = page.inner_text(TITLE)
    han = _HAN.findall(title)
    assert han, f"lesson 00's title has no Chinese: {title!r}"
    font = str(page.eval_on_selector(TITLE, "e => { const s = getComputedStyle(e); "
                                            "return `${s.fontWeight} ${s.fontSize} ${s.fontFamily}`; }"))
    inks = [page.evaluate(_INK, [ch, font]) for ch in dict.fromkeys(han)]
    control = page.evaluate(_INK, [chr(0x10FFFE), font])
    return {"title": title, "han": han, "inks": inks, "control": control,
            "fonts": _platform_fonts(page, TITLE), "css": font}


@browser
def test_without_a_cjk_font_lab_warns_and_the_learner_sees_boxes(tmp_path: Path) -> None:
    _require_tools()
    conf = latin_only_fontconfig(tmp_path)
    with course_lab(tmp_path, conf) as (url, output, env):
        assert env["FONTCONFIG_FILE"] == str(conf)
        # the course's own check, as the learner's terminal shows it
        assert "fc-list :lang=zh" in output and INSTALL_LINE in output, output
        assert "google-noto-sans-cjk-fonts" in output  # Fedora's line too
        assert output.index(INSTALL_LINE) < output.index("open the course:")  # before the address, not lost after it
        with chromium_with(env) as page:
            seen = _open_lesson(page, url, tmp_path / "zh-no-cjk-font.png")
    # the page loaded (title, Chinese menus) but no font has the Chinese: each character is the empty box
    assert seen["control"]["differ"] == 0, seen["control"]  # the box detector can say "box"
    boxes = [ink["differ"] == 0 for ink in seen["inks"]]
    assert all(boxes), (seen["title"], seen["inks"])
    assert not any(_CJK_FAMILY.search(f) for f in seen["fonts"]), seen["fonts"]
    assert any("DejaVu" in f for f in seen["fonts"]), seen["fonts"]  # the one font there drew the Latin part


@browser
def test_with_a_cjk_font_lab_is_quiet_and_chinese_is_drawn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _require_tools()
    from bubblekit.presentation import fonts

    for name in ("FONTCONFIG_FILE", "FONTCONFIG_PATH"):  # the machine's fontconfig
        monkeypatch.delenv(name, raising=False)
    found = fonts.browser_cjk_fonts()
    if not found:
        if _on_ci():
            pytest.fail("fontconfig lists no font for Chinese (fc-list :lang=zh): CI must have one "
                        f"({INSTALL_LINE}), so this test may not skip")
        pytest.skip(f"fontconfig lists no font for Chinese here ({INSTALL_LINE})")
    with course_lab(tmp_path, None) as (url, output, env):
        assert "FONTCONFIG_FILE" not in env
        assert INSTALL_LINE not in output and "fc-list :lang=zh" not in output, output
        with chromium_with(env) as page:
            seen = _open_lesson(page, url, tmp_path / "zh-cjk-font.png")
    assert seen["control"]["differ"] == 0, seen["control"]
    assert all(ink["differ"] > 0 and ink["ink"] > 0 for ink in seen["inks"]), (seen["title"], seen["inks"])
    assert any(_CJK_FAMILY.search(f) for f in seen["fonts"]), seen["fonts"]


def test_the_figure_font_warning_is_in_english_too_for_chinese(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a CJK font for matplotlib, a Chinese lesson's warning (its first cell) is Chinese and then
    English: the machine that lacks the font may draw the Chinese sentence as boxes. Not a browser test."""
    import matplotlib
    from matplotlib import font_manager

    from bubblekit import i18n
    from bubblekit.presentation import fonts

    manager = font_manager.fontManager
    monkeypatch.setattr(manager, "ttflist", [e for e in manager.ttflist if "CJK" not in e.name
                                             and e.name not in fonts.CJK_FAMILIES])
    monkeypatch.setattr(font_manager, "findSystemFonts", lambda *a, **k: [])
    monkeypatch.delenv(fonts.FONT_ENV_VAR, raising=False)
    monkeypatch.setattr(i18n, "_listeners", [])  # only the explicit calls below look for a font
    for language in ("zh", "en"):
        monkeypatch.setattr(fonts, "_warned", False)
        with matplotlib.rc_context(), i18n.using_language(language), pytest.warns(UserWarning) as record:
            assert fonts.use_language_font("zh") is None
        text = str(record[0].message)
        assert "apt-get install fonts-noto-cjk" in text and fonts.FONT_ENV_VAR in text
        assert ("找不到中文" in text) is (language == "zh"), text
        assert text.count("No Chinese (CJK) font found") == 1, text
