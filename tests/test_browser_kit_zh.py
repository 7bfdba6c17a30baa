"""Real-browser test of the Chinese classroom kit (issue 24): a Chinese slide and a Chinese classroom page.

* ``scripts/make_slides.py --lang zh --offline``'s deck of lesson 00 (``notebooks/zh/``), opened from
  disk: the page is marked ``lang="zh"`` and titled with the lesson's Chinese title; the first
  slide shows the Chinese header, the right arrow brings the next slide, and its text is Chinese.
* ``python -m bubblekit classroom --lang zh`` (the command itself, in a subprocess): it says, in
  Chinese, when the room is ready; the page it serves (Voila, ``apps/zh/explorer.ipynb``) shows
  the Chinese title and text, the explorer's Chinese readout (…% 的设备时间在空等), no code,
  and asks nothing of any host but 127.0.0.1.

Debian's Chromium (``/usr/bin/chromium``) through the Python ``playwright`` package (never
``playwright install``). Screenshots go to the test's temporary folder and to ``test-artifacts/``
(``kit-zh-*.png``). Marker ``browser``; skipped with a loud reason without Chromium, playwright,
npm (the offline deck's reveal.js is fetched once with ``npm pack``) or Voila.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _scripts import load_script  # noqa: E402
from test_browser import (  # noqa: E402 - the shared Chromium and server helpers
    ARTIFACTS,
    RENDER_S,
    SERVER_START_S,
    Server,
    _env,
    _free_port,
    _require_browser,
    chromium_page,
)

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
READY_MS = 60_000
#: Chinese characters (CJK Unified Ideographs).
_HAN = re.compile(r"[\u4e00-\u9fff]")
#: The explorer's bubble_ratio note in Chinese, e.g. "42.9% 的设备时间在空等（模拟值）".
_RATIO_NOTE = re.compile(r"\d+\.\d% 的设备时间在空等")
#: The index of the slide shown (reveal.js marks it ``present``).
CURRENT = "[...document.querySelectorAll('.reveal .slides > section')].findIndex(s => s.classList.contains('present'))"


def _load(name: str, path: Path) -> ModuleType:
    return load_script(name, path)


ms = _load("make_slides", ROOT / "scripts" / "make_slides.py")


def _shot(page: Any, tmp: Path, name: str, **kwargs: Any) -> Path:
    """A screenshot into the test's temporary folder, copied to test-artifacts/."""
    path = tmp / f"kit-zh-{name}.png"
    page.screenshot(path=str(path), **kwargs)
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copyfile(path, ARTIFACTS / path.name)
    return path


def _outside(requests: list[str]) -> list[str]:
    return sorted({u for u in requests if urllib.parse.urlparse(u).scheme in ("http", "https", "ws", "wss")
                   and urllib.parse.urlparse(u).hostname not in ("127.0.0.1", "localhost")})


# ----------------------------------------------------------------------------- the slide


@pytest.fixture(scope="module")
def zh_deck(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(Chinese lesson 00, its offline deck made by make_slides.py --lang zh --offline)."""
    _require_browser()
    if shutil.which("npm") is None:
        pytest.skip("!!! CHINESE SLIDES BROWSER TEST SKIPPED: npm (Node.js) is missing: the offline deck's reveal.js "
                    "is fetched with npm pack. !!!")
    out = tmp_path_factory.mktemp("zh-slides")
    lesson = ms.lesson_path("00", language="zh")
    try:
        assert ms.main(["--lang", "zh", "--offline", "--out", str(out), "00"]) == 0
    except ms.SlidesError as err:  # pragma: no cover - main returns 2 instead; kept for a clear skip
        pytest.skip(f"!!! CHINESE SLIDES BROWSER TEST SKIPPED: reveal.js could not be fetched ({err}) !!!")
    deck = out / f"{lesson.stem}.slides.html"
    if not deck.is_file():
        pytest.skip("!!! CHINESE SLIDES BROWSER TEST SKIPPED: the offline deck was not made (npm pack failed?) !!!")
    return lesson, deck


def test_a_chinese_slide_shows_chinese(zh_deck: tuple[Path, Path], tmp_path: Path) -> None:
    lesson, deck = zh_deck
    nb = nbformat.read(lesson, as_version=4)
    title = nb.cells[0].source.splitlines()[0].lstrip("# ").strip()
    assert _HAN.search(title), title
    with chromium_page(args=["--allow-file-access-from-files"], viewport={"width": 1280, "height": 800},
                       locale="zh-CN") as page:
        errors: list[str] = []
        requests: list[str] = []
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.on("request", lambda req: requests.append(req.url))
        page.goto(deck.as_uri())
        page.wait_for_selector(".reveal.ready", timeout=READY_MS)
        assert page.evaluate("document.documentElement.lang") == "zh"
        assert page.title() == f"{title}：幻灯片"
        assert page.evaluate(CURRENT) == 0
        heading = page.locator("section.present h1").first
        assert heading.is_visible() and title in heading.inner_text(), heading.inner_text()
        _shot(page, tmp_path, "slide-1")
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"() => ({CURRENT}) === 1", timeout=READY_MS)
        shown = page.locator(".reveal .slides > section.present").first
        text = shown.inner_text()
        assert shown.is_visible() and len(_HAN.findall(text)) >= 10, text
        assert not heading.is_visible()
        _shot(page, tmp_path, "slide-2")
    assert not [e for e in errors if "reveal" in e.lower()], errors
    # reveal.js and require.js come from beside the deck; nbconvert's template still asks the network for
    # MathJax, mermaid and the theme's web fonts, which an offline room does without (formulas show as TeX)
    assert not [u for u in _outside(requests) if "reveal" in u.lower() or "require" in u.lower()], _outside(requests)


# ----------------------------------------------------------------------------- the classroom page


@pytest.fixture(scope="module")
def zh_room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``python -m bubblekit classroom --lang zh`` on a free port; yields its URL once it says the room is ready."""
    _require_browser()
    if importlib.util.find_spec("voila") is None:
        pytest.skip("!!! CHINESE CLASSROOM BROWSER TEST SKIPPED: voila is not installed (bash course.sh setup "
                    "--classroom) !!!")
    tmp = tmp_path_factory.mktemp("zh-room")
    port = _free_port()
    env = _env(tmp)
    env["TMPDIR"] = str(tmp)
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("BUBBLEKIT_LANG", None)  # the page chooses its language itself
    log = tmp / "classroom.log"
    server = Server("bubblekit classroom --lang zh",
                    [sys.executable, "-m", "bubblekit", "classroom", "--lang", "zh", "--port", str(port)],
                    ROOT, env, log)
    try:
        deadline = time.monotonic() + SERVER_START_S + 180
        while "按 Ctrl+C 停止服务器" not in server.log_tail(20_000):
            if server.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the classroom server did not say the room is ready:\n{server.log_tail()}")
            time.sleep(0.5)
        said = server.log_tail(20_000)
        assert "教室已就绪" in said and f"在本机打开：http://127.0.0.1:{port}/" in said, said
        assert "room ready" not in said, said
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.stop()


def test_a_chinese_classroom_page_shows_chinese(zh_room: str, tmp_path: Path) -> None:
    from bubblekit.presentation import classroom

    cells = classroom.page_cells("explorer.ipynb", "zh")
    title = cells[0][1].splitlines()[0].lstrip("# ")
    with chromium_page(locale="zh-CN") as page:
        requests: list[str] = []
        page.on("request", lambda req: requests.append(req.url))
        page.goto(zh_room, timeout=RENDER_S)
        try:
            page.locator("h1", has_text=title).first.wait_for(timeout=RENDER_S)  # (its text ends with an anchor)
            readout = page.locator(".bk-pipeline-explorer .bk-readout-bubble_ratio").first
            readout.locator(".bk-value").wait_for(timeout=RENDER_S)
            page.wait_for_function(
                "() => { const i = document.querySelector('.bk-pipeline-explorer img.bk-figure');"
                " return i && i.naturalWidth > 0; }", timeout=RENDER_S)
        except Exception:
            _shot(page, tmp_path, "classroom-failure", full_page=True)
            raise
        assert page.locator("h1", has_text=title).first.is_visible()
        assert _RATIO_NOTE.search(readout.inner_text()), readout.inner_text()
        body = page.inner_text("body")
        assert "试试看" in body and len(_HAN.findall(body)) > 200, body[:500]
        assert "set_language" not in body and "pipeline_explorer(" not in body and "Traceback" not in body
        _shot(page, tmp_path, "classroom")
        page.locator(".bk-pipeline-explorer").first.screenshot(path=str(tmp_path / "kit-zh-classroom-explorer.png"))
    assert not _outside(requests), _outside(requests)
