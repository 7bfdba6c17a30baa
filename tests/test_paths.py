"""The learning paths (bubblekit.course.paths) and the workshop deck's cell metadata.

* the workshop is 3 hours and the interview sprint about 2 h 40 min, and every step names a lesson
  the course has;
* the lessons' header times are read as stated, and the full path sums them;
* in every lesson of the workshop that follows the lesson template (its header states a time),
  each cell carries Jupyter slide metadata, deep dives are skipped in the deck, the
  ``workshop`` tag sits only on the header, the core path and the recap, and where the
  workshop takes the whole core path every core cell has the tag (the footer, the last cell,
  may close the deck or be skipped).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bubblekit.course import paths
from bubblekit.course.workspace import course_notebooks
from bubblekit.i18n import using_language

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = {nb.path: nb.text for nb in course_notebooks(ROOT, ("notebooks",))}
SLIDE_TYPES = {"slide", "subslide", "fragment", "-", "skip", "notes"}


def _lesson(nn: str) -> Path:
    found = [p for p in SHIPPED if p.name.startswith(nn + "_") and p.parent == ROOT / "notebooks"]
    assert len(found) == 1, f"lesson {nn}: found {found}"
    return found[0]


def test_tracks_last_as_planned_and_name_existing_lessons() -> None:
    assert sum(s.minutes for s in paths.WORKSHOP) == 180
    assert 140 <= sum(s.minutes for s in paths.SPRINT) <= 160
    for step in paths.WORKSHOP + paths.SPRINT:
        if step.lesson == "break":
            continue
        if step.lesson == "10":
            assert (ROOT / "solutions" / "10_interview_bank.ipynb").is_file()
        else:
            _lesson(step.lesson)
    assert [s.lesson for s in paths.SPRINT][-1] == "10"


def test_the_sprint_fits_the_bank_with_times_a_candidate_can_keep() -> None:
    """Issue 21: the sprint's lessons take the time their headers state, its questions exist in the bank and need
    only those lessons, each has 3 minutes or more, and the bank's introduction (both editions) lists them."""
    from bubblekit.course.checks import lesson10

    stated = {r["lesson"]: r["core"] for r in paths.lesson_times(ROOT / "notebooks")}
    for step in paths.SPRINT[:-1]:
        assert step.part == "core path" and step.minutes == stated[step.lesson], step
    ids = [i for i, _ in paths.SPRINT_QUESTIONS]
    bank = {item.id: item for item in lesson10.BANK}
    assert set(ids) <= set(bank) and len(set(ids)) == len(ids)
    assert all(minutes >= 3 for _, minutes in paths.SPRINT_QUESTIONS)
    assert paths.SPRINT[-1].minutes == sum(m for _, m in paths.SPRINT_QUESTIONS)
    assert {bank[i].category for i in ids} >= {"concepts", "derivations", "calculations", "trade-offs", "whiteboard"}
    for path in (ROOT / "solutions" / "10_interview_bank.ipynb", ROOT / "solutions" / "zh" / "10_interview_bank.ipynb"):
        intro = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
        listed = re.findall(r"10\.\d+", intro.split("**Interview sprint**" if "zh" not in path.parts else "**面试冲刺**")[1])
        assert listed[:len(ids)] == ids, (path, listed)


def test_readme_states_the_tracks_as_the_course_defines_them() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert paths.track_text(paths.WORKSHOP) in readme
    assert paths.track_text(paths.SPRINT) in readme


@pytest.mark.parametrize(("header", "times"), [
    ("# 01 · X\n\n**Time:** about 25 min for the core path (+ about 10 min of optional deep dives).", (25, 10)),
    ("**Time:** about 10 min.", (10, None)),
    ("**Goal:** no time here", (None, None)),
    ("**Time:** 30 min for the core path (+ 5 min deep dives)\n**Other:** 99 min", (30, 5)),
])
def test_header_time(header: str, times: tuple[int | None, int | None]) -> None:
    assert paths.header_time(header) == times


def test_full_path_sums_the_stated_times(tmp_path: Path) -> None:
    for name, head in (("00_a.ipynb", "# 00 · A\n**Time:** about 10 min."),
                       ("01_b.ipynb", "# 01 · B\n**Time:** about 20 min (+ about 5 min of deep dives)"),
                       ("02_c.ipynb", "# 02 · C\nno time yet")):
        (tmp_path / name).write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": head}]}))
    lp = paths.learning_paths(tmp_path, bank=tmp_path / "none.ipynb")
    assert lp.full_minutes == 35 and lp.unstated == ["02"]
    assert lp.full.column("both") == [10, 25, None] and lp.full.column("title") == ["A", "B", "C"]
    assert "02 state no time yet" in lp.full.note and "35 min" in lp.full.note
    assert lp.workshop_minutes == 180 and "3 h 00 min" in repr(lp) and "<table" in lp._repr_html_()
    with pytest.raises(FileNotFoundError, match="folder"):
        paths.lesson_times(tmp_path / "missing")
    with pytest.raises(TypeError, match="header"):
        paths.header_time(None)  # type: ignore[arg-type]


def test_the_course_lessons_parse() -> None:
    times = paths.lesson_times()
    assert times.column("lesson")[:3] == ["00", "01", "02"]
    for row in times:
        head = json.loads(SHIPPED[_lesson(row["lesson"])])["cells"][0]["source"]
        head = head if isinstance(head, str) else "".join(head)
        if "**Time:**" in head:
            assert row["core"] is not None, f"lesson {row['lesson']}: its Time line names no minutes"


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return src if isinstance(src, str) else "".join(src)


def _template_lessons_in_the_workshop() -> list[tuple[Path, str]]:
    out = []
    for step in paths.WORKSHOP:
        if step.lesson == "break":
            continue
        path = _lesson(step.lesson)
        cells = json.loads(SHIPPED[path])["cells"]
        if cells and "**Time:**" in _source(cells[0]):
            out.append((path, step.part))
    return out


@pytest.mark.parametrize(("path", "part"), _template_lessons_in_the_workshop(), ids=lambda x: getattr(x, "name", x))
def test_workshop_lessons_carry_slide_metadata_and_tags(path: Path, part: str) -> None:
    cells = json.loads(SHIPPED[path])["cells"]
    recap = next(i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and _source(c).lstrip().startswith("## Recap"))
    deep = next((i for i, c in enumerate(cells) if re.match(r"## Deep dive · ", _source(c).lstrip())), len(cells) - 1)
    for i, cell in enumerate(cells):
        kind = cell.get("metadata", {}).get("slideshow", {}).get("slide_type")
        assert kind in SLIDE_TYPES, f"cell {i} has no slide metadata (slideshow.slide_type), got {kind!r}"
        tagged = "workshop" in cell.get("metadata", {}).get("tags", [])
        if "check" in cell.get("metadata", {}).get("tags", []):
            # a collapsed check cell verifies the lesson; it is not shown in a workshop
            assert kind == "skip" and not tagged, f"cell {i} is a check cell: slide type 'skip', no 'workshop' tag"
            continue
        if i == 0:
            assert kind == "slide" and tagged, "the header opens the deck"
        elif i < recap:
            if part == "core path":
                assert tagged, f"cell {i} is on the core path: tag it 'workshop'"
        elif deep <= i < len(cells) - 1:
            assert kind == "skip" and not tagged, f"cell {i} is in a deep dive: slide type 'skip', no tag"
        elif i > recap:
            assert not tagged, f"cell {i} is after the recap: no 'workshop' tag"
    assert _source(cells[recap]) and cells[recap]["metadata"]["slideshow"]["slide_type"] == "slide"


_CJK = re.compile(r"[\u3400-\u9fff]")


def _header_title(path: Path) -> str:
    head = json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"]
    head = head if isinstance(head, str) else "".join(head)
    found = re.search(r"^#\s*\d\d[a-z]?\s*·\s*(.+?)\s*$", head, re.MULTILINE)
    assert found, path
    return found.group(1)


def test_each_edition_shows_its_own_language() -> None:
    """English: English titles (no Chinese gloss in brackets); Chinese: the zh twins' titles and Chinese words."""
    with using_language("en"):
        english = paths.learning_paths()
        text_en = repr(english) + english._repr_html_()
    assert not _CJK.search(text_en), [line for line in text_en.splitlines() if _CJK.search(line)]
    assert "04 · Schedules compared" in text_en and "10 · The interview bank" in text_en
    with using_language("zh"):
        chinese = paths.learning_paths()
        text_zh = repr(chinese)
    lessons = chinese.full.column("lesson")
    twins = {p.name[:p.name.index("_")]: p for p in (ROOT / "notebooks" / "zh").glob("[0-9][0-9]*_*.ipynb")}
    assert chinese.full.column("title") == [_header_title(twins[n]) if n in twins else None for n in lessons]
    assert "04 · 调度对比" in text_zh and "10 · 面试题库" in text_zh and "休息" in text_zh
    assert ": solutions" not in text_en and "参考答案" not in text_zh, "the bank's title is shown without its solutions suffix"
    # the same minutes in both editions (read from the English headers), and no English word left but names
    assert chinese.full.column("both") == english.full.column("both")
    assert (chinese.full_minutes, chinese.workshop_minutes, chinese.sprint_minutes) == \
        (english.full_minutes, english.workshop_minutes, english.sprint_minutes)
    assert set(re.findall(r"[A-Za-z]{3,}", text_zh)) <= {"workshop"}  # the tag's name stays English


def _stated_dive_minutes(path: Path) -> list[tuple[str, int | None]]:
    """Each ``## Deep dive · TITLE`` cell's title and the minutes its first line states (``about N min``), or ``None``."""
    out: list[tuple[str, int | None]] = []
    for cell in json.loads(SHIPPED[path])["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        for found in re.finditer(r"(?m)^## Deep dive · ([^\n]*)\n+([^\n]*)", _source(cell)):
            minutes = re.search(r"about (\d+) min", found.group(2))
            out.append((found.group(1).strip(), int(minutes.group(1)) if minutes else None))
    return out


@pytest.mark.parametrize("path", sorted(p for p in SHIPPED if p.parent.name == "notebooks"
                                        and re.match(r"\d\d[a-z]?_", p.name)), ids=lambda p: p.name)
def test_the_headers_deep_dive_minutes_add_up(path: Path) -> None:
    """Twelfth review, C2 (lesson 05): where every deep dive but the untimed Explore states its minutes, the header's
    deep-dive minutes are their sum (00: the glossary; 01–05 and 07)."""
    dives = _stated_dive_minutes(path)
    timed = [n for title, n in dives if title != "Explore"]
    _, header = paths.header_time(_source(json.loads(SHIPPED[path])["cells"][0]))
    if not timed or None in timed or header is None:
        pytest.skip("the deep dives do not all state their minutes")
    assert header == sum(n for n in timed if n is not None), f"the header says {header} min, the deep dives {dives}"


def test_readmes_count_the_banks_questions_and_checks() -> None:
    """The READMEs say how many of the interview bank's questions check themselves: counted here."""
    import json
    import re

    root = Path(__file__).resolve().parent.parent
    bank = json.loads((root / "solutions" / "10_interview_bank.ipynb").read_text(encoding="utf-8"))
    text = "\n".join("".join(c["source"]) for c in bank["cells"])
    questions = set(re.findall(r"(?m)^#+\s*(10\.\d+)\b", text))
    checked = set(re.findall(r"check\(\s*[\"'](10\.\d+)", text))
    assert (len(questions), len(checked)) == (46, 41), (len(questions), len(checked))
    en = (root / "README.md").read_text(encoding="utf-8")
    zh = (root / "README.zh-CN.md").read_text(encoding="utf-8")
    assert f"{len(questions)} questions, {len(checked)} of which check themselves" in " ".join(en.split())
    assert f"{len(questions)} 道题里 {len(checked)} 道能自动检查" in zh
