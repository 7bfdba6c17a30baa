"""Real-browser test: check marks render with a font that has them (no empty boxes).

JupyterLab runs a small notebook with one right and one wrong ``check(...)`` and a
``progress(...)``, in Debian's Chromium (``/usr/bin/chromium``, driven by the Python
``playwright`` package; never ``playwright install``), the way ``tests/test_browser.py``
drives it (its server and browser helpers are reused). For every mark (``.bubblekit-mark``)
the test asks Chromium which platform font drew it (DevTools ``CSS.getPlatformFontsForNode``)
and draws the mark and a code point no font has (U+10FFFD) on a canvas in the mark's own
font: the mark must be drawn by a real font, with ink, and differ from the missing-glyph box.
The screenshot goes to ``test-artifacts/checks-marks.png``.

Skipped with a loud reason without Chromium or playwright (``.ci/run`` installs both).
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from bubblekit.course.checks import _display

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_browser import (  # noqa: E402 - the shared Chromium + JupyterLab helpers
    ARTIFACTS,
    RENDER_S,
    Server,
    _dismiss_news_toast,
    _env,
    _free_port,
    _require_browser,
    _run_all_cells,
    chromium_page,
    lab_command,
)

pytestmark = pytest.mark.browser

NOTEBOOK = "checks.ipynb"
CELLS = [
    "from bubblekit.course.checks import check, progress",
    'check("00.1", 0.273)',
    'check("00.1", 0.5)',
    'check("00.1", 0.27)',
    'progress("00")',
]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _require_browser()
    d = tmp_path_factory.mktemp("checks-app")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, d / NOTEBOOK)
    ARTIFACTS.mkdir(exist_ok=True)
    return d


@pytest.fixture(scope="module")
def lab(workdir: Path) -> Iterator[str]:
    port, token = _free_port(), secrets.token_hex(16)
    server = Server("jupyter lab", lab_command(workdir, port, token), workdir, _env(workdir), workdir / "lab.log")
    try:
        server.wait_http(f"http://127.0.0.1:{port}/api/status?token={token}")
        yield f"http://127.0.0.1:{port}/lab/tree/{NOTEBOOK}?token={token}"
    finally:
        server.stop()


@pytest.fixture(scope="module")
def page(lab: str) -> Iterator[Any]:
    with chromium_page() as pg:
        yield pg


_INK = """([mark, font]) => {
    const draw = (text) => {
        const c = document.createElement('canvas');
        c.width = 64; c.height = 64;
        const g = c.getContext('2d');
        g.font = font; g.textBaseline = 'middle'; g.fillStyle = '#000';
        g.fillText(text, 8, 32);
        return Array.from(g.getImageData(0, 0, 64, 64).data.filter((_, i) => i % 4 === 3));
    };
    const a = draw(mark), missing = draw(String.fromCodePoint(0x10FFFD));
    let differ = 0, ink = 0;
    for (let i = 0; i < a.length; i++) { if (a[i] !== missing[i]) differ++; if (a[i] > 0) ink++; }
    const g = document.createElement('canvas').getContext('2d');
    g.font = font;
    return {differ, ink, width: g.measureText(mark).width,
            missingWidth: g.measureText(String.fromCodePoint(0x10FFFD)).width};
}"""


def _wait_for_outputs(page: Any) -> None:
    deadline_ms = RENDER_S
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=deadline_ms)
    _dismiss_news_toast(page)
    _run_all_cells(page)
    for _ in range(3):
        try:
            page.wait_for_selector(".bubblekit-progress", timeout=deadline_ms // 3)
            return
        except Exception:
            dialog = page.locator(".jp-Dialog .jp-mod-accept")
            if dialog.count():
                dialog.first.click()
            _run_all_cells(page)
    page.screenshot(path=str(ARTIFACTS / "checks-failure.png"), full_page=True)
    pytest.fail("the check outputs did not appear in JupyterLab (see test-artifacts/checks-failure.png)")


def test_check_marks_render_with_a_font_that_has_them(page: Any, lab: str) -> None:
    page.goto(lab, timeout=60_000)
    _wait_for_outputs(page)
    for status in ("correct", "wrong", "close"):
        page.wait_for_selector(f".bubblekit-check-{status} .bubblekit-mark", timeout=RENDER_S)
    page.screenshot(path=str(ARTIFACTS / "checks-marks.png"), full_page=True)

    texts = page.eval_on_selector_all(".bubblekit-check", "els => els.map(e => e.innerText)")
    assert any("00.1 correct" in t for t in texts) and any("not yet" in t and "hint" in t for t in texts), texts

    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    node_ids = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": ".bubblekit-mark"})["nodeIds"]
    marks = page.eval_on_selector_all(
        ".bubblekit-mark",
        "els => els.map(e => { const s = getComputedStyle(e);"
        " return {text: e.innerText, font: `${s.fontWeight} ${s.fontSize} ${s.fontFamily}`}; })",
    )
    assert len(marks) == len(node_ids) >= 4, marks  # three checks and the progress line
    seen = set()
    report = []
    for node_id, mark in zip(node_ids, marks):
        assert mark["text"] in _display.MARKS.values(), mark
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node_id})["fonts"]
        families = [f["familyName"] for f in fonts if f.get("glyphCount", 0) > 0]
        assert families and not any("last resort" in f.lower() for f in families), (mark, fonts)
        ink = page.evaluate(_INK, [mark["text"], mark["font"]])
        assert ink["ink"] > 0, (mark, ink)                 # something is drawn
        assert ink["differ"] > 0, (mark, ink, families)    # and it is not the missing-glyph box
        seen.add(mark["text"])
        report.append(f"{mark['text']} drawn by {', '.join(families)} (css: {mark['font']}; ink {ink['ink']} px, "
                      f"{ink['differ']} px unlike the missing-glyph box)")
    assert {_display.MARKS["correct"], _display.MARKS["wrong"]} <= seen
    # The detector can fail: another code point no font has draws the same box as U+10FFFD.
    font = marks[0]["font"]
    control = page.evaluate(_INK, [chr(0x10FFFE), font])
    assert control["differ"] == 0, control
    emoji = page.evaluate(_INK, ["\u2705", font])  # the old mark, for the record (no assertion: fonts vary)
    report.append(f"control U+10FFFE: {control['differ']} px unlike the missing-glyph box; the old emoji mark "
                  f"U+2705: {emoji['differ']} px unlike it ({'drawn' if emoji['differ'] else 'an empty box'} here)")
    (ARTIFACTS / "checks-marks.txt").write_text("\n".join(report) + "\n", encoding="utf-8")
