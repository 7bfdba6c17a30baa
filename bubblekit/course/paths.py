"""The course's learning paths and how long each lesson says it takes (lesson 00, README).

Three paths:

* **full self-study**: every lesson, core path then deep dives, with the exercises; its time
  is the sum of the times the lessons state in their headers
  (``**Time:** about N min for the core path (+ about M min of optional deep dives)``), read
  from the notebooks by :func:`lesson_times`, so it follows the lessons when they change;
* **workshop** (:data:`WORKSHOP`, 3 hours): core paths of the lessons that build the idea, in
  order, with a break; the cells tagged ``workshop`` (with Jupyter slide metadata) make the
  deck (``jupyter nbconvert --to slides``);
* **interview sprint** (:data:`SPRINT`, about 2.5 hours): formula, schedules, beyond 1F1B,
  misconceptions, then the interview bank's questions in the bank's order.

Pure core: reads the notebooks as JSON, imports no matplotlib, widgets or torch.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from bubblekit.text import Table

__all__ = ["Step", "WORKSHOP", "SPRINT", "COURSE_ROOT", "header_time", "lesson_times", "LearningPaths",
           "learning_paths", "track_text"]

#: The course folder (lessons in ``notebooks/``, the interview bank in ``solutions/``) when
#: bubblekit runs from a checkout of the course (``pip install -e .``).
COURSE_ROOT = Path(__file__).resolve().parents[2]


class Step(NamedTuple):
    """One step of a path: a lesson (``"03"``), or ``"break"``; ``part`` says what of it; ``minutes``."""

    lesson: str
    part: str
    minutes: int


#: The 3-hour workshop: core paths (the cells tagged ``workshop``), with a break.
WORKSHOP: tuple[Step, ...] = (
    Step("00", "core path", 10),
    Step("01", "core path", 25),
    Step("02", "core path", 25),
    Step("03", "core path", 35),
    Step("break", "", 10),
    Step("04", "core path", 30),
    Step("05", "core path", 25),
    Step("07", "core path: the memory/bubble frontier only", 10),
    Step("09", "the misconceptions quiz", 10),
)

#: The interview sprint: the lessons interviews ask about, then the bank in its own order.
SPRINT: tuple[Step, ...] = (
    Step("03", "core path", 30),
    Step("04", "core path", 30),
    Step("07", "core path", 30),
    Step("09", "core path", 25),
    Step("10", "the questions, in the bank's order", 40),
)

def track_text(steps: tuple[Step, ...]) -> str:
    """A track on one line, as the README writes it: ``00 core path (10 min) → 01 core path (25 min) → …``."""
    return " → ".join(f"{s.lesson} {s.part} ({s.minutes} min)".replace("  ", " ") for s in steps)


_TIME = re.compile(r"\*\*Time:\*\*([^\n]*)")
_MINUTES = re.compile(r"(\d+)\s*min")
_TITLE = re.compile(r"^#\s*(\d\d[a-z]?)\s*·\s*(.+?)\s*$", re.MULTILINE)


def header_time(header: str) -> tuple[int | None, int | None]:
    """``(core, deep dives)`` minutes from a lesson header's ``**Time:**`` line, ``None`` where absent.

    The first ``N min`` on the line is the core path; an ``N min`` inside ``(+ ...)`` is the
    optional deep dives. ``header``: the text of the lesson's first cell.
    """
    if not isinstance(header, str):
        raise TypeError(f"header must be the text of a lesson's first cell, got {type(header).__name__}")
    line = _TIME.search(header)
    if line is None:
        return None, None
    text = line.group(1)
    core_text, _, extra_text = text.partition("(+")
    core = _MINUTES.search(core_text)
    extra = _MINUTES.search(extra_text)
    return (int(core.group(1)) if core else None, int(extra.group(1)) if extra else None)


def _first_cell(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    if not cells:
        return ""
    source = cells[0].get("source", "")
    return source if isinstance(source, str) else "".join(source)


def _folder(folder: str | Path | None, name: str) -> Path:
    path = COURSE_ROOT / name if folder is None else Path(folder)
    if not path.is_dir():
        raise FileNotFoundError(f"folder {str(path)!r} does not exist: pass the course's {name}/ folder")
    return path


def lesson_times(folder: str | Path | None = None) -> Table:
    """Per lesson notebook (``NN_*.ipynb``, companions ``NNx_*`` too): title and stated minutes.

    Columns ``lesson``, ``title``, ``core`` and ``deep`` (minutes, ``None`` where the header
    states none), read from each header's ``**Time:**`` line (:func:`header_time`).
    ``folder``: the lessons' folder (default the course's ``notebooks/``). Used in lesson 00.
    """
    rows = []
    for path in sorted(_folder(folder, "notebooks").glob("[0-9][0-9]*_*.ipynb")):
        head = _first_cell(path)
        title = _TITLE.search(head)
        core, deep = header_time(head)
        rows.append({"lesson": path.name[:path.name.index("_")], "title": title.group(2) if title else path.stem,
                     "core": core, "deep": deep})
    return Table(rows, ["lesson", "title", "core", "deep"],
                 headers={"core": "core path (min)", "deep": "deep dives (min)"})


class LearningPaths:
    """The three paths as tables (``full``, ``workshop``, ``sprint``) and their totals in minutes.

    ``full_minutes`` sums the stated times; ``unstated`` lists lessons whose header states
    no time (their minutes are missing from the sum). Renders itself: HTML in JupyterLab,
    text elsewhere.
    """

    def __init__(self, times: Table, titles: dict[str, str]) -> None:
        rows = list(times)
        self.unstated: list[str] = [r["lesson"] for r in rows if r["core"] is None]
        self.full_minutes: int = sum((r["core"] or 0) + (r["deep"] or 0) for r in rows)
        self.workshop_minutes: int = sum(s.minutes for s in WORKSHOP)
        self.sprint_minutes: int = sum(s.minutes for s in SPRINT)
        note = f"total: {_hours(self.full_minutes)} of stated time, plus the exercises"
        if self.unstated:
            note += f" (lessons {', '.join(self.unstated)} state no time yet and are not counted)"
        self.full = Table(
            [{**r, "both": None if r["core"] is None else r["core"] + (r["deep"] or 0)} for r in rows],
            ["lesson", "title", "core", "deep", "both"],
            headers={"core": "core path (min)", "deep": "deep dives (min)", "both": "lesson (min)"},
            title="Full self-study: every lesson, core path then deep dives, then its exercises", note=note)
        self.workshop = self._track(WORKSHOP, titles, "Workshop (3 hours): core paths, cells tagged 'workshop'",
                                    self.workshop_minutes)
        self.sprint = self._track(SPRINT, titles, "Interview sprint", self.sprint_minutes)

    @staticmethod
    def _track(steps: tuple[Step, ...], titles: dict[str, str], title: str, total: int) -> Table:
        rows = [{"step": s.lesson if s.lesson == "break" else f"{s.lesson} · {titles.get(s.lesson, '')}".rstrip(" ·"),
                 "what": s.part, "minutes": s.minutes} for s in steps]
        return Table(rows, ["step", "what", "minutes"], title=title, note=f"total: {_hours(total)}")

    def tables(self) -> tuple[Table, Table, Table]:
        """``(full, workshop, sprint)``."""
        return self.full, self.workshop, self.sprint

    def __repr__(self) -> str:
        return "\n\n".join(t.to_text() for t in self.tables())

    def _repr_html_(self) -> str:
        return "".join(f"<div style=\"margin-bottom:1em\">{t._repr_html_()}</div>" for t in self.tables())


def _hours(minutes: int) -> str:
    h, m = divmod(minutes, 60)
    return f"{minutes} min" if not h else f"{minutes} min = {h} h {m:02d} min"


def learning_paths(folder: str | Path | None = None, bank: str | Path | None = None) -> LearningPaths:
    """The three learning paths, with the lessons' stated times (see :class:`LearningPaths`).

    ``folder``: the lessons (default the course's ``notebooks/``); ``bank``: the interview
    bank notebook (default ``solutions/10_interview_bank.ipynb`` of the course), for its title.
    Used in lesson 00.
    """
    times = lesson_times(folder)
    titles: dict[str, Any] = {r["lesson"]: r["title"] for r in times}
    bank_path = COURSE_ROOT / "solutions" / "10_interview_bank.ipynb" if bank is None else Path(bank)
    if bank_path.is_file():
        found = _TITLE.search(_first_cell(bank_path))
        if found:
            titles[found.group(1)] = found.group(2)
    return LearningPaths(times, titles)
