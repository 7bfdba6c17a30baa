"""Every lesson follows the course's lesson template (CONTRIBUTING, "Adding a lesson").

For each lesson in notebooks/ (as the course ships it):

* the first cell is the header: ``# NN · Title`` with **Goal:**, **You need:** and **Time:** lines;
* a ``## Recap`` cell holds 3 to 5 bullet takeaways;
* the core path (the cells between the header and the recap) has at most ``MAX_CORE_CELLS`` cells;
* no code cell is longer than ``MAX_CODE_LINES`` lines (deep dives included);
* after the recap, every section is a deep dive: its heading is ``## Deep dive · <title>`` and the
  line after it says the section is optional;
* the last cell is the footer with the next step (exercises link or next lesson).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from bubblekit.course.workspace import course_notebooks

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = {nb.path: nb.text for nb in course_notebooks(ROOT, ("notebooks",))}
LESSONS = sorted(p for p in SHIPPED if re.match(r"\d\d[a-z]?_", p.name) and p.parent.name == "notebooks")
#: (The Chinese lessons in notebooks/zh/ mirror these cell for cell: tests/test_zh_parity.py checks their structure.)

MAX_CORE_CELLS = 25
MAX_CODE_LINES = 25

def cells(path: Path) -> list[nbformat.NotebookNode]:
    return list(nbformat.reads(SHIPPED[path], as_version=4).cells)


def text(cell: nbformat.NotebookNode) -> str:
    return cell.source if isinstance(cell.source, str) else "".join(cell.source)


def recap_index(nb: list[nbformat.NotebookNode]) -> int:
    found = [i for i, c in enumerate(nb) if c.cell_type == "markdown" and text(c).lstrip().startswith("## Recap")]
    assert len(found) == 1, f"expected exactly one '## Recap' cell, found {len(found)}"
    return found[0]


def template_lessons() -> list[Path]:
    return LESSONS


@pytest.mark.parametrize("path", template_lessons(), ids=lambda p: p.name)
def test_header_states_goal_prerequisites_and_time(path: Path) -> None:
    head = text(cells(path)[0])
    assert re.match(r"# \d\d[a-z]? · \S", head), "the first cell starts with '# NN · Title'"
    for marker in ("**Goal:**", "**You need:**", "**Time:**"):
        assert marker in head, f"the header has no {marker} line"
        # a paragraph of its own: consecutive lines would render as one run-on paragraph
        assert re.search(r"(^|\n\n)" + re.escape(marker), head), f"{marker} does not start a paragraph"
    assert re.search(r"\*\*Time:\*\*[^\n]*\d+\s*min", head), "the Time line states minutes"


@pytest.mark.parametrize("path", template_lessons(), ids=lambda p: p.name)
def test_recap_has_three_to_five_takeaways(path: Path) -> None:
    nb = cells(path)
    bullets = [ln for ln in text(nb[recap_index(nb)]).splitlines() if re.match(r"\s*([-*]|\d+\.)\s", ln)]
    assert 3 <= len(bullets) <= 5, f"the recap has {len(bullets)} takeaways; 3 to 5 are wanted"


@pytest.mark.parametrize("path", template_lessons(), ids=lambda p: p.name)
def test_core_path_is_short(path: Path) -> None:
    nb = cells(path)
    core = recap_index(nb) - 1
    assert core <= MAX_CORE_CELLS, f"the core path has {core} cells (at most {MAX_CORE_CELLS}): move material to a deep dive"


@pytest.mark.parametrize("path", template_lessons(), ids=lambda p: p.name)
def test_code_cells_are_short(path: Path) -> None:
    long = [(i, len(text(c).splitlines())) for i, c in enumerate(cells(path))
            if c.cell_type == "code" and len(text(c).splitlines()) > MAX_CODE_LINES]
    assert not long, f"code cells over {MAX_CODE_LINES} lines (cell index, lines): {long}"


@pytest.mark.parametrize("path", template_lessons(), ids=lambda p: p.name)
def test_sections_after_the_recap_are_marked_deep_dives(path: Path) -> None:
    nb = cells(path)
    after = nb[recap_index(nb) + 1:-1]
    for c in after:
        if c.cell_type != "markdown":
            continue
        for heading in re.findall(r"(?m)^## .*$", text(c)):
            assert heading.startswith("## Deep dive · "), f"section {heading!r} after the recap is not a deep dive"
            rest = text(c).split(heading, 1)[1].strip().splitlines()
            assert rest and "optional" in rest[0].lower(), f"{heading!r}: the next line must say it is optional"


@pytest.mark.parametrize("path", template_lessons(), ids=lambda p: p.name)
def test_footer_points_onward(path: Path) -> None:
    last = cells(path)[-1]
    assert last.cell_type == "markdown" and re.search(r"\*\*(Next|Exercises)", text(last)), \
        "the last cell is the footer (exercises and/or next lesson)"

