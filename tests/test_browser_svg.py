"""Real-browser test of the SVG pipeline picture (issue 27): its text fits, in the browser's own fonts.

:func:`bubblekit.presentation.svg.pipeline_svg` cannot measure text (no font is loaded in pure
Python): it estimates widths. Here Debian's Chromium draws the pictures, English and Chinese, and
the test measures every text with ``getBBox()``: each box label inside its box, the title, metrics
line and legend inside the picture, no two legend entries overlapping. The screenshots go to the
test's temporary folder and to ``test-artifacts/``. Marker ``browser``; skipped with a loud
reason without Chromium or playwright.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, _require_browser  # noqa: E402 - shared helpers

import bubblekit as bk  # noqa: E402
from bubblekit.i18n import using_language  # noqa: E402
from bubblekit.presentation.svg import pipeline_svg  # noqa: E402

pytestmark = pytest.mark.browser

_MEASURE = """
() => {
  const out = [];
  for (const svg of document.querySelectorAll('svg.bk-pipeline')) {
    const width = svg.width.baseVal.value;
    const boxes = [...svg.querySelectorAll('rect.bk-action')].map(r => r.getBBox());
    const problems = [];
    for (const t of svg.querySelectorAll('text.bk-label')) {
      const b = t.getBBox();
      const cx = b.x + b.width / 2, cy = b.y + b.height / 2;
      const box = boxes.find(r => r.x <= cx && cx <= r.x + r.width && r.y <= cy && cy <= r.y + r.height);
      if (!box) problems.push('label ' + t.textContent + ' is on no box');
      else if (b.width > box.width + 0.5) problems.push('label ' + t.textContent + ' is ' + b.width.toFixed(1)
                                                        + ' px wide in a box of ' + box.width.toFixed(1));
    }
    for (const t of svg.querySelectorAll('text.bk-title, text.bk-metrics, .bk-legend text')) {
      const b = t.getBBox();
      if (b.x + b.width > width + 0.5) problems.push(t.textContent + ' ends at ' + (b.x + b.width).toFixed(1)
                                                    + ' px, past the width ' + width);
    }
    const legend = [...svg.querySelectorAll('.bk-legend text')].map(t => t.getBBox());
    for (let i = 1; i < legend.length; i++) {
      const a = legend[i - 1], b = legend[i];
      if (Math.abs(a.y - b.y) < 1 && a.x + a.width > b.x - 22) problems.push('legend entries ' + (i - 1) + ' and ' + i + ' overlap');
    }
    out.push({labels: svg.querySelectorAll('text.bk-label').length, problems});
  }
  return out;
}
"""


def _pictures() -> list[str]:
    cases = [bk.simulate(bk.schedule("1f1b", 4, 8), bk.Costs(f=1, b=2)),
             bk.simulate(bk.schedule("interleaved", 4, 8, 2)),
             bk.simulate(bk.schedule("dualpipev", 4, 8))]
    out = []
    for language in ("en", "zh"):
        with using_language(language):
            out += [pipeline_svg(r).svg for r in cases]
            out.append(pipeline_svg(cases[1], width=420).svg)  # a narrow picture wraps its title
    return out


def test_the_svg_picture_s_text_fits_in_the_browser(tmp_path: Path) -> None:
    _require_browser()
    from playwright.sync_api import sync_playwright

    pictures = _pictures()
    page_html = "<!doctype html><meta charset='utf-8'><body style='margin:0'>" + "".join(
        f"<div>{svg}</div>" for svg in pictures) + "</body>"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1000, "height": 800})
            page.set_content(page_html)
            page.wait_for_timeout(300)
            found = page.evaluate(_MEASURE)
            for folder in (tmp_path, ARTIFACTS):
                folder.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(folder / "svg-pictures.png"), full_page=True)
        finally:
            browser.close()
    assert len(found) == len(pictures)
    assert all(f["labels"] > 0 for f in found)
    problems = [p for f in found for p in f["problems"]]
    assert not problems, "\n".join(problems)


_FRAMES = "() => [...document.querySelectorAll('.bk-frame')].map(g => getComputedStyle(g).visibility === 'visible')"


def test_the_svg_animation_plays_one_frame_at_a_time_and_stays_on_the_last(tmp_path: Path) -> None:
    """The browser edition's animation (``bk.plotting.pipeline_animation_html`` without matplotlib):
    CSS shows its frames one after the other, then the whole step; the button plays it again."""
    _require_browser()
    from playwright.sync_api import sync_playwright

    from bubblekit.presentation.svg_plotting import pipeline_animation_html

    r = bk.simulate(bk.schedule("gpipe", p=4, m=4), bk.preset("b=2f"))
    html = pipeline_animation_html(r, frames=30, interval_ms=100)  # 22 frames: 2.2 s
    page_html = "<!doctype html><meta charset='utf-8'><body style='margin:0'>" + html + "</body>"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1000, "height": 400})
            page.set_content(page_html)
            shown = []
            for _ in range(6):
                page.wait_for_timeout(250)
                shown.append(page.evaluate(_FRAMES))
            page.wait_for_timeout(1200)
            end = page.evaluate(_FRAMES)
            for folder in (tmp_path, ARTIFACTS):
                folder.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(folder / "svg-animation-end.png"))
            page.click("button.bk-replay")
            page.wait_for_timeout(150)
            again = page.evaluate(_FRAMES)
        finally:
            browser.close()
    assert all(sum(frame) == 1 for frame in shown), [sum(frame) for frame in shown]  # one frame at a time
    order = [frame.index(True) for frame in shown]
    assert order == sorted(order) and order[0] < order[-1] < 21, order  # forward in time, not yet at the end
    assert end == [False] * 21 + [True]  # then the whole step, and it stays
    assert sum(again) == 1 and again.index(True) < 10  # played again from the start
