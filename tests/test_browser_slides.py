"""Real-browser test of an exported slide deck (scripts/make_slides.py): it opens and moves.

Exports one deck with ``--offline`` (reveal.js beside it, fetched with ``npm pack``: the
deck needs no network, which this machine's browser does not have), opens it from disk in
Debian's Chromium through the Python ``playwright`` package (never ``playwright install``),
waits for reveal.js, checks that the first slide shows the lesson's header, presses the right
arrow and checks that the second slide, with the next ``slide`` cell, is shown. The deck is the
first workshop-track lesson that has slide metadata, or a small fixture notebook while none
has. A screenshot of each slide goes to ``test-artifacts/``.

Skipped with a loud reason without Chromium, playwright or npm (``.ci/run`` has all three).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import nbformat
import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _scripts import load_script  # noqa: E402
from test_browser import CHROMIUM, chromium_page  # noqa: E402 - the shared Chromium helpers

READY_MS = 60_000
#: The index of the slide shown (reveal.js marks it ``present``).
CURRENT = "[...document.querySelectorAll('.reveal .slides > section')].findIndex(s => s.classList.contains('present'))"


def _load(name: str, path: Path) -> ModuleType:
    return load_script(name, path)


slides = _load("test_slides_helpers", ROOT / "tests" / "test_slides.py")  # the deck reader and the fixture
ms = slides.ms


def _skip(reason: str) -> None:
    pytest.skip(f"!!! SLIDES BROWSER TEST SKIPPED: {reason}. `.ci/run` has it (never `playwright install`). !!!")


@pytest.fixture(scope="module")
def deck(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    """(notebook, its offline deck): the first marked workshop lesson, else the fixture notebook."""
    if not CHROMIUM.exists():
        _skip(f"no Chromium at {CHROMIUM} (Debian package 'chromium')")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _skip("the Python package 'playwright' is missing (pip install -e '.[test]')")
    if shutil.which("npm") is None:
        _skip("npm (Node.js) is missing: the offline deck's reveal.js is fetched with npm pack")
    folder = tmp_path_factory.mktemp("deck")
    marked = list(slides.TRACK)
    if marked:
        nb = slides._shipped(marked[0])
        (folder / "notebooks").mkdir()
        for name in os.listdir(ROOT):  # relative pictures resolve as in the course
            if name not in ("notebooks", ".git"):
                (folder / name).symlink_to(ROOT / name)
        path = folder / "notebooks" / marked[0].name
    else:
        nb = slides.fixture_notebook()
        path = folder / "99_fixture.ipynb"
    nbformat.write(nb, path)
    try:
        (exported,) = ms.export([path], folder / "slides", offline=True)
    except ms.SlidesError as err:
        if "npm" in str(err):
            _skip(f"reveal.js could not be fetched ({err})")
        raise
    return nb, exported


@pytest.fixture()
def page(deck: tuple[Any, Path]) -> Iterator[Any]:
    with chromium_page(args=["--allow-file-access-from-files"], viewport={"width": 1280, "height": 800}) as pg:
        yield pg


def _slide_cells(nb: Any) -> list[str]:
    """Ids of the cells that open a slide (the first cell always does), in order."""
    ids = []
    for index, cell in enumerate(nb.cells):
        kind = slides.slide_type(cell) or "-"
        if kind == "slide" or (index == 0 and kind not in ("skip", "notes")):
            ids.append(cell["id"])
    return ids


def test_deck_opens_and_moves_to_the_next_slide(deck: tuple[Any, Path], page: Any) -> None:
    nb, path = deck
    openers = _slide_cells(nb)
    assert len(openers) >= 2, "the deck needs two slides to move"
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(path.as_uri())
    page.wait_for_selector(".reveal.ready", timeout=READY_MS)  # reveal.js (an AMD module here: no window.Reveal)
    ARTIFACTS.mkdir(exist_ok=True)
    assert page.evaluate(CURRENT) == 0
    assert page.locator(".reveal .slides > section").count() == len(openers)
    first = page.locator(f'section.present [id="cell-id={openers[0]}"]')
    assert first.count() == 1 and first.first.is_visible(), "the first slide shows the first cell"
    page.screenshot(path=str(ARTIFACTS / "slides-1.png"))

    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => ({CURRENT}) === 1", timeout=READY_MS)
    second = page.locator(f'section.present [id="cell-id={openers[1]}"]')
    assert second.count() == 1 and second.first.is_visible(), "the second slide shows the next 'slide' cell"
    assert not page.locator(f'section.present [id="cell-id={openers[0]}"]').first.is_visible()
    page.screenshot(path=str(ARTIFACTS / "slides-2.png"))
    # MathJax and widget libraries come from the network, which the offline deck does without;
    # reveal.js itself must not fail
    assert not [e for e in errors if "reveal" in e.lower()], errors
