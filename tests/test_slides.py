"""Slides from the lessons: scripts/make_slides.py exports a reveal.js deck per workshop-track lesson.

* Every lesson of the workshop track (``make_slides.WORKSHOP_TRACK``) carries
  slide metadata as CONTRIBUTING states it: the header is a ``slide``, every core-path cell
  has a ``slideshow.slide_type``, deep dives are ``skip``, and cells tagged ``workshop`` are
  shown (set-up cells of the track may be tagged and ``skip``); its deck (``jupyter nbconvert --to slides``) holds every slide-marked
  cell, each ``slide`` cell opening the next slide in order, ``notes`` as speaker notes and no
  ``skip`` cell.
* The deck check itself is tested on a small notebook with every kind of slide mark, and shown
  to fail when a marked cell is missing.
"""

from __future__ import annotations

import os
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType
from typing import Any

import nbformat
import pytest
from _scripts import load_script
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from bubblekit.course.workspace import course_notebooks

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "make_slides.py"


def _load() -> ModuleType:
    return load_script("make_slides", SCRIPT)


ms = _load()
SHIPPED = {nb.path: nb for nb in course_notebooks(ROOT, ("notebooks",))}
TRACK = [ms.lesson_path(n) for n, _ in ms.WORKSHOP_TRACK]
WORKSHOP_TAG = "workshop"
MARKS = ("slide", "subslide", "fragment", "-", "skip", "notes")


# ----------------------------------------------------------------------------- reading notebooks and decks


def slide_type(cell: Any) -> str | None:
    """The cell's ``metadata.slideshow.slide_type``, or None when it has none."""
    value = cell.get("metadata", {}).get("slideshow", {}).get("slide_type")
    return str(value) if value is not None else None


def marked(nb: Any) -> list[tuple[str, str]]:
    """``(cell id, slide type)`` of the cells with slide metadata."""
    return [(c["id"], t) for c in nb.cells if (t := slide_type(c)) is not None]


class Deck(HTMLParser):
    """Where each cell is in an exported deck: ``cells[id] = (slide h, subslide v, in speaker notes)``.

    nbconvert writes a slide as a top-level ``<section>`` holding one ``<section>`` per subslide,
    speaker notes as ``<aside class="notes">`` and each cell as an element ``id="cell-id=<id>"``.
    """

    def __init__(self, text: str) -> None:
        super().__init__()
        self.cells: dict[str, tuple[int, int, bool]] = {}
        self._open: list[str] = []  # the open <section> and <aside class="notes"> elements
        self._h, self._v = -1, -1
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "section":
            depth = self._open.count("section")
            if depth == 0:
                self._h, self._v = self._h + 1, -1
            elif depth == 1:
                self._v += 1
            self._open.append("section")
        elif tag == "aside":
            self._open.append("notes" if "notes" in (attributes.get("class") or "").split() else "aside")
        ident = attributes.get("id") or ""
        if ident.startswith("cell-id=") and "section" in self._open:
            self.cells[ident[len("cell-id="):]] = (self._h, max(self._v, 0), "notes" in self._open)

    def handle_endtag(self, tag: str) -> None:
        names = ("section",) if tag == "section" else ("notes", "aside") if tag == "aside" else ()
        for i in range(len(self._open) - 1, -1, -1):
            if self._open[i] in names:
                del self._open[i:]
                break


def check_deck(nb: Any, deck_text: str) -> None:
    """Assert that the deck holds every slide-marked cell of ``nb`` where its mark puts it."""
    deck = Deck(deck_text)
    problems: list[str] = []
    h = -1
    for index, cell in enumerate(nb.cells):
        kind = slide_type(cell) or "-"
        if index == 0 and kind not in ("skip", "notes"):
            kind = "slide"  # nbconvert opens the deck with the first cell
        where = deck.cells.get(cell["id"])
        if kind == "slide":
            h += 1
        if kind == "skip":
            if where is not None:
                problems.append(f"cell {index} (id {cell['id']}) is 'skip' but is in the deck")
            continue
        if slide_type(cell) is None:
            continue  # unmarked cells are not this test's business (nbconvert appends them to the slide)
        if where is None:
            problems.append(f"cell {index} (id {cell['id']}, {kind!r}) is not in the deck")
            continue
        if where[0] != h:
            problems.append(f"cell {index} (id {cell['id']}, {kind!r}) is on slide {where[0]}, expected slide {h}")
        if (kind == "notes") != where[2]:
            problems.append(f"cell {index} (id {cell['id']}, {kind!r}) is {'' if where[2] else 'not '}in the speaker notes")
    assert not problems, "the deck does not match the slide marks:\n  " + "\n  ".join(problems)


def fixture_notebook() -> Any:
    """A small notebook with every kind of slide mark: three slides, a subslide, fragments, notes, skips."""
    cells = [
        (new_markdown_cell("# 99 · A fixture deck\n\nThe first slide."), "slide"),
        (new_code_cell("import bubblekit as bk  # set-up only"), "skip"),
        (new_markdown_cell("## Idea one\n\nA bubble is idle time."), "slide"),
        (new_code_cell("print(bk.bubble_ratio(4, 8))"), "fragment"),
        (new_markdown_cell("Say: count the idle boxes first."), "notes"),
        (new_markdown_cell("### A closer look"), "subslide"),
        (new_markdown_cell("More of the same slide."), "-"),
        (new_markdown_cell("## Idea two\n\nMore microbatches, smaller bubble."), "slide"),
        (new_markdown_cell("## Deep dive · not in the deck\n\nOptional."), "skip"),
    ]
    nb = new_notebook(cells=[c for c, _ in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for i, (cell, kind) in enumerate(cells):
        cell["id"] = f"fixture-{i}"
        cell.metadata["slideshow"] = {"slide_type": kind}
        if kind != "skip":
            cell.metadata["tags"] = [WORKSHOP_TAG]
    return nb


# ----------------------------------------------------------------------------- the check, on the fixture


@pytest.fixture(scope="module")
def fixture_deck(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, str]:
    folder = tmp_path_factory.mktemp("fixture")
    nb = fixture_notebook()
    path = folder / "99_fixture.ipynb"
    nbformat.write(nb, path)
    (deck,) = ms.export([path], folder / "slides")
    return nb, deck.read_text(encoding="utf-8")


def test_fixture_deck_holds_every_marked_cell_in_place(fixture_deck: tuple[Any, str]) -> None:
    nb, text = fixture_deck
    check_deck(nb, text)
    deck = Deck(text)
    assert max(h for h, _, _ in deck.cells.values()) == 2  # three slides
    assert deck.cells["fixture-4"][2], "notes are speaker notes"
    assert "fixture-1" not in deck.cells and "fixture-8" not in deck.cells


def test_the_check_fails_when_a_marked_cell_is_missing_or_misplaced(fixture_deck: tuple[Any, str]) -> None:
    nb, text = fixture_deck
    with pytest.raises(AssertionError, match="is not in the deck"):
        check_deck(nb, text.replace('id="cell-id=fixture-6"', 'id="cell-id=gone"'))
    moved = nbformat.from_dict(nb)
    moved.cells[7].metadata["slideshow"]["slide_type"] = "-"  # the deck still opens a slide there
    with pytest.raises(AssertionError, match="expected slide"):
        check_deck(moved, text)
    skipped = nbformat.from_dict(nb)
    skipped.cells[3].metadata["slideshow"]["slide_type"] = "skip"
    with pytest.raises(AssertionError, match="is 'skip' but is in the deck"):
        check_deck(skipped, text)


def test_index_lists_the_decks_in_workshop_order(tmp_path: Path) -> None:
    for name in ("03_b.slides.html", "01_a.slides.html"):
        (tmp_path / name).write_text("deck")
    ms._write_index(tmp_path, [])
    index = (tmp_path / "index.html").read_text()
    assert index.index("01_a") < index.index("03_b") < index.index("break")


def test_workshop_track_is_three_hours_of_existing_lessons() -> None:
    assert sum(m for _, m in ms.WORKSHOP_TRACK) + ms.BREAK_MINUTES == 180
    assert [p.name for p in TRACK] == sorted(p.name for p in TRACK)
    with pytest.raises(ms.SlidesError, match="'42'"):
        ms.lesson_path("42")


# ----------------------------------------------------------------------------- the lessons


def _shipped(path: Path) -> Any:
    return nbformat.reads(SHIPPED[path].text, as_version=4)


def _text(cell: Any) -> str:
    return cell.source if isinstance(cell.source, str) else "".join(cell.source)


@pytest.mark.parametrize("path", TRACK, ids=lambda p: p.name)
def test_lesson_carries_the_workshop_slide_marks(path: Path) -> None:
    nb = _shipped(path)
    cells = nb.cells
    assert slide_type(cells[0]) == "slide", "the header cell is the first slide (slide_type 'slide')"
    workshop = [i for i, c in enumerate(cells) if WORKSHOP_TAG in c.get("metadata", {}).get("tags", [])]
    assert workshop, f"no cell is tagged {WORKSHOP_TAG!r}"
    bad = [(i, slide_type(c)) for i, c in enumerate(cells) if slide_type(c) is not None and slide_type(c) not in MARKS]
    assert not bad, f"unknown slide types (cell, type): {bad}; use one of {MARKS}"
    shown = [i for i in workshop if slide_type(cells[i]) not in (None, "skip")]
    assert shown, f"every cell tagged {WORKSHOP_TAG!r} is skipped: the deck would be empty"
    recap = [i for i, c in enumerate(cells) if c.cell_type == "markdown" and _text(c).lstrip().startswith("## Recap")]
    end = recap[0] if recap else len(cells) - 1
    unmarked = [i for i in range(end + 1) if slide_type(cells[i]) is None]
    assert not unmarked, f"core-path cells without slide metadata: {unmarked}"
    if recap:
        deep = [i for i in range(recap[0] + 1, len(cells) - 1) if slide_type(cells[i]) != "skip"]
        assert not deep, f"deep-dive cells not marked 'skip': {deep}"


@pytest.fixture(scope="module")
def lesson_decks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Decks of the marked lessons, exported from the course's (committed) versions."""
    lessons = list(TRACK)
    if not lessons:
        return {}
    folder = tmp_path_factory.mktemp("course")
    (folder / "notebooks").mkdir()
    for name in os.listdir(ROOT):  # the lessons' relative links and pictures resolve as in the course
        if name not in ("notebooks", ".git") and not (folder / name).exists():
            (folder / name).symlink_to(ROOT / name)
    paths = []
    for path in lessons:
        paths.append(folder / "notebooks" / path.name)
        paths[-1].write_text(SHIPPED[path].text, encoding="utf-8")
    decks = ms.export(paths, folder / "slides")
    return {path.name: deck.read_text(encoding="utf-8") for path, deck in zip(lessons, decks)}


@pytest.mark.parametrize("path", TRACK, ids=lambda p: p.name)
def test_lesson_deck_holds_every_slide_marked_cell(path: Path, lesson_decks: dict[str, str]) -> None:
    check_deck(_shipped(path), lesson_decks[path.name])
